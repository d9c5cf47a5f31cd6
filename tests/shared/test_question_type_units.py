"""The question-type units own their definitions (issue 40, the schema path): the schema
hands each question to its unit, the functions that answer by a type's name ask the same
unit, and a unit reaches neither the schema nor the registry that imports it.
"""

from __future__ import annotations

import pytest
from ldpsurvey.shared import skip_logic
from ldpsurvey.shared.errors import SurveyError
from ldpsurvey.shared.mechanisms import candidates, choose_mechanism, margin_variance
from ldpsurvey.shared.mechanisms.registry import MECHANISMS
from ldpsurvey.shared.question_types import QUESTION_TYPES, unit_for
from ldpsurvey.shared.question_types.base import Definition
from ldpsurvey.shared.survey import Question, Survey
from support.structure import python_import_graph

QUESTIONS = [
    {"id": "used", "type": "binary", "text": "Used?", "epsilon": 1.0},
    {"id": "freq", "type": "ordinal", "text": "How often?", "epsilon": 1.0,
     "options": ["never", "sometimes", "often"], "groups": {"ever": ["sometimes", "often"]}},
    {"id": "where", "type": "categorical", "text": "Where?", "epsilon": 2.0,
     "options": ["home", "work", "elsewhere"]},
    {"id": "age", "type": "integer", "text": "Age?", "epsilon": 1.0, "min": 18, "max": 90},
    {"id": "subs", "type": "multiselect", "text": "Which?", "epsilon": 2.0,
     "options": ["a", "b", "c"], "max_selected": 2},
    {"id": "home", "type": "location", "text": "Where do you live?",
     "grid": {"rows": 3, "cols": 3, "cell_km": 1.0}, "epsilon_geo": 1.0},
    {"id": "sex", "type": "categorical", "text": "Sex?", "disclosed": True,
     "options": ["f", "m"]},
    {"id": "income", "type": "decimal", "text": "Income?", "epsilon": 1.0, "min": 0,
     "max": 2000, "resolution": 0.5, "estimate": ["mean", "distribution"]},
]


def _survey() -> Survey:
    return Survey.from_dict({"id": "units", "title": "Units", "version": 1,
                             "questions": QUESTIONS})


def test_every_type_is_parsed_by_its_unit() -> None:
    """The schema's question is what the unit parses from the same table (auto resolved,
    params proven), for every type and a disclosed one."""
    survey = _survey()
    assert {q.type for q in survey.questions} == set(QUESTION_TYPES)
    for raw, question in zip(QUESTIONS, survey.questions, strict=True):
        parsed = unit_for(raw["type"]).parse(Definition(
            data=raw, where=f"questions.{raw['id']}", id=raw["id"], text=raw["text"],
            size_limit=None, not_asked=False, build=Question))
        assert parsed == question
        assert parsed.to_dict() == question.to_dict()


def test_the_functions_by_name_ask_the_unit() -> None:
    """candidates, margin_variance and choose_mechanism by a type's name give the unit's
    answer: the ordinal unit ranks by the mean score's variance, the others by the average."""
    for name in ("binary", "categorical", "ordinal", "integer"):
        unit = unit_for(name)
        assert candidates(name, 5, 1.0) == unit.candidates(5, 1.0, 1024)
        for cls in MECHANISMS.values():
            if name in cls.question_types:
                assert margin_variance(cls, name, 5, 1.0) == unit.margin_variance(cls, 5, 1.0)
    ordinal = unit_for("ordinal")
    for variance, name in ordinal.candidates(5, 1.0, 1024):
        assert variance == MECHANISMS[name].mean_score_variance(5, 1.0)
    question = _survey().question("where")
    assert choose_mechanism(question)[0] == question.mechanism


def test_the_not_asked_tables_are_the_units() -> None:
    """skip_logic's tables by type name gather the units' own (no type without one)."""
    assert skip_logic.AUTO_NOT_ASKED == {
        "binary": ("grr", "hr"), "categorical": ("grr", "hr"), "integer": ("asked_geometric",),
        "ordinal": ("grr", "hr"), "decimal": ("asked_grid",)}
    assert skip_logic.NAMED_NOT_ASKED["ordinal"] == ("grr", "hr", "ordinal_exp")
    assert "multiselect" not in skip_logic.AUTO_NOT_ASKED


def test_bins_apply_to_numeric_answers_only() -> None:
    survey = _survey()
    unit_for("integer").check_bins(survey.question("age"), "crosstabs[0].row_bins")
    with pytest.raises(SurveyError) as caught:
        unit_for("ordinal").check_bins(survey.question("freq"), "crosstabs[0].col_bins")
    assert caught.value.field == "crosstabs[0].col_bins"
    assert caught.value.message == ("crosstabs[0].col_bins: bins apply to integer questions; "
                                    "'freq' is ordinal")


def test_a_unit_reaches_neither_the_schema_nor_the_registry() -> None:
    """Layering (issue 40): what a module of shared/question_types imports, directly or not,
    never imports shared.survey, the units' registry or another type's unit back, nor the
    role folders above shared/."""
    graph = python_import_graph()
    types = {f"shared.question_types.{name}" for name in QUESTION_TYPES}
    for module in (m for m in graph if m.startswith("shared.question_types.")):
        reached: set[str] = set()
        todo = list(graph[module])
        while todo:
            name = todo.pop()
            if name not in reached:
                reached.add(name)
                todo.extend(graph[name])
        above = sorted(name for name in reached if name in ("shared.survey",
                                                            "shared.question_types")
                       or (name in types and name != module)
                       or name.split(".")[0] in ("analyst", "client", "server", "helper"))
        assert not above, f"{module} reaches {above}"
