"""An integer asked with `estimate` and `bins` is the number grid a decimal of resolution 1 is
(issue 41, shared/question_types/number_grid.py): the same mechanism `auto` picks with the same
reason and params, the same reports' estimates (mean, bins, median and quartiles), the same
words on the device; the keys are written back only where given, a hidden follow-up keeps
asked_geometric and refuses the distribution, and plan and simulate take it through the unit."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from ldpsurvey.analyst.plan.survey import plan_survey
from ldpsurvey.analyst.simulate.survey import simulate_survey
from ldpsurvey.client import review
from ldpsurvey.shared.aggregates import Aggregate
from ldpsurvey.shared.errors import SurveyError
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Survey, canonical_json
from support.two_server_stand_ins import two_server_survey_dict

ESTIMATES = [["mean"], ["distribution"], ["mean", "distribution"]]


def survey(qtype: str = "integer", **keys: Any) -> Survey:
    grid = {"resolution": 1} if qtype == "decimal" else {}
    return Survey.from_dict({"id": "spend", "title": "Spending", "version": 1, "questions": [
        {"id": "amount", "type": qtype, "text": "Spent last month, in dollars?", "min": -20,
         "max": 480, "epsilon": 1.0, **grid, **keys}]})


def pair(**keys: Any) -> tuple[Any, Any]:
    return (survey(**keys).question("amount"),
            survey("decimal", **keys).question("amount"))


@pytest.mark.parametrize("estimate", ESTIMATES)
def test_auto_picks_what_it_picks_for_the_decimal_of_resolution_one(estimate: list[str]) -> None:
    integer, decimal = pair(estimate=estimate, epsilon=2.0)
    assert integer.mechanism == decimal.mechanism
    assert integer.mechanism_choice == decimal.mechanism_choice
    assert integer.params == decimal.params


@pytest.mark.parametrize("estimate", ESTIMATES)
def test_the_same_reports_give_the_decimals_estimates(estimate: list[str]) -> None:
    """The reports of a skewed population, drawn once (a seeded simulation), estimated by both
    questions' mechanisms: every number the report states is the decimal's."""
    integer, decimal = pair(estimate=estimate, bins=[-20, 0, 100, 480]
                            if "distribution" in estimate else None)
    mechanisms = [mechanism_for(q) for q in (integer, decimal)]
    rng = np.random.default_rng(5)
    answers = np.minimum(rng.geometric(1 / 80, size=3000) - 1, 500)  # indices 0..500
    reports = mechanisms[0].perturb_many(answers, rng)
    found = []
    for mechanism in mechanisms:
        aggregate: Aggregate = mechanism.new_aggregate()
        aggregate.add_many(reports)
        found.append(mechanism.estimate(aggregate).to_dict())
    assert found[0] == found[1]
    if "distribution" in estimate:
        assert [row["value"] for row in found[0]["quantiles"]] == ["1st quartile", "median",
                                                                    "3rd quartile"]
        assert [row["value"] for row in found[0]["distribution"]] == [
            "-20 to 0", "0 to 100", "100 to 480"]


def test_the_device_says_the_decimals_words() -> None:
    integer, decimal = pair(estimate=["mean", "distribution"])
    said = [review.chances(q, mechanism_for(q), 123) for q in (integer, decimal)]
    assert said[0] == said[1] and "123" not in said[0]
    report = [1, 3]
    assert (review.report_words(integer, mechanism_for(integer), report)
            == review.report_words(decimal, mechanism_for(decimal), report))


def test_the_keys_are_written_back_only_where_given() -> None:
    plain = survey()
    assert "estimate" not in canonical_json(plain.to_dict()).decode()
    assert plain.question("amount").mechanism == "geometric"
    given = survey(estimate=["distribution"], bins=5)
    written = given.to_dict()["questions"][0]
    assert (written["estimate"], written["bins"]) == (["distribution"], 5)
    assert canonical_json(Survey.from_dict(given.to_dict()).to_dict()) == canonical_json(
        given.to_dict())
    # a distribution without bins gets the default, written back
    assert survey(estimate=["distribution"]).to_dict()["questions"][0]["bins"] == 20


def test_bins_without_the_distribution_and_a_too_wide_range_are_refused() -> None:
    with pytest.raises(SurveyError) as err:
        survey(bins=5)
    assert err.value.field == "questions.amount.bins"
    with pytest.raises(SurveyError) as err:
        survey(estimate=["mean"], max=100000)
    assert err.value.field == "questions.amount.min/max"
    with pytest.raises(SurveyError) as err:
        survey(estimate=["distribution"], mechanism="duchi")
    assert err.value.field == "questions.amount.mechanism"


def follow_up(**keys: Any) -> Survey:
    return Survey.from_dict({"id": "g", "title": "G", "version": 1, "questions": [
        {"id": "gambles", "type": "binary", "text": "Gamble?", "epsilon": 1.0},
        {"id": "lost", "type": "integer", "text": "Lost?", "min": 0, "max": 500,
         "epsilon": 1.0, "relevant": "gambles == true", **keys}]})


def test_a_hidden_follow_up_keeps_asked_geometric_and_refuses_the_distribution() -> None:
    lost = follow_up(estimate=["mean"]).question("lost")
    assert lost.mechanism == "asked_geometric"
    assert follow_up(estimate=["mean"]).to_dict()["questions"][1]["estimate"] == ["mean"]
    with pytest.raises(SurveyError) as err:
        follow_up(estimate=["distribution"])
    assert err.value.field == "questions.lost.estimate"


def test_a_two_server_survey_refuses_the_keys_naming_them() -> None:
    with pytest.raises(SurveyError) as err:
        Survey.from_dict(two_server_survey_dict([
            {"id": "n", "type": "integer", "text": "N?", "min": 0, "max": 10,
             "epsilon": 1.0, "estimate": ["distribution"]}]))
    assert err.value.field == "questions.n.estimate"


def test_plan_gives_the_median_and_simulate_the_bins() -> None:
    asked = survey(estimate=["mean", "distribution"], bins=4, max=180)
    plan = plan_survey(asked, n=2000).questions[0]
    assert plan.median is not None and plan.median.margin > 0
    assert {r.mechanism for r in plan.rows if r.configured} == {"mean_and_distribution"}
    result = simulate_survey(asked, 2000, np.random.default_rng(3)).questions[0]
    assert [v.value for v in result.values] == ["-20 to 30", "30 to 80", "80 to 130",
                                                "130 to 180"]
    assert abs(sum(v.truth for v in result.values) - 1) < 1e-9
    assert result.mean is not None and -20 <= result.mean.truth <= 180


@pytest.mark.parametrize("estimate", [["distribution"], ["mean", "distribution"]])
def test_a_design_based_report_weights_the_decimals_distribution_columns(
        estimate: list[str]) -> None:
    """The design-based bins, CDF and quartiles are weighted from the mechanism's linear
    distribution columns (shared/design/distribution.py): an integer's are the decimal of
    resolution 1's, on the same reports."""
    integer, decimal = pair(estimate=estimate, bins=[-20, 0, 100, 480])
    mechanisms = [mechanism_for(q) for q in (integer, decimal)]
    rng = np.random.default_rng(9)
    reports = mechanisms[0].perturb_many(np.minimum(rng.geometric(1 / 80, size=500) - 1, 500),
                                         rng)
    found = [m.distribution_columns(reports) for m in mechanisms]
    assert found[0] is not None and found[1] is not None
    assert found[0].bins == found[1].bins == ("-20 to 0", "0 to 100", "100 to 480")
    assert np.array_equal(found[0].values, found[1].values)
    assert np.array_equal(found[0].noise, found[1].noise)
