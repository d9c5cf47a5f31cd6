"""Simulated answers to a multiselect question: sets of options, as (n, k) boolean matrices.

Two truths, the multiselect unit's (shared/question_types/multiselect.py):
- the built-in one (`default_set_truth`): how many options a respondent selects falls off by
  half with each extra option (sizes required_min..m), and which ones follows Zipf-like weights
  (drawn without replacement: the Gumbel top-s trick), so a few options are common and most
  are rare, as in check-all-that-apply questions;
- from `simulate --truth` (`parse_set_truth`): {option: probability}, each option selected
  independently with its probability, a set of a size the question does not allow drawn again
  (refused when fewer than 1 in 100 sets would be allowed).
The intervals are judged against the drawn sample's own shares and mean number selected.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.question_types.truth import IndependentSetTruth, SetTruth
from ldpsurvey.shared.survey import Question

from .results import MeanResult, QuestionResult, value_result

_CHUNK_ROWS = 200_000


def default_set_truth(question: Question) -> SetTruth:
    """The built-in truth of a multiselect question (its unit's `default_truth`)."""
    return question.unit.default_truth(question)  # type: ignore[no-any-return]


def parse_set_truth(dist: Any, question: Question, where: str) -> IndependentSetTruth:
    """{option: probability of selecting it}, every option of the question named (its unit's
    `parse_truth`)."""
    return question.unit.parse_truth(question, dist, where)  # type: ignore[no-any-return]


def set_shares(sets: np.ndarray, question: Question) -> tuple[dict[str, float], float]:
    """Each option's share of the drawn sets, and the mean number selected."""
    sets = np.asarray(sets, dtype=bool)
    n = max(sets.shape[0], 1)
    shares = sets.sum(axis=0) / n
    return ({label: float(s) for label, s in zip(question.options, shares, strict=True)},
            float(sets.sum()) / n)


def simulate_multiselect(question: Question, n: int, rng: np.random.Generator,
                         truth: Any = None, confidence: float = 0.95,
                         progress: Callable[[int], None] | None = None,
                         mechanisms: Callable[[Question], Any] = mechanism_for) -> Any:
    """Draw n answer sets, randomize and aggregate them chunk by chunk, estimate, compare
    (`mechanisms`: the question's mechanism, or a two-server survey's release)."""
    mechanism = mechanisms(question)
    dist = truth if truth is not None else default_set_truth(question)
    aggregate = mechanism.new_aggregate()
    selected = np.zeros(question.k, dtype=np.int64)
    done = 0
    while done < n:
        size = min(_CHUNK_ROWS, n - done)
        sets = dist.draw(size, rng)
        aggregate.merge(mechanism.aggregate_many(mechanism.perturb_many(sets, rng)))
        selected += sets.sum(axis=0)
        done += size
        if progress is not None:
            progress(size)
    estimate = mechanism.estimate(aggregate, confidence)
    result = QuestionResult(question=question, mechanism=mechanism.name,
                            epsilon=mechanism.epsilon,
                            realized_epsilon=mechanism.realized_epsilon(), n=n,
                            confidence=confidence, estimate=estimate)
    assert estimate.categories is not None and estimate.mean is not None
    result.values = [value_result(row, float(c) / n)
                     for row, c in zip(estimate.categories, selected, strict=True)]
    m = estimate.mean
    true_mean = float(selected.sum()) / n
    if m.estimate is not None and not math.isnan(m.estimate):
        result.mean = MeanResult(truth=true_mean, estimate=m.estimate, std_error=m.std_error,
                                 ci_low=m.ci_low, ci_high=m.ci_high,
                                 covered=m.ci_low <= true_mean <= m.ci_high)
    return result
