"""The quartiles' intervals of a square wave distribution (shared/numeric/distribution.py,
"Quantiles"): test inversion of the EMS CDF with bootstrap standard errors.

- What the interval is: the values t at the grid cells' ends that it leaves out are exactly
  those where the level-c test of "F(t) = p" rejects, |F̂(t) - p| > z·se(t) (F̂ the EMS CDF of
  the counts, se(t) the replicates' s.d. of F̂(t), z Student's t quantile with R - 1 degrees
  of freedom), recomputed here from `ems` and `bootstrap_counts` alone.
- It holds its own estimate and grows with the confidence (the same replicates: R fixed).
- Coverage on a small fast case (~3 s of CPU): Beta(5, 2) on 32 grid points,
  ε = 1, n = 2,000, 200 independent surveys; the median's 95% interval covers at a rate inside
  the binomial band 0.95 ± Z·√(0.95·0.05/200) (false-alarm rate 10⁻³ each way, Z = 3.09:
  [0.902, 0.998]).
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pytest
from ldpsurvey.shared.mechanisms.square_wave import SquareWave
from ldpsurvey.shared.numeric.distribution import (
    Cells,
    bootstrap_counts,
    distribution_estimate,
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


@pytest.mark.parametrize(("k", "seed"), [(64, 1), (64, 2), (300, 3)])
def test_the_interval_is_the_set_the_cdf_test_does_not_reject(k: int, seed: int) -> None:
    mech = SquareWave(1.0, range(k))
    counts = _beta_counts(mech, 2_000, np.random.default_rng(seed))
    resamples = 79
    found = distribution_estimate(mech, counts, cdf_at=(), resamples=resamples)
    fits = ems(window_channel(mech), np.vstack([counts[None, :],
                                                bootstrap_counts(counts, resamples)]))
    cdf = np.cumsum(fits, axis=1)
    se = cdf[1:].std(axis=0, ddof=1)
    z = stats.t(resamples - 1).ppf(0.975)
    ends = mech.low + Cells.of(mech).last + 0.5  # where F̂ = cdf[0] exactly
    assert len(found.quantiles) == 3
    for q in found.quantiles:
        below = ends < q.ci_low - 1e-9
        above = ends > q.ci_high + 1e-9
        inside = ~below & ~above
        assert np.all(cdf[0][below] + z * se[below] < q.p + 2e-3 * se[below]), q
        assert np.all(cdf[0][above] - z * se[above] > q.p - 2e-3 * se[above]), q
        assert np.all(np.abs(cdf[0][inside] - q.p) <= z * se[inside] * 1.002), q
        assert q.ci_low < q.estimate < q.ci_high
        assert q.std_error == pytest.approx((q.ci_high - q.ci_low) / (2 * 1.9904), rel=1e-3)


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
    assert any("test inversion" in note for note in found.notes)


def test_the_default_replicates_follow_the_confidence() -> None:
    """79 replicates at 95% (the 2nd and 78th make an exact order interval for the bins);
    199 at 99%, where 79 could not (it used to be refused for want of replicates)."""
    mech = SquareWave(1.0, range(40))
    counts = _beta_counts(mech, 500, np.random.default_rng(7))
    assert distribution_estimate(mech, counts, cdf_at=()).resamples == 79
    assert distribution_estimate(mech, counts, cdf_at=(), confidence=0.99).resamples == 199


def test_the_median_interval_covers_at_the_nominal_rate_on_a_small_grid() -> None:
    """Measured at this seed: 185 of 200 (0.925), mean width 1.95 grid steps."""
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
