"""A question's pseudo-values: per respondent, unbiased estimates of what design-based
estimators weight (contract 5, `Mechanism.pseudo_values`), with an unbiased estimate of each
one's randomization variance (what a finite-population correction must add back, and the
privacy part of the design effect; docs/design-based.md).

Columns: one indicator per option (binary questions: "no", "yes"); ordinal questions also the
mean score (options scored 1..k); integer questions the value ("mean"). A respondent who did
not answer the question (optional, skipped) has a row of zeros and `present` False: estimates
are then over those who answered, a domain (ratio) estimate on the whole design, as R's
`subset()` does.

Randomization variance, one respondent, for a column c·z (c: the column's coefficients on the
k indicators; an indicator has c = e_a, the mean score c = (1..k)): V = E[(c·z)² | x] − (c_x)².
Because the answer's indicators y are one-hot, (c·y)² = Σ_a c_a² y_a, whose unbiased estimate
is Σ_a c_a² z_a; so V̂ = (c·z)² − Σ_a c_a² z_a is unbiased for V (an indicator: z_a² − z_a).
Integer questions under geometric noise: V = Var[Z] = 2α/(α − 1)², known. Disclosed: V = 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import DesignError
from ..mechanisms.base import Mechanism
from ..question_types.words import MEAN_SCORE

# Grouped sums above this many (count x report values) are made in blocks of groups
# (`Lookup.sums_times`): 2^22 float64s, 32 MB.
MAX_GROUP_SUMS = 1 << 22
GROUP_BLOCK = 1024
# `Lookup.sums_times` sums by (group, report value) where that makes at most this many sums
# per row, and otherwise each column over the rows (the measured crossover: 5-20 per row).
SUMS_PER_ROW = 10


@dataclass(frozen=True, eq=False)
class Lookup:
    """A question's pseudo-values and noise as rows of two small tables: row i of `values` is
    `table[codes[i]]`, of `noise` `noise_table[codes[i]]` (a respondent who did not answer:
    the last code, rows of zeros). Estimators then sum over the n respondents once per code
    (one bincount over (group, code)) and multiply by the table, instead of summing each
    column over the n rows (shared/design/estimators.py), except over groups that are so many
    that the sums per (group, code) would outnumber the rows many times (`by_value`)."""

    codes: np.ndarray  # (n,) int64
    table: np.ndarray  # (c, m)
    noise_table: np.ndarray  # (c, m)

    @property
    def size(self) -> int:
        return int(self.table.shape[0])

    def sums(self, weights: np.ndarray, groups: np.ndarray | None = None,
             count: int = 1) -> np.ndarray:
        """Σ_i weights_i · row_i over all rows ((c,) per code; with `groups` (n,) in [0,
        count): (count, c), per group and code): one bincount."""
        if groups is None:
            return np.bincount(self.codes, weights=weights, minlength=self.size)
        key = groups * self.size + self.codes
        return np.bincount(key, weights=weights, minlength=count * self.size).reshape(
            count, self.size)

    def by_value(self, count: int) -> bool:
        """Whether `sums_times` over `count` groups sums by (group, report value) and
        multiplies by the matrix (True), or sums each column of the matrix's rows over the
        groups (False): the one place this is chosen. The first makes count x c sums (one
        bincount over the n rows, then a product of count x c x m multiply-adds), the second m
        bincounts over the n rows. Where there are few groups (the whole sample, a few
        thousand PSUs) or few report values, count x c is far below n and the first is 3-30x
        faster; many groups times many report values (a raked design's ~10^5 (PSU, cell)
        groups, a 12-option subset's 4,097 values: 4 x 10^8 sums at 2 x 10^5 rows) is a
        product mostly over zeros, and 10-100x slower than the column sums 1d941c0 made.
        Measured (one BLAS thread; 2 x 10^4 to 10^6 rows, 5 to 4,097 report values, 1 to
        10^5 groups), the two cross at 5-20 sums per row: `SUMS_PER_ROW`. The two round
        differently (in the last bits, ~1e-14 relative)."""
        return count * self.size <= SUMS_PER_ROW * self.codes.shape[0]

    def sums_times(self, weights: np.ndarray, groups: np.ndarray, count: int,
                   matrix: np.ndarray) -> np.ndarray:
        """`sums(weights, groups, count) @ matrix` ((count, matrix's columns)): Σ_i weights_i ·
        matrix[codes_i] over each group's rows, made as `by_value` chooses. Summed per column:
        one bincount per column of the matrix, its entries taken for each row. Summed by
        value, without the (count, c) sums all at once where they would be large (more than
        `MAX_GROUP_SUMS`, which only many rows allow): the groups are taken in
        blocks (multiples of `GROUP_BLOCK` groups; the last block takes the rest), each block's
        sums and product made as the whole one's rows are: the same sums in the same order, and
        with one BLAS thread (what every `ldpsurvey` command runs with, analyst/cli.py) a
        product row depends only on its row's sums and where it falls in the kernel's row
        unrolling (block starts are multiples of 1,024), so the result equals the whole
        product bit for bit (tests/shared/test_design_lookup_blocks.py). With several BLAS
        threads the whole product's rows already depend on how the BLAS splits them among
        its threads; there the blocks' agree with it to rounding (~1e-16)."""
        if not self.by_value(count):
            columns = np.ascontiguousarray(np.asarray(matrix, dtype=np.float64).T)
            out = np.empty((count, columns.shape[0]))
            for j, column in enumerate(columns):
                out[:, j] = np.bincount(groups, weights=column.take(self.codes) * weights,
                                        minlength=count)
            return out
        # blocks of about MAX_GROUP_SUMS sums, a multiple of GROUP_BLOCK groups (a block too
        # small could take a BLAS's small-matrix path, which rounds otherwise)
        step = GROUP_BLOCK * max(1, MAX_GROUP_SUMS // (self.size * GROUP_BLOCK))
        if count * self.size <= MAX_GROUP_SUMS or count < 2 * step:
            return self.sums(weights, groups, count) @ matrix
        order = np.argsort(groups, kind="stable")  # each group's rows, in row order
        bounds = list(range(0, count - step, step))
        edges = np.searchsorted(groups[order], [*bounds, count])
        out = np.empty((count, matrix.shape[1]))
        for j, start in enumerate(bounds):
            stop = bounds[j + 1] if j + 1 < len(bounds) else count
            rows = order[edges[j]:edges[j + 1]]
            key = (groups[rows] - start) * self.size + self.codes[rows]
            block = np.bincount(key, weights=weights[rows],
                                minlength=(stop - start) * self.size)
            out[start:stop] = block.reshape(stop - start, self.size) @ matrix
        return out


@dataclass(frozen=True, eq=False, init=False)
class PseudoValues:
    """Pseudo-values of one question over all n respondents of a design.

    `values` (n, m): the columns named by `labels`; `noise` (n, m): each entry's unbiased
    randomization-variance estimate V̂ (zeros for a disclosed question); `present` (n,): who
    answered. `kind` is "shares" (indicators, plus "mean score" for ordinal questions) or
    "mean" (one column, the value of an integer question).

    Made from a `lookup` with `values` and `noise` None, those are its tables' rows, made
    the first time they are read (the estimators sum the lookup's codes instead, `rows`).
    """

    question: str
    mechanism: str
    labels: tuple[str, ...]
    values: np.ndarray
    noise: np.ndarray
    present: np.ndarray
    kind: str
    disclosed: bool
    lookup: Lookup | None = None

    def __init__(self, question: str, mechanism: str, labels: tuple[str, ...],
                 values: np.ndarray | None, noise: np.ndarray | None, present: np.ndarray,
                 kind: str, disclosed: bool, lookup: Lookup | None = None) -> None:
        lazy = lookup is not None and values is None and noise is None
        if not lazy and (values is None or noise is None):
            raise ValueError("pseudo-values need their values and noise, or a lookup")
        fields = {"question": question, "mechanism": mechanism, "labels": labels,
                  "present": present, "kind": kind, "disclosed": disclosed, "lookup": lookup,
                  "_lazy": lazy}
        if not lazy:
            fields |= {"values": values, "noise": noise}
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        """`values` and `noise` of a lookup, made when first read (then kept)."""
        if name in ("values", "noise") and self.__dict__.get("_lazy"):
            lookup = self.__dict__["lookup"]
            table = lookup.table if name == "values" else lookup.noise_table
            made = np.take(table, lookup.codes, axis=0)
            object.__setattr__(self, name, made)
            return made
        raise AttributeError(name)

    @property
    def rows(self) -> Lookup | None:
        """The lookup that makes `values` and `noise` (None: none, or this copy was given
        other arrays: dataclasses.replace passes them explicitly)."""
        return self.lookup if self.__dict__.get("_lazy") else None

    @property
    def n(self) -> int:
        return int(self.rows.codes.shape[0] if self.rows is not None else self.values.shape[0])

    @property
    def width(self) -> int:
        """How many columns: m."""
        return int(self.rows.table.shape[1] if self.rows is not None else self.values.shape[1])

    @property
    def answered(self) -> int:
        return int(self.present.sum())


def option_label(value: Any) -> str:
    """How a column names an option: "no"/"yes" for binary answers, else the label."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def pseudo_values(question: Any, mechanism: Mechanism, reports: Any,
                  present: Sequence[bool] | np.ndarray | None = None) -> PseudoValues:
    """The pseudo-values of `question` from its reports.

    `reports`: the reports of the respondents who answered, in row order (a stored column:
    (a,) or (a, report_width)); `present`: (n,) which of the design's n rows answered (None:
    all did). Rows that did not answer get zeros and are left out of the question's estimates.
    DesignError for a mechanism without a linear debias (the reason is in the message).
    """
    unit = question.unit
    rows = None if unit.numeric else mechanism.pseudo_value_rows(reports)
    # With a lookup, the columns below are made on its table's rows (the same operations on
    # the same numbers) and each respondent's row taken from it.
    z = mechanism.pseudo_values(reports) if rows is None else rows[0]
    answered = z.shape[0] if rows is None else rows[1].shape[0]
    if present is None:
        mask = np.ones(answered, dtype=bool)
    else:
        mask = np.asarray(present, dtype=bool).reshape(-1)
        if int(mask.sum()) != answered:
            raise DesignError(f"{question.id!r}: {answered} reports for {int(mask.sum())} "
                              "respondents marked as answering")
    disclosed = bool(getattr(question, "disclosed", False))
    if unit.numeric:  # one column: the value (its mean is what designs weight)
        labels: tuple[str, ...] = ("mean",)
        kind = "mean"
        if disclosed:
            noise = np.zeros(z.shape)  # calloc'd: no pass over n rows to write zeros
        else:
            stated = mechanism.value_noise(reports)
            if stated is None:
                raise DesignError(f"{question.id!r}: {mechanism.name} states no noise "
                                  "variance for its reports")
            noise = np.asarray(stated, dtype=np.float64).reshape(z.shape)
    else:
        labels = tuple(option_label(v) for v in question.labels)
        kind = "shares"
        # A type that scores its options (the unit's `scores`: ordinal, 1..k) gets the mean
        # score's column; every column of z is scored in order (a hidden question's "not
        # asked" too: shared/design/export_asked.py drops that column's use).
        scored = unit.scores(question)
        if scored is not None:
            scores = np.arange(1, z.shape[1] + 1, dtype=float)
            z = np.column_stack([z, z @ scores])
            labels = (*labels, MEAN_SCORE)
        if disclosed:
            noise = np.zeros(z.shape)
        else:  # z² − z per option (one pass, in place); the score's (s·z)² − (s∘s)·z
            noise = z - 1.0
            noise *= z
            if scored is not None:
                k = z.shape[1] - 1
                noise[:, k] = z[:, k] * z[:, k] - z[:, :k] @ (scores * scores)
    lookup = None
    if rows is not None:  # the table's rows, and a row of zeros for who did not answer
        table = np.vstack([z, np.zeros((1, z.shape[1]))])
        noise_table = np.vstack([noise, np.zeros((1, z.shape[1]))])
        codes = rows[1]
        if present is not None and not mask.all():
            codes = np.full(mask.size, table.shape[0] - 1, dtype=np.int64)
            codes[mask] = rows[1]
        lookup = Lookup(codes, table, noise_table)
        z = noise = None  # made from the lookup when read (PseudoValues)
    elif present is not None and not mask.all():
        full = np.zeros((mask.size, z.shape[1]))
        full[mask] = z
        full_noise = np.zeros_like(full)
        full_noise[mask] = noise
        z, noise = full, full_noise
    return PseudoValues(question=question.id, mechanism=mechanism.name, labels=labels,
                        values=z, noise=noise, present=mask, kind=kind, disclosed=disclosed,
                        lookup=lookup)


def from_values(name: str, values: np.ndarray, *, labels: Sequence[str] | None = None,
                noise: np.ndarray | None = None, present: np.ndarray | None = None,
                kind: str = "mean") -> PseudoValues:
    """Pseudo-values from arrays already at hand (tests, benches, a disclosed covariate):
    `values` (n,) or (n, m); `noise` its randomization-variance estimates (None: 0)."""
    z = np.asarray(values, dtype=np.float64)
    if z.ndim == 1:
        z = z[:, None]
    m = z.shape[1]
    names = tuple(labels) if labels is not None else (
        (name,) if m == 1 else tuple(f"{name}[{j}]" for j in range(m)))
    v = np.zeros_like(z) if noise is None else np.asarray(noise, dtype=np.float64).reshape(z.shape)
    mask = np.ones(z.shape[0], dtype=bool) if present is None else np.asarray(present, bool)
    return PseudoValues(question=name, mechanism="given", labels=names, values=z, noise=v,
                        present=mask, kind=kind, disclosed=noise is None)
