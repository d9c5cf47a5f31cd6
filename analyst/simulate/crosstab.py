"""Simulated crosstabs: draw dependent true pairs for two questions, randomize each answer with
its own mechanism, estimate the joint and conditional tables, and compare them with the truth.

Simulation only (seeded numpy generators, `perturb_many`). The truth an interval is judged
against is the drawn sample's own table (the variance formulas describe a fixed population).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from ldpsurvey.shared.crosstab import estimate_crosstab, gram
from ldpsurvey.shared.errors import SimulationError
from ldpsurvey.shared.joint_features import Encoder, encoder_for_question
from ldpsurvey.shared.mechanisms import Mechanism, mechanism_for
from ldpsurvey.shared.numeric.distribution import QUARTILES, Cells
from ldpsurvey.shared.numeric.joint_ems import (
    category_quantiles,
    joint_counts,
    not_estimated,
    quartiles_refusal,
)
from ldpsurvey.shared.survey import Question, Survey

from ..reports.crosstab_view import (
    COL_GIVEN_ROW,
    COL_SHARES,
    COLS_MEAN,
    JOINT,
    QUANTILES,
    ROW_GIVEN_COL,
    ROW_SHARES,
    ROWS_MEAN,
    CrosstabReport,
    CrosstabTruth,
)
from .truth import Distribution, chunk_size, default_truth

GRID_KINDS = (JOINT, COL_GIVEN_ROW, ROW_GIVEN_COL)
LIST_KINDS = (ROW_SHARES, COL_SHARES, COLS_MEAN, ROWS_MEAN)


@dataclass(frozen=True)
class CrosstabSimulation:
    """The crosstab report with its truth, and how many intervals covered it."""

    report: CrosstabReport
    covered: int
    total: int
    seed: int | None


def _question(survey: Survey, qid: str) -> Question:
    try:
        return survey.question(qid)
    except KeyError:
        raise SimulationError(f"the survey has no question {qid!r}; it has: "
                              f"{', '.join(q.id for q in survey.questions)}") from None


def simulate_crosstab(survey: Survey, rows_q: str, cols_q: str, n: int,
                      rng: np.random.Generator,
                      truth: Mapping[str, Distribution] | None = None,
                      dependence: float = 0.5, confidence: float = 0.95,
                      row_bins: Sequence[int] | None = None,
                      col_bins: Sequence[int] | None = None, seed: int | None = None,
                      progress: Callable[[int], None] | None = None) -> CrosstabSimulation:
    """n respondents; with probability `dependence` a respondent's column answer follows the
    row answer (same relative position in the domain), else it is drawn on its own."""
    if rows_q == cols_q:
        raise SimulationError("a crosstab needs two different questions")
    if not 0 <= dependence <= 1:
        raise SimulationError(f"dependence must lie in [0, 1], got {dependence}")
    if isinstance(n, bool) or not isinstance(n, int) or n < 2:
        raise SimulationError(f"n must be an integer >= 2, got {n!r}")
    q1, q2 = _question(survey, rows_q), _question(survey, cols_q)
    widths = [q.unit.visit(q, _DRAWN_WIDTH) for q in (q1, q2)]  # refuses sets of options
    m1, m2 = mechanism_for(q1), mechanism_for(q2)
    e1, e2 = encoder_for_question(q1, m1, row_bins), encoder_for_question(q2, m2, col_bins)
    truth = dict(truth or {})
    d1, d2 = truth.get(rows_q) or default_truth(q1), truth.get(cols_q) or default_truth(q2)
    counts = np.zeros((e1.width, e2.width), dtype=object)
    counts[:, :] = 0
    table = _TrueTable(e1, e2, q1, q2)
    quartiles = _Quartiles.of((q1, m1, e1), (q2, m2, e2))
    step = chunk_size(max(widths))
    done = 0
    while done < n:
        size = min(step, n - done)
        x = d1.draw(size, rng)
        own = d2.draw(size, rng)
        follow = np.minimum((x / q1.k * q2.k).astype(np.int64), q2.k - 1)
        w = np.where(rng.random(size) < dependence, follow, own)
        y1, y2 = _perturb(m1, x, rng), _perturb(m2, w, rng)
        counts = counts + gram(e1, e2, y1, y2)
        table.add(x, w)
        if quartiles is not None:
            quartiles.add(x, w, y1, y2)
        done += size
        if progress is not None:
            progress(size)
    result = estimate_crosstab(e1, e2, counts, confidence, source="simulation")
    tables = table.tables()
    if quartiles is not None:
        result.set_quantiles(quartiles.estimate(result, confidence))
        if result.quantiles.estimated:
            tables[QUANTILES] = quartiles.truth()
    doc = {"survey": survey.id, "version": survey.version, **result.to_dict()}
    covered, total = coverage(doc, tables)
    report = CrosstabReport(document=doc, survey=survey.to_dict(),
                            truth=CrosstabTruth(tables))
    return CrosstabSimulation(report, covered, total, seed)


class _Quartiles:
    """A number's quartiles among each category of the other question, as `report --crosstab`
    gives them (server/crosstabs.py): the joint counts N[a, s] of the other's report and the
    number's square wave cell, EM over both channels (shared/numeric/joint_ems.py), and the
    drawn sample's own quartiles per category as the truth; or, where its reports cannot give
    them, each category's note saying why."""

    def __init__(self, number: tuple[Question, Mechanism, Encoder], other: tuple[Question,
                 Mechanism, Encoder], number_first: bool) -> None:
        self.question, self.mechanism, _ = number
        self.other, self.by, self.other_encoder = other
        self.number_first = number_first
        self.windows = self.mechanism.window_reports()
        self.reason = quartiles_refusal(self.windows, self.by, whole_question=True,
                                        disclosed=bool(self.question.disclosed))
        self.counts: np.ndarray | None = None
        self.true = np.zeros((len(self.other_encoder.cells), self.question.k))
        if self.reason is None:
            assert self.windows is not None
            self.channel, _ = self.by.index_channel()
            self.counts = np.zeros((self.channel.shape[1], self.windows.mechanism.m),
                                   dtype=np.int64)

    @classmethod
    def of(cls, first: tuple[Question, Mechanism, Encoder],
           second: tuple[Question, Mechanism, Encoder]) -> _Quartiles | None:
        """The number side's quartiles (None: neither side is a number read by its mean)."""
        if first[2].mean_only:
            return cls(first, second, True)
        if second[2].mean_only:
            return cls(second, first, False)
        return None

    def add(self, x: np.ndarray, w: np.ndarray, y1: Any, y2: Any) -> None:
        answers, categories = (x, w) if self.number_first else (w, x)
        number_reports, other_reports = (y1, y2) if self.number_first else (y2, y1)
        cells = self.other_encoder.cell_of(categories)
        np.add.at(self.true, (cells, np.asarray(answers, dtype=np.int64)), 1.0)
        if self.counts is not None and self.windows is not None:
            index = np.asarray(other_reports).astype(np.int64).reshape(-1)
            self.counts += joint_counts(index, self.windows.keys(number_reports),
                                        self.counts.shape)

    def estimate(self, result: Any, confidence: float) -> Any:
        labels = [v if isinstance(v, str | int | bool) else str(v)
                  for v in (result.cols if self.number_first else result.rows)]
        if self.reason is not None or self.counts is None or self.windows is None:
            return not_estimated(self.question.id, self.other.id, labels, result.n,
                                 confidence, self.reason or "")
        return category_quantiles(self.windows, self.channel, labels, self.counts,
                                  question=self.question.id, by=self.other.id,
                                  confidence=confidence)

    def truth(self) -> list[list[float | None]]:
        """Per category, the drawn answers' quartiles in the question's units (each answer
        spread evenly over its grid step, as the estimate reads a grid point)."""
        k = self.question.k
        at = Cells(np.arange(k, dtype=float), np.arange(k, dtype=float), 0)
        out: list[list[float | None]] = []
        for row in self.true:
            total = row.sum()
            if total == 0:
                out.append([None] * len(QUARTILES))
                continue
            found = [float(at.quantile(row / total, p)[0]) for p in QUARTILES]
            out.append([float(_value(self.question, np.array([v]))[0]) for v in found])
        return out


class _DrawnWidth:
    """Per kind of answer (QuestionType.visit), the values one drawn answer spans, which sizes
    the chunks: an option or a cell one of k, a number one (its range may be huge); a set of
    options is not drawn here."""

    def options(self, question: Question) -> int:
        return question.k

    cell = options

    def number(self, question: Question) -> int:
        return 1

    def option_set(self, question: Question) -> int:
        raise SimulationError(f"{question.id!r} is a multiselect question: simulate --crosstab "
                              f"does not draw sets of answers; `plan --crosstab "
                              f"{question.id}:OPTION OTHER` gives one option's margin, and "
                              "`report --crosstab` crosses one option of it")


_DRAWN_WIDTH = _DrawnWidth()


def _perturb(mechanism: Mechanism, answers: np.ndarray, rng: np.random.Generator) -> Any:
    return mechanism.perturb_many(answers, rng)


class _TrueTable:
    """Counts of the true cells and sums of true integer values, chunk by chunk."""

    def __init__(self, e1: Encoder, e2: Encoder, q1: Question, q2: Question) -> None:
        self.e1, self.e2, self.q1, self.q2 = e1, e2, q1, q2
        self.cells = np.zeros((len(e1.cells), len(e2.cells)))
        self.sum2 = np.zeros(len(e1.cells))  # Σ column value per row cell
        self.sum1 = np.zeros(len(e2.cells))

    def add(self, x: np.ndarray, w: np.ndarray) -> None:
        c1, c2 = self.e1.cell_of(x), self.e2.cell_of(w)
        np.add.at(self.cells, (c1, c2), 1.0)
        if self.e2.mean is not None:
            np.add.at(self.sum2, c1, _value(self.q2, w))
        if self.e1.mean is not None:
            np.add.at(self.sum1, c2, _value(self.q1, x))

    def tables(self) -> dict[str, Any]:
        n = self.cells.sum()
        joint = self.cells / n
        rows, cols = joint.sum(axis=1), joint.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            out: dict[str, Any] = {
                JOINT: joint.tolist(), ROW_SHARES: rows.tolist(), COL_SHARES: cols.tolist(),
                COL_GIVEN_ROW: _clean(joint / rows[:, None]),
                ROW_GIVEN_COL: _clean(joint / cols[None, :])}
            if self.e2.mean is not None:
                out[COLS_MEAN] = _clean(self.sum2 / self.cells.sum(axis=1))
            if self.e1.mean is not None:
                out[ROWS_MEAN] = _clean(self.sum1 / self.cells.sum(axis=0))
        return out


def _value(question: Question, index: np.ndarray) -> np.ndarray:
    """The number a mean is of, in the answer's units (the unit's `mean_of_indices`, affine in
    the index): an integer answer's value, a decimal's grid value, an ordinal option's score
    1..k."""
    values = question.unit.mean_of_indices(question, np.asarray(index, dtype=float))
    assert values is not None
    return np.asarray(values, dtype=float)


def _clean(values: np.ndarray) -> Any:
    """Numbers as a (nested) list, None where undefined (a cell nobody is in)."""
    return [_clean(v) if isinstance(v, np.ndarray) else (float(v) if np.isfinite(v) else None)
            for v in values]


def coverage(doc: Mapping[str, Any], tables: Mapping[str, Any]) -> tuple[int, int]:
    """(intervals covering the truth, intervals judged); too-noisy ratios are not judged."""
    covered = total = 0

    def judge(cell: Mapping[str, Any], true: float | None) -> None:
        nonlocal covered, total
        if true is None or cell.get("too_noisy") or cell.get("ci_low") is None:
            return
        total += 1
        covered += int(cell["ci_low"] <= true <= cell["ci_high"])

    for kind in GRID_KINDS:
        for row, true_row in zip(doc[kind], tables[kind], strict=True):
            for cell, true in zip(row, true_row, strict=True):
                judge(cell, true)
    for kind in LIST_KINDS:
        if kind in doc and kind in tables:
            for cell, true in zip(doc[kind], tables[kind], strict=True):
                judge(cell, true)
    if QUANTILES in doc and QUANTILES in tables:  # a number's quartiles per category
        for category, true_row in zip(doc[QUANTILES]["categories"], tables[QUANTILES],
                                      strict=True):
            for cell, true in zip(category["quantiles"], true_row, strict=True):
                judge(cell, true)
    return covered, total
