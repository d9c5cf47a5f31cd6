"""The Square Wave mechanism (Li et al., SIGMOD 2020), discretized so that it is sampled and
proven exactly: a number's whole distribution (median, quartiles, bins) under LDP.

The paper's mechanism. An answer v in [0, 1] is reported as ṽ in [-b, 1 + b] with density
p = e^ε/(2be^ε + 1) where |ṽ - v| <= b and q = 1/(2be^ε + 1) elsewhere; the paper's b,
b = (εe^ε - e^ε + 1)/(2e^ε(e^ε - 1 - ε)), maximizes an upper bound on the mutual information
between v and ṽ (b -> 1/2 as ε -> 0, b -> 0 as ε grows). The aggregator bucketizes ṽ and
recovers the distribution of v with EM plus a smoothing step (EMS, shared/numeric/ems.py).

Our discretization (nothing continuous is sampled on the device: Mironov 2012).
- Answers. The question's domain is `labels`, a range of k integers (an integer question, or a
  decimal's grid min, min + resolution, ..., max numbered 0..k-1), mapped affinely to [0, 1]:
  index i <-> v = i/(k - 1). The device keeps it on a grid of d = min(k, 1024) points
  v_j = j/(d - 1): j = round(i·(d - 1)/(k - 1)) (exact integer rounding, half up), which moves
  v by at most half a grid step, 1/(2(d - 1)) of the range. d = 1024 is the paper's granularity
  (its experiments bucketize both sides into 1024 buckets) and at our sizes (n <= 10^6, ε <= 8)
  the estimate's error is set by the noise, not by a finer grid: the EMS error at ε = 1,
  n = 10^5 (W1 ≈ 0.0058 of the range, bench/RESULTS-numeric-distribution.md) is ~6 grid
  steps, ~24 times the quarter step an answer moves on average to its grid point.
- Reports. The output is the same grid extended by B = floor(b·(d - 1)) points on each side:
  m = d + 2B cells y = 0..m-1 at positions (y - B)/(d - 1) in [-B/(d-1), 1 + B/(d-1)], inside
  the paper's [-b, 1 + b] (the outer cells' edges, half a step further out, within half a
  step of it). Cell y is "near" answer j when |position - v_j| <= b, the paper's condition
  |ṽ - v| <= b on the grid, that is |position - v_j| <= B/(d - 1), j <= y <= j + 2B: L = 2B + 1
  near cells for every answer, all inside [0, m). (B = round(b·(d - 1)) instead would take in
  the cells one step beyond b whenever b·(d - 1) has a fractional part of 1/2 or more, as at
  ε = 1 and d = 1024: a window 2 steps wider than the paper's 2b.)
- Channel. P[y | j] = s/W for the near cells and t/W for the others, where s/t (lowest terms)
  is `rational_exp_floor(ε)` <= e^ε and W = L·s + (m - L)·t: the discrete square wave, exact
  rationals. Every column holds only s/W and t/W, so the worst ratio is s/t <= e^ε.
  `privacy_loss` checks it entry by entry (every (answer, cell) pair, integer arithmetic), and
  `channel()` lists it in Fractions for the audit at small d.
- b itself is computed exactly from the same rationals (ε as the exact rational of its float,
  e = s/t) and B is its exact rational floor, so the page's port (client/web/js/
  square_wave.js) derives the same B with no floating point. The stand-in's rounding (2^-32
  relative) cancels badly in e^ε - 1 - ε ~ ε²/2 for small ε, so below ε = 1/32 b takes its
  expansion 1/2 - ε/3 + ε²/9 instead (next term ~ -0.026·ε³): either way b is within 10^-6
  of the paper's, a thousandth of a grid step.
- Sampling: one draw u = randbelow(W) mapped to the first cell whose running weight passes
  it, as `randomness.draw_weighted` (the mean mechanisms' sampler) does, in O(1) since the
  weights are j far, L near, m - L - j far. One CSPRNG call per report.

Estimates. EMS over the d grid points (the paper's estimator), from which the distribution over
designer-chosen bins, the CDF, any quantile and the mean follow, with bootstrap intervals over
reports (shared/numeric/distribution.py; docs/numeric-distribution.md). The mean also has an
unbiased linear estimator with an exact variance (`mean_channel`): E[ṽ | v] = q_c·m/2 +
(p_c - q_c)·L·v in grid positions (p_c = s/W, q_c = t/W per cell), so
v̂ = (ṽ - q_c·m/2)/((p_c - q_c)·L) is unbiased for the grid value.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from functools import cached_property, lru_cache
from typing import Any

import numpy as np

from ..aggregates import Aggregate, CountAggregate
from ..errors import AnswerError, SurveyError
from ..estimates import Estimate, MeanEstimate, empty_value_estimates
from ..exact import PrivacyLoss, channel_ratio, rational_exp_floor
from ..numeric.distribution import describe_distribution
from ..randomness import RandomSource
from .base import IndexReports, JointReading, Mechanism, Misfit, ReportValues, answer_sample

MAX_BUCKETS = 1024  # d: the paper's granularity; see the module docstring
# Below this ε, b is its expansion: the closed form cancels under the stand-in's rounding.
SMALL_EPSILON = Fraction(1, 32)
# Lists of Fractions beyond this many entries are only built on request (tests, small d).
_EXPLICIT_CHANNEL_MAX_ENTRIES = 4096
# JSON carries integers exactly up to 2^53 - 1: the range of answer indices we accept.
MAX_VALUES = 2**53 - 1


def optimal_b(epsilon: float) -> Fraction:
    """The paper's b = (εe - e + 1)/(2e(e - 1 - ε)) in exact rationals, e = rational_exp_floor(ε)
    and ε the exact rational of the float (1/2 - ε/3 + ε²/9 below SMALL_EPSILON: docstring)."""
    eps = Fraction(epsilon)
    if eps < SMALL_EPSILON:
        return Fraction(1, 2) - eps / 3 + eps * eps / 9
    e = rational_exp_floor(epsilon)
    return (eps * e - e + 1) / (2 * e * (e - 1 - eps))


@lru_cache(maxsize=256)
def geometry(epsilon: float, k: int) -> tuple[int, int, int]:
    """(d, B, m): grid points, half window in grid steps, report cells (module docstring)."""
    d = min(k, MAX_BUCKETS)
    half = math.floor(optimal_b(epsilon) * (d - 1))  # exact: Fraction.__floor__
    return d, half, d + 2 * half


class SquareWave(IndexReports, Mechanism):
    name = "square_wave"
    joint_reports = JointReading.VALUE  # a crosstab reads each report's unbiased value
    # (`report_values`)
    # The number types take it where `estimate` asks for the distribution (shared/
    # question_types/number_grid.py): registered in DISTRIBUTION_MECHANISMS, not MECHANISMS
    # (shared/mechanisms/registry.py), so `auto` never ranks it.
    question_types = frozenset({"decimal", "integer"})
    summary = ("Square Wave (Li et al. 2020), discretized: a grid cell near the number w.p. "
               "e^ε times any far one; the distribution by EM with smoothing.")
    max_options = 2 * MAX_VALUES + 1  # any range of integers JSON carries exactly
    resamples: int | None = None  # bootstrap replicates behind `estimate`'s intervals (None:
    # `resamples_for` the confidence)

    def __init__(self, epsilon: float, labels: range, **kwargs: Any) -> None:
        if not isinstance(labels, range) or labels.step != 1:
            raise SurveyError("domain", "square_wave needs a contiguous range of grid values")
        super().__init__(epsilon, labels, **kwargs)
        self.low = labels.start
        self.d, self.half_window, self.m = geometry(self.epsilon, self.k)
        self.window = 2 * self.half_window + 1
        e = rational_exp_floor(self.epsilon)
        self.near_weight, self.far_weight = e.numerator, e.denominator
        self._certify()

    # --- limits ------------------------------------------------------------------------------

    @classmethod
    def misfit(cls, k: int, epsilon: float, low: int = 0) -> Misfit | None:
        found = super().misfit(k, epsilon, low)
        if found is None and max(abs(low), abs(low + k - 1)) > MAX_VALUES:
            return Misfit("domain", "grid values must lie within ±(2^53 - 1)")
        return found

    @classmethod
    def describe_limits(cls) -> str:
        return (f"ε {cls.min_epsilon:g} to {cls.max_epsilon:g}; any range, kept on a grid of "
                f"at most {MAX_BUCKETS} points")

    # --- the channel ---------------------------------------------------------------------------

    @property
    def total_weight(self) -> int:
        """W = L·s + (m - L)·t: the common denominator of every row."""
        return self.window * self.near_weight + (self.m - self.window) * self.far_weight

    @property
    def p_cell(self) -> Fraction:
        """P[one given near cell | answer]."""
        return Fraction(self.near_weight, self.total_weight)

    @property
    def q_cell(self) -> Fraction:
        """P[one given far cell | answer]."""
        return Fraction(self.far_weight, self.total_weight)

    def windows(self) -> tuple[np.ndarray, np.ndarray]:
        """(first, last) near cell of each grid point j, inclusive: j and j + 2B."""
        first = np.arange(self.d, dtype=np.int64)
        return first, first + self.window - 1

    def channel(self) -> list[list[Fraction]]:
        """P[cell y | grid point j] as exact fractions, d x m (tests and small grids)."""
        first, last = self.windows()
        rows = []
        for j in range(self.d):
            weights = [self.near_weight if first[j] <= y <= last[j] else self.far_weight
                       for y in range(self.m)]
            total = sum(weights)
            rows.append([Fraction(w, total) for w in weights])
        return rows

    def float_channel(self) -> np.ndarray:
        """P[cell y | grid point j] as floats, d x m (the design's linear inverse,
        shared/numeric/linear_inverse.py): s/W in the window j..j + 2B, t/W elsewhere."""
        cells = np.arange(self.m)[None, :]
        first, last = self.windows()
        near = (first[:, None] <= cells) & (cells <= last[:, None])
        return np.where(near, float(self.p_cell), float(self.q_cell))

    def privacy_loss(self) -> PrivacyLoss | None:
        """The exact worst ratio max_y max_{j,j'} P[y|j]/P[y|j'] over every (j, y) pair.

        Entry (j, y) is s/W_j (y in j's window) or t/W_j (outside), W_j = s·len_j +
        t·(m - len_j) in integers. Per cell y the largest and smallest entries come from the
        extreme window lengths among rows near y and among rows far from y (W_j grows with
        len_j since s >= t); the pattern is enumerated for every pair with numpy booleans and
        the ratios compared as exact Fractions. Small grids also list the channel itself.
        """
        s, t = self.near_weight, self.far_weight
        if s < t:
            return None  # not a rational stand-in for e^ε >= 1
        if self.d * self.m <= _EXPLICIT_CHANNEL_MAX_ENTRIES:
            ratio = channel_ratio(self.channel())
            return None if ratio is None else PrivacyLoss(ratio=ratio)
        first, last = self.windows()
        if first.min() < 0 or last.max() >= self.m or np.any(last < first):
            return None
        lengths = (last - first + 1)[:, None]
        cells = np.arange(self.m)[None, :]
        near = (first[:, None] <= cells) & (cells <= last[:, None])  # (d, m): every pair
        columns = []  # per cell: (any, shortest, longest) window among near rows, then far
        for mask in (near, ~near):
            columns += [mask.any(axis=0), np.where(mask, lengths, self.m + 1).min(axis=0),
                        np.where(mask, lengths, -1).max(axis=0)]
        worst = Fraction(1)
        for key in np.unique(np.stack(columns, axis=1).astype(np.int64), axis=0):
            entries = []
            for (present, shortest, longest), weight in ((key[:3], s), (key[3:], t)):
                if present:
                    entries += [Fraction(weight, s * int(n) + t * (self.m - int(n)))
                                for n in (shortest, longest)]
            worst = max(worst, max(entries) / min(entries))
        return PrivacyLoss(ratio=worst)

    def params(self) -> dict[str, Any]:
        return {"e": f"{self.near_weight}/{self.far_weight}", "grid": self.d,
                "half_window": self.half_window, "cells": self.m}

    # --- choosing and planning -------------------------------------------------------------

    @classmethod
    def worst_case_variance(cls, k: int, epsilon: float) -> float:
        """Variance of the unbiased mean (answer units) with one report, worst over answers."""
        per_answer = _mean_channel(epsilon, k)
        return float(per_answer[2].max())

    @classmethod
    def report_bytes(cls, k: int, epsilon: float) -> int:
        return len(str(geometry(epsilon, k)[2] - 1))

    # --- the respondent's side -----------------------------------------------------------------

    def encode(self, answer: Any) -> int:
        if isinstance(answer, bool) or not isinstance(answer, int):
            raise AnswerError("the answer" + (f" to {self.question_id!r}" if self.question_id
                                             else "") + " must be an integer grid value")
        if not self.low <= answer < self.low + self.k:
            raise AnswerError(f"{answer} is outside [{self.low}, {self.low + self.k - 1}]; it is "
                              "refused, not clamped")
        return answer - self.low

    def grid_point(self, index: int) -> int:
        """The grid point j of answer index i: round(i·(d - 1)/(k - 1)), half up, exact."""
        if self.d == self.k:
            return index
        return (2 * index * (self.d - 1) + (self.k - 1)) // (2 * (self.k - 1))

    @property
    def index_count(self) -> int:
        return self.m

    def perturb_index(self, index: int, source: RandomSource) -> int:
        """Exactly `randomness.draw_weighted` over the row's m weights (one randbelow(W), the
        first cell whose running sum passes it), in O(1): j far cells, L near, the rest far."""
        j = self.grid_point(index)
        s, t = self.near_weight, self.far_weight
        u = source.randbelow(self.total_weight)
        if u < j * t:
            return u // t
        u -= j * t
        if u < self.window * s:
            return j + u // s
        return j + self.window + (u - self.window * s) // t

    def perturb_many(self, answers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        index = np.asarray(answers, dtype=np.int64)
        if self.d != self.k:
            index = (2 * index * (self.d - 1) + (self.k - 1)) // (2 * (self.k - 1))
        near = rng.random(index.size) < float(self.window * self.p_cell)
        offset = rng.integers(0, self.window, index.size)
        far = rng.integers(0, self.m - self.window, index.size)
        far = np.where(far < index, far, far + self.window)
        return np.where(near, index + offset, far)

    # --- the aggregator's side -----------------------------------------------------------------

    def aggregate_from_dict(self, data: Mapping[str, Any]) -> CountAggregate:
        return CountAggregate.from_dict(data, size=self.m)

    @cached_property
    def cells(self) -> tuple[np.ndarray, np.ndarray]:
        """(first, last) answer index of each grid point's cell: the answers kept on it."""
        j = np.arange(self.d, dtype=np.int64)
        if self.d == self.k:
            return j, j
        # i maps to j iff 2i(d-1) + (k-1) >= 2j(k-1), i.e. i >= ceil((2j - 1)(k-1)/(2(d-1))).
        first = np.array([max(0, -((-(2 * x - 1) * (self.k - 1)) // (2 * (self.d - 1))))
                          for x in range(self.d)], dtype=np.int64)
        last = np.append(first[1:] - 1, self.k - 1)
        return first, last

    def sent_label(self, report: int) -> Fraction:
        """The number cell `report` stands for, exactly, on the labels' scale: its position
        (y - B)/(d - 1) on [0, 1] stretched over low..low + k - 1 (about [-b, 1 + b])."""
        return self.low + Fraction((report - self.half_window) * (self.k - 1), self.d - 1)

    def report_values(self) -> ReportValues:
        """A crosstab reads a report's unbiased value (`pseudo_values`), affine in the cell
        index y: low + (y - intercept)/slope, with E[y | j] and E[y² | j] of answer j's grid
        point (`_mean_channel`)."""
        slope, intercept, per_point = _mean_channel(self.epsilon, self.k)
        answers = answer_sample(self.k)
        first, _ = self.cells
        point = np.searchsorted(first, answers, side="right") - 1  # each answer's grid point
        mean_y = intercept + slope * point * (self.k - 1) / (self.d - 1)
        second_y = per_point[point] * slope**2 + mean_y**2
        return ReportValues(self.low + answers.astype(float),
                            np.column_stack([mean_y, second_y]), None,
                            self.low - intercept / slope, 1.0 / slope)

    def window_reports(self) -> Any:
        """Its reports are cells of the window channel (shared/numeric/joint_ems.py)."""
        from ..numeric.joint_ems import WindowReports

        return WindowReports(self, self.value_keys)

    def pseudo_values(self, reports: Any) -> np.ndarray:
        """Each report's unbiased estimate of its answer's grid value in answer units, (n, 1):
        v̂ = (ṽ - q_c·m/2)/((p_c - q_c)·L) (module docstring), scaled to the labels."""
        return self._label_values(reports)

    def _label_values(self, reports: Any) -> np.ndarray:
        """`pseudo_values` on the labels' scale, whatever wraps this mechanism."""
        index = np.asarray(reports, dtype=np.int64).reshape(-1)
        slope, intercept, _ = _mean_channel(self.epsilon, self.k)
        return (self.low + (index - intercept) / slope).reshape(-1, 1)

    def value_noise(self, reports: Any) -> np.ndarray:
        """Each report's unbiased estimate of its pseudo-value's randomization variance, in
        answer units (n, 1). For grid point value x the variance is a quadratic
        V(x) = c0 + c1·x + c2·x² (`_mean_channel`: Var[y | j] is quadratic in j), and
        E[v̂²] = V(x) + x², so g(v̂) = (v̂² − c0 − c1·v̂)/(c2 + 1) is unbiased for x² and
        V̂ = c0 + c1·v̂ + c2·g(v̂) for V(x)."""
        v = self._label_values(reports)  # not pseudo_values: a scale wrapper rescales those
        x = self.low + np.arange(self.d) * (self.k - 1) / (self.d - 1)  # the grid points
        per_point = _mean_channel(self.epsilon, self.k)[2]
        if x.size < 3:
            c2, c1, c0 = 0.0, *np.polyfit(x, per_point, 1)
        else:
            c2, c1, c0 = np.polyfit(x, per_point, 2)
        square = (v * v - c0 - c1 * v) / (c2 + 1.0)
        return c0 + c1 * v + c2 * square

    def estimate(self, aggregate: Aggregate, confidence: float = 0.95) -> Estimate:
        """EMS distribution over the grid points (bootstrap intervals) and the unbiased mean.

        The distribution's `estimate` and `consistent` are both the EMS one (biased by its
        smoothing, never negative): no unbiased per-point estimate is worth reading at this
        resolution. Designer bins, the CDF and quantiles: `distribution_estimate`."""
        assert isinstance(aggregate, CountAggregate)
        result = Estimate(question=self.question_id, mechanism=self.name, epsilon=self.epsilon,
                          n=aggregate.n, confidence=confidence, consistent_method="ems")
        values = self.point_labels()
        if aggregate.n == 0:
            result.mean = MeanEstimate(None, None, None, None, None)
            result.distribution = empty_value_estimates(values)
            return result
        summary = describe_distribution(self, aggregate.counts, confidence=confidence,
                                        resamples=self.resamples)
        result.mean = summary.mean
        result.distribution = summary.points
        result.notes += summary.notes
        return result

    def point_labels(self) -> list[Any]:
        """Each grid point's answers: the label itself, or 'a..b' when several share it."""
        first, last = self.cells
        return [self.low + int(a) if a == b else f"{self.low + int(a)}..{self.low + int(b)}"
                for a, b in zip(first, last, strict=True)]

    def mean_estimate(self, counts: np.ndarray, z: float) -> MeanEstimate:
        """The unbiased mean (answer units) from report counts, its std error (the reports'
        pseudo-values' spread: sampling plus randomization) and the worst-case bound of the
        randomization alone over n."""
        counts = np.asarray(counts, dtype=float)
        n = counts.sum()
        slope, intercept, per_answer = _mean_channel(self.epsilon, self.k)
        values = self.low + (np.arange(self.m) - intercept) / slope
        mean = float(counts @ values / n)
        spread = float(counts @ (values - mean) ** 2 / max(n - 1, 1))
        se = math.sqrt(spread / n)
        return MeanEstimate(estimate=mean, std_error=se, variance_bound=float(per_answer.max())
                            / n, ci_low=mean - z * se, ci_high=mean + z * se)


@lru_cache(maxsize=64)
def _mean_channel(epsilon: float, k: int) -> tuple[float, float, np.ndarray]:
    """(slope, intercept, per-grid-point variance) of the unbiased mean in answer units.

    E[y | j] = q_c·m(m - 1)/2 + (p_c - q_c)·L·(j + B) for the cell index y, so
    v̂ = (y - intercept)/slope with slope = (p_c - q_c)·L·(d - 1)/(k - 1) (answer units per
    cell) and intercept = q_c·m(m - 1)/2 + (p_c - q_c)·L·B; its variance for grid point j is
    Var[y | j]/slope², Var[y | j] = q_c·Σy² + (p_c - q_c)·Σ_near y² - E[y | j]²."""
    d, half, m = geometry(epsilon, k)
    window = 2 * half + 1
    e = rational_exp_floor(epsilon)
    total = window * e.numerator + (m - window) * e.denominator
    p, q = e.numerator / total, e.denominator / total
    j = np.arange(d, dtype=float)
    offsets = np.arange(window, dtype=float)
    mean_y = q * m * (m - 1) / 2 + (p - q) * window * (j + half)
    all_sq = (m - 1) * m * (2 * m - 1) / 6
    near_sq = window * j**2 + 2 * j * offsets.sum() + (offsets**2).sum()
    var_y = q * all_sq + (p - q) * near_sq - mean_y**2
    slope = (p - q) * window * (d - 1) / (k - 1)
    intercept = q * m * (m - 1) / 2 + (p - q) * window * half
    return slope, intercept, np.maximum(var_y, 0.0) / slope**2
