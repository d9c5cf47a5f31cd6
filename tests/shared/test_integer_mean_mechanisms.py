"""Wide `integer` ranges take the decimal's mean mechanisms by name (issue 41): `mechanism =
"duchi" | "piecewise" | "hybrid"` on an integer question is parsed, its params derived and
checked, its canonical bytes re-read unchanged; `auto` still picks geometric (no existing
survey changes); the device's words say the numbers its report cells stand for."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from ldpsurvey.client import review
from ldpsurvey.shared.design.pseudo import pseudo_values
from ldpsurvey.shared.errors import SurveyError
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.mechanisms.numeric_grid import GridMean
from ldpsurvey.shared.survey import Survey

MEANS = ("duchi", "piecewise", "hybrid")


def survey(**question: object) -> Survey:
    return Survey.from_dict({"id": "spend", "title": "Spending", "version": 1, "questions": [
        {"id": "amount", "type": "integer", "text": "Spent last month, in dollars?", "min": 0,
         "max": 10000, "epsilon": 1.0, **question}]})


@pytest.mark.parametrize("name", MEANS)
def test_an_integer_takes_a_mean_mechanism_by_name_and_reads_back_its_bytes(name: str) -> None:
    parsed = survey(mechanism=name)
    question = parsed.question("amount")
    assert question.mechanism == name and question.mechanism_choice is None
    mechanism = mechanism_for(question)
    assert isinstance(mechanism, GridMean) and mechanism.k == 10001
    assert question.params == mechanism.params() != {}
    again = Survey.from_dict(parsed.to_dict())
    assert again.canonical_bytes() == parsed.canonical_bytes()
    assert b'"mechanism":"' + name.encode() + b'"' in parsed.canonical_bytes()


@pytest.mark.parametrize("name", MEANS)
def test_the_grid_is_min_to_max_one_unit_apart(name: str) -> None:
    """Every report's value is unbiased for the answer on the answer's own scale (min = -50):
    E[report value | answer] is the answer exactly, from the exact channel (sent_value: a
    cell in the answer's units, the grid's indices built with the scale min + j)."""
    question = Survey.from_dict({"id": "t", "title": "T", "version": 1, "questions": [
        {"id": "temp", "type": "integer", "text": "Lowest temperature?", "min": -50,
         "max": 49, "epsilon": 2.0, "mechanism": name}]}).question("temp")
    mechanism = mechanism_for(question)
    for answer in (-50, -1, 0, 49):
        row = mechanism.row(mechanism.encode(answer))
        assert sum(p * mechanism.sent_value(i) for i, p in enumerate(row)) == Fraction(answer)


def test_auto_still_picks_geometric_for_a_wide_integer() -> None:
    question = survey().question("amount")
    assert question.mechanism == "geometric"
    assert "geometric" in str(question.mechanism_choice)
    assert not any(name in str(question.mechanism_choice) for name in MEANS)


def test_a_nudged_param_and_a_misfit_are_refused_naming_the_field() -> None:
    params = dict(survey(mechanism="duchi").question("amount").params)
    params["exp_epsilon"] = "3/1"
    with pytest.raises(SurveyError) as err:
        survey(mechanism="duchi", params=params)
    assert err.value.field == "questions.amount.params"
    with pytest.raises(SurveyError) as err:
        survey(mechanism="piecewise", max=100000)  # 100,001 values: past the grid's limit
    assert err.value.field == "questions.amount.min/max"
    for other in ("square_wave", "mean_and_distribution"):
        with pytest.raises(SurveyError) as err:
            survey(mechanism=other)
        assert err.value.field == "questions.amount.mechanism"


def test_a_follow_up_keeps_asked_geometric() -> None:
    """A "not asked" value is carried by asked_geometric only: a mean mechanism is refused."""
    with pytest.raises(SurveyError, match="asked_geometric"):
        Survey.from_dict({"id": "g", "title": "G", "version": 1, "questions": [
            {"id": "gambles", "type": "binary", "text": "Gamble?", "epsilon": 1.0},
            {"id": "lost", "type": "integer", "text": "Lost?", "min": 0, "max": 500,
             "epsilon": 1.0, "mechanism": "duchi", "relevant": "gambles == true"}]})


def test_the_review_and_the_receipt_say_the_numbers_a_report_stands_for() -> None:
    question = survey(mechanism="duchi").question("amount")
    mechanism = mechanism_for(question)
    low, high = (mechanism.sent_label(i) for i in range(2))
    said = review.chances(question, mechanism, 1234)
    assert said == (f"Your device will send a number between {round(low)} and {round(high)} "
                    f"that depends on your answer.")
    assert review.report_words(question, mechanism, 1) == f"the number {round(high)}"
    assert "1234" not in said


@pytest.mark.parametrize("name", MEANS)
def test_design_based_paths_get_pseudo_values_in_the_answers_units(name: str) -> None:
    """Each report's pseudo-value is unbiased for its answer (dollars, not grid indices): their
    mean over 3,000 reports of the answer 9000 lies within 4.42 worst-case standard errors
    (a false alarm below 1e-5); the stated noise is a positive variance per report."""
    question = survey(mechanism=name).question("amount")
    mechanism = mechanism_for(question)
    reports = np.array([mechanism.perturb(9000) for _ in range(3000)])
    found = pseudo_values(question, mechanism, reports)
    bound = (type(mechanism).worst_case_variance(10001, 1.0) / 3000) ** 0.5
    assert abs(float(found.values.mean()) - 9000) <= 4.42 * bound
    assert found.noise.shape == (3000, 1) and float(found.noise.min()) > 0
