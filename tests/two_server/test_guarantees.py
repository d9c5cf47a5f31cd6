"""The guarantee statements: composition over questions and crosstabs, collusion cases."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
from ldpsurvey.shared.composition import compose
from ldpsurvey.shared.errors import EstimateError
from ldpsurvey.shared.survey import load_survey
from ldpsurvey.shared.two_server.guarantees import survey_guarantees
from ldpsurvey.shared.two_server.plans import crosstab_epsilon
from support.two_server_stand_ins import question_data, survey_of

FIVE = ["a", "b", "c", "d", "e"]


def _survey(local: tuple[float | None, ...], crosstabs=(), delta: float = 1e-6):
    qs = [question_data("categorical", eps, loc, qid=f"q{i}", options=FIVE)
          for i, (eps, loc) in enumerate(zip((1.0, 0.5, 2.0), local, strict=True))]
    return survey_of(qs, crosstabs, delta=delta)


def test_central_total_composes_questions_and_crosstabs() -> None:
    survey = _survey((None, None, None), [["q0", "q2"], ["q1", "q2"]])
    assert crosstab_epsilon(survey, survey.crosstabs[0]) == 1.0
    assert crosstab_epsilon(survey, survey.crosstabs[1]) == 0.5
    g = survey_guarantees(survey)
    expected = compose([1.0, 0.5, 2.0, 1.0, 0.5], 1e-6)
    assert g.central == expected
    text = " ".join(g.statements)
    assert f"central epsilon {expected.basic:g}" in text
    assert "3 questions and 2 declared crosstabs" in text
    assert f"at delta 1e-06 gives {expected.advanced:.3g}, no tighter here" in text
    assert "your answers are exposed" in text
    assert "not whether you took part" in text


def test_advanced_composition_is_stated_at_the_surveys_delta() -> None:
    survey = survey_of([question_data("binary", 0.1, qid=f"q{i}") for i in range(50)],
                       delta=1e-5)
    g = survey_guarantees(survey)
    assert g.central.basic == pytest.approx(5.0)
    assert g.central.advanced == pytest.approx(
        math.sqrt(2 * 50 * math.log(1e5)) * 0.1 + 50 * 0.1 * math.expm1(0.1))
    assert g.central.best == "advanced"
    assert "1e-05" in g.statements[0]


def test_collusion_with_and_without_local_epsilon() -> None:
    every = survey_guarantees(_survey((2.0, 1.0, 1.0)))
    assert every.local == compose([2.0, 1.0, 1.0], 1e-6) and not every.exposed
    assert "keeps local differential privacy (epsilon 1 to 2 per question; 4 for the whole" \
        in every.statements[1]
    some = survey_guarantees(_survey((2.0, None, 1.0)))
    assert some.exposed == ("q1",)
    assert "your answers to q1 are exposed" in some.statements[1]
    none = survey_guarantees(_survey((None, None, None)))
    assert none.local is None and none.exposed == ("q0", "q1", "q2")
    assert none.to_dict()["exposed_if_servers_collude"] == ["q0", "q1", "q2"]


def test_ldp_survey_states_the_local_guarantee() -> None:
    survey = load_survey("shared/samples/sensitive.toml")
    g = survey_guarantees(survey)
    assert g.collection == "ldp" and g.central is None
    assert "epsilon 5 (the sum over 4 questions)" in g.statements[0]


def test_a_question_without_central_epsilon_is_refused() -> None:
    survey = _survey((None, None, None))
    broken = SimpleNamespace(**{**survey.__dict__, "questions": (
        SimpleNamespace(id="x", central_epsilon=None, local_epsilon=None),)})
    with pytest.raises(EstimateError, match="central_epsilon"):
        survey_guarantees(broken)


def test_optional_questions_are_named_in_the_participation_caveat() -> None:
    plain = survey_guarantees(_survey((None, None, None))).statements[-1]
    assert plain.endswith("not whether you took part.")
    survey = survey_of([question_data("binary", 1.0, qid="a"),
                        question_data("binary", 1.0, qid="b", optional=True)])
    assert survey_guarantees(survey).statements[-1].endswith(
        "not whether you took part or skipped an optional question.")
