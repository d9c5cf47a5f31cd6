"""Hadamard response (Acharya, Sun, Zhang 2019), the one-bit-per-row form, decoded with a fast
Walsh-Hadamard transform.

Let K be the smallest power of two above k and H the K x K Sylvester-Hadamard matrix,
H[r][j] = (-1)^popcount(r & j). Answer x owns row x + 1 and the half C_x = {j : H[x+1][j] = +1}
of the K outputs. The report is one index j in [0, K): uniform in C_x with probability
p = r/(r + 1), uniform in the other half otherwise (r <= e^ε rational).

Exact privacy: P[j | x] is 2p/K on C_x and 2(1 - p)/K off it, so the worst ratio is
p/(1 - p) = r (checked on the explicit channel for small K, in closed form above).

Estimator: the report supports v when j is in C_v. Any two rows' halves meet in K/4 outputs,
so p* = p and q* = 1/2 exactly. The aggregate is the histogram of j (K counts); the support
counts are C_v = (n + W[v + 1])/2 with W = H·histogram, one FWHT: O(n + K log K) in all.

Group sums: with S_v = [j in C_v] = (1 + H_v(j))/2 and H_u·H_v = H_(u+1 xor v+1), the rows
of two values u, v != x correlate exactly when (u+1) xor (v+1) = x + 1. So the variance of a
group's count depends on the group's XOR structure; `estimate` computes it exactly per group
(see `_group_variances`), and `set_support_variances` gives the structure-free case.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from ..aggregates import Aggregate, CountAggregate
from ..estimates import Estimate, z_value
from ..exact import PrivacyLoss, channel_ratio, rational_exp_floor
from ..randomness import RandomSource, bernoulli
from .base import IndexReports, JointReading
from .pure import PureProtocol

# The explicit K-column channel costs k·K fractions; past this the closed form (tests check both
# agree up to K = 64).
_EXPLICIT_CHANNEL_MAX = 16


def fwht(values: np.ndarray) -> np.ndarray:
    """H·values for the Sylvester-Hadamard matrix H (length a power of two)."""
    a = np.array(values, copy=True)
    size = a.size
    h = 1
    while h < size:
        a = a.reshape(-1, 2, h)
        a = np.stack([a[:, 0] + a[:, 1], a[:, 0] - a[:, 1]], axis=1).reshape(size)
        h *= 2
    return a


def _parity(values: np.ndarray) -> np.ndarray:
    return np.bitwise_count(values) & 1


class HR(IndexReports, PureProtocol):
    name = "hr"
    question_types = frozenset({"categorical", "ordinal"})
    summary = "Hadamard response: one index in a Hadamard row's half; fast Walsh-Hadamard decoding."
    joint_reports = JointReading.INDEX

    def __init__(self, epsilon: float, labels: Any, **kwargs: Any) -> None:
        super().__init__(epsilon, labels, **kwargs)
        self.size = self.dimension(self.k)
        r = rational_exp_floor(self.epsilon)
        self.p_star = r / (r + 1)
        self.q_star = Fraction(1, 2)
        self._certify()

    @staticmethod
    def dimension(k: int) -> int:
        """K: the smallest power of two with a row for each of the k values (row 0 unused)."""
        return 1 << k.bit_length()

    @classmethod
    def support_probabilities(cls, k: int, epsilon: float) -> tuple[float, float]:
        r = float(rational_exp_floor(epsilon))
        return r / (r + 1), 0.5

    @classmethod
    def set_support_variances(cls, p: float, q: float, k: int, g: int) -> tuple[float, float]:
        # Each S_v is Bernoulli(1/2) for v != x and Bernoulli(p) for v = x. S_x is uncorrelated
        # with every other S_v, and S_u, S_v (u, v != x) are uncorrelated unless
        # (u+1) xor (v+1) = x+1. For a group without such pairs: g/4 terms (or p(1-p) for x).
        return p * (1 - p) + (g - 1) / 4, g / 4

    @classmethod
    def report_bytes(cls, k: int, epsilon: float) -> int:
        return len(str(cls.dimension(k) - 1))

    def params(self) -> dict[str, Any]:
        return {**super().params(), "dimension": self.size}

    def channel(self) -> list[list[Fraction]]:
        """P[report j | answer x] as exact fractions (K columns)."""
        inside, outside = 2 * self.p_star / self.size, 2 * (1 - self.p_star) / self.size
        return [[outside if ((x + 1) & j).bit_count() & 1 else inside for j in range(self.size)]
                for x in range(self.k)]

    def privacy_loss(self) -> PrivacyLoss | None:
        if self.size <= _EXPLICIT_CHANNEL_MAX:
            ratio = channel_ratio(self.channel())
        else:  # each column holds 2p/K for the values whose half contains it, 2(1-p)/K else
            if not 0 < self.p_star < 1:
                return None
            ratio = max(self.p_star / (1 - self.p_star), (1 - self.p_star) / self.p_star)
        return None if ratio is None else PrivacyLoss(ratio=ratio)

    # --- the respondent's side -------------------------------------------------------------

    def perturb_index(self, index: int, source: RandomSource) -> int:
        row = index + 1
        inside = bernoulli(self.p_star, source)
        j = source.randbelow(self.size)
        # Flipping the row's lowest set bit maps one half onto the other: exact uniform draws.
        if (((row & j).bit_count() & 1) == 0) != inside:
            j ^= row & -row
        return j

    def perturb_many(self, answers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        rows = np.asarray(answers, dtype=np.int64) + 1
        inside = rng.random(rows.size) < float(self.p_star)
        j = rng.integers(0, self.size, size=rows.size, dtype=np.int64)
        wrong = (_parity(rows & j) == 0) != inside
        return np.where(wrong, j ^ (rows & -rows), j)

    # --- the aggregator's side -------------------------------------------------------------

    @property
    def index_count(self) -> int:
        return self.size

    def support_counts(self, aggregate: Aggregate) -> np.ndarray:
        assert isinstance(aggregate, CountAggregate)
        transformed = fwht(aggregate.counts)
        return (aggregate.n + transformed[1:self.k + 1]) // 2

    def _group_variances(self, members: list[int], n: int) -> np.ndarray:
        """Var of the group's summed estimate, one report per answer x (an array over x)/n.

        Var[N | x] = (g - [x in G]·β^2 + β·A(x+1))/4, β = 2p - 1, where A(z) counts ordered
        pairs u, v in G with (u+1) xor (v+1) = z: the XOR autocorrelation, one FWHT pair.
        """
        p = float(self.p_star)
        beta = 2 * p - 1
        indicator = np.zeros(self.size, dtype=np.int64)
        indicator[np.asarray(members) + 1] = 1
        spectrum = fwht(indicator)
        autocorrelation = fwht(spectrum * spectrum) // self.size
        inside = np.zeros(self.k)
        inside[members] = 1.0
        per_answer = (len(members) - inside * beta**2 + beta * autocorrelation[1:self.k + 1]) / 4
        return per_answer / (n * (p - 0.5) ** 2)

    def estimate(self, aggregate: Aggregate, confidence: float = 0.95) -> Estimate:
        result = super().estimate(aggregate, confidence)
        if aggregate.n == 0 or not result.groups:
            return result
        z = z_value(confidence)
        consistent = np.array([c.consistent for c in result.categories or []])
        for group, members in zip(result.groups, self.groups.values(), strict=True):
            per_answer = self._group_variances(list(members), aggregate.n)
            se = float(np.dot(consistent, per_answer)) ** 0.5
            assert group.estimate is not None
            group.std_error = se
            group.variance_bound = float(per_answer.max())
            group.ci_low, group.ci_high = group.estimate - z * se, group.estimate + z * se
        return result

    def index_channel(self) -> tuple[np.ndarray, np.ndarray]:
        """An index report over K outputs: the channel is 2p/K on C_x and 2(1 - p)/K off it,
        and X_a(j) = (S_a(j) - 1/2)/(p - 1/2) with S_a(j) = [j in C_a]."""
        p, size = float(self.p_star), self.size
        rows = np.arange(1, self.k + 1)[:, None]
        outputs = np.arange(size)[None, :]
        support = 1.0 - (np.bitwise_count(rows & outputs) & 1)  # (k, K): S_a(j)
        channel = np.where(support == 1.0, 2 * p / size, 2 * (1 - p) / size)  # (x, j)
        return channel, (support - 0.5) / (p - 0.5)
