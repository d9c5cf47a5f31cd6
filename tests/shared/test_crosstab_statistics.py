"""Joint and conditional estimates against their formulas, for every mechanism pair.

Per-report identities are checked exactly (no randomness): each encoder's estimator is unbiased
for its cell indicators (B·E[φ̃|x] = membership) and X² = D·φ̃ holds report by report. The
simulations use seeded numpy generators and a fixed population, re-randomized R times, and
state their false-alarm rates (derivations as in test_mechanisms_statistics.py):
- mean error: |mean - truth| <= Z·σ/√R with σ² the exact fixed-population variance and Z
  Bonferroni-corrected over the cells (rate ALPHA per pair);
- variance: (R-1)·S²/σ² ~ χ²(R-1) (Bonferroni over cells, rate ALPHA per pair);
- stated SE: the sample-variance SE estimates E[P²] - f², which exceeds the fixed-population
  variance by exactly (f - f²)/n; its mean over R runs is compared with that within 10%
  (its own relative sampling error at n = 3000 is a few percent of one run, /√R over runs);
- coverage: the fraction of runs whose interval covers the truth, averaged over cells: each
  run's average of miss indicators has variance <= c(1-c), so the average over R runs lies
  within Z_cov·sqrt(c(1-c)/R) of c (rate < ALPHA) plus COVERAGE_SLACK for the normal
  approximation (ratios: the delta method too).
"""

from __future__ import annotations

import contextlib
import itertools
import math
from functools import cache
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ldpsurvey.shared.crosstab import (
    JointAggregate,
    estimate_crosstab,
    gram,
    joint_truth,
    joint_variance,
    joint_variance_bound,
)
from ldpsurvey.shared.errors import AggregateError
from ldpsurvey.shared.joint_features import Encoder, encoder_for, with_scores
from ldpsurvey.shared.mechanisms import MECHANISMS, Mechanism
from ldpsurvey.shared.mechanisms.geometric import Geometric
from ldpsurvey.shared.mechanisms.grr import GRR
from ldpsurvey.shared.mechanisms.longitudinal import Longitudinal
from scipy import stats

ALPHA = 1e-5
Z_COV = float(stats.norm.isf(ALPHA / 2))
CONFIDENCE = 0.95
COVERAGE_SLACK = 0.02
N = 3000
RUNS = 120

PAIR_NAMES = [*sorted(MECHANISMS), "two_layer"]


def make(name: str, qid: str) -> Mechanism:
    """A small mechanism of each kind (integer questions: 0..11 binned in 3)."""
    if name == "binary_rr":
        return MECHANISMS[name](1.5, question_id=qid)
    if name == "geometric":
        return Geometric(4.0, range(0, 12), question_id=qid)
    if name == "two_layer":
        return Longitudinal(GRR(2.0, ("a", "b", "c"), question_id=qid), 3.0)
    labels = ("a", "b", "c") if name != "ordinal_exp" else ("lo", "mid", "hi")
    return MECHANISMS[name](1.5, labels, question_id=qid)


@cache
def encoder(name: str, qid: str) -> tuple[Mechanism, Encoder]:
    mechanism = make(name, qid)
    bins = (4, 8) if name == "geometric" else None
    return mechanism, encoder_for(mechanism, bins)


def population(k1: int, k2: int, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Dependent true pairs: w follows x most of the time."""
    rng = np.random.default_rng(seed)
    x = rng.choice(k1, size=n, p=np.linspace(1, 2, k1) / np.linspace(1, 2, k1).sum())
    w = np.where(rng.random(n) < 0.6, x % k2, rng.integers(0, k2, n))
    return x, w


def answer_table(e1: Encoder, e2: Encoder, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    table = np.zeros((e1.expected.shape[1], e2.expected.shape[1]))
    np.add.at(table, (x, w), 1.0 / x.size)
    return table


# --- exact per-report identities -----------------------------------------------------------


@pytest.mark.parametrize("name", PAIR_NAMES)
def test_estimator_is_unbiased_per_report(name: str) -> None:
    _, enc = encoder(name, "q")
    np.testing.assert_allclose(enc.estimator @ enc.expected, enc.membership, atol=1e-8)
    if enc.mean is not None:
        assert enc.answers is not None
        np.testing.assert_allclose(enc.mean @ enc.expected, enc.answers, atol=1e-8)


@pytest.mark.parametrize("name", ["grr", "ordinal_exp", "hr", "two_layer"])
def test_mean_score_is_unbiased_and_its_square_linear(name: str) -> None:
    """Index-report encoders of ordinal questions carry the mean score (1..k): unbiased for
    every answer, and Y² = s·φ̃ holds report by report."""
    mechanism, enc = encoder(name, "q")
    scored = with_scores(enc)
    assert scored.mean is not None and scored.mean_square is not None
    np.testing.assert_allclose(scored.mean @ scored.expected, np.arange(1, mechanism.k + 1),
                               atol=1e-8)
    rng = np.random.default_rng(2)
    features = scored.featurize(mechanism.perturb_many(rng.integers(0, mechanism.k, 500), rng))
    np.testing.assert_allclose((features @ scored.mean) ** 2, features @ scored.mean_square,
                               rtol=1e-9, atol=1e-9)
    assert with_scores(encoder("oue", "q")[1]).mean is None  # support sets: not linear


@pytest.mark.parametrize("name", PAIR_NAMES)
def test_square_map_and_expected_features(name: str) -> None:
    """X² = D·φ̃ for every report, and E[φ̃ | x] matches simulated reports (Z·SE/√n)."""
    mechanism, enc = encoder(name, "q")
    rng = np.random.default_rng(7)
    n = 40_000
    for x in range(mechanism.k):
        features = enc.featurize(mechanism.perturb_many(np.full(n, x), rng)).astype(float)
        np.testing.assert_allclose((features @ enc.estimator.T) ** 2, features @ enc.square.T,
                                   rtol=1e-9, atol=1e-9)
        column = enc.expected[:, x]
        spread = features.std(axis=0) / math.sqrt(n)
        assert np.all(np.abs(features.mean(axis=0) - column) <= Z_COV * spread + 1e-9), name


# --- simulations -------------------------------------------------------------------------


def simulate(row: str, col: str, runs: int, seed: int) -> dict[str, Any]:
    m1, e1 = encoder(row, "r")
    m2, e2 = encoder(col, "c")
    x, w = population(m1.k, m2.k, N, seed)
    truth = joint_truth(e1, e2, x, w)
    rng = np.random.default_rng(seed + 1)
    keys = ("est", "se", "lo", "hi")
    out: dict[str, list[Any]] = {k: [] for k in keys}
    cond: dict[str, list[Any]] = {k: [] for k in keys}
    for _ in range(runs):
        g = gram(e1, e2, m1.perturb_many(x, rng), m2.perturb_many(w, rng))
        ct = estimate_crosstab(e1, e2, g, CONFIDENCE)
        for name, cells in (("est", "estimate"), ("se", "std_error"), ("lo", "ci_low"),
                            ("hi", "ci_high")):
            out[name].append([[getattr(c, cells) for c in r] for r in ct.joint])
            cond[name].append([[getattr(c, cells) for c in r] for r in ct.col_given_row])
    return {"truth": truth, "var": joint_variance(e1, e2, answer_table(e1, e2, x, w), N),
            **{k: np.array(v, dtype=float) for k, v in out.items()},
            "cond": {k: np.array(v, dtype=float) for k, v in cond.items()},
            "cond_truth": truth / truth.sum(axis=1, keepdims=True)}


def check_pair(row: str, col: str, runs: int = RUNS, seed: int = 11) -> None:
    sim = simulate(row, col, runs, seed)
    truth, var = sim["truth"], sim["var"]
    cells = truth.size
    z_cell = float(stats.norm.isf(ALPHA / (2 * cells)))
    # unbiased
    assert np.all(np.abs(sim["est"].mean(axis=0) - truth) <= z_cell * np.sqrt(var / runs)), \
        (row, col)
    # empirical variance equals the exact one (χ² bounds)
    low = stats.chi2.ppf(ALPHA / (2 * cells), runs - 1) / (runs - 1)
    high = stats.chi2.isf(ALPHA / (2 * cells), runs - 1) / (runs - 1)
    ratio = sim["est"].var(axis=0, ddof=1) / var
    assert np.all((low <= ratio) & (ratio <= high)), (row, col, ratio)
    # stated SE matches the exact variance plus the (f - f²)/n superpopulation term
    stated = (sim["se"] ** 2).mean(axis=0)
    expected = var + (truth - truth**2) / N
    np.testing.assert_allclose(stated, expected, rtol=0.10)
    # the worst-case bound holds at this truth
    _m1, e1 = encoder(row, "r")
    _m2, e2 = encoder(col, "c")
    assert np.all(var <= joint_variance_bound(e1, e2) / N * (1 + 1e-9))
    # coverage of joint cells and of conditional shares
    margin = Z_COV * math.sqrt(CONFIDENCE * (1 - CONFIDENCE) / runs) + COVERAGE_SLACK
    covered = (sim["lo"] <= truth) & (truth <= sim["hi"])
    assert covered.mean() >= CONFIDENCE - margin, (row, col, covered.mean())
    cond, cond_truth = sim["cond"], sim["cond_truth"]
    covered = (cond["lo"] <= cond_truth) & (cond_truth <= cond["hi"])
    assert covered.mean() >= CONFIDENCE - margin, (row, col, covered.mean())


# Every mechanism once as rows and once as columns (a rotation), in the default suite.
ROTATION = [(a, b) for a, b in zip(PAIR_NAMES, PAIR_NAMES[3:] + PAIR_NAMES[:3], strict=True)]


@pytest.mark.parametrize(("row", "col"), ROTATION, ids=[f"{a}-x-{b}" for a, b in ROTATION])
def test_joint_and_conditional_estimates(row: str, col: str) -> None:
    check_pair(row, col)


@pytest.mark.slow
@pytest.mark.parametrize(("row", "col"), list(itertools.product(PAIR_NAMES, PAIR_NAMES)))
def test_every_mechanism_pair(row: str, col: str) -> None:
    check_pair(row, col, seed=23)


def test_conditional_mean_of_an_integer_question_covers() -> None:
    """Mean of a binned integer question among each option of a categorical one: coverage of
    the delta-method interval (false alarm < ALPHA, see the module docstring)."""
    m1, e1 = encoder("oue", "r")
    m2, e2 = encoder("geometric", "c")
    x, _ = population(m1.k, 2, N, 5)
    rng = np.random.default_rng(3)
    ages = np.clip(x * 3 + rng.integers(0, 4, N), 0, 11)
    truth = np.array([ages[x == a].mean() for a in range(m1.k)])
    hits = []
    for _ in range(RUNS):
        g = gram(e1, e2, m1.perturb_many(x, rng), m2.perturb_many(ages, rng))
        means = estimate_crosstab(e1, e2, g, CONFIDENCE).cols_mean_given_row
        assert means is not None
        hits.append([c.ci_low <= t <= c.ci_high for c, t in zip(means, truth, strict=True)])
    margin = Z_COV * math.sqrt(CONFIDENCE * (1 - CONFIDENCE) / RUNS) + COVERAGE_SLACK
    assert np.mean(hits) >= CONFIDENCE - margin


def test_conditional_mean_score_of_an_ordinal_question_covers() -> None:
    """Mean score (1..k) of an ordinal question among each option of another: coverage of the
    delta-method interval (false alarm < ALPHA)."""
    m1, e1 = encoder("ss", "r")
    m2, plain = encoder("ordinal_exp", "c")
    e2 = with_scores(plain)
    x, w = population(m1.k, m2.k, N, 8)
    truth = np.array([(w[x == a] + 1).mean() for a in range(m1.k)])
    rng = np.random.default_rng(6)
    hits = []
    for _ in range(RUNS):
        g = gram(e1, e2, m1.perturb_many(x, rng), m2.perturb_many(w, rng))
        means = estimate_crosstab(e1, e2, g, CONFIDENCE).cols_mean_given_row
        assert means is not None
        hits.append([c.ci_low <= t <= c.ci_high for c, t in zip(means, truth, strict=True)])
    margin = Z_COV * math.sqrt(CONFIDENCE * (1 - CONFIDENCE) / RUNS) + COVERAGE_SLACK
    assert np.mean(hits) >= CONFIDENCE - margin


def test_too_noisy_when_the_condition_is_indistinguishable_from_zero() -> None:
    """Nobody answers option 'c': its row share's interval straddles 0 and every ratio
    conditioned on it says too noisy; well-populated rows do not."""
    m1, e1 = encoder("grr", "r")
    m2, e2 = encoder("oue", "c")
    rng = np.random.default_rng(9)
    x = rng.integers(0, 2, 20_000)
    g = gram(e1, e2, m1.perturb_many(x, rng), m2.perturb_many(x, rng))
    ct = estimate_crosstab(e1, e2, g)
    row_c = ct.row_shares[2]
    if row_c.ci_low <= 0 <= row_c.ci_high:  # the usual case (95%)
        assert all(c.too_noisy for c in ct.col_given_row[2])
    assert not any(c.too_noisy for c in ct.col_given_row[0])


def test_grr_joint_equals_kronecker_of_channel_inverses() -> None:
    """For GRR the estimator is (M₁ ⊗ M₂)·vec(joint report counts)/n."""
    m1, e1 = encoder("grr", "r")
    m2, e2 = encoder("grr", "c")
    rng = np.random.default_rng(1)
    x, w = population(3, 3, 5000, 2)
    r1, r2 = m1.perturb_many(x, rng), m2.perturb_many(w, rng)
    counts = np.zeros((3, 3))
    np.add.at(counts, (r1, r2), 1.0)

    def inverse(m: Mechanism) -> np.ndarray:
        p, q = float(m.p_star), float(m.q_star)  # type: ignore[attr-defined]
        return np.linalg.inv(np.full((3, 3), q) + (p - q) * np.eye(3))

    kron = (np.kron(inverse(m1), inverse(m2)) @ counts.ravel() / 5000).reshape(3, 3)
    got = np.array([[c.estimate for c in r] for r in estimate_crosstab(
        e1, e2, gram(e1, e2, r1, r2)).joint])
    np.testing.assert_allclose(got, kron, atol=1e-9)


@pytest.mark.parametrize("high", [30, 2**20, 2**40])
def test_gram_is_exact_for_integer_moments(high: int) -> None:
    """G equals the Python-integer sum of feature products (indicator x anything), for integer
    ranges whose y² needs float64, int64 sub-blocks or Python integers; moment x moment
    entries are not kept."""
    rng = np.random.default_rng(4)
    m1 = Geometric(1.0, range(0, high + 1), question_id="r")
    m2 = Geometric(1.0, range(-5, 6), question_id="c")
    e1, e2 = encoder_for(m1, (high // 2,)), encoder_for(m2, (0,))
    n = 3000
    r1 = m1.perturb_many(rng.integers(0, m1.k, n), rng)
    r2 = m2.perturb_many(rng.integers(0, m2.k, n), rng)
    g = gram(e1, e2, r1, r2)
    f1 = [[int(v) for v in row] for row in e1.featurize(r1)]
    f2 = [[int(v) for v in row] for row in e2.featurize(r2)]
    for i in range(e1.width):
        for j in range(e2.width):
            if i in e1.moment_columns and j in e2.moment_columns:
                assert g[i, j] == 0
            else:
                assert g[i, j] == sum(a[i] * b[j] for a, b in zip(f1, f2, strict=True)), (i, j)


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=3),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.sampled_from(["kind", "n", "counts"]), inner, max_size=3),
                    max_leaves=20))
@settings(max_examples=300, deadline=None)
def test_a_stored_joint_aggregate_that_does_not_parse_is_an_aggregate_error(data: Any) -> None:
    with contextlib.suppress(AggregateError):
        JointAggregate.from_dict(data)


def test_joint_aggregate_round_trips_and_checks_its_shape() -> None:
    agg = JointAggregate(2, 3)
    agg.add_gram(np.array([[4, 1, 2], [3, 0, 1]], dtype=object))
    assert JointAggregate.from_dict(agg.to_dict(), (2, 3)) == agg
    with pytest.raises(AggregateError):
        JointAggregate.from_dict(agg.to_dict(), (3, 2))
    with pytest.raises(AggregateError):
        JointAggregate.from_dict({**agg.to_dict(), "n": 5})
    with pytest.raises(AggregateError):
        JointAggregate.from_dict({**agg.to_dict(), "kind": "counts"})
