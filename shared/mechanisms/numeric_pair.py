"""A number's mean and its distribution from one respondent: two reports of the same answer,
each by its own mechanism at its share of ε (sequential composition).

A `decimal` question asked for `estimate = ["mean", "distribution"]` splits its ε between a mean
mechanism (duchi, piecewise, hybrid or geometric: the lowest variance of the mean) and
square_wave (the distribution, with EMS). The device randomizes its answer twice, independently,
and sends the pair [mean report, distribution report].

Privacy. For answers x, x' and a report pair (y1, y2),
P[y1, y2 | x] / P[y1, y2 | x'] = (P1[y1|x]/P1[y1|x']) · (P2[y2|x]/P2[y2|x']) <= r1 · r2, the
product of the parts' exact worst ratios, each certified when its part is built; the pair's
loss is that product (a rational ratio, or a ratio times e^(rational log) where the mean part is
geometric), checked exactly against the claimed ε = ε1 + ε2 (`exact.WorstOfLosses`).

Estimates: the mean part's mean (its unbiased estimator, s.e., worst-case bound, interval) is
the question's mean; the distribution part's EMS distribution is its distribution (its own
unbiased mean is a second, noisier estimate of the same mean, not shown).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from ..aggregates import Aggregate, _mapping
from ..errors import AggregateError, ReportError
from ..estimates import Estimate
from ..exact import PrivacyLoss, WorstOfLosses
from ..randomness import RandomSource
from .base import JointReading, Mechanism, ReportValues, plain


class PairAggregate(Aggregate):
    """The two parts' aggregates, side by side."""

    kind = "pair"

    def __init__(self, mean: Aggregate, distribution: Aggregate) -> None:
        self.parts = (mean, distribution)
        self.n = 0

    def add(self, report: Any) -> None:
        for part, value in zip(self.parts, report, strict=True):
            part.add(value)
        self.n += 1

    def add_many(self, reports: np.ndarray) -> None:
        reports = np.asarray(reports).reshape(-1, 2)
        for i, part in enumerate(self.parts):
            part.add_many(reports[:, i])
        self.n += int(reports.shape[0])

    def merge(self, other: Aggregate) -> None:
        self._check_kind(other)
        assert isinstance(other, PairAggregate)
        for mine, theirs in zip(self.parts, other.parts, strict=True):
            mine.merge(theirs)
        self.n += other.n

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "n": self.n, "mean": self.parts[0].to_dict(),
                "distribution": self.parts[1].to_dict()}

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, PairAggregate) and self.n == other.n
                and all(a == b for a, b in zip(self.parts, other.parts, strict=True)))

    __hash__ = None  # type: ignore[assignment]


class MeanAndDistribution(Mechanism):
    """[mean report, distribution report] of one answer (module docstring)."""

    name = "mean_and_distribution"
    joint_reports = JointReading.VALUE  # the mean part's report (`report_values`)
    question_types: ClassVar[frozenset[str]] = frozenset({"decimal", "integer"})
    summary = ("A number sent twice, independently: by a mean mechanism and by square_wave, "
               "at halves of ε (sequential composition); the mean and the distribution.")

    def __init__(self, mean: Mechanism, distribution: Mechanism, *,
                 question_id: str = "") -> None:
        if mean.k != distribution.k:
            raise ValueError("both parts must be built on the same answer grid")
        self.parts = (mean, distribution)
        super().__init__(mean.epsilon + distribution.epsilon, range(mean.k),
                         question_id=question_id)
        self.scale = getattr(mean, "scale", None)
        self._certify()

    @property
    def mean_part(self) -> Mechanism:
        return self.parts[0]

    @property
    def distribution_part(self) -> Mechanism:
        return self.parts[1]

    @classmethod
    def misfit(cls, k: int, epsilon: float, low: int = 0) -> Any:
        return None  # each part checks its own limits when it is built

    @classmethod
    def describe_limits(cls) -> str:
        return "its parts' limits, each at half of ε"

    @classmethod
    def worst_case_variance(cls, k: int, epsilon: float) -> float:
        raise NotImplementedError("the pair's variance is its mean part's (numeric_auto)")

    def params(self) -> dict[str, Any]:
        mean, distribution = self.parts
        return {"mean": mean.name, "mean_epsilon": mean.epsilon,
                "mean_params": mean.params(), "distribution": distribution.name,
                "distribution_epsilon": distribution.epsilon,
                "distribution_params": distribution.params()}

    def privacy_loss(self) -> WorstOfLosses | None:
        """The product of the parts' exact worst losses (module docstring)."""
        ratio, log = Fraction(1), Fraction(0)
        for part in self.parts:
            loss = part.privacy_loss()
            if loss is None:
                return None
            if isinstance(loss, PrivacyLoss) and loss.ratio is not None:
                ratio *= loss.ratio
            elif isinstance(loss, PrivacyLoss) and loss.log is not None:
                log += loss.log
            else:
                return None
        return WorstOfLosses(terms=((ratio, log),))

    # --- the respondent's side -------------------------------------------------------------

    def encode(self, answer: Any) -> int:
        return self.parts[0].encode(answer)

    def perturb_index(self, index: int, source: RandomSource) -> list[Any]:
        return [part.perturb_index(index, source) for part in self.parts]

    def perturb_many(self, answers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return np.stack([part.perturb_many(answers, rng) for part in self.parts], axis=1)

    # --- the aggregator's side ---------------------------------------------------------------

    @property
    def report_width(self) -> int:
        return 2

    def validate_report(self, report: Any) -> list[Any]:
        if isinstance(report, str | bytes) or not isinstance(report, Sequence | np.ndarray) \
                or len(report) != 2:
            raise ReportError("a report is a pair [mean report, distribution report]")
        return [plain(part.validate_report(value))
                for part, value in zip(self.parts, report, strict=True)]

    def validate_reports(self, reports: Sequence[Any]) -> list[Any]:
        return [self.validate_report(r) for r in reports]

    def new_aggregate(self) -> PairAggregate:
        return PairAggregate(*(part.new_aggregate() for part in self.parts))

    def aggregate_from_dict(self, data: Mapping[str, Any]) -> PairAggregate:
        data = _mapping(data)
        agg = self.new_aggregate()
        agg._check_kind(data)
        parts = tuple(part.aggregate_from_dict(_mapping(data.get(key)))
                      for part, key in zip(self.parts, ("mean", "distribution"), strict=True))
        agg.parts = parts
        n = data.get("n")
        if isinstance(n, bool) or not isinstance(n, int) or any(p.n != n for p in parts):
            raise AggregateError("a pair's parts must count the same reports as its n")
        agg.n = n
        return agg

    def estimate(self, aggregate: Aggregate, confidence: float = 0.95) -> Estimate:
        assert isinstance(aggregate, PairAggregate)
        mean = self.parts[0].estimate(aggregate.parts[0], confidence)
        distribution = self.parts[1].estimate(aggregate.parts[1], confidence)
        return Estimate(question=self.question_id, mechanism=self.name, epsilon=self.epsilon,
                        n=aggregate.n, confidence=confidence, mean=mean.mean,
                        distribution=distribution.distribution,
                        quantiles=distribution.quantiles,
                        notes=[f"the mean is {mean.mechanism}'s at epsilon "
                               f"{mean.epsilon:g}; the distribution is {distribution.mechanism}'s "
                               f"at epsilon {distribution.epsilon:g} (one answer sent twice: "
                               f"epsilon {self.epsilon:g} in all)", *mean.notes,
                               *distribution.notes],
                        consistent_method=distribution.consistent_method)

    def value_noise(self, reports: Any) -> np.ndarray | None:
        """The mean part's (its pseudo-values are the pair's)."""
        pairs = np.asarray(reports).reshape(-1, 2)
        return self.parts[0].value_noise(pairs[:, 0])

    def report_values(self) -> ReportValues:
        """A crosstab reads the mean part's report (its pseudo-values are the pair's)."""
        return self.parts[0].report_values()

    def value_keys(self, reports: Any) -> np.ndarray:
        """The mean part's key of each [mean report, distribution report] pair."""
        return self.parts[0].value_keys(np.asarray(reports).reshape(-1, 2)[:, 0])

    def window_reports(self) -> Any:
        """The distribution part's, read off each pair's second report."""
        inner = self.parts[1].window_reports()
        if inner is None:
            return None
        keys = inner.keys
        return replace(inner, keys=lambda reports: keys(np.asarray(reports).reshape(-1, 2)[:, 1]))

    def pseudo_values(self, reports: Any) -> np.ndarray:
        """The mean part's pseudo-values: each report's unbiased value, (n, 1)."""
        pairs = np.asarray(reports).reshape(-1, 2)
        return self.parts[0].pseudo_values(pairs[:, 0])

    def distribution_columns(self, reports: Any) -> Any:
        """The distribution part's (its reports are the pairs' second entries)."""
        pairs = np.asarray(reports).reshape(-1, 2)
        return self.parts[1].distribution_columns(pairs[:, 1])
