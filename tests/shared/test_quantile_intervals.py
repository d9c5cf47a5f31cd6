"""The quartiles' intervals of a square wave distribution (shared/numeric/distribution.py,
"Quantiles"): the percentile interval of the bootstrap replicates' own quantiles.

- What the interval is: with R replicates at confidence c, the i-th and (R + 1 - i)-th smallest
  of the R replicates' p-quantiles, i = max(1, floor((R + 1)(1 - c)/2)) (the bins' order
  statistics), the estimate the point fit's quantile and the std error the replicates'
  standard deviation, recomputed here from `ems`, `bootstrap_counts` and `Cells.quantile`
  alone.
- It holds its own estimate, widened to it where the replicates' quantiles leave it outside,
  and grows with the confidence: at fixed R, and with the default R (79 at 95%, 199 at 99%).
- Coverage on a small fast case (~3 s of CPU): Beta(5, 2) on 32 grid points,
  ε = 1, n = 2,000, 200 independent surveys; the median's 95% interval covers at a rate inside
  the binomial band 0.95 ± Z·√(0.95·0.05/200) (false-alarm rate 10⁻³ each way, Z = 3.09:
  [0.902, 0.998]).
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest
from ldpsurvey.shared.mechanisms.square_wave import SquareWave
from ldpsurvey.shared.numeric.distribution import (
    QUANTILE_NOTE,
    Cells,
    bootstrap_counts,
    distribution_estimate,
    quantile_summary,
    window_channel,
)
from ldpsurvey.shared.numeric.ems import ems
from scipy import stats

RATE = 1e-3
Z_COVER = NormalDist().inv_cdf(1 - RATE)


def _beta_counts(mech: SquareWave, n: int, rng: np.random.Generator) -> np.ndarray:
    law = np.diff(stats.beta(5, 2).cdf(np.arange(mech.k + 1) / mech.k))
    answers = rng.choice(mech.k, n, p=law)
    return np.bincount(mech.perturb_many(answers, rng), minlength=mech.m)


@pytest.mark.parametrize(("k", "seed", "confidence", "order"),
                         [(64, 1, 0.95, 2), (64, 2, 0.9, 4), (300, 3, 0.95, 2)])
def test_the_interval_is_the_replicates_quantiles_at_the_bins_order_statistics(
        k: int, seed: int, confidence: float, order: int) -> None:
    """R = 79: the 2nd and 78th smallest at 95%, the 4th and 76th at 90%."""
    mech = SquareWave(1.0, range(k))
    counts = _beta_counts(mech, 2_000, np.random.default_rng(seed))
    resamples = 79
    found = distribution_estimate(mech, counts, cdf_at=(), resamples=resamples,
                                  confidence=confidence)
    fits = ems(window_channel(mech), np.vstack([counts[None, :],
                                                bootstrap_counts(counts, resamples)]))
    cells = Cells.of(mech)
    assert len(found.quantiles) == 3
    for q in found.quantiles:
        point = float(cells.quantile(fits[:1], q.p)[0])
        replicates = np.sort(cells.quantile(fits[1:], q.p))
        assert q.estimate == point
        assert q.std_error == pytest.approx(float(np.std(replicates, ddof=1)), rel=1e-12)
        assert q.ci_low == min(float(replicates[order - 1]), point), q
        assert q.ci_high == max(float(replicates[resamples - order]), point), q
        assert q.ci_low <= q.estimate <= q.ci_high


def test_an_estimate_outside_the_replicates_quantiles_widens_the_interval_to_it() -> None:
    """Four answers, one per grid point: the point fit's median is 0 (all mass on answer 0),
    every replicate's between 2 and 3 (its mass split between answers 2 and 3), so at 80%
    with 9 replicates (i = floor(10·0.1) = 1: their extremes) the interval is widened down to
    0; the std error stays the replicates' own."""
    cells = Cells(np.arange(4.0), np.arange(4.0), 0)
    point = np.array([[1.0, 0, 0, 0]])
    rng = np.random.default_rng(0)
    share = rng.uniform(0.2, 0.8, 9)
    replicates = np.column_stack([np.zeros(9), np.zeros(9), share, 1 - share])
    fits = np.vstack([point, replicates])
    estimate, se, low, high = quantile_summary(cells, fits, 0.5, 0.8)
    medians = cells.quantile(replicates, 0.5)
    assert estimate == 0.0
    assert low == 0.0 and high == float(medians.max()) and medians.min() > 1.5
    assert se == pytest.approx(float(np.std(medians, ddof=1)), rel=1e-12)
    # mirrored: all mass on answer 3, replicates' medians between 0 and 1: widened up to 3
    estimate, _, low, high = quantile_summary(cells, fits[:, ::-1], 0.5, 0.8)
    mirrored = cells.quantile(replicates[:, ::-1], 0.5)
    assert estimate == high == 3.0 and low == float(mirrored.min()) and mirrored.max() < 1


def test_fewer_than_two_replicates_give_no_interval() -> None:
    mech = SquareWave(1.0, range(40))
    counts = _beta_counts(mech, 500, np.random.default_rng(8))
    found = distribution_estimate(mech, counts, cdf_at=(), resamples=0)
    for q in found.quantiles:
        assert q.estimate is not None
        assert all(math.isnan(x) for x in (q.std_error, q.ci_low, q.ci_high))


@pytest.mark.parametrize("seed", [4, 5])
def test_the_interval_holds_the_estimate_and_grows_with_confidence(seed: int) -> None:
    mech = SquareWave(2.0, range(60))
    counts = _beta_counts(mech, 1_000, np.random.default_rng(seed))
    previous = None
    for confidence in (0.5, 0.8, 0.9, 0.95, 0.99):
        found = distribution_estimate(mech, counts, cdf_at=(), confidence=confidence,
                                      resamples=199)
        spans = [(q.ci_low, q.estimate, q.ci_high) for q in found.quantiles]
        for low, estimate, high in spans:
            assert low <= estimate <= high
        if previous is not None:
            for (low, _, high), (was_low, _, was_high) in zip(spans, previous, strict=True):
                assert low <= was_low and was_high <= high
        previous = spans
    assert QUANTILE_NOTE in found.notes and "percentile interval" in QUANTILE_NOTE


@pytest.mark.parametrize("seed", [6, 9])
def test_the_default_99_percent_interval_holds_the_95_percent_one(seed: int) -> None:
    """Default replicates: 79 at 95% (the 2nd and 78th), 199 at 99% (the extremes), the first
    79 of which are the 95% interval's: so the 99% interval holds the 95% one."""
    mech = SquareWave(1.0, range(50))
    counts = _beta_counts(mech, 800, np.random.default_rng(seed))
    narrow = distribution_estimate(mech, counts, cdf_at=())
    wide = distribution_estimate(mech, counts, cdf_at=(), confidence=0.99)
    assert (narrow.resamples, wide.resamples) == (79, 199)
    assert np.array_equal(bootstrap_counts(counts, 199)[:79], bootstrap_counts(counts, 79))
    for a, b in zip(narrow.quantiles, wide.quantiles, strict=True):
        assert a.estimate == b.estimate
        assert b.ci_low <= a.ci_low <= a.ci_high <= b.ci_high, (a, b)


def test_the_default_replicates_follow_the_confidence() -> None:
    """79 replicates at 95% (the 2nd and 78th make an exact order interval for the bins);
    199 at 99%, where 79 could not (it used to be refused for want of replicates)."""
    mech = SquareWave(1.0, range(40))
    counts = _beta_counts(mech, 500, np.random.default_rng(7))
    assert distribution_estimate(mech, counts, cdf_at=()).resamples == 79
    assert distribution_estimate(mech, counts, cdf_at=(), confidence=0.99).resamples == 199


def test_the_median_interval_covers_at_the_nominal_rate_on_a_small_grid() -> None:
    """Measured at this seed: 184 of 200 (0.920), mean width 2.02 grid steps (test inversion,
    the interval before, covered 185 with width 1.95: Beta(5, 2)'s median on 32 points is
    where EMS's smoothing pulls the estimate, bench/RESULTS-numeric-distribution.md)."""
    mech = SquareWave(1.0, range(32))
    law = np.diff(stats.beta(5, 2).cdf(np.arange(33) / 32))
    truth = float(Cells.of(mech).quantile(law[None, :], 0.5)[0])
    rng = np.random.default_rng(2027)
    draws = 200
    covered = 0
    for _ in range(draws):
        found = distribution_estimate(mech, _beta_counts(mech, 2_000, rng), quantiles=(0.5,),
                                      cdf_at=())
        median = found.quantiles[0]
        covered += median.ci_low <= truth <= median.ci_high
    band = Z_COVER * (0.95 * 0.05 / draws) ** 0.5
    assert 0.95 - band <= covered / draws <= 0.95 + band, covered
