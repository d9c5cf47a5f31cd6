"""Large-domain mechanisms (OUE, SUE, OLH, HR, subset selection): exact privacy, exact samplers,
estimators against their formulas, report validation, aggregates, and `auto`'s choice.

Statistical checks state their false-alarm rate ALPHA (per check) and derive tolerances from the
variance formulas:
- a frequency from n independent Bernoulli(p) draws is within Z·sqrt(p(1-p)/n) of p;
- over R runs the mean estimate has standard error S/sqrt(R) (S the empirical std): a t-test;
- (R-1)·S²/σ² ~ χ²(R-1) for near-normal estimates (sums of 2000 bounded terms), so S²/σ² lies in
  [χ²_{α/2}, χ²_{1-α/2}]/(R-1) with probability 1 - ALPHA.
Exact-sampler checks enumerate every random tape and compare distributions in Fractions.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable
from fractions import Fraction
from itertools import combinations
from typing import Any

import numpy as np
import pytest
from ldpsurvey.shared.aggregates import SupportAggregate
from ldpsurvey.shared.errors import AggregateError, PrivacyCheckError, ReportError, SurveyError
from ldpsurvey.shared.exact import exp_lower
from ldpsurvey.shared.mechanisms import MECHANISMS, candidates, choose_mechanism
from ldpsurvey.shared.mechanisms.hr import HR, fwht
from ldpsurvey.shared.mechanisms.olh import OLH, PRIME, SEEDS, bucket_moments, hash_values
from ldpsurvey.shared.mechanisms.ss import SubsetSelection
from ldpsurvey.shared.mechanisms.unary import OUE, SUE
from ldpsurvey.shared.survey import Survey
from scipy import stats
from support.sources import SeededSource

ALPHA = 1e-6
Z = float(stats.norm.isf(ALPHA / 2))
LARGE = ("oue", "sue", "olh", "hr", "ss")
LN3 = math.log(3)


def labels(k: int) -> tuple[str, ...]:
    return tuple(f"v{i}" for i in range(k))


def build(name: str, k: int, epsilon: float, **kwargs: Any) -> Any:
    return MECHANISMS[name](epsilon, labels(k), **kwargs)


# --- exact enumeration of a sampler's random tape ------------------------------------------------


class _Tape:
    """Replays a prefix of draws, then draws 0; records every n asked for."""

    def __init__(self, prefix: list[int]) -> None:
        self.prefix = prefix
        self.draws: list[int] = []
        self.sizes: list[int] = []

    def randbelow(self, n: int) -> int:
        i = len(self.draws)
        value = self.prefix[i] if i < len(self.prefix) else 0
        self.draws.append(value)
        self.sizes.append(n)
        return value


def exact_distribution(sample: Callable[[Any], Any], max_tapes: int = 200_000) -> dict:
    """The exact output distribution of `sample(source)` over all random tapes (DFS)."""
    result: Counter = Counter()
    stack: list[list[int]] = [[]]
    tapes = 0
    while stack:
        prefix = stack.pop()
        tape = _Tape(prefix)
        out = sample(tape)
        result[json.dumps(out)] += Fraction(1, math.prod(tape.sizes))
        tapes += 1
        assert tapes <= max_tapes, "too many random tapes to enumerate"
        for i in range(len(prefix), len(tape.sizes)):
            stack.extend([*tape.draws[:i], v] for v in range(1, tape.sizes[i]))
    assert sum(result.values()) == 1
    return dict(result)


def bits_of(mech: Any, report: list[int]) -> tuple[int, ...]:
    return tuple(int(b) for b in mech._bits(np.array([report], dtype=np.int64))[0])


# --- exact privacy ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", LARGE)
@pytest.mark.parametrize("k", [2, 3, 16, 100, 1024])
@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, LN3, 4.0, 10.0])
def test_privacy_is_proven_and_tight(name: str, k: int, epsilon: float) -> None:
    mech = build(name, k, epsilon)
    loss = mech.privacy_loss()
    assert loss is not None and loss.ratio is not None
    assert loss.ratio <= exp_lower(Fraction(epsilon))
    realized = mech.realized_epsilon()
    assert epsilon * (1 - 1e-6) <= realized <= epsilon
    assert not loss.within(realized * (1 - 1e-9))  # the check decides at the boundary


def test_closed_forms_at_ln3() -> None:
    """ε = ln 3 makes r = 3: the textbook parameters, exactly."""
    oue = OUE(LN3, labels(4))
    assert (oue.p_star, oue.q_star) == (Fraction(1, 2), Fraction(1, 4))
    assert oue.privacy_loss().ratio == 3  # p(1-q)/(q(1-p))
    sue = SUE(2 * LN3, labels(4))  # ε/2 = ln 3 exactly
    assert (sue.p_star, sue.q_star) == (Fraction(3, 4), Fraction(1, 4))
    assert sue.privacy_loss().ratio == 9
    hr = HR(LN3, labels(5))
    assert (hr.p_star, hr.q_star, hr.size) == (Fraction(3, 4), Fraction(1, 2), 8)
    olh = OLH(LN3, labels(50))
    assert olh.g == 4 and olh.p_bucket == Fraction(3, 6)
    assert olh.privacy_loss().ratio == 3
    ss = SubsetSelection(LN3, labels(6))
    assert ss.subset_size == 2 and ss.p_star == Fraction(6, 10)
    assert ss.privacy_loss().ratio == 3


class _LeakyOUE(OUE):
    name = "leaky_oue"

    @classmethod
    def _probabilities(cls, epsilon: float) -> tuple[Fraction, Fraction]:
        p, q = OUE._probabilities(epsilon)
        return p, q * (1 - Fraction(1, 10**6))  # other bits a hair too rarely set


class _TruthfulOUE(OUE):
    name = "truthful_oue"

    @classmethod
    def _probabilities(cls, epsilon: float) -> tuple[Fraction, Fraction]:
        return Fraction(1, 2), Fraction(0)


def test_refuted_unary_claims_are_refused() -> None:
    with pytest.raises(PrivacyCheckError, match="exceeds"):
        _LeakyOUE(1.0, labels(8))
    with pytest.raises(PrivacyCheckError, match="unbounded"):
        _TruthfulOUE(1.0, labels(8))


def test_hr_explicit_channel_is_the_closed_form() -> None:
    for k in (2, 5, 7, 31):
        mech = HR(1.0, labels(k))
        channel = mech.channel()
        assert all(sum(row) == 1 for row in channel)
        # Each column: 2p/K for values whose half holds it, 2(1-p)/K for the others.
        assert {p for row in channel for p in row} == {2 * mech.p_star / mech.size,
                                                       2 * (1 - mech.p_star) / mech.size}


# --- exact samplers: every random tape ---------------------------------------------------------


@pytest.mark.parametrize("cls, epsilon", [(OUE, LN3), (SUE, 2 * LN3)])
def test_unary_sampler_is_the_product_channel_exactly(cls: type, epsilon: float) -> None:
    """The bug class: the true bit is kept w.p. exactly p *whatever the other bits are*, i.e.
    the output law is exactly the product of independent Bernoullis."""
    mech = cls(epsilon, labels(3))
    p, q = mech.p_star, mech.q_star
    for x in range(3):
        dist = exact_distribution(lambda s, x=x: mech.perturb_index(x, s))
        assert len(dist) == 8
        for report, prob in dist.items():
            bits = bits_of(mech, json.loads(report))
            expected = math.prod((p if v == x else q) if b else (1 - (p if v == x else q))
                                 for v, b in enumerate(bits))
            assert prob == expected


def test_hr_sampler_is_its_channel_exactly() -> None:
    mech = HR(LN3, labels(5))  # p = 3/4, K = 8: 4·8 tapes per answer
    channel = mech.channel()
    for x in range(5):
        dist = exact_distribution(lambda s, x=x: mech.perturb_index(x, s))
        assert {int(j): prob for j, prob in dist.items()} == {
            j: p for j, p in enumerate(channel[x]) if p}


def test_subset_selection_sampler_is_its_channel_exactly() -> None:
    mech = SubsetSelection(LN3, labels(6))  # d = 2, p* = 3/5
    k, d, r = 6, 2, 3
    total = math.comb(k - 1, d - 1) * r + math.comb(k - 1, d)
    for x in range(k):
        dist = exact_distribution(lambda s, x=x: mech.perturb_index(x, s))
        assert len(dist) == math.comb(k, d)
        for members in combinations(range(k), d):
            report = json.dumps(mech._encode(members))
            assert dist[report] == Fraction(r if x in members else 1, total)


def test_olh_sampler_given_the_seed_is_grr_on_the_bucket() -> None:
    """The seed is the first draw (uniform over P^3); given it, the bucket is exact GRR."""
    mech = OLH(LN3, labels(20))  # g = 4, p' = 1/2, q' = 1/6
    for seed in (0, 1, SEEDS - 1, 123456789012):
        for x in (0, 7, 19):
            h = int(hash_values(np.array([seed]), np.array([x]), mech.g)[0, 0])

            def sample(source: Any, seed: int = seed, x: int = x) -> Any:
                class Fixed:
                    def randbelow(self, n: int) -> int:
                        return seed if n == SEEDS else source.randbelow(n)
                return mech.perturb_index(x, Fixed())

            dist = exact_distribution(sample)
            expected = {json.dumps([seed, b]): (mech.p_bucket if b == h else mech.q_bucket)
                        for b in range(mech.g)}
            assert dist == expected


# --- the hash family ----------------------------------------------------------------------------


def test_bucket_moments_count_residues() -> None:
    for g in (2, 3, 4, 8, 55):
        sizes = np.bincount(np.arange(PRIME) % g, minlength=g)
        c2, c3 = bucket_moments(g)
        assert c2 == Fraction(int((sizes**2).sum()), PRIME**2)
        assert c3 == Fraction(int((sizes**3).sum()), PRIME**3)
        assert abs(c2 - Fraction(1, g)) < Fraction(g, PRIME**2) + Fraction(1, PRIME)


def test_olh_hash_is_three_wise_independent_on_progressions() -> None:
    """A linear hash would fail this: x, x+d, x+2d collide together far more often than
    Σπ³ ≈ 1/g² (the arithmetic is inherited mod P). Binomial tolerance at ALPHA."""
    rng = np.random.default_rng(5)
    n, g = 400_000, 4
    seeds = rng.integers(0, SEEDS, size=n, dtype=np.int64)
    h = hash_values(seeds, np.array([3, 10, 17]), g)
    c2, c3 = (float(c) for c in bucket_moments(g))
    for observed, p in (((h[:, 0] == h[:, 1]).mean(), c2), ((h[:, 0] == h[:, 2]).mean(), c2),
                        (((h[:, 0] == h[:, 1]) & (h[:, 1] == h[:, 2])).mean(), c3)):
        assert abs(observed - p) <= Z * math.sqrt(p * (1 - p) / n)


def test_olh_vectorized_paths_agree() -> None:
    mech = OLH(1.0, labels(37))
    rng = np.random.default_rng(2)
    answers = rng.integers(0, 37, size=3000)
    reports = mech.perturb_many(answers, rng)
    # Edge seeds too: all-zero and all-(P-1) coefficients (X mod P hits 0 and P - 1).
    reports[:4, 0] = [0, SEEDS - 1, PRIME - 1, PRIME**2]
    one_by_one = mech.new_aggregate()
    for seed, bucket in reports.tolist():
        one_by_one.add(mech.validate_report([seed, bucket]))
    assert one_by_one == mech.aggregate_many(reports)
    # The bucket is the true value's hash exactly when the GRR step kept it (w.p. p').
    kept = (hash_values(reports[4:, 0], np.arange(37), mech.g)[np.arange(2996), answers[4:]]
            == reports[4:, 1]).mean()
    p = float(mech.p_bucket)  # GRR moves the bucket to a *different* one, never back to h
    assert abs(kept - p) <= Z * math.sqrt(p * (1 - p) / 2996)


# --- vectorized samplers against the channel ----------------------------------------------------


@pytest.mark.parametrize("cls", [OUE, SUE])
def test_vectorized_true_bit_is_independent_of_the_others(cls: type) -> None:
    mech = cls(1.0, labels(6))
    rng = np.random.default_rng(9)
    n = 200_000
    answers = np.full(n, 2)
    bits = mech._bits(mech.perturb_many(answers, rng))
    true_bit = bits[:, 2]
    others = bits.sum(axis=1) - true_bit
    p = float(mech.p_star)
    assert abs(true_bit.mean() - p) <= Z * math.sqrt(p * (1 - p) / n)
    q = float(mech.q_star)
    other_rate = (bits.sum() - true_bit.sum()) / (5 * n)
    assert abs(other_rate - q) <= Z * math.sqrt(q * (1 - q) / (5 * n))
    table = np.array([[np.sum((true_bit == b) & (others == m)) for m in range(6)]
                      for b in (0, 1)])
    table = table[:, table.sum(axis=0) > 0]
    assert stats.chi2_contingency(table).pvalue > ALPHA


@pytest.mark.parametrize("name", ["hr", "ss"])
def test_vectorized_sampler_matches_the_channel(name: str) -> None:
    mech = build(name, 6, 1.0)
    rng = np.random.default_rng(4)
    n = 120_000
    reports = mech.perturb_many(np.full(n, 4), rng)
    if name == "hr":
        observed = np.bincount(reports, minlength=mech.size)
        expected = np.array([float(p) for p in mech.channel()[4]]) * n
        assert stats.chisquare(observed, expected).pvalue > ALPHA
    else:  # every subset of size d, with probability r/D or 1/D
        d = mech.subset_size
        keys = Counter(tuple(np.flatnonzero(row)) for row in mech._bits(reports))
        subsets = list(combinations(range(6), d))
        assert set(keys) <= set(subsets)
        observed = np.array([keys[s] for s in subsets])
        r = float(mech.p_star) / d / (float(1 - mech.p_star) / (6 - d))  # r from p*
        weights = np.array([r if 4 in s else 1.0 for s in subsets])
        assert stats.chisquare(observed, weights / weights.sum() * n).pvalue > ALPHA


# --- estimators: unbiased, variance as the formula says ----------------------------------------

N = 2000
RUNS = 300


def _population(k: int) -> np.ndarray:
    weights = 1.0 / np.arange(1, k + 1)
    counts = np.floor(N * weights / weights.sum()).astype(int)
    counts[0] += N - counts.sum()
    return np.repeat(np.arange(k), counts)


def _band(runs: int) -> tuple[float, float]:
    df = runs - 1
    return float(stats.chi2.ppf(ALPHA / 2, df) / df), float(stats.chi2.isf(ALPHA / 2, df) / df)


@pytest.mark.parametrize("name", LARGE)
@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_estimates_unbiased_with_the_formula_variance(name: str, epsilon: float) -> None:
    k = 12
    group = (2, 5, 6)
    mech = build(name, k, epsilon, groups={"g": group})
    answers = _population(k)
    truth = np.bincount(answers, minlength=k) / N
    rng = np.random.default_rng([ord(c) for c in name] + [int(epsilon * 10)])
    est, grp = [], []
    for _ in range(RUNS):
        e = mech.estimate(mech.aggregate_many(mech.perturb_many(answers, rng)))
        est.append([c.estimate for c in e.categories])
        grp.append(e.groups[0].estimate)
    est, grp = np.array(est), np.array(grp)
    se = est.std(axis=0, ddof=1) / math.sqrt(RUNS)
    assert np.all(np.abs(est.mean(axis=0) - truth) <= Z * se)
    lo, hi = _band(RUNS)
    ratio = est.var(axis=0, ddof=1) / mech.set_variance(truth, 1, N)
    assert np.all((lo <= ratio) & (ratio <= hi)), ratio
    g_truth = truth[list(group)].sum()
    assert abs(grp.mean() - g_truth) <= Z * grp.std(ddof=1) / math.sqrt(RUNS)
    if name == "hr":  # exact, structure-aware (see hr.py)
        g_var = float(mech._group_variances(list(group), N) @ truth)
    else:
        g_var = float(mech.set_variance(g_truth, len(group), N))
    assert lo <= grp.var(ddof=1) / g_var <= hi


def test_subset_selection_group_covariance_is_negative() -> None:
    """Sizes are fixed, so supports covary negatively: the group variance is below the sum of
    its members' variances (an independent-bits formula would be wrong here)."""
    mech = SubsetSelection(1.0, labels(12))
    p, q = float(mech.p_star), float(mech.q_star)
    v_in, v_out = mech.set_support_variances(p, q, 12, 4)
    assert v_out < 4 * q * (1 - q)
    assert v_in < p * (1 - p) + 3 * q * (1 - q)


def test_hr_group_variance_follows_the_xor_structure() -> None:
    """G = {0, 1, 2} owns rows 1, 2, 3 with 1^2 = 3, 1^3 = 2, 2^3 = 1: every answer in G makes
    a pair of the others correlate. The exact variance is 1/4·(3 - β² + 2β) per report, the
    structure-free one (3 - β²)/4 (33% lower at ε = 1): the simulation must side with the
    first. R = 2000 runs make the χ² band [0.86, 1.17]."""
    mech = HR(1.0, labels(3), groups={"g": (0, 1, 2)})
    answers = np.repeat(np.arange(3), N // 3 + 1)[:N]
    truth = np.bincount(answers, minlength=3) / N
    rng = np.random.default_rng(77)
    runs = 2000
    sums = np.array([mech.support_counts(mech.aggregate_many(mech.perturb_many(answers, rng)))
                     .sum() for _ in range(runs)], dtype=float)
    p = float(mech.p_star)
    beta = 2 * p - 1
    # _group_variances is per estimate: times n (p* - q*)^2 gives Var of the count per report.
    exact = float(mech._group_variances([0, 1, 2], N) @ truth) * N**2 * (p - 0.5) ** 2
    assert exact == pytest.approx((3 - beta**2 + 2 * beta) / 4 * N, rel=1e-12)
    lo, hi = _band(runs)
    ratio = sums.var(ddof=1) / exact
    assert lo <= ratio <= hi
    naive = (3 - beta**2) / 4 * N
    assert not lo <= sums.var(ddof=1) / naive <= hi


def test_hr_support_counts_are_the_brute_force_counts() -> None:
    mech = HR(1.0, labels(11))
    rng = np.random.default_rng(3)
    reports = mech.perturb_many(rng.integers(0, 11, 5000), rng)
    counts = mech.support_counts(mech.aggregate_many(reports))
    rows = np.arange(1, 12)[:, None]
    in_half = (np.bitwise_count(rows & reports[None, :]) % 2) == 0
    assert np.array_equal(counts, in_half.sum(axis=1))
    h = np.array([[(-1) ** bin(r & j).count("1") for j in range(16)] for r in range(16)])
    v = rng.integers(-50, 50, 16)
    assert np.array_equal(fwht(v), h @ v)


# --- reports --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["oue", "sue", "ss"])
def test_bitmap_report_validation(name: str) -> None:
    mech = build(name, 40, 1.0)  # two words, 8 bits of padding in the second
    good = mech.perturb("v3")
    assert isinstance(good, list) and len(good) == 2
    assert mech.validate_report(json.loads(json.dumps(good))) == good
    assert mech.validate_report(tuple(good)) == good
    bad = [good[:1], [*good, 0], "".join(map(str, good)), [True, good[1]], [good[0], -1],
           [good[0], 2**32], [float(good[0]), good[1]], [good[0], good[1] | (1 << 8)], None,
           {"0": good}]
    for report in bad:
        with pytest.raises(ReportError):
            mech.validate_report(report)
    if name == "ss":  # exactly d bits
        with pytest.raises(ReportError, match="exactly"):
            mech.validate_report(mech._encode(range(mech.subset_size + 1)))


def test_olh_and_hr_report_validation() -> None:
    olh = OLH(1.0, labels(30))
    assert olh.validate_report([SEEDS - 1, olh.g - 1]) == (SEEDS - 1, olh.g - 1)
    for report in ([SEEDS, 0], [0, olh.g], [-1, 0], [True, 0], [0, False], [1.0, 0], [0],
                   [0, 0, 0], "[0,0]", None, {"seed": 0, "bucket": 0}):
        with pytest.raises(ReportError):
            olh.validate_report(report)
    hr = HR(1.0, labels(30))
    assert hr.validate_report(31) == 31
    for report in (32, -1, True, 1.0, "3", [3]):
        with pytest.raises(ReportError):
            hr.validate_report(report)


@pytest.mark.parametrize("name", LARGE)
def test_report_bytes_bound_real_reports(name: str) -> None:
    for k in (5, 64, 1024):
        mech = build(name, k, 1.0)
        source = SeededSource(k)
        sizes = [len(json.dumps(mech.perturb(mech.labels[i % k], source),
                                separators=(",", ":"))) for i in range(40)]
        assert max(sizes) <= type(mech).report_bytes(k, 1.0)


# --- aggregates ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", LARGE)
def test_aggregate_round_trip_merge_and_incremental(name: str) -> None:
    mech = build(name, 21, 1.0)
    rng = np.random.default_rng(8)
    reports = mech.perturb_many(rng.integers(0, 21, 400), rng)
    whole = mech.aggregate_many(reports)
    first, second = mech.aggregate_many(reports[:150]), mech.aggregate_many(reports[150:])
    first.merge(second)
    assert first == whole
    incremental = mech.new_aggregate()
    for row in reports.tolist():
        incremental.add(mech.validate_report(row))
    assert incremental == whole
    restored = mech.aggregate_from_dict(json.loads(json.dumps(whole.to_dict())))
    assert restored == whole
    restored.add(mech.validate_report(reports.tolist()[0]))  # still reads reports
    assert restored.n == whole.n + 1
    assert mech.estimate(whole).to_dict() == mech.estimate(
        mech.aggregate_from_dict(whole.to_dict())).to_dict()


def test_support_aggregate_rejects_bad_data() -> None:
    mech = OUE(1.0, labels(4))
    good = mech.aggregate_many(mech.perturb_many(np.arange(4), np.random.default_rng(0)))
    data = good.to_dict()
    for broken in ({**data, "counts": [*data["counts"], 0]}, {**data, "kind": "counts"},
                   {**data, "n": 0, "counts": [1, 0, 0, 0]}, {**data, "counts": [-1, 0, 0, 0]},
                   {**data, "n": True}):
        with pytest.raises(AggregateError):
            mech.aggregate_from_dict(broken)
    with pytest.raises(AggregateError):
        good.merge(SupportAggregate(5))


# --- auto --------------------------------------------------------------------------------------


def _question(qtype: str, k: int, epsilon: float) -> Any:
    from types import SimpleNamespace

    return SimpleNamespace(id="q", type=qtype, k=k, epsilon=epsilon)


@pytest.mark.parametrize("k, epsilon, expected", [
    (3, 1.0, "grr"), (5, 4.0, "grr"), (16, 4.0, "grr"), (128, 1.0, "ss"), (1024, 0.5, "ss"),
])
def test_auto_follows_the_variance_comparison(k: int, epsilon: float, expected: str) -> None:
    name, reason = choose_mechanism(_question("categorical", k, epsilon))
    ranked = candidates("categorical", k, epsilon)
    assert name == ranked[0][1] == expected
    best = MECHANISMS[name].average_variance(k, epsilon)
    for cls in MECHANISMS.values():
        if "categorical" in cls.question_types and cls.report_bytes(k, epsilon) <= 1024:
            assert best <= cls.average_variance(k, epsilon)
    assert name in reason and f"k={k}" in reason


def test_size_limit_excludes_bitmaps() -> None:
    name, _ = choose_mechanism(_question("categorical", 1024, 1.0), 100)
    assert name in ("olh", "hr")
    assert MECHANISMS[name].report_bytes(1024, 1.0) <= 100
    assert all(MECHANISMS[n].report_bytes(1024, 1.0) <= 100
               for _, n in candidates("categorical", 1024, 1.0, 100))


def _survey(limit: Any = None) -> dict:
    d: dict[str, Any] = {"id": "s", "title": "t", "version": 1, "questions": [
        {"id": "job", "text": "Job title", "type": "categorical", "epsilon": 1.0,
         "options": [f"job-{i}" for i in range(1024)]}]}
    if limit is not None:
        d["report_size_limit"] = limit
    return d


def test_survey_report_size_limit_setting() -> None:
    default = Survey.from_dict(_survey())
    assert "report_size_limit" not in default.to_dict()
    assert default.questions[0].mechanism == candidates("categorical", 1024, 1.0)[0][1]
    small = Survey.from_dict(_survey(64))
    assert small.report_size_limit == 64 and small.to_dict()["report_size_limit"] == 64
    q = small.questions[0]
    assert MECHANISMS[q.mechanism].report_bytes(1024, 1.0) <= 64
    assert "under 64 bytes" in q.mechanism_choice
    assert Survey.from_dict(small.to_dict()).sha256 == small.sha256
    for bad in (True, "1024", 1.5, 0, 10**9):
        with pytest.raises(SurveyError, match="report_size_limit"):
            Survey.from_dict(_survey(bad))
