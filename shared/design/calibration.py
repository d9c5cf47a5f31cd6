"""Calibration of the design weights to known population totals of DISCLOSED covariates:
post-stratification, raking (iterative proportional fitting) and linear (GREG) calibration
with optional bounds, as R's survey package does (`postStratify`, `rake`/`calibrate(calfun =
"raking")`, `calibrate(calfun = "linear", bounds =)`; Deville & Särndal 1992; Lumley 2010).

Each returns a new `Design` whose weights are calibrated and whose `calibration` lists the
step, which then does two things for the estimators:
- `residuals(x)`: the linearized variance uses the influence values' residuals from the
  weighted regression on the calibration variables, as R's `svyrecvar` does. With the design
  weights d_i (before the step) and calibrated weights w_i, for a column x of influence values
      e_i = x_i/w_i,   B = (Σ d_i m_i m_iᵀ)⁻ Σ d_i m_i e_i,   x_i ← x_i − w_i m_iᵀB,
  m_i the step's model row (cell indicators for post-stratification and raking, the given
  covariates for linear calibration). For post-stratification this is R's own formula (cell
  means of e weighted by the old weights); for raking it is the projection R's
  `calibrate(calfun = "raking")` uses (R's `rake()` approximates it by 10 unweighted
  back-fitting sweeps, so its standard errors differ slightly: docs/design-based.md).
- `recalibrate(w)`: the same calibration from other starting weights, for replicate weights
  (R recalibrates every replicate of a replicate design).

The y variable is the pseudo-value z of a randomized answer; the calibration variables must
be disclosed answers (or frame variables): `require_disclosed` refuses a randomized question
with the reason. Calibrating on a randomized answer would need its true value per respondent;
its pseudo-values are unbiased only on average, so g-weights built from them would be random,
often negative, and correlated with the noise of every other estimate of the same
respondent: that is a different estimator, not this one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import CalibrationError
from .keys import unique_keys
from .sample import Design

# Defaults: IPF until every margin is within this relative distance of its total.
RAKE_TOLERANCE = 1e-10
RAKE_MAX_ITERATIONS = 100
# Bounded linear calibration (R's grake): |misfit|/(1 + |total|) below this.
CALIBRATE_TOLERANCE = 1e-10
CALIBRATE_MAX_ITERATIONS = 50
# R's grake rescales the weights first when every total is this many times its sample total.
_RESCALE_THRESHOLD = 20.0
# Totals of margins must agree to this relative precision.
MARGIN_AGREEMENT = 1e-6


def require_disclosed(question: Any) -> None:
    """CalibrationError unless `question` is disclosed (its answers are sent as given)."""
    if not getattr(question, "disclosed", False):
        raise CalibrationError(
            f"cannot calibrate on {question.id!r}: it is a randomized answer. Calibration needs "
            "each respondent's true value of the covariate; the server holds only a randomized "
            "report, whose pseudo-value is unbiased only on average (weights built from it "
            "would be random, can be negative, and share the noise of the estimates). That "
            "needs its own estimator; calibrate on disclosed questions or frame variables",
            {"question": question.id})


@dataclass(frozen=True)
class Margin:
    """One calibration variable: each respondent's category and the population totals.

    `name` names it in errors; `cells` (n,) the respondents' categories (labels: strings or
    numbers; None where missing is refused); `totals` the population count of each category.
    """

    name: str
    cells: Sequence[Any] | np.ndarray | Coded
    totals: Mapping[Any, float]


@dataclass(frozen=True, eq=False)
class Coded:
    """Respondents' categories already numbered: `codes` (n,) each an index into `labels`, -1
    where missing. The same margin as the labels themselves, without a label per respondent
    (at 10^6 respondents numbering text labels in Python took most of a rake)."""

    codes: np.ndarray
    labels: Sequence[Any]

    def __len__(self) -> int:
        return len(self.codes)


# --- the residual projection shared by every step -------------------------------------------


@dataclass(frozen=True, eq=False)
class _CellModel:
    """Model rows that are indicators of categories: m_i = J[joint_i], with `joint` (n,) the
    respondent's joint cell and J (C, p) each joint cell's indicator row. Sums over
    respondents become sums over cells (bincount), so no n x p matrix is built."""

    joint: np.ndarray
    indicators: np.ndarray

    def cell_sums(self, values: np.ndarray) -> np.ndarray:
        """(C, m) sums of the columns of `values` (n, m) per joint cell."""
        c = self.indicators.shape[0]
        out = np.empty((c, values.shape[1]))
        for j in range(values.shape[1]):
            out[:, j] = np.bincount(self.joint, weights=values[:, j], minlength=c)
        return out

    def project(self, d: np.ndarray, e: np.ndarray) -> np.ndarray:
        """m_iᵀB per respondent for the d-weighted least squares of e (n, m) on the rows."""
        j = self.indicators
        counts = np.bincount(self.joint, weights=d, minlength=j.shape[0])
        gram = j.T @ (j * counts[:, None])
        cross = j.T @ self.cell_sums(e * d[:, None])
        beta = np.linalg.lstsq(gram, cross, rcond=None)[0]
        return (j @ beta)[self.joint]


@dataclass(frozen=True, eq=False)
class _DenseModel:
    """Model rows given as an (n, p) matrix (linear calibration on numeric covariates)."""

    rows: np.ndarray

    def project(self, d: np.ndarray, e: np.ndarray) -> np.ndarray:
        m = self.rows
        gram = m.T @ (m * d[:, None])
        cross = m.T @ (e * d[:, None])
        beta = np.linalg.lstsq(gram, cross, rcond=None)[0]
        return m @ beta


def _residuals(model: _CellModel | _DenseModel, before: np.ndarray, after: np.ndarray,
               x: np.ndarray) -> np.ndarray:
    """x_i − w_i m_iᵀB (module docstring), d = `before`, w = `after`."""
    x = np.asarray(x, dtype=np.float64)
    flat = x.ndim == 1
    if flat:
        x = x[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.where(after[:, None] != 0, x / after[:, None], 0.0)
    out = x - after[:, None] * model.project(before, e)
    return out[:, 0] if flat else out


# --- categories --------------------------------------------------------------------------------


def _codes(margin: Margin, n: int) -> tuple[np.ndarray, list[Any], np.ndarray]:
    """(codes (n,), labels, population totals per label) of a margin, every category with
    respondents having a positive total and every positive total having respondents."""
    cells = margin.cells
    if len(cells) != n:
        raise CalibrationError(f"{margin.name!r} has {len(cells)} values for {n} respondents")
    if isinstance(cells, Coded):
        codes, labels = _renumbered(cells, margin.name)
    elif isinstance(cells, np.ndarray) and cells.dtype.kind in "iub":
        uniques, codes = np.unique(cells, return_inverse=True)
        labels = uniques.tolist()
    else:
        missing = [i for i, c in enumerate(cells) if c is None
                   or (isinstance(c, float) and math.isnan(c))]
        if missing:
            raise _unknown(margin.name, len(missing), missing[0])
        index: dict[Any, int] = {}
        codes = np.fromiter((index.setdefault(c, len(index)) for c in cells), dtype=np.int64,
                            count=n)
        labels = list(index)
    codes = np.asarray(codes, dtype=np.int64).reshape(-1)
    given = {_key(k): (k, v) for k, v in margin.totals.items()}
    totals = np.empty(len(labels))
    for j, label in enumerate(labels):
        found = given.get(_key(label))
        if found is None or not found[1] > 0:
            raise CalibrationError(
                f"{margin.name!r} = {label!r} has respondents but no positive population total "
                f"(the totals list {len(given)} categories): a category in the sample must be "
                "in the population", {"margin": margin.name, "category": str(label)})
        totals[j] = _total(found[1], margin.name, label)
    seen = {_key(label) for label in labels}
    empty = [k for key, (k, v) in given.items() if key not in seen and _total(v, margin.name, k)]
    if empty:
        raise CalibrationError(
            f"empty cell: no respondent has {margin.name!r} = {empty[0]!r} (population "
            f"{float(given[_key(empty[0])][1]):,g}), so no weight can carry it: merge it with a "
            "neighbouring category in the totals and the data", {"margin": margin.name,
                                                                 "category": str(empty[0])})
    return codes, labels, totals


def _renumbered(cells: Coded, name: str) -> tuple[np.ndarray, list[Any]]:
    """(codes, labels) of the categories respondents have, numbered in order of first
    appearance, as a margin of labels is numbered (so both give the same labels in the same
    order)."""
    raw = np.asarray(cells.codes, dtype=np.int64).reshape(-1)
    missing = np.flatnonzero(raw < 0)
    if missing.size:
        raise _unknown(name, int(missing.size), int(missing[0]))
    first = np.full(len(cells.labels), raw.size, dtype=np.int64)
    np.minimum.at(first, raw, np.arange(raw.size, dtype=np.int64))
    present = np.flatnonzero(first < raw.size)
    present = present[np.argsort(first[present], kind="stable")]
    rank = np.full(len(cells.labels), -1, dtype=np.int64)
    rank[present] = np.arange(present.size)
    return rank[raw], [cells.labels[i] for i in present.tolist()]


def _unknown(name: str, count: int, first: int) -> CalibrationError:
    return CalibrationError(f"{count} respondent(s) have no value of {name!r} (first: row "
                            f"{first + 1}): a calibration variable must be known for everyone",
                            {"margin": name, "row": first})


def _key(label: Any) -> str:
    """Categories match by their text: 1, 1.0 and "1" are the same category."""
    if isinstance(label, bool):
        return "yes" if label else "no"
    if isinstance(label, float) and label.is_integer():
        return str(int(label))
    return str(label).strip()


def _total(value: Any, name: str, label: Any) -> float:
    try:
        total = float(value)
    except (TypeError, ValueError):
        raise CalibrationError(f"population total of {name!r} = {label!r} is not a number: "
                               f"{value!r}") from None
    if not math.isfinite(total) or total < 0:
        raise CalibrationError(f"population total of {name!r} = {label!r} must be a finite "
                               f"number >= 0, got {value!r}")
    return total


# --- post-stratification ---------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class PostStratification:
    """One post-stratification step: weights scaled within each cell to its total."""

    name: str
    model: _CellModel
    labels: tuple[Any, ...]
    totals: np.ndarray
    before: np.ndarray
    after: np.ndarray

    def describe(self) -> str:
        return f"post-stratified on {self.name} ({self.totals.size} cells)"

    def residuals(self, x: np.ndarray) -> np.ndarray:
        return _residuals(self.model, self.before, self.after, x)

    def cell_factors(self, table: np.ndarray) -> np.ndarray:
        """Each cell's factor for weights summing to `table` per cell."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(table > 0, self.totals / table, 0.0)

    def recalibrate(self, weights: np.ndarray) -> np.ndarray:
        table = np.bincount(self.model.joint, weights=weights, minlength=self.totals.size)
        return weights * self.cell_factors(table)[self.model.joint]


def poststratify(design: Design, margin: Margin) -> Design:
    """The design post-stratified on one (possibly crossed) disclosed variable: within each
    cell the weights are scaled so they sum to the cell's population total (R's
    `postStratify`). CalibrationError for a cell with respondents but no total, a total > 0
    with no respondent (empty cell), or a missing value."""
    codes, labels, totals = _codes(margin, design.n)
    weights = design.weights
    sums = np.bincount(codes, weights=weights, minlength=totals.size)
    after = weights * (totals / sums)[codes]
    step = PostStratification(margin.name, _CellModel(codes, np.eye(totals.size)),
                              tuple(labels), totals, weights, after)
    return design.with_weights(after, step)


# --- raking ----------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Raking:
    """Raking to several margins: IPF on the table of joint cells (every respondent of a joint
    cell gets the same factor, so the iterations touch C cells, not n rows)."""

    names: tuple[str, ...]
    model: _CellModel
    labels: tuple[tuple[Any, ...], ...]  # per margin: its categories
    levels: tuple[np.ndarray, ...]   # per margin: each joint cell's category
    totals: tuple[np.ndarray, ...]   # per margin: population totals per category
    before: np.ndarray
    after: np.ndarray
    iterations: int
    tolerance: float
    max_iterations: int

    def describe(self) -> str:
        return (f"raked to {', '.join(self.names)} ({self.iterations} iterations)")

    def residuals(self, x: np.ndarray) -> np.ndarray:
        return _residuals(self.model, self.before, self.after, x)

    def cell_factors(self, table: np.ndarray) -> np.ndarray:
        """Each joint cell's raking factor for weights summing to `table` per joint cell."""
        factors, _ = _ipf(table, self.levels, self.totals, self.names, self.tolerance,
                          self.max_iterations)
        return factors

    def recalibrate(self, weights: np.ndarray) -> np.ndarray:
        table = np.bincount(self.model.joint, weights=weights,
                            minlength=self.model.indicators.shape[0])
        return weights * self.cell_factors(table)[self.model.joint]


def _ipf(table: np.ndarray, levels: Sequence[np.ndarray], totals: Sequence[np.ndarray],
         names: Sequence[str], tolerance: float, max_iterations: int) -> tuple[np.ndarray, int]:
    """Factors per joint cell that make the raked table match every margin (IPF), and the
    iterations used; CalibrationError naming the iteration count when it does not converge."""
    factors = np.ones(table.size)
    worst, where = math.inf, ""
    for iteration in range(1, max_iterations + 1):
        for level, total in zip(levels, totals, strict=True):
            current = np.bincount(level, weights=table * factors, minlength=total.size)
            with np.errstate(divide="ignore", invalid="ignore"):
                factors *= np.where(current > 0, total / current, 0.0)[level]
        worst = 0.0
        for name, level, total in zip(names, levels, totals, strict=True):
            current = np.bincount(level, weights=table * factors, minlength=total.size)
            off = float(np.max(np.abs(current - total) / total))
            if off > worst:
                worst, where = off, name
        if worst <= tolerance:
            return factors, iteration
    raise CalibrationError(
        f"raking did not converge in {max_iterations} iterations: margin {where!r} is still "
        f"off by a relative {worst:.3g} (tolerance {tolerance:g}); the margins may not be "
        "reachable from these respondents (e.g. a cell structure with zeros): check the "
        "totals, merge sparse categories, or allow more iterations",
        {"iterations": max_iterations, "margin": where, "relative_error": worst})


def rake(design: Design, margins: Sequence[Margin], *, tolerance: float = RAKE_TOLERANCE,
         max_iterations: int = RAKE_MAX_ITERATIONS) -> Design:
    """The design raked to the margins (iterative proportional fitting: post-stratify on each
    margin in turn until every margin is within `tolerance`, relative, of its totals).

    CalibrationError: fewer than one margin, a margin with an empty cell or a category
    without a total, margins whose totals disagree (each must sum to the same population
    size, within 1e-6), or no convergence in `max_iterations` (the count is in the message).
    """
    if not margins:
        raise CalibrationError("raking needs at least one margin")
    names = tuple(m.name for m in margins)
    if len(set(names)) != len(names):
        raise CalibrationError("a margin is named twice")
    coded = [_codes(m, design.n) for m in margins]
    sums = [float(c[2].sum()) for c in coded]
    if max(sums) - min(sums) > MARGIN_AGREEMENT * max(sums):
        a, b = int(np.argmin(sums)), int(np.argmax(sums))
        raise CalibrationError(
            f"the margins' totals disagree: {names[a]!r} sums to {sums[a]:,.10g} and "
            f"{names[b]!r} to {sums[b]:,.10g}; every margin counts the same population",
            {"totals": dict(zip(names, sums, strict=True))})
    widths = [c[2].size for c in coded]
    key = np.zeros(design.n, dtype=np.int64)
    for (codes, _, _), width in zip(coded, widths, strict=True):
        key = key * width + codes
    cells, joint = unique_keys(key, int(np.prod(widths, dtype=object)))
    levels = []
    rest = cells.copy()
    for width in reversed(widths):
        levels.append(rest % width)
        rest //= width
    levels.reverse()
    offsets = np.cumsum([0, *widths])
    indicators = np.zeros((cells.size, int(offsets[-1])))
    for m, level in enumerate(levels):
        indicators[np.arange(cells.size), offsets[m] + level] = 1.0
    totals = tuple(c[2] for c in coded)
    table = np.bincount(joint, weights=design.weights, minlength=cells.size)
    factors, iterations = _ipf(table, levels, totals, names, tolerance, max_iterations)
    after = design.weights * factors[joint]
    step = Raking(names, _CellModel(joint, indicators), tuple(tuple(c[1]) for c in coded),
                  tuple(levels), totals, design.weights, after, iterations, tolerance,
                  max_iterations)
    return design.with_weights(after, step)


# --- linear calibration (GREG), optionally bounded ---------------------------------------------


@dataclass(frozen=True, eq=False)
class LinearCalibration:
    """Linear calibration: g_i = 1 + m_iᵀλ (clipped to the bounds, then solved by Newton's
    method as R's `grake` does), with Σ d_i g_i m_i = the totals."""

    names: tuple[str, ...]
    model: _DenseModel
    totals: np.ndarray
    bounds: tuple[float, float]
    before: np.ndarray
    after: np.ndarray
    iterations: int
    tolerance: float
    max_iterations: int

    def describe(self) -> str:
        bounded = ("" if self.bounds == (-math.inf, math.inf)
                   else f", g within [{self.bounds[0]:g}, {self.bounds[1]:g}]")
        return f"calibrated (linear) to {', '.join(self.names)}{bounded}"

    def residuals(self, x: np.ndarray) -> np.ndarray:
        return _residuals(self.model, self.before, self.after, x)

    def recalibrate(self, weights: np.ndarray) -> np.ndarray:
        g, _ = _linear_g(self.model.rows, weights, self.totals, self.bounds, self.tolerance,
                         self.max_iterations)
        return weights * g


def _linear_g(m: np.ndarray, d: np.ndarray, totals: np.ndarray, bounds: tuple[float, float],
              tolerance: float, max_iterations: int) -> tuple[np.ndarray, int]:
    """g-weights of (bounded) linear calibration and the Newton iterations used.

    Unbounded: the closed form g = 1 + m_iᵀ T⁻¹(totals − Σ d m), T = Σ d m mᵀ (R's
    `regcalibrate`). Bounded: Newton on λ with g = clip(1 + mᵀλ, L, U), the Jacobian over
    the rows whose g is inside the bounds, a pseudo-inverse step (R's `grake` with
    cal.linear); CalibrationError when the bounds cannot be met within the iterations."""
    lower, upper = bounds
    sample = m.T @ d
    if lower == -math.inf and upper == math.inf:
        gram = m.T @ (m * d[:, None])
        try:
            lam = np.linalg.solve(gram, totals - sample)
        except np.linalg.LinAlgError:
            raise CalibrationError("the calibration variables are collinear in the sample "
                                   "(e.g. a category nobody has, or a constant column beside "
                                   "the intercept): drop or merge one") from None
        return 1.0 + m @ lam, 1
    scales = totals / sample
    scale = 1.0
    if np.all(scales > _RESCALE_THRESHOLD):  # R's grake: weights far below population scale
        scale = float(np.mean(scales))
        d = d * scale
        sample = sample * scale
    lam = np.zeros(m.shape[1])
    u = m @ lam
    for iteration in range(1, max_iterations + 1):
        inside = ((u < upper - 1) & (u > lower - 1)).astype(np.float64)
        g_minus_1 = np.clip(u + 1, lower, upper) - 1
        jacobian = m.T @ (m * (d * inside)[:, None])
        misfit = totals - sample - m.T @ (d * g_minus_1)
        lam = lam + np.linalg.pinv(jacobian, rcond=256 * np.finfo(float).eps) @ misfit
        u = m @ lam
        g_minus_1 = np.clip(u + 1, lower, upper) - 1
        misfit = totals - sample - m.T @ (d * g_minus_1)
        if np.all(np.abs(misfit) / (1 + np.abs(totals)) < tolerance):
            return (1.0 + g_minus_1) * scale, iteration
    worst = float(np.max(np.abs(misfit) / (1 + np.abs(totals))))
    raise CalibrationError(
        f"bounded calibration did not converge in {max_iterations} iterations (relative "
        f"misfit {worst:.3g}): the bounds [{lower:g}, {upper:g}] may be too tight for these "
        "totals; widen them", {"iterations": max_iterations, "relative_error": worst})


def calibrate(design: Design, model: np.ndarray, totals: Sequence[float], *,
              names: Sequence[str] | None = None,
              bounds: tuple[float, float] = (-math.inf, math.inf),
              tolerance: float = CALIBRATE_TOLERANCE,
              max_iterations: int = CALIBRATE_MAX_ITERATIONS) -> Design:
    """The design linearly calibrated (GREG weights) so that Σ w_i m_i = totals, with the
    g-weights kept within `bounds` if given (R's `calibrate(calfun = "linear", bounds =)`).

    `model` (n, p): each respondent's calibration variables (`model_matrix` builds an
    intercept and category indicators as R's formula ~a + b does); `totals` (p,): their
    population totals. CalibrationError: collinear variables, or bounds not met."""
    m = np.asarray(model, dtype=np.float64)
    if m.ndim != 2 or m.shape[0] != design.n:
        raise CalibrationError(f"the calibration model must have one row per respondent "
                               f"({design.n}), got shape {m.shape}")
    t = np.asarray(totals, dtype=np.float64).reshape(-1)
    if t.size != m.shape[1]:
        raise CalibrationError(f"{m.shape[1]} calibration variables but {t.size} totals")
    lower, upper = float(bounds[0]), float(bounds[1])
    if not lower < 1 < upper:
        raise CalibrationError(f"bounds [{lower:g}, {upper:g}] must contain 1 (g = 1 leaves "
                               "a weight unchanged)")
    g, iterations = _linear_g(m, design.weights, t, (lower, upper), tolerance, max_iterations)
    labels = tuple(names) if names is not None else tuple(f"x{j}" for j in range(m.shape[1]))
    step = LinearCalibration(labels, _DenseModel(m), t, (lower, upper), design.weights,
                             design.weights * g, iterations, tolerance, max_iterations)
    return design.with_weights(design.weights * g, step)


def model_matrix(margins: Sequence[Margin], n: int) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(model, totals, names) for linear calibration on categorical margins, as R's formula
    ~a + b builds it: an intercept (total: the population size) and an indicator of every
    category but the first of each margin (treatment contrasts)."""
    columns, totals, names = [np.ones(n)], [], ["(Intercept)"]
    sizes = []
    for margin in margins:
        codes, labels, cell_totals = _codes(margin, n)
        sizes.append(float(cell_totals.sum()))
        for j in range(1, len(labels)):
            columns.append((codes == j).astype(np.float64))
            totals.append(float(cell_totals[j]))
            names.append(f"{margin.name}={labels[j]}")
    if max(sizes) - min(sizes) > MARGIN_AGREEMENT * max(sizes):
        raise CalibrationError(f"the margins' totals disagree: they sum to "
                               f"{', '.join(f'{s:,.10g}' for s in sizes)}")
    return np.column_stack(columns), np.array([sizes[0], *totals]), names
