"""A distance-aware randomizer for ordered answers (Likert scales, age bands): the exponential
mechanism with score minus the distance between options.

Answer x (an option index) is reported as y with probability A[x][y] = b^-|x-y| / Z_x,
Z_x = Σ_y b^-|x-y|, for a rational base b > 1: near options are likelier than far ones, so the
mean score survives the noise much better than under k-ary randomized response.

The best base. The exact worst ratio of this channel is b^(k-1), attained at x = 0, x' = k-1,
y = 0 (Z_0 = Z_(k-1) by symmetry). Proof that nothing is worse: for x < x',
A[x][y]/A[x'][y] <= b^(x'-x)·Z_x'/Z_x (equality for y <= x). Writing Z_m = L_m + R_m (values
left/right of m, inclusive on the left), L_(m+1) = 1 + L_m/b and R_(m+1) = b·R_m - 1, so
b·Z_(m+1) = L_m + b^2·R_m >= Z_m: m -> b^m·Z_m is non-decreasing. Hence
b^x'·Z_x' <= b^(k-1)·Z_(k-1) = b^(k-1)·Z_0 and b^x·Z_x >= Z_0, so the ratio is at most b^(k-1).
So any b with b^(k-1) <= e^ε is ε-LDP and the largest such b is the best; we take a short
rational within 2^-32/(k-1) (relative) below e^(ε/(k-1)). The textbook exponential
mechanism (rate ε/(2Δ), Δ = k - 1) would use b = e^(ε/(2(k-1))): half the exponent, for nothing.
The channel is checked exactly in Fractions for k <= 64 and by the closed form above beyond.

Estimation (report = option index, aggregate = counts):
- Channel inversion: f̂ = M·c/n with M = (A^T)^-1: unbiased. For a fixed population,
  Var[w·f̂] = Σ_x f_x (Σ_y (w^T M)_y^2 A[x][y] - w_x^2) / n for any weights w (an option, a
  group, or the scores 1..k for the mean), linear in f: plug in the EM distribution for the
  std error, take the worst x for the bound.
- EM (the maximum-likelihood distribution) is the consistent view (non-negative, sums to 1).
- The mean score (options scored 1..k): unbiased s·f̂ with its std error and interval.
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache, cached_property
from typing import Any

import numpy as np

from ..aggregates import Aggregate, CountAggregate
from ..estimates import (
    Estimate,
    GroupEstimate,
    MeanEstimate,
    empty_value_estimates,
    norm_sub,
    value_estimates,
    z_value,
)
from ..exact import PrivacyLoss, channel_ratio, exp_lower, simplest_between
from ..randomness import RandomSource
from .base import IndexReports, Mechanism

_EXPLICIT_CHANNEL_MAX_K = 64
MAX_OPTIONS = 1024  # the estimator inverts a k x k matrix
_EM_ITERATIONS = 1000
_EM_TOLERANCE = 1e-9


def best_base(epsilon: float, k: int) -> Fraction:
    """A short rational b with b^(k-1) <= e^ε, within 2^-32/(k-1) (relative) of the largest."""
    top = exp_lower(Fraction(epsilon) / (k - 1))  # <= e^(ε/(k-1))
    # Strictly below top by 2^-64: b^(k-1) then stays under the certified bound on e^ε.
    return simplest_between(top * (1 - Fraction(1, 2**32 * (k - 1))),
                            top * (1 - Fraction(1, 2**64)))


@cache
def float_channel(k: int, epsilon: float) -> np.ndarray:
    """A[x][y] in floats (for estimation and planning)."""
    b = float(best_base(epsilon, k))
    distance = np.abs(np.arange(k)[:, None] - np.arange(k)[None, :])
    weights = np.exp(-np.log(b) * distance)
    return weights / weights.sum(axis=1, keepdims=True)


def linear_variances(channel: np.ndarray, inverse: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per-answer variance (one report) of w·f̂ for each row w of `weights`: (rows, k)."""
    u = np.atleast_2d(weights) @ inverse  # w^T M
    return (u * u) @ channel.T - np.atleast_2d(weights) ** 2


@cache
def _inverse(k: int, epsilon: float) -> np.ndarray:
    return np.linalg.inv(float_channel(k, epsilon).T)


def channel_worst_variances(channel: np.ndarray) -> tuple[float, float]:
    """(worst per-option variance, worst mean-score variance), one report, channel inversion."""
    k = channel.shape[0]
    inverse = np.linalg.inv(channel.T)
    per_option = linear_variances(channel, inverse, np.eye(k))
    mean = linear_variances(channel, inverse, np.arange(1, k + 1, dtype=float))
    return float(per_option.max()), float(mean.max())


def ordinal_mean_variance(cls: type[Mechanism], k: int, epsilon: float) -> float | None:
    """Worst-case variance of the mean score (1..k) with one report, for `auto` on ordinal
    questions; None for mechanisms whose mean-score variance is not derived here."""
    if issubclass(cls, OrdinalExp):
        return cls.mean_worst_case_variance(k, epsilon)
    from .grr import GRR

    if issubclass(cls, GRR):  # one value per report: its channel is p on the diagonal, q off
        p, q = cls.support_probabilities(k, epsilon)
        channel = np.full((k, k), q) + (p - q) * np.eye(k)
        return channel_worst_variances(channel)[1]
    return None


def em_distribution(channel: np.ndarray, observed: np.ndarray,
                    start: np.ndarray | None = None) -> np.ndarray:
    """Maximum-likelihood answer distribution for observed report frequencies (EM).

    When channel inversion gives a distribution (no negative entry), it reproduces the observed
    frequencies exactly and so is the maximum-likelihood estimate: it is returned as is. Else
    EM runs from `start` (it must be positive everywhere: EM never revives a zero).
    """
    k = channel.shape[0]
    inverted = np.linalg.solve(channel.T, observed)
    if np.all(inverted >= -1e-12) and inverted.sum() > 0:  # allow rounding noise around 0
        inverted = np.maximum(inverted, 0.0)
        return inverted / inverted.sum()
    f = np.full(k, 1.0 / k) if start is None else np.asarray(start, dtype=float)
    weights = channel * (observed > 0)[None, :]  # reports never seen contribute nothing
    safe = np.where(observed > 0, observed, 1.0)
    for _ in range(_EM_ITERATIONS):
        updated = f * (weights @ (safe / (channel.T @ f)))
        updated /= updated.sum()
        if np.abs(updated - f).max() < _EM_TOLERANCE:
            return updated
        f = updated
    return f


class OrdinalEstimate(Estimate):
    """An estimate whose consistent view is the EM (maximum-likelihood) distribution."""

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d["consistent_method"] = "em"
        return d


class OrdinalExp(IndexReports, Mechanism):
    name = "ordinal_exp"
    question_types = frozenset({"ordinal"})
    summary = ("Exponential mechanism over ordered options: near options likelier than far ones; "
               "good for the mean score.")

    def __init__(self, epsilon: float, labels: Any, **kwargs: Any) -> None:
        super().__init__(epsilon, labels, **kwargs)
        if self.k > MAX_OPTIONS:
            raise ValueError(f"the ordinal mechanism handles at most {MAX_OPTIONS} options")
        self.base = best_base(self.epsilon, self.k)
        self._certify()

    # --- choosing and planning -------------------------------------------------------------

    @classmethod
    def worst_case_variance(cls, k: int, epsilon: float) -> float:
        """Per-option frequency variance with one report, worst over options and truth."""
        return channel_worst_variances(float_channel(k, epsilon))[0]

    @classmethod
    def mean_worst_case_variance(cls, k: int, epsilon: float) -> float:
        """Variance of the mean score (1..k) with one report, worst case over the truth."""
        return channel_worst_variances(float_channel(k, epsilon))[1]

    @classmethod
    def report_bytes(cls, k: int, epsilon: float) -> int:
        return len(str(k - 1))

    def params(self) -> dict[str, Any]:
        return {"base": str(self.base), "scores": f"1..{self.k}"}

    # --- privacy -----------------------------------------------------------------------------

    @cached_property
    def _weights(self) -> list[int]:
        """Integer weights proportional to b^-d for d = 0..k-1: t^d·s^(k-1-d) for b = s/t."""
        s, t = self.base.numerator, self.base.denominator
        return [t**d * s ** (self.k - 1 - d) for d in range(self.k)]

    def channel(self) -> list[list[Fraction]]:
        """P[report y | answer x] as exact fractions."""
        rows = []
        for x in range(self.k):
            row = [self._weights[abs(x - y)] for y in range(self.k)]
            total = sum(row)
            rows.append([Fraction(w, total) for w in row])
        return rows

    def privacy_loss(self) -> PrivacyLoss | None:
        if self.base <= 1:
            return None
        if self.k <= _EXPLICIT_CHANNEL_MAX_K:
            ratio = channel_ratio(self.channel())
            return None if ratio is None else PrivacyLoss(ratio=ratio)
        return PrivacyLoss(ratio=self.base ** (self.k - 1))  # proven in the module docstring

    # --- the respondent's side -------------------------------------------------------------

    def perturb_index(self, index: int, source: RandomSource) -> int:
        weights = [self._weights[abs(index - y)] for y in range(self.k)]
        draw = source.randbelow(sum(weights))
        for y, w in enumerate(weights):
            if draw < w:
                return y
            draw -= w
        raise AssertionError("unreachable: the draw is below the total weight")

    def perturb_many(self, answers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        answers = np.asarray(answers, dtype=np.int64)
        cdf = np.cumsum(float_channel(self.k, self.epsilon), axis=1)
        out = np.empty(answers.size, dtype=np.int64)
        u = rng.random(answers.size)
        for x in np.unique(answers):
            at = answers == x
            out[at] = np.minimum(np.searchsorted(cdf[x], u[at], side="right"), self.k - 1)
        return out

    # --- the aggregator's side -------------------------------------------------------------

    def estimate(self, aggregate: Aggregate, confidence: float = 0.95) -> Estimate:
        assert isinstance(aggregate, CountAggregate)
        z = z_value(confidence)
        n = aggregate.n
        result = OrdinalEstimate(question=self.question_id, mechanism=self.name,
                                 epsilon=self.epsilon, n=n, confidence=confidence)
        result.notes.append(f"mean score: options scored 1..{self.k} in order; 'consistent' is "
                            "the EM (maximum-likelihood) distribution")
        if n == 0:
            result.categories = empty_value_estimates(self.labels)
            result.groups = [GroupEstimate(name, [self.labels[i] for i in members],
                                           None, None, None, None, None, None)
                             for name, members in self.groups.items()]
            result.mean = MeanEstimate(None, None, None, None, None)
            return result
        channel = float_channel(self.k, self.epsilon)
        inverse = _inverse(self.k, self.epsilon)
        observed = aggregate.counts / n
        f_hat = inverse @ observed
        # EM from a positive point near the projected inversion (EM keeps zeros at zero).
        consistent = em_distribution(channel, observed, 0.9 * norm_sub(f_hat) + 0.1 / self.k)
        per_option = linear_variances(channel, inverse, np.eye(self.k))  # [v, x]
        result.categories = value_estimates(self.labels, f_hat, per_option @ consistent / n,
                                            per_option.max(axis=1) / n, consistent, z)
        for name, members in self.groups.items():
            w = np.zeros(self.k)
            w[list(members)] = 1.0
            result.groups.append(GroupEstimate(
                name=name, options=[self.labels[i] for i in members],
                **self._linear(w, f_hat, consistent, channel, inverse, n, z),
                consistent=float(consistent[list(members)].sum())))
        scores = np.arange(1, self.k + 1, dtype=float)
        result.mean = MeanEstimate(**self._linear(scores, f_hat, consistent, channel, inverse,
                                                  n, z))
        result.notes.append(f"EM (maximum-likelihood) mean score: "
                            f"{float(scores @ consistent):.6g}")
        return result

    @staticmethod
    def _linear(w: np.ndarray, f_hat: np.ndarray, consistent: np.ndarray, channel: np.ndarray,
                inverse: np.ndarray, n: int, z: float) -> dict[str, float]:
        """Estimate, std error, worst-case variance and interval of w·f."""
        per_answer = linear_variances(channel, inverse, w)[0]
        value = float(w @ f_hat)
        se = max(float(per_answer @ consistent), 0.0) ** 0.5 / n**0.5
        return {"estimate": value, "std_error": se, "variance_bound": float(per_answer.max()) / n,
                "ci_low": value - z * se, "ci_high": value + z * se}
