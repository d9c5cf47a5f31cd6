"""An exact answer scale over a number mechanism: grid index j stands for origin + j·step.

The number mechanisms (duchi, piecewise, hybrid, geometric, square_wave) are built on a range of
integer labels. A question whose answers are decimals on a grid (the `decimal` type: min,
min + resolution, ..., max) builds them on the indices 0..k-1 and wraps them with its scale
(`on_scale`): the wrapper turns an exact answer into its index (refusing anything off the grid or
outside the range, never rounding: rounding to the resolution is the device's, before), and turns
every number an estimate states back into the question's units (the mean, its std error, its
worst-case bound, its interval; the distribution's values; each report's pseudo-value). The
channel, its certificate and its sampler are the wrapped mechanism's, unchanged.

A mechanism knows nothing of question types: the wrapper is told the scale, not the type.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from functools import cache, cached_property
from typing import Any

import numpy as np

from ..aggregates import Aggregate
from ..errors import AnswerError
from ..estimates import Estimate, MeanEstimate, ValueEstimate
from .base import JointReading, Mechanism, ReportValues


@dataclass(frozen=True)
class AnswerScale:
    """Grid index j <-> the value origin + j·step (exact rationals), j = 0..k-1."""

    origin: Fraction
    step: Fraction
    k: int

    def value(self, index: int) -> Fraction:
        """Grid value `index` in the question's units."""
        return self.origin + index * self.step

    @property
    def high(self) -> Fraction:
        return self.value(self.k - 1)

    def index(self, answer: Any, question_id: str = "") -> int:
        """The grid index of an exact answer (int, Decimal, Fraction, a decimal string, or a
        float read as its shortest decimal); AnswerError off the grid or outside the range."""
        where = f" for {question_id!r}" if question_id else ""
        exact = exact_number(answer, f"the answer{where}")
        units = (exact - self.origin) / self.step
        if units.denominator != 1:
            raise AnswerError(f"{answer} is not on the answer grid {_text(self.origin)}, "
                              f"{_text(self.origin + self.step)}, ...{where} (round it to the "
                              f"resolution {_text(self.step)} first)")
        if not 0 <= units.numerator < self.k:
            raise AnswerError(f"{answer} is outside [{_text(self.origin)}, {_text(self.high)}]"
                              f"{where}; it is refused, not clamped")
        return units.numerator

    def to_units(self, x: float) -> float:
        """An index-scale number (a mean, a quantile) in the question's units."""
        return float(self.origin) + float(self.step) * x

    def spread(self, x: float) -> float:
        """An index-scale spread (a std error) in the question's units."""
        return float(self.step) * x

    def to_index(self, x: float) -> float:
        """A number in the question's units on the index scale (bins' edges)."""
        return (x - float(self.origin)) / float(self.step)


def exact_number(value: Any, what: str) -> Fraction:
    """An exact rational from an int, Decimal, Fraction, decimal string, or a float read as its
    shortest decimal (0.1 is 1/10); AnswerError for anything else or a non-finite number."""
    if isinstance(value, bool) or not isinstance(value, int | float | Fraction | Decimal | str):
        raise AnswerError(f"{what} must be a number")
    try:
        if isinstance(value, float):
            return Fraction(Decimal(repr(value)))
        if isinstance(value, str):
            return Fraction(Decimal(value.strip()))
        return Fraction(value)
    except (InvalidOperation, ValueError, OverflowError, ZeroDivisionError):
        raise AnswerError(f"{what} must be a finite number") from None


def _text(x: Fraction) -> str:
    """An exact grid value as decimal text (the grid's values are terminating decimals)."""
    d = Decimal(x.numerator) / Decimal(x.denominator)
    text = format(d.normalize(), "f")
    return text


def scale_mean(mean: MeanEstimate | None, scale: AnswerScale) -> MeanEstimate | None:
    """A mean estimate on the index scale, in the question's units."""
    if mean is None:
        return None

    def at(x: float | None) -> float | None:
        return None if x is None else scale.to_units(x)

    def spread(x: float | None) -> float | None:
        return None if x is None else scale.spread(x)

    bound = mean.variance_bound
    return MeanEstimate(estimate=at(mean.estimate), std_error=spread(mean.std_error),
                        variance_bound=None if bound is None else bound * float(scale.step) ** 2,
                        ci_low=at(mean.ci_low), ci_high=at(mean.ci_high))


def value_label(label: Any, scale: AnswerScale) -> Any:
    """A distribution row's value (an index, or 'a..b' for indices sharing a grid point) in
    the question's units."""
    if isinstance(label, int | np.integer):
        return _number(scale.value(int(label)))
    if isinstance(label, str) and ".." in label:
        a, b = label.split("..", 1)
        return f"{_number(scale.value(int(a)))}..{_number(scale.value(int(b)))}"
    return label


def _number(x: Fraction) -> int | float:
    """An exact grid value as a JSON number: an int when whole, else the float of its decimal."""
    return x.numerator if x.denominator == 1 else float(Decimal(_text(x)))


class Scaled:
    """The mixin `on_scale` puts before a number mechanism (module docstring)."""

    scale: AnswerScale
    # A crosstab reads the number's unbiased value in the question's units (its mean among
    # each category of the other side), whatever the wrapped mechanism's own kind: bins on
    # the index scale would not be the question's.
    joint_reports = JointReading.VALUE

    def report_values(self) -> ReportValues:
        """The wrapped mechanism's, in the question's units."""
        inner = super().report_values()  # type: ignore[misc]
        return inner.scaled(float(self.scale.origin), float(self.scale.step))

    def window_reports(self) -> Any:
        """The wrapped mechanism's, its quantiles in the question's units."""
        inner = super().window_reports()  # type: ignore[misc]
        if inner is None:
            return None
        return replace(inner, to_units=self.scale.to_units, spread=self.scale.spread)

    def encode(self, answer: Any) -> int:
        index = self.scale.index(answer, getattr(self, "question_id", ""))
        return super().encode(index + self.labels.start)  # type: ignore[misc, attr-defined]

    def estimate(self, aggregate: Aggregate, confidence: float = 0.95) -> Estimate:
        result = super().estimate(aggregate, confidence)  # type: ignore[misc]
        result.mean = scale_mean(result.mean, self.scale)
        if result.distribution is not None:
            result.distribution = [replace(v, value=value_label(v.value, self.scale))
                                   for v in result.distribution]
        return result

    def value_noise(self, reports: Any) -> np.ndarray | None:
        """The wrapped mechanism's, in the question's units (a variance: step² times)."""
        inner = super().value_noise(reports)  # type: ignore[misc]
        return None if inner is None else float(self.scale.step) ** 2 * inner

    def pseudo_values(self, reports: Any) -> np.ndarray:
        inner = super().pseudo_values(reports)  # type: ignore[misc]
        return float(self.scale.origin) + float(self.scale.step) * inner

    def report_value(self, report: int) -> float:
        """A mean mechanism's report on the question's scale (unbiased for the answer)."""
        return self.scale.to_units(super().report_value(report))  # type: ignore[misc]

    def answer_value(self, index: int) -> Fraction:
        """Grid value `index` in the question's units."""
        return self.scale.value(index)

    def sent_value(self, report: int) -> Fraction:
        """The number a report stands for, exactly, in the question's units (the words a
        review and a receipt say it in)."""
        label = super().sent_label(report)  # type: ignore[misc]
        return self.scale.origin + self.scale.step * (label - self.labels.start)  # type: ignore

    def sent_range(self) -> tuple[Fraction, Fraction]:
        """The smallest and largest number a report can stand for (cells; a noise-adding
        mechanism's honest report bounds)."""
        bounds = getattr(self, "report_bounds", None)
        if bounds is not None:
            low, high = bounds
        else:
            cells = [self.sent_value(y) for y in range(self.index_count)]  # type: ignore
            return min(cells), max(cells)
        return self.sent_value(low), self.sent_value(high)


class ScaledDistribution(Scaled):
    """A distribution mechanism (square_wave) on a scale, whose estimate is the designer's bins
    with the quartiles (shared/numeric/distribution.py), in the question's units."""

    edges: tuple[Fraction, ...]

    def estimate(self, aggregate: Aggregate, confidence: float = 0.95) -> Estimate:
        from ..numeric.distribution import QUARTILES, distribution_estimate

        mech: Any = self
        result = Estimate(question=mech.question_id, mechanism=mech.name, epsilon=mech.epsilon,
                          n=aggregate.n, confidence=confidence, consistent_method="ems")
        # [e_i, e_(i+1)) on the index scale; the last bin holds max itself
        inner = self._index_edges()
        found = distribution_estimate(mech, mech_counts(aggregate), bins=inner,
                                      quantiles=QUARTILES, cdf_at=(), confidence=confidence)
        labels = [f"{_text(a)} to {_text(b)}"
                  for a, b in zip(self.edges, self.edges[1:], strict=False)]
        result.distribution = [
            ValueEstimate(value=label, estimate=b.estimate, std_error=b.std_error,
                          variance_bound=None, ci_low=b.ci_low, ci_high=b.ci_high,
                          consistent=b.estimate)
            for label, b in zip(labels, found.bins, strict=True)]
        result.quantiles = [
            ValueEstimate(value=QUANTILE_NAMES.get(q.p, f"quantile {q.p:g}"),
                          estimate=_units(self.scale, q.estimate),
                          std_error=None if q.std_error is None else self.scale.spread(
                              q.std_error),
                          variance_bound=None, ci_low=_units(self.scale, q.ci_low),
                          ci_high=_units(self.scale, q.ci_high), consistent=None)
            for q in found.quantiles]
        result.mean = (scale_mean(found.mean, self.scale) if aggregate.n
                       else MeanEstimate(None, None, None, None, None))
        result.notes += found.notes  # with how the quartiles and their intervals are made
        return result


    def _index_edges(self) -> list[float]:
        """The bins' edges on the index scale, the last at max made k - 1/2 (holds max)."""
        inner = [float((edge - self.scale.origin) / self.scale.step) for edge in self.edges]
        if self.edges[-1] >= self.scale.high:
            inner[-1] = self.k - 0.5  # type: ignore[attr-defined]
        return inner

    @cached_property
    def _design_columns(self) -> tuple[np.ndarray, tuple[str, ...], tuple[str, ...],
                                       tuple[float, ...], tuple[float, ...],
                                       tuple[int | None, ...], tuple[float, ...]]:
        """(C, bin labels, CDF labels, CDF points, quantile points, their columns, fixed
        values): C (cells × columns) maps a report cell to its pseudo-values
        (shared/numeric/linear_inverse.py); built once per mechanism."""
        from ..numeric.linear_inverse import segment_inverse

        mech: Any = self
        k, d = mech.k, mech.d
        edges = self._index_edges()
        below = edges[0] > 0  # a segment below the first edge, from min
        above = edges[-1] < k - 0.5  # one above the last edge, to max
        points = [*([0.0] if below else []), *edges, *([k - 0.5] if above else [])]
        positions = np.arange(d) * (k - 1) / max(d - 1, 1)
        inverse = segment_inverse(mech.float_channel(), positions, points)
        first = 1 if below else 0
        nbins = len(edges) - 1
        cumulative = np.hstack([np.zeros((inverse.shape[0], 1)), np.cumsum(inverse, axis=1)])
        columns = np.hstack([inverse[:, first:first + nbins],
                             cumulative[:, first:first + len(edges)]])
        bins = tuple(f"{_text(a)} to {_text(b)}"
                     for a, b in zip(self.edges, self.edges[1:], strict=False))
        last = len(self.edges) - 1
        cdf = tuple((f"share at most {_text(e)}" if i == last and edges[i] >= k - 0.5
                     else f"share below {_text(e)}") for i, e in enumerate(self.edges))
        at = tuple(float(e) for e in self.edges)
        units = tuple(self.scale.to_units(min(x, k - 1)) for x in points)
        where = tuple(None if (below and i == 0) or (above and i == len(points) - 1)
                      else nbins + i - first for i in range(len(points)))
        fixed = tuple(0.0 if i == 0 else 1.0 for i in range(len(points)))
        return columns, bins, cdf, at, units, where, fixed

    def distribution_columns(self, reports: Any) -> Any:
        """Each report's linear estimate of the bins' shares and of the CDF at their edges
        (shared/numeric/linear_inverse.py), what a design weights."""
        from ..numeric.linear_inverse import DistributionColumns

        columns, bins, cdf, at, units, where, fixed = self._design_columns
        cells = np.asarray(reports, dtype=np.int64).reshape(-1)
        return DistributionColumns(bins=bins, cdf=cdf, points=at, values=columns[cells],
                                   quantile_points=units, quantile_columns=where,
                                   quantile_fixed=fixed)


def mech_counts(aggregate: Aggregate) -> np.ndarray:
    """A count aggregate's counts (square_wave's reports)."""
    return np.asarray(aggregate.counts)  # type: ignore[attr-defined]


QUANTILE_NAMES = {0.25: "1st quartile", 0.5: "median", 0.75: "3rd quartile"}
def _units(scale: AnswerScale, x: float | None) -> float | None:
    return None if x is None else scale.to_units(x)


@cache
def distribution_on_scale(cls: type[Mechanism]) -> type[Mechanism]:
    """`on_scale` for square_wave, estimating the bins whose edges (the question's units,
    exact) the constructor takes as `edges=`."""

    def __init__(self: Any, *args: Any, scale: AnswerScale, edges: tuple[Fraction, ...],
                 **kwargs: Any) -> None:
        self.scale = scale
        self.edges = tuple(edges)
        cls.__init__(self, *args, **kwargs)

    return type(cls.__name__, (ScaledDistribution, cls), {"__init__": __init__,
                                                           "__doc__": cls.__doc__,
                                                           "__module__": cls.__module__})


@cache
def on_scale(cls: type[Mechanism]) -> type[Mechanism]:
    """`cls` (a number mechanism built on integer labels) with an exact answer scale: build it
    with `cls`'s arguments and the scale, `on_scale(cls)(epsilon, range(k),
    scale=AnswerScale(...), question_id=...)`."""

    def __init__(self: Any, *args: Any, scale: AnswerScale, **kwargs: Any) -> None:
        self.scale = scale
        cls.__init__(self, *args, **kwargs)

    return type(cls.__name__, (Scaled, cls), {"__init__": __init__,
                                               "__doc__": cls.__doc__,
                                               "__module__": cls.__module__})
