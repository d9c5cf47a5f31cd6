"""The mean mechanisms for numbers (issue 41): duchi, piecewise, hybrid on an answer grid.

Exact properties are checked in rationals (every row a distribution, E[report | answer] = the
answer, the variance formula, the channel's worst ratio). Statistical checks state their
false-alarm rate; their seeds are fixed, so each run is the same draw.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from ldpsurvey.shared.errors import AnswerError, ReportError, SurveyError
from ldpsurvey.shared.exact import channel_ratio
from ldpsurvey.shared.mechanisms import (
    MEAN_MECHANISMS,
    MECHANISMS,
    candidates,
    mechanism_class,
)
from ldpsurvey.shared.mechanisms.duchi import Duchi
from ldpsurvey.shared.mechanisms.geometric import Geometric
from ldpsurvey.shared.mechanisms.hybrid import Hybrid, paper_worst_variance
from ldpsurvey.shared.mechanisms.numeric_auto import choose_mean_mechanism, mean_variances
from ldpsurvey.shared.mechanisms.numeric_grid import GridMean, grid_point
from ldpsurvey.shared.mechanisms.piecewise import Piecewise, cells_for, piecewise_grid
from ldpsurvey.shared.survey import Survey
from scipy.stats import chi2, norm
from support.sources import SeededSource

NAMES = sorted(MEAN_MECHANISMS)


def paper_pm(t: float, epsilon: float) -> float:
    s = math.exp(epsilon / 2)
    return t * t / (s - 1) + (s + 3) / (3 * (s - 1) ** 2)


def paper_duchi(t: float, epsilon: float) -> float:
    e = math.exp(epsilon)
    return ((e + 1) / (e - 1)) ** 2 - t * t


# --- exact properties -------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("k", [2, 3, 8, 17])
@pytest.mark.parametrize("epsilon", [0.3, 1.0, 4.0, 9.0])
def test_channel_is_exact_unbiased_and_its_variance_is_the_formula(name: str, k: int,
                                                                   epsilon: float) -> None:
    mech: GridMean = MEAN_MECHANISMS[name](epsilon, range(k))  # type: ignore[assignment]
    channel = mech.channel()
    assert len(channel) == k and all(len(row) == mech.index_count for row in channel)
    for j, row in enumerate(channel):
        assert sum(row) == 1 and min(row) >= 0
        mean = sum(p * v for p, v in zip(row, mech.values, strict=True))
        assert mean == grid_point(j, k)  # exactly unbiased, with the rational stand-ins
        second = sum(p * v * v for p, v in zip(row, mech.values, strict=True))
        assert second - mean**2 == mech.variance_at(j)
    loss = mech.privacy_loss()
    assert loss is not None and loss.ratio == channel_ratio(channel)  # certificate = listing
    assert np.allclose(mech.grid_variances(k, epsilon),
                       [float(mech.variance_at(j)) for j in range(k)], rtol=1e-12)


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0, 4.0, 8.0])
def test_discretized_piecewise_costs_at_most_the_rounding_variance(epsilon: float) -> None:
    """Var_discrete(t) - Var_paper(t) (same rational s) is the randomized rounding's
    Δ²·E[φ(1 - φ)], in [0, Δ²/4]; the rule for m keeps Δ²/6 <= 1% of the paper's at t = 0."""
    k = 41
    grid = piecewise_grid(k, epsilon)
    delta = 2 * grid.c / grid.m
    for j in range(k):
        extra = grid.variance(j) - grid.paper_variance(grid_point(j, k))
        assert 0 <= extra <= delta**2 / 4
    assert delta**2 / 6 <= grid.paper_variance(Fraction(0)) / 100
    worst = float(max(grid.variance(j) for j in range(k)))
    assert worst == pytest.approx(paper_pm(1.0, epsilon), rel=0.01)


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0, 4.0])
def test_duchi_and_hybrid_match_the_papers(epsilon: float) -> None:
    k = 101
    duchi = Duchi.grid_variances(k, epsilon)
    t = np.linspace(-1, 1, k)
    assert np.allclose(duchi, [paper_duchi(x, epsilon) for x in t], rtol=1e-8)
    hybrid = Hybrid.scaled_worst_case_variance(k, epsilon)
    assert hybrid == pytest.approx(paper_worst_variance(epsilon), rel=0.01)
    assert hybrid >= paper_worst_variance(epsilon) * (1 - 1e-8)


def test_hybrid_switches_to_duchi_at_the_papers_epsilon_star() -> None:
    """α = 0 below ε* ≈ 0.61 (PM's variance at 0 equals Duchi's there), 1 - e^(-ε/2) above."""
    assert Hybrid(0.60, range(3)).alpha == 0
    above = Hybrid(0.62, range(3))
    assert float(above.alpha) == pytest.approx(1 - math.exp(-0.31), rel=1e-9)
    assert paper_pm(0, 0.6) > paper_duchi(0, 0.6) and paper_pm(0, 0.62) < paper_duchi(0, 0.62)


def test_cells_grow_with_epsilon_and_stay_small() -> None:
    assert [piecewise_grid(5, e).m for e in (0.5, 1.0, 2.0, 4.0, 8.0, 50.0)] == [
        16, 32, 32, 64, 128, 4096]
    assert cells_for(3, 2) == 32  # s = 1.5: 1% rule
    assert Piecewise.report_bytes(5, 50.0) == 4


# --- privacy: proven at the claim, refused when nudged ----------------------------------------


class _LeakyPiecewise(Piecewise):
    """PM whose high band is a millionth denser than e^(ε/2)·(its stand-in) allows."""

    name = "leaky_piecewise"

    def __init__(self, epsilon: float, labels: range, **kwargs: Any) -> None:
        import ldpsurvey.shared.mechanisms.piecewise as pm

        s = pm.rational_exp_floor(epsilon / 2) * (1 + Fraction(1, 10**6))
        grid = pm.PiecewiseGrid(s.numerator, s.denominator,
                                cells_for(s.numerator, s.denominator), len(labels))
        original = pm.piecewise_grid
        pm.piecewise_grid = lambda k, eps: grid  # type: ignore[assignment]
        try:
            super().__init__(epsilon, labels, **kwargs)
        finally:
            pm.piecewise_grid = original


class _LeakyDuchi(Duchi):
    name = "leaky_duchi"

    def __init__(self, epsilon: float, labels: range, **kwargs: Any) -> None:
        import ldpsurvey.shared.mechanisms.duchi as duchi

        e = duchi.rational_exp_floor(epsilon) * (1 + Fraction(1, 10**6))
        grid = duchi.DuchiGrid(e.numerator, e.denominator, len(labels))
        original = duchi._grid
        duchi._grid = lambda k, eps: grid  # type: ignore[assignment]
        try:
            super().__init__(epsilon, labels, **kwargs)
        finally:
            duchi._grid = original


@pytest.mark.parametrize("cls", [_LeakyPiecewise, _LeakyDuchi])
@pytest.mark.parametrize("k", [2, 101])
def test_a_channel_a_hair_less_private_is_refused(cls: type[GridMean], k: int) -> None:
    from ldpsurvey.shared.errors import PrivacyCheckError

    with pytest.raises(PrivacyCheckError, match="exceeds the claimed epsilon"):
        cls(1.0, range(k))


def test_a_tampered_row_is_caught_by_the_certificate() -> None:
    """Moving one cell's weight to its neighbour in one row breaks the row check or a column's
    ratio: the certificate looks at every row."""
    grid = piecewise_grid(5, 1.0)
    assert grid.loss() is not None

    class Tampered(type(grid)):  # type: ignore[misc]
        def crossed(self, j: int) -> tuple[dict[int, int], range]:
            found, inner = super().crossed(j)  # what the weights and the certificate read
            if j == 2:
                first = min(found)
                found[first] += 1
            return found, inner

    assert Tampered(grid.a, grid.b, grid.m, grid.k).loss() is None


# --- statistics -------------------------------------------------------------------------------

# A fixed population on a 21-value grid: a skewed mix (many low answers, a few high ones).
POPULATION_K = 21
POPULATION = np.repeat(np.arange(POPULATION_K), [60, 50, 40, 30, 25, 20, 18, 16, 14, 12, 10,
                                                 9, 8, 7, 6, 5, 4, 3, 2, 1, 40])


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0])
def test_variance_of_the_mean_is_the_exact_formula(name: str, epsilon: float) -> None:
    """R replicate means of the same population: (R - 1)·S²/σ² ~ χ²(R - 1) (means of 400
    reports are near normal); two-sided 99% band, a false alarm in 1% of cases. Unbiasedness:
    the grand mean within z(0.9995)·σ/√R of the truth (false alarm 0.1%)."""
    mech: GridMean = MEAN_MECHANISMS[name](epsilon, range(POPULATION_K), unit=Fraction(1, 4))
    counts = np.bincount(POPULATION, minlength=POPULATION_K)
    sigma2 = mech.fixed_population_variance(counts.tolist())
    truth = float(np.mean([mech.answer_value(int(j)) for j in POPULATION]))
    rng = np.random.default_rng(41)
    replicates = 2000
    means = np.empty(replicates)
    plug_ins = np.empty(replicates)
    for r in range(replicates):
        agg = mech.aggregate_many(mech.perturb_many(POPULATION, rng))
        mean = mech.estimate(agg).mean
        assert mean is not None and mean.estimate is not None and mean.std_error is not None
        means[r], plug_ins[r] = mean.estimate, mean.std_error**2
    # The plug-in standard error is about right on average; Duchi's is an upper bound (its
    # reports carry no information on the answers' spread: mean t² is taken as (mean t)²), as
    # is one_bit_mean's (Duchi's channel once mixed over its α-point).
    if name in ("duchi", "one_bit_mean"):
        assert sigma2 <= plug_ins.mean() <= Duchi.scaled_worst_case_variance(
            POPULATION_K, epsilon) * float(mech.half) ** 2 / POPULATION.size
    else:
        assert plug_ins.mean() == pytest.approx(sigma2, rel=0.1)
    statistic = (replicates - 1) * means.var(ddof=1) / sigma2
    low, high = chi2.ppf([0.005, 0.995], replicates - 1)
    assert low <= statistic <= high, (statistic, low, high)
    assert abs(means.mean() - truth) <= norm.ppf(0.9995) * math.sqrt(sigma2 / replicates)


@pytest.mark.parametrize("name", NAMES)
def test_secure_sampler_draws_the_exact_row(name: str) -> None:
    """perturb (the CSPRNG path, here a seeded source) against the exact row: Pearson χ² over
    the cells, false alarm 0.1% per case."""
    mech: GridMean = MEAN_MECHANISMS[name](0.8, range(7))
    draws = 20_000
    for answer in (0, 5):
        source = SeededSource(answer + 11)
        counts = np.bincount([mech.perturb(answer, source) for _ in range(draws)],
                             minlength=mech.index_count)
        expected = np.array([float(p) for p in mech.row(answer)]) * draws
        used = expected > 0
        assert counts[~used].sum() == 0  # hybrid below ε*: PM's cells never drawn
        statistic = float(((counts[used] - expected[used]) ** 2 / expected[used]).sum())
        assert statistic <= chi2.ppf(0.999, used.sum() - 1)


def test_estimate_shape_bound_and_interval() -> None:
    mech = Hybrid(1.0, range(0, 101), unit=Decimal("0.5"), question_id="hours")
    rng = np.random.default_rng(3)
    answers = rng.integers(0, 101, size=5000)
    agg = mech.aggregate_many(mech.perturb_many(answers, rng))
    result = mech.estimate(agg, confidence=0.9)
    mean = result.mean
    assert mean is not None and mean.estimate is not None and mean.std_error is not None
    assert result.n == 5000 and result.mechanism == "hybrid"
    values = np.array([mech.report_value(i) for i in range(mech.index_count)])
    assert mean.estimate == pytest.approx(float(agg.counts @ values) / 5000, rel=1e-12)
    # The bound is the exact worst case on the question's scale (half = 25).
    assert mean.variance_bound == pytest.approx(
        Hybrid.scaled_worst_case_variance(101, 1.0) * 25**2 / 5000, rel=1e-12)
    assert mean.std_error**2 <= mean.variance_bound
    assert mean.ci_low == pytest.approx(mean.estimate - norm.ppf(0.95) * mean.std_error)
    assert mech.estimate(mech.new_aggregate()).to_dict()["mean"]["estimate"] is None
    pseudo = mech.pseudo_values(mech.perturb_many(answers, rng))
    assert pseudo.shape == (5000, 1)


# --- the grid, answers and reports ------------------------------------------------------------


def test_decimal_answers_on_the_grid() -> None:
    mech = Piecewise(1.0, range(-20, 31), unit=Decimal("0.1"), question_id="temp")
    assert mech.encode(Decimal("-2.0")) == 0 and mech.encode(3) == 50
    assert mech.encode(0.3) == 23 and mech.encode(Fraction(1, 2)) == 25
    assert float(mech.center) == pytest.approx(0.5) and float(mech.half) == pytest.approx(2.5)
    for bad in (0.25, Decimal("3.1"), -2.1, True, "1", math.nan, math.inf, None):
        with pytest.raises(AnswerError):
            mech.encode(bad)
    integer = Duchi(1.0, range(0, 10))
    assert integer.encode(9) == 9
    for bad in (9.0, 10, -1, True):
        with pytest.raises(AnswerError):
            integer.encode(bad)


@pytest.mark.parametrize("name", NAMES)
def test_reports_are_cell_indices(name: str) -> None:
    mech: GridMean = MEAN_MECHANISMS[name](2.0, range(5))
    last = mech.index_count - 1
    assert mech.validate_report(0) == 0 and mech.validate_report(last) == last
    for bad in (-1, last + 1, True, 1.0, "0", None):
        with pytest.raises(ReportError):
            mech.validate_report(bad)
    assert len(str(last)) == type(mech).report_bytes(5, 2.0)


def test_the_grid_must_be_a_range_with_an_exact_unit() -> None:
    for labels, unit in ((range(0, 10, 2), 1), ((0, 1, 2), 1), (range(3), 0.5), (range(3), 0),
                         (range(3), -1)):
        with pytest.raises(SurveyError):
            Duchi(1.0, labels, unit=unit)  # type: ignore[arg-type]
    with pytest.raises(SurveyError, match="epsilon"):
        Piecewise(51.0, range(3))


# --- registration: nothing existing can pick them ---------------------------------------------


def test_registered_apart_for_the_number_types() -> None:
    """Not in MECHANISMS: `auto` ranks them only where a unit asks numeric_auto."""
    assert set(NAMES) == {"duchi", "piecewise", "hybrid", "one_bit_mean"}
    assert not set(NAMES) & set(MECHANISMS)
    for name in NAMES:
        cls = mechanism_class(name)
        assert cls.question_types == frozenset({"decimal", "integer"})
    for qtype, k in (("integer", 31), ("categorical", 5), ("ordinal", 5), ("binary", 2)):
        assert not {n for _, n in candidates(qtype, k, 1.0)} & set(NAMES)


def test_an_integer_names_them_and_no_other_existing_type_can() -> None:
    """An integer takes them by name (issue 41: wide ranges; `auto` does not rank them, above);
    a question of options does not."""
    for name in NAMES:
        parsed = Survey.from_dict({"id": "s", "title": "s", "version": 1, "questions": [
            {"id": "q", "text": "q", "type": "integer", "min": 0, "max": 10,
             "epsilon": 1.0, "mechanism": name}]})
        assert parsed.question("q").mechanism == name
        with pytest.raises(SurveyError, match="does not fit a ordinal question"):
            Survey.from_dict({"id": "s", "title": "s", "version": 1, "questions": [
                {"id": "q", "text": "q", "type": "ordinal", "options": ["a", "b", "c"],
                 "epsilon": 1.0, "mechanism": name}]})


# --- choosing among them ----------------------------------------------------------------------


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0, 4.0])
def test_choice_is_the_smallest_exact_variance(epsilon: float) -> None:
    k = 1001
    worst = choose_mean_mechanism(k, epsilon, worst_case=True)
    average = choose_mean_mechanism(k, epsilon)
    for choice in (worst, average):
        assert choice.variance == min(choice.variances.values())
        assert set(choice.variances) == {"duchi", "piecewise", "hybrid", "geometric"}
    assert worst.variances["geometric"] == average.variances["geometric"] == pytest.approx(
        Geometric.noise_variance(k, epsilon) * (2 / (k - 1)) ** 2)
    assert worst.name == ("duchi" if epsilon < 0.61 else "hybrid")
    assert worst.reason.startswith("auto: lowest worst-case variance")
    # Averaged over the answers: PM's t²/(s - 1) averages to 1/(3(s - 1)), below HM's constant.
    assert average.name == ("duchi" if epsilon < 0.61 else "piecewise")
    assert average.variances["piecewise"] == pytest.approx(
        Piecewise.average_variance(k, epsilon) * (2 / (k - 1)) ** 2)
    assert average.variances["duchi"] == pytest.approx(
        paper_duchi(0, epsilon) - (k + 1) / (3 * (k - 1)), rel=1e-9)  # B² - mean t_j²


def test_a_prior_moves_the_choice() -> None:
    k, epsilon = 101, 4.0
    ends = np.zeros(k)
    ends[[0, -1]] = 1
    middle = np.zeros(k)
    middle[k // 2] = 1
    assert choose_mean_mechanism(k, epsilon, ends).name == "duchi"
    assert choose_mean_mechanism(k, epsilon, middle).name == "piecewise"
    with pytest.raises(ValueError):
        mean_variances(k, epsilon, np.zeros(k))
    with pytest.raises(ValueError):
        mean_variances(k, epsilon, ends, worst_case=True)
