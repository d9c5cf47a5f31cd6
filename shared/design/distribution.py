"""A number's design-based distribution (docs/design-based.md): its bins' shares and its CDF at
the bins' edges as weighted pseudo-values (`distribution_values`; the mechanism's
`distribution_columns`, shared/numeric/linear_inverse.py), and the median and quartiles,
interpolated within bins, with intervals by test inversion (`quantiles_of`).

Quantiles. Input: the CDF F̂ at increasing points t_0 < ... < t_K (t_0 the range's min, where
F = 0; t_K its max, where F = 1; the bins' edges between), with their design-based covariance
(estimators.py on the distribution's pseudo-values).

- Made monotone: F̂ is unbiased, not monotone; the points' values are replaced by their
  isotonic (pool-adjacent-violators, equal weights) fit, clipped to [0, 1]. The covariance
  stays the design's.
- Between points F̂ is linear in t (the usual interpolated quantile of a histogram: mass
  spread evenly within a bin, as R's svyquantile interpolates), and so is its variance's
  argument: Var F̂(t) = (1 − u)²V_i + 2u(1 − u)C_i,i+1 + u²V_i+1 from the design-based
  covariance of the two edges' estimates (interpolating the standard errors instead would
  overstate it between edges: the median's interval was a quarter too wide, covering 97%).
- The p-quantile: the smallest t with F̂(t) = p.
- Its interval (Francisco and Fuller 1991; Woodruff 1952 is its linearization at the point
  estimate): the values t that a test of F(t) = p at the interval's level does not reject,
  |F̂(t) − p| <= z·se(F̂(t)), z the same multiplier (t with the design's df, or normal) as every
  interval of the report; the interval is from the smallest to the largest such t (on each
  segment the squared condition is a quadratic in t, so the set is found exactly). Its
  `std_error` is the interval's half width over z (as svyquantile reports).
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


def quantile(points: Sequence[float], cdf: Sequence[float], covariance: np.ndarray, p: float,
             z: float, label: str = "") -> Quantile:
    """The p-quantile of the piecewise-linear CDF through (points, cdf) with its interval by
    test inversion (module docstring); `cdf` is taken as it is (make it monotone first),
    `covariance` is the points' CDF estimates' (zeros where the CDF is known)."""
    t = np.asarray(points, dtype=np.float64)
    f = np.asarray(cdf, dtype=np.float64)
    v = np.asarray(covariance, dtype=np.float64)
    estimate = _crossing(t, f, p)
    low, high = np.inf, -np.inf
    for i in range(t.size - 1):
        found = _accepted(f[i], f[i + 1], v[i, i], v[i, i + 1], v[i + 1, i + 1], p, z)
        if found is None:
            continue
        a, b = found
        width = t[i + 1] - t[i]
        low, high = min(low, t[i] + a * width), max(high, t[i] + b * width)
    if not np.isfinite(low):  # no variance anywhere (a disclosed number): the point itself
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


def _accepted(f0: float, f1: float, v0: float, c01: float, v1: float, p: float, z: float
              ) -> tuple[float, float] | None:
    """The smallest and largest u in [0, 1] with (F(u) − p)² <= z²·Var F(u), F(u) =
    (1 − u)F0 + uF1 and Var F(u) = (1 − u)²v0 + 2u(1 − u)c01 + u²v1 (the estimates' own
    covariance, not an interpolated standard error); None when no u is. The set's ends are
    among 0, 1 and the roots of that quadratic in u."""
    a, b = f0 - p, f1 - f0  # F(u) − p = a + b·u
    z2 = z * z
    # (a + bu)² − z²[v0 + 2(c01 − v0)u + (v0 − 2c01 + v1)u²] = A u² + B u + C
    quad_a = b * b - z2 * (v0 - 2 * c01 + v1)
    quad_b = 2 * a * b - 2 * z2 * (c01 - v0)
    quad_c = a * a - z2 * v0
    candidates = [0.0, 1.0]
    if abs(quad_a) > 1e-15:
        disc = quad_b * quad_b - 4 * quad_a * quad_c
        if disc >= 0:
            root = np.sqrt(disc)
            candidates += [(-quad_b - root) / (2 * quad_a), (-quad_b + root) / (2 * quad_a)]
    elif abs(quad_b) > 1e-15:
        candidates.append(-quad_c / quad_b)
    scale = 1e-12 * max(1.0, a * a + b * b)
    inside = [u for u in candidates if 0.0 <= u <= 1.0
              and quad_a * u * u + quad_b * u + quad_c <= scale]
    return (min(inside), max(inside)) if inside else None


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
    f = []
    index = []
    for column, fixed in zip(columns.quantile_columns, columns.quantile_fixed, strict=True):
        f.append(fixed if column is None else float(result.estimates[column]))
        index.append(column)
    size = len(index)
    covariance = np.zeros((size, size))
    for a, ca in enumerate(index):
        for b, cb in enumerate(index):
            if ca is not None and cb is not None:
                covariance[a, b] = result.covariance[ca, cb]
    cdf = monotone(f)
    return [quantile(columns.quantile_points, cdf, covariance, p, z, label)
            for p, label in QUANTILES]
