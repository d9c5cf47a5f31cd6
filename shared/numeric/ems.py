"""EMS: expectation-maximization with a smoothing step (Li et al., SIGMOD 2020, §5), over the
discrete square wave's window channel, for many histograms at once (bootstrap replicates).

The channel: A[y, j] = q + (p - q)·[j <= y <= j + L - 1] for report cell y in [0, m) and grid
point j in [0, d), m = d + L - 1 (shared/mechanisms/square_wave.py). Both products EM needs are
window sums, O(d + m) with cumulative sums instead of O(d·m):
    (A f)_y = q·Σf + (p - q)·Σ_{j = y-L+1..y} f_j,   (Aᵀ g)_j = q·Σg + (p - q)·Σ_{y = j..j+L-1} g_y.

One EMS iteration, as the paper: the EM step f_j <- f_j·(Aᵀ (c / A f))_j / n, then the
binomial smoothing f <- S f with weights (1, 2, 1)/4 inside and (2, 1)/3, (1, 2)/3 at the two
ends (each row normalized), then renormalize. The paper's stopping rule, as in its reference
code: stop once the log-likelihood Σ_y c_y ln (A f)_y improves by less than τ = 10^-3 (after
the first two iterations) or f moves by at most 1/n in L1, or after `MAX_ITERATIONS`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

TOLERANCE = 1e-3  # τ: log-likelihood improvement (nats, whole sample) that ends the iterations
MAX_ITERATIONS = 10_000


@dataclass(frozen=True)
class WindowChannel:
    """A[y, j] = q + (p - q)·[j <= y <= j + window - 1], floats (see the module docstring)."""

    d: int
    window: int
    p: float
    q: float

    @property
    def m(self) -> int:
        return self.d + self.window - 1

    def reports(self, f: np.ndarray) -> np.ndarray:
        """A f for each row of f, (R, d) -> (R, m): the report distribution."""
        d, window = self.d, self.window
        c = np.cumsum(f, axis=1)  # c[:, i] = Σ_{j <= i} f_j
        out = np.empty((f.shape[0], self.m))
        out[:, :d] = c
        out[:, d:] = c[:, -1:]
        out[:, window:] -= c[:, :d - 1] if window < self.m else 0.0
        out *= self.p - self.q
        out += self.q * c[:, -1:]
        return out

    def pull_back(self, g: np.ndarray) -> np.ndarray:
        """Aᵀ g for each row of g, (R, m) -> (R, d)."""
        c = np.cumsum(g, axis=1)  # c[:, i] = Σ_{y <= i} g_y
        out = c[:, self.window - 1:].copy()  # Σ_{y <= j + L - 1}, j = 0..d-1
        out[:, 1:] -= c[:, :self.d - 1]
        out *= self.p - self.q
        out += self.q * c[:, -1:]
        return out

    def dense(self) -> np.ndarray:
        """The m x d matrix (tests only)."""
        y = np.arange(self.m)[:, None]
        j = np.arange(self.d)[None, :]
        return self.q + (self.p - self.q) * ((j <= y) & (y <= j + self.window - 1))


def smooth(f: np.ndarray) -> np.ndarray:
    """The paper's binomial smoothing of each row: (1, 2, 1)/4 inside, (2, 1)/3 and (1, 2)/3 at
    the ends."""
    if f.shape[1] < 3:
        return f
    out = np.empty_like(f)
    out[:, 1:-1] = (f[:, :-2] + 2 * f[:, 1:-1] + f[:, 2:]) / 4
    out[:, 0] = (2 * f[:, 0] + f[:, 1]) / 3
    out[:, -1] = (f[:, -2] + 2 * f[:, -1]) / 3
    return out


def ems_step(channel: WindowChannel, counts: np.ndarray, f: np.ndarray,
             smoothing: bool = True, reports: np.ndarray | None = None) -> np.ndarray:
    """One EMS iteration for each row: the EM step, then the binomial smoothing. `reports`:
    `channel.reports(f)` when the caller has it already (`ems` keeps the one its likelihood
    needed; the same array, so the same result)."""
    ratio = counts / (channel.reports(f) if reports is None else reports)
    step = channel.pull_back(ratio)
    step *= f
    step /= step.sum(axis=1, keepdims=True)
    if smoothing:
        step = smooth(step)
        step /= step.sum(axis=1, keepdims=True)
    return step


def ems(channel: WindowChannel, counts: np.ndarray, *, start: np.ndarray | None = None,
        smoothing: bool = True, accelerate: bool = False, tolerance: float = TOLERANCE,
        max_iterations: int = MAX_ITERATIONS) -> np.ndarray:
    """The EMS distribution over the d grid points for each row of report counts (R, m) (or
    one histogram (m,)), from `start` (default: uniform, as the paper; it must be positive
    everywhere, EM never revives a zero); each row stops by its own criterion.

    `accelerate`: SQUAREM (Varadhan & Roland 2008, scheme S3) on the EMS map F: from f, two
    steps give r = F(f) - f and v = F(F(f)) - 2F(f) + f; the extrapolation f - 2αr + α²v
    (α = min(-|r|/|v|, -1), or plain F(F(f)) where it leaves the simplex's interior) is
    followed by one more step F. Its fixed points are EMS's, reached in ~10x fewer
    iterations; the stopping rule is checked after each such cycle, as after each plain step.
    `max_iterations` counts cycles then.
    """
    counts = np.asarray(counts, dtype=float)
    single = counts.ndim == 1
    counts = np.atleast_2d(counts)
    out = np.empty((counts.shape[0], channel.d))
    out[:] = np.full(channel.d, 1.0 / channel.d) if start is None else start

    def advance(f: np.ndarray, c: np.ndarray, fitted: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One EMS step (or SQUAREM cycle) from f, whose A f is `fitted` (the step's and the
        likelihood's, computed once)."""
        first = ems_step(channel, c, f, smoothing, fitted)
        if accelerate:
            second = ems_step(channel, c, first, smoothing)
            r = first - f
            v = second - first - r
            norm_v = np.linalg.norm(v, axis=1, keepdims=True)
            alpha = np.minimum(-np.linalg.norm(r, axis=1, keepdims=True)
                               / np.where(norm_v > 0, norm_v, 1.0), -1.0)
            jump = f - 2 * alpha * r + alpha * alpha * v
            inside = np.all(jump > 0, axis=1, keepdims=True) & (norm_v > 0)
            jump = np.where(inside, jump, second)
            step = ems_step(channel, c, jump / jump.sum(axis=1, keepdims=True), smoothing)
        else:
            step = first
        fitted = channel.reports(step)
        return step, np.einsum("ry,ry->r", c, np.log(fitted)), fitted

    until_stable(out, counts, advance, carried=channel.reports, tolerance=tolerance,
                 max_iterations=max_iterations)
    return out[0] if single else out


Advance = Callable[[np.ndarray, np.ndarray, Any], tuple[np.ndarray, np.ndarray, Any]]
"""advance(f, counts, carried) -> (the next f, its log-likelihood per row, carried for the
next call), over the rows still iterating."""


def until_stable(out: np.ndarray, counts: np.ndarray, advance: Advance, *,
                 carried: Callable[[np.ndarray], np.ndarray] | None = None,
                 tolerance: float = TOLERANCE, max_iterations: int = MAX_ITERATIONS) -> None:
    """Iterate `advance` on each row of `out` (R, ...: each row's start, replaced by its
    result) against its `counts` (R, ...) until the row's own stop (the module docstring's
    rule: after the first two iterations a log-likelihood improvement below `tolerance`, or a
    move of at most 1/n in L1, n the row's count; at most `max_iterations`). A row with no
    counts keeps its start. `carried(f)`: what `advance` takes along from one call to the next
    (an array over the rows, dropped with them as they stop), first made from the starts;
    None: nothing. The loop of EMS (`ems`) and of the joint EMS (joint_ems.py)."""
    axes = tuple(range(1, counts.ndim))
    n = counts.sum(axis=axes)
    rows = np.flatnonzero(n > 0)  # the rows still iterating, and their working copies
    f, c, old = out[rows], counts[rows], np.full(rows.size, -np.inf)
    carry = None if carried is None else carried(f)
    for iteration in range(max_iterations):
        if not rows.size:
            break
        step, likelihood, carry = advance(f, c, carry)
        done = np.abs(step - f).sum(axis=axes) <= 1.0 / n[rows]
        if iteration > 1:
            done |= np.abs(likelihood - old) < tolerance
        f, old = step, likelihood
        if done.any():
            out[rows[done]] = f[done]
            keep = ~done
            rows, f, c, old = rows[keep], f[keep], c[keep], old[keep]
            carry = None if carry is None else carry[keep]
    out[rows] = f
