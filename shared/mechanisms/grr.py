"""Generalized (k-ary) randomized response, also called direct encoding.

Keep the true answer with probability p = e/(e + k - 1), otherwise report one of the other
k - 1 values uniformly (each with q = 1/(e + k - 1)). e stands for a rational r <= e^ε, so the
channel's exact worst ratio p/q = r proves ε. Report: the value index, an int in [0, k).

Mean score (ordinal questions, options scored w = 1..k). The channel is A = (p - q)·I + q·J
(J all ones) and p + (k - 1)q = 1, so (A^T)^-1 = (I - q·J)/(p - q) and the unbiased mean
w·f̂ has per-answer variance, one report (for answer x, u = (w - q·Σw)/(p - q)):
    Var_x = Σ_y u_y^2 A[x][y] - w_x^2 = q·Σ_y u_y^2 + (p - q)·u_x^2 - w_x^2,
O(k) for any k; the worst x is the bound `auto` and the planner use.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from ..aggregates import Aggregate, CountAggregate
from ..exact import PrivacyLoss, channel_ratio, rational_exp_floor
from ..randomness import RandomSource, bernoulli, choice_except
from .base import IndexReports, JointReading
from .pure import PureProtocol, symmetric_index_channel

# Listing the k x k channel costs k^2 fractions (20 ms at k = 64, per question of a survey of up
# to 500); past this size the closed form below is used (tests check both agree up to k = 64).
_EXPLICIT_CHANNEL_MAX_K = 16


class GRR(IndexReports, PureProtocol):
    name = "grr"
    question_types = frozenset({"binary", "categorical", "ordinal"})
    summary = "k-ary randomized response: report the true value or another one at random."
    supports_instantaneous_layer = True
    joint_reports = JointReading.INDEX
    reports_an_answer = True

    def __init__(self, epsilon: float, labels: Any, **kwargs: Any) -> None:
        super().__init__(epsilon, labels, **kwargs)
        e = rational_exp_floor(self.epsilon)
        self.p_star = e / (e + self.k - 1)
        self.q_star = 1 / (e + self.k - 1)
        self._certify()

    @classmethod
    def support_probabilities(cls, k: int, epsilon: float) -> tuple[float, float]:
        e = float(rational_exp_floor(epsilon))
        return e / (e + k - 1), 1 / (e + k - 1)

    @classmethod
    def mean_score_variance(cls, k: int, epsilon: float) -> float:
        """Worst-case variance of the mean score (1..k), one report (module docstring)."""
        p, q = cls.support_probabilities(k, epsilon)
        w = np.arange(1, k + 1, dtype=float)
        u = (w - q * w.sum()) / (p - q)
        per_answer = q * float(u @ u) + (p - q) * u * u - w * w
        return float(per_answer.max())

    @classmethod
    def set_support_variances(cls, p: float, q: float, k: int, g: int) -> tuple[float, float]:
        # Exactly one value is supported per report: the count in G is a Bernoulli.
        inside = p + (g - 1) * q
        outside = g * q
        return inside * (1 - inside), outside * (1 - outside)

    def channel(self) -> list[list[Fraction]]:
        """P[report y | answer x] as exact fractions."""
        return [[self.p_star if y == x else self.q_star for y in range(self.k)]
                for x in range(self.k)]

    def privacy_loss(self) -> PrivacyLoss | None:
        if self.k <= _EXPLICIT_CHANNEL_MAX_K:
            ratio = channel_ratio(self.channel())
        else:  # every column holds one p and k - 1 q's
            if self.p_star + (self.k - 1) * self.q_star != 1:
                return None
            if self.p_star == 0 or self.q_star == 0:  # some report impossible for some answer
                return None
            ratio = max(self.p_star / self.q_star, self.q_star / self.p_star)
        return None if ratio is None else PrivacyLoss(ratio=ratio)

    def perturb_index(self, index: int, source: RandomSource) -> int:
        if bernoulli(self.p_star, source):
            return index
        return choice_except(self.k, index, source)

    def perturb_many(self, answers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        answers = np.asarray(answers, dtype=np.int64)
        keep = rng.random(answers.size) < float(self.p_star)
        other = rng.integers(0, self.k - 1, size=answers.size)
        other = other + (other >= answers)
        return np.where(keep, answers, other)

    def support_counts(self, aggregate: Aggregate) -> np.ndarray:
        assert isinstance(aggregate, CountAggregate)
        return aggregate.counts

    def index_channel(self) -> tuple[np.ndarray, np.ndarray]:
        return symmetric_index_channel(self.k, float(self.p_star), float(self.q_star))
