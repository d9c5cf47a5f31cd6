"""Joint (crosstab) estimates of two questions from the same submissions (docs/crosstabs.md).

The two reports of one submission are randomized independently given the true pair, so for
per-report unbiased indicator estimators X_a (row question) and W_b (column question)
E[X_a·W_b | x, w] = [x in a]·[w in b]: the mean of the products is unbiased for the joint
share f_ab, at no extra privacy cost. Both X and X² are linear in a report's integer features
(`joint_features.Encoder`), so one integer matrix G = Σ φ̃₁ φ̃₂ᵀ (the `JointAggregate`, a declared
crosstab's stored aggregate) gives every sum needed, G[0, 0] = n:

    Σ X_a W_b = (B₁ G B₂ᵀ)_ab        Σ X_a² W_b² = (D₁ G D₂ᵀ)_ab
    Σ X_a² W_b = (D₁ G B₂ᵀ)_ab       Σ X_a W_b² = (B₁ G D₂ᵀ)_ab

The per-report products are i.i.d. over respondents, so the standard error is the sample
standard deviation of the products over √n. Conditional shares P(b | a) = f_ab / f_a and
conditional means are ratios of two such means, with delta-method intervals.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .aggregates import Aggregate
from .errors import AggregateError, CrosstabError
from .estimates import finite_or_none, norm_sub, z_value
from .joint_features import Encoder
from .joint_values import check_pair, value_note

MAX_FEATURE_CELLS = 1 << 20  # F₁·F₂ entries of G: beyond this a crosstab is refused
_CHUNK_ROWS = 1 << 16


class JointAggregate(Aggregate):
    """G = Σ φ̃₁ φ̃₂ᵀ over the submissions that answered both questions (exact integers)."""

    kind = "joint"

    def __init__(self, rows: int, cols: int) -> None:
        self.counts = np.zeros((rows, cols), dtype=object)
        self.counts[:, :] = 0

    @property
    def n(self) -> int:  # type: ignore[override]
        return int(self.counts[0, 0])

    def add_gram(self, gram: np.ndarray) -> None:
        if gram.shape != self.counts.shape:
            raise AggregateError(f"joint counts of shape {gram.shape} do not fit "
                                 f"{self.counts.shape}")
        self.counts = self.counts + gram

    def merge(self, other: Aggregate) -> None:
        self._check_kind(other)
        assert isinstance(other, JointAggregate)
        self.add_gram(other.counts)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "n": self.n,
                "counts": [[int(v) for v in row] for row in self.counts]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], shape: tuple[int, int] | None = None
                  ) -> JointAggregate:
        if not isinstance(data, Mapping):
            raise AggregateError("a stored aggregate must be an object")
        counts = data.get("counts")
        if (not isinstance(counts, list) or not counts or not all(isinstance(r, list)
                                                                   for r in counts)):
            raise AggregateError("joint counts must be a list of rows")
        rows, cols = len(counts), len(counts[0])
        if shape is not None and (rows, cols) != shape:
            raise AggregateError(f"joint counts are {rows}x{cols}, expected "
                                 f"{shape[0]}x{shape[1]}")
        agg = cls(rows, cols)
        agg._check_kind(data)
        for i, row in enumerate(counts):
            if len(row) != cols or not all(type(v) is int for v in row):  # not bool, float
                raise AggregateError("joint counts must be rows of integers of equal length")
            agg.counts[i, :] = row
        n = data.get("n")
        if isinstance(n, bool) or n != agg.n or agg.n < 0:
            raise AggregateError("joint counts do not match n")
        return agg

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, JointAggregate) and self.counts.shape == other.counts.shape
                and bool(np.all(self.counts == other.counts)))

    __hash__ = None  # type: ignore[assignment]


def check_size(rows: Encoder, cols: Encoder) -> None:
    if rows.width * cols.width > MAX_FEATURE_CELLS:
        raise CrosstabError(f"{rows.question_id!r} x {cols.question_id!r} needs "
                            f"{rows.width}x{cols.width} joint counts, more than "
                            f"{MAX_FEATURE_CELLS}; bin or choose smaller questions")


def gram(rows: Encoder, cols: Encoder, reports1: Any, reports2: Any) -> np.ndarray:
    """Σ φ̃₁ φ̃₂ᵀ over paired reports, in exact integers.

    Indicator columns (0/1) are multiplied in float64 blocks (counts below 2^53 are exact).
    A moment column (y, y² of an integer question) is only ever paired with indicator columns:
    those sums are exact in int64 sub-blocks small enough not to overflow, else in Python
    integers. Moment x moment entries are not kept (0): no estimate uses them.
    """
    check_size(rows, cols)
    reports1, reports2 = np.asarray(reports1), np.asarray(reports2)
    n = len(reports1)
    if len(reports2) != n:
        raise CrosstabError("the two questions need one report each per submission")
    total = np.zeros((rows.width, cols.width), dtype=object)
    total[:, :] = 0
    for start in range(0, n, _CHUNK_ROWS):
        total += gram_features(rows, cols, rows.featurize(reports1[start:start + _CHUNK_ROWS]),
                               cols.featurize(reports2[start:start + _CHUNK_ROWS]))
    return total


def gram_features(rows: Encoder, cols: Encoder, f1: np.ndarray, f2: np.ndarray) -> np.ndarray:
    """Σ φ̃₁ φ̃₂ᵀ from paired feature rows (see `gram`), in blocks."""
    if len(f1) > _CHUNK_ROWS:
        total = gram_features(rows, cols, f1[:_CHUNK_ROWS], f2[:_CHUNK_ROWS])
        return total + gram_features(rows, cols, f1[_CHUNK_ROWS:], f2[_CHUNK_ROWS:])
    m1, m2 = list(rows.moment_columns), list(cols.moment_columns)
    if not m1 and not m2:  # indicators only: one product
        block = np.einsum("ri,rj->ij", np.asarray(f1, dtype=np.float64),
                          np.asarray(f2, dtype=np.float64))
        return np.rint(block).astype(np.int64).astype(object)
    total = np.zeros((rows.width, cols.width), dtype=object)
    total[:, :] = 0
    u1 = [i for i in range(rows.width) if i not in m1]
    u2 = [j for j in range(cols.width) if j not in m2]
    if len(f1):
        units1 = np.asarray(f1[:, u1], dtype=np.float64)
        units2 = np.asarray(f2[:, u2], dtype=np.float64)
        # einsum's own loop, not BLAS: a threaded BLAS on tall-skinny blocks stalls badly on
        # a busy machine (10-30x slower than one thread, measured on 2 shared cores).
        block = np.einsum("ri,rj->ij", units1, units2)
        total[np.ix_(u1, u2)] += np.rint(block).astype(np.int64).astype(object)
        if m2:
            total[np.ix_(u1, m2)] += _indicator_sums(units1, f2[:, m2])
        if m1:
            total[np.ix_(m1, u2)] += _indicator_sums(units2, f1[:, m1]).T
    return total


def _indicator_sums(units: np.ndarray, moments: np.ndarray) -> np.ndarray:
    """unitsᵀ·moments exactly (units 0/1): int64 sub-blocks below overflow, else Python ints."""
    if moments.dtype != object and moments.size:
        top = float(np.abs(moments).max())
        rows = int(2**62 // max(top, 1.0))
        if rows >= 256:
            out = np.zeros((units.shape[1], moments.shape[1]), dtype=object)
            out[:, :] = 0
            u, m = units.astype(np.int64), moments.astype(np.int64)
            for start in range(0, len(u), rows):
                out += (u[start:start + rows].T @ m[start:start + rows]).astype(object)
            return out
    return units.astype(np.int64).astype(object).T @ moments.astype(object)


# --- estimates -------------------------------------------------------------------------------


SAMPLE, FLOOR = "sample", "floor"  # which variance a cell's std error is the root of


@dataclass
class Cell:
    """One number of a crosstab: estimate, std error, interval (and worst-case variance).

    `std_error_method` says which variance the std error is the root of: `sample` (the sample
    variance of the per-submission values) or `floor` (the exact variance at the estimate
    projected to the simplex, which was larger: at small n the sample variance can be 0).
    `too_noisy`: the interval is wider than every value the number can take, or a ratio's
    denominator cannot be told apart from 0; reports show "too noisy" instead of the number."""

    estimate: float | None
    std_error: float | None
    ci_low: float | None
    ci_high: float | None
    variance_bound: float | None = None
    too_noisy: bool = False
    std_error_method: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {k: finite_or_none(getattr(self, k)) for k in
                             ("estimate", "std_error", "ci_low", "ci_high")}
        if self.variance_bound is not None:
            d["variance_bound"] = finite_or_none(self.variance_bound)
        d["std_error_method"] = self.std_error_method
        d["too_noisy"] = self.too_noisy
        return d


@dataclass
class Crosstab:
    """Joint shares, both sets of conditional shares, marginals and conditional means."""

    rows_question: str
    cols_question: str
    rows_mechanism: str
    cols_mechanism: str
    rows: list[Any]
    cols: list[Any]
    n: int
    confidence: float
    source: str
    joint: list[list[Cell]] = field(default_factory=list)
    consistent: list[list[float]] | None = None
    row_shares: list[Cell] = field(default_factory=list)  # P(row a) among these submissions
    col_shares: list[Cell] = field(default_factory=list)
    col_given_row: list[list[Cell]] = field(default_factory=list)  # P(col b | row a)
    row_given_col: list[list[Cell]] = field(default_factory=list)  # P(row a | col b)
    cols_mean_given_row: list[Cell] | None = None  # mean of the column question given row a
    rows_mean_given_col: list[Cell] | None = None
    notes: list[str] = field(default_factory=list)
    rows_group: str | None = None  # the side is this declared group vs the rest
    cols_group: str | None = None
    # A number's quartiles among each category of the other side (shared/numeric/joint_ems.py)
    quantiles: Any = None

    def set_quantiles(self, quantiles: Any) -> None:
        """Give the crosstab a number's quartiles per category (a JointQuantiles, or None);
        where they are estimated, the number's note says where they come from and their
        method's note is added (every path that makes them: server, simulate, design)."""
        self.quantiles = quantiles
        if quantiles is None or not quantiles.estimated:
            return
        plain = value_note(quantiles.question)
        self.notes = [value_note(quantiles.question, quantiles=True) if note == plain else note
                      for note in self.notes]
        self.notes.append(quantiles.note)

    def to_dict(self) -> dict[str, Any]:
        def grid(cells: list[list[Cell]]) -> list[list[dict[str, Any]]]:
            return [[c.to_dict() for c in row] for row in cells]

        d: dict[str, Any] = {
            "rows": {"question": self.rows_question, "mechanism": self.rows_mechanism,
                     "cells": [_label(v) for v in self.rows]},
            "cols": {"question": self.cols_question, "mechanism": self.cols_mechanism,
                     "cells": [_label(v) for v in self.cols]},
            "n": self.n, "confidence": self.confidence, "source": self.source,
        }
        for side, group in (("rows", self.rows_group), ("cols", self.cols_group)):
            if group is not None:
                d[side]["group"] = group
        d |= {
            "joint": grid(self.joint), "consistent": self.consistent,
            "row_shares": [c.to_dict() for c in self.row_shares],
            "col_shares": [c.to_dict() for c in self.col_shares],
            "col_given_row": grid(self.col_given_row),
            "row_given_col": grid(self.row_given_col),
        }
        if self.cols_mean_given_row is not None:
            d["cols_mean_given_row"] = [c.to_dict() for c in self.cols_mean_given_row]
        if self.rows_mean_given_col is not None:
            d["rows_mean_given_col"] = [c.to_dict() for c in self.rows_mean_given_col]
        if self.quantiles is not None:
            d["quantiles_given_category"] = self.quantiles.to_dict()
        d["notes"] = list(self.notes)
        return d


def _label(value: Any) -> Any:
    return value if isinstance(value, str | int | bool) else str(value)


NOTES = (
    "joint: unbiased share of submissions answering (row, col), the mean over submissions of "
    "the product of the two per-report unbiased indicator estimators; it may be negative",
    "std_error: the larger of the sample variance of the per-submission values over n "
    "(std_error_method 'sample') and the exact variance at the estimate projected to the "
    "simplex (Norm-Sub of the joint table; binned integer answers placed where the variance is "
    "least) ('floor'): the sample variance alone can be 0 at small n; "
    "variance_bound: worst case over the truth",
    "conditional shares and means are ratios of two unbiased means with delta-method "
    "intervals",
    "too_noisy: the interval is wider than the whole range the number can take (100 points "
    "for a share, the answer range for a mean), or for a ratio the interval of the share "
    "conditioned on includes 0; reports show 'too noisy' and never the number",
    "only submissions that answered both questions are counted",
)


def estimate_crosstab(rows: Encoder, cols: Encoder, counts: np.ndarray,
                      confidence: float = 0.95, source: str = "reports") -> Crosstab:
    """The crosstab estimate from G (`counts`) for the row and column encoders."""
    for encoder in (rows, cols):
        if encoder.sets:  # a multiselect question's options overlap: one option is a side
            from .joint_sets import whole_question_refused

            raise whole_question_refused(encoder.question_id, encoder.cells)
    check_pair(rows, cols)
    z = z_value(confidence)
    g = np.asarray(counts, dtype=np.float64)
    n = int(counts[0, 0])
    result = Crosstab(rows.question_id, cols.question_id, rows.mechanism, cols.mechanism,
                      list(rows.cells), list(cols.cells), n, confidence, source,
                      notes=list(NOTES) + [f"mean {e.question_id}: {e.mean_note}"
                                           for e in (rows, cols) if e.mean_note]
                      + [value_note(e.question_id) for e in (rows, cols) if e.mean_only],
                      rows_group=rows.group, cols_group=cols.group)
    m1, m2 = len(rows.cells), len(cols.cells)
    empty = Cell(None, None, None, None)
    if n < 2:
        result.joint = [[empty] * m2 for _ in range(m1)]
        result.row_shares, result.col_shares = [empty] * m1, [empty] * m2
        result.col_given_row = [[empty] * m2 for _ in range(m1)]
        result.row_given_col = [[empty] * m2 for _ in range(m1)]
        if cols.mean is not None:
            result.cols_mean_given_row = [empty] * m1
        if rows.mean is not None:
            result.rows_mean_given_col = [empty] * m2
        return result
    b1, d1, b2, d2 = rows.estimator, rows.square, cols.estimator, cols.square
    e1, e2 = np.zeros(cols.width), np.zeros(rows.width)
    e1[0] = e2[0] = 1.0
    s_joint, s_joint2 = b1 @ g @ b2.T, d1 @ g @ d2.T
    s_row, s_row2 = b1 @ g @ e1, d1 @ g @ e1  # X_a alone, over these submissions
    s_col, s_col2 = e2 @ g @ b2.T, e2 @ g @ d2.T
    bound = joint_variance_bound(rows, cols) / n
    projected = norm_sub(s_joint.ravel() / n).reshape(m1, m2)
    result.consistent = projected.tolist()
    floor = Floor(rows, cols, projected)
    joint = _means(s_joint, s_joint2, n, z, floor.joint() / n, SHARE_RANGE)
    result.joint = [[replace(joint[i][j], variance_bound=float(bound[i, j]))
                     for j in range(m2)] for i in range(m1)]
    row_cells = _means(s_row, s_row2, n, z, floor.row_shares() / n, SHARE_RANGE)
    col_cells = _means(s_col, s_col2, n, z, floor.col_shares() / n, SHARE_RANGE)
    result.row_shares, result.col_shares = row_cells, col_cells
    noisy_row = [_includes_zero(c) for c in row_cells]
    noisy_col = [_includes_zero(c) for c in col_cells]
    # P(b | a): numerator X_a W_b, denominator X_a; Σ num·den = Σ X_a² W_b.
    cross_row = d1 @ g @ b2.T
    result.col_given_row = [[_ratio(s_joint[i, j], s_joint2[i, j], s_row[i], s_row2[i],
                                    cross_row[i, j], n, z, noisy_row[i],
                                    lambda r, i=i, j=j: floor.col_given_row(i, j, r),
                                    SHARE_RANGE) for j in range(m2)] for i in range(m1)]
    cross_col = b1 @ g @ d2.T
    result.row_given_col = [[_ratio(s_joint[i, j], s_joint2[i, j], s_col[j], s_col2[j],
                                    cross_col[i, j], n, z, noisy_col[j],
                                    lambda r, i=i, j=j: floor.row_given_col(i, j, r),
                                    SHARE_RANGE) for j in range(m2)] for i in range(m1)]
    if cols.mean is not None and cols.mean_square is not None:
        num, num2, cross = b1 @ g @ cols.mean, d1 @ g @ cols.mean_square, d1 @ g @ cols.mean
        span = _answer_range(cols)
        result.cols_mean_given_row = [_ratio(num[i], num2[i], s_row[i], s_row2[i], cross[i],
                                             n, z, noisy_row[i],
                                             lambda r, i=i: floor.cols_mean_given_row(i, r),
                                             span) for i in range(m1)]
    if rows.mean is not None and rows.mean_square is not None:
        num, num2 = rows.mean @ g @ b2.T, rows.mean_square @ g @ d2.T
        cross = rows.mean @ g @ d2.T
        span = _answer_range(rows)
        result.rows_mean_given_col = [_ratio(num[j], num2[j], s_col[j], s_col2[j], cross[j],
                                             n, z, noisy_col[j],
                                             lambda r, j=j: floor.rows_mean_given_col(j, r),
                                             span) for j in range(m2)]
    return result


SHARE_RANGE = (0.0, 1.0)


def _answer_range(encoder: Encoder) -> tuple[float, float]:
    assert encoder.answers is not None
    return float(np.min(encoder.answers)), float(np.max(encoder.answers))


def _includes_zero(cell: Cell) -> bool:
    return cell.ci_low is not None and cell.ci_high is not None \
        and cell.ci_low <= 0 <= cell.ci_high


def _too_wide(low: float, high: float, span: tuple[float, float]) -> bool:
    """An interval wider than every value the number can take says less than the range."""
    return high - low > span[1] - span[0]


def _means(total: np.ndarray, total_sq: np.ndarray, n: int, z: float, floor: np.ndarray,
           span: tuple[float, float]) -> Any:
    """Cells of means from sums of values and of their squares: the std error is the root of
    the larger of the sample variance of the mean and `floor` (same shape)."""
    mean = total / n
    sample = np.maximum((total_sq - n * mean**2) / (n - 1), 0.0) / n
    var = np.maximum(sample, floor)
    method = np.where(floor > sample, FLOOR, SAMPLE)
    se = np.sqrt(var)

    def cell(index: tuple[int, ...]) -> Cell:
        est, s = float(mean[index]), float(se[index])
        low, high = est - z * s, est + z * s
        return Cell(est, s, low, high, too_noisy=_too_wide(low, high, span),
                    std_error_method=str(method[index]))

    if mean.ndim == 1:
        return [cell((i,)) for i in range(mean.shape[0])]
    return [[cell((i, j)) for j in range(mean.shape[1])] for i in range(mean.shape[0])]


def _ratio(num: float, num_sq: float, den: float, den_sq: float, cross: float, n: int,
           z: float, too_noisy: bool, floor: Callable[[float], float],
           span: tuple[float, float]) -> Cell:
    """R = Σnum / Σden with the delta-method std error from the per-report sample moments:
    Var R ≈ (s_nn - 2R·s_nd + R²·s_dd) / (n·d̄²), or from the model when larger:
    `floor(R)` is a lower bound on E[(num - R·den)²] for one report at the projected table."""
    if den == 0:
        return Cell(None, None, None, None, too_noisy=True)
    r = float(num / den)
    mean_n, mean_d = num / n, den / n
    s_nn = (num_sq - n * mean_n**2) / (n - 1)
    s_dd = (den_sq - n * mean_d**2) / (n - 1)
    s_nd = (cross - n * mean_n * mean_d) / (n - 1)
    sample = max(s_nn - 2 * r * s_nd + r * r * s_dd, 0.0) / (n * mean_d**2)
    model = max(floor(min(max(r, span[0]), span[1])), 0.0) / (n * mean_d**2)
    var = max(sample, model)
    se = math.sqrt(var)
    low, high = r - z * se, r + z * se
    return Cell(r, se, low, high, too_noisy=too_noisy or _too_wide(low, high, span),
                std_error_method=FLOOR if model > sample else SAMPLE)


class Floor:
    """Exact one-report second moments at a projected joint table of cells (non-negative,
    summing to 1): the variance floor of every crosstab number.

    Per report the products factor, E[(X_a·W_b)² | x, w] = V₁[a, x]·V₂[b, w], so with the table
    f over cells (c, d) the second moment is Σ f_cd·V₁[a, x∈c]·V₂[b, w∈d]. Within a cell of a
    binned integer question the answers' placement is unknown: each V is taken at the answer of
    the cell where it is least (`cell_min`), so the floor never exceeds the exact variance of
    any population with this table. For option questions (a cell is an answer) it is exact.
    """

    def __init__(self, rows: Encoder, cols: Encoder, table: np.ndarray) -> None:
        self.rows, self.cols, self.f = rows, cols, np.asarray(table, dtype=float)
        self.v1 = cell_min(rows.second_moments(), rows.membership)  # [a, c]
        self.v2 = cell_min(cols.second_moments(), cols.membership)  # [b, d]
        self.fr, self.fc = self.f.sum(axis=1), self.f.sum(axis=0)
        self.second = self.v1 @ self.f @ self.v2.T  # Σ f_cd V₁[a,c] V₂[b,d]
        self.row_in_col = self.v1 @ self.f  # [a, b]: Σ_c V₁[a,c] f_cb
        self.col_in_row = self.f @ self.v2.T  # [a, b]: Σ_d f_ad V₂[b,d]
        self.row_all, self.col_all = self.v1 @ self.fr, self.v2 @ self.fc

    def joint(self) -> np.ndarray:
        """Var(X_a·W_b) per report: E[P²] - f_ab²."""
        return self.second - self.f**2

    def row_shares(self) -> np.ndarray:
        return self.row_all - self.fr**2

    def col_shares(self) -> np.ndarray:
        return self.col_all - self.fc**2

    def col_given_row(self, a: int, b: int, r: float) -> float:
        """E[(X_a·(W_b - r))²] = Σ f_cd V₁[a,c]·(V₂[b,d] - 2r[d = b] + r²)."""
        return float(self.second[a, b] - 2 * r * self.row_in_col[a, b]
                     + r * r * self.row_all[a])

    def row_given_col(self, a: int, b: int, r: float) -> float:
        return float(self.second[a, b] - 2 * r * self.col_in_row[a, b]
                     + r * r * self.col_all[b])

    def cols_mean_given_row(self, a: int, r: float) -> float:
        """E[(X_a·(Y - r))²] = Σ f_cd V₁[a,c]·E[(Y - r)² | w in d] (least over d's answers)."""
        spread = cell_min(_centred_square(self.cols, r)[None, :], self.cols.membership)[0]
        return float(self.v1[a] @ self.f @ spread)

    def rows_mean_given_col(self, b: int, r: float) -> float:
        spread = cell_min(_centred_square(self.rows, r)[None, :], self.rows.membership)[0]
        return float(spread @ self.f @ self.v2[b])


def _centred_square(encoder: Encoder, r: float) -> np.ndarray:
    """E[(Y - r)² | answer] for each answer column of `expected`."""
    assert encoder.mean is not None and encoder.mean_square is not None
    return (encoder.mean_square - 2 * r * encoder.mean) @ encoder.expected + r * r


def cell_min(values: np.ndarray, membership: np.ndarray) -> np.ndarray:
    """out[i, c] = the least values[i, x] over the answers x of cell c."""
    if membership.shape[0] == membership.shape[1] and np.array_equal(
            membership, np.eye(membership.shape[0])):
        return np.asarray(values, dtype=float)  # option questions: a cell is an answer
    out = np.empty((values.shape[0], membership.shape[0]))
    for c in range(membership.shape[0]):
        out[:, c] = values[:, membership[c] > 0].min(axis=1)
    return out


# --- exact variances (fixed population) and worst-case bounds -----------------------------


def joint_variance(rows: Encoder, cols: Encoder, truth: np.ndarray, n: int) -> np.ndarray:
    """Exact variance of each joint estimate for a fixed population of n respondents whose
    true answers (indices into each encoder's `expected` columns) have joint shares `truth`:
    Var = Σ_{x,w} f(x,w)·(V₁[a,x]·V₂[b,w] - [x in a][w in b]) / n, with V = E[X² | answer]."""
    v1, v2 = rows.second_moments(), cols.second_moments()
    second = v1 @ truth @ v2.T
    squared_mean = rows.membership @ truth @ cols.membership.T
    return (second - squared_mean) / n


def joint_variance_bound(rows: Encoder, cols: Encoder) -> np.ndarray:
    """One-report variance of each joint cell, worst case over the truth: the largest
    V₁[a,x]·V₂[b,w] - [x in a][w in b] over answer pairs (the variance is linear in f)."""
    v1, v2 = rows.second_moments(), cols.second_moments()
    in1, in2 = rows.membership > 0, cols.membership > 0

    def top(v: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return np.where(mask.any(axis=1), np.max(np.where(mask, v, -np.inf), axis=1), -np.inf)

    a_in, a_out = top(v1, in1), top(v1, ~in1)
    b_in, b_out = top(v2, in2), top(v2, ~in2)
    candidates = [np.outer(a_in, b_in) - 1, np.outer(a_in, b_out), np.outer(a_out, b_in),
                  np.outer(a_out, b_out)]
    return np.max(np.stack([np.where(np.isfinite(c), c, -np.inf) for c in candidates]), axis=0)


def worst_cell_variance(rows: Encoder, cols: Encoder) -> float:
    """The largest one-report joint-cell variance over cells and truths (for planning)."""
    return float(joint_variance_bound(rows, cols).max())


def joint_truth(rows: Encoder, cols: Encoder, answers1: Sequence[int],
                answers2: Sequence[int]) -> np.ndarray:
    """The true joint cell shares (cells₁ x cells₂) of paired answer indices."""
    c1 = rows.cell_of(np.asarray(answers1))
    c2 = cols.cell_of(np.asarray(answers2))
    table = np.zeros((len(rows.cells), len(cols.cells)))
    np.add.at(table, (c1, c2), 1.0)
    return table / max(len(c1), 1)
