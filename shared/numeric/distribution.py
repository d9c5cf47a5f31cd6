"""A number's distribution from Square Wave reports: EMS over the grid, then bins, the CDF, any
quantile and the mean, each with a bootstrap interval over reports.

Intervals. Respondents are taken as drawn at random, each sending one report, so the n reports
are n independent draws from the report distribution A·f. The bootstrap redraws n reports from
the observed ones (the report counts resampled multinomially), reruns EMS on each replicate
and reads every quantity off each replicate: std error = the replicates' standard deviation.
Bins, CDF points and grid points: the percentile interval read at order statistics: with R
replicates and confidence c, the i-th and (R + 1 - i)-th smallest, i = max(1, floor((R + 1)
(1 - c)/2)). A new draw from the replicates' law falls between those two with probability
(R + 1 - 2i)/(R + 1) >= c (R = 79: the 2nd and 78th, exactly 95%), where interpolated
2.5%/97.5% quantiles give about 0.95(R - 1)/(R + 1). This carries sampling, randomization and
EMS's own behaviour (its smoothing and stopping) through every functional at once, which a
variance formula cannot: EMS is not linear.

Quantiles: the percentile interval of the replicates' quantiles (`quantile_summary`; the
crosstab and by-group medians of shared/numeric/joint_ems.py read theirs there too). The
p-quantile's estimate is read off the point fit's CDF (`Cells.quantile`); each replicate's fit
gives its own p-quantile, the interval is those R values read at the same order statistics as
the bins (the 2nd and 78th of 79 at 95%), and the std error is their standard deviation. Should
the estimate fall outside that interval (fewer than i replicates' quantiles on one side of it),
the interval is widened to reach it, so it always holds the number it is reported with; in the
400-run measurement at ε = 1 (1,617 runs, 4,851 quartiles) that never happened. It grows with
the confidence: at a fixed R the order index i does not increase as c does, and the default R
(`resamples_for`) is 79 up to 97.5% (where i only falls as c rises) and above it takes the
extremes of more replicates, the first 79 of which are the 79 drawn at 95% (the generator draws
them in order, EMS fits each row alone), so its extremes enclose the 95% interval.

Why this method (bench/RESULTS-numeric-distribution.md). From 2026-12-06 to 2026-12-07 the
interval was test inversion of the EMS CDF (the t with |F̂(t) - p| <= z·se(t)), chosen because a
quantile's bootstrap spread is the CDF's divided by one survey's noisy EMS density there (the
median's bootstrap s.e. ranged 10 to 59 across surveys at ε = 1, n = 2,000 on 1024 points,
against a true s.d. of 31). 400 runs per cell at ε = 1 on the paper's window (B = 261) then
measured both on identical replicates: the median's inverted interval covered 0.948 / 0.945
(log-normal income, n = 2,000 / 20,000) and 0.925 / 0.938 (bimodal), missing 95% ± 2% on
bimodal at n = 2,000, where EMS pulls the median off the truth and the inversion centres on
that pulled CDF; the percentile interval covered 0.950 / 0.955 and 0.943 / 0.935, inside the
target in all four. Why not an unbiased linear CDF: the only unbiased linear CDF estimator of a
box channel telescopes window sums (F(x) = Σ_i g_(x-iL)), and at ε = 1 its standard deviation
passes 1 at n = 2,000 on a 1024-point grid: no interval at all (linear_inverse.py's unsmoothed
inverse is unbiased only for densities linear within segments). The replicates use a numpy
generator seeded from the counts: analysis only (no report is drawn here), and the same counts
give the same intervals.

Answers and cells. The mechanism keeps answer index i on grid point j (square_wave.py), so grid
point j carries the answers of its cell, indices first_j..last_j. Within a cell the estimate
spreads the mass evenly over those answers (bins, CDF) and, for quantiles, evenly over the
continuous span [first_j - 1/2, last_j + 1/2] of the index scale (the usual interpolated
quantile of a histogram), in answer units low + index.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Any, Protocol

import numpy as np

from ..errors import EstimateError
from ..estimates import MeanEstimate, ValueEstimate, finite_or_none, z_value
from .ems import WindowChannel, ems


class SquareWave(Protocol):
    """What the estimates read of shared/mechanisms/square_wave.py's mechanism (a protocol: the
    mechanism imports this module, not the other way round)."""

    question_id: str
    name: str
    epsilon: float
    low: int
    k: int
    d: int
    m: int
    window: int
    cells: tuple[np.ndarray, np.ndarray]

    @property
    def p_cell(self) -> Fraction: ...

    @property
    def q_cell(self) -> Fraction: ...

    def point_labels(self) -> list[Any]: ...

    def mean_estimate(self, counts: np.ndarray, z: float) -> MeanEstimate: ...

# Bootstrap replicates: with R = 79 the 95% order interval is exactly the 2nd and 78th smallest
# replicate, (R + 1)·0.025 and (R + 1)·0.975 (module docstring, `order_interval`); more where
# the confidence asks for it (`resamples_for`).
RESAMPLES = 79


def resamples_for(confidence: float) -> int:
    """The default replicate count at `confidence`: RESAMPLES, or the fewest whose order
    interval is exact, 2/(1 - confidence) - 1, where that is more (199 at 99%)."""
    return max(RESAMPLES, math.ceil(2 / (1 - confidence) - 1e-9) - 1)
QUARTILES = (0.25, 0.5, 0.75)
EMS_NOTE = ("the distribution is EMS (EM with smoothing, Li et al. 2020): non-negative, sums "
            "to 1, biased toward smooth shapes; its shares' intervals are bootstrap percentile "
            "intervals over reports")
QUANTILE_NOTE = ("the median and quartiles are read off the EMS CDF (interpolated within a grid "
                 "point's answers); each interval is the bootstrap percentile interval of the "
                 "replicates' own quantile (widened to the estimate should it fall outside), "
                 "its standard error their standard deviation")


class _FiniteFields:
    """`to_dict`: every field, NaN and infinities as None (JSON has no such numbers)."""

    def to_dict(self) -> dict[str, Any]:
        return {k: finite_or_none(v) for k, v in asdict(self).items()}


@dataclass
class BinShare(_FiniteFields):
    """The share of answers in [low, high) with its interval."""

    low: float
    high: float
    estimate: float | None
    std_error: float | None
    ci_low: float | None
    ci_high: float | None


@dataclass
class CdfPoint(_FiniteFields):
    """P[answer <= value] with its interval."""

    value: float
    estimate: float | None
    ci_low: float | None
    ci_high: float | None


@dataclass
class QuantileEstimate(_FiniteFields):
    """The p-quantile of the answers (answer units) with its interval."""

    p: float
    estimate: float | None
    std_error: float | None
    ci_low: float | None
    ci_high: float | None


@dataclass
class DistributionEstimate:
    """Everything estimated about one numeric question's distribution (module docstring)."""

    question: str
    mechanism: str
    epsilon: float
    n: int
    confidence: float
    resamples: int
    points: list[ValueEstimate]
    mean: MeanEstimate
    bins: list[BinShare] = field(default_factory=list)
    cdf: list[CdfPoint] = field(default_factory=list)
    quantiles: list[QuantileEstimate] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def median(self) -> QuantileEstimate | None:
        return next((q for q in self.quantiles if q.p == 0.5), None)

    def to_dict(self) -> dict[str, Any]:
        return {"question": self.question, "mechanism": self.mechanism,
                "epsilon": self.epsilon, "n": self.n, "confidence": self.confidence,
                "consistent_method": "ems", "resamples": self.resamples,
                "points": [p.to_dict() for p in self.points], "mean": self.mean.to_dict(),
                "bins": [b.to_dict() for b in self.bins], "cdf": [c.to_dict() for c in self.cdf],
                "quantiles": [q.to_dict() for q in self.quantiles], "notes": list(self.notes)}


@dataclass(frozen=True)
class Cells:
    """The answers on each grid point: indices first_j..last_j; `low` the first label."""

    first: np.ndarray
    last: np.ndarray
    low: int

    @classmethod
    def of(cls, mech: SquareWave) -> Cells:
        first, last = mech.cells
        return cls(first.astype(float), last.astype(float), mech.low)

    def share_at_most(self, f: np.ndarray, value: float) -> np.ndarray:
        """P[answer <= value] for each row of f (answers spread evenly over their cell)."""
        top = math.floor(value - self.low)  # the largest index i with low + i <= value
        inside = np.clip(top - self.first + 1, 0, self.last - self.first + 1)
        return f @ (inside / (self.last - self.first + 1))

    def share_within(self, f: np.ndarray, low: float, high: float) -> np.ndarray:
        """P[low <= answer < high] for each row of f."""
        below_high = math.ceil(high - self.low) - 1  # largest i with low + i < high
        below_low = math.ceil(low - self.low) - 1  # largest i with low + i < low
        size = self.last - self.first + 1
        count = (np.clip(below_high - self.first + 1, 0, size)
                 - np.clip(below_low - self.first + 1, 0, size))
        return f @ (count / size)

    def quantile(self, f: np.ndarray, p: float) -> np.ndarray:
        """The interpolated p-quantile (answer units) of each row of f (module docstring)."""
        f = np.atleast_2d(f)
        cumulative = np.cumsum(f, axis=1)
        j = np.minimum((cumulative < p - 1e-12).sum(axis=1), f.shape[1] - 1)
        rows = np.arange(f.shape[0])
        before = np.where(j > 0, cumulative[rows, np.maximum(j - 1, 0)], 0.0)
        mass = f[rows, j]
        fraction = np.where(mass > 0, np.clip((p - before) / np.where(mass > 0, mass, 1), 0, 1),
                            0.5)
        lo, hi = self.first[j] - 0.5, self.last[j] + 0.5
        return self.low + lo + fraction * (hi - lo)


def order_interval(replicates: np.ndarray, confidence: float) -> tuple[Any, Any]:
    """The i-th and (R + 1 - i)-th smallest of R replicates (along axis 0), i =
    max(1, floor((R + 1)(1 - confidence)/2)) (module docstring)."""
    count = replicates.shape[0]
    i = max(1, math.floor((count + 1) * (1 - confidence) / 2 + 1e-9))
    ordered = np.sort(replicates, axis=0)
    return ordered[i - 1], ordered[count - i]


def bootstrap_summary(values: np.ndarray,
                      confidence: float) -> tuple[float, float, float, float]:
    """(estimate, std error, low, high) of one quantity from its values on [point fit,
    replicate fits...]: the estimate the first, the std error the replicates' standard
    deviation, the interval their order interval (`order_interval`). Without two replicates,
    no interval (NaN)."""
    estimate = float(values[0])
    if values.shape[0] < 3:
        return estimate, math.nan, math.nan, math.nan
    low, high = order_interval(values[1:], confidence)
    return estimate, float(np.std(values[1:], ddof=1)), float(low), float(high)


def quantile_summary(cells: Cells, fits: np.ndarray, p: float,
                     confidence: float) -> tuple[float, float, float, float]:
    """(estimate, std error, low, high) of the p-quantile in answer units from
    [point fit, replicate fits...] (rows of grid-point shares): the estimate read off the point
    fit, the std error and interval those of the replicates' own p-quantiles
    (`bootstrap_summary`), the interval widened to hold the estimate should it fall outside
    (module docstring, "Quantiles"). `distribution_estimate` and the crosstab medians
    (joint_ems.category_quantiles) both read their quantiles here."""
    estimate, se, low, high = bootstrap_summary(cells.quantile(fits, p), confidence)
    if math.isnan(low):
        return estimate, se, low, high
    return estimate, se, min(low, estimate), max(high, estimate)


def window_channel(mech: SquareWave) -> WindowChannel:
    return WindowChannel(d=mech.d, window=mech.window, p=float(mech.p_cell),
                         q=float(mech.q_cell))


def bootstrap_counts(counts: np.ndarray, resamples: int) -> np.ndarray:
    """`resamples` multinomial redraws of n reports from the observed report counts, from a
    generator seeded by the counts themselves (same counts, same intervals)."""
    counts = np.asarray(counts, dtype=np.int64)
    seed = int.from_bytes(hashlib.sha256(counts.tobytes()).digest()[:8], "big")
    rng = np.random.default_rng(seed)
    n = int(counts.sum())
    return rng.multinomial(n, counts / n, size=resamples)


def distribution_estimate(mech: SquareWave, counts: np.ndarray, *,
                          bins: Sequence[float] | None = None,
                          quantiles: Sequence[float] = QUARTILES,
                          cdf_at: Sequence[float] | None = None, confidence: float = 0.95,
                          resamples: int | None = None) -> DistributionEstimate:
    """EMS distribution, bins (`bins`: increasing edges, bins [e_i, e_(i+1)) in answer units),
    CDF at `cdf_at` (default: the bin edges, else 21 evenly spaced values over the range),
    `quantiles` and the mean, with `confidence` bootstrap intervals from `resamples`
    replicates (default `resamples_for(confidence)`; quantiles: the percentile interval of the
    replicates' quantiles, `quantile_summary`)."""
    z = z_value(confidence)
    resamples = resamples_for(confidence) if resamples is None else resamples
    counts = np.asarray(counts, dtype=np.int64)
    if counts.shape != (mech.m,):
        raise EstimateError(f"expected {mech.m} report counts, got {counts.shape}")
    if not all(0 < p < 1 for p in quantiles):
        raise EstimateError("quantiles must lie strictly between 0 and 1")
    if resamples and (resamples + 1) * (1 - confidence) / 2 < 1 - 1e-9:
        raise EstimateError(f"a {confidence:g} interval needs at least "
                            f"{math.ceil(2 / (1 - confidence) - 1 - 1e-9)} resamples")
    edges = [float(e) for e in bins or ()]
    if any(b <= a for a, b in itertools.pairwise(edges)) or len(edges) == 1:
        raise EstimateError("bins must be at least two increasing edges")
    if cdf_at is None:
        high = mech.low + mech.k - 1
        cdf_at = edges or list(np.linspace(mech.low, high, 21))
    n = int(counts.sum())
    labels = mech.point_labels()
    result = DistributionEstimate(question=mech.question_id, mechanism=mech.name,
                                  epsilon=mech.epsilon, n=n, confidence=confidence,
                                  resamples=resamples, points=[], mean=MeanEstimate(
                                      None, None, None, None, None))
    if n == 0:
        result.points = [ValueEstimate(v, None, None, None, None, None, None) for v in labels]
        result.bins = [BinShare(a, b, None, None, None, None) for a, b in itertools.pairwise(edges)]
        result.cdf = [CdfPoint(float(x), None, None, None) for x in cdf_at]
        result.quantiles = [QuantileEstimate(p, None, None, None, None) for p in quantiles]
        return result
    channel = window_channel(mech)
    cells = Cells.of(mech)
    replicates = bootstrap_counts(counts, resamples) if resamples else np.zeros((0, mech.m))
    fits = ems(channel, np.vstack([counts[None, :], replicates]))
    point, boot = fits[0], fits[1:]
    if boot.shape[0] > 1:
        se = boot.std(axis=0, ddof=1)
        low, high = order_interval(boot, confidence)
    else:
        se = low = high = np.full(mech.d, math.nan)
    result.points = [ValueEstimate(value=v, estimate=float(f), std_error=float(s),
                                   variance_bound=None, ci_low=float(a), ci_high=float(b),
                                   consistent=float(f))
                     for v, f, s, a, b in zip(labels, point, se, low, high, strict=True)]
    for a, b in itertools.pairwise(edges):
        est, s, lo, hi = bootstrap_summary(cells.share_within(fits, a, b), confidence)
        result.bins.append(BinShare(a, b, est, s, lo, hi))
    for x in cdf_at:
        est, _, lo, hi = bootstrap_summary(cells.share_at_most(fits, float(x)), confidence)
        result.cdf.append(CdfPoint(float(x), est, lo, hi))
    for p in quantiles:
        est, s, lo, hi = quantile_summary(cells, fits, float(p), confidence)
        result.quantiles.append(QuantileEstimate(float(p), est, s, lo, hi))
    result.mean = mech.mean_estimate(counts, z)
    result.notes.append(EMS_NOTE)
    if quantiles:
        result.notes.append(QUANTILE_NOTE)
    result.notes.append("the mean is the unbiased linear estimate from the reports (exact "
                        "channel), not the EMS distribution's mean")
    return result


def describe_distribution(mech: SquareWave, counts: np.ndarray, confidence: float = 0.95,
                          resamples: int | None = None) -> DistributionEstimate:
    """The per-grid-point distribution and mean (`SquareWave.estimate`)."""
    return distribution_estimate(mech, counts, confidence=confidence, quantiles=(),
                                 cdf_at=(), resamples=resamples)
