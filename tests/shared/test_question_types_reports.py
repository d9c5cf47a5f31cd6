"""The estimates-and-reports part of the question-type units (shared/question_types, issue 40):
what a report, a regression, a crosstab, the design-based estimates and the export ask a
question's unit, and that those paths ask it instead of switching on the type's name."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from ldpsurvey.shared.errors import AnalysisError
from ldpsurvey.shared.question_types import REGISTRY
from ldpsurvey.shared.question_types.base import BARS, DISTRIBUTION, MAP, OPTIONS_SUM, SCORES
from ldpsurvey.shared.survey import Survey
from support.structure import _PY_NAME_SWITCH, _PY_TYPE_COMPARISON, ROOT

SURVEY = Survey.from_dict({"id": "units", "title": "Units", "version": 1, "questions": [
    {"id": "smoker", "type": "binary", "text": "?", "disclosed": True},
    {"id": "region", "type": "categorical", "text": "?", "options": ["n", "s", "e"],
     "groups": {"coast": ["n", "s"]}, "disclosed": True},
    {"id": "age", "type": "integer", "text": "?", "min": 18, "max": 22, "disclosed": True},
    {"id": "health", "type": "ordinal", "text": "?", "options": ["bad", "ok", "good", "great"],
     "disclosed": True},
    {"id": "drugs", "type": "multiselect", "text": "?", "options": ["a", "b", "c"],
     "epsilon": 1.0},
    {"id": "home", "type": "location", "text": "?", "epsilon_geo": 0.5,
     "grid": {"rows": 2, "cols": 2, "cell_km": 1.0}},
    {"id": "income", "type": "decimal", "text": "?", "min": 0, "max": 100,
     "resolution": 0.5, "epsilon": 1.0},
]})
Q = {q.id: q for q in SURVEY.questions}
DISCLOSED = [q for q in SURVEY.questions if q.disclosed]


def disclosed_reports(question) -> list:
    """Every checked report of a disclosed question: the number itself, else the index."""
    return list(question.unit.values(question)) if question.unit.numeric else list(
        range(question.k))

# The report paths (analyst/reports, analyst/design, the server's estimates, the export): they
# ask the question's unit (a mechanism's report shape is a JointReading, which names no type).
REPORT_PATHS = ("server/regression.py", "server/crosstabs.py", "server/subgroups.py",
                "server/aggregation.py", "server/surveys.py", "analyst/margins.py",
                "analyst/commands/export.py", "analyst/commands/report.py",
                "analyst/commands/regress.py", "analyst/survey_warnings.py",
                "analyst/design/*.py", "analyst/reports/*.py")
TYPE_NAME = re.compile(rf"""["'](?:{'|'.join(REGISTRY)})["']""")


def test_every_type_has_a_unit_here() -> None:
    assert {q.type for q in SURVEY.questions} == set(REGISTRY)


@pytest.mark.parametrize("question", DISCLOSED, ids=lambda q: q.type)
def test_a_disclosed_answer_reads_the_same_one_by_one_and_vectorized(question) -> None:
    unit = question.unit
    reports = disclosed_reports(question)
    texts = unit.disclosed_texts(question, np.asarray(reports))
    assert texts.tolist() == [str(unit.data_value(question, r)) for r in reports]


def test_disclosed_answers_as_a_data_file_holds_them() -> None:
    values = {q.id: [q.unit.data_value(q, r) for r in disclosed_reports(q)]
              for q in DISCLOSED}
    assert values == {"smoker": ["no", "yes"], "region": ["n", "s", "e"],
                      "age": [18, 19, 20, 21, 22], "health": ["bad", "ok", "good", "great"]}


def test_what_a_report_draws_and_names() -> None:
    assert {q.id: q.unit.chart for q in SURVEY.questions} == {
        "smoker": BARS, "region": BARS, "age": DISTRIBUTION, "health": BARS, "drugs": BARS,
        "home": MAP, "income": DISTRIBUTION}
    assert [q.id for q in SURVEY.questions if q.unit.numeric] == ["age", "income"]
    assert {q.id: q.unit.mean_row_label(q) for q in SURVEY.questions}["drugs"] == (
        "mean number selected")
    assert {q.unit.mean_row_label(q) for q in SURVEY.questions if q.id != "drugs"} == {"mean"}
    health = Q["health"]
    assert health.unit.asked_mean_row_label(health, ["bad", "ok", "good"]) == (
        "mean score (bad = 1 ... good = 3)")
    assert Q["age"].unit.asked_mean_row_label(Q["age"], []) == "mean"
    assert {q.id: q.unit.design_mean for q in SURVEY.questions if q.unit.design_mean} == {
        "health": SCORES, "drugs": OPTIONS_SUM}
    assert [q.id for q in SURVEY.questions if q.unit.headline_option] == ["smoker"]


def test_which_labels_a_language_translates() -> None:
    docs = {q["id"]: q for q in SURVEY.to_dict()["questions"]}
    options = {qid: tuple(REGISTRY[d["type"]].option_texts(d)) for qid, d in docs.items()}
    assert options == {"smoker": (), "region": ("n", "s", "e"), "age": (),
                       "health": ("bad", "ok", "good", "great"), "drugs": ("a", "b", "c"),
                       "home": (), "income": ()}
    groups = {qid: dict(REGISTRY[d["type"]].group_texts(d)) for qid, d in docs.items()}
    assert groups["region"] == {"coast": ["n", "s"]}
    assert all(not g for qid, g in groups.items() if qid != "region")


def test_regression_roles() -> None:
    refused = {q.id for q in SURVEY.questions if q.unit.regression_refusal(q)}
    assert refused == {"drugs"}
    assert Q["smoker"].unit.modelled_level(Q["smoker"], None) == (1, "yes")
    assert Q["region"].unit.modelled_level(Q["region"], "e") == (2, "e")
    with pytest.raises(AnalysisError, match="name the one to model"):
        Q["region"].unit.modelled_level(Q["region"], None)
    with pytest.raises(AnalysisError, match="modelled as 'yes'"):
        Q["smoker"].unit.modelled_level(Q["smoker"], "no")
    assert Q["smoker"].unit.value_label(Q["smoker"], True) == "yes"
    assert Q["smoker"].unit.value_label(Q["smoker"], "(not asked)") == "(not asked)"


def test_crosstab_sides() -> None:
    refused = {q.id: q.unit.design_crosstab_refusal(q) for q in SURVEY.questions
               if q.unit.design_crosstab_refusal(q)}
    assert set(refused) == {"drugs", "home"}
    assert refused["home"].endswith("'home' is location")
    assert "selected 'a'" in Q["drugs"].unit.crosstab_group_note("drugs", "a")
    assert "options summed" in Q["region"].unit.crosstab_group_note("region", "coast")


def test_the_report_paths_ask_the_unit_instead_of_switching_on_the_type() -> None:
    """No comparison of a type (tests/support/structure.py's patterns), and no type's name at
    all (a tuple or a dict keyed by type names is a switch too), in the report paths."""
    switches = []
    for pattern in REPORT_PATHS:
        for path in sorted(ROOT.glob(pattern)):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if (_PY_NAME_SWITCH.search(line) or _PY_TYPE_COMPARISON.search(line)
                        or TYPE_NAME.search(line)):
                    switches.append(f"{Path(path).relative_to(ROOT)}:{number}: {line.strip()}")
    assert not switches, "\n".join(switches)
