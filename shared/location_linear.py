"""The unbiased linear estimator of a location question's cell and region shares, with its exact
variance: the numbers a location report's intervals stand on, at every n.

A share θ = Σ_{x∈S} f_x (S a cell or a region) is estimated by θ̂ = (1/n)·Σ_i w(z_i), one
weight per reported cell z. It is unbiased for every truth f exactly when A·w = 1_S
(A[x][z] = P(z | x), the float channel of shared/location_channel.py), so w = A⁻¹·1_S: the
estimator is unique (A is invertible) and needs no assumption on where people are. Its
variance is that of one weight under the report distribution p = fA, divided by n:

    Var θ̂ = (Σ_z p_z·w_z² − θ²)/n.

- Its standard error is the worst case over every possible truth, exactly: with
  a_x = Σ_z A[x][z]·w_z², Var = f·a − θ², maximal with mass α on the inside cell of largest
  a and 1 − α on the outside one: max_α α·a_in + (1 − α)·a_out − α² at
  α = clip((a_in − a_out)/2, 0, 1). The interval is θ̂ ± z·that, not clipped (like every other
  question's linear estimate, θ̂ can fall below 0 or above 1 by noise). Why not the plug-in
  (the reports' own variance of w)? The weights are heavy-tailed, and a sample of a few
  hundred reports misses the rare large ones: in simulation (10 x 10 cells, 200 reports) the
  plug-in intervals of sparse cells covered 73-80% instead of 95%; the worst case covers at
  least 95% at every n tried and is only 5-20% wider (tests/shared/test_location_linear.py).
  It is known before any report arrives (planning, and the map's resolution).

The price of unbiasedness is noise: the channel is a smoothing kernel and its inverse amplifies
it, so at a small ε_geo·cell size a single cell's interval is as wide as the shares themselves,
and a small region's too at small n. That is the truth about what the reports say, and the
report says it (`map_resolution`): EM (shared/location_estimate.py) draws the picture, these
numbers say how far it can be trusted.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .estimates import z_value

# A solve whose residual exceeds this is not an inverse (an almost flat channel): no interval.
_RESIDUAL = 1e-6


@dataclass(frozen=True)
class LinearShares:
    """Unbiased estimates of m target shares (cells or regions) from one set of counts."""

    estimate: np.ndarray        # (m,)
    std_error: np.ndarray       # (m,) the worst case over every truth (module docstring)

    @property
    def variance_bound(self) -> np.ndarray:
        return self.std_error**2

    def interval(self, confidence: float) -> tuple[np.ndarray, np.ndarray]:
        z = z_value(confidence)
        return self.estimate - z * self.std_error, self.estimate + z * self.std_error


def unbiased_weights(channel: np.ndarray, targets: np.ndarray) -> np.ndarray | None:
    """(k, m) weights w with A·w = targets (columns: 0/1 indicators of cells or regions), or
    None when the channel cannot be inverted in floating point (an almost flat kernel)."""
    try:
        weights = np.linalg.solve(channel, targets)
    except np.linalg.LinAlgError:
        return None
    if not np.all(np.isfinite(weights)) or np.abs(channel @ weights - targets).max() > _RESIDUAL:
        return None
    return weights


def worst_variance_one(channel: np.ndarray, weights: np.ndarray,
                       targets: np.ndarray) -> np.ndarray:
    """(m,) the largest one-report variance of each target's estimator over every truth."""
    a = channel @ (weights * weights)  # (k, m): E[w²] for each true cell
    inside = targets > 0.5
    a_in = np.where(inside, a, -np.inf).max(axis=0)
    a_out = np.where(inside, -np.inf, a).max(axis=0)
    alpha = np.clip((a_in - a_out) / 2, 0.0, 1.0)
    alpha = np.where(np.isfinite(a_out), alpha, 1.0)  # a target of every cell: θ = 1
    return (alpha * np.where(np.isfinite(a_in), a_in, 0.0)
            + (1 - alpha) * np.where(np.isfinite(a_out), a_out, 0.0) - alpha**2)


def linear_shares(channel: np.ndarray, targets: np.ndarray, counts: np.ndarray) -> LinearShares:
    """Unbiased estimates of the targets and their worst-case standard errors."""
    counts = np.asarray(counts, dtype=float)
    n = counts.sum()
    m = targets.shape[1]
    weights = unbiased_weights(channel, targets) if n >= 1 else None
    if weights is None:  # nothing reported yet, or no inverse: no numbers at all
        nothing = np.full(m, np.nan)
        return LinearShares(nothing, nothing)
    bound = np.maximum(worst_variance_one(channel, weights, targets), 0.0) / n
    return LinearShares(counts @ weights / n, np.sqrt(bound))


def indicators(k: int, sets: list[list[int]]) -> np.ndarray:
    """(k, m) 0/1 columns, one per set of cell indices."""
    out = np.zeros((k, len(sets)))
    for j, members in enumerate(sets):
        out[members, j] = 1.0
    return out


@dataclass(frozen=True)
class MapResolution:
    """How fine a detail the map of one report can show (module docstring).

    `block` is the smallest side s (in cells) of a square block whose share's interval
    half-width is at most the share the block would hold if people were spread evenly (s²/k of
    them): blocks of that size can be told from empty ones. `readable` is whether such a block
    exists up to half the grid's longer side; otherwise the map cannot be read at this n and
    ε_geo and only regions' intervals say anything.
    """

    block: int | None
    half_width: float   # of the block (or of the largest tried, when none qualifies)
    even_share: float   # s²/k for that block
    cell_km: float

    @property
    def readable(self) -> bool:
        return self.block is not None


def map_resolution(channel: np.ndarray, rows: int, cols: int, cell_km: float,
                   counts: np.ndarray, confidence: float) -> MapResolution:
    """The smallest block (central, s x s cells, clipped to the grid) resolvable at n reports:
    the unbiased estimate's worst-case half-width <= the block's even share s²/k. It depends
    on n, the grid and ε_geo only (`counts` gives n)."""
    k = rows * cols
    largest = max(1, max(rows, cols) // 2)
    blocks = []
    for s in range(1, largest + 1):
        h, w = min(s, rows), min(s, cols)
        r0, c0 = (rows - h) // 2, (cols - w) // 2
        blocks.append([r * cols + c for r in range(r0, r0 + h) for c in range(c0, c0 + w)])
    shares = linear_shares(channel, indicators(k, blocks), counts)
    half = z_value(confidence) * shares.std_error
    even = np.array([len(b) / k for b in blocks])
    for s, (hw, share) in enumerate(zip(half, even, strict=True), start=1):
        if np.isfinite(hw) and hw <= share:
            return MapResolution(s, float(hw), float(share), cell_km)
    return MapResolution(None, float(half[-1]), float(even[-1]), cell_km)
