"""Simulated answers to a multiselect question: sets of options, as (n, k) boolean matrices.

Two truths:
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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from ldpsurvey.shared.errors import SimulationError
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Question

from .results import MeanResult, QuestionResult, value_result

SIZE_DECAY = 0.5  # P(s + 1 options) = SIZE_DECAY · P(s options)
ZIPF_EXPONENT = 1.1
MIN_ACCEPTANCE = 0.01
_CHUNK_ROWS = 200_000


@dataclass(frozen=True)
class SetTruth:
    """Set sizes from `sizes` (P[s], s = 0..m) and options drawn without replacement with
    probability proportional to `weights`."""

    weights: np.ndarray
    sizes: np.ndarray

    def draw(self, count: int, rng: np.random.Generator) -> np.ndarray:
        k = self.weights.size
        size = rng.choice(self.sizes.size, size=count, p=self.sizes)
        with np.errstate(divide="ignore"):
            keys = np.log(self.weights)[None, :] + rng.gumbel(size=(count, k))
        rank = np.argsort(np.argsort(-keys, axis=1), axis=1)  # 0 = the largest key
        return rank < size[:, None]


@dataclass(frozen=True)
class IndependentSetTruth:
    """Each option selected independently with `probabilities[j]`; sets of a size outside
    [low, high] drawn again."""

    probabilities: np.ndarray
    low: int
    high: int

    def draw(self, count: int, rng: np.random.Generator) -> np.ndarray:
        out = np.empty((count, self.probabilities.size), dtype=bool)
        todo = np.arange(count)
        while todo.size:
            sets = rng.random((todo.size, self.probabilities.size)) < self.probabilities
            sizes = sets.sum(axis=1)
            ok = (sizes >= self.low) & (sizes <= self.high)
            out[todo[ok]] = sets[ok]
            todo = todo[~ok]
        return out

    def acceptance(self) -> float:
        """P[low <= |S| <= high] (a Poisson-binomial, by dynamic programming)."""
        dist = np.zeros(self.probabilities.size + 1)
        dist[0] = 1.0
        for p in self.probabilities:
            dist[1:] = dist[1:] * (1 - p) + dist[:-1] * p
            dist[0] *= 1 - p
        return float(dist[self.low:self.high + 1].sum())


def default_set_truth(question: Question) -> SetTruth:
    shape = question.multiselect
    weights = 1.0 / np.arange(1, question.k + 1) ** ZIPF_EXPONENT
    sizes = np.zeros(shape.max_selected + 1)
    span = np.arange(shape.required_min, shape.max_selected + 1)
    sizes[span] = SIZE_DECAY ** span
    return SetTruth(weights / weights.sum(), sizes / sizes.sum())


def parse_set_truth(dist: Any, question: Question, where: str) -> IndependentSetTruth:
    """{option: probability of selecting it}, every option of the question named."""
    if not isinstance(dist, Mapping) or not dist:
        raise SimulationError(f"{where}: must be an object {{option: probability of selecting "
                              f"it}} (each option selected independently)")
    probabilities = np.zeros(question.k)
    for key, p in dist.items():
        if key not in question.options:
            raise SimulationError(f"{where}.{key}: unknown option; expected one of: "
                                  f"{', '.join(question.options)}")
        if isinstance(p, bool) or not isinstance(p, int | float) or not 0 <= p <= 1:
            raise SimulationError(f"{where}.{key}: the probability of selecting it must be a "
                                  f"number from 0 to 1")
        probabilities[question.options.index(key)] = float(p)
    shape = question.multiselect
    truth = IndependentSetTruth(probabilities, shape.required_min, shape.max_selected)
    if truth.acceptance() < MIN_ACCEPTANCE:
        raise SimulationError(f"{where}: with these probabilities fewer than "
                              f"{MIN_ACCEPTANCE:.0%} of sets have {shape.required_min} to "
                              f"{shape.max_selected} options (what the question allows)")
    return truth


def set_shares(sets: np.ndarray, question: Question) -> tuple[dict[str, float], float]:
    """Each option's share of the drawn sets, and the mean number selected."""
    sets = np.asarray(sets, dtype=bool)
    n = max(sets.shape[0], 1)
    shares = sets.sum(axis=0) / n
    return ({label: float(s) for label, s in zip(question.options, shares, strict=True)},
            float(sets.sum()) / n)


def simulate_multiselect(question: Question, n: int, rng: np.random.Generator,
                         truth: Any = None, confidence: float = 0.95,
                         progress: Callable[[int], None] | None = None) -> Any:
    """Draw n answer sets, randomize and aggregate them chunk by chunk, estimate, compare."""
    mechanism = mechanism_for(question)
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
