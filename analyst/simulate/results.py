"""What a simulation gives: per question, the sample's truth against each estimate.

Shared by every simulator in analyst/simulate/ (survey.py, multiselect.py, skip.py): the rows
(`ValueResult`, `MeanResult`), a question's and a survey's outcome, and `compare_estimate`, which
lines an estimate up with the truth of the drawn sample. It imports none of the simulators, so
the dependency goes one way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from ldpsurvey.shared.estimand import plain_estimate
from ldpsurvey.shared.estimates import Estimate, ValueEstimate
from ldpsurvey.shared.mechanisms import Mechanism
from ldpsurvey.shared.survey import Question, Survey


@dataclass(frozen=True)
class ValueResult:
    """One option, value or group: the sample's true frequency against its estimate."""

    value: Any
    truth: float
    estimate: float
    std_error: float
    ci_low: float
    ci_high: float
    covered: bool


@dataclass(frozen=True)
class MeanResult:
    """The true mean of the drawn answers against the estimated mean."""

    truth: float
    estimate: float
    std_error: float
    ci_low: float
    ci_high: float
    covered: bool


@dataclass
class QuestionResult:
    """The outcome for one question: per-value rows, groups, the mean, and the raw estimate."""

    question: Question
    mechanism: str
    epsilon: float
    realized_epsilon: float
    n: int
    confidence: float
    values: list[ValueResult] = field(default_factory=list)
    groups: list[ValueResult] = field(default_factory=list)
    mean: MeanResult | None = None
    estimate: Estimate | None = None
    # Skip logic (skip.py): the share not asked of an integer question (the other
    # types list it among `values`), and each option's share and the mean among those asked.
    not_asked: ValueResult | None = None
    asked_values: list[ValueResult] = field(default_factory=list)
    asked_groups: list[ValueResult] = field(default_factory=list)
    asked_mean: MeanResult | None = None

    @property
    def intervals(self) -> list[bool]:
        """Whether each interval (values, groups, means, shares among those asked) covered its
        truth."""
        flags = [r.covered for r in (*self.values, *self.groups, *self.asked_values,
                                     *self.asked_groups)]
        flags += [r.covered for r in (self.mean, self.asked_mean, self.not_asked)
                  if r is not None]
        return flags


@dataclass
class SimulationResult:
    """A whole simulated survey."""

    survey: Survey
    n: int
    seed: int | None
    confidence: float
    questions: list[QuestionResult]
    notes: list[str] = field(default_factory=list)  # what the simulation leaves out

    @property
    def coverage(self) -> tuple[int, int]:
        """(intervals that covered their truth, intervals in all)."""
        flags = [c for q in self.questions for c in q.intervals]
        return sum(flags), len(flags)


def estimate_of(question: Question, mechanism: Mechanism, aggregate: Any,
                confidence: float) -> Estimate:
    """The mechanism's estimate, with the plain report's mean score where its answers are
    numbers and the mechanism gives no mean (an ordinal question under GRR:
    shared/estimand.plain_estimate), so that simulate compares what `report` shows."""
    estimate = mechanism.estimate(aggregate, confidence)
    if estimate.mean is None and question.unit.score_origin(question) is not None:
        estimate.mean = plain_estimate(question, mechanism, aggregate, confidence).mean
    return estimate


def compare_estimate(question: Question, mechanism: Mechanism, estimate: Estimate,
                     true_freq: np.ndarray | None, true_index_sum: int, n: int,
             confidence: float) -> QuestionResult:
    result = QuestionResult(question=question, mechanism=mechanism.name,
                            epsilon=mechanism.epsilon,
                            realized_epsilon=mechanism.realized_epsilon(), n=n,
                            confidence=confidence, estimate=estimate)
    rows = estimate.categories if estimate.categories is not None else estimate.distribution
    if rows is not None and true_freq is not None:
        truth = question.unit.row_shares(question, true_freq)  # a decimal's bins
        # Values an estimate lists apart from its rows (a two-server integer's special values
        # and "not asked", in that order, after the range's values): their truths follow.
        truth, apart = truth[:len(rows)], truth[len(rows):]
        result.values = [value_result(row, float(f))
                         for row, f in zip(rows, truth, strict=True)]
        listed = {row.value for row in rows}
        for i, row in enumerate(getattr(estimate, "special", None) or []):
            if row.value not in listed and row.estimate is not None:  # never drawn: truth 0
                result.values.append(value_result(row, float(apart[i]) if i < len(apart)
                                                  else 0.0))
        index = {label: i for i, label in enumerate(question.labels)}
        for group in estimate.groups:
            members = [index[label] for label in group.options]
            result.groups.append(value_result(group, float(true_freq[members].sum()), group.name))
    # Integer answers are their values, ordinal options scored 1..k (the unit's score_origin);
    # a type whose answers are not numbers has no mean to compare.
    true_mean = question.unit.mean_of_indices(question, true_index_sum / n)
    if estimate.mean is not None and estimate.mean.estimate is not None and \
            true_mean is not None:
        m = estimate.mean
        assert m.std_error is not None and m.ci_low is not None and m.ci_high is not None
        result.mean = MeanResult(truth=true_mean, estimate=m.estimate, std_error=m.std_error,
                                 ci_low=m.ci_low, ci_high=m.ci_high,
                                 covered=m.ci_low <= true_mean <= m.ci_high)
    return result


def value_result(row: Any, truth: float, name: Any = None) -> ValueResult:
    value = row.value if isinstance(row, ValueEstimate) else name
    return ValueResult(value=value, truth=truth, estimate=row.estimate, std_error=row.std_error,
                       ci_low=row.ci_low, ci_high=row.ci_high,
                       covered=bool(row.ci_low <= truth <= row.ci_high))


def answer_label(value: Any) -> str:
    """How an answer value is shown: yes/no for binary answers."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)

