"""A number's design-based distribution (docs/design-based.md): its bins' shares and its CDF at
the bins' edges as weighted pseudo-values (`distribution_values`; the mechanism's
`distribution_columns`, shared/numeric/linear_inverse.py), and the median and quartiles,
interpolated within bins, with intervals by test inversion (`quantiles_of`).

Quantiles. Input: the CDF F̂ at increasing points t_0 < ... < t_K (t_0 the range's min, where
F = 0; t_K its max, where F = 1; the bins' edges between), each with its design-based standard
error s_i (estimators.py on the distribution's pseudo-values).

- Made monotone: F̂ is unbiased, not monotone; the points' values are replaced by their
  isotonic (pool-adjacent-violators, equal weights) fit, clipped to [0, 1]. Standard errors
  stay the design's.
- Between points F̂ and s are linear in t (the usual interpolated quantile of a histogram:
  mass spread evenly within a bin, as R's svyquantile interpolates).
- The p-quantile: the smallest t with F̂(t) = p.
- Its interval (Francisco and Fuller 1991; Woodruff 1952 is its linearization at the point
  estimate): the values t that a test of F(t) = p at the interval's level does not reject,
  |F̂(t) − p| <= z·s(t), z the same multiplier (t with the design's df, or normal) as every
  interval of the report; the interval is from the smallest to the largest such t (on each
  segment both conditions are linear in t, so the set is found exactly). Its `std_error` is
  the interval's half width over z (as svyquantile reports).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .estimators import DesignEstimates
from .pseudo import PseudoValues

QUANTILES = ((0.25, "1st quartile"), (0.5, "median"), (0.75, "3rd quartile"))
NOTE = ("distribution (design-based): each report's unbiased estimate of every bin's share and "
        "of the CDF at each bin edge (the square-wave channel inverted linearly over the bins, "
        "unsmoothed: exact for answers spread linearly within each bin), weighted like a "
        "share; the median and quartiles interpolate that CDF (made monotone) within bins, "
        "their intervals the values whose CDF is within the interval's multiplier times its "
        "design-based standard error of p (test inversion); EMS's smoothed estimate is the "
        "plain report's")


@dataclass(frozen=True)
class Quantile:
    """One quantile: p, its estimate, interval and standard error (half width over z)."""

    p: float
    label: str
    estimate: float
    ci_low: float
    ci_high: float
    std_error: float


def monotone(values: Sequence[float]) -> np.ndarray:
    """The isotonic (non-decreasing) least-squares fit, equal weights, clipped to [0, 1]."""
    blocks: list[list[float]] = []  # [mean, count]
    for v in np.asarray(values, dtype=np.float64).tolist():
        blocks.append([v, 1.0])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            (a, n), (b, k) = blocks[-2], blocks[-1]
            blocks[-2:] = [[(a * n + b * k) / (n + k), n + k]]
    fitted = np.concatenate([np.full(int(n), v) for v, n in blocks])
    return np.clip(fitted, 0.0, 1.0)


def quantile(points: Sequence[float], cdf: Sequence[float], se: Sequence[float], p: float,
             z: float, label: str = "") -> Quantile:
    """The p-quantile of the piecewise-linear CDF through (points, cdf) with its interval by
    test inversion (module docstring); `cdf` is taken as it is (make it monotone first)."""
    t = np.asarray(points, dtype=np.float64)
    f = np.asarray(cdf, dtype=np.float64)
    s = np.asarray(se, dtype=np.float64)
    estimate = _crossing(t, f, p)
    low, high = np.inf, -np.inf
    for i in range(t.size - 1):
        found = _accepted(f[i], f[i + 1] - f[i], s[i], s[i + 1] - s[i], p, z)
        if found is None:
            continue
        a, b = found
        width = t[i + 1] - t[i]
        low, high = min(low, t[i] + a * width), max(high, t[i] + b * width)
    if not np.isfinite(low):  # z·s = 0 everywhere (a disclosed number): the point itself
        low = high = estimate
    low, high = min(low, estimate), max(high, estimate)
    return Quantile(p, label, float(estimate), float(low), float(high),
                    float((high - low) / (2 * z)) if z > 0 else float("nan"))


def _crossing(t: np.ndarray, f: np.ndarray, p: float) -> float:
    """The smallest t where the piecewise-linear CDF reaches p."""
    i = int(np.searchsorted(f, p, side="left"))
    if i == 0:
        return float(t[0])
    if i >= t.size:
        return float(t[-1])
    rise = f[i] - f[i - 1]
    return float(t[i - 1] + (p - f[i - 1]) / rise * (t[i] - t[i - 1]))


def _accepted(f0: float, df: float, s0: float, ds: float, p: float, z: float
              ) -> tuple[float, float] | None:
    """The u in [0, 1] with |f0 + df·u − p| <= z(s0 + ds·u), as [a, b], or None."""
    low, high = 0.0, 1.0
    # f0 − p − z·s0 + (df − z·ds)·u <= 0 and p − f0 − z·s0 + (−df − z·ds)·u <= 0
    for c0, c1 in ((f0 - p - z * s0, df - z * ds), (p - f0 - z * s0, -df - z * ds)):
        if c1 > 0:
            high = min(high, -c0 / c1)
        elif c1 < 0:
            low = max(low, -c0 / c1)
        elif c0 > 0:
            return None
    return (low, high) if low <= high else None


def distribution_values(mechanism: Any, reports: Any, present: np.ndarray
                        ) -> tuple[PseudoValues, Any] | None:
    """The distribution's pseudo-values over the design's rows (bins then CDF points, kind
    "shares": each an indicator's unbiased estimate, noise g² − g; zeros where not
    `present`) and the mechanism's DistributionColumns; None when the mechanism has no
    linear distribution (`Mechanism.distribution_columns`)."""
    columns = mechanism.distribution_columns(reports)
    if columns is None:
        return None
    mask = np.asarray(present, dtype=bool)
    width = columns.values.shape[1]
    values = np.zeros((mask.size, width))
    noise = np.zeros((mask.size, width))
    values[mask] = columns.values
    noise[mask] = columns.noise
    pv = PseudoValues(question=mechanism.question_id, mechanism=mechanism.name,
                      labels=(*columns.bins, *columns.cdf), values=values, noise=noise,
                      present=mask, kind="shares", disclosed=False)
    return pv, columns


def quantiles_of(columns: Any, result: DesignEstimates) -> list[Quantile] | None:
    """The median and quartiles from the design-based CDF (`result`: the estimates of
    `distribution_values`' columns), module docstring; None without an interval multiplier
    (a t interval with no degrees of freedom)."""
    z = result.quantile_value()
    if not np.isfinite(z):
        return None
    f, s = [], []
    for column, fixed in zip(columns.quantile_columns, columns.quantile_fixed, strict=True):
        f.append(fixed if column is None else float(result.estimates[column]))
        s.append(0.0 if column is None else float(result.std_errors[column]))
    cdf = monotone(f)
    return [quantile(columns.quantile_points, cdf, s, p, z, label) for p, label in QUANTILES]
