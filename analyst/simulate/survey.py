"""Simulated surveys: draw truthful answers, randomize them, estimate, and compare with the truth.

Simulation only: answers and reports come from a seeded numpy Generator (`perturb_many`), never
from the path that sends a report. Respondents are processed in chunks so 10^6 and more stay
memory-friendly and progress can be reported. The truth an interval is judged against is the
frequency (or mean) in the drawn sample: the variance formulas describe a fixed population.

This module runs a survey question by question; the truth drawn is truth.py's, the outcome
results.py's, and multiselect, location and skip-logic surveys have their own modules.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from ldpsurvey.shared.errors import SimulationError
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Question, Survey

from .multiselect import simulate_multiselect
from .results import QuestionResult, SimulationResult, compare_estimate, estimate_of
from .skip import compare_among_answered, has_skip_logic, simulate_with_skips
from .truth import Distribution, chunk_size, default_truth
from .two_server import release_factory, simulation_notes

# True per-value counts are kept for domains up to this size (integer ranges may be huge).
_MAX_COUNTED_VALUES = 65_536


def simulate_survey(survey: Survey, n: int, rng: np.random.Generator,
                    truth: Mapping[str, Distribution] | None = None,
                    confidence: float = 0.95, seed: int | None = None,
                    progress: Callable[[int], None] | None = None) -> SimulationResult:
    """Simulate n respondents answering every question; `progress(k)` after each k answered."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise SimulationError(f"n must be a positive integer, got {n!r}")
    if not 0 < confidence < 1:
        raise SimulationError(f"confidence must lie strictly between 0 and 1, got {confidence}")
    truth = dict(truth or {})
    unknown = set(truth) - {q.id for q in survey.questions}
    if unknown:
        raise SimulationError(f"truth: unknown question {sorted(unknown)[0]!r}")
    # Each question through its LDP mechanism, or (a two-server survey) what the servers
    # would release: two_server.py.
    mechanisms = release_factory(survey, rng)
    if has_skip_logic(survey):  # respondents drawn whole: conditions read earlier answers
        result = simulate_with_skips(survey, n, rng, truth, confidence, seed, progress,
                                     mechanisms)
        result.notes = simulation_notes(survey)
        return result
    results = []
    for question in survey.questions:
        dist = truth.get(question.id) or default_truth(question)
        results.append(simulate_question(question, n, rng, dist, confidence, progress,
                                         mechanisms))
    return SimulationResult(survey=survey, n=n, seed=seed, confidence=confidence,
                            questions=results, notes=simulation_notes(survey))


def simulate_question(question: Question, n: int, rng: np.random.Generator,
                      truth: Distribution | None = None, confidence: float = 0.95,
                      progress: Callable[[int], None] | None = None,
                      mechanisms: Callable[[Question], Any] = mechanism_for) -> QuestionResult:
    """Draw n true answers, randomize and aggregate them chunk by chunk, then estimate (sets
    of options: multiselect.py; the question's unit says which kind its answers are).
    `mechanisms` gives the question's mechanism (a two-server survey's: two_server.py)."""
    simulation = _Simulation(n, rng, truth, confidence, progress, mechanisms)
    return question.unit.visit(question, simulation)  # type: ignore[no-any-return]


@dataclass(frozen=True)
class _Simulation:
    """`simulate_question` per kind of answer (QuestionType.visit): an answer index (an
    option, a number, a cell) or a set of options."""

    n: int
    rng: np.random.Generator
    truth: Distribution | None
    confidence: float
    progress: Callable[[int], None] | None
    mechanisms: Callable[[Question], Any] = mechanism_for

    def options(self, question: Question) -> QuestionResult:
        return _simulate_indices(question, self.n, self.rng, self.truth, self.confidence,
                                 self.progress, self.mechanisms)

    number = cell = options

    def option_set(self, question: Question) -> QuestionResult:
        return simulate_multiselect(question, self.n, self.rng, self.truth, self.confidence,
                                    self.progress, self.mechanisms)  # type: ignore[no-any-return]


def _simulate_indices(question: Question, n: int, rng: np.random.Generator,
                      truth: Distribution | None, confidence: float,
                      progress: Callable[[int], None] | None,
                      mechanisms: Callable[[Question], Any] = mechanism_for) -> QuestionResult:
    """Answer indices drawn and tallied chunk by chunk; per-value truths up to a domain of
    _MAX_COUNTED_VALUES."""
    mechanism = mechanisms(question)
    dist = truth if truth is not None else default_truth(question)
    aggregate = mechanism.new_aggregate()
    counted = question.k <= _MAX_COUNTED_VALUES
    true_counts = np.zeros(question.k if counted else 0, dtype=np.int64)
    true_index_sum = 0
    step = chunk_size(question.k)
    done = 0
    while done < n:
        size = min(step, n - done)
        answers = dist.draw(size, rng)
        aggregate.merge(mechanism.aggregate_many(mechanism.perturb_many(answers, rng)))
        if counted:
            true_counts += np.bincount(answers, minlength=question.k)
        true_index_sum += int(answers.sum(dtype=np.int64))
        done += size
        if progress is not None:
            progress(size)
    estimate = estimate_of(question, mechanism, aggregate, confidence)
    result = compare_estimate(question, mechanism, estimate,
                              true_counts / n if counted else None, true_index_sum, n,
                              confidence)
    if question.special and counted:  # and among those who gave an answer
        compare_among_answered(question, result, estimate, true_counts)
    return result
