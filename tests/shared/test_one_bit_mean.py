"""one_bit_mean: Ding et al.'s 1BitMean with α-point rounding (shared/mechanisms/one_bit_mean.py).

Exact properties are checked in rationals (the α-mixed channel is 1BitMean's and Duchi's, the
rounding is unbiased, the variance across rounds is the closed form, checked against brute
force over α and both bits). Statistical checks state their false-alarm rate; their seeds are
fixed, so each run is the same draw.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from ldpsurvey.shared.errors import PrivacyCheckError, SurveyError
from ldpsurvey.shared.exact import certify
from ldpsurvey.shared.mechanisms import mechanism_class, mechanism_for
from ldpsurvey.shared.mechanisms.duchi import Duchi
from ldpsurvey.shared.mechanisms.numeric_grid import grid_point
from ldpsurvey.shared.mechanisms.one_bit_mean import OneBitMean
from ldpsurvey.shared.survey import Survey
from scipy.stats import chi2, norm
from support.sources import ScriptedSource, SeededSource


def survey(mechanism: str = "one_bit_mean", **keys: Any) -> Survey:
    return Survey.from_dict({"id": "s", "title": "s", "version": 1, "series": "monthly",
                             "questions": [{"id": "q", "text": "q", "type": "decimal",
                                            "min": 0, "max": 100, "resolution": 0.5,
                                            "epsilon": 1.0, "mechanism": mechanism, **keys}]})


# --- the channel, exact --------------------------------------------------------------------------


@pytest.mark.parametrize("k", [2, 3, 11, 101])
@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0])
def test_the_alpha_mixed_channel_is_1bitmean_and_duchis(k: int, epsilon: float) -> None:
    """P[bit 1 | j] = 1/(e + 1) + (j/(k - 1))·(e - 1)/(e + 1), the paper's 1BitMean at x/m =
    j/(k - 1), with e = c/d the certified stand-in for e^ε: Duchi's row, so its unbiased
    estimator and exact variance B² - t_j² hold."""
    mech = OneBitMean(epsilon, range(k))
    duchi = Duchi(epsilon, range(k))
    e = mech.exp_epsilon
    for j in range(k):
        weights = mech.rounded_weights(j)
        p1 = Fraction(weights[1], sum(weights))
        assert p1 == 1 / (e + 1) + Fraction(j, k - 1) * (e - 1) / (e + 1)
        assert p1 == duchi.row(j)[1]
        value = (1 - p1) * mech.values[0] + p1 * mech.values[1]
        assert value == grid_point(j, k)  # unbiased
        second = (1 - p1) * mech.values[0] ** 2 + p1 * mech.values[1] ** 2
        assert second - value**2 == mech.variance_at(j)


@pytest.mark.parametrize("k", [2, 7, 1000])
def test_alpha_point_rounding_is_exactly_unbiased(k: int) -> None:
    """Of the k - 1 values of α, exactly j round grid value j to max: P[max | j] = j/(k - 1)."""
    mech = OneBitMean(1.0, range(k))
    for j in sorted({0, 1, k // 2, k - 2, k - 1}):
        assert sum(mech.alpha_round(j, a) == k - 1 for a in range(k - 1)) == j
        assert {mech.alpha_round(j, a) for a in range(k - 1)} <= set(mech.ends)


def test_the_certificate_is_the_worst_column_ratio_and_refutes_a_nudged_epsilon() -> None:
    """The certified loss is c/d exactly; an ε a hair below ln(c/d) is refused."""
    mech = OneBitMean(1.0, range(41))
    loss = mech.privacy_loss()
    assert loss is not None and loss.ratio == mech.exp_epsilon
    certify(loss, 1.0, "one_bit_mean")
    with pytest.raises(PrivacyCheckError, match="exceeds the claimed epsilon"):
        certify(loss, mech.realized_epsilon() * (1 - 1e-9), "one_bit_mean")


class _LeakyOneBitMean(OneBitMean):
    """Its bit a millionth bolder than e^ε allows."""

    name = "leaky_one_bit_mean"

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


@pytest.mark.parametrize("k", [2, 101])
def test_a_bit_a_hair_bolder_than_epsilon_is_refused_when_built(k: int) -> None:
    with pytest.raises(PrivacyCheckError, match="exceeds the claimed epsilon"):
        _LeakyOneBitMean(1.0, range(k))


# --- the sampler and the estimator ----------------------------------------------------------------


def test_perturb_draws_alpha_then_the_ends_bit() -> None:
    """One randbelow(k - 1) for α, then one draw of the end's weights: grid value 5 goes to
    min at α = 5 and to max at α = 4, and the same second draw u = 2c(k - 1) - 1 is bit 0 under
    min's row [2c, 2d]·(k - 1) and bit 1 under max's [2d, 2c]·(k - 1)."""
    mech = OneBitMean(1.0, range(11))
    total = sum(mech.weights(0))
    u = mech.weights(0)[0] - 1
    for alpha, bit in ((5, 0), (4, 1)):
        source = ScriptedSource([alpha, u])
        assert mech.perturb_index(5, source) == bit
        assert source.requests == [10, total]


@pytest.mark.parametrize("answer", [0, 3, 6])
def test_the_secure_sampler_draws_the_exact_row(answer: int) -> None:
    """perturb (α and the bit, here from a seeded source) against the exact α-mixed row:
    Pearson χ² with one degree of freedom, false alarm 0.1% per case."""
    mech = OneBitMean(0.8, range(7))
    draws = 20_000
    source = SeededSource(answer + 41)
    counts = np.bincount([mech.perturb(answer, source) for _ in range(draws)], minlength=2)
    expected = np.array([float(p) for p in mech.row(answer)]) * draws
    statistic = float(((counts - expected) ** 2 / expected).sum())
    assert statistic <= chi2.ppf(0.999, 1)


# A fixed population on a 21-value grid (resolution 1/4): many low answers, a few high ones.
POPULATION_K = 21
POPULATION = np.repeat(np.arange(POPULATION_K), [30, 25, 20, 15, 12, 10, 9, 8, 7, 6, 5,
                                                 5, 4, 4, 3, 3, 2, 2, 1, 1, 20])


@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_the_mean_is_unbiased_with_the_exact_variance(epsilon: float) -> None:
    """R replicate means of the same population, each report drawn by `perturb` (α and the bit
    from a seeded source standing for the OS CSPRNG): (R - 1)·S²/σ² ~ χ²(R - 1) with σ² the
    exact fixed-population variance Σ_j c_j (B² - t_j²)/n²·half²; two-sided 99% band (false
    alarm 1%). Unbiasedness: the grand mean within z(0.9995)·σ/√R of the truth (0.1%)."""
    mech: Any = OneBitMean(epsilon, range(POPULATION_K), unit=Fraction(1, 4))
    counts = np.bincount(POPULATION, minlength=POPULATION_K)
    sigma2 = mech.fixed_population_variance(counts.tolist())
    truth = float(np.mean([mech.answer_value(int(j)) for j in POPULATION]))
    source = SeededSource(int(epsilon * 10))
    replicates = 400
    means = np.empty(replicates)
    answers = [mech.answer_value(int(j)) for j in POPULATION]
    for r in range(replicates):
        reports = np.array([mech.perturb(a, source) for a in answers])
        mean = mech.estimate(mech.aggregate_many(reports)).mean
        assert mean is not None and mean.estimate is not None
        means[r] = mean.estimate
    statistic = (replicates - 1) * means.var(ddof=1) / sigma2
    low, high = chi2.ppf([0.005, 0.995], replicates - 1)
    assert low <= statistic <= high, (statistic, low, high)
    assert abs(means.mean() - truth) <= norm.ppf(0.9995) * math.sqrt(sigma2 / replicates)


# --- across rounds ------------------------------------------------------------------------------


def _brute_history_variance(mech: OneBitMean, history: list[int]) -> Fraction:
    """Var[S] by listing α and both memoized bits with their exact probabilities."""
    c, d, k = mech.grid.c, mech.grid.d, mech.k
    bound = mech.grid.bound
    first = second = Fraction(0)
    for alpha in range(k - 1):
        for low_bit in (0, 1):
            for high_bit in (0, 1):
                p = (Fraction(c if low_bit == 0 else d, c + d)
                     * Fraction(c if high_bit == 1 else d, c + d) / (k - 1))
                total = sum(bound if (high_bit if j > alpha else low_bit) else -bound
                            for j in history)
                first += p * total
                second += p * total * total
    assert first == sum(grid_point(j, k) for j in history)  # unbiased over the rounds
    return second - first * first


@pytest.mark.parametrize("history", [[3], [2, 2, 2, 2], [0, 5, 2], [1, 4, 4, 0, 3], [5, 0]])
def test_the_variance_across_rounds_is_the_closed_form(history: list[int]) -> None:
    mech = OneBitMean(1.0, range(6))
    assert mech.history_variance(history) == _brute_history_variance(mech, history)


def test_an_unchanged_answer_is_not_averaged_away() -> None:
    """R rounds of the same answer: Var[S] = R²·Var_j, so the average over rounds keeps the
    variance of one round (fresh noise each round would divide it by R)."""
    mech = OneBitMean(1.0, range(11), unit=Fraction(1, 2))
    for j in (0, 4, 10):
        assert mech.history_variance([j] * 5) == 25 * mech.variance_at(j)
    assert mech.series_mean_variance([[4] * 5, [7] * 5]) == pytest.approx(
        mech.fixed_population_variance([0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0]))


# --- the survey ----------------------------------------------------------------------------------


def test_named_on_a_decimal_and_an_integer_never_by_auto() -> None:
    """one_bit_mean is chosen by name (its round's variance is duchi's); auto keeps its choice,
    so the canonical bytes of a survey without it do not change."""
    assert mechanism_class("one_bit_mean") is OneBitMean
    question = survey().question("q")
    assert question.mechanism == "one_bit_mean"
    assert question.params == {"exp_epsilon": str(OneBitMean(1.0, range(2)).exp_epsilon)}
    assert isinstance(mechanism_for(question), OneBitMean)
    assert survey("auto").question("q").mechanism != "one_bit_mean"
    integer = Survey.from_dict({"id": "s", "title": "s", "version": 1, "questions": [
        {"id": "q", "text": "q", "type": "integer", "min": 0, "max": 10, "epsilon": 1.0,
         "mechanism": "one_bit_mean"}]}).question("q")
    assert isinstance(mechanism_for(integer), OneBitMean)
    again = Survey.from_dict(survey().to_dict())
    assert again.canonical_bytes() == survey().canonical_bytes()


def test_refused_as_a_pairs_mean_part() -> None:
    with pytest.raises(SurveyError, match="sends the mean alone"):
        survey(estimate=["mean", "distribution"])
