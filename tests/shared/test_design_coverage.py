"""Coverage of design-based 95% intervals over repeated samples (slow: run with -m slow).

A finite population of 10 strata × C clusters × 30 people with cluster effects on a 3-option
answer; each repetition draws a stratified cluster sample (10 clusters per stratum, without
replacement, everyone in them: weights C/10, fpc C) and randomizes every answer afresh with GRR
at ε = 1. The target is the population's true share of each option.

Band: with R = 1,500 repetitions a correct 95% interval covers a binomial(R, 0.95) number of
times; the test accepts [0.95 − 3.5σ, 0.95 + 3.5σ], σ = sqrt(0.95·0.05/R) = 0.0056, i.e.
[0.930, 0.970] (false alarm ~5e-4 per check, 12 checks). Checked for the linearized and the JKn
variance, at sampling fractions 0.1 (C = 100) and 0.5 (C = 20). At f = 0.5 the intervals
WITHOUT the randomization term (R's variance on the pseudo-values alone) must fall below the
band: the term an fpc needs is really needed.

Also: the sampling part of the variance estimated from randomized answers (V − V_privacy) is
unbiased for the design variance on the true answers: the mean over repetitions of the
difference is within 4 standard errors of 0.
"""

from __future__ import annotations

import numpy as np
import pytest
from ldpsurvey.shared.design import Design, build_replicates, mean, pseudo_values
from ldpsurvey.shared.mechanisms.disclosed import Disclosed
from ldpsurvey.shared.mechanisms.grr import GRR
from support.design_data import OPTIONS, question

REPETITIONS = 1500
SIGMA = float(np.sqrt(0.95 * 0.05 / REPETITIONS))
BAND = (0.95 - 3.5 * SIGMA, 0.95 + 3.5 * SIGMA)


def _population(clusters: int, rng: np.random.Generator):
    strata, size = 10, 30
    effect = rng.normal(0, 0.7, (strata, clusters))
    stratum = np.repeat(np.arange(strata), clusters * size)
    cluster = np.tile(np.repeat(np.arange(clusters), size), strata)
    e = effect[stratum, cluster]
    logits = np.column_stack([np.zeros(e.size), 0.2 + e + 0.1 * stratum, -0.6 - e])
    probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    truth = (rng.random(e.size)[:, None] > np.cumsum(probs, axis=1)).sum(axis=1)
    return stratum, cluster, truth


@pytest.mark.slow
@pytest.mark.parametrize("clusters", [100, 20], ids=["f=0.1", "f=0.5"])
def test_intervals_cover_at_the_stated_rate(clusters: int) -> None:
    rng = np.random.default_rng(clusters)
    stratum, cluster, truth = _population(clusters, rng)
    target = np.bincount(truth, minlength=3) / truth.size
    q = question("use")
    grr = GRR(1.0, OPTIONS, question_id="use")
    disclosed = Disclosed(OPTIONS, question_id="use")
    covered = {"linearized": np.zeros(3), "jkn": np.zeros(3), "no term": np.zeros(3)}
    gaps = []
    for _ in range(REPETITIONS):
        chosen = np.concatenate([rng.choice(clusters, 10, replace=False) + h * clusters
                                 for h in range(10)])
        rows = np.flatnonzero(np.isin(stratum * clusters + cluster, chosen))
        design = Design.build(np.full(rows.size, clusters / 10), stratum[rows], cluster[rows],
                              np.full(rows.size, float(clusters)))
        pv = pseudo_values(q, grr, grr.perturb_many(truth[rows], rng))
        linear = mean(design, pv)
        jack = mean(design, pv, variance=build_replicates(design, "jkn"))
        se = linear.std_errors
        covered["linearized"] += np.abs(linear.estimates - target) <= 1.959964 * se
        covered["jkn"] += np.abs(jack.estimates - target) <= 1.959964 * jack.std_errors
        design_only = np.sqrt(np.maximum(se**2 - _added(design, pv), 0))
        covered["no term"] += np.abs(linear.estimates - target) <= 1.959964 * design_only
        on_truth = mean(design, pseudo_values(q, disclosed, truth[rows]))
        gaps.append(np.diag(linear.covariance) - linear.privacy_variance
                    - np.diag(on_truth.covariance))
    rates = {k: v / REPETITIONS for k, v in covered.items()}
    for name in ("linearized", "jkn"):
        assert np.all((rates[name] >= BAND[0]) & (rates[name] <= BAND[1])), (name, rates)
    if clusters == 20:
        assert np.all(rates["no term"] < BAND[0]), rates
    gaps_array = np.array(gaps)
    spread = gaps_array.std(axis=0) / np.sqrt(REPETITIONS)
    assert np.all(np.abs(gaps_array.mean(axis=0)) < 4 * spread), (gaps_array.mean(0), spread)


def _added(design: Design, pv) -> np.ndarray:
    from ldpsurvey.shared.design.linearization import randomization_terms

    a = design.weights / design.weights.sum()
    return randomization_terms(design, a, pv.noise)[0]
