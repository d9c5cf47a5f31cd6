"""A report from a simulated survey (seeded numpy, no server): for examples, docs and tests.

The estimate document is built exactly as the server builds it (each question's mechanism
estimates its aggregate, shared/estimand.py says what its rows mean), and the truth is the
drawn sample's own frequencies and mean. A survey with skip logic is drawn respondent by
respondent, its conditions read on earlier answers (simulate/skip.py), and the truth is given
among those asked as well as of everyone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np
from ldpsurvey.shared.estimand import plain_estimate
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.question_types.base import NOT_ASKED
from ldpsurvey.shared.survey import Survey

from ..simulate.skip import Column, draw_column, has_skip_logic, sent_reports
from ..simulate.truth import default_truth
from .model import Report, Truth, answer_label


def simulated_report(survey: Survey, n: int, seed: int = 0, confidence: float = 0.95) -> Report:
    rng = np.random.default_rng(seed)
    if has_skip_logic(survey):
        return _with_skips(survey, n, rng, confidence)
    questions: list[dict[str, Any]] = []
    answers: dict[str, np.ndarray] = {}
    for q in survey.questions:
        mech = mechanism_for(q)
        answers[q.id] = default_truth(q).draw(n, rng)
        agg = mech.aggregate_many(mech.perturb_many(answers[q.id], rng))
        questions.append(plain_estimate(q, mech, agg, confidence).to_dict())
    doc = {"survey": survey.id, "version": survey.version, "sha256": survey.sha256,
           "confidence": confidence, "n_submissions": n, "last_submission_hour": None,
           "questions": questions}
    return Report(survey=survey.to_dict(), estimates=doc, truth=truth_of(survey, answers))


def _with_skips(survey: Survey, n: int, rng: np.random.Generator,
                confidence: float) -> Report:
    """`simulated_report` of a survey with conditions: respondents drawn whole, question by
    question (simulate/skip.py), each question's mechanism given what its devices send ("not
    asked" for those it did not apply to, where it has that value)."""
    questions: list[dict[str, Any]] = []
    columns: dict[str, Column] = {}
    for q in survey.questions:
        columns[q.id] = column = draw_column(q, n, rng, None, columns)
        mech = mechanism_for(q)
        sent = sent_reports(q, column.values, column.present)
        agg = (mech.aggregate_many(mech.perturb_many(sent, rng)) if len(sent)
               else mech.new_aggregate())
        questions.append(plain_estimate(q, mech, agg, confidence).to_dict())
    doc = {"survey": survey.id, "version": survey.version, "sha256": survey.sha256,
           "confidence": confidence, "n_submissions": n, "last_submission_hour": None,
           "questions": questions}
    return Report(survey=survey.to_dict(), estimates=doc, truth=skip_truth(survey, columns))


def skip_truth(survey: Survey, columns: Mapping[str, Column]) -> Truth:
    """The true shares and means of answers drawn with skip logic: among those asked (the mean
    and `asked_shares`), and of everyone for a question with a "not asked" value (each share
    times the share asked, and the share not asked); a question without that value is
    reported by those asked alone, so its shares are theirs."""
    shares: dict[str, dict[str, float]] = {}
    means: dict[str, float] = {}
    asked_shares: dict[str, dict[str, float]] = {}
    for q in survey.questions:
        column = columns[q.id]
        among, mean = true_shares(replace(q, not_asked=False), column.values[column.present])
        if mean is not None:
            means[q.id] = mean
        if not q.not_asked:
            shares[q.id] = among
            continue
        asked = float(column.present.mean())
        asked_shares[q.id] = among
        shares[q.id] = {**{label: s * asked for label, s in among.items()},
                        NOT_ASKED: 1 - asked}
    return Truth(shares, means, asked_shares)


def truth_of(survey: Survey, answers: dict[str, np.ndarray]) -> Truth:
    """The true shares (and means) of drawn answers, as indices per question id."""
    shares: dict[str, dict[str, float]] = {}
    means: dict[str, float] = {}
    for q in survey.questions:
        shares[q.id], mean = true_shares(q, answers[q.id])
        if mean is not None:
            means[q.id] = mean
    return Truth(shares, means)


def true_shares(question: Any, answers: np.ndarray) -> tuple[dict[str, float], float | None]:
    """Label -> share of `answers` (indices), group shares, and the mean where answers are
    numbers (integer values, ordinal scores; multiselect: answers are sets, the mean is the
    number selected)."""
    return question.unit.visit(question, _TrueShares(answers))  # type: ignore[no-any-return]


class _TrueShares:
    """`true_shares` per kind of answer (QuestionType.visit)."""

    def __init__(self, answers: np.ndarray) -> None:
        self.answers = answers

    def option_set(self, question: Any) -> tuple[dict[str, float], float | None]:
        from ..simulate.multiselect import set_shares

        return set_shares(self.answers, question)

    def options(self, question: Any) -> tuple[dict[str, float], float | None]:
        n = max(len(self.answers), 1)
        counts = np.bincount(np.asarray(self.answers, dtype=np.int64),
                             minlength=question.k) / n
        labels = list(question.labels)
        shares = {answer_label(v): float(c) for v, c in zip(labels, counts, strict=True)}
        for name, members in question.group_indices().items() if question.groups else ():
            shares[name] = float(counts[list(members)].sum())
        # integer: min + index; ordinal: scores 1..k; decimal: min + index·resolution
        mean = question.unit.mean_of_indices(question, float(np.dot(np.arange(question.k),
                                                                    counts)))
        return shares, mean

    number = cell = options
