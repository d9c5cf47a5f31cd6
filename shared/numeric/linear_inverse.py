"""A number's distribution over bins as linear pseudo-values: each report's estimate of every
bin's share and of the CDF at each bin edge, what a design weights (shared/design/,
docs/design-based.md §distribution).

EMS (ems.py) is not linear in the reports, so a design cannot weight it. The channel itself is:
M (d × m), P[report cell y | grid point j]. A linear estimator gives report y the values G[y]
and E[G[y] | j] = (M G)[j]. Asking that to be exactly the indicator of "j is in bin s" for
every grid point j is possible (M has full row rank) but useless for a square wave: the only
solutions put a spike of 1/(p − q) on one cell in every L (the window), and their variance
grows with the grid (d = 1024 at ε = 1: a standard deviation over 1 at n = 2,000;
distribution.py). The unsmoothed inverse over the bins asks less: E[G[y]] is exact for every
answer distribution whose mass is spread *linearly within each segment* (a histogram density
with a slope in each bin), the segments being the bins between min and max (plus the part of
the range below the first edge and above the last). Among those G, the one with the least
variance averaged over answers spread evenly on the grid: minimize Σ_y π_y G_y² (π the
report distribution under that even spread) subject to Q G = T, Q stacking per segment its
rows' average and its rows' average weighted by the centred position (u, the slope part), T
the segment's indicator and 0. That is G = D⁻¹Qᵀ(QD⁻¹Qᵀ)⁻¹T, D = diag(π).

What it is unbiased for, and what not. For a density linear within each segment, exactly.
Otherwise the bias is the density's curvature within a segment times the channel's leakage
across the segment's ends; `worst_bias` states the worst over point masses (about 0.5 at an
edge: a point mass is as far from linear as a density gets). On smooth densities it is small
against the standard error (docs/design-based.md has the table: at most 0.006 of a share on
normal, log-normal and bimodal answers at ε 1 to 4, where the standard error at n = 2,000 is
0.016 to 0.2). The constant solution G = 1 is in the family (π lies in Q's row space), so the
segments' pseudo-values add up to exactly 1 per report and the CDF at max is 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import DesignError

# Q G = T must hold to this (absolute, per entry), or the inverse is refused.
SOLVE_TOLERANCE = 1e-8


@dataclass(frozen=True)
class DistributionColumns:
    """Per report: its estimate of each bin's share (`bins`, labelled) then of the CDF at each
    point (`points`, in the question's units, labelled `cdf`), columns in that order;
    `quantile_points` and `quantile_columns`: the points min, the edges, max, and which column
    is the CDF at each (None: exactly 0 at min, or 1 at max), what quantiles interpolate."""

    bins: tuple[str, ...]
    cdf: tuple[str, ...]
    points: tuple[float, ...]
    values: np.ndarray  # (n, len(bins) + len(cdf))
    quantile_points: tuple[float, ...]
    quantile_columns: tuple[int | None, ...]
    quantile_fixed: tuple[float, ...]  # the CDF where quantile_columns is None

    @property
    def noise(self) -> np.ndarray:
        """Each entry's unbiased estimate of its randomization variance: every column targets
        an indicator (in a bin, below a point), whose square is itself, so g² − g."""
        return self.values * self.values - self.values


def segment_inverse(channel: np.ndarray, positions: np.ndarray, points: Sequence[float]
                    ) -> np.ndarray:
    """G (m × S): per report cell, its estimate of each segment's share (module docstring).

    `channel` (d × m) P[cell | grid point]; `positions` (d,) each grid point's place on the
    points' scale; `points` (S + 1,) increasing: segment s holds the grid points with
    points[s] <= position < points[s + 1]. A segment holding no grid point gets 0."""
    channel = np.asarray(channel, dtype=np.float64)
    edges = np.asarray(points, dtype=np.float64)
    segment = np.searchsorted(edges, positions, side="right") - 1
    if segment.min() < 0 or segment.max() >= edges.size - 1:
        raise DesignError("the bins' segments must hold every grid point")
    count = edges.size - 1
    rows, targets = [], []
    for s in range(count):
        held = np.flatnonzero(segment == s)
        if held.size == 0:
            continue
        target = np.zeros(count)
        target[s] = 1.0
        rows.append(channel[held].mean(axis=0))
        targets.append(target)
        place = positions[held] - positions[held].mean()
        if held.size > 1 and np.ptp(place) > 0:
            rows.append((place / np.ptp(place)) @ channel[held] / held.size)
            targets.append(np.zeros(count))
    q, t = np.array(rows), np.array(targets)
    pi = channel.mean(axis=0)
    if np.any(pi <= 0):
        raise DesignError("a report cell no answer can send: the channel has no inverse here")
    scaled = q / pi
    try:
        weights = np.linalg.solve(scaled @ q.T, t)
    except np.linalg.LinAlgError:
        raise DesignError("the channel cannot tell these bins apart (no linear inverse)"
                          ) from None
    found = scaled.T @ weights  # D⁻¹Qᵀλ
    if not np.allclose(q @ found, t, rtol=0, atol=SOLVE_TOLERANCE):
        raise DesignError("the channel cannot tell these bins apart (its inverse is "
                          "numerically singular): use fewer, wider bins")
    return found


def worst_bias(channel: np.ndarray, cdf: np.ndarray, positions: np.ndarray,
               points: Sequence[float]) -> np.ndarray:
    """Per CDF column (`cdf`, cells × points: each report's estimate of the share below each
    of `points`), the largest |bias| over point-mass answers:
    max_j |(M·cdf)[j] − 1[position_j < point]| (module docstring)."""
    expected = np.asarray(channel) @ np.asarray(cdf)
    below = positions[:, None] < np.asarray(points, dtype=np.float64)[None, :]
    return np.abs(expected - below).max(axis=0)
