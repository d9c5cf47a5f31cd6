"""Sufficient statistics the server keeps per question, so estimating never re-reads reports.

Each aggregate takes one normalized report at a time (`add`), many at once (`add_many`, for
simulation and recomputation), merges with another of the same shape, and round-trips through
a JSON-safe dict.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from .errors import AggregateError


class Aggregate:
    """Base of all aggregates: a kind tag, a count `n` of reports, and exact integer counters."""

    kind: ClassVar[str]
    n: int

    def add(self, report: Any) -> None:
        raise NotImplementedError

    def add_many(self, reports: np.ndarray) -> None:
        raise NotImplementedError

    def merge(self, other: Aggregate) -> None:
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Aggregate:
        raise NotImplementedError

    def _check_kind(self, data_or_other: Any) -> None:
        kind = data_or_other.get("kind") if isinstance(data_or_other, Mapping) else getattr(
            data_or_other, "kind", None)
        if kind != self.kind:
            raise AggregateError(f"expected a {self.kind!r} aggregate, got {kind!r}")


# Stored counters are integers JSON carries exactly; a histogram range is at most this wide.
_MAX_COUNT = 2**53 - 1
_MAX_HISTOGRAM = 2**24


def _mapping(data: Any) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise AggregateError("a stored aggregate must be an object")
    return data


def _int_list(value: Any, length: int | None, name: str) -> np.ndarray:
    if not isinstance(value, list) or (length is not None and len(value) != length):
        raise AggregateError(f"{name} must be a list of {length} integers")
    if any(isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= _MAX_COUNT
           for v in value):
        raise AggregateError(f"{name} must hold non-negative integers below 2^53")
    return np.array(value, dtype=np.int64)


def _count(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _MAX_COUNT:
        raise AggregateError(f"{name} must be a non-negative integer below 2^53")
    return value


class CountAggregate(Aggregate):
    """How many reports fell on each of `size` values (one value per report: GRR, binary RR)."""

    kind = "counts"

    def __init__(self, size: int) -> None:
        self.size = size
        self.n = 0
        self.counts = np.zeros(size, dtype=np.int64)

    def add(self, report: Any) -> None:
        self.counts[int(report)] += 1
        self.n += 1

    def add_many(self, reports: np.ndarray) -> None:
        reports = np.asarray(reports).astype(np.int64, copy=False)
        self.counts += np.bincount(reports, minlength=self.size)
        self.n += int(reports.size)

    def merge(self, other: Aggregate) -> None:
        self._check_kind(other)
        assert isinstance(other, CountAggregate)
        if other.size != self.size:
            raise AggregateError(f"cannot merge counts over {other.size} values into {self.size}")
        self.counts += other.counts
        self.n += other.n

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "n": self.n, "counts": self.counts.tolist()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], size: int | None = None) -> CountAggregate:
        counts = _int_list(_mapping(data).get("counts"), size, "counts")
        agg = cls(len(counts))
        agg._check_kind(data)
        agg.counts = counts
        agg.n = _count(data.get("n"), "n")
        if agg.counts.sum() != agg.n:
            raise AggregateError("counts do not add up to n")
        return agg

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, CountAggregate) and self.n == other.n
                and np.array_equal(self.counts, other.counts))

    __hash__ = None  # type: ignore[assignment]


class HistogramAggregate(Aggregate):
    """Integer reports: their count and exact sum, plus a histogram clamped to [low, high].

    The histogram is optional (`low`/`high` None): wide ranges only estimate the mean.
    """

    kind = "histogram"

    def __init__(self, low: int | None = None, high: int | None = None) -> None:
        self.low = low
        self.high = high
        self.n = 0
        self.total = 0
        size = 0 if low is None or high is None else high - low + 1
        self.counts = np.zeros(size, dtype=np.int64)

    @property
    def has_histogram(self) -> bool:
        return self.low is not None

    def add(self, report: Any) -> None:
        y = int(report)
        self.n += 1
        self.total += y
        if self.low is not None and self.high is not None:
            self.counts[min(max(y, self.low), self.high) - self.low] += 1

    def add_many(self, reports: np.ndarray) -> None:
        reports = np.asarray(reports, dtype=np.int64)
        self.n += int(reports.size)
        self.total += int(reports.sum(dtype=object)) if reports.size else 0
        if self.low is not None and self.high is not None:
            clamped = np.clip(reports, self.low, self.high) - self.low
            self.counts += np.bincount(clamped, minlength=self.counts.size)

    def merge(self, other: Aggregate) -> None:
        self._check_kind(other)
        assert isinstance(other, HistogramAggregate)
        if (other.low, other.high) != (self.low, self.high):
            raise AggregateError("cannot merge histograms over different ranges")
        self.n += other.n
        self.total += other.total
        self.counts += other.counts

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "n": self.n, "total": self.total, "low": self.low,
                "high": self.high, "counts": self.counts.tolist()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> HistogramAggregate:
        low, high = _mapping(data).get("low"), data.get("high")
        if (low is None) != (high is None):
            raise AggregateError("low and high are both set or both null")
        for name, v in (("low", low), ("high", high)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
                raise AggregateError(f"{name} must be an integer or null")
        if low is not None and not 0 <= high - low < _MAX_HISTOGRAM:
            raise AggregateError(f"histogram range [{low}, {high}] is empty or too wide")
        agg = cls(low, high)
        agg._check_kind(data)
        if agg.has_histogram:
            agg.counts = _int_list(data.get("counts"), agg.counts.size, "counts")
        agg.n = _count(data.get("n"), "n")
        total = data.get("total")
        if isinstance(total, bool) or not isinstance(total, int):
            raise AggregateError("total must be an integer")
        agg.total = total
        if agg.has_histogram and agg.counts.sum() != agg.n:
            raise AggregateError("histogram does not add up to n")
        return agg

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, HistogramAggregate) and self.n == other.n
                and self.total == other.total and (self.low, self.high) == (other.low, other.high)
                and np.array_equal(self.counts, other.counts))

    __hash__ = None  # type: ignore[assignment]


class SupportAggregate(Aggregate):
    """How many reports support each of `size` values, for protocols whose report supports a
    set of values (unary encoding, local hashing, subset selection).

    The counts are all the estimator needs; the mechanism passes how to read its reports:
    `supports(report)` gives the distinct supported indices of one normalized report,
    `supports_many(reports)` the (summed counts, number of reports) of many. Counts need not
    add up to n.
    """

    kind = "supports"

    def __init__(self, size: int, supports: Any = None, supports_many: Any = None) -> None:
        self.size = size
        self.n = 0
        self.counts = np.zeros(size, dtype=np.int64)
        self._supports = supports
        self._supports_many = supports_many

    def add(self, report: Any) -> None:
        if self._supports is None:
            raise AggregateError("this aggregate was built without a report reader")
        self.counts[np.asarray(self._supports(report), dtype=np.int64)] += 1
        self.n += 1

    def add_many(self, reports: Any) -> None:
        if self._supports_many is None:
            raise AggregateError("this aggregate was built without a report reader")
        counts, n = self._supports_many(reports)
        self.counts += np.asarray(counts, dtype=np.int64)
        self.n += int(n)

    def merge(self, other: Aggregate) -> None:
        self._check_kind(other)
        assert isinstance(other, SupportAggregate)
        if other.size != self.size:
            raise AggregateError(f"cannot merge supports over {other.size} values into "
                                 f"{self.size}")
        self.counts += other.counts
        self.n += other.n

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "n": self.n, "counts": self.counts.tolist()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], size: int | None = None, supports: Any = None,
                  supports_many: Any = None) -> SupportAggregate:
        counts = _int_list(_mapping(data).get("counts"), size, "counts")
        agg = cls(len(counts), supports, supports_many)
        agg._check_kind(data)
        agg.counts = counts
        agg.n = _count(data.get("n"), "n")
        if counts.size and int(counts.max()) > agg.n:
            raise AggregateError("a support count exceeds n")
        return agg

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, SupportAggregate) and self.n == other.n
                and np.array_equal(self.counts, other.counts))

    __hash__ = None  # type: ignore[assignment]
