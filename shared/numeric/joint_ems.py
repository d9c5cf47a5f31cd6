"""A number's median and quartiles within each category of a randomized question: EM over the
product of the two channels (docs/crosstabs.md, "A number's median among a randomized
category").

Each respondent sends two reports of a true pair (c, b): the other question's report a, drawn
by its channel A[c, a] = P[a | c] (an "index" mechanism: `Mechanism.index_channel`), and the
number's square wave cell s, drawn by the window channel S[s, b] over the grid points
(shared/numeric/ems.py), independently given the pair. So P(a, s | c, b) = A[c, a]·S[s, b], and
the joint count matrix N[a, s] of the n report pairs has expectation n·(Aᵀ π Sᵀ)[a, s], π[c, b]
the joint distribution of the true pair. The EM step on that likelihood is

    π <- π ⊙ (A (N ⊘ (Aᵀ π Sᵀ)) S) / n,

with EMS's binomial smoothing (ems.smooth) applied to each category's row along b, the row
rescaled to its mass before smoothing (smoothing is within a category, not across them). The
stopping rule, and the loop, are EMS's (ems.until_stable): the log-likelihood Σ N ln(Aᵀ π Sᵀ)
improves by less than τ after the first two iterations, or π moves by at most 1/n in L1.

Each category's distribution of the number is π[c, ·]/π[c, ·].sum(); its quartiles are read as
shared/numeric/distribution.py reads one distribution's (`Cells.quantile`), and their intervals
are made the same way too (`quantile_summary`): N resampled multinomially (the n report pairs
redrawn), EM rerun on each replicate, each replicate's category quantile read off its own
category distribution; the interval is those quantiles' percentile interval at the bins' order
statistics (the 2nd and 78th of 79 at 95%, widened to the estimate should it fall outside),
the std error their standard deviation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import EstimateError
from ..estimates import finite_or_none, z_value
from ..mechanisms.base import JointReading
from .distribution import (
    QUARTILES,
    Cells,
    SquareWave,
    bootstrap_counts,
    quantile_summary,
    resamples_for,
    window_channel,
)
from .ems import MAX_ITERATIONS, TOLERANCE, WindowChannel, smooth, until_stable

QUANTILE_NAMES = {0.25: "q1", 0.5: "median", 0.75: "q3"}
NOTE = ("medians and quartiles per category: EM over the product of the two channels on the "
        "joint counts of the report pairs, EMS's smoothing within each category; intervals "
        "are bootstrap percentile intervals of each category's quantile over report pairs, "
        "standard errors the replicates' standard deviation")
# Why a category's quartiles are not given, said in the cell (`not_estimated`).
MEAN_ONLY = ("quartiles need square_wave or a distribution estimate; this question's mechanism "
             "estimates the mean only")
DISCLOSED_NUMBER = ("quartiles per category of a disclosed number are not built (its mean per "
                    "category is)")
WHOLE_QUESTION_ONLY = ("quartiles per category are estimated against a whole question with one "
                       "report index (yes/no, categorical, ordinal); not against a declared "
                       "group, an option of a multiselect question or a binned integer")


@dataclass(frozen=True)
class WindowReports:
    """How a crosstab reads a number's square wave reports (`JointReports.window_reports`):
    the square wave mechanism (channel and cells), each stored report's cell index, and the
    map from the mechanism's label scale to the question's units (a decimal's scale)."""

    mechanism: SquareWave
    keys: Callable[[Any], np.ndarray]
    to_units: Callable[[float], float] = float
    spread: Callable[[float], float] = float


@dataclass
class CategoryQuantile:
    """The p-quantile of the number among one category, with its bootstrap interval."""

    p: float
    estimate: float | None
    std_error: float | None
    ci_low: float | None
    ci_high: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"p": self.p, "name": QUANTILE_NAMES.get(self.p, f"p{self.p:g}"),
                **{k: finite_or_none(getattr(self, k))
                   for k in ("estimate", "std_error", "ci_low", "ci_high")}}


@dataclass
class CategoryQuantiles:
    """One category of the other question: its estimated share and the number's quantiles."""

    category: Any
    share: float | None
    quantiles: list[CategoryQuantile] = field(default_factory=list)
    note: str | None = None  # why the quantiles are not estimated (None: they are)
    # a design-based CDF among the category the quantiles interpolate: {label, point,
    # estimate, std_error, ci_low, ci_high} per bin edge (analyst/design/crosstab.py)
    cdf: list[dict[str, Any]] | None = None

    def to_dict(self) -> dict[str, Any]:
        d = {"category": self.category, "share": finite_or_none(self.share),
             "quantiles": [q.to_dict() for q in self.quantiles]}
        if self.note is not None:
            d["note"] = self.note
        if self.cdf is not None:
            d["cdf"] = self.cdf
        return d


@dataclass
class JointQuantiles:
    """The number's quantiles among each category (module docstring)."""

    question: str  # the number
    by: str  # the categorical question
    n: int
    confidence: float
    resamples: int
    categories: list[CategoryQuantiles]
    note: str = NOTE
    # "joint_ems" (this module), "design" (a design-based CDF per category, test inversion:
    # analyst/design/crosstab.py) or "none" (`not_estimated`: each category says why)
    method: str = "joint_ems"

    @property
    def estimated(self) -> bool:
        return self.method != "none"

    def to_dict(self) -> dict[str, Any]:
        return {"question": self.question, "by": self.by, "n": self.n,
                "confidence": self.confidence, "resamples": self.resamples,
                "method": self.method, "note": self.note,
                "categories": [c.to_dict() for c in self.categories]}


def quartiles_refusal(windows: WindowReports | None, other: Any, *, whole_question: bool,
                      disclosed: bool) -> str | None:
    """Why a number's quartiles among the other side's categories are not estimated (None:
    `category_quantiles` applies): its reports carry no square wave cell (`windows` None: a
    mean mechanism, whose channel identifies the mean only, or a disclosed number), or the
    other side is not a whole question (`whole_question`: no group, option or bins) whose
    mechanism (`other`) reports one index."""
    if windows is None:
        return DISCLOSED_NUMBER if disclosed else MEAN_ONLY
    if not whole_question or other.joint_reports != JointReading.INDEX:
        return WHOLE_QUESTION_ONLY
    return None


def not_estimated(question: str, by: str, categories: Sequence[Any], n: int,
                  confidence: float, reason: str,
                  quantiles: Sequence[float] = QUARTILES) -> JointQuantiles:
    """The quartiles table of a number whose reports (or whose other side) cannot give them:
    every category's quartiles empty and its note saying why, rather than numbers no channel
    identifies (docs/crosstabs.md, "A number's median among a randomized category")."""
    return JointQuantiles(question, by, n, confidence, 0, [
        CategoryQuantiles(c, None, [CategoryQuantile(float(p), None, None, None, None)
                                    for p in quantiles], note=reason)
        for c in categories], note=reason, method="none")


def joint_counts(index: np.ndarray, keys: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """N[a, s]: how many report pairs are (a, s)."""
    flat = np.asarray(index, dtype=np.int64) * shape[1] + np.asarray(keys, dtype=np.int64)
    return np.bincount(flat, minlength=shape[0] * shape[1]).reshape(shape)


def _expected(channel: WindowChannel, a: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """Aᵀ π Sᵀ for each replicate: (R, C, d) -> (R, a, m); a = A (C, a) as index_channel."""
    r, c, d = pi.shape
    pulled = channel.reports(pi.reshape(r * c, d)).reshape(r, c, channel.m)
    return np.einsum("ca,rcs->ras", a, pulled)


def em_step(channel: WindowChannel, a: np.ndarray, counts: np.ndarray, pi: np.ndarray,
            smoothing: bool = True) -> np.ndarray:
    """One EM(S) iteration for each replicate: counts (R, a, m), π (R, C, d)."""
    r, c, d = pi.shape
    ratio = counts / np.maximum(_expected(channel, a, pi), 1e-300)
    back = np.einsum("ca,ras->rcs", a, ratio).reshape(r * c, channel.m)
    step = pi * channel.pull_back(back).reshape(r, c, d)
    step /= step.sum(axis=(1, 2), keepdims=True)
    if smoothing:
        mass = step.sum(axis=2, keepdims=True)
        smoothed = smooth(step.reshape(r * c, d)).reshape(r, c, d)
        total = smoothed.sum(axis=2, keepdims=True)
        step = smoothed * np.where(total > 0, mass / np.where(total > 0, total, 1), 0.0)
    return step


def joint_ems(channel: WindowChannel, a: np.ndarray, counts: np.ndarray, *,
              smoothing: bool = True, tolerance: float = TOLERANCE,
              max_iterations: int = MAX_ITERATIONS) -> np.ndarray:
    """π (C, d), or (R, C, d) for counts (R, a, m), from a uniform start (module docstring)."""
    counts = np.asarray(counts, dtype=float)
    single = counts.ndim == 2
    counts = counts[None] if single else counts
    a = np.asarray(a, dtype=float)
    r, c = counts.shape[0], a.shape[0]
    out = np.full((r, c, channel.d), 1.0 / (c * channel.d))

    def advance(pi: np.ndarray, cnt: np.ndarray, _: None) -> tuple[np.ndarray, np.ndarray, None]:
        step = em_step(channel, a, cnt, pi, smoothing)
        likelihood = np.einsum("ras,ras->r", cnt,
                               np.log(np.maximum(_expected(channel, a, step), 1e-300)))
        return step, likelihood, None

    until_stable(out, counts, advance, tolerance=tolerance, max_iterations=max_iterations)
    return out[0] if single else out


def category_quantiles(numbers: WindowReports, channel_a: np.ndarray, categories: Sequence[Any],
                       counts: np.ndarray, *, question: str, by: str,
                       quantiles: Sequence[float] = QUARTILES, confidence: float = 0.95,
                       resamples: int | None = None) -> JointQuantiles:
    """Each category's quantiles of the number, in the question's units, with intervals, from
    the joint counts N[a, s] (`joint_counts`); `channel_a` is A[c, a] (`index_channel`'s)."""
    mech = numbers.mechanism
    z_value(confidence)  # a clear error for a confidence outside (0, 1)
    resamples = resamples_for(confidence) if resamples is None else resamples
    counts = np.asarray(counts, dtype=np.int64)
    a = np.asarray(channel_a, dtype=float)
    if counts.shape != (a.shape[1], mech.m):
        raise EstimateError(f"expected a {a.shape[1]} x {mech.m} joint count matrix, got "
                            f"{counts.shape}")
    if resamples and (resamples + 1) * (1 - confidence) / 2 < 1 - 1e-9:
        raise EstimateError(f"a {confidence:g} interval needs at least "
                            f"{math.ceil(2 / (1 - confidence) - 1 - 1e-9)} resamples")
    n = int(counts.sum())
    result = JointQuantiles(question, by, n, confidence, resamples, [])
    if n == 0:
        result.categories = [CategoryQuantiles(c, None, [CategoryQuantile(p, None, None, None,
                                                                          None)
                                                         for p in quantiles])
                             for c in categories]
        return result
    flat = counts.reshape(-1)
    replicates = (bootstrap_counts(flat, resamples).reshape(resamples, *counts.shape)
                  if resamples else np.zeros((0, *counts.shape)))
    fits = joint_ems(window_channel(mech), a, np.concatenate([counts[None], replicates]))
    cells = Cells.of(mech)
    for ci, category in enumerate(categories):
        rows = fits[:, ci, :]
        mass = rows.sum(axis=1)
        conditional = rows / np.where(mass > 0, mass, 1.0)[:, None]
        entry = CategoryQuantiles(category, float(mass[0]))
        for p in quantiles:
            estimate, se, low, high = quantile_summary(cells, conditional, float(p), confidence)
            if resamples > 1:
                se = numbers.spread(se)
                low, high = numbers.to_units(low), numbers.to_units(high)
            else:
                se = low = high = math.nan
            entry.quantiles.append(CategoryQuantile(float(p), numbers.to_units(estimate),
                                                    se, low, high))
        result.categories.append(entry)
    return result
