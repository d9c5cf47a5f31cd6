"""The design effect's split into sampling × privacy is stated only where the design's degrees
of freedom can carry it (issue 39; shared/design/estimators.py, docs/design-based.md §6).

Over repeated stratified samples whose true answers are not clustered (the true sampling deff
is 1), the split must be declared supported (the sampling factor's interval excluding 1) at
no more than the stated rate 1 − confidence; with strongly clustered answers it must be
declared most of the time (the rule is not simply silent)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from ldpsurvey.shared.design import Design, from_values, mean

SAMPLES = 1000
CONFIDENCE = 0.95
# One-sided false-alarm rate 0.001 of this test: the binomial bound over SAMPLES draws.
Z_TEST = 3.09


def _randomized(truth: np.ndarray, epsilon: float, rng: np.random.Generator):
    """Binary randomized response: each answer kept with probability p; the pseudo-values
    (y − q)/(p − q) and their randomization variance estimates z² − z."""
    p = math.exp(epsilon) / (1 + math.exp(epsilon))
    kept = rng.random(truth.size) < p
    y = np.where(kept, truth, 1 - truth).astype(float)
    z = (y - (1 - p)) / (2 * p - 1)
    return from_values("q", z, noise=z * z - z, kind="shares")


def _split_rate(strata: int, psus: int, per_psu: int, epsilon: float, spread: float,
                seed: int) -> float:
    """The share of SAMPLES samples whose "yes" share has its split stated; `spread` is the
    standard deviation of the PSUs' log-odds (0: unclustered answers, true sampling deff 1)."""
    rng = np.random.default_rng(seed)
    n = strata * psus * per_psu
    stratum = np.repeat(np.arange(strata), psus * per_psu)
    psu = np.repeat(np.arange(strata * psus), per_psu)
    design = Design.build(np.full(n, 50.0), stratum, psu)
    stated = 0
    for _ in range(SAMPLES):
        logit = -0.8 + spread * rng.standard_normal(strata * psus)
        truth = (rng.random(n) < 1 / (1 + np.exp(-logit[psu]))).astype(int)
        [row] = mean(design, _randomized(truth, epsilon, rng),
                     confidence=CONFIDENCE).rows()
        assert row.deff is not None
        stated += row.deff.split_supported
    return stated / SAMPLES


@pytest.mark.parametrize(("strata", "psus", "epsilon"),
                         [(2, 4, 1.0), (2, 4, 3.0), (1, 15, 1.0), (4, 8, 2.0)])
def test_with_a_true_sampling_deff_of_1_the_split_is_rarely_stated(strata: int, psus: int,
                                                                  epsilon: float) -> None:
    alpha = 1 - CONFIDENCE
    rate = _split_rate(strata, psus, 50, epsilon, 0.0, seed=strata * 100 + psus)
    assert rate <= alpha + Z_TEST * math.sqrt(alpha * (1 - alpha) / SAMPLES), rate


def test_strongly_clustered_answers_get_their_split_stated() -> None:
    # 4 strata × 8 PSUs of 50: a PSU log-odds s.d. of 1.5 makes the sampling deff about 10.
    assert _split_rate(4, 8, 50, 3.0, 1.5, seed=7) > 0.5
