"""Answers as Prio3 measurements: one Prio3 report per answered question and declared crosstab.

- binary -> Prio3Count of the answer (0/1);
- categorical / ordinal -> Prio3Histogram(length=k) of the option index;
- integer in [min, max] -> Prio3Sum(max_measurement = max - min) of answer - min;
- multiselect -> Prio3MultihotCountVec(length = k, max weight = m) of the answer's bits, or the
  local report's measurement (shared/two_server/multiselect.py);
- a question that depends on randomized answers (skip logic) -> a Histogram ending with "not
  asked" (a multiselect one: its vector with a last "not asked" entry); an integer one with a
  local ε0 -> its asked_geometric report pair as Prio3Count of the bit and Prio3Sum of the
  clipped number under one key (shared/two_server/asked_pair.py, pair_vdaf.py);
- a declared crosstab (binary/categorical/ordinal questions only) -> Prio3Histogram over the
  k1*k2 joint cells, cell index i*k2 + j;
- a number kept on a grid (origin + j·step, j in [0, k - 1]: a decimal) -> its fixed-point
  measurement (`Measure.fixed_point`, shared/two_server/fixed_point.py): Prio3Sum of j for the
  mean, Prio3Histogram of its bin for the distribution, or both as Prio3Histogram +
  Prio3SumVec under one key (pair_vdaf.py), the bins ending with "not asked" for a hidden
  follow-up.

With a local ε0 the local mechanism's report is encoded instead of the answer: binary_rr, grr
and ordinal_exp report one index of the same domain (Count / Histogram as above); geometric
reports an integer (answer + two-sided geometric noise) that the device clips to
[min - c, max + c] (`clip_bounds`: c is the smallest integer with P[noise > c] <= CLIP_TAIL =
1e-6), encoded as Prio3Sum(max_measurement = hi - lo) of clipped report - lo. The clip is the
Sum's sensitivity, so it sets the central noise: the mechanism's 2^-64 report range (about
44·(max - min)/ε0 beyond each end) made it ~3x wider at ε0 = 2. Its bias on the mean is at
most CLIP_TAIL/(1 - α) answer units (`clip_bias_bound`, docs/two-server-noise.md), below 0.1%
of the mean's standard error up to n = 10^6 respondents. A crosstab cell is built from the two local
reports, so colluding servers see nothing finer than ε0-LDP reports.

Each report is bound to its survey, version and key (question id or crosstab key) through the
Prio3 application context `ctx`: a share made for another survey fails preparation.

Which measurement a question takes is its type's to say (`two_server_encoding`,
`two_server_answer` in shared/question_types): this module holds the circuits (`Measure`) and
reads a local report by the measurement's kind, so it names no question type.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..errors import SurveyError
from ..question_types import units
from .asked_pair import pair_scale
from .fixed_point import Grid, grid_encoding, grid_measurement

CTX_LABEL = b"ldpsurvey two-server v1"
MAX_CELLS = 1 << 16
CLIP_TAIL = 1e-6  # per side: the chance an honest integer report is clipped


@dataclass(frozen=True)
class Encoding:
    """How one key (question or crosstab) is encoded: the Prio3 instance and its domain."""

    key: str
    kind: str              # "count" | "histogram" | "sum" | "multihot" | "asked_pair" |
                           # "histogram_sum"
    length: int            # entries of the aggregate (count/sum: 1, histogram: cells,
                           # histogram_sum: cells + 1)
    max_measurement: int = 1  # sum (and asked_pair's number, histogram_sum's sum): the largest
                              # measurement; count: 1; multihot: max weight
    offset: int = 0        # sum, asked_pair: the value measured as 0
    delta: int = 0         # multihot, asked_pair, histogram_sum: the L1 sensitivity of the
                           # aggregate
    scale: int = 1         # asked_pair, histogram_sum: what the servers multiply the first
                           # measurement's shares by
    grid: Grid | None = None  # a number on a grid (fixed_point.py): what the totals count

    @property
    def sensitivity(self) -> int:
        """L1 change of the aggregate when one respondent's report is substituted."""
        return {"count": 1, "histogram": 2, "sum": self.max_measurement,
                "multihot": self.delta, "asked_pair": self.delta,
                "histogram_sum": self.delta}[self.kind]

    def vdaf(self) -> Any:
        from .. import prio3

        if self.kind == "asked_pair":
            from .pair_vdaf import AskedPairPrio3

            return AskedPairPrio3(self.max_measurement, self.scale)
        if self.kind == "histogram_sum":
            from .pair_vdaf import HistogramSumPrio3

            return HistogramSumPrio3(self.length - 1, self.max_measurement, self.scale)
        if self.kind == "count":
            return prio3.prio3_count()
        if self.kind == "sum":
            return prio3.prio3_sum(self.max_measurement)
        if self.kind == "multihot":
            checked = self.length + self.max_measurement.bit_length()  # entries and weight bits
            return prio3.prio3_multihot_countvec(self.length, self.max_measurement,
                                                 prio3.best_chunk_length(checked))
        return prio3.prio3_histogram(self.length, prio3.best_chunk_length(self.length))


def ctx(survey: Any, key: str) -> bytes:
    """The Prio3 application context of one key of one survey version."""
    return b"|".join([CTX_LABEL, survey.id.encode(), str(survey.version).encode(),
                      key.encode()])


def _alpha(mechanism: Any) -> float:
    """α = e^-λ of a local geometric mechanism: P[Z = z] ∝ α^|z|."""
    return math.exp(-float(mechanism.rate))


def clip_bounds(mechanism: Any) -> tuple[int, int]:
    """The range a local geometric report is clipped to before it is summed: [min - c, max + c]
    with c the smallest integer such that P[Z > c] = α^(c+1)/(1 + α) <= CLIP_TAIL (within the
    mechanism's accepted report range)."""
    alpha = _alpha(mechanism)
    c = max(0, math.ceil(math.log(CLIP_TAIL * (1 + alpha)) / math.log(alpha)) - 1)
    lo, hi = mechanism.report_bounds
    return max(int(mechanism.low) - c, lo), min(int(mechanism.high) + c, hi)


def clip_bias_bound(mechanism: Any) -> float:
    """|E[clipped report] - answer| for any answer in [min, max]: at most
    E[(Z - c)+] = P[Z > c]/(1 - α) <= CLIP_TAIL/(1 - α) (one side clips at a time)."""
    alpha = _alpha(mechanism)
    lo, hi = clip_bounds(mechanism)
    c = min(int(mechanism.low) - lo, hi - int(mechanism.high))
    return alpha ** (c + 1) / ((1 + alpha) * (1 - alpha))


@dataclass(frozen=True)
class Measure:
    """The Prio3 circuits one question's measurement is built from: its unit chooses
    (`QuestionType.two_server_encoding`, `two_server_answer`), this builds."""

    question: Any

    def count(self) -> Encoding:
        """Prio3Count of a 0/1 measurement."""
        return Encoding(self.question.id, "count", 1)

    def histogram(self, length: int) -> Encoding:
        """Prio3Histogram of one index in [0, length)."""
        return Encoding(self.question.id, "histogram", length)

    def sum(self, low: int, high: int) -> Encoding:
        """Prio3Sum of a value in [low, high], measured as value - low."""
        return Encoding(self.question.id, "sum", 1, high - low, low)

    def local_sum(self) -> Encoding:
        """Prio3Sum of the local geometric report clipped to `clip_bounds`, minus its low end."""
        from ..mechanisms import mechanism_for

        lo, hi = clip_bounds(mechanism_for(self.question))
        return Encoding(self.question.id, "sum", 1, hi - lo, lo)

    def asked_pair(self) -> Encoding:
        """asked_geometric's [bit, number] pair under one key (shared/two_server/asked_pair.py):
        two totals, the number's clip range and offset, the bit's scale and the sensitivity
        s + R."""
        from ..mechanisms import mechanism_for

        mechanism = mechanism_for(self.question)
        lo, hi = clip_bounds(mechanism)
        scale = pair_scale(mechanism, hi - lo)
        return Encoding(self.question.id, "asked_pair", 2, hi - lo, lo, delta=scale + hi - lo,
                        scale=scale)

    def multihot(self, length: int, max_weight: int, delta: int) -> Encoding:
        """Prio3MultihotCountVec of `length` bits, at most `max_weight` set; `delta` the L1
        change of the totals when one respondent's vector is substituted."""
        return Encoding(self.question.id, "multihot", length, max_weight, delta=delta)

    def fixed_point(self, origin: Fraction, step: Fraction, points: int,
                    edges: Sequence[Fraction] = (), mean: bool = True) -> Encoding:
        """A number kept on the grid origin + j·step, j in [0, points - 1]: its mean (`mean`)
        and/or its distribution over the bins with these `edges` (increasing, covering the
        grid; none: no distribution) measured as fixed_point.py says: Prio3Sum of j,
        Prio3Histogram of its bin ("not asked" the last where the question has that value), or
        both under one key. Exact rationals, so that every device measures the same."""
        grid = Grid(Fraction(origin), Fraction(step), int(points),
                    tuple(Fraction(e) for e in edges), bool(mean),
                    bool(getattr(self.question, "not_asked", False)))
        return grid_encoding(self.question.id, grid, Encoding)

    def on_grid(self, j: int) -> Any:
        """The measurement of the grid point j (an answer already kept to the grid) in this
        question's fixed-point encoding; "not asked" is `grid_not_asked`."""
        encoding = question_encoding(self.question)
        assert encoding.grid is not None, "on_grid measures a fixed-point encoding"
        return grid_measurement(encoding, j)

    def grid_not_asked(self) -> Any:
        """The measurement of a hidden follow-up that did not apply, in its fixed-point
        encoding: the last cell of its bins (and a grid index of 0, which adds nothing)."""
        encoding = question_encoding(self.question)
        assert encoding.grid is not None and encoding.grid.not_asked, (
            "grid_not_asked measures a fixed-point encoding with a 'not asked' cell")
        return grid_measurement(encoding, None)

    def last_cell(self) -> int:
        """The measurement of a "not asked" value: the encoding's last cell."""
        return question_encoding(self.question).length - 1

    def set_bits(self, value: Any) -> list[int]:
        """A set answer's k bits, one per option (AnswerError for a set the question does not
        allow: option_rr's `encode` at ε = 1 checks the shape's rule; nothing is drawn)."""
        from ..mechanisms.option_rr import OptionRR

        question = self.question
        shape = question.multiselect
        mask = OptionRR(1.0, tuple(question.options), question_id=question.id,
                        max_selected=shape.max_selected,
                        required_min=shape.required_min).encode(value)
        return [mask >> j & 1 for j in range(shape.k)]


def question_encoding(question: Any) -> Encoding:
    """The encoding of a question's (local report or) answer: its unit's choice. A question
    with a "not asked" value (skip logic) measures that value too (a Histogram's last cell, a
    vector's last entry, or an integer's local [bit, number] pair)."""
    encoding: Encoding = question.unit.two_server_encoding(question, Measure(question))
    return encoding


def crosstab_encoding(spec: Any, questions: Mapping[str, Any]) -> Encoding:
    return Encoding(spec.key, "histogram", questions[spec.rows].k * questions[spec.cols].k)


def encodings(survey: Any) -> dict[str, Encoding]:
    """Every key of a two-server survey in upload order: questions, then crosstabs."""
    by_id = {q.id: q for q in survey.questions}
    out = {q.id: question_encoding(q) for q in survey.questions}
    out.update({c.key: crosstab_encoding(c, by_id) for c in survey.crosstabs})
    return out


def check_crosstab(spec: Any, questions: Mapping[str, Any], where: str) -> None:
    """A two-server crosstab joins two questions whose measurement is one of their values
    (`QuestionType.two_server_crossable`) in one Histogram."""
    for qid in (spec.rows, spec.cols):
        refusal = questions[qid].unit.two_server_cross_refusal
        if refusal is not None:
            raise SurveyError(where, f"{qid!r} is {questions[qid].unit.name}: {refusal}")
        if not questions[qid].unit.two_server_crossable:
            names = [unit.name for unit in units() if unit.two_server_crossable]
            raise SurveyError(where, f"a two-server crosstab joins {', '.join(names[:-1])} or "
                              f"{names[-1]} questions; {qid!r} is {questions[qid].unit.name}")
    cells = questions[spec.rows].k * questions[spec.cols].k
    if cells > MAX_CELLS:
        raise SurveyError(where, f"has {cells} cells; at most {MAX_CELLS} in a two-server "
                          f"crosstab")


def question_index(question: Any, value: Any) -> int:
    """The measured index (or value) of a question's true answer; AnswerError if invalid
    (a multiselect answer: its k bits). A question's "not asked" value is its last cell."""
    index: int = question.unit.two_server_answer(question, value, Measure(question))
    return index


def report_measurement(question: Any, report: Any) -> Any:
    """The measurement of a local mechanism's (validated) report, by the measurement's kind:
    a bool or an index as it is, a number clipped as a Sum's, an asked pair's [bit, number],
    a bitmap report's bits (k, or k + 1 with a "not asked" pseudo-option)."""
    encoding = question_encoding(question)
    if encoding.kind == "multihot":  # 32-bit words, option j at bit j & 31 of word j >> 5
        return [(report[j >> 5] >> (j & 31)) & 1 for j in range(encoding.length)]
    if isinstance(report, bool):
        return int(report)
    if encoding.kind == "asked_pair":  # [bit, number clipped as a sum's]
        number = min(max(int(report[1]), encoding.offset),
                     encoding.offset + encoding.max_measurement) - encoding.offset
        return [int(report[0]), number]
    if encoding.kind == "sum":  # clipped to [offset, offset + max_measurement]
        return min(max(int(report), encoding.offset),
                   encoding.offset + encoding.max_measurement) - encoding.offset
    return int(report)


def measurements(survey: Any, indices: Mapping[str, int]) -> dict[str, int]:
    """Per key the Prio3 measurement, from per answered question its measured index.

    For a histogram key the measurement is the index; for count 0/1; for sum the offset value.
    A crosstab is measured when both its questions were answered.
    """
    out = {qid: indices[qid] for qid in (q.id for q in survey.questions) if qid in indices}
    by_id = {q.id: q for q in survey.questions}
    for spec in survey.crosstabs:
        if spec.rows in indices and spec.cols in indices:
            out[spec.key] = indices[spec.rows] * by_id[spec.cols].k + indices[spec.cols]
    return out
