"""plan and simulate ask the question's unit (issue 40): which kind of answer a type has, what a
plan's margin is on, how true answers are drawn, read and given; the paths hold no per-type
branch (tests/test_structure.py counts them), so changing a unit changes what they do."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from ldpsurvey.analyst.demo import answer_value
from ldpsurvey.analyst.plan.survey import format_plan, plan_survey
from ldpsurvey.analyst.simulate.survey import simulate_survey
from ldpsurvey.analyst.simulate.truth import Truth, default_truth, parse_truth
from ldpsurvey.shared.errors import SimulationError
from ldpsurvey.shared.question_types import REGISTRY, unit_for
from ldpsurvey.shared.survey import Survey

ALL_TYPES = Survey.from_dict({"id": "all", "title": "All", "version": 1, "questions": [
    {"id": "yes", "text": "Yes?", "type": "binary", "epsilon": 1.0},
    {"id": "cat", "text": "Cat?", "type": "categorical", "epsilon": 1.5,
     "options": ["a", "b", "c"]},
    {"id": "agree", "text": "Agree?", "type": "ordinal", "epsilon": 2.0, "mechanism": "grr",
     "options": ["lo", "mid", "hi"]},
    {"id": "num", "text": "Num?", "type": "integer", "epsilon": 1.0, "min": 2, "max": 12},
    {"id": "amount", "text": "Amount?", "type": "decimal", "epsilon": 1.0, "min": 0, "max": 10,
     "resolution": "0.5"},
    {"id": "multi", "text": "Multi?", "type": "multiselect", "epsilon": 2.0,
     "options": ["x", "y", "z", "w"], "max_selected": 2, "required_min": 1},
    {"id": "home", "type": "location", "text": "Where?", "epsilon_geo": 2.0,
     "grid": {"rows": 4, "cols": 5, "cell_km": 0.5},
     "regions": {"west": ["1-4,1-2"], "east": ["1-4,3-5"]}}]})
# P(|Z| > 4.42) ≈ 1e-5: the false-alarm rate of a check that an estimate lies within z
# standard errors of the truth.
Z = 4.42


class _Kinds:
    """A path that records which handler a unit calls."""

    def options(self, question: Any) -> str:
        return "options"

    def number(self, question: Any) -> str:
        return "number"

    def option_set(self, question: Any) -> str:
        return "option_set"

    def cell(self, question: Any) -> str:
        return "cell"


def test_every_unit_names_its_kind_of_answer() -> None:
    kinds = {q.type: q.unit.visit(q, _Kinds()) for q in ALL_TYPES.questions}
    assert kinds == {"binary": "options", "categorical": "options", "ordinal": "options",
                     "integer": "number", "decimal": "number", "multiselect": "option_set",
                     "location": "cell"}
    assert set(kinds) == set(REGISTRY)


def test_a_plan_is_the_kind_the_unit_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """Told that a categorical answer is a set of options, plan gives its question the set
    mechanisms' rows: the path follows the unit, not the type's name."""
    survey = Survey.from_dict({"id": "s", "title": "S", "version": 1, "questions": [
        {"id": "multi", "text": "M?", "type": "multiselect", "epsilon": 2.0,
         "options": ["x", "y", "z"]}]})
    [plain] = plan_survey(survey, n=1000).questions
    categorical = unit_for("categorical")
    monkeypatch.setattr(categorical, "visit", lambda q, path: path.option_set(
        survey.questions[0]))
    [asked] = plan_survey(ALL_TYPES, n=1000).questions[1:2]
    assert format_plan(asked) == format_plan(plain)


def test_the_margin_of_a_plan_is_on_what_the_unit_says() -> None:
    plans = {p.question_type: p for p in plan_survey(ALL_TYPES, n=1000).questions}
    assert {t: p.margin_unit for t, p in plans.items()} == {
        "binary": "proportion", "categorical": "proportion", "ordinal": "score",
        "integer": "answer units", "decimal": "grid steps", "multiselect": "proportion",
        "location": "proportion"}
    assert plans["location"].row_label == "estimate"
    assert {p.row_label for t, p in plans.items() if t != "location"} == {"mechanism"}


def test_simulate_draws_a_types_answers_from_its_unit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The built-in truth is the unit's: a binary unit whose respondents all say yes makes
    every simulated answer yes."""
    monkeypatch.setattr(unit_for("binary"), "truth_yes", 1.0)
    result = simulate_survey(ALL_TYPES, 2000, np.random.default_rng(1))
    yes = result.questions[0]
    assert [v.truth for v in yes.values] == [0.0, 1.0]


@pytest.mark.parametrize("question", ALL_TYPES.questions, ids=lambda q: q.type)
def test_a_drawn_answer_is_one_the_question_takes(question: Any) -> None:
    drawn = default_truth(question).draw(500, np.random.default_rng(3))
    answers = [answer_value(question, a) for a in drawn]
    if question.unit.visit(question, _Kinds()) == "option_set":
        shape = question.multiselect
        assert all(set(a) <= set(question.options) for a in answers)
        assert {len(a) for a in answers} <= set(range(shape.required_min,
                                                      shape.max_selected + 1))
    else:
        assert set(answers) <= set(question.unit.values(question))
        assert len(set(answers)) > 1  # a skewed truth, not one answer


def test_a_truth_file_is_read_by_each_unit() -> None:
    truth = parse_truth({"yes": {"YES": 0.25, "false": 0.75}, "num": {"3": 1.0},
                         "cat": {"c": 0.5, "a": 0.5},
                         "multi": {"x": 0.5, "y": 0.5, "z": 0.1, "w": 0.0}}, ALL_TYPES)
    assert isinstance(truth["yes"], Truth)
    assert dict(zip(truth["yes"].indices.tolist(), truth["yes"].probabilities.tolist(),
                    strict=True)) == {1: 0.25, 0: 0.75}
    assert truth["num"].indices.tolist() == [1]  # 3 is index 1 of 2..12
    assert truth["cat"].indices.tolist() == [2, 0]
    sets = truth["multi"].draw(200, np.random.default_rng(2))
    assert not sets[:, 3].any() and (sets.sum(axis=1) >= 1).all()
    with pytest.raises(SimulationError, match=r"truth\.num\.13: 13 is outside \[2, 12\]"):
        parse_truth({"num": {"13": 1.0}}, ALL_TYPES)
    with pytest.raises(SimulationError, match=r"truth\.yes\.maybe: unknown answer"):
        parse_truth({"yes": {"maybe": 1.0}}, ALL_TYPES)


def test_a_grr_ordinal_question_has_its_mean_score_compared() -> None:
    """The plain report gives an ordinal question under GRR its mean score
    (shared/estimand.plain_estimate); simulate compares it with the sample's true mean."""
    survey = Survey.from_dict({"id": "likert", "title": "Likert", "version": 1, "questions": [
        {"id": "agree", "text": "Agree?", "type": "ordinal", "epsilon": 2.0, "mechanism": "grr",
         "options": ["disagree", "neutral", "agree", "strongly agree"]}]})
    q = simulate_survey(survey, 4000, np.random.default_rng(8)).questions[0]
    assert q.mechanism == "grr"
    assert q.mean is not None
    assert math.isclose(q.mean.truth, float(np.dot(np.arange(1, 5), [v.truth for v in q.values])))
    assert abs(q.mean.estimate - q.mean.truth) <= Z * q.mean.std_error
    assert q.mean.ci_low < q.mean.estimate < q.mean.ci_high
