"""Multiselect estimators against their variance formulas, at a stated false-alarm rate.

A fixed population of N answer sets (the formulas describe the randomization of a fixed
population) is re-randomized R times with seeded numpy generators (simulation samplers), and
the secure samplers are checked against the exact channel. Derivations as in
test_mechanisms_statistics.py: the mean error over R runs is within Z standard errors of 0 (a
t-test), (R − 1)S²/σ² ~ χ²(R − 1) bands the variance, coverage is Binomial(R, 0.95) within Z
standard deviations plus COVERAGE_SLACK for the normal approximation. Every check has
false-alarm rate at most ALPHA; with about 300 checks the family-wise rate is below 1e-3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np
import pytest
from ldpsurvey.shared.mechanisms.psfo_grr import PSFOGRR
from ldpsurvey.shared.mechanisms.set_base import SetMechanism
from scipy import stats
from support.mechanisms import SET_NAMES, build_set
from support.sources import SeededSource

ALPHA = 1e-6
Z = float(stats.norm.isf(ALPHA / 2))
N = 2000
RUNS = 200
CONFIDENCE = 0.95
COVERAGE_SLACK = 0.01
# (k, m, required_min, ε) per mechanism: a shape each serves (set_ue: m <= k/2).
SHAPES = {"option_rr": (6, 3, 0, 2.0), "set_ue": (8, 2, 1, 2.0), "psfo_grr": (6, 3, 0, 2.0),
          "psfo_olh": (8, 3, 1, 3.0)}


def population(k: int, m: int, required: int) -> np.ndarray:
    """N fixed sets: option 0 in most, the last option in none (an f = 0 edge), sizes from
    `required` to m."""
    rng = np.random.default_rng(7)
    weights = 1.0 / np.arange(1, k + 1)
    weights[-1] = 0.0
    sets = np.zeros((N, k), dtype=bool)
    for i in range(N):
        size = required + i % (m - required + 1)
        chosen = rng.choice(k, size=size, replace=False, p=weights / weights.sum())
        sets[i, chosen] = True
    return sets


@dataclass
class Runs:
    mech: SetMechanism
    truth: np.ndarray
    mean_truth: float
    estimates: np.ndarray
    std_errors: np.ndarray
    bounds: np.ndarray
    covered: np.ndarray
    consistent: np.ndarray
    means: np.ndarray
    mean_std_errors: np.ndarray
    mean_bounds: np.ndarray
    mean_covered: np.ndarray


@cache
def simulate(name: str) -> Runs:
    k, m, required, eps = SHAPES[name]
    mech = build_set(name, k, eps, m, required)
    sets = population(k, m, required)
    truth = sets.mean(axis=0)
    mean_truth = float(sets.sum(axis=1).mean())
    rng = np.random.default_rng(sum(map(ord, name)))
    rows: dict[str, list] = {key: [] for key in ("estimates", "std_errors", "bounds", "covered",
                                                 "consistent", "means", "mean_std_errors",
                                                 "mean_bounds", "mean_covered")}
    for _ in range(RUNS):
        est = mech.estimate(mech.aggregate_many(mech.perturb_many(sets, rng)), CONFIDENCE)
        assert est.categories is not None and est.mean is not None
        rows["estimates"].append([c.estimate for c in est.categories])
        rows["std_errors"].append([c.std_error for c in est.categories])
        rows["bounds"].append([c.variance_bound for c in est.categories])
        rows["covered"].append([c.ci_low <= t <= c.ci_high
                                for c, t in zip(est.categories, truth, strict=True)])
        rows["consistent"].append([c.consistent for c in est.categories])
        rows["means"].append(est.mean.estimate)
        rows["mean_std_errors"].append(est.mean.std_error)
        rows["mean_bounds"].append(est.mean.variance_bound)
        rows["mean_covered"].append(est.mean.ci_low <= mean_truth <= est.mean.ci_high)
    return Runs(mech, truth, mean_truth, **{key: np.array(v, dtype=float)
                                            for key, v in rows.items()})


def band() -> tuple[float, float]:
    df = RUNS - 1
    return float(stats.chi2.ppf(ALPHA / 2, df) / df), float(stats.chi2.isf(ALPHA / 2, df) / df)


def check_unbiased(estimates: np.ndarray, truth: np.ndarray, what: str) -> None:
    err = estimates.mean(axis=0) - truth
    se = estimates.std(axis=0, ddof=1) / math.sqrt(estimates.shape[0])
    assert np.all(np.abs(err) <= Z * se + 1e-12), f"{what}: mean error {err} vs se {se}"


def check_variance(estimates: np.ndarray, sigma2: np.ndarray, what: str) -> None:
    lo, hi = band()
    ratio = estimates.var(axis=0, ddof=1) / sigma2
    assert np.all((lo <= ratio) & (ratio <= hi)), f"{what}: ratio {ratio} not in [{lo}, {hi}]"


def check_coverage(covered: np.ndarray, what: str) -> None:
    rate = covered.mean(axis=0)
    tol = Z * math.sqrt(CONFIDENCE * (1 - CONFIDENCE) / covered.shape[0]) + COVERAGE_SLACK
    assert np.all(np.abs(rate - CONFIDENCE) <= tol), f"{what}: coverage {rate} (tol {tol})"


@pytest.mark.parametrize("name", SET_NAMES)
def test_option_shares_are_unbiased_with_the_formula_variance(name: str) -> None:
    runs = simulate(name)
    check_unbiased(runs.estimates, runs.truth, name)
    check_variance(runs.estimates, runs.mech.option_variance(runs.truth, N), name)
    check_variance(runs.estimates, (runs.std_errors**2).mean(axis=0), f"{name} plug-in")
    check_coverage(runs.covered.astype(bool), name)


@pytest.mark.parametrize("name", SET_NAMES)
def test_worst_case_bound_holds(name: str) -> None:
    runs = simulate(name)
    assert np.all(runs.bounds == runs.bounds[0, 0]), "the bound must not depend on the data"
    assert np.all(runs.std_errors**2 <= runs.bounds * (1 + 1e-9))
    assert np.all(runs.mech.option_variance(runs.truth, N) <= runs.bounds[0] * (1 + 1e-9))
    assert np.all(runs.estimates.var(axis=0, ddof=1) <= runs.bounds[0] * band()[1])


@pytest.mark.parametrize("name", SET_NAMES)
def test_consistent_view_clips_shares_without_summing_to_one(name: str) -> None:
    runs = simulate(name)
    assert np.all((runs.consistent >= 0) & (runs.consistent <= 1))
    assert np.array_equal(runs.consistent, np.clip(runs.estimates, 0, 1))


@pytest.mark.parametrize("name", SET_NAMES)
def test_mean_number_selected(name: str) -> None:
    """Unbiased; the reported variance is exact for the bitwise mechanisms and an upper bound
    (Jensen) for padding and sampling, never below the spread; coverage at least nominal."""
    runs = simulate(name)
    means = runs.means[:, None]
    check_unbiased(means, np.array([runs.mean_truth]), f"{name} mean")
    reported = np.array([(runs.mean_std_errors**2).mean()])
    lo, hi = band()
    ratio = float(means.var(ddof=1) / reported[0])
    assert ratio <= hi, f"{name}: the reported variance is too small ({ratio})"
    if name in ("option_rr", "set_ue"):
        assert ratio >= lo, f"{name}: the exact variance is off ({ratio})"
    assert np.all(runs.mean_std_errors**2 <= runs.mean_bounds * (1 + 1e-9))
    rate = runs.mean_covered.mean()
    assert rate >= CONFIDENCE - Z * math.sqrt(CONFIDENCE * (1 - CONFIDENCE) / RUNS) \
        - COVERAGE_SLACK, f"{name}: mean coverage {rate}"


# --- the secure samplers match the channel ------------------------------------------------


SECURE_REPORTS = 6000
ANSWER = ["option-1", "option-2"]


def secure_check(mech: SetMechanism, reports: list) -> None:
    n = len(reports)
    selected = mech.encode(ANSWER)
    if isinstance(mech, PSFOGRR):
        items = mech.padded(selected)
        row = np.array([float(mech.p_star if y in items else mech.q_star)
                        for y in range(mech.size)])
        observed = np.bincount(np.array(reports, dtype=int), minlength=mech.size)
        assert stats.chisquare(observed, row * n).pvalue > ALPHA
        return
    agg = mech.new_aggregate()
    for r in reports:
        agg.add(r)
    support = mech.support_counts(agg).astype(float)
    p = np.array([float(mech.p_star if selected >> j & 1 else mech.q_star)
                  for j in range(mech.k)])
    assert np.all(np.abs(support - n * p) <= Z * np.sqrt(n * p * (1 - p)))


@pytest.mark.parametrize("name", SET_NAMES)
def test_secure_perturb_matches_the_channel(name: str) -> None:
    k, m, required, eps = SHAPES[name]
    mech = build_set(name, k, eps, m, required)
    secure_check(mech, [mech.validate_report(mech.perturb(ANSWER))
                        for _ in range(SECURE_REPORTS)])


@pytest.mark.parametrize("name", SET_NAMES)
def test_injected_source_is_deterministic(name: str) -> None:
    k, m, required, eps = SHAPES[name]
    mech = build_set(name, k, eps, m, required)
    a, b = SeededSource(5), SeededSource(5)
    first = [mech.perturb(ANSWER, a) for _ in range(SECURE_REPORTS)]
    assert first == [mech.perturb(list(reversed(ANSWER)), b) for _ in range(SECURE_REPORTS)]
    secure_check(mech, [mech.validate_report(r) for r in first])


@pytest.mark.parametrize("name", SET_NAMES)
def test_simulation_sampler_matches_the_channel(name: str) -> None:
    """perturb_many draws what perturb draws (one set, many reports)."""
    k, m, required, eps = SHAPES[name]
    mech = build_set(name, k, eps, m, required)
    sets = np.zeros((SECURE_REPORTS, k), dtype=bool)
    sets[:, [1, 2]] = True
    reports = mech.perturb_many(sets, np.random.default_rng(3))
    secure_check(mech, [mech.validate_report(r) for r in reports.tolist()])


@pytest.mark.parametrize("name", SET_NAMES)
def test_the_largest_epsilon_draws_a_valid_report(name: str) -> None:
    """At ε = 50 the bits' common denominator passes 2^64: the secure sampler still compares
    exactly (a regression: numpy refused the thresholds as C longs)."""
    mech = build_set(name, 2, 50.0, 1)  # set_ue: q = 1/(e^50 + 1), a 73-bit denominator
    for answer in ([], ["option-1"]):
        mech.validate_report(mech.perturb(answer))


@pytest.mark.parametrize("name", SET_NAMES)
def test_pseudo_values_average_to_the_estimate(name: str) -> None:
    """Contract 5: each respondent's (n, k) pseudo-values are unbiased for their set's
    indicators, so their mean over reports is the mechanism's own estimate of each share."""
    k, m, required, eps = SHAPES[name]
    mech = build_set(name, k, eps, m, required)
    sets = population(k, m, required)
    reports = mech.perturb_many(sets, np.random.default_rng(2))
    z = mech.pseudo_values(reports)
    assert z.shape == (N, k)
    est = mech.estimate(mech.aggregate_many(reports))
    assert np.allclose(z.mean(axis=0), [c.estimate for c in est.categories])
