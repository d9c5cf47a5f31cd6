"""Estimate documents: what the aggregator computes from an aggregate and analysts read.

`to_dict()` is the JSON every other part uses (HTTP API, reports). Undefined numbers (no
reports yet) are `None`, never NaN, so the JSON is always valid.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from statistics import NormalDist
from typing import Any

import numpy as np

from .errors import EstimateError

CONSISTENT_METHOD = "norm-sub"
CONSISTENT_NOTE = ("'consistent' is a non-negative view that sums to 1 (Norm-Sub): lower error "
                   "but biased; 'estimate' is unbiased and may be negative.")


def z_value(confidence: float) -> float:
    """Two-sided normal quantile for a confidence level in (0, 1)."""
    if not (isinstance(confidence, float | int) and 0 < confidence < 1):
        raise EstimateError("confidence must be a number strictly between 0 and 1")
    tail = 0.5 + confidence / 2
    if tail >= 1:  # e.g. 0.9999999999999999: the quantile is infinite
        raise EstimateError("confidence is too close to 1 for a finite interval")
    return NormalDist().inv_cdf(tail)


def finite_or_none(x: float | None) -> float | None:
    """A float for JSON: None where there is no number or it is not finite."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


@dataclass
class ValueEstimate:
    """One option (or one integer value): unbiased estimate, errors, interval, consistent view."""

    value: Any
    estimate: float | None
    std_error: float | None
    variance_bound: float | None
    ci_low: float | None
    ci_high: float | None
    consistent: float | None

    def to_dict(self) -> dict[str, Any]:
        return {k: (v if k == "value" else finite_or_none(v)) for k, v in asdict(self).items()}


@dataclass
class GroupEstimate:
    """A named set of options, estimated as the sum of its members with the sum's own variance."""

    name: str
    options: list[Any]
    estimate: float | None
    std_error: float | None
    variance_bound: float | None
    ci_low: float | None
    ci_high: float | None
    consistent: float | None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        return {k: (v if k in ("name", "options") else finite_or_none(v)) for k, v in d.items()}


@dataclass
class MeanEstimate:
    """The mean of a numeric answer with its standard error and interval."""

    estimate: float | None
    std_error: float | None
    variance_bound: float | None
    ci_low: float | None
    ci_high: float | None

    def to_dict(self) -> dict[str, Any]:
        return {k: finite_or_none(v) for k, v in asdict(self).items()}


@dataclass
class AmongAsked:
    """A conditional question's estimates among the respondents it was asked (skip logic,
    shared/among_asked.py): each option's (and group's) share, or the mean, as a ratio of
    estimates over the estimated share asked, with a delta-method standard error that counts
    the covariance of numerator and denominator. `variance_bound` is None: a ratio has no
    worst case (it grows without bound as the share asked goes to 0)."""

    categories: list[ValueEstimate] | None = None
    groups: list[GroupEstimate] = field(default_factory=list)
    mean: MeanEstimate | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.categories is not None:
            d["categories"] = [c.to_dict() for c in self.categories]
            d["groups"] = [g.to_dict() for g in self.groups]
        if self.mean is not None:
            d["mean"] = self.mean.to_dict()
        return d


@dataclass
class Estimate:
    """The estimate of one question; `categories` for frequency questions, `mean` and
    `distribution` for numeric ones. A question with a "not asked" value (skip logic) also has
    `not_asked`, the share of respondents it did not apply to, and `among_asked`."""

    question: str
    mechanism: str
    epsilon: float
    n: int
    confidence: float
    categories: list[ValueEstimate] | None = None
    groups: list[GroupEstimate] = field(default_factory=list)
    mean: MeanEstimate | None = None
    distribution: list[ValueEstimate] | None = None
    notes: list[str] = field(default_factory=list)
    # How `consistent` was made: Norm-Sub (a distribution), or "clip" for multiselect shares,
    # which need not sum to 1 (shared/mechanisms/set_base.py).
    consistent_method: str = CONSISTENT_METHOD
    not_asked: ValueEstimate | None = None
    among_asked: AmongAsked | None = None
    # Special values ("Don't know", "Prefer not to say"): each one's share of everyone; then
    # `among_asked` is among those who gave an answer (asked, and not a special value).
    special: list[ValueEstimate] | None = None
    # Quantiles of a number's distribution (median, quartiles: `value` names each), in the
    # answer's units; absent where none is estimated.
    quantiles: list[ValueEstimate] | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "question": self.question,
            "mechanism": self.mechanism,
            "epsilon": self.epsilon,
            "n": self.n,
            "confidence": self.confidence,
            "consistent_method": self.consistent_method,
        }
        if self.categories is not None:
            d["categories"] = [c.to_dict() for c in self.categories]
            d["groups"] = [g.to_dict() for g in self.groups]
        if self.mean is not None:
            d["mean"] = self.mean.to_dict()
        if self.distribution is not None:
            d["distribution"] = [v.to_dict() for v in self.distribution]
        if self.notes:
            d["notes"] = list(self.notes)
        if self.not_asked is not None:  # absent unless the question has a "not asked" value
            d["not_asked"] = self.not_asked.to_dict()
        if self.among_asked is not None:
            d["among_asked"] = self.among_asked.to_dict()
        if self.special is not None:  # absent unless the question has special values
            d["special"] = [v.to_dict() for v in self.special]
        if self.quantiles is not None:  # absent unless estimated: older documents unchanged
            d["quantiles"] = [v.to_dict() for v in self.quantiles]
        return d


def norm_sub(estimates: np.ndarray) -> np.ndarray:
    """Norm-Sub (Wang et al. 2020): clip negatives to 0, shift the positives so the total is 1."""
    f = np.asarray(estimates, dtype=float).copy()
    if f.size == 0:
        return f
    active = np.ones(f.size, dtype=bool)
    for _ in range(f.size + 1):
        shift = (1.0 - f[active].sum()) / active.sum()
        g = np.where(active, f + shift, 0.0)
        negative = active & (g < 0)
        if not negative.any():
            return g
        active &= ~negative
        if not active.any():
            break
    # Degenerate input (all mass removed): fall back to uniform.
    return np.full(f.size, 1.0 / f.size)


def value_estimates(values: Sequence[Any], estimate: np.ndarray, variance: np.ndarray,
                    bound: np.ndarray, consistent: np.ndarray, z: float) -> list[ValueEstimate]:
    """Per-value rows from unbiased estimates, plug-in variances and worst-case bounds."""
    std = np.sqrt(np.maximum(variance, 0.0))
    return [
        ValueEstimate(value=v, estimate=float(e), std_error=float(s), variance_bound=float(b),
                      ci_low=float(e - z * s), ci_high=float(e + z * s), consistent=float(c))
        for v, e, s, b, c in zip(values, estimate, std, bound, consistent, strict=True)
    ]


def empty_value_estimates(values: Sequence[Any]) -> list[ValueEstimate]:
    """Rows for a question nobody has answered yet: every number undefined."""
    return [ValueEstimate(v, None, None, None, None, None, None) for v in values]


def fill_unanswered(result: Estimate, labels: Sequence[Any],
                    groups: Mapping[str, Sequence[int]]) -> Estimate:
    """`result` for a categorical question nobody has answered yet: every option and every
    declared group (name -> member indices) present, every number undefined."""
    result.categories = empty_value_estimates(labels)
    result.groups = [GroupEstimate(name, [labels[i] for i in members], None, None, None, None,
                                   None, None) for name, members in groups.items()]
    return result
