"""A number kept on a grid in a two-server survey: its mean through Prio3 on a fixed-point
scale, its distribution through a histogram over the designer's bins, each server's geometric
noise as for every key (shared/two_server/noise.py), and the estimates with standard errors.

The measurement. The device keeps the answer to the grid origin + j·step, j in [0, R]
(R = points - 1; a decimal's min, resolution and k: its unit rounds), and measures what the
question asks (`grid_encoding`):

- the mean alone: Prio3Sum(max_measurement = R) of j, whose proof checks 0 <= j <= R; Δ = R;
- the distribution alone: Prio3Histogram of its bin b (bins [e_i, e_(i+1)) over the designer's
  edges, the last one closed), B cells, or B + 1 with "not asked" last for a hidden follow-up
  (skip logic); Δ = 2;
- both, or the mean of a hidden follow-up: Prio3Histogram(cells) of its bin and Prio3SumVec
  (length 1, max_measurement = R) of j under one key (pair_vdaf.HistogramSumPrio3, both over
  Field128: draft-20's SumVec range-checks any maximum, as Sum does); without a distribution
  the bins are one, the whole range, then "not asked": the histogram counts who was asked. A
  respondent the question did not apply to measures the last cell and j = 0. The servers scale
  the histogram's shares by an integer s, so one rate λ = ε'/(2s + R) on every coordinate
  (Δ = 2s + R, certified as every NoisePlan) is λ·s per histogram unit and λ per unit of j: ε
  split 2s : R (`pair_split`): evenly (2s the integer nearest R) when the distribution is asked,
  else (the mean of a hidden follow-up) the s minimizing the noise of the mean among those
  asked at its worst, (2s + R)²(1 + R²/s²), whose derivative vanishes at s³ = R³/2.

The estimates (n reports; v the noise variance of a released total, both servers' 2σ²; a
histogram total of the pair is divided by s, so its noise is v/s²). Respondents are taken as a
random sample, so every standard error counts sampling and both servers' noise:

- the mean: origin + step·S/n with Var = step²·(σ_j²/n + v/n²), σ_j² at the Bhatia-Davis bound
  (R - μ_j)·μ_j (the servers add up j, not j²: the interval may be wider than needed, never
  narrower), the worst case R²/4;
- a bin's share f_b = C_b/n with Var = f_b(1 - f_b)/n + v_C/n²;
- the CDF at x, the answers spread evenly inside a bin (the estimand is the CDF of the binned
  distribution, linear inside each bin): F(x) = w·f with w = 1 on the bins below x and t on x's
  bin (t its fraction of the bin), Var = (Σ w_b² f_b - F²)/n + v_C·Σ w_b²/n²;
- the p-quantile: where the (Norm-Sub) CDF reaches p, interpolated inside its bin; its interval
  inverts the CDF's pointwise intervals, {x : F̂(x) - z·se(x) < p <= F̂(x) + z·se(x)} (scanned at
  SCAN points per bin, widened to the scan's point before and after: never narrower): it
  covers the true quantile x_p whenever F's interval at x_p covers F(x_p) = p: with the CDF's
  coverage at least;
- a hidden follow-up: A = n - C_na were asked (noise v_C), π = A/n; the share not asked has
  Var = π(1 - π)/n + v_C/n², and each quantity among those asked is a ratio W/A of totals
  (the mean's S, a bin's C_b, the CDF's w·C): by the delta method with u = w - (W/A)·a per
  respondent, Var = (π·Var_asked(w)/n + (v_W + (W/A)²·v_C)/n²)/π², v_W the noise of W (its
  coordinates and the "not asked" cell's are independent draws).
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np

from ..errors import EstimateError
from ..estimates import AmongAsked, MeanEstimate, ValueEstimate, norm_sub, z_value
from ..mechanisms.numeric_scale import QUANTILE_NAMES
from ..numeric.distribution import QUARTILES
from ..question_types.base import NOT_ASKED
from .asked_pair import icbrt
from .entry import check_kind, noise_variance, too_noisy_notes
from .noise import SERVERS

SCAN = 256  # points per bin at which a quantile's interval is read off the CDF's band
NOTE = ("{what} (the answer kept on the device to steps of {step} from {origin}) {verb} added "
        "up by the two servers{split}; each adds its own geometric noise, counted in every "
        "standard error")
BINS_NOTE = ("bins and quartiles: the answers are taken as spread evenly inside each bin (a "
             "quartile is interpolated inside its bin); a quartile's interval inverts the CDF's "
             "pointwise intervals")
ASKED_NOTE = ("{what} among those asked: ratios of estimates over the estimated number asked "
              "(delta-method standard errors)")


@dataclass(frozen=True)
class Grid:
    """A number kept on the grid origin + j·step, j in [0, points - 1], and what is measured
    of it: its mean, its distribution over the bins with these `edges` (answer units,
    increasing, covering the grid; () when not asked), and whether a "not asked" value is."""

    origin: Fraction
    step: Fraction
    points: int
    edges: tuple[Fraction, ...] = ()
    mean: bool = True
    not_asked: bool = False

    def __post_init__(self) -> None:
        if self.points < 2 or self.step <= 0:
            raise ValueError("a grid has at least 2 points and a positive step")
        if not self.mean and not self.edges:
            raise ValueError("a grid measures its mean, its distribution or both")
        if self.edges and (len(self.edges) < 2
                           or any(b <= a for a, b in itertools.pairwise(self.edges))
                           or self.edges[0] > self.origin or self.edges[-1] < self.value(
                               self.top)):
            raise ValueError("bins are increasing edges that cover the grid")

    @property
    def top(self) -> int:
        """R, the largest grid index."""
        return self.points - 1

    def value(self, j: float) -> Any:
        """The number at grid index j (a Fraction for an integer j)."""
        return self.origin + self.step * j

    @property
    def bins(self) -> tuple[Fraction, ...]:
        """The edges the histogram measures: the designer's, else the whole range as one."""
        return self.edges or (self.origin, self.value(self.top))

    @property
    def cells(self) -> int:
        """The histogram's cells: its bins, and "not asked" last where the question has it."""
        return len(self.bins) - 1 + int(self.not_asked)

    def bin_of(self, j: int) -> int:
        """The bin of grid point j: [e_i, e_(i+1)), the last closed."""
        return min(max(bisect.bisect_right(self.bins, self.value(j)) - 1, 0),
                   len(self.bins) - 2)


def pair_split(grid: Grid) -> int:
    """s, the histogram's scale in a pair (module docstring): the even split when a
    distribution is measured, else the integer s >= 1 minimizing (2s + R)²(1 + R²/s²)."""
    r = grid.top
    if grid.edges:
        return max(1, (r + 1) // 2)
    root = icbrt(r**3 // 2)

    def cost(s: int) -> Fraction:
        return Fraction((2 * s + r) ** 2 * (s * s + r * r), s * s)

    return min({max(root, 1), root + 1}, key=lambda s: (cost(s), s))


def grid_encoding(key: str, grid: Grid, build: Callable[..., Any]) -> Any:
    """The Prio3 encoding of a number on `grid` (module docstring); `build` the Encoding class
    (shared/two_server/encoding.py, which imports this module)."""
    if grid.mean and not grid.edges and not grid.not_asked:
        return build(key, "sum", 1, grid.top, 0, grid=grid)
    if not grid.mean:
        return build(key, "histogram", grid.cells, grid=grid)
    s = pair_split(grid)
    return build(key, "histogram_sum", grid.cells + 1, grid.top, 0, delta=2 * s + grid.top,
                 scale=s, grid=grid)


def grid_measurement(encoding: Any, j: int | None) -> Any:
    """The measurement of grid index j (None: "not asked") in `encoding` (kind sum: j;
    histogram: the bin or the last cell; histogram_sum: [that cell, [j or 0]])."""
    grid: Grid = encoding.grid
    if j is not None and (isinstance(j, bool) or not isinstance(j, int)
                          or not 0 <= j <= grid.top):
        raise ValueError(f"grid index {j!r} is outside [0, {grid.top}]")
    cell = grid.cells - 1 if j is None else grid.bin_of(j)
    if encoding.kind == "sum":
        assert j is not None
        return j
    if encoding.kind == "histogram":
        return cell
    return [cell, [0 if j is None else j]]


# --- estimates --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Totals:
    """What the servers released of a grid question, read by kind: the sum S of j, the
    histogram's counts C (divided by the pair's scale), and each one's noise variance; `asked`
    the number asked with its noise (n and 0 without a "not asked" cell)."""

    n: int
    total: float | None
    total_noise: float
    counts: np.ndarray | None
    counts_noise: float
    asked: float
    asked_noise: float

    @property
    def share_asked(self) -> float:
        return self.asked / self.n

    def ratio_variance(self, per_report: Any, ratio: Any, noise: Any) -> Any:
        """Var of W/A: (π·Var_asked(w)/n + (v_W + (W/A)²·v_A)/n²)/π² (module docstring); π
        clipped to (0, 1]; numbers or numpy arrays."""
        pi = min(max(self.share_asked, 1e-12), 1.0)
        n = self.n
        return (pi * per_report / n + (noise + ratio**2 * self.asked_noise) / n**2) / pi**2


def read_totals(encoding: Any, sums: Sequence[int], n: int, noise: float) -> Totals:
    """Totals of a grid question from its released sums (`noise`: v, both servers')."""
    grid: Grid = encoding.grid
    values = [int(v) for v in sums]
    if len(values) != encoding.length:
        raise EstimateError(f"the batch holds {len(values)} totals where this question's "
                            f"{encoding.kind} has {encoding.length}")
    total: float | None = None
    counts: np.ndarray | None = None
    counts_noise = noise
    if encoding.kind == "sum":
        total = float(values[0])
    elif encoding.kind == "histogram":
        counts = np.asarray(values, dtype=float)
    else:
        counts = np.asarray(values[:-1], dtype=float) / encoding.scale
        counts_noise = noise / encoding.scale**2
        total = float(values[-1])
    if grid.not_asked:
        assert counts is not None
        return Totals(n, total, noise, counts[:-1], counts_noise, n - float(counts[-1]),
                      counts_noise)
    return Totals(n, total, noise, counts, counts_noise, float(n), 0.0)


def estimate_grid(question: Any, entry: Any, result: Any, confidence: float,
                  encoding: Any, quantiles: Sequence[float] = QUARTILES) -> Any:
    """`result` (a TwoServerEstimate) with the mean and/or the distribution over the bins (its
    rows named "low to high") and the quantiles (named "median", ...) of a number on a grid
    (module docstring), among those asked for a hidden follow-up."""
    grid: Grid = encoding.grid
    z = z_value(confidence)
    n = int(result.n)
    check_kind(question.id, entry, encoding.kind)
    what = " and ".join(w for w, on in (("its grid index", grid.mean),
                                        ("its bin", bool(grid.edges))) if on)
    split = ""
    if encoding.kind == "histogram_sum":
        measured = 2 * encoding.scale + grid.top
        split = (f", the central ε split {2 * encoding.scale}/{measured} to the histogram and "
                 f"{grid.top}/{measured} to the sum")
    result.notes.append(NOTE.format(what="I" + what[1:], step=_number(grid.step),
                                    origin=_number(grid.origin), split=split,
                                    verb="are" if " and " in what else "is"))
    if grid.edges:
        result.notes.append(BINS_NOTE)
    if grid.not_asked:
        asked = " and ".join(w for w, on in (("the mean", grid.mean),
                                             ("the distribution", bool(grid.edges))) if on)
        result.notes.append(ASKED_NOTE.format(what=asked[0].upper() + asked[1:]))
    if n == 0:
        _empty(grid, result, quantiles)
        return result
    totals = read_totals(encoding, entry.noisy_sums, n, SERVERS * noise_variance(entry))
    if grid.not_asked:
        share = 1.0 - totals.share_asked
        se = math.sqrt(max(share * (1 - share), 0.0) / n + totals.asked_noise / n**2)
        result.not_asked = ValueEstimate(NOT_ASKED, share, se, 0.25 / n + totals.asked_noise
                                         / n**2, share - z * se, share + z * se,
                                         min(max(share, 0.0), 1.0))
        if totals.asked <= 0:
            result.notes.append("the estimated number asked is not positive: too few "
                                "respondents to estimate anything among those asked")
            result.among_asked = AmongAsked(mean=MeanEstimate(None, None, None, None, None)
                                            if grid.mean else None)
            return result
    if grid.mean:
        mean = _mean(grid, totals, z)
        if grid.not_asked:
            result.among_asked = AmongAsked(mean=mean)
        else:
            result.mean = mean
        result.notes += too_noisy_notes(
            float(grid.step) * math.sqrt(totals.total_noise) / max(totals.asked, 1.0),
            float(grid.step) * grid.top, n, z, confidence, "of the mean",
            f"the whole range ({_number(grid.origin)} to {_number(grid.value(grid.top))})")
    if grid.edges:
        result.distribution, result.quantiles = _distribution(grid, totals, z, quantiles)
    return result


def _number(x: Fraction) -> str:
    """An exact grid value as plain decimal text ("0.5", "20000"; a decimal's grid values and
    bins terminate, any other rational is cut to 28 significant digits)."""
    if x.denominator == 1:
        return str(x.numerator)
    text = format((Decimal(x.numerator) / Decimal(x.denominator)).normalize(), "f")
    return "0" if text in ("-0", "0") else text


def bin_labels(grid: Grid) -> list[str]:
    """The bins as report rows name them: "low to high" in the answer's units."""
    return [f"{_number(a)} to {_number(b)}" for a, b in itertools.pairwise(grid.edges)]


def quantile_name(p: float) -> str:
    """A quantile as report rows name it ("median", "1st quartile"), as the LDP path does."""
    return QUANTILE_NAMES.get(p, f"quantile {p:g}")


def _empty(grid: Grid, result: Any, quantiles: Sequence[float]) -> None:
    none = MeanEstimate(None, None, None, None, None)
    if grid.not_asked:
        result.not_asked = ValueEstimate(NOT_ASKED, None, None, None, None, None, None)
        result.among_asked = AmongAsked(mean=none if grid.mean else None)
    elif grid.mean:
        result.mean = none
    if grid.edges:
        result.distribution = [ValueEstimate(label, None, None, None, None, None, None)
                               for label in bin_labels(grid)]
        result.quantiles = [ValueEstimate(quantile_name(p), None, None, None, None, None, None)
                            for p in quantiles]


def _mean(grid: Grid, totals: Totals, z: float) -> MeanEstimate:
    """origin + step·S/A with the ratio's (or, everyone asked, the mean's) variance."""
    assert totals.total is not None
    r = grid.top
    mean_j = totals.total / totals.asked
    mu = min(max(mean_j, 0.0), float(r))
    step = float(grid.step)
    var = totals.ratio_variance((r - mu) * mu, mean_j, totals.total_noise)
    se = step * math.sqrt(var)
    value = float(grid.origin) + step * mean_j
    bound = (None if grid.not_asked else  # a ratio has no worst case
             step**2 * (r * r / 4 / totals.n + totals.total_noise / totals.n**2))
    return MeanEstimate(value, se, bound, value - z * se, value + z * se)


def _distribution(grid: Grid, totals: Totals, z: float, quantiles: Sequence[float]
                  ) -> tuple[list[ValueEstimate], list[ValueEstimate]]:
    """The bins' shares (rows named by `bin_labels`) and the quantiles (module docstring)."""
    assert totals.counts is not None
    edges = np.asarray([float(e) for e in grid.edges])
    bins = edges.size - 1
    raw = totals.counts / totals.asked
    shares = norm_sub(raw)
    noise = totals.counts_noise
    out_bins = []
    for b, label in enumerate(bin_labels(grid)):
        se = math.sqrt(totals.ratio_variance(shares[b] * (1 - shares[b]), raw[b], noise))
        bound = (None if grid.not_asked  # a ratio has no worst case
                 else 0.25 / totals.n + noise / totals.n**2)
        out_bins.append(ValueEstimate(label, float(raw[b]), se, bound, float(raw[b]) - z * se,
                                      float(raw[b]) + z * se, float(shares[b])))
    # the CDF at SCAN points per bin and the last edge: weights 1 below, t on x's bin
    t = np.arange(SCAN) / SCAN
    weights = np.zeros((bins * SCAN + 1, bins))
    xs = np.empty(bins * SCAN + 1)
    for b in range(bins):
        rows = slice(b * SCAN, (b + 1) * SCAN)
        weights[rows, :b] = 1.0
        weights[rows, b] = t
        xs[rows] = edges[b] + t * (edges[b + 1] - edges[b])
    weights[-1, :] = 1.0
    xs[-1] = edges[-1]
    estimate = weights @ raw
    plugged = weights @ shares
    per = np.maximum((weights**2) @ shares - plugged**2, 0.0)
    squares = (weights**2).sum(axis=1)
    se = np.sqrt(totals.ratio_variance(per, estimate, noise * squares))
    low, high = estimate - z * se, estimate + z * se
    out_quantiles = []
    cumulative = np.cumsum(shares)
    for p in quantiles:
        b = min(int(np.searchsorted(cumulative, p - 1e-12)), bins - 1)
        before = cumulative[b - 1] if b else 0.0
        inside = min(max((p - before) / shares[b], 0.0), 1.0) if shares[b] > 0 else 0.5
        value = float(edges[b] + inside * (edges[b + 1] - edges[b]))
        reached = np.flatnonzero(high >= p)  # widened to the scan's point before
        ci_low = float(xs[max(reached[0] - 1, 0)]) if reached.size else float(edges[-1])
        short = np.flatnonzero(low < p)
        ci_high = (float(xs[min(short[-1] + 1, xs.size - 1)]) if short.size
                   else float(edges[0]))
        ci_low, ci_high = min(ci_low, value), max(ci_high, value)
        out_quantiles.append(ValueEstimate(quantile_name(p), value,
                                           (ci_high - ci_low) / (2 * z), None, ci_low,
                                           ci_high, None))
    return out_bins, out_quantiles
