"""Estimators against their formulas: unbiasedness, variance, coverage, and the secure path.

Every statistical check here states its false-alarm rate. Simulations use seeded numpy
generators and a *fixed population* of true answers (the variance formulas describe the
randomization of a fixed population), re-randomized R times.

Derivations used below:
- Mean error: over R independent runs the average estimate has standard error S/sqrt(R) (S the
  empirical standard deviation); |mean - truth| <= Z·S/sqrt(R) with Z for a two-sided rate
  ALPHA is a t-test (R >= 300, so t ≈ normal).
- Variance: for approximately normal estimates, (R-1)·S²/σ² ~ χ²(R-1), so S²/σ² lies in
  [χ²_{ALPHA/2}(R-1), χ²_{1-ALPHA/2}(R-1)]/(R-1) with probability 1 - ALPHA. Estimates are
  sums of n = 2000 bounded per-report terms: their excess kurtosis is O(1/n), negligible.
- Coverage: each value's interval covers its truth in R independent runs: Binomial(R, c)
  with c the nominal confidence if the normal approximation is exact. We allow Z binomial
  standard deviations plus COVERAGE_SLACK for the normal approximation itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import pytest
from ldpsurvey.shared.mechanisms import MECHANISMS, Mechanism
from ldpsurvey.shared.mechanisms.geometric import Geometric
from ldpsurvey.shared.mechanisms.pure import PureProtocol
from ldpsurvey.shared.randomness import SECURE
from scipy import stats
from support.mechanisms import MECHANISM_NAMES, build, kind_of

ALPHA = 1e-6  # per check; a few hundred checks in all -> family-wise false alarm < 1e-3
Z = float(stats.norm.isf(ALPHA / 2))  # 4.89
N = 2000  # respondents per run
CONFIDENCE = 0.95
COVERAGE_SLACK = 0.01


@dataclass(frozen=True)
class Config:
    name: str
    k: int
    epsilon: float
    runs: int

    @property
    def id(self) -> str:
        return f"{self.name}-k{self.k}-eps{self.epsilon:g}-R{self.runs}"


def _configs(runs: int, sizes: tuple[int, ...]) -> list[Config]:
    out = []
    for name in MECHANISM_NAMES:
        kind = kind_of(MECHANISMS[name])
        if kind == "binary":
            out.append(Config(name, 2, 1.0, runs))
        elif kind == "integer":
            out.append(Config(name, 6, 2.0, runs))
        else:
            out.extend(Config(name, k, 1.0 if k <= 5 else 2.0, runs) for k in sizes)
    return out


# The default run keeps to one domain size and 200 runs (a 2-core machine shared with others);
# the slow variant adds k = 16 and ten times the runs, for a band about three times narrower.
FAST = _configs(200, (5,))
SLOW = _configs(2000, (5, 16))


def population(k: int) -> np.ndarray:
    """True frequencies: Zipf-like with the last value never chosen (an f = 0 edge case)."""
    weights = 1.0 / np.arange(1, k + 1)
    weights[-1] = 0.0
    counts = np.floor(N * weights / weights.sum()).astype(int)
    counts[0] += N - counts.sum()
    return counts


def _groups(config: Config) -> dict[str, tuple[int, ...]]:
    return {"g": (1, 3)} if kind_of(MECHANISMS[config.name]) == "frequency" else {}


@dataclass
class Runs:
    mech: Mechanism
    truth: np.ndarray  # per value
    estimates: np.ndarray  # runs x values
    std_errors: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    bounds: np.ndarray
    consistent: np.ndarray
    group_truth: np.ndarray
    group_estimates: np.ndarray
    group_std_errors: np.ndarray
    group_covered: np.ndarray
    group_bounds: np.ndarray
    mean_truth: float | None
    means: np.ndarray
    mean_std_errors: np.ndarray
    mean_covered: np.ndarray


@cache
def simulate(config: Config) -> Runs:
    """R re-randomizations of one fixed population, estimated through the public API."""
    groups = _groups(config)
    mech = build(MECHANISMS[config.name], config.k, config.epsilon, groups=groups)
    counts = population(config.k)
    answers = np.repeat(np.arange(config.k), counts)
    truth = counts / N
    rng = np.random.default_rng(_seed(config))
    rows: dict[str, list[Any]] = {key: [] for key in Runs.__dataclass_fields__}
    for _ in range(config.runs):
        est = mech.estimate(mech.aggregate_many(mech.perturb_many(answers, rng)), CONFIDENCE)
        values = est.categories if est.categories is not None else est.distribution
        assert values is not None
        rows["estimates"].append([v.estimate for v in values])
        rows["std_errors"].append([v.std_error for v in values])
        rows["ci_low"].append([v.ci_low for v in values])
        rows["ci_high"].append([v.ci_high for v in values])
        rows["bounds"].append([v.variance_bound for v in values])
        rows["consistent"].append([v.consistent for v in values])
        rows["group_estimates"].append([g.estimate for g in est.groups])
        rows["group_std_errors"].append([g.std_error for g in est.groups])
        rows["group_bounds"].append([g.variance_bound for g in est.groups])
        group_truth = [truth[list(m)].sum() for m in groups.values()]
        rows["group_covered"].append([g.ci_low <= t <= g.ci_high
                                      for g, t in zip(est.groups, group_truth, strict=True)])
        if est.mean is not None:
            mean_truth = float(np.dot(scores(mech), truth))
            rows["means"].append(est.mean.estimate)
            rows["mean_std_errors"].append(est.mean.std_error)
            rows["mean_covered"].append(est.mean.ci_low <= mean_truth <= est.mean.ci_high)
    return Runs(
        mech=mech, truth=truth,
        **{key: np.array(rows[key], dtype=float) for key in
           ("estimates", "std_errors", "ci_low", "ci_high", "bounds", "consistent",
            "group_estimates", "group_std_errors", "group_bounds", "means",
            "mean_std_errors")},
        group_truth=np.array([truth[list(m)].sum() for m in groups.values()]),
        group_covered=np.array(rows["group_covered"], dtype=bool),
        mean_truth=float(np.dot(scores(mech), truth)) if rows["means"] else None,
        mean_covered=np.array(rows["mean_covered"], dtype=bool),
    )


def scores(mech: Mechanism) -> np.ndarray:
    """What a mean is taken over: integer values, or options scored 1..k (ordinal scales)."""
    if isinstance(mech.labels, range):
        return np.asarray(mech.labels, dtype=float)
    return np.arange(1, mech.k + 1, dtype=float)


def _seed(config: Config) -> int:
    return sum(ord(c) * 31**i for i, c in enumerate(config.id)) % 2**32


def formula_variance(mech: Mechanism, truth: np.ndarray) -> np.ndarray | None:
    """Var of each value's estimate at the true frequencies, from the mechanism's formula."""
    if isinstance(mech, PureProtocol):
        return np.asarray(mech.set_variance(truth, 1, N), dtype=float)
    if isinstance(mech, Geometric) and mech.histogram_range is not None:
        w = mech._inversion.w  # Var f̂ = (W f - f)/n for the least-squares inverse M
        return (w @ truth - truth) / N
    return None


def variance_band(runs: int) -> tuple[float, float]:
    df = runs - 1
    return (float(stats.chi2.ppf(ALPHA / 2, df) / df), float(stats.chi2.isf(ALPHA / 2, df) / df))


def _check_unbiased(estimates: np.ndarray, truth: np.ndarray, what: str) -> None:
    runs = estimates.shape[0]
    err = estimates.mean(axis=0) - truth
    se = estimates.std(axis=0, ddof=1) / math.sqrt(runs)
    assert np.all(np.abs(err) <= Z * se + 1e-12), f"{what}: mean error {err} vs se {se}"


def _check_variance(estimates: np.ndarray, sigma2: np.ndarray, what: str) -> None:
    lo, hi = variance_band(estimates.shape[0])
    ratio = estimates.var(axis=0, ddof=1) / sigma2
    assert np.all((lo <= ratio) & (ratio <= hi)), f"{what}: var ratio {ratio} not in [{lo}, {hi}]"


def _check_coverage(covered: np.ndarray, what: str) -> None:
    runs = covered.shape[0]
    rate = covered.mean(axis=0)
    tol = Z * math.sqrt(CONFIDENCE * (1 - CONFIDENCE) / runs) + COVERAGE_SLACK
    assert np.all(np.abs(rate - CONFIDENCE) <= tol), f"{what}: coverage {rate} (tol {tol})"


def _params(configs: list[Config], slow: bool = False) -> list[Any]:
    marks = [pytest.mark.slow] if slow else []
    return [pytest.param(c, id=c.id, marks=marks) for c in configs]


ALL = _params(FAST) + _params(SLOW, slow=True)


# --- per value -------------------------------------------------------------------------------


@pytest.mark.parametrize("config", ALL)
def test_estimates_are_unbiased(config: Config) -> None:
    runs = simulate(config)
    _check_unbiased(runs.estimates, runs.truth, config.id)


@pytest.mark.parametrize("config", ALL)
def test_variance_matches_the_formula(config: Config) -> None:
    runs = simulate(config)
    sigma2 = formula_variance(runs.mech, runs.truth)
    if sigma2 is None:
        pytest.skip(f"{config.name}: no closed-form variance known to this test; the plug-in "
                    "calibration test covers it")
    _check_variance(runs.estimates, sigma2, config.id)


@pytest.mark.parametrize("config", ALL)
def test_reported_std_errors_are_calibrated(config: Config) -> None:
    """The plug-in std errors the estimate reports match the spread of the estimates."""
    runs = simulate(config)
    _check_variance(runs.estimates, (runs.std_errors**2).mean(axis=0), config.id)


@pytest.mark.parametrize("config", ALL)
def test_worst_case_bound_holds(config: Config) -> None:
    runs = simulate(config)
    bound = runs.bounds[0]
    assert np.all(runs.bounds == bound), "the worst-case bound must not depend on the data"
    assert np.all(runs.std_errors**2 <= bound * (1 + 1e-9))
    _, hi = variance_band(config.runs)
    assert np.all(runs.estimates.var(axis=0, ddof=1) <= bound * hi)
    sigma2 = formula_variance(runs.mech, runs.truth)
    if sigma2 is not None:
        assert np.all(sigma2 <= bound * (1 + 1e-9))


@pytest.mark.parametrize("config", ALL)
def test_interval_coverage_is_nominal(config: Config) -> None:
    runs = simulate(config)
    covered = (runs.ci_low <= runs.truth) & (runs.truth <= runs.ci_high)
    _check_coverage(covered, config.id)


@pytest.mark.parametrize("config", _params(FAST))
def test_consistent_view_is_a_distribution(config: Config) -> None:
    runs = simulate(config)
    assert np.all(runs.consistent >= 0)
    assert np.allclose(runs.consistent.sum(axis=1), 1.0)


# --- groups (sums of options) ------------------------------------------------------------------


GROUPED = [p for p in ALL if _groups(p.values[0])]


@pytest.mark.parametrize("config", GROUPED)
def test_group_sums(config: Config) -> None:
    runs = simulate(config)
    _check_unbiased(runs.group_estimates, runs.group_truth, f"{config.id} group")
    _check_variance(runs.group_estimates, (runs.group_std_errors**2).mean(axis=0),
                    f"{config.id} group (plug-in)")
    if isinstance(runs.mech, PureProtocol):
        members = len(_groups(config)["g"])
        sigma2 = np.array([runs.mech.set_variance(runs.group_truth[0], members, N)])
        _check_variance(runs.group_estimates, sigma2, f"{config.id} group (formula)")
    if type(runs.mech).__name__ == "GRR":
        # One value per report: members covary, so the sum's variance is not the sum of theirs.
        assert not math.isclose(sigma2[0], float(formula_variance(runs.mech, runs.truth)[
            list(_groups(config)["g"])].sum()), rel_tol=1e-3)
    assert np.all(runs.group_std_errors**2 <= runs.group_bounds * (1 + 1e-9))
    _check_coverage(runs.group_covered, f"{config.id} group")


# --- means (integer values, ordinal scores) ------------------------------------------------


@pytest.mark.parametrize("config", ALL)
def test_mean_estimates(config: Config) -> None:
    runs = simulate(config)
    if runs.mean_truth is None:
        pytest.skip(f"{config.name} estimates no mean")
    means = runs.means[:, None]
    _check_unbiased(means, np.array([runs.mean_truth]), f"{config.id} mean")
    _check_variance(means, np.array([(runs.mean_std_errors**2).mean()]), f"{config.id} mean")
    _check_coverage(runs.mean_covered[:, None], f"{config.id} mean")


MEAN = [p for p in ALL if kind_of(MECHANISMS[p.values[0].name]) == "integer"]


@pytest.mark.parametrize("config", MEAN)
def test_geometric_mean(config: Config) -> None:
    runs = simulate(config)
    assert runs.mean_truth is not None
    _check_unbiased(runs.means[:, None], np.array([runs.mean_truth]), f"{config.id} mean")
    mech = runs.mech
    assert isinstance(mech, Geometric)
    sigma2 = mech.noise_variance(mech.k, mech.epsilon) / N
    _check_variance(runs.means[:, None], np.array([sigma2]), f"{config.id} mean")
    assert np.allclose(runs.mean_std_errors**2, sigma2)
    _check_coverage(runs.mean_covered[:, None], f"{config.id} mean")


# --- the secure path matches the channel -------------------------------------------------------


SECURE_REPORTS = 6000


def _secure_config(name: str) -> tuple[Mechanism, int]:
    cls = MECHANISMS[name]
    kind = kind_of(cls)
    mech = build(cls, 2 if kind == "binary" else 5, 1.0)
    return mech, 1


@pytest.mark.parametrize("name", MECHANISM_NAMES)
def test_secure_perturb_matches_the_channel(name: str) -> None:
    """SECURE_REPORTS reports from the OS CSPRNG against the exact channel.

    Not seeded (it is the CSPRNG): each check has false-alarm rate ALPHA.
    """
    mech, index = _secure_config(name)
    answer = mech.labels[index]
    reports = [mech.validate_report(mech.perturb(answer)) for _ in range(SECURE_REPORTS)]
    _check_against_channel(mech, index, reports)


@pytest.mark.parametrize("name", MECHANISM_NAMES)
def test_injected_source_is_deterministic_and_matches_the_channel(name: str) -> None:
    from support.sources import SeededSource

    mech, index = _secure_config(name)
    answer = mech.labels[index]
    first = [mech.perturb(answer, SeededSource(11)) for _ in range(5)]
    source_a, source_b = SeededSource(42), SeededSource(42)
    a = [mech.perturb(answer, source_a) for _ in range(SECURE_REPORTS)]
    b = [mech.perturb(answer, source_b) for _ in range(SECURE_REPORTS)]
    assert a == b, "the same injected source must give the same reports"
    assert source_a.calls > 0, "perturb must draw from the injected source"
    assert len({repr(r) for r in first}) == 1  # a fresh source with one seed: one report
    _check_against_channel(mech, index, [mech.validate_report(r) for r in a])


def _check_against_channel(mech: Mechanism, index: int, reports: list[Any]) -> None:
    n = len(reports)
    if isinstance(mech, Geometric):
        noise = np.array(reports) - mech.labels[index]
        assert _geometric_pvalue(noise, float(mech.rate)) > ALPHA
        return
    if hasattr(mech, "channel") and all(isinstance(r, int | bool) for r in reports):
        row = [float(p) for p in mech.channel()[index]]
        observed = np.bincount(np.array(reports, dtype=int), minlength=len(row))
        assert stats.chisquare(observed, np.array(row) * n).pvalue > ALPHA
        return
    if isinstance(mech, PureProtocol):
        # Marginally, "report supports v" is Bernoulli(p*) for v = the answer, else q*.
        agg = mech.new_aggregate()
        for r in reports:
            agg.add(r)
        support = mech.support_counts(agg).astype(float)
        p = np.full(mech.k, float(mech.q_star))
        p[index] = float(mech.p_star)
        assert np.all(np.abs(support - n * p) <= Z * np.sqrt(n * p * (1 - p)))
        return
    pytest.fail(f"{mech.name}: no way to check its secure path against its channel "
                "(add a channel() or make it a PureProtocol)")


def _geometric_pvalue(noise: np.ndarray, rate: float) -> float:
    n = noise.size
    norm = math.tanh(rate / 2)
    m = 0
    while n * norm * math.exp(-rate * (m + 1)) >= 5:
        m += 1
    zs = np.arange(-m, m + 1)
    expected = n * norm * np.exp(-rate * np.abs(zs))
    tail = (n - expected.sum()) / 2
    observed = [int(np.sum(noise < -m))] + [int(np.sum(noise == z)) for z in zs] \
        + [int(np.sum(noise > m))]
    return float(stats.chisquare(observed, [tail, *expected, tail]).pvalue)


def test_grr_scripted_draws_follow_the_definition() -> None:
    from fractions import Fraction

    from ldpsurvey.shared.mechanisms.binary_rr import BinaryRR
    from ldpsurvey.shared.mechanisms.grr import GRR
    from support.sources import ScriptedSource

    mech = GRR(1.0, ("a", "b", "c", "d"))
    p: Fraction = mech.p_star
    # Draw below p's numerator: keep the truth. At or above: the j-th of the other values.
    assert mech.perturb("c", ScriptedSource([p.numerator - 1])) == 2
    assert mech.perturb("c", ScriptedSource([p.numerator, 0])) == 0
    assert mech.perturb("c", ScriptedSource([p.numerator, 2])) == 3
    binary = BinaryRR(1.0)
    assert binary.perturb(True, ScriptedSource([0])) is True
    assert binary.perturb(True, ScriptedSource([binary.p_star.numerator, 0])) is False
    assert SECURE.randbelow(1) == 0
