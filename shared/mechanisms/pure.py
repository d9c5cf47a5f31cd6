"""The estimator shared by all "pure" protocols (Wang et al. 2017).

Each report supports a set of values, with P[supports v | answer v] = p* and
P[supports v | answer u != v] = q*. Then f̂_v = (C_v/n - q*)/(p* - q*) is unbiased, and for a
set G of g values holding true frequency f, the variance of the summed estimate is
(f·V_in(g) + (1 - f)·V_out(g)) / (n (p* - q*)^2), where V_in and V_out are the per-report
variances of "how many values of G does this report support" when the answer is in or out of G.
With g = 1 this is the familiar per-option formula.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np

from ..aggregates import Aggregate, SupportAggregate
from ..estimates import (
    Estimate,
    GroupEstimate,
    fill_unanswered,
    norm_sub,
    value_estimates,
    z_value,
)
from .base import Mechanism


def symmetric_index_channel(k: int, p: float, q: float) -> tuple[np.ndarray, np.ndarray]:
    """(A, M) of a report that is the answer with probability p and each other index with q:
    row a of M is (1[y = a] - q)/(p - q), the channel inverse."""
    channel = np.full((k, k), q) + (p - q) * np.eye(k)
    return channel, (np.eye(k) - q) / (p - q)


class PureProtocol(Mechanism):
    """A mechanism whose reports support sets of values; subclasses set `p_star`/`q_star`."""

    p_star: Fraction
    q_star: Fraction

    @classmethod
    @abstractmethod
    def support_probabilities(cls, k: int, epsilon: float) -> tuple[float, float]:
        """(p*, q*) as floats, for planning without building the mechanism."""

    @classmethod
    @abstractmethod
    def set_support_variances(cls, p: float, q: float, k: int, g: int) -> tuple[float, float]:
        """(V_in, V_out): per-report variance of the number of supported values in a set of g."""

    @classmethod
    def variance_at(cls, p: float, q: float, k: int, f: Any, g: int, n: int) -> Any:
        """Variance of the summed estimate over g values with true total frequency f."""
        v_in, v_out = cls.set_support_variances(p, q, k, g)
        return (f * v_in + (1 - f) * v_out) / (n * (p - q) ** 2)

    @classmethod
    def worst_case_variance(cls, k: int, epsilon: float) -> float:
        p, q = cls.support_probabilities(k, epsilon)
        return float(max(cls.variance_at(p, q, k, 0.0, 1, 1),
                         cls.variance_at(p, q, k, 1.0, 1, 1)))

    @classmethod
    def average_variance(cls, k: int, epsilon: float) -> float:
        # Σ_v Var_v = (Σ f_v·V_in + Σ (1 - f_v)·V_out)/(p - q)^2 with Σ f_v = 1: the same for
        # every truth, so this average is exact whatever the data are.
        p, q = cls.support_probabilities(k, epsilon)
        v_in, v_out = cls.set_support_variances(p, q, k, 1)
        return float((v_in + (k - 1) * v_out) / (k * (p - q) ** 2))

    def set_variance(self, f: Any, g: int, n: int) -> Any:
        """This mechanism's variance of a sum over g values holding true frequency f."""
        return self.variance_at(float(self.p_star), float(self.q_star), self.k, f, g, n)

    @abstractmethod
    def support_counts(self, aggregate: Aggregate) -> np.ndarray:
        """C_v: how many reports support each value."""

    def params(self) -> dict[str, Any]:
        return {"p": str(self.p_star), "q": str(self.q_star)}

    def estimate(self, aggregate: Aggregate, confidence: float = 0.95) -> Estimate:
        z = z_value(confidence)
        n = aggregate.n
        result = Estimate(question=self.question_id, mechanism=self.name, epsilon=self.epsilon,
                          n=n, confidence=confidence)
        if n == 0:
            fill_unanswered(result, self.labels, self.groups)
            return result
        p, q = float(self.p_star), float(self.q_star)
        counts = self.support_counts(aggregate).astype(float)
        f_hat = (counts / n - q) / (p - q)
        plug_in = np.clip(f_hat, 0.0, 1.0)
        variance = self.set_variance(plug_in, 1, n)
        bound = np.full(self.k, self._bound(1, n))
        consistent = norm_sub(f_hat)
        result.categories = value_estimates(self.labels, f_hat, variance, bound, consistent, z)
        for name, members in self.groups.items():
            idx = list(members)
            total = float(f_hat[idx].sum())
            var = float(self.set_variance(min(max(total, 0.0), 1.0), len(idx), n))
            se = var ** 0.5
            result.groups.append(GroupEstimate(
                name=name, options=[self.labels[i] for i in idx], estimate=total, std_error=se,
                variance_bound=self._bound(len(idx), n), ci_low=total - z * se,
                ci_high=total + z * se, consistent=float(consistent[idx].sum())))
        return result

    def _bound(self, g: int, n: int) -> float:
        """Worst case over the truth: the variance is linear in f, so take an endpoint."""
        return float(max(self.set_variance(0.0, g, n), self.set_variance(1.0, g, n)))


class SupportCounted:
    """Aggregate plumbing for protocols whose aggregate is the k support counts C_v, updated
    from each report's supported values (`_supports`, `_supports_many`): OLH, unary encodings,
    subset selection."""

    k: int

    def _supports(self, report: Any) -> np.ndarray:
        raise NotImplementedError

    def _supports_many(self, reports: Any) -> tuple[np.ndarray, int]:
        raise NotImplementedError

    def new_aggregate(self) -> SupportAggregate:
        return SupportAggregate(self.k, self._supports, self._supports_many)

    def aggregate_from_dict(self, data: Mapping[str, Any]) -> SupportAggregate:
        return SupportAggregate.from_dict(data, self.k, self._supports, self._supports_many)

    def support_counts(self, aggregate: Aggregate) -> np.ndarray:
        assert isinstance(aggregate, SupportAggregate)
        return aggregate.counts
