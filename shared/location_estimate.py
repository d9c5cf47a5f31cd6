"""Estimating where respondents are from location reports: EM over the exact channel, with
parametric-bootstrap intervals for cells and regions.

Channel inversion is hopeless here: the grid channel is a smoothing kernel, its inverse
amplifies noise by orders of magnitude, and the unbiased estimate of a cell is mostly noise
with huge negative and positive swings. The maximum-likelihood distribution over cells (found
by EM, the iterative Bayesian update of Agrawal & Aggarwal 2001) is non-negative, sums to 1
and uses that people cannot be in a negative number of places.

EM and its stopping rule. One EM step maps f to f ∘ A·(c/n ⊘ Aᵀf) (A[x][z] = P(z|x), c the
report counts). The log-likelihood L is concave in f, and with g = A·(c/n ⊘ Aᵀf),
L(f*) − L(f) <= max_x g_x − 1 per report (`likelihood_gap`, as for ordinal questions), so EM
stops when that certified gap is at most `TOLERANCE` (1e-6 nats per report), or after
`MAX_PASSES` passes over the channel; the estimate then says how far from the maximum it is.
Steps are accelerated with SQUAREM (Varadhan & Roland 2008, scheme S3): an extrapolation that
is kept only when its likelihood is at least the plain steps'.

Intervals. The parametric bootstrap: B = `BOOTSTRAP` sets of n reports drawn from the fitted
report distribution Aᵀf̂, each re-estimated by EM (from near f̂, same rule but at most
`BOOTSTRAP_PASSES` passes: the cost of B fits), and the
percentile interval of each cell's and each region's share. The generator is seeded from the
counts, so the same aggregate always gives the same intervals. The interval covers the
estimator's sampling noise around f̂; EM's bias towards smooth maps is not in it, and the
report says so. At survey sizes a cell's interval is as wide as the shares themselves (the
map is noise at cell level); a region of many cells is estimated far better.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from .estimates import Estimate, GroupEstimate, ValueEstimate, fill_unanswered, z_value

TOLERANCE = 1e-6
MAX_PASSES = 600
BOOTSTRAP = 50
BOOTSTRAP_PASSES = 60  # per replicate, from the fit (bench_location.py checks the coverage)
_BACKTRACKS = 8


@dataclass
class EMResult:
    f: np.ndarray       # (B, k) distributions
    gap: np.ndarray     # (B,) certified likelihood gap at the end (nats per report)
    passes: int


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
    size = 8
    while size < n:
        size *= 2
    return size


def em(channel: GridOperator, observed: np.ndarray, start: np.ndarray | None = None,
       tolerance: float = TOLERANCE, max_passes: int = MAX_PASSES) -> EMResult:
    """Maximum-likelihood distributions for B rows of observed report frequencies at once.

    `channel` applies A (`GridOperator`), `observed` (B, k) rows summing to 1, `start` (B, k)
    positive rows (default uniform). Stops when every row's certified gap is <= `tolerance`
    or after `max_passes` passes (each pass is one f·A and one A·r for all rows).
    """
    observed = np.atleast_2d(np.asarray(observed, dtype=float))
    rows, k = observed.shape
    f = np.full((rows, k), 1.0 / k) if start is None else np.atleast_2d(start).astype(float)
    f = np.broadcast_to(f, (rows, k)).copy()
    passes = 0

    def step(g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        nonlocal passes
        passes += 1
        gradient = channel.pull_back(observed / channel.reports(g))
        updated = g * gradient
        return updated / updated.sum(axis=1, keepdims=True), gradient.max(axis=1) - 1.0

    def loglik(g: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return (observed * np.log(channel.reports(g))).sum(axis=1)

    gap = np.full(rows, np.inf)
    while passes < max_passes:
        f1, gap = step(f)
        if np.all(gap <= tolerance):
            return EMResult(f, np.maximum(gap, 0.0), passes)
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
        keep = loglik(accelerated) >= loglik(f2)
        f = np.where(keep[:, None], accelerated, f2)
    _, gap = _gap(channel, observed, f)
    return EMResult(f, np.maximum(gap, 0.0), passes)


def _gap(channel: GridOperator, observed: np.ndarray,
         f: np.ndarray) -> tuple[None, np.ndarray]:
    """The certified likelihood gap of each row (module docstring)."""
    gradient = channel.pull_back(observed / channel.reports(f))
    return None, gradient.max(axis=1) - 1.0


def _seed(counts: np.ndarray) -> int:
    return int.from_bytes(hashlib.sha256(np.asarray(counts, dtype=np.int64).tobytes())
                          .digest()[:8], "big")


@dataclass
class LocationFit:
    """EM's distribution over cells, and the bootstrap replicates behind its intervals."""

    f: np.ndarray
    gap: float
    passes: int
    replicates: np.ndarray  # (B, k)


def fit(channel: GridOperator, counts: np.ndarray, bootstrap: int = BOOTSTRAP) -> LocationFit:
    """EM on the counts, then `bootstrap` parametric replicates re-fitted from the estimate."""
    counts = np.asarray(counts, dtype=np.int64)
    n = int(counts.sum())
    main = em(channel, counts / n)
    f = main.f[0]
    rng = np.random.default_rng(_seed(counts))  # estimation only: never near a report
    reports = channel.reports(f[None, :])[0]
    draws = rng.multinomial(n, reports / reports.sum(), size=bootstrap)
    start = 0.9 * f + 0.1 / f.size  # EM keeps zeros at zero: start inside the simplex
    boot = em(channel, draws / n, np.tile(start, (bootstrap, 1)), max_passes=BOOTSTRAP_PASSES)
    return LocationFit(f, float(main.gap[0]), main.passes, boot.f)


class LocationEstimate(Estimate):
    """Cells and regions from EM, with the grid and how the numbers were made."""

    grid: dict[str, Any]
    raw_shares: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d["consistent_method"] = "em"
        d["interval_method"] = f"parametric bootstrap, {BOOTSTRAP} replicates (percentile)"
        d["location"] = {**self.grid, "raw_report_shares": self.raw_shares}
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
    n = int(np.asarray(counts).sum())
    result = LocationEstimate(question=mechanism.question_id, mechanism=mechanism.name,
                              epsilon=mechanism.epsilon, n=n, confidence=confidence)
    result.grid = {"rows": mechanism.rows, "cols": mechanism.cols,
                   "cell_km": mechanism.cell_km, "epsilon_geo": mechanism.epsilon_geo}
    result.raw_shares = {}
    labels = mechanism.labels
    if n == 0:
        return fill_unanswered(result, labels, mechanism.groups)
    fitted = fit(operator(mechanism.geo), counts)
    lo_q, hi_q = (1 - confidence) / 2, (1 + confidence) / 2
    cell_lo, cell_hi = np.quantile(fitted.replicates, [lo_q, hi_q], axis=0)
    # A percentile interval can miss its own estimate when the bootstrap distribution of a
    # biased fit lies to one side of it (small n); the interval is widened to reach it.
    cell_lo, cell_hi = np.minimum(cell_lo, fitted.f), np.maximum(cell_hi, fitted.f)
    cell_se = fitted.replicates.std(axis=0, ddof=1)
    result.categories = [
        ValueEstimate(value=label, estimate=float(e), std_error=float(s), variance_bound=None,
                      ci_low=float(a), ci_high=float(b), consistent=float(e))
        for label, e, s, a, b in zip(labels, fitted.f, cell_se, cell_lo, cell_hi, strict=True)]
    shares = np.asarray(counts, dtype=float) / n
    for name, members in mechanism.groups.items():
        idx = list(members)
        value = float(fitted.f[idx].sum())
        boot = fitted.replicates[:, idx].sum(axis=1)
        lo, hi = np.quantile(boot, [lo_q, hi_q])
        lo, hi = min(lo, value), max(hi, value)
        result.groups.append(GroupEstimate(
            name=name, options=[labels[i] for i in idx], estimate=value,
            std_error=float(boot.std(ddof=1)), variance_bound=None, ci_low=float(lo),
            ci_high=float(hi), consistent=value))
        result.raw_shares[name] = float(shares[idx].sum())
    half = (cell_hi - cell_lo) / 2
    result.notes.append(
        f"cells: EM (maximum-likelihood) shares with {confidence:.0%} bootstrap intervals; the "
        f"median cell's interval half-width is {float(np.median(half)):.3g} against a median "
        f"share of {float(np.median(fitted.f)):.3g}: "
        + ("cell-level estimates are noise at this n, read regions"
           if float(np.median(half)) >= 0.5 * float(np.median(fitted.f))
           else "cell-level estimates carry signal at this n"))
    result.notes.append("regions: sums of the EM cell shares, bootstrap intervals; the raw "
                        "share of reports in a region is biased toward the grid's average "
                        "(reports spread out), shown for comparison only")
    result.notes.append(f"EM stopped after {fitted.passes} passes, within {fitted.gap:.2g} "
                        f"nats per report of the maximum likelihood (rule: at most "
                        f"{TOLERANCE:g}, or {MAX_PASSES} passes)")
    result.notes.append("intervals cover sampling noise around the EM fit, not EM's "
                        "smoothing bias")
    return result
