"""The discretized Square Wave mechanism (shared/mechanisms/square_wave.py) and its estimates
(shared/numeric/): exact privacy, exact sampling, the unbiased mean, EMS, quantiles with
bootstrap intervals, and that no existing question type can pick it (issue 41).

Statistical checks have false-alarm rate ALPHA = 1e-6 each (chi-square p-values, normal bands
from exact variances: z = 4.89).
"""

from __future__ import annotations

import json
import math
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from ldpsurvey.shared.errors import (
    AnswerError,
    EstimateError,
    PrivacyCheckError,
    ReportError,
    SurveyError,
)
from ldpsurvey.shared.exact import channel_ratio, rational_exp_floor
from ldpsurvey.shared.mechanisms import (
    DISTRIBUTION_MECHANISMS,
    MECHANISMS,
    candidates,
    mechanism_class,
)
from ldpsurvey.shared.mechanisms.base import Mechanism as BaseMechanism
from ldpsurvey.shared.mechanisms.square_wave import (
    MAX_BUCKETS,
    SMALL_EPSILON,
    SquareWave,
    geometry,
    optimal_b,
)
from ldpsurvey.shared.numeric.distribution import Cells, distribution_estimate
from ldpsurvey.shared.numeric.ems import (
    MAX_ITERATIONS,
    TOLERANCE,
    WindowChannel,
    ems,
    smooth,
)
from ldpsurvey.shared.survey import Survey
from scipy import stats
from support.sources import SeededSource

ALPHA = 1e-6
Z = float(stats.norm.isf(ALPHA / 2))


def paper_b(epsilon: float) -> float:
    """The paper's b to 50 digits (decimal arithmetic: no cancellation at small ε)."""
    with localcontext() as context:
        context.prec = 60
        eps = Decimal(epsilon)
        e = eps.exp()
        return float((eps * e - e + 1) / (2 * e * (e - 1 - eps)))


@pytest.mark.parametrize("epsilon", [1e-6, 1e-3, 0.01, 0.03124999, 0.03125, 0.1, 0.5, 1.0,
                                     math.log(3), 2.0, 4.0, 8.0, 20.0, 50.0])
def test_b_is_the_papers(epsilon: float) -> None:
    """Within 10^-6 of the paper's b (a thousandth of a grid step at d = 1024), on both sides
    of the switch to the expansion at ε = 1/32."""
    assert abs(float(optimal_b(epsilon)) - paper_b(epsilon)) < 1e-6
    assert (Fraction(epsilon) < SMALL_EPSILON) == (epsilon < 1 / 32)


@pytest.mark.parametrize("epsilon, k", [(1.0, 1024), (1.0, 5), (0.1, 5000), (4.0, 64),
                                        (50.0, 10), (1e-6, 3)])
def test_geometry(epsilon: float, k: int) -> None:
    d, half, m = geometry(epsilon, k)
    assert d == min(k, MAX_BUCKETS)
    assert m == d + 2 * half
    # The paper's "near": a cell is near when its position is within b of the answer, so B is
    # the largest whole number of grid steps within b, and the report positions
    # [-B/(d-1), 1 + B/(d-1)] lie inside the paper's [-b, 1 + b], the cells' outer edges
    # (B + 1/2 steps out) within half a step of it.
    b = optimal_b(epsilon)
    assert Fraction(half, d - 1) <= b < Fraction(half + 1, d - 1)


@pytest.mark.parametrize("epsilon, k", [(1.0, 1024), (1.5, 1024), (0.25, 1024), (0.1, 1024),
                                        (1.0, 40), (0.6, 6)])
def test_near_cells_are_the_positions_within_b(epsilon: float, k: int) -> None:
    """The paper's channel on the grid: report cell y (position (y - B)/(d - 1)) is near grid
    point j (position j/(d - 1)) exactly when |position_y - position_j| <= b, exact rationals.
    At ε = 1, 1.5, 0.25 and 0.1 (d = 1024) b·(d - 1) has a fractional part above 1/2, where
    rounding B to the nearest step put cells beyond b in the window."""
    mech = SquareWave(epsilon, range(k))
    b = optimal_b(epsilon)
    first, last = mech.windows()
    for j in range(0, mech.d, max(1, mech.d // 7)):
        near = {y for y in range(mech.m)
                if abs(Fraction(y - mech.half_window - j, mech.d - 1)) <= b}
        assert near == set(range(int(first[j]), int(last[j]) + 1))


# --- privacy -----------------------------------------------------------------------------------


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 4.0])
@pytest.mark.parametrize("k", [2, 5, 40, 100, 1024, 3000])
def test_exact_channel_is_the_discrete_square_wave(epsilon: float, k: int) -> None:
    mech = SquareWave(epsilon, range(k))
    e = rational_exp_floor(epsilon)
    loss = mech.privacy_loss()
    assert loss is not None and loss.ratio == (e if mech.m > mech.window else 1)
    assert loss.within(epsilon)
    if mech.d * mech.m <= 40_000:  # listed in Fractions: the enumeration agrees
        channel = mech.channel()
        assert all(sum(row) == 1 for row in channel)
        assert channel_ratio(channel) == loss.ratio
        for j, row in enumerate(channel):
            near = [y for y, p in enumerate(row) if p == mech.p_cell]
            assert near == list(range(j, j + mech.window))


class _LeakySquareWave(SquareWave):
    """Near cells weighted a millionth more than e^ε allows."""

    name = "leaky_square_wave"

    def __init__(self, epsilon: float, labels: range, **kwargs: Any) -> None:
        BaseMechanism.__init__(self, epsilon, labels, **kwargs)
        self.low = labels.start
        self.d, self.half_window, self.m = geometry(self.epsilon, self.k)
        self.window = 2 * self.half_window + 1
        e = rational_exp_floor(self.epsilon) * (1 + Fraction(1, 10**6))
        self.near_weight, self.far_weight = e.numerator, e.denominator
        self._certify()


class _WideRowSquareWave(SquareWave):
    """One grid point's window one cell wider: a far cell of that row is likelier under the
    other rows' normalization by W_j/W > 1, so some ratio exceeds e^ε."""

    name = "wide_row_square_wave"

    def windows(self) -> tuple[np.ndarray, np.ndarray]:
        first, last = super().windows()
        last = last.copy()
        last[self.d // 2] += 1
        return first, last


@pytest.mark.parametrize("k", [5, 1024])  # listed channel and enumeration
def test_nudged_square_waves_are_refuted(k: int) -> None:
    with pytest.raises(PrivacyCheckError, match="exceeds the claimed epsilon"):
        _LeakySquareWave(1.0, range(k))
    with pytest.raises(PrivacyCheckError, match="exceeds the claimed epsilon"):
        _WideRowSquareWave(1.0, range(k))
    # The wider row's exact loss is known: ln(e·W'/W), W' = W + s - t.
    mech = SquareWave(1.0, range(k))
    s, t = mech.near_weight, mech.far_weight
    wide = object.__new__(_WideRowSquareWave)
    wide.__dict__.update(mech.__dict__)
    loss = wide.privacy_loss()
    assert loss is not None
    total = mech.total_weight
    assert loss.ratio == Fraction(s, t) * Fraction(total + s - t, total)


# --- sampling ----------------------------------------------------------------------------------


@pytest.mark.parametrize("k, index", [(5, 0), (5, 2), (40, 39), (3000, 1500)])
def test_secure_and_injected_draws_follow_the_channel(k: int, index: int) -> None:
    mech = SquareWave(1.0, range(k))
    j = mech.grid_point(index)
    row = np.full(mech.m, float(mech.q_cell))
    row[j:j + mech.window] = float(mech.p_cell)
    for source in (None, SeededSource(5)):
        reports = [mech.validate_report(mech.perturb(index, source)) for _ in range(6000)]
        observed = np.bincount(reports, minlength=mech.m)
        # Pool cells into near/far blocks where they are many (expected counts >= 5).
        blocks = _blocks(mech, j)
        assert stats.chisquare([observed[b].sum() for b in blocks],
                               [row[b].sum() * 6000 for b in blocks]).pvalue > ALPHA


def _blocks(mech: SquareWave, j: int) -> list[np.ndarray]:
    cells = np.arange(mech.m)
    parts = [cells[:j], cells[j:j + mech.window], cells[j + mech.window:]]
    out = []
    for part in parts:
        out += [p for p in np.array_split(part, max(1, min(8, part.size))) if p.size]
    return out


def test_one_draw_per_report_as_draw_weighted_over_the_row() -> None:
    """Every boundary of the row's running weights: the report is what
    randomness.draw_weighted returns for the same draw over the row's m integer weights."""
    from ldpsurvey.shared.randomness import draw_weighted
    from support.sources import ScriptedSource

    mech = SquareWave(1.0, range(1024))
    s, t, window = mech.near_weight, mech.far_weight, mech.window
    for j in (0, 100, 1023):
        weights = [s if j <= y < j + window else t for y in range(mech.m)]
        starts = np.concatenate([[0], np.cumsum([int(w) for w in weights], dtype=object)])
        draws = {0, mech.total_weight - 1}
        for y in (0, j - 1, j, j + 1, j + window - 1, j + window, mech.m - 1):
            if 0 <= y < mech.m:
                draws |= {int(starts[y]), int(starts[y + 1]) - 1}
        for draw in sorted(draws):
            ours, theirs = ScriptedSource([draw]), ScriptedSource([draw])
            assert mech.perturb(j, ours) == draw_weighted(weights, theirs)
            assert ours.requests == theirs.requests == [mech.total_weight] and ours.exhausted


def test_perturb_many_follows_the_channel() -> None:
    mech = SquareWave(1.0, range(1024))
    rng = np.random.default_rng(3)
    reports = mech.perturb_many(np.full(200_000, 700), rng)
    p_near = float(mech.window * mech.p_cell)
    near = ((reports >= 700) & (reports < 700 + mech.window)).sum()
    assert abs(near - 200_000 * p_near) <= Z * math.sqrt(200_000 * p_near * (1 - p_near))
    assert reports.min() >= 0 and reports.max() < mech.m


def test_wide_ranges_keep_the_answer_on_the_nearest_grid_point() -> None:
    k = 10**6 + 1
    mech = SquareWave(1.0, range(-500_000, 500_001))
    assert mech.d == MAX_BUCKETS
    for i in (0, 1, 488, 489, 500_000, k - 2, k - 1):
        exact = Fraction(i * (mech.d - 1), k - 1)
        assert abs(mech.grid_point(i) - exact) <= Fraction(1, 2)
    first, last = mech.cells
    assert first[0] == 0 and last[-1] == k - 1 and np.all(first[1:] == last[:-1] + 1)
    assert all(mech.grid_point(int(a)) == j and mech.grid_point(int(b)) == j
               for j, (a, b) in enumerate(zip(first, last, strict=True)))
    many = mech.perturb_many(np.array([0, 489, k - 1] * 1000), np.random.default_rng(0))
    assert many.max() < mech.m


def test_answers_and_reports_are_checked() -> None:
    mech = SquareWave(1.0, range(10, 20))
    for bad in (9, 20, 10.0, True, "12"):
        with pytest.raises(AnswerError):
            mech.perturb(bad)
    for bad in (-1, mech.m, True, 1.5, "3"):
        with pytest.raises(ReportError):
            mech.validate_report(bad)
    with pytest.raises(SurveyError, match="contiguous range"):
        SquareWave(1.0, ("a", "b"))  # type: ignore[arg-type]


# --- not offered to any existing question ----------------------------------------------------


@pytest.mark.parametrize("qtype", ["binary", "categorical", "ordinal", "integer"])
def test_auto_never_offers_it(qtype: str) -> None:
    for k in ([2] if qtype == "binary" else [2, 5, 31, 1024]):
        for epsilon in (0.5, 1.0, 4.0):
            assert "square_wave" not in {name for _, name in candidates(qtype, k, epsilon)}
    # Looked up by name, kept out of MECHANISMS (every suite over it builds surveys of the
    # existing types), like the mean mechanisms.
    assert "square_wave" not in MECHANISMS
    assert DISTRIBUTION_MECHANISMS["square_wave"] is mechanism_class("square_wave") is SquareWave


def test_a_survey_cannot_name_it_yet() -> None:
    with pytest.raises(SurveyError):
        Survey.from_dict({"id": "s", "title": "t", "version": 1, "questions": [
            {"id": "q", "text": "?", "type": "integer", "min": 0, "max": 10, "epsilon": 1.0,
             "mechanism": "square_wave"}]})


# --- the unbiased mean -------------------------------------------------------------------------


@pytest.mark.parametrize("k, epsilon", [(11, 1.0), (1024, 1.0), (5000, 2.0)])
def test_mean_is_unbiased_with_its_exact_variance(k: int, epsilon: float) -> None:
    """200 re-randomizations of one population: the mean of the means within Z s.e. of the
    truth (the grid value of each answer) and the variance within the chi-square band."""
    mech = SquareWave(epsilon, range(k))
    rng = np.random.default_rng(11)
    answers = rng.integers(0, k, 3000)
    grid_value = np.array([mech.grid_point(int(i)) for i in answers]) * (k - 1) / (mech.d - 1)
    truth = float(grid_value.mean())
    from ldpsurvey.shared.mechanisms.square_wave import _mean_channel

    _, _, per_point = _mean_channel(epsilon, k)
    exact_var = float(per_point[[mech.grid_point(int(i)) for i in answers]].sum()) / 3000**2
    runs = 200
    means = np.array([mech.pseudo_values(mech.perturb_many(answers, rng)).mean()
                      for _ in range(runs)])
    assert abs(means.mean() - truth) <= Z * math.sqrt(exact_var / runs)
    ratio = means.var(ddof=1) / exact_var
    df = runs - 1
    assert stats.chi2.ppf(ALPHA / 2, df) / df <= ratio <= stats.chi2.isf(ALPHA / 2, df) / df
    counts = np.bincount(mech.perturb_many(answers, rng), minlength=mech.m)
    mean = mech.mean_estimate(counts, 1.96)
    assert mean.variance_bound >= exact_var * 0.999  # the worst answer's variance bounds all
    assert mean.estimate == pytest.approx(float(mech.pseudo_values(np.repeat(
        np.arange(mech.m), counts)).mean()))


# --- EMS and the distribution ------------------------------------------------------------------


def test_window_channel_products_equal_the_dense_matrix() -> None:
    for k, epsilon in ((1024, 1.0), (7, 1.0), (5, 50.0), (40, 0.1)):
        mech = SquareWave(epsilon, range(k))
        channel = WindowChannel(mech.d, mech.window, float(mech.p_cell), float(mech.q_cell))
        dense = channel.dense()
        exact = np.array([[float(p) for p in row] for row in mech.channel()]).T if (
            mech.d * mech.m <= 40_000) else dense
        np.testing.assert_allclose(dense, exact, rtol=1e-12)
        rng = np.random.default_rng(1)
        f, g = rng.dirichlet(np.ones(mech.d), 3), rng.random((3, mech.m))
        np.testing.assert_allclose(channel.reports(f), f @ dense.T, atol=1e-14)
        np.testing.assert_allclose(channel.pull_back(g), g @ dense, rtol=1e-10)


def test_smoothing_is_the_papers_binomial_kernel() -> None:
    f = np.array([[1.0, 0, 0, 0, 0, 0, 1.0]])
    np.testing.assert_allclose(smooth(f), [[2 / 3, 1 / 4, 0, 0, 0, 1 / 4, 2 / 3]])


def beta_grid(d: int = 1024) -> np.ndarray:
    """Beta(5, 2) bucketized into d equal buckets: the paper's synthetic setting."""
    return np.diff(stats.beta(5, 2).cdf(np.arange(d + 1) / d))


def test_ems_recovers_a_known_distribution() -> None:
    """n = 10^5 at ε = 1: the paper's setting. The Wasserstein distance on [0, 1] stays below
    0.02: over 40 runs (bench/bench_numeric_distribution.py) it averaged 0.007 with standard
    deviation 0.002, so 0.02 is ~6 s.d. out. Plain EM without smoothing is worse on the same
    reports (the smoothing step is what the paper adds)."""
    mech = SquareWave(1.0, range(1024))
    truth = beta_grid()
    rng = np.random.default_rng(2020)
    answers = rng.choice(1024, 100_000, p=truth)
    counts = np.bincount(mech.perturb_many(answers, rng), minlength=mech.m)
    channel = WindowChannel(mech.d, mech.window, float(mech.p_cell), float(mech.q_cell))

    def distance(f: np.ndarray) -> float:
        return float(np.abs(np.cumsum(f) - np.cumsum(truth)).sum() / 1024)

    smoothed = ems(channel, counts)
    assert distance(smoothed) < 0.02
    assert distance(ems(channel, counts, smoothing=False)) > distance(smoothed)
    assert smoothed.min() > 0 and smoothed.sum() == pytest.approx(1.0)


def reference_ems(channel: WindowChannel, counts: np.ndarray) -> np.ndarray:
    """EMS as first written (before `ems` kept A f between its step and its likelihood): the
    same loop with A f computed afresh for each use."""
    counts = np.atleast_2d(np.asarray(counts, dtype=float))
    n = counts.sum(axis=1)
    out = np.full((counts.shape[0], channel.d), 1.0 / channel.d)
    rows = np.flatnonzero(n > 0)
    f, c, old = out[rows], counts[rows], np.full(rows.size, -np.inf)
    for iteration in range(MAX_ITERATIONS):
        if not rows.size:
            break
        step = f * channel.pull_back(c / channel.reports(f))
        step /= step.sum(axis=1, keepdims=True)
        step = smooth(step)
        step /= step.sum(axis=1, keepdims=True)
        likelihood = np.einsum("ry,ry->r", c, np.log(channel.reports(step)))
        done = np.abs(step - f).sum(axis=1) <= 1.0 / n[rows]
        if iteration > 1:
            done |= np.abs(likelihood - old) < TOLERANCE
        f, old = step, likelihood
        if done.any():
            out[rows[done]] = f[done]
            rows, f, c, old = rows[~done], f[~done], c[~done], old[~done]
    out[rows] = f
    return out


@pytest.mark.parametrize(("epsilon", "n"), [(1.0, 300), (2.0, 3000), (0.5, 50)])
def test_ems_speedup_changes_no_result(epsilon: float, n: int) -> None:
    """`ems` reuses A f of each iterate for the next step (one window sum fewer per iteration,
    ~18% of the CPU): bit for bit the results of the loop that recomputes it, on bootstrap-like
    batches whose rows stop at different iterations (and an empty row)."""
    mech = SquareWave(epsilon, range(200))
    rng = np.random.default_rng(41)
    answers = rng.choice(200, n, p=beta_grid(200))
    counts = np.bincount(mech.perturb_many(answers, rng), minlength=mech.m)
    batch = np.vstack([counts, rng.multinomial(n, counts / n, size=12), np.zeros(mech.m)])
    channel = WindowChannel(mech.d, mech.window, float(mech.p_cell), float(mech.q_cell))
    assert np.array_equal(ems(channel, batch), reference_ems(channel, batch))


def test_quantiles_and_bins_with_intervals() -> None:
    """n = 20,000 at ε = 1: the quartiles' intervals hold the truth (each a 95% interval; a
    fixed seed, so this pins the behaviour rather than sampling it: coverage is measured in
    the bench), bins and CDF are consistent with one another."""
    mech = SquareWave(1.0, range(1024), question_id="q")
    truth = beta_grid()
    rng = np.random.default_rng(7)
    counts = np.bincount(mech.perturb_many(rng.choice(1024, 20_000, p=truth), rng),
                         minlength=mech.m)
    result = distribution_estimate(mech, counts, bins=[0, 512, 768, 1024], resamples=39)
    cells = Cells.of(mech)
    for q in result.quantiles:
        true_q = float(cells.quantile(truth[None, :], q.p)[0])
        assert q.ci_low <= true_q <= q.ci_high, (q, true_q)
        assert q.ci_low <= q.estimate <= q.ci_high
    assert result.median is not None and result.median.p == 0.5
    shares = [b.estimate for b in result.bins]
    assert sum(shares) == pytest.approx(1.0)
    cdf = {c.value: c.estimate for c in result.cdf}
    assert cdf[512.0] == pytest.approx(shares[0] + float(result.points[512].estimate))
    for b in result.bins:
        assert b.ci_low <= b.estimate <= b.ci_high and b.std_error > 0
    json.dumps(result.to_dict())  # plain JSON


def test_same_counts_same_intervals_and_empty_counts() -> None:
    mech = SquareWave(2.0, range(0, 50))
    rng = np.random.default_rng(1)
    counts = np.bincount(mech.perturb_many(rng.integers(0, 50, 500), rng), minlength=mech.m)
    one = distribution_estimate(mech, counts, resamples=39).to_dict()
    assert one == distribution_estimate(mech, counts, resamples=39).to_dict()
    empty = distribution_estimate(mech, np.zeros(mech.m, dtype=np.int64), bins=[0, 10, 50])
    assert all(q.estimate is None for q in empty.quantiles)
    assert all(b.estimate is None for b in empty.bins)
    estimate = mech.estimate(mech.new_aggregate())
    assert estimate.mean is not None and estimate.mean.estimate is None
    json.dumps(empty.to_dict())
    json.dumps(estimate.to_dict())


@pytest.mark.parametrize("kwargs", [{"bins": [3]}, {"bins": [5, 5]}, {"bins": [5, 2]},
                                    {"quantiles": [0.0]}, {"quantiles": [1.5]},
                                    {"confidence": 1.0}, {"resamples": 38}])
def test_bad_requests_are_refused(kwargs: dict[str, Any]) -> None:
    mech = SquareWave(1.0, range(10))
    with pytest.raises(EstimateError):
        distribution_estimate(mech, np.ones(mech.m, dtype=np.int64), **kwargs)
    with pytest.raises(EstimateError):
        distribution_estimate(mech, np.ones(mech.m + 1, dtype=np.int64))


def test_estimate_shape() -> None:
    """`estimate` fills the existing Estimate shape: per grid point (EMS in both `estimate`
    and `consistent`, method "ems") and the unbiased mean."""
    mech = SquareWave(1.0, range(3000), question_id="q")
    mech.resamples = 39  # the fewest for a 95% interval: its 1st and 39th replicates
    rng = np.random.default_rng(4)
    agg = mech.aggregate_many(mech.perturb_many(rng.integers(0, 3000, 2000), rng))
    est = mech.estimate(agg)
    assert est.consistent_method == "ems" and len(est.distribution) == mech.d
    assert est.distribution[0].value == "0..1" and est.distribution[-1].value == "2998..2999"
    data = est.to_dict()
    assert data["consistent_method"] == "ems" and data["mean"]["std_error"] > 0
    json.dumps(data)
