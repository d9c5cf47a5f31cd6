"""Two-sided geometric (discrete Laplace) noise for integer answers in [min, max].

The report is y = x + Z with P[Z = z] proportional to exp(-rate·|z|), rate = ε'/Δ, Δ = max - min
and ε' a short rational <= ε. For answers x, x' in range and any y,
P[y|x]/P[y|x'] = exp(rate·(|y - x'| - |y - x|)) <= exp(rate·|x - x'|) <= exp(rate·Δ) = exp(ε'),
so the exact worst-case log-ratio is the rational rate·Δ. Z is drawn exactly with integer
arithmetic (Canonne, Kamath, Steinke 2020). In the usual notation α = e^rate.

Estimates: the mean of y is unbiased for the mean answer, Var = Var[Z]/n with
Var[Z] = 2α/(α - 1)^2. For ranges of at most `DISTRIBUTION_MAX_VALUES` values the aggregate also
keeps a histogram of y clamped to [min - T, max + T] (clamping is post-processing), and the
distribution over [min, max] is recovered by least-squares inversion of that exact channel.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any

import numpy as np

from ..aggregates import Aggregate, HistogramAggregate
from ..errors import AggregateError, AnswerError, ReportError, SurveyError
from ..estimates import (
    Estimate,
    MeanEstimate,
    empty_value_estimates,
    norm_sub,
    value_estimates,
    z_value,
)
from ..exact import PrivacyLoss, rational_floor
from ..randomness import RandomSource, discrete_laplace
from .base import (
    JointReading,
    Mechanism,
    Misfit,
    ReportValues,
    answer_sample,
    ints_within,
    reject_bool,
)

DISTRIBUTION_MAX_VALUES = 256
# The histogram keeps y within [min - T, max + T]: T covers all but ~1e-4 of the noise, capped.
_TAIL_MASS = 1e-4
_MAX_TAIL = 4096
# Reports are integers JSON carries exactly.
MAX_ABS_REPORT = 2**53 - 1
# An honest report lands more than T' = 64·ln 2 / rate beyond [min, max] with probability
# below 2^-64, so such a report is refused: it bounds what one forged report can do to the mean.
_REPORT_TAIL_BITS = 64


@dataclass(frozen=True)
class _Inversion:
    """M = pinv(A) for the clamped channel, without the (k + 2T) x k pseudo-inverse.

    The T rows below the range are one vector times another: for y < min <= x,
    A[y][x] = c_y·α^-x (the clamped row too), so that block is u·v^T; likewise above. With q
    the unit vector along u, A = Q^T·A' where Q (orthonormal rows) keeps the k rows inside the
    range and projects each tail block on its q, and A' is (k + 2) x k. Then
    pinv(A) = pinv(A')·Q exactly, M·c = pinv(A')·(Q·c), and
    W = (M∘M)·A = (P∘P)·A_in + (p_low²)(q_low²·A_low) + (p_high²)(q_high²·A_high) with
    P = pinv(A')'s middle columns: O(k³ + kT) where the full pseudo-inverse cost O(k²T)
    (3.6 s at k = 256, T = 4096).
    """

    p: np.ndarray  # pinv(A'), k x (k + 2)
    q_low: np.ndarray
    q_high: np.ndarray
    w: np.ndarray

    @classmethod
    def of(cls, a: np.ndarray, below: int, k: int) -> _Inversion:
        low_block, inside, high_block = a[:below], a[below:below + k], a[below + k:]
        q_low = low_block[:, 0] / np.linalg.norm(low_block[:, 0])
        q_high = high_block[:, -1] / np.linalg.norm(high_block[:, -1])
        p = np.linalg.pinv(np.vstack([q_low @ low_block, inside, q_high @ high_block]))
        w = ((p[:, 1:-1] ** 2) @ inside + np.outer(p[:, 0] ** 2, (q_low**2) @ low_block)
             + np.outer(p[:, -1] ** 2, (q_high**2) @ high_block))
        return cls(p, q_low, q_high, w)

    def apply(self, frequencies: np.ndarray) -> np.ndarray:
        """M·frequencies: the least-squares answer distribution for histogram frequencies."""
        below, above = self.q_low.size, self.q_high.size
        inside = frequencies[below:frequencies.size - above]
        compressed = np.concatenate([[self.q_low @ frequencies[:below]], inside,
                                     [self.q_high @ frequencies[frequencies.size - above:]]])
        return self.p @ compressed


class Geometric(Mechanism):
    name = "geometric"
    question_types = frozenset({"integer", "decimal"})
    summary = "Two-sided geometric noise added to the number: unbiased mean, exact sampling."
    # Any span of integers JSON carries exactly; `misfit` narrows it by the noise's reach.
    max_options = 2 * MAX_ABS_REPORT + 1
    joint_reports = JointReading.WHOLE_NUMBER

    def __init__(self, epsilon: float, labels: range, **kwargs: Any) -> None:
        if not isinstance(labels, range) or labels.step != 1:
            raise SurveyError("domain", "geometric noise needs a contiguous integer range")
        super().__init__(epsilon, labels, **kwargs)
        self.low, self.high = labels.start, labels.stop - 1
        self.sensitivity = self.high - self.low
        self.epsilon_rational = rational_floor(self.epsilon)
        self.rate = self.epsilon_rational / self.sensitivity
        self._certify()

    # --- limits ------------------------------------------------------------------------------

    @classmethod
    def misfit(cls, k: int, epsilon: float, low: int = 0) -> Misfit | None:
        """Beyond the shared limits: every honest report (the range widened by the noise's
        reach T', see `report_bounds`) must be an integer JSON carries exactly, |y| < 2^53."""
        found = super().misfit(k, epsilon, low)
        if found is not None:
            return found
        high = low + k - 1
        if max(abs(low), abs(high)) > MAX_ABS_REPORT:  # integers only: no float overflow
            return Misfit("domain", "bounds must lie within ±(2^53 - 1), the integers JSON "
                                    "carries exactly")
        tail = cls.report_tail(k, epsilon)
        if low - tail < -MAX_ABS_REPORT or high + tail > MAX_ABS_REPORT:
            return Misfit("domain", f"at epsilon {epsilon:g} the noise on [{low}, {high}] "
                                    f"reaches {tail:.3g} beyond it, past ±(2^53 - 1), the "
                                    f"integers JSON carries exactly: narrow the range or "
                                    f"raise epsilon")
        return None

    @classmethod
    def describe_limits(cls) -> str:
        return (f"ε {cls.min_epsilon:g} to {cls.max_epsilon:g}; min/max widened by the noise's "
                f"2^-64 tail (~44·(max − min)/ε) within ±(2^53 − 1)")

    @staticmethod
    def report_tail(k: int, epsilon: float) -> int:
        """T' = 64·ln 2/rate (+1): an honest report lands farther than this beyond the range
        with probability below 2^-64."""
        rate = float(rational_floor(epsilon) / (k - 1))
        return math.ceil(_REPORT_TAIL_BITS * math.log(2) / rate) + 1

    # --- choosing and planning -------------------------------------------------------------

    @staticmethod
    def noise_variance(k: int, epsilon: float) -> float:
        """Var[Z] = 2α/(α - 1)^2 for α = e^(ε/Δ), Δ = k - 1."""
        rate = float(rational_floor(epsilon) / (k - 1))
        am1 = math.expm1(rate)
        return 2 * (am1 + 1) / am1**2

    @classmethod
    def worst_case_variance(cls, k: int, epsilon: float) -> float:
        """Variance of the mean estimate with one report (it does not depend on the truth)."""
        return cls.noise_variance(k, epsilon)

    @classmethod
    def report_bytes(cls, k: int, epsilon: float) -> int:
        return 17

    def params(self) -> dict[str, Any]:
        low, high = self.histogram_range or (None, None)
        return {"epsilon_rational": str(self.epsilon_rational), "sensitivity": self.sensitivity,
                "histogram_low": low, "histogram_high": high}

    # --- privacy -----------------------------------------------------------------------------

    def privacy_loss(self) -> PrivacyLoss:
        # Worst pair of answers is the farthest apart: |x - x'| = Δ (see the module docstring).
        return PrivacyLoss(log=self.rate * self.sensitivity)

    # --- the respondent's side -----------------------------------------------------------------

    def encode(self, answer: Any) -> int:
        if isinstance(answer, bool) or not isinstance(answer, int):
            raise AnswerError(f"the answer to {self.question_id!r} must be an integer")
        if not self.low <= answer <= self.high:
            raise AnswerError(f"{answer} is outside [{self.low}, {self.high}]"
                              + (f" for {self.question_id!r}" if self.question_id else "")
                              + "; it is refused, not clamped")
        return answer - self.low

    def perturb_index(self, index: int, source: RandomSource) -> int:
        return self.low + index + discrete_laplace(self.rate, source)

    def perturb_many(self, answers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        answers = np.asarray(answers, dtype=np.int64)
        success = -math.expm1(-float(self.rate))  # 1 - 1/α
        noise = rng.geometric(success, answers.size) - rng.geometric(success, answers.size)
        return self.low + answers + noise

    # --- the aggregator's side -----------------------------------------------------------------

    def validate_report(self, report: Any) -> int:
        reject_bool(report, "an integer report")
        if not isinstance(report, int | np.integer):
            raise ReportError(f"an integer report must be an integer, got {type(report).__name__}")
        value = int(report)
        low, high = self.report_bounds
        if not low <= value <= high:
            raise ReportError(f"report {value} is outside [{low}, {high}], where honest reports "
                              f"fall with probability above 1 - 2^-{_REPORT_TAIL_BITS}")
        return value

    def validate_reports(self, reports: Sequence[Any]) -> list[Any]:
        if ints_within(reports, *self.report_bounds):
            return list(reports)
        return [self.validate_report(r) for r in reports]

    @cached_property
    def report_bounds(self) -> tuple[int, int]:
        """The report domain accepted: [min - T', max + T'] within what JSON carries exactly.

        One report can move the mean estimate by at most (max - min + 2T')/n.
        """
        tail = self.report_tail(self.k, self.epsilon)
        return max(self.low - tail, -MAX_ABS_REPORT), min(self.high + tail, MAX_ABS_REPORT)

    def sent_label(self, report: int) -> Fraction:
        """The number a report is (the answer plus noise), on the labels' scale."""
        return Fraction(report)

    def value_noise(self, reports: Any) -> np.ndarray:
        """`noise_variance` for every report: the noise does not depend on the answer."""
        n = np.asarray(reports).reshape(-1).shape[0]
        return np.full((n, 1), self.noise_variance(self.k, self.epsilon))

    def report_values(self) -> ReportValues:
        """The report y = x + Z itself: E[y | x] = x, E[y² | x] = x² + `noise_variance` (read
        as a "value" report under a scale wrapper; an integer question's crosstab bins it)."""
        x = self.low + answer_sample(self.k).astype(float)
        return ReportValues(x, np.column_stack([x, x * x + self.noise_variance(self.k,
                                                                               self.epsilon)]))

    def pseudo_values(self, reports: Any) -> np.ndarray:
        """The report itself, (n, 1): y = x + Z with E[Z] = 0 is unbiased for the value x
        (contract 5; its randomization variance is `noise_variance`, the same for everyone)."""
        return np.asarray(reports, dtype=np.float64).reshape(-1, 1)

    @cached_property
    def histogram_range(self) -> tuple[int, int] | None:
        """[min - T, max + T] for the distribution histogram, or None for wide ranges."""
        if self.k > DISTRIBUTION_MAX_VALUES:
            return None
        tail = min(_MAX_TAIL, math.ceil(math.log(1 / _TAIL_MASS) / float(self.rate)))
        return self.low - tail, self.high + tail

    def new_aggregate(self) -> HistogramAggregate:
        low, high = self.histogram_range or (None, None)
        return HistogramAggregate(low, high)

    def aggregate_from_dict(self, data: Mapping[str, Any]) -> HistogramAggregate:
        agg = HistogramAggregate.from_dict(data)
        if (agg.low, agg.high) != (self.histogram_range or (None, None)):
            raise AggregateError("histogram range does not match this mechanism")
        return agg

    @cached_property
    def _inversion(self) -> _Inversion:
        """The least-squares inverse of the clamped channel A (rows: histogram bins y, columns:
        answers x) and W = (M∘M)·A for its variance; see `_Inversion`."""
        assert self.histogram_range is not None
        lo, hi = self.histogram_range
        r = float(self.rate)
        ys = np.arange(lo, hi + 1)[:, None]
        xs = np.arange(self.low, self.high + 1)[None, :]
        a = math.tanh(r / 2) * np.exp(-r * np.abs(ys - xs))  # (α-1)/(α+1)·α^-|y-x|
        tail = 1 / (1 + math.exp(-r))  # α/(α+1)
        a[0, :] = tail * np.exp(-r * (xs[0] - lo))  # P[y <= lo]
        a[-1, :] = tail * np.exp(-r * (hi - xs[0]))  # P[y >= hi]
        return _Inversion.of(a, self.low - lo, self.k)

    def estimate(self, aggregate: Aggregate, confidence: float = 0.95) -> Estimate:
        assert isinstance(aggregate, HistogramAggregate)
        z = z_value(confidence)
        n = aggregate.n
        result = Estimate(question=self.question_id, mechanism=self.name, epsilon=self.epsilon,
                          n=n, confidence=confidence)
        if self.histogram_range is None:
            result.notes.append(f"the range has more than {DISTRIBUTION_MAX_VALUES} values: "
                                "only the mean is estimated")
        if n == 0:
            result.mean = MeanEstimate(None, None, None, None, None)
            if self.histogram_range is not None:
                result.distribution = empty_value_estimates(self.labels)
            return result
        mean = aggregate.total / n
        se = math.sqrt(self.noise_variance(self.k, self.epsilon) / n)
        result.mean = MeanEstimate(estimate=mean, std_error=se, variance_bound=se**2,
                                   ci_low=mean - z * se, ci_high=mean + z * se)
        if self.histogram_range is not None:
            inversion = self._inversion
            w = inversion.w
            f_hat = inversion.apply(aggregate.counts / n)
            consistent = norm_sub(f_hat)
            # Var f̂_v = (Σ_x f_x W[v,x] - f_v)/n for a fixed population; linear in f.
            variance = (w @ consistent - consistent) / n
            bound = np.max(w - np.eye(self.k), axis=1) / n
            result.distribution = value_estimates(self.labels, f_hat, variance, bound,
                                                  consistent, z)
        return result
