"""Disclosed questions: no mechanism, no ε; the device sends the answer as given.

Real randomized-response surveys ask non-sensitive covariates (age band, sex, region) directly.
A question with `disclosed = true` is one: the respondent is told so next to the question
("sent as you answer it, not randomized"), the ledger lists it apart from ε, and the server
counts its answers exactly. It is the identity channel, so it plugs into everything a mechanism
does (validation, aggregates, crosstabs as an index report with channel I, subgroups) without
ever claiming a privacy loss: `privacy_loss` is None and `realized_epsilon` is infinite.

Why the randomized answers stay ε-LDP: each randomized report is drawn by its own mechanism from
the true answer of its own question with fresh randomness, so for any fixed value of everything
else the respondent sends (disclosed answers included), changing that true answer changes the
report's probability by at most e^ε. Whatever an observer knows, the likelihood ratio of a report
is the mechanism's own. What disclosed answers add is identification: a rare combination of
disclosed answers can single a respondent out, and then every randomized report is known to be
theirs (still only ε-LDP about its answer).

Wire format: binary -> true/false (DisclosedBinary), categorical/ordinal -> the option index
(Disclosed), integer -> the integer (DisclosedInteger); a question's unit picks its variant
(`QuestionType.disclosed_mechanism`, shared/question_types). Estimates are exact shares of
what respondents sent (standard error 0 among them).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from ..aggregates import Aggregate, CountAggregate, HistogramAggregate
from ..errors import ReportError
from ..estimates import (
    Estimate,
    GroupEstimate,
    MeanEstimate,
    ValueEstimate,
    empty_value_estimates,
    fill_unanswered,
)
from ..exact import PrivacyLoss
from ..question_types.words import DISCLOSED_NOTE
from ..randomness import RandomSource
from .base import JointReading, Mechanism, ReportValues, answer_sample, check_index, reject_bool

DISCLOSED = "disclosed"
# Past this many integer values a disclosed integer keeps only its count and exact sum.
MAX_DISCLOSED_HISTOGRAM = 1 << 16
SAYING = "sent as you answer it, not randomized"


class Disclosed(Mechanism):
    """The identity 'mechanism' of a disclosed question (it is never registered for `auto`):
    its report is the answer's index. The subclasses send a yes/no answer as a boolean and an
    integer answer as the number itself."""

    name = DISCLOSED
    question_types = frozenset({"binary", "categorical", "ordinal", "integer"})
    summary = "disclosed: the answer is sent as given (no randomization, no ε)."

    joint_reports = JointReading.INDEX
    reports_an_answer = True

    def __init__(self, labels: Any, *, question_id: str = "",
                 groups: Mapping[str, Sequence[int]] | None = None) -> None:
        # No ε to check: Mechanism.__init__'s limits are about ε, so set the fields directly.
        self.labels = labels if isinstance(labels, range) else tuple(labels)
        self.k = len(self.labels)
        self.epsilon = 0.0
        self.question_id = question_id
        self.groups = {name: tuple(members) for name, members in (groups or {}).items()}
        self._index = ({} if isinstance(self.labels, range)
                       else {label: i for i, label in enumerate(self.labels)})
        self._loss = None

    @classmethod
    def from_question(cls, question: Any) -> Disclosed:
        groups = question.group_indices() if question.groups else None
        return cls(question.labels, question_id=question.id, groups=groups)

    @classmethod
    def worst_case_variance(cls, k: int, epsilon: float) -> float:
        return 0.0

    def privacy_loss(self) -> PrivacyLoss | None:
        return None  # the report is the answer

    def realized_epsilon(self) -> float:
        return math.inf

    def deniability(self) -> str:
        return SAYING

    def perturb_index(self, index: int, source: RandomSource) -> Any:
        return self._report(index)

    def _report(self, index: int) -> Any:
        return index

    def perturb_many(self, answers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return np.asarray(answers, dtype=np.int64)

    def report_index(self, reports: np.ndarray) -> np.ndarray:
        """Answer indices of validated reports."""
        return np.asarray(reports).astype(np.int64)

    def validate_report(self, report: Any) -> Any:
        return check_index(report, self.k)

    def new_aggregate(self) -> Aggregate:
        return CountAggregate(self.k)

    def aggregate_from_dict(self, data: Mapping[str, Any]) -> Aggregate:
        return CountAggregate.from_dict(data, size=self.k)

    def index_channel(self) -> tuple[np.ndarray, np.ndarray]:
        return np.eye(self.k), np.eye(self.k)

    def pseudo_values(self, reports: Any) -> np.ndarray:
        """The answer itself (contract 5): its indicators (n, k) (DisclosedInteger: the value,
        (n, 1)). Nothing to debias, no randomization variance."""
        index = self.report_index(np.asarray(reports).reshape(-1))
        return np.take(np.eye(self.k), index, axis=0)  # rows of the identity, 5x faster

    def pseudo_value_rows(self, reports: Any) -> tuple[np.ndarray, np.ndarray] | None:
        """The identity's rows, the answer's index the code (None for a subclass that makes
        its pseudo-values otherwise: DisclosedInteger's are the value)."""
        if type(self).pseudo_values is not Disclosed.pseudo_values:
            return None
        return np.eye(self.k), self.report_index(np.asarray(reports).reshape(-1))

    def estimate(self, aggregate: Aggregate, confidence: float = 0.95) -> Estimate:
        n = aggregate.n
        result = self._result(n, confidence)
        assert isinstance(aggregate, CountAggregate)
        if n == 0:
            fill_unanswered(result, self.labels, self.groups)
            return result
        result.categories = self._exact_rows(self.labels, aggregate.counts, n)
        for name, members in self.groups.items():
            share = float(aggregate.counts[list(members)].sum()) / n
            result.groups.append(GroupEstimate(name, [self.labels[i] for i in members], share,
                                               0.0, 0.0, share, share, share))
        return result

    def _result(self, n: int, confidence: float) -> Estimate:
        return Estimate(question=self.question_id, mechanism=self.name, epsilon=0.0, n=n,
                        confidence=confidence, notes=[DISCLOSED_NOTE])

    @staticmethod
    def _exact_rows(labels: Sequence[Any], counts: np.ndarray, n: int) -> list[ValueEstimate]:
        shares = counts / n
        return [ValueEstimate(label, float(s), 0.0, 0.0, float(s), float(s), float(s))
                for label, s in zip(labels, shares, strict=True)]


class DisclosedBinary(Disclosed):
    """A disclosed yes/no question: its report is the answer, true or false."""

    def _report(self, index: int) -> Any:
        return bool(index)

    def perturb_many(self, answers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return np.asarray(answers, dtype=np.int64).astype(bool)

    def validate_report(self, report: Any) -> Any:
        if not isinstance(report, bool | np.bool_):
            raise ReportError(f"a yes/no answer must be true or false, got {report!r}")
        return bool(report)


class DisclosedInteger(Disclosed):
    """A disclosed integer question: its report is the number (labels: its range), and it
    crosses like a noise-free geometric report (binned)."""

    joint_reports = JointReading.WHOLE_NUMBER

    def encode(self, answer: Any) -> int:
        assert isinstance(self.labels, range)
        reject_bool(answer, "an answer")
        if not isinstance(answer, int) or answer not in self.labels:
            from ..errors import AnswerError

            raise AnswerError(f"{answer!r} is not one of the possible answers to "
                              f"{self.question_id!r}")
        return answer - self.labels.start

    def _report(self, index: int) -> Any:
        assert isinstance(self.labels, range)
        return self.labels.start + index

    def perturb_many(self, answers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        assert isinstance(self.labels, range)
        return np.asarray(answers, dtype=np.int64) + self.labels.start

    def sent_label(self, report: int) -> Fraction:
        """The number a report is (the answer itself)."""
        return Fraction(report)

    def report_index(self, reports: np.ndarray) -> np.ndarray:
        """Answer indices of validated reports: value - min."""
        assert isinstance(self.labels, range)
        return np.asarray(reports).astype(np.int64) - self.labels.start

    def validate_report(self, report: Any) -> Any:
        assert isinstance(self.labels, range)
        reject_bool(report, "an integer answer")
        if not isinstance(report, int | np.integer) or int(report) not in self.labels:
            raise ReportError(f"answer {report!r} is not an integer in "
                              f"[{self.labels.start}, {self.labels.stop - 1}]")
        return int(report)

    def _histogram(self) -> tuple[int | None, int | None]:
        assert isinstance(self.labels, range)
        if self.k > MAX_DISCLOSED_HISTOGRAM:
            return None, None
        return self.labels.start, self.labels.stop - 1

    def new_aggregate(self) -> Aggregate:
        return HistogramAggregate(*self._histogram())

    def aggregate_from_dict(self, data: Mapping[str, Any]) -> Aggregate:
        from ..errors import AggregateError

        agg = HistogramAggregate.from_dict(data)
        if (agg.low, agg.high) != self._histogram():
            raise AggregateError("histogram range does not match this question")
        return agg

    def report_values(self) -> ReportValues:
        """The report is the answer (read as a "value" report under a scale wrapper; a
        disclosed integer's crosstab bins it)."""
        assert isinstance(self.labels, range)
        x = self.labels.start + answer_sample(self.k).astype(float)
        return ReportValues(x, np.column_stack([x, x * x]))

    def pseudo_values(self, reports: Any) -> np.ndarray:
        """The value (n, 1): nothing to debias, no randomization variance."""
        return np.asarray(reports, dtype=np.float64).reshape(-1, 1)

    def estimate(self, aggregate: Aggregate, confidence: float = 0.95) -> Estimate:
        n = aggregate.n
        result = self._result(n, confidence)
        assert isinstance(aggregate, HistogramAggregate)
        mean = aggregate.total / n if n else None
        result.mean = MeanEstimate(mean, 0.0 if n else None, 0.0 if n else None, mean, mean)
        if aggregate.has_histogram:
            result.distribution = (self._exact_rows(self.labels, aggregate.counts, n) if n
                                   else empty_value_estimates(self.labels))
        return result
