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
The channel is checked exactly in Fractions for k <= 16 and by the closed form above beyond
(the two agree exactly wherever both are computed; tests check it up to k = 100). The explicit
check costs k² fractions of ~k·40-bit integers: at k = 64 it took 0.2 s per question, work any
survey of 500 questions would multiply.

Estimation (report = option index, aggregate = counts), all in O(k) per estimate:
- The channel is A = D^-1·K with K[x][y] = ρ^|x-y| (ρ = 1/b, a Kac-Murdock-Szegő matrix) and
  D = diag(Z). K^-1 is tridiagonal: (1/(1 - ρ²))·T with T = 1 at both ends of the diagonal,
  1 + ρ² inside, -ρ next to it. So M = (A^T)^-1 = D·K^-1 costs O(k) to apply, and K·v for
  v >= 0 costs O(k) too (two running sums of ρ^-y·v_y, no cancellation: v is non-negative).
- Channel inversion: f̂ = M·c/n, unbiased. For a fixed population,
  Var[w·f̂] = Σ_x f_x (Σ_y u_y² A[x][y] - w_x²)/n with u = K^-1·(Z∘w) (= w^T M), for any
  weights w (an option, a group, or the scores 1..k for the mean): linear in f, plug in the
  EM distribution for the std error, take the worst x for the bound.
- One option v: u is Z_v times column v of K^-1, non-zero at v-1, v, v+1 only, so its
  per-answer variance is a sum of three terms ρ^|x-j|/Z_x (j = v-1, v, v+1). Each term falls
  as x moves away from j (m -> b^m·Z_m is non-decreasing, see above, and Z is symmetric), so
  the worst x lies in {v-1, v, v+1}: the per-option bound is exact in O(1) per option.
- EM (the maximum-likelihood distribution) is the consistent view (non-negative, sums to 1).
- The mean score (options scored 1..k): unbiased s·f̂ with its std error and interval.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cached_property, lru_cache
from typing import Any

import numpy as np

from ..aggregates import Aggregate, CountAggregate
from ..estimates import (
    Estimate,
    GroupEstimate,
    MeanEstimate,
    fill_unanswered,
    norm_sub,
    value_estimates,
    z_value,
)
from ..exact import PrivacyLoss, channel_ratio, exp_lower, simplest_between
from ..question_types.words import EM_NOTE, score_note
from ..randomness import RandomSource
from .base import IndexReports, JointReading, Mechanism

_EXPLICIT_CHANNEL_MAX_K = 16
# EM's budget in passes over the channel (each O(k), ~40 µs at k = 1024): ~25 ms CPU at most
# (bench_ordinal.py). Against the 1000 plain EM steps it replaces, the likelihood gap left at
# the end is smaller in 91% of 46 test cases (median 4.6e-5 vs 7.0e-4 nats per report).
_EM_PASSES = 600
_EM_TOLERANCE = 1e-9  # nats per report below the maximum likelihood
_BACKTRACKS = 20


@lru_cache(maxsize=256)
def best_base(epsilon: float, k: int) -> Fraction:
    """A short rational b with b^(k-1) <= e^ε, within 2^-32/(k-1) (relative) of the largest."""
    top = exp_lower(Fraction(epsilon) / (k - 1))  # <= e^(ε/(k-1))
    # Strictly below top by 2^-64: b^(k-1) then stays under the certified bound on e^ε.
    return simplest_between(top * (1 - Fraction(1, 2**32 * (k - 1))),
                            top * (1 - Fraction(1, 2**64)))


class Channel:
    """A[x][y] = ρ^|x-y|/Z_x in floats, kept in O(k) (see the module docstring)."""

    def __init__(self, k: int, base: Fraction) -> None:
        self.k = k
        self.log_base = math.log1p(float(base - 1))  # ln b, accurate when b is near 1
        steps = np.arange(k, dtype=float) * self.log_base
        self.up = np.exp(-steps)  # ρ^x: >= e^-ε, no underflow (b^(k-1) <= e^ε)
        self.down = np.exp(steps)  # ρ^-x: <= e^ε
        self.rho = math.exp(-self.log_base)
        self.one_minus_rho = -math.expm1(-self.log_base)
        self.one_minus_rho2 = -math.expm1(-2 * self.log_base)
        self.z = self.kms(np.ones(k))

    def kms(self, v: np.ndarray) -> np.ndarray:
        """K·v for a non-negative v (rows of K times v: two running sums, O(k))."""
        left = self.up * np.cumsum(self.down * v)
        right = self.down * np.cumsum((self.up * v)[::-1])[::-1]
        return left + right - v

    def kms_inverse(self, v: np.ndarray) -> np.ndarray:
        """K^-1·v: the tridiagonal T/(1 - ρ²), written as (1-ρ)²·v + ρ·(second difference)
        inside (and (1-ρ)·v + ρ·(first difference) at the ends) to keep digits when ρ ~ 1."""
        v = np.asarray(v, dtype=float)
        out = np.empty_like(v)
        a, r = self.one_minus_rho, self.rho
        out[1:-1] = a * a * v[1:-1] + r * ((v[1:-1] - v[:-2]) + (v[1:-1] - v[2:]))
        out[0] = a * v[0] + r * (v[0] - v[1])
        out[-1] = a * v[-1] + r * (v[-1] - v[-2])
        return out / self.one_minus_rho2

    def invert(self, observed: np.ndarray) -> np.ndarray:
        """M·observed = (A^T)^-1·observed: the unbiased answer distribution."""
        return self.z * self.kms_inverse(observed)

    def reports(self, f: np.ndarray) -> np.ndarray:
        """A^T·f: the report distribution for an answer distribution f >= 0."""
        return self.kms(f / self.z)

    def pull_back(self, r: np.ndarray) -> np.ndarray:
        """A·r for r >= 0 (EM's update)."""
        return self.kms(r) / self.z

    def dense(self) -> np.ndarray:
        """The k x k matrix A (tests and small k only)."""
        distance = np.abs(np.arange(self.k)[:, None] - np.arange(self.k)[None, :])
        return np.exp(-self.log_base * distance) / self.z[:, None]

    def linear_variances(self, w: np.ndarray) -> np.ndarray:
        """Per-answer variance (one report) of w·f̂, for each answer x: (k,)."""
        u = self.kms_inverse(self.z * w)
        # E[X²] - (E X)²: at large ε the two nearly cancel, and rounding must not leave a
        # variance below 0 (it is a variance: 0 is its exact floor).
        return np.maximum(self.kms(u * u) / self.z - w * w, 0.0)

    @cached_property
    def _option_terms(self) -> np.ndarray:
        """(k, 3): u_j² for j = v-1, v, v+1 when w is option v (0 where j is outside)."""
        k, scale = self.k, self.z / self.one_minus_rho2
        diagonal = np.full(k, 1 + self.rho**2)
        diagonal[[0, -1]] = 1.0
        terms = np.zeros((k, 3))
        terms[:, 1] = (scale * diagonal) ** 2
        terms[1:, 0] = (scale[1:] * self.rho) ** 2
        terms[:-1, 2] = (scale[:-1] * self.rho) ** 2
        return terms

    def option_variances(self, f: np.ndarray) -> np.ndarray:
        """Σ_x f_x·Var_x[f̂_v] for every option v (one report): the plug-in variance."""
        h = np.pad(self.kms(f / self.z), 1)  # h_j = Σ_x ρ^|x-j| f_x/Z_x, 0 outside
        t = self._option_terms
        return np.maximum(t[:, 0] * h[:-2] + t[:, 1] * h[1:-1] + t[:, 2] * h[2:] - f, 0.0)

    @cached_property
    def option_bounds(self) -> np.ndarray:
        """max_x Var_x[f̂_v] for every option v (one report); the worst x is v-1, v or v+1."""
        k, t = self.k, self._option_terms
        best = np.full(k, -np.inf)
        v = np.arange(k)
        for shift in (-1, 0, 1):  # x = v + shift
            x = v + shift
            ok = (x >= 0) & (x < k)
            total = np.zeros(k)
            for j, column in zip((-1, 0, 1), t.T, strict=True):
                total += column * self.rho ** abs(shift - j)
            value = total[ok] / self.z[x[ok]] - (shift == 0)
            best[ok] = np.maximum(best[ok], value)
        return np.maximum(best, 0.0)  # a variance; rounding at large ε must not go below 0


@lru_cache(maxsize=32)
def channel(k: int, epsilon: float) -> Channel:
    """The float channel for (k, ε), built in O(k) and cached."""
    return Channel(k, best_base(epsilon, k))


def likelihood_gap(chan: Channel, observed: np.ndarray, f: np.ndarray) -> float:
    """How far (nats per report) the log-likelihood of f may lie below the maximum: with
    g = A·(observed/A^T f), concavity gives L(f*) - L(f) <= max_x g_x - 1 (Σ_x f_x g_x = 1).
    0 at the maximum-likelihood distribution."""
    g = chan.pull_back(observed / chan.reports(f))  # A^T f > 0: every A[x][y] > 0
    return max(float(g.max()) - 1.0, 0.0)


def em_distribution(chan: Channel, observed: np.ndarray,
                    start: np.ndarray | None = None) -> np.ndarray:
    """Maximum-likelihood answer distribution for observed report frequencies (EM).

    When channel inversion gives a distribution (no negative entry), it reproduces the observed
    frequencies exactly and so is the maximum-likelihood estimate: it is returned as is. Else
    EM runs from `start` (it must be positive everywhere: EM never revives a zero) until the
    likelihood is within `_EM_TOLERANCE` per report of the maximum (`likelihood_gap`) or
    `_EM_PASSES` passes over the channel are spent, whichever comes first: the result is then
    the best distribution found, as close to the maximum as `likelihood_gap` says.

    Plain EM converges slowly here (the maximum often lies on the simplex's boundary), so it is
    accelerated with SQUAREM (Varadhan & Roland 2008, scheme S3): two EM steps give r and v, the
    extrapolation f - 2αr + α²v (α = -|r|/|v| <= -1, halved toward -1 until every entry stays
    positive) is followed by a stabilizing EM step, and kept only if its likelihood is no worse
    than the two plain steps'. Its fixed points are EM's.
    """
    k = chan.k
    inverted = chan.invert(observed)
    if np.all(inverted >= -1e-12) and inverted.sum() > 0:  # allow rounding noise around 0
        inverted = np.maximum(inverted, 0.0)
        return inverted / inverted.sum()
    f = np.full(k, 1.0 / k) if start is None else np.asarray(start, dtype=float)
    # Every A[x][y] > 0, so A^T f > 0 for f > 0: reports never seen just contribute 0.
    passes = 0

    def step(g: np.ndarray) -> tuple[np.ndarray, float]:
        """One EM step, and the likelihood gap of g (the same pass computes both)."""
        nonlocal passes
        passes += 1
        gradient = chan.pull_back(observed / chan.reports(g))
        updated = g * gradient
        return updated / updated.sum(), float(gradient.max()) - 1.0

    def loglik(g: np.ndarray) -> float:
        nonlocal passes
        passes += 1
        return float(observed @ np.log(chan.reports(g)))

    while passes < _EM_PASSES:
        f1, gap = step(f)
        if gap <= _EM_TOLERANCE:
            return f
        r = f1 - f
        f2, _ = step(f1)
        v = f2 - f1 - r
        v_norm = math.sqrt(float(v @ v))
        if v_norm == 0.0:
            f = f2
            continue
        alpha = min(-math.sqrt(float(r @ r)) / v_norm, -1.0)
        for _ in range(_BACKTRACKS):
            candidate = f - 2 * alpha * r + alpha * alpha * v
            if np.all(candidate > 0):
                break
            alpha = (alpha - 1) / 2  # toward -1, where the candidate is f2
        else:
            candidate = f2
        accelerated, _ = step(candidate / candidate.sum())
        f = accelerated if loglik(accelerated) >= loglik(f2) else f2
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
    joint_reports = JointReading.INDEX
    reports_an_answer = True

    # Estimation is O(k) (module docstring); the exact channel check beyond k = 64 is closed
    # form. What bounds k is the device: a secure draw walks k big-integer weights.
    max_options = 1024

    def __init__(self, epsilon: float, labels: Any, **kwargs: Any) -> None:
        super().__init__(epsilon, labels, **kwargs)
        self.base = best_base(self.epsilon, self.k)
        self._certify()

    # --- choosing and planning -------------------------------------------------------------

    @classmethod
    def worst_case_variance(cls, k: int, epsilon: float) -> float:
        """Per-option frequency variance with one report, worst over options and truth."""
        return float(channel(k, epsilon).option_bounds.max())

    @classmethod
    def mean_score_variance(cls, k: int, epsilon: float) -> float:
        """Variance of the mean score (1..k) with one report, worst case over the truth."""
        scores = np.arange(1, k + 1, dtype=float)
        return float(channel(k, epsilon).linear_variances(scores).max())

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
        chan = channel(self.k, self.epsilon)
        values = np.arange(self.k)
        out = np.empty(answers.size, dtype=np.int64)
        u = rng.random(answers.size)
        for x in np.unique(answers):
            at = answers == x
            cdf = np.cumsum(np.exp(-chan.log_base * np.abs(values - x))) / chan.z[x]
            out[at] = np.minimum(np.searchsorted(cdf, u[at], side="right"), self.k - 1)
        return out

    # --- the aggregator's side -------------------------------------------------------------

    def estimate(self, aggregate: Aggregate, confidence: float = 0.95) -> Estimate:
        assert isinstance(aggregate, CountAggregate)
        z = z_value(confidence)
        n = aggregate.n
        result = OrdinalEstimate(question=self.question_id, mechanism=self.name,
                                 epsilon=self.epsilon, n=n, confidence=confidence)
        result.notes += [score_note(self.k), EM_NOTE]
        if n == 0:
            fill_unanswered(result, self.labels, self.groups)
            result.mean = MeanEstimate(None, None, None, None, None)
            return result
        chan = channel(self.k, self.epsilon)
        observed = aggregate.counts / n
        f_hat = chan.invert(observed)
        consistent = self._em(chan, observed, f_hat)
        result.categories = value_estimates(self.labels, f_hat,
                                            chan.option_variances(consistent) / n,
                                            chan.option_bounds / n, consistent, z)
        for name, members in self.groups.items():
            w = np.zeros(self.k)
            w[list(members)] = 1.0
            result.groups.append(GroupEstimate(
                name=name, options=[self.labels[i] for i in members],
                **self._linear(w, f_hat, consistent, chan, n, z),
                consistent=float(consistent[list(members)].sum())))
        scores = np.arange(1, self.k + 1, dtype=float)
        result.mean = MeanEstimate(**self._linear(scores, f_hat, consistent, chan, n, z))
        result.notes.append(f"EM (maximum-likelihood) mean score: "
                            f"{float(scores @ consistent):.6g}")
        gap = likelihood_gap(chan, observed, consistent)
        if gap > _EM_TOLERANCE:
            result.notes.append(f"EM stopped within {gap:.2g} nats per report of the maximum "
                                f"likelihood (its budget of {_EM_PASSES} passes)")
        return result

    def consistent_distribution(self, f_hat: np.ndarray) -> np.ndarray:
        """The maximum-likelihood distribution (EM) for the report frequencies that unbiased
        estimates `f_hat` imply (A^T·f̂, the channel's image): the plain estimate's
        'consistent' for its own counts, and a weighted (pseudo-likelihood) one for design-based
        estimates (shared/estimand.py)."""
        chan = channel(self.k, self.epsilon)
        f_hat = np.asarray(f_hat, dtype=float)
        observed = np.maximum(chan.reports(f_hat), 0.0)
        return self._em(chan, observed / observed.sum(), f_hat)

    def _em(self, chan: Channel, observed: np.ndarray, f_hat: np.ndarray) -> np.ndarray:
        # EM from a positive point near the projected inversion (EM keeps zeros at zero).
        return em_distribution(chan, observed, 0.9 * norm_sub(f_hat) + 0.1 / self.k)

    @staticmethod
    def _linear(w: np.ndarray, f_hat: np.ndarray, consistent: np.ndarray, chan: Channel,
                n: int, z: float) -> dict[str, float]:
        """Estimate, std error, worst-case variance and interval of w·f."""
        per_answer = chan.linear_variances(w)
        value = float(w @ f_hat)
        se = max(float(per_answer @ consistent), 0.0) ** 0.5 / n**0.5
        return {"estimate": value, "std_error": se, "variance_bound": float(per_answer.max()) / n,
                "ci_low": value - z * se, "ci_high": value + z * se}

    def index_channel(self) -> tuple[np.ndarray, np.ndarray]:
        """The dense k x k channel and its inverse (crosstabs take k <= 1024)."""
        dense = channel(self.k, self.epsilon).dense()
        return dense, np.linalg.inv(dense.T)
