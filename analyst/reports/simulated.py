"""A report from a simulated survey (seeded numpy, no server): for examples, docs and tests.

The estimate document is built exactly as the server builds it (each question's mechanism
estimates its aggregate, shared/estimand.py says what its rows mean), and the truth is the
drawn sample's own frequencies and mean.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from ldpsurvey.shared.estimand import plain_estimate
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Survey

from ..simulate.truth import default_truth
from .model import Report, Truth, answer_label


def simulated_report(survey: Survey, n: int, seed: int = 0, confidence: float = 0.95) -> Report:
    rng = np.random.default_rng(seed)
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
        origin = question.unit.score_origin(question)  # integer: min; ordinal: scores 1..k
        mean = (None if origin is None else
                float(origin + np.dot(np.arange(question.k), counts)))
        return shares, mean

    number = cell = options
