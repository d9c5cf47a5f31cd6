"""Simulated surveys with skip logic: respondents drawn question by question in order, each
condition evaluated on the answers already drawn, and the estimates among those asked compared
with the truth (docs/skip-logic.md).

A question's truth distribution is the distribution of its answers AMONG THOSE ASKED (a truth
file gives that, or the built-in skewed one is used). A respondent a question does not apply to
answers "not asked" when the question has that value (its report is still drawn and
aggregated), and sends nothing otherwise (a condition on disclosed answers). Conditions are
evaluated on whole chunks of respondents with numpy (`condition_mask`) exactly as the device
evaluates them (shared/conditions.py): each answer held as the device holds it (an option's or
a special value's label, a number), so `==` compares labels whatever two questions' option
lists are, an order is computed only for <, <=, >, >= (on option positions or numbers), and the
same missing-value rules apply; tests/analyst/test_skip_condition_masks.py checks both agree
respondent by respondent over random surveys, conditions and answers.
Simulation only: a seeded numpy generator, never the path that sends a report.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from ldpsurvey.shared.conditions import Node, Operand
from ldpsurvey.shared.errors import SimulationError
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.question_types.base import extra_values, special_labels
from ldpsurvey.shared.survey import Question, Survey

from .results import (
    MeanResult,
    QuestionResult,
    SimulationResult,
    compare_estimate,
    estimate_of,
    value_result,
)
from .truth import Distribution, chunk_size, default_truth


@dataclass
class Column:
    """One question's drawn answers in a chunk: answer indices (a boolean matrix for a
    multiselect question) and who was asked and answered."""

    question: Question
    values: np.ndarray
    present: np.ndarray


def has_skip_logic(survey: Survey) -> bool:
    return any(q.condition is not None for q in survey.questions)


def condition_mask(node: Node, columns: Mapping[str, Column], n: int) -> np.ndarray:
    """Whether a condition holds for each of n respondents: shared/conditions.py's evaluation
    (`Condition.evaluate`, what the device runs) on whole arrays. Each value is held as the
    device holds it (`_Values`): a label (an option's, a special value's) or a number, so that
    `==`, `!=` and `in` compare what the device compares (labels, whatever the two questions'
    option lists), and an order (<, <=, >, >=) is computed only when asked for, on option
    positions or numbers, false where a side is in no order (a special value); a bare yes/no
    question holds for a yes only, not a special value. Contract 3's missing-value rules: a
    comparison, `in` or selected() on a missing answer is false, `!=` and `not in` true."""
    return _mask(node, columns, n, _Labels())


class _Labels:
    """The labels met in one condition, each with a code (a comparison of two answers
    compares codes: equal labels, equal codes, whichever questions they come from)."""

    def __init__(self) -> None:
        self.codes: dict[str, int] = {}
        self.labels: list[str] = []

    def code(self, label: str) -> int:
        found = self.codes.get(label)
        if found is None:
            found = self.codes[label] = len(self.labels)
            self.labels.append(label)
        return found


@dataclass
class _Values:
    """An operand over n respondents, as the device holds it: `code` ≥ 0 where the value is a
    label (`_Labels`), -1 where it is `number` (an integer, a yes/no as 0/1); `present` where
    the answer exists (asked and answered). `ordered` is the operand of a question whose
    options are in order, `question` the question it reads, `kind` the parser's."""

    number: np.ndarray
    code: np.ndarray
    present: np.ndarray
    kind: str
    ordered: bool = False
    question: Any = None


def _mask(node: Node, columns: Mapping[str, Column], n: int, labels: _Labels) -> np.ndarray:
    if node.form in ("or", "and"):
        items = [_mask(item, columns, n, labels) for item in node.items]
        return np.logical_or.reduce(items) if node.form == "or" else \
            np.logical_and.reduce(items)
    if node.form == "not":
        return ~_mask(node.items[0], columns, n, labels)
    assert node.left is not None
    left = _values(node.left, columns, n, labels)
    if node.form == "bare":
        return left.present & _truthy(left)
    if node.form == "in":
        hit = np.zeros(n, dtype=bool)
        for value in node.values:
            hit |= _equal(left, _values(value, columns, n, labels))
        return np.where(left.present, hit != node.negated, node.negated)
    assert node.right is not None
    right = _values(node.right, columns, n, labels)
    both = left.present & right.present
    if node.op in ("==", "!="):
        equal = _equal(left, right)
        return both & equal if node.op == "==" else ~both | ~equal
    (a, a_orders), (b, b_orders) = _order(left, right, labels), _order(right, left, labels)
    compared = {"<": np.less, "<=": np.less_equal, ">": np.greater,
                ">=": np.greater_equal}[node.op](a, b)
    return both & a_orders & b_orders & compared


def _equal(left: _Values, right: _Values) -> np.ndarray:
    """Where the two values are equal as the device compares them (Python's `==`): two labels
    that are the same text, or two numbers that are the same number; a label never equals a
    number."""
    return (left.code == right.code) & ((left.code >= 0) | (left.number == right.number))


def _truthy(values: _Values) -> np.ndarray:
    """A bare operand's truth as the device reads it (shared/conditions.py `_yes`): a yes, a
    true condition; never a label (a yes/no question's special value: an answer, not a
    yes)."""
    return (values.code < 0) & (values.number != 0)


def _order(side: _Values, other: _Values, labels: _Labels) -> tuple[np.ndarray, np.ndarray]:
    """(place, takes part in the order) of one side of <, <=, >, >=, as the device orders it
    (shared/conditions.py `_position`, `_orders`): with an ordinal side, a label's position
    among the options of this side's question if it is ordinal, else the other side's (a
    special value, in neither, is in no order); otherwise a number, not a yes/no."""
    if side.ordered or other.ordered:
        question = side.question if side.ordered else other.question
        place = {label: i for i, label in enumerate(question.options)}
        table = np.array([place.get(label, -1) for label in labels.labels] + [-1])
        position = table[side.code]  # code -1 (a number): the table's last entry, -1
        return position, position >= 0
    return side.number, (side.code < 0) & (side.kind == "int")


def _values(operand: Operand, columns: Mapping[str, Column], n: int,
            labels: _Labels) -> _Values:
    """An operand over n respondents (`_Values`)."""
    everyone = np.ones(n, dtype=bool)
    no_label = np.full(n, -1, dtype=np.int64)
    if operand.form == "literal":
        value = operand.literal
        if isinstance(value, str):
            return _Values(np.zeros(n, dtype=np.int64), np.full(n, labels.code(value)),
                           everyone, operand.kind)
        return _Values(np.full(n, int(value), dtype=np.int64), no_label, everyone,
                       operand.kind)
    if operand.form == "group":
        assert operand.inner is not None
        inner = _mask(operand.inner, columns, n, labels)
        return _Values(inner.astype(np.int64), no_label, everyone, operand.kind)
    assert operand.question is not None
    column = columns[operand.question.id]
    if operand.form == "answered":  # the simulation leaves no asked question unanswered
        return _Values(column.present.astype(np.int64), no_label, everyone, operand.kind)
    if operand.form == "count":
        counts = np.where(column.present, column.values.sum(axis=1), 0)
        return _Values(counts.astype(np.int64), no_label, everyone, operand.kind)
    if operand.form == "selected":
        j = column.question.options.index(operand.option)
        return _Values(column.values[:, j].astype(np.int64), no_label, column.present,
                       operand.kind)
    number, code = _answer_tables(column.question, operand.kind, labels)
    index = np.where(column.present, column.values, 0)
    return _Values(number[index], code[index], column.present, operand.kind,
                   operand.ordered, column.question)


def _answer_tables(q: Question, kind: str, labels: _Labels) -> tuple[np.ndarray, np.ndarray]:
    """Per drawn answer index (the values, then the special values), the answer as the
    device holds it: (number, label code). The unit's `condition_values` gives what a
    condition reads of each value (an option's label, a yes/no, an integer); a special
    value is its label."""
    values = q.unit.condition_values(q, np.arange(len(q.unit.values(q))))
    special = [labels.code(label) for label in special_labels(q)]
    if kind == "text":
        code = [labels.code(str(label)) for label in values] + special
        number = np.zeros(len(code), dtype=np.int64)
    else:
        code = [-1] * len(values) + special
        number = np.concatenate([np.asarray(values, dtype=np.int64),
                                 np.zeros(len(special), dtype=np.int64)])
    return number, np.asarray(code, dtype=np.int64)


def asked_truth(question: Question) -> Distribution:
    """The built-in truth of a question among those asked (over its own options)."""
    return default_truth(replace(question, not_asked=False))


def draw_column(question: Question, size: int, rng: np.random.Generator,
                truth: Distribution | None, columns: Mapping[str, Column]) -> Column:
    """`size` respondents' answers to `question` (from `truth`, else the built-in truth among
    those asked) and who is asked: its condition read on the earlier questions' `columns`."""
    answers = (truth or asked_truth(question)).draw(size, rng)
    asked = (np.ones(size, dtype=bool) if question.condition is None
             else condition_mask(question.condition.tree, columns, size))
    return Column(question, answers, asked)


def sent_reports(question: Question, answers: np.ndarray, asked: np.ndarray) -> np.ndarray:
    """What the question's mechanism takes from these respondents: every answer, "not asked"
    for those not asked where the question has that value; else the answers of those asked
    alone (a condition on disclosed answers: the others send nothing)."""
    return question.unit.visit(question, _KINDS).reports(  # type: ignore[no-any-return]
        question, answers, asked)


@dataclass
class _Tally:
    """Per question: the true answers drawn (indices, NA last) and the aggregate."""

    counts: np.ndarray  # over the mechanism's domain: options (+ special values, "not asked")
    index_sum: int = 0  # sum of answer indices among those asked
    asked: int = 0
    # a question with special values: those asked who gave an answer, and their index sum
    answered: int | None = None
    answered_sum: int = 0


def simulate_with_skips(survey: Survey, n: int, rng: np.random.Generator,
                        truth: Mapping[str, Distribution] | None = None,
                        confidence: float = 0.95, seed: int | None = None,
                        progress: Callable[[int], None] | None = None,
                        mechanism_of: Callable[[Question], Any] = mechanism_for
                        ) -> SimulationResult:
    """`simulate_survey` for a survey with conditions (module docstring); `mechanism_of`
    gives each question's mechanism (a two-server survey's release: two_server.py)."""
    truth = dict(truth or {})
    kinds = {q.id: q.unit.visit(q, _KINDS) for q in survey.questions}  # refuses a grid's cells
    mechanisms = {q.id: mechanism_of(q) for q in survey.questions}
    aggregates = {q.id: m.new_aggregate() for q, m in zip(survey.questions,
                                                           mechanisms.values(), strict=True)}
    tallies = {q.id: _Tally(np.zeros(kinds[q.id].cells(q), dtype=np.int64))
               for q in survey.questions}
    step = min(chunk_size(q.k) for q in survey.questions)
    done = 0
    while done < n:
        size = min(step, n - done)
        columns: dict[str, Column] = {}
        for q in survey.questions:
            columns[q.id] = draw_column(q, size, rng, truth.get(q.id), columns)
            answers, asked = columns[q.id].values, columns[q.id].present
            tally = tallies[q.id]
            tally.asked += int(asked.sum())
            tally.index_sum += int(answers[asked].sum(dtype=np.int64))
            sent = kinds[q.id].sent(q, answers, asked, tally)
            mechanism = mechanisms[q.id]
            if sent.size:
                aggregates[q.id].merge(mechanism.aggregate_many(mechanism.perturb_many(sent,
                                                                                       rng)))
        done += size
        if progress is not None:
            progress(size * len(survey.questions))
    results = [kinds[q.id].result(q, mechanisms[q.id], aggregates[q.id], tallies[q.id], n,
                                  confidence)
               for q in survey.questions]
    return SimulationResult(survey=survey, n=n, seed=seed, confidence=confidence,
                            questions=results)


class _Options:
    """An answer index (an option): tallied per value, "not asked" last; each value's share
    compared over everyone, or among those asked."""

    def cells(self, q: Question) -> int:
        """The true-answer tally's cells: the domain's values (special values and "not
        asked" included)."""
        return len(q.unit.values(q)) + len(extra_values(q))

    def sent(self, q: Question, answers: np.ndarray, asked: np.ndarray,
             tally: _Tally) -> np.ndarray:
        """The reports sent (`reports`), tallied; with special values, who gave an answer."""
        sent = self.reports(q, answers, asked)
        tally.counts += np.bincount(sent, minlength=len(tally.counts))
        if q.special:
            given = answers[asked]
            given = given[given < len(q.unit.values(q))]
            tally.answered = (tally.answered or 0) + int(given.size)
            tally.answered_sum += int(given.sum(dtype=np.int64))
        return sent

    def reports(self, q: Question, answers: np.ndarray, asked: np.ndarray) -> np.ndarray:
        """What the mechanism takes: every answer, "not asked" (the index past the values and
        the special values) for those not asked; or, with no such value, the answers of those
        asked alone."""
        return (np.where(asked, answers, len(q.unit.values(q)) + len(special_labels(q)))
                if q.not_asked else answers[asked])

    def result(self, q: Question, mechanism: Any, aggregate: Any, tally: _Tally, n: int,
               confidence: float) -> QuestionResult:
        estimate = estimate_of(q, mechanism, aggregate, confidence)
        sent = int(tally.counts.sum())
        if not q.not_asked:  # every report is an answer: compared as any question's
            freq = tally.counts / max(sent, 1)
            result = compare_estimate(q, mechanism, estimate, freq, tally.index_sum,
                                      max(sent, 1), confidence)
            if q.special:  # and among those who gave an answer
                self.among_answered(q, result, estimate, tally)
            return result
        result = compare_estimate(q, mechanism, estimate, tally.counts / n, 0, n, confidence)
        result.mean = None
        self.not_asked_row(result, estimate, tally, n)
        self.among_answered(q, result, estimate, tally)
        return result

    def among_answered(self, q: Question, result: QuestionResult, estimate: Any,
                       tally: _Tally) -> None:
        """The shares (and mean) among those asked, or who gave an answer, against the
        truth."""
        values = len(q.unit.values(q))  # among those who gave an answer (special values aside)
        asked_counts = tally.counts[:values] / max(
            tally.asked if tally.answered is None else tally.answered, 1)
        among = estimate.among_asked
        if among is None:
            return
        if among.categories and among.categories[0].estimate is not None:
            result.asked_values = [value_result(row, float(f)) for row, f in
                                   zip(among.categories, asked_counts, strict=True)]
            index = {label: i for i, label in enumerate(q.labels)}
            for group in among.groups:
                members = [index[label] for label in group.options]
                result.asked_groups.append(value_result(group,
                                                        float(asked_counts[members].sum()),
                                                        group.name))
        if q.unit.score_origin(q) is None:  # an ordinal's scores 1..k
            _asked_mean(result, among.mean, lambda index: 1 + index, tally)
        else:  # a number's mean index in its units (a decimal's grid: min + index·resolution)
            _asked_mean(result, among.mean, lambda index: q.unit.mean_of_indices(q, index),
                        tally)

    def not_asked_row(self, result: QuestionResult, estimate: Any, tally: _Tally,
                      n: int) -> None:
        """The share not asked as a row of its own (the options list it among their values)."""


def compare_among_answered(q: Question, result: QuestionResult, estimate: Any,
                           counts: np.ndarray) -> None:
    """A question with special values asked of everyone: the shares and mean among those who
    gave an answer against the truth, as for a question asked with skip logic (`counts`: the
    drawn answers per index, the special values after the values)."""
    values = len(q.unit.values(q))
    given = counts[:values]
    tally = _Tally(np.asarray(counts, dtype=np.int64), asked=int(counts.sum()),
                   answered=int(given.sum()),
                   answered_sum=int(np.arange(values, dtype=np.int64) @ given))
    _Options().among_answered(q, result, estimate, tally)


class _Number(_Options):
    """A whole number. Asked of those a condition on disclosed answers selects, each value's
    share and the mean among them are compared, as the plain simulation compares them. With a
    "not asked" value (asked_geometric), the share not asked is a row of its own, beyond the
    range, and the mean among those asked is compared: that mechanism estimates no value's
    share (an asked bit and a noisy number; shared/mechanisms/asked_geometric.py), so there is
    no per-value row to compare."""

    def not_asked_row(self, result: QuestionResult, estimate: Any, tally: _Tally,
                      n: int) -> None:
        if estimate.not_asked is not None and estimate.not_asked.estimate is not None:
            result.not_asked = value_result(estimate.not_asked, float(tally.counts[-1] / n))


class _OptionSet:
    """A set of options (an (n, k) boolean matrix): each option's count, "not asked" last;
    each option's share and the mean number selected compared."""

    def cells(self, q: Question) -> int:
        return len(q.options) + 1

    def sent(self, q: Question, sets: np.ndarray, asked: np.ndarray,
             tally: _Tally) -> np.ndarray:
        """The sets sent (`reports`), tallied."""
        tally.counts[:-1] += sets[asked].sum(axis=0)
        tally.counts[-1] += int((~asked).sum())
        return self.reports(q, sets, asked)

    def reports(self, q: Question, sets: np.ndarray, asked: np.ndarray) -> np.ndarray:
        """The sets as the mechanism takes them: with a "not asked" value, an extra last
        column that alone is set for those not asked; else only those asked."""
        if not q.not_asked:
            return sets[asked]
        out = np.zeros((sets.shape[0], sets.shape[1] + 1), dtype=bool)
        out[:, :-1] = sets & asked[:, None]
        out[:, -1] = ~asked
        return out

    def result(self, q: Question, mechanism: Any, aggregate: Any, tally: _Tally, n: int,
               confidence: float) -> QuestionResult:
        """Each option's share (of those who sent it, or with "not asked" of everyone) and
        the mean number selected, or among those asked."""
        estimate = mechanism.estimate(aggregate, confidence)
        result = QuestionResult(question=q, mechanism=mechanism.name,
                                epsilon=mechanism.epsilon,
                                realized_epsilon=mechanism.realized_epsilon(), n=n,
                                confidence=confidence, estimate=estimate)
        rows = estimate.categories or []
        if not rows or rows[0].estimate is None:
            return result
        sent = n if q.not_asked else max(tally.asked, 1)
        truths = tally.counts[:len(rows)] / sent
        if q.not_asked:
            truths = np.append(tally.counts[:-1], tally.counts[-1]) / n
        result.values = [value_result(row, float(t))
                         for row, t in zip(rows, truths, strict=True)]
        if not q.not_asked:
            m = estimate.mean
            if m is not None and m.estimate is not None and m.std_error is not None:
                true_mean = tally.index_sum / sent
                result.mean = MeanResult(truth=true_mean, estimate=m.estimate,
                                         std_error=m.std_error, ci_low=m.ci_low,
                                         ci_high=m.ci_high,
                                         covered=m.ci_low <= true_mean <= m.ci_high)
            return result
        among = estimate.among_asked
        if among is not None and among.categories and among.categories[0].estimate is not None:
            shares = tally.counts[:-1] / max(tally.asked, 1)
            result.asked_values = [value_result(row, float(s)) for row, s in
                                   zip(among.categories, shares, strict=True)]
            _asked_mean(result, among.mean, lambda index: index, tally)  # from 0 selected
        return result


class _Kinds:
    """The tallies per kind of answer (QuestionType.visit); a grid's cell is not simulated
    with skip logic."""

    def options(self, question: Question) -> _Options:
        return _Options()

    def number(self, question: Question) -> _Options:
        return _Number()

    def option_set(self, question: Question) -> _OptionSet:
        return _OptionSet()

    def cell(self, question: Question) -> _Options:
        raise SimulationError("simulating skip logic takes binary, categorical, ordinal, "
                              "integer and multiselect questions")


_KINDS = _Kinds()


def _asked_mean(result: QuestionResult, m: Any, to_mean: Callable[[float], float],
                tally: _Tally) -> None:
    """The mean among those asked against the truth: `to_mean` of the mean answer index among
    those asked (an integer's values, a decimal's grid values, an ordinal's scores 1..k, a
    multiselect's number selected)."""
    if m is not None and m.estimate is not None and m.std_error is not None:
        true_mean = to_mean(tally.index_sum / max(tally.asked, 1) if tally.answered is None
                            else tally.answered_sum / max(tally.answered, 1))
        result.asked_mean = MeanResult(truth=true_mean, estimate=m.estimate,
                                       std_error=m.std_error, ci_low=m.ci_low,
                                       ci_high=m.ci_high,
                                       covered=m.ci_low <= true_mean <= m.ci_high)
