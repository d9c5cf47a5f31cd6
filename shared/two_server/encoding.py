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
  k1*k2 joint cells, cell index i*k2 + j.

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
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import AnswerError, SurveyError

if TYPE_CHECKING:
    from ..survey import CrosstabSpec, Question, Survey

CTX_LABEL = b"ldpsurvey two-server v1"
MAX_CELLS = 1 << 16
CROSSTAB_TYPES = ("binary", "categorical", "ordinal")
CLIP_TAIL = 1e-6  # per side: the chance an honest integer report is clipped


@dataclass(frozen=True)
class Encoding:
    """How one key (question or crosstab) is encoded: the Prio3 instance and its domain."""

    key: str
    kind: str              # "count" | "histogram" | "sum" | "multihot" | "asked_pair"
    length: int            # entries of the aggregate (count/sum: 1, histogram: cells)
    max_measurement: int = 1  # sum (and asked_pair's number): the largest measurement;
                              # count: 1; multihot: max weight
    offset: int = 0        # sum, asked_pair: the value measured as 0
    delta: int = 0         # multihot, asked_pair: the L1 sensitivity of the aggregate
    scale: int = 1         # asked_pair: what the servers multiply the bit's share by

    @property
    def sensitivity(self) -> int:
        """L1 change of the aggregate when one respondent's report is substituted."""
        return {"count": 1, "histogram": 2, "sum": self.max_measurement,
                "multihot": self.delta, "asked_pair": self.delta}[self.kind]

    def vdaf(self) -> Any:
        from .. import prio3

        if self.kind == "asked_pair":
            from .pair_vdaf import AskedPairPrio3

            return AskedPairPrio3(self.max_measurement, self.scale)
        if self.kind == "count":
            return prio3.prio3_count()
        if self.kind == "sum":
            return prio3.prio3_sum(self.max_measurement)
        if self.kind == "multihot":
            checked = self.length + self.max_measurement.bit_length()  # entries and weight bits
            return prio3.prio3_multihot_countvec(self.length, self.max_measurement,
                                                 prio3.best_chunk_length(checked))
        return prio3.prio3_histogram(self.length, prio3.best_chunk_length(self.length))


def ctx(survey: Survey, key: str) -> bytes:
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


def question_encoding(question: Question) -> Encoding:
    """The encoding of a question's (local report or) answer. A question with a "not asked"
    value (skip logic) is a Histogram over its values and "not asked", the last cell: a yes/no
    one over 3 cells, an integer one over its range's values and one (at most
    MAX_TWO_SERVER_INTEGER in all)."""
    if getattr(question, "not_asked", False) and question.type != "multiselect":
        if question.type == "integer" and question.local_epsilon is not None:
            from .asked_pair import pair_encoding

            return pair_encoding(question)
        if question.type == "integer":
            return Encoding(question.id, "histogram", question.k + 1)
        return Encoding(question.id, "histogram", question.k)
    if question.type == "multiselect":
        from .multiselect import set_encoding

        return set_encoding(question)
    if question.local_epsilon is not None and question.mechanism == "geometric":
        from ..mechanisms import mechanism_for

        lo, hi = clip_bounds(mechanism_for(question))
        return Encoding(question.id, "sum", 1, hi - lo, lo)
    if question.type == "binary":
        return Encoding(question.id, "count", 1)
    if question.type == "integer":
        assert question.min is not None and question.max is not None
        return Encoding(question.id, "sum", 1, question.max - question.min, question.min)
    return Encoding(question.id, "histogram", question.k)


def crosstab_encoding(spec: CrosstabSpec, questions: Mapping[str, Question]) -> Encoding:
    return Encoding(spec.key, "histogram", questions[spec.rows].k * questions[spec.cols].k)


def encodings(survey: Survey) -> dict[str, Encoding]:
    """Every key of a two-server survey in upload order: questions, then crosstabs."""
    by_id = {q.id: q for q in survey.questions}
    out = {q.id: question_encoding(q) for q in survey.questions}
    out.update({c.key: crosstab_encoding(c, by_id) for c in survey.crosstabs})
    return out


def check_crosstab(spec: CrosstabSpec, questions: Mapping[str, Question], where: str) -> None:
    """A two-server crosstab joins two non-integer questions in one Histogram."""
    for qid in (spec.rows, spec.cols):
        if questions[qid].type not in CROSSTAB_TYPES:
            raise SurveyError(where, f"a two-server crosstab joins binary, categorical or "
                              f"ordinal questions; {qid!r} is {questions[qid].type}")
    cells = questions[spec.rows].k * questions[spec.cols].k
    if cells > MAX_CELLS:
        raise SurveyError(where, f"has {cells} cells; at most {MAX_CELLS} in a two-server "
                          f"crosstab")


def question_index(question: Question, value: Any) -> int:
    """The measured index (or value) of a question's true answer; AnswerError if invalid
    (a multiselect answer: its k bits). A question's "not asked" value is its last cell."""
    from ..skip_logic import NOT_ASKED

    if question.type == "multiselect":
        from .multiselect import answer_measurement

        return answer_measurement(question, value)  # type: ignore[return-value]
    if getattr(question, "not_asked", False):
        if isinstance(value, str) and value == NOT_ASKED:
            return question_encoding(question).length - 1
        if question.type == "integer":
            if isinstance(value, bool) or not isinstance(value, int) or not (
                    question.min <= value <= question.max):
                raise AnswerError(f"{value!r} is not an answer to {question.id!r}")
            return value - question.min
    if question.type == "binary":
        if not isinstance(value, bool):
            raise AnswerError(f"the answer to {question.id!r} must be true or false")
        return int(value)
    if question.type == "integer":
        if isinstance(value, bool) or not isinstance(value, int):
            raise AnswerError(f"the answer to {question.id!r} must be an integer")
        assert question.min is not None and question.max is not None
        if not question.min <= value <= question.max:
            raise AnswerError(f"{value} is outside [{question.min}, {question.max}] for "
                              f"{question.id!r}; it is refused, not clamped")
        return value - question.min
    if value not in question.options:
        raise AnswerError(f"{value!r} is not an option of {question.id!r}")
    return question.options.index(value)


def report_measurement(question: Question, report: Any) -> int:
    """The measurement of a local mechanism's (validated) report."""
    if question.type == "multiselect":
        from .multiselect import report_measurement as set_report

        return set_report(question, report)  # type: ignore[no-any-return]
    encoding = question_encoding(question)
    if isinstance(report, bool):
        return int(report)
    if encoding.kind == "asked_pair":  # [bit, number clipped as a sum's]
        number = min(max(int(report[1]), encoding.offset),
                     encoding.offset + encoding.max_measurement) - encoding.offset
        return [int(report[0]), number]  # type: ignore[return-value]
    if encoding.kind == "sum":  # clipped to [offset, offset + max_measurement]
        return min(max(int(report), encoding.offset),
                   encoding.offset + encoding.max_measurement) - encoding.offset
    return int(report)


def measurements(survey: Survey, indices: Mapping[str, int]) -> dict[str, int]:
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
