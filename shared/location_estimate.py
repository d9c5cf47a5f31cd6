"""Estimating where respondents are from location reports: numbers with intervals from the
unbiased linear estimator, and a map from EM.

Two estimators, for two jobs. Every cell's and region's share gets the unbiased linear estimate
through the exact channel with its exact worst-case variance and a normal interval
(shared/location_linear.py): it holds at every n and for every truth, and its width says
honestly how little the reports tell about small places at a small ε_geo (the channel is a
smoothing kernel, its inverse amplifies noise). The picture, the report's `consistent` column
and heatmap, is the maximum-likelihood distribution over cells (EM, the iterative Bayesian
update of Agrawal & Aggarwal 2001): non-negative, summing to 1, using that people cannot be in a
negative number of places, but biased toward smooth maps and with no interval of its own. How
fine a detail the map can show at this n is derived from the linear estimator
(`map_resolution`), and the report warns, in every format, when it cannot be read at all.

EM and its stopping rule. One EM step maps f to f ∘ A·(c/n ⊘ Aᵀf) (A[x][z] = P(z|x), c the
report counts). The log-likelihood L is concave in f, and with g = A·(c/n ⊘ Aᵀf),
L(f*) − L(f) <= max_x g_x − 1 per report (as for ordinal questions), so EM stops when that
certified gap is at most `TOLERANCE` (1e-6 nats per report), or after `MAX_PASSES` passes
over the channel; the report then warns that it did not converge and how far it stopped.
Steps are accelerated with SQUAREM (Varadhan & Roland 2008, scheme S3): an extrapolation that
is kept only when its likelihood is at least the plain steps'. The likelihood is flat near its
maximum at a small ε_geo, so even accelerated EM needs thousands of passes there; a pass is
two FFT convolutions (`GridOperator`), well under a millisecond on a 20 x 20 grid.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .estimates import (
    Estimate,
    GroupEstimate,
    ValueEstimate,
    fill_unanswered,
    finite_or_none,
    z_value,
)
from .location_linear import MapResolution, indicators, linear_shares, map_resolution

TOLERANCE = 1e-6
MAX_PASSES = 10_000  # SQUAREM converges in 500-5,700 (bench/bench_location.py)
_BACKTRACKS = 8


@dataclass
class EMResult:
    f: np.ndarray       # (B, k) distributions
    gap: np.ndarray     # (B,) certified likelihood gap at the end (nats per report)
    passes: int
    converged: bool     # every row's gap within the tolerance


class GridOperator:
    """The float channel A of a grid as two 2-D convolutions (FFT), for B rows at once.

    A[x][z] = K(z − x)/Z_x with K(d) = β^−D(d) (shared/location_channel.py): so f·A is
    the convolution of f/Z with K, and A·r the convolution of r with K, divided by Z; O(k log k)
    per row instead of O(k²).
    """

    def __init__(self, rows: int, cols: int, log_base: float, offset_steps: np.ndarray) -> None:
        self.rows, self.cols = rows, cols
        self.size = (_fft_size(2 * rows - 1), _fft_size(2 * cols - 1))
        dr = np.abs(np.arange(-(rows - 1), rows))[:, None]
        dc = np.abs(np.arange(-(cols - 1), cols))[None, :]
        kernel = np.exp(-log_base * offset_steps[dr, dc].astype(float))
        self.kernel_fft = np.fft.rfft2(kernel, s=self.size)
        self.z = self._convolve(np.ones((1, rows * cols)))[0]

    def _convolve(self, v: np.ndarray) -> np.ndarray:
        grid = v.reshape(-1, self.rows, self.cols)
        full = np.fft.irfft2(np.fft.rfft2(grid, s=self.size) * self.kernel_fft, s=self.size)
        out = full[:, self.rows - 1:2 * self.rows - 1, self.cols - 1:2 * self.cols - 1]
        return np.maximum(out.reshape(v.shape[0], -1), 1e-300)  # FFT rounding near 0

    def reports(self, f: np.ndarray) -> np.ndarray:
        """f·A: report distributions for B answer distributions (B, k)."""
        return self._convolve(f / self.z)

    def pull_back(self, r: np.ndarray) -> np.ndarray:
        """(A·rᵀ)ᵀ for B rows r >= 0."""
        return self._convolve(r) / self.z


def _fft_size(n: int) -> int:
    """The smallest 5-smooth length >= n (2^a·3^b·5^c: fast for numpy's FFT; a power of two
    alone can be 1.6 times larger, e.g. 64 for 39)."""
    size = n
    while True:
        m = size
        for p in (2, 3, 5):
            while m % p == 0:
                m //= p
        if m == 1:
            return size
        size += 1


def em(channel: GridOperator, observed: np.ndarray, start: np.ndarray | None = None,
       tolerance: float = TOLERANCE, max_passes: int | None = None) -> EMResult:
    """Maximum-likelihood distributions for B rows of observed report frequencies at once.

    `channel` applies A (`GridOperator`), `observed` (B, k) rows summing to 1, `start` (B, k)
    positive rows (default uniform). Stops when every row's certified gap is <= `tolerance`
    or after `max_passes` (default `MAX_PASSES`) passes, give or take the rest of a SQUAREM
    cycle (each pass is one f·A and one A·r for all rows).
    """
    max_passes = MAX_PASSES if max_passes is None else max_passes
    observed = np.atleast_2d(np.asarray(observed, dtype=float))
    rows, k = observed.shape
    f = np.full((rows, k), 1.0 / k) if start is None else np.atleast_2d(start).astype(float)
    f = np.broadcast_to(f, (rows, k)).copy()
    passes = 0

    def step(g: np.ndarray, reports: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        nonlocal passes
        passes += 1
        reports = channel.reports(g) if reports is None else reports
        gradient = channel.pull_back(observed / reports)
        updated = g * gradient
        return updated / updated.sum(axis=1, keepdims=True), gradient.max(axis=1) - 1.0

    def loglik(reports: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return (observed * np.log(reports)).sum(axis=1)

    gap = np.full(rows, np.inf)
    reports_f = channel.reports(f)
    while passes < max_passes:
        f1, gap = step(f, reports_f)
        if np.all(gap <= tolerance):
            return EMResult(f, np.maximum(gap, 0.0), passes, True)
        f2, _ = step(f1)
        r, v = f1 - f, f2 - 2 * f1 + f
        r_norm = np.sqrt((r * r).sum(axis=1))
        v_norm = np.sqrt((v * v).sum(axis=1))
        alpha = np.minimum(-r_norm / np.where(v_norm > 0, v_norm, np.inf), -1.0)[:, None]
        candidate = f2
        for _ in range(_BACKTRACKS):
            trial = f - 2 * alpha * r + alpha * alpha * v
            bad = np.any(trial <= 0, axis=1, keepdims=True)
            if not bad.any():
                candidate = trial
                break
            alpha = np.where(bad, (alpha - 1) / 2, alpha)  # toward -1, where trial is f2
        else:
            candidate = np.where(np.any(trial <= 0, axis=1, keepdims=True), f2, trial)
        candidate = candidate / candidate.sum(axis=1, keepdims=True)
        accelerated, _ = step(candidate)
        reports_a, reports_2 = channel.reports(accelerated), channel.reports(f2)
        keep = loglik(reports_a) >= loglik(reports_2)
        f = np.where(keep[:, None], accelerated, f2)
        reports_f = np.where(keep[:, None], reports_a, reports_2)
    _, gap = _gap(channel, observed, f)
    return EMResult(f, np.maximum(gap, 0.0), passes, bool(np.all(gap <= tolerance)))


def _gap(channel: GridOperator, observed: np.ndarray,
         f: np.ndarray) -> tuple[None, np.ndarray]:
    """The certified likelihood gap of each row (module docstring)."""
    gradient = channel.pull_back(observed / channel.reports(f))
    return None, gradient.max(axis=1) - 1.0


@dataclass
class LocationFit:
    """EM's distribution over cells and where it stopped."""

    f: np.ndarray
    gap: float
    passes: int
    converged: bool


def fit(channel: GridOperator, counts: np.ndarray) -> LocationFit:
    """EM on the counts (from the uniform distribution)."""
    counts = np.asarray(counts, dtype=np.int64)
    main = em(channel, counts / int(counts.sum()))
    return LocationFit(main.f[0], float(main.gap[0]), main.passes, main.converged)


class LocationEstimate(Estimate):
    """Cells and regions: unbiased linear estimates with intervals, EM's map as the consistent
    view, and what the map can show at this n (`warnings`: said in every report format)."""

    grid: dict[str, Any]
    em: dict[str, Any]
    resolution: MapResolution | None
    raw_shares: dict[str, float]
    warnings: list[str]

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d["consistent_method"] = "em"
        d["interval_method"] = ("unbiased linear estimate through the channel, worst-case "
                                "variance over every truth, normal interval")
        location: dict[str, Any] = {**self.grid, "raw_report_shares": self.raw_shares,
                                    "em": self.em}
        if self.resolution is not None:
            r = self.resolution
            location["map"] = {"readable": r.readable, "block_cells": r.block,
                               "block_km": None if r.block is None else r.block * r.cell_km,
                               "half_width": finite_or_none(r.half_width),
                               "even_share": r.even_share}
        d["location"] = location
        if self.warnings:
            d["warnings"] = list(self.warnings)
        return d


def operator(geo: Any) -> GridOperator:
    """The FFT operator of a certified GeoChannel (cached on it)."""
    if not hasattr(geo, "_operator"):
        geo._operator = GridOperator(geo.shape.rows, geo.shape.cols, geo.log_base,
                                     geo.offset_steps)
    return geo._operator


def estimate_location(mechanism: Any, counts: np.ndarray, confidence: float) -> Estimate:
    """The Estimate of a location question (shared/mechanisms/location.py) from its counts."""
    z_value(confidence)  # refuses a bad confidence
    counts = np.asarray(counts, dtype=np.int64)
    n = int(counts.sum())
    result = LocationEstimate(question=mechanism.question_id, mechanism=mechanism.name,
                              epsilon=mechanism.epsilon, n=n, confidence=confidence)
    result.grid = {"rows": mechanism.rows, "cols": mechanism.cols,
                   "cell_km": mechanism.cell_km, "epsilon_geo": mechanism.epsilon_geo}
    result.raw_shares, result.em, result.resolution, result.warnings = {}, {}, None, []
    labels = mechanism.labels
    if n == 0:
        return fill_unanswered(result, labels, mechanism.groups)
    fitted = fit(operator(mechanism.geo), counts)
    result.em = {"passes": fitted.passes, "gap": fitted.gap, "converged": fitted.converged,
                 "tolerance": TOLERANCE, "max_passes": MAX_PASSES}
    dense, k = mechanism.geo.dense, mechanism.k
    regions = [list(members) for members in mechanism.groups.values()]
    targets = np.concatenate([np.eye(k), indicators(k, regions)], axis=1)
    linear = linear_shares(dense, targets, counts)
    low, high = linear.interval(confidence)
    em_shares = np.concatenate([fitted.f, [fitted.f[r].sum() for r in regions]])
    rows = [(float(e), float(s), float(b), float(a), float(h), float(c)) for e, s, b, a, h, c
            in zip(linear.estimate, linear.std_error, linear.variance_bound, low, high,
                   em_shares, strict=True)]
    result.categories = [ValueEstimate(label, *row) for label, row in zip(labels, rows[:k],
                                                                        strict=True)]
    for (name, members), row in zip(mechanism.groups.items(), rows[k:], strict=True):
        result.groups.append(GroupEstimate(name, [labels[i] for i in members], *row))
        result.raw_shares[name] = float(counts[list(members)].sum() / n)
    result.resolution = map_resolution(dense, mechanism.rows, mechanism.cols,
                                       mechanism.cell_km, counts, confidence)
    result.notes += _notes(result, confidence)
    result.warnings += _warnings(result, fitted)
    return result


def _notes(result: LocationEstimate, confidence: float) -> list[str]:
    notes = [f"estimate: the unbiased linear estimate through the exact channel; std error: "
             f"its worst case over every possible truth, exact from the channel, so the "
             f"{confidence:.0%} interval holds at every n; consistent: EM's "
             f"maximum-likelihood map (non-negative, sums to 100%, smooth and biased: the "
             f"picture, not a number with an interval)"]
    if result.raw_shares:
        notes.append("share of reports falling in each region (pulled toward the grid's "
                     "average by the spreading, for comparison only): " + ", ".join(
                         f"{name} {share_text(v)}" for name, v in result.raw_shares.items()))
    return notes


def _warnings(result: LocationEstimate, fitted: LocationFit) -> list[str]:
    out = []
    r = result.resolution
    assert r is not None
    if not r.readable:
        out.append(f"the map cannot be read at n = {result.n:,} and ε_geo = "
                   f"{result.grid['epsilon_geo']:g}/km: even a block of half the grid has a "
                   f"{result.confidence:.0%} interval of ±{share_text(r.half_width)}, more than "
                   f"the {share_text(r.even_share)} it would hold with people spread evenly; "
                   f"the heatmap's bright cells may be noise, read the regions' intervals")
    elif r.block is not None and r.block > 1:
        out.append(f"the map shows detail no finer than blocks of {r.block} x {r.block} cells "
                   f"({r.block * r.cell_km:g} km) at this n and ε_geo: a single cell's share "
                   f"is noise, read the regions' intervals")
    if not fitted.converged:
        out.append(f"EM did not converge: it stopped at its cap of {MAX_PASSES:,} passes, "
                   f"{plain_number(fitted.gap)} nats per report short of the maximum "
                   f"likelihood (rule: {plain_number(TOLERANCE)}); the consistent column "
                   f"approximates the "
                   f"maximum-likelihood map")
    return out


def share_text(x: float) -> str:
    """A share for people: "12.3%", "0.43%", "< 0.01%" (never 4.29e-19)."""
    if not np.isfinite(x):
        return "–"
    v = 100 * x
    if v == 0:
        return "0%"
    if abs(v) < 0.01:
        return "< 0.01%" if v > 0 else "> -0.01%"
    return f"{v:.2f}%" if abs(v) < 1 else f"{v:.1f}%"


def plain_number(x: float) -> str:
    """A small positive number in fixed notation, two significant digits (0.00046, not
    4.6e-04)."""
    if not np.isfinite(x) or x <= 0:
        return "0"
    digits = max(0, 1 - int(np.floor(np.log10(x))))
    return f"{x:.{digits}f}"
