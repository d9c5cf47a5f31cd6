"""The `decimal` question type's definition (issue 41): its keys parsed exactly with errors
naming `questions.<id>.<field>`, the canonical bytes, the grid's arithmetic, the mechanism
`auto` resolves for what `estimate` asks, and the estimates in the question's units."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ldpsurvey.shared.errors import AnswerError, PrivacyCheckError, ReportError, SurveyError
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.mechanisms.duchi import Duchi
from ldpsurvey.shared.mechanisms.numeric_auto import choose_mean_mechanism
from ldpsurvey.shared.mechanisms.numeric_pair import MeanAndDistribution
from ldpsurvey.shared.mechanisms.numeric_scale import AnswerScale, on_scale
from ldpsurvey.shared.mechanisms.square_wave import SquareWave
from ldpsurvey.shared.question_types import unit_for
from ldpsurvey.shared.survey import Survey, load_survey

SAMPLE = Path(__file__).resolve().parents[2] / "shared" / "samples" / "income.toml"
# z for a two-sided false-alarm rate of 1e-5 per check
Z = 4.42


def survey(**question: Any) -> Survey:
    q = {"id": "x", "type": "decimal", "text": "How much?", "min": 0, "max": 100,
         "resolution": 1, "epsilon": 1.0, **question}
    q = {k: v for k, v in q.items() if v is not None}
    return Survey.from_dict({"id": "s", "title": "t", "version": 1, "questions": [q]})


def question(**keys: Any) -> Any:
    return survey(**keys).questions[0]


def test_the_sample_survey_parses_and_its_canonical_bytes_are_a_fixed_point() -> None:
    s = load_survey(SAMPLE)
    again = Survey.from_dict(json.loads(s.canonical_bytes()))
    assert again.canonical_bytes() == s.canonical_bytes()
    income = s.question("income")
    assert income.mechanism == "mean_and_distribution"
    assert income.params["mean"] == choose_mean_mechanism(2001, 1.0).name
    assert income.params["mean_epsilon"] + income.params["distribution_epsilon"] == 2.0
    assert s.question("hours").mechanism == choose_mean_mechanism(161, 1.0).name
    assert s.question("gambling").mechanism == "square_wave"


def test_canonical_keys_are_exact_json_numbers() -> None:
    q = question(min="-2.3", max=3.3, resolution="0.1", estimate=["distribution", "mean"])
    d = q.to_dict()
    assert (d["min"], d["max"], d["resolution"]) == (-2.3, 3.3, 0.1)
    assert d["estimate"] == ["mean", "distribution"]  # the one order
    assert d["bins"] == 20  # the default, written
    assert q.k == 57
    # the same numbers however spelled: the same bytes
    assert question(min=-2.3, max="3.3", resolution=0.1, estimate=["mean", "distribution"],
                    bins=20).to_dict() == d
    whole = question(min=0, max=20000, resolution=10).to_dict()
    assert (whole["min"], whole["max"], whole["resolution"]) == (0, 20000, 10)
    assert "bins" not in whole and whole["estimate"] == ["mean"]


def test_the_grid_is_exact_and_the_device_rounds_half_up() -> None:
    q = question(min="-2.3", max="3.3", resolution="0.1")
    spec = q.spec
    assert [spec.value(j) for j in (0, 1, 56)] == [Decimal("-2.3"), Decimal("-2.2"),
                                                     Decimal("3.3")]
    assert list(q.labels[:3]) == [-2.3, -2.2, -2.1] and q.labels[-1] == 3.3
    unit = q.unit
    mech = mechanism_for(q)
    assert unit.canonical_answer(q, mech, 0.1 + 0.2) == 0.3  # 0.30000000000000004
    assert unit.canonical_answer(q, mech, "-2.25") == -2.2   # half up
    assert unit.canonical_answer(q, mech, Fraction(-9, 4)) == -2.2
    assert unit.canonical_answer(q, mech, 3.26) == 3.3
    for outside in (-2.31, 3.31, "nan", float("inf"), True, None, "1e400x"):
        with pytest.raises(AnswerError):
            unit.canonical_answer(q, mech, outside)
    assert mech.encode(-2.3) == 0 and mech.encode(Decimal("3.3")) == 56
    with pytest.raises(AnswerError, match="not on the answer grid"):
        mech.encode(0.05)  # rounding is the device's, before the mechanism
    with pytest.raises(AnswerError, match="outside"):
        mech.encode(3.4)


@pytest.mark.parametrize("keys, field", [
    ({"min": None}, "min"),
    ({"min": "ten"}, "min"),
    ({"min": True}, "min"),
    ({"min": 100}, "min"),
    ({"max": "1e3"}, "max"),
    ({"max": 0.1234567890123456}, "max"),
    ({"max": 10**16}, "max"),
    ({"resolution": 0}, "resolution"),
    ({"resolution": -1}, "resolution"),
    ({"resolution": 3}, "resolution"),               # 100 / 3 is not whole
    ({"max": 100000, "resolution": "0.5"}, "resolution"),  # 200,001 values
    ({"estimate": "mean"}, "estimate"),
    ({"estimate": []}, "estimate"),
    ({"estimate": ["mean", "mean"]}, "estimate"),
    ({"estimate": ["median"]}, "estimate"),
    ({"bins": 10}, "bins"),                           # without the distribution
    ({"estimate": ["distribution"], "bins": 1}, "bins"),
    ({"estimate": ["distribution"], "bins": [0, 50]}, "bins"),
    ({"estimate": ["distribution"], "bins": [0, 50, 50, 100]}, "bins[2]"),
    ({"estimate": ["distribution"], "bins": [0, 50, 101]}, "bins"),
    ({"mechanism": "grr"}, "mechanism"),
    ({"mechanism": "square_wave"}, "mechanism"),
    ({"estimate": ["distribution"], "mechanism": "duchi"}, "mechanism"),
    ({"mechanism": "mean_and_distribution"}, "mechanism"),
    ({"estimate": ["mean", "distribution"], "mechanism": "mean_and_distribution"}, "params"),
    ({"mechanism": "duchi", "params": {"exp_epsilon": "2/1"}}, "params"),
    ({"mechanism_choice": "mine"}, "mechanism_choice"),
    ({"epsilon": 0}, "epsilon"),
    ({"epsilon": 60.0, "mechanism": "duchi"}, "epsilon"),
    ({"instantaneous_epsilon": 1.0}, "instantaneous_epsilon"),
    ({"disclosed": True}, "epsilon"),
    ({"options": ["a", "b"]}, "options"),
    ({"special": {"dk": "Don't know"}}, "special"),
])
def test_errors_name_the_field(keys: dict[str, Any], field: str) -> None:
    raw = {"id": "x", "type": "decimal", "text": "How much?", "min": 0, "max": 100,
           "resolution": 1, "epsilon": 1.0, **keys}
    raw = {k: v for k, v in raw.items() if v is not None}
    with pytest.raises(SurveyError) as info:
        Survey.from_dict({"id": "s", "title": "t", "version": 1, "questions": [raw]})
    assert info.value.field == f"questions.x.{field}"


def test_a_follow_up_on_a_randomized_answer_has_a_not_asked_value() -> None:
    """It sends asked_grid's pair (tests/shared/test_asked_grid.py); a named mechanism that
    cannot carry "not asked" is refused naming the field."""
    raw = {"id": "s", "title": "t", "version": 1, "questions": [
        {"id": "paid", "type": "binary", "text": "Paid?", "epsilon": 1.0},
        {"id": "amount", "type": "decimal", "text": "How much?", "min": 0, "max": 100,
         "resolution": 1, "epsilon": 1.0, "relevant": "paid == true"}]}
    amount = Survey.from_dict(raw).question("amount")
    assert amount.not_asked and amount.mechanism == "asked_grid"
    raw["questions"][1]["mechanism"] = "duchi"
    with pytest.raises(SurveyError) as info:
        Survey.from_dict(raw)
    assert info.value.field == "questions.amount.mechanism"
    assert "not asked" in info.value.message


def test_a_follow_up_on_a_disclosed_answer_is_asked_of_those_it_applies_to() -> None:
    s = Survey.from_dict({"id": "s", "title": "t", "version": 1, "questions": [
        {"id": "paid", "type": "binary", "text": "Paid?", "disclosed": True},
        {"id": "amount", "type": "decimal", "text": "How much?", "min": 0, "max": 100,
         "resolution": 1, "epsilon": 1.0, "relevant": "paid == true"}]})
    assert s.question("amount").relevant == "paid == true"
    assert not s.question("amount").not_asked


@pytest.mark.parametrize("estimate, mechanism", [
    (["mean"], "duchi"), (["mean"], "piecewise"), (["mean"], "hybrid"), (["mean"], "geometric"),
    (["distribution"], "square_wave"), (["mean", "distribution"], "duchi"),
    (["mean", "distribution"], "geometric")])
def test_named_mechanisms_are_built_and_certified(estimate: list[str], mechanism: str) -> None:
    q = question(estimate=estimate, mechanism=mechanism, epsilon=2.0)
    mech = mechanism_for(q)
    assert mech.realized_epsilon() <= 2.0
    assert mech.realized_epsilon() > 2.0 * (1 - 1e-6)  # no ε wasted beyond the rounding
    again = Survey.from_dict(json.loads(survey(estimate=estimate, mechanism=mechanism,
                                                epsilon=2.0).canonical_bytes()))
    assert again.questions[0] == q


def test_auto_picks_the_lowest_exact_variance_of_the_mean() -> None:
    for epsilon in (0.5, 1.0, 4.0):
        q = question(max=1000, epsilon=epsilon)
        assert q.mechanism == choose_mean_mechanism(1001, epsilon).name
        assert q.mechanism_choice.startswith("auto: lowest")
        both = question(max=1000, epsilon=epsilon, estimate=["mean", "distribution"])
        assert both.params["mean"] == choose_mean_mechanism(1001, epsilon / 2).name
        assert "split in halves" in both.mechanism_choice


def test_the_pair_is_certified_as_the_product_of_its_parts_and_a_nudged_claim_is_refused() -> None:
    scale = AnswerScale(Fraction(0), Fraction(1), 11)
    mean = on_scale(Duchi)(1.0, range(11), scale=scale)
    dist = on_scale(SquareWave)(1.0, range(11), scale=scale)
    pair = MeanAndDistribution(mean, dist)
    assert math.isclose(pair.realized_epsilon(), mean.realized_epsilon()
                        + dist.realized_epsilon(), rel_tol=1e-12)
    mean.epsilon = 0.9  # the mean part now claims less than its channel's loss
    with pytest.raises(PrivacyCheckError):
        MeanAndDistribution(mean, dist)


class _Source:
    """A CSPRNG stand-in that records nothing: the OS's, through the random module's API."""

    def randbelow(self, n: int) -> int:
        import secrets

        return secrets.randbelow(n)


def test_a_pair_report_is_checked_and_aggregated() -> None:
    q = question(estimate=["mean", "distribution"], epsilon=2.0)
    mech = mechanism_for(q)
    report = mech.perturb(mech.encode(37) and 37)
    assert len(report) == 2
    assert mech.validate_report(report) == report
    for bad in ([1], [0, 0, 0], "01", [True, 0], [0, -1], [10**6, 0], None):
        with pytest.raises(ReportError):
            mech.validate_report(bad)
    agg = mech.new_aggregate()
    agg.add(report)
    assert mech.aggregate_from_dict(json.loads(json.dumps(agg.to_dict()))) == agg


def _population(q: Any, rng: np.random.Generator, n: int) -> np.ndarray:
    """Skewed answers on the grid (log-normal-ish income), as grid indices."""
    k = q.k
    raw = rng.lognormal(mean=math.log(k / 5), sigma=0.6, size=n)
    return np.minimum(raw.astype(np.int64), k - 1)


@pytest.mark.parametrize("estimate, mechanism", [
    (["mean"], "duchi"), (["mean"], "piecewise"), (["mean"], "hybrid"), (["mean"], "geometric"),
    (["distribution"], "square_wave"), (["mean", "distribution"], "piecewise")])
def test_the_mean_is_in_the_questions_units(estimate: list[str], mechanism: str) -> None:
    """The mean of n = 20,000 reports lies within Z worst-case standard errors of the true mean
    in the question's units (min 1000, resolution 2.5: a wrong scale or origin is far off)."""
    q = question(min=1000, max=1250, resolution="2.5", estimate=estimate,
                 mechanism=mechanism, epsilon=2.0)
    mech = mechanism_for(q)
    rng = np.random.default_rng(41)
    answers = _population(q, rng, 20_000)
    truth = float(np.mean([float(q.spec.value(int(j))) for j in answers]))
    est = mech.estimate(mech.aggregate_many(mech.perturb_many(answers, rng)))
    assert est.mean is not None and est.mean.variance_bound is not None
    assert abs(est.mean.estimate - truth) <= Z * math.sqrt(est.mean.variance_bound)
    assert est.mean.ci_low < est.mean.estimate < est.mean.ci_high
    pseudo = mech.pseudo_values(mech.perturb_many(answers, rng))
    assert pseudo.shape == (answers.size, 1)
    assert abs(pseudo.mean() - truth) <= Z * math.sqrt(est.mean.variance_bound)
    if "distribution" in estimate:  # the default 20 bins over min..max, and the quartiles
        values = [row.value for row in est.distribution]
        assert values[0] == "1000 to 1012.5" and values[-1] == "1237.5 to 1250"
        assert len(values) == 20
        assert sum(row.estimate for row in est.distribution) == pytest.approx(1.0)
        median = next(row for row in est.quantiles if row.value == "median")
        true_median = float(np.median([float(q.spec.value(int(j))) for j in answers]))
        assert abs(median.estimate - true_median) <= Z * median.std_error
        assert [row.value for row in est.quantiles] == ["1st quartile", "median",
                                                         "3rd quartile"]


def test_a_disclosed_decimal_is_sent_as_its_grid_index_and_counted_exactly() -> None:
    q = question(min="0.5", max="10.5", resolution="0.5", disclosed=True, epsilon=None)
    assert q.disclosed and q.to_dict()["disclosed"] is True
    mech = mechanism_for(q)
    reports = [mech.perturb(v) for v in (0.5, 1, 10.5)]
    assert reports == [0, 1, 20]
    agg = mech.new_aggregate()
    for r in reports:
        agg.add(mech.validate_report(r))
    assert mech.estimate(agg).mean.estimate == pytest.approx((0.5 + 1 + 10.5) / 3)


def test_the_unit_is_registered_and_its_mechanisms_say_they_take_it() -> None:
    from ldpsurvey.shared.mechanisms.registry import mechanism_class

    assert unit_for("decimal").name == "decimal"
    for name in ("duchi", "piecewise", "hybrid", "geometric", "square_wave",
                 "mean_and_distribution"):
        assert "decimal" in mechanism_class(name).question_types


def test_the_default_bins_of_a_short_grid_are_its_values_not_an_error() -> None:
    """A distribution asked without `bins` has 20 equal-width bins, but a grid of 6 values
    cannot hold 20: the default is capped by the grid (it said "must be between 2 and 6")."""
    short = question(max=5, estimate=["distribution"])
    assert short.spec.bins == 6
    assert question(estimate=["distribution"]).spec.bins == 20
    with pytest.raises(SurveyError, match="between 2 and 6"):
        question(max=5, estimate=["distribution"], bins=7)
