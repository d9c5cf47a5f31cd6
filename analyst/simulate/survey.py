"""Simulated surveys: draw truthful answers, randomize them, estimate, and compare with the truth.

Simulation only: answers and reports come from a seeded numpy Generator (`perturb_many`), never
from the path that sends a report. Respondents are processed in chunks so 10^6 and more stay
memory-friendly and progress can be reported. The truth an interval is judged against is the
frequency (or mean) in the drawn sample: the variance formulas describe a fixed population.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ...shared.errors import SimulationError
from ...shared.estimates import Estimate, ValueEstimate
from ...shared.mechanisms import Mechanism, mechanism_for
from ...shared.survey import Question, Survey

# Answers drawn per chunk are about this many report cells (k cells for unary encodings).
_CHUNK_CELLS = 4_000_000
_MAX_CHUNK = 200_000
_MIN_CHUNK = 1_000
# True per-value counts are kept for domains up to this size (integer ranges may be huge).
_MAX_COUNTED_VALUES = 65_536
# Built-in skewed truth: Zipf-like options, 30% yes, a truncated geometric over integer ranges.
ZIPF_EXPONENT = 1.1
BINARY_YES = 0.3
INTEGER_DECAY = 4.0  # P[min + i] ∝ exp(-INTEGER_DECAY · i / k): mean about a quarter of the range
PROBABILITY_TOLERANCE = 1e-9
_YES = {"yes", "true"}
_NO = {"no", "false"}


@dataclass(frozen=True)
class Truth:
    """A distribution of true answers over a question's answer indices (a sparse support)."""

    indices: np.ndarray
    probabilities: np.ndarray

    def draw(self, size: int, rng: np.random.Generator) -> np.ndarray:
        return self.indices[rng.choice(self.indices.size, size=size, p=self.probabilities)]


@dataclass(frozen=True)
class TruncatedGeometric:
    """P[i] ∝ ρ^i over [0, k), sampled by inverting its CDF: no array of size k needed."""

    k: int
    rho: float

    def draw(self, size: int, rng: np.random.Generator) -> np.ndarray:
        u = rng.random(size)
        top = -math.expm1(self.k * math.log(self.rho))  # 1 - ρ^k
        i = np.floor(np.log1p(-u * top) / math.log(self.rho)).astype(np.int64)
        return np.minimum(i, self.k - 1)


Distribution = Truth | TruncatedGeometric


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
    # Skip logic (simulate_skip.py): the share not asked of an integer question (the other
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

    @property
    def coverage(self) -> tuple[int, int]:
        """(intervals that covered their truth, intervals in all)."""
        flags = [c for q in self.questions for c in q.intervals]
        return sum(flags), len(flags)


# --- truth distributions ---------------------------------------------------------------------


def default_truth(question: Question) -> Distribution:
    """The built-in skewed truth for a question type."""
    if question.type == "binary":
        return Truth(np.array([0, 1]), np.array([1 - BINARY_YES, BINARY_YES]))
    if question.type == "integer":
        return TruncatedGeometric(question.k, math.exp(-INTEGER_DECAY / question.k))
    if question.type == "multiselect":  # sets of options (simulate_multiselect.py)
        from .multiselect import default_set_truth

        return default_set_truth(question)  # type: ignore[return-value]
    if question.type == "location":  # clusters on the grid (simulate_location.py)
        from .location import location_weights

        grid = question.location
        return Truth(np.arange(question.k), location_weights(grid.rows, grid.cols))
    weights = 1.0 / np.arange(1, question.k + 1) ** ZIPF_EXPONENT
    return Truth(np.arange(question.k), weights / weights.sum())


def parse_truth(data: Any, survey: Survey) -> dict[str, Truth]:
    """Truth distributions from {question_id: {label_or_value: probability}}.

    Binary questions take yes/no (or true/false) keys, integer questions their values as
    strings ("3"), categorical and ordinal questions their option labels, multiselect
    questions each option's probability of being selected (simulate_multiselect.py).
    """
    if not isinstance(data, Mapping):
        raise SimulationError("truth: must be an object {question_id: {label: probability}}")
    known = {q.id: q for q in survey.questions}
    result: dict[str, Truth] = {}
    for qid, dist in data.items():
        if qid not in known:
            raise SimulationError(f"truth.{qid}: unknown question; the survey has: "
                                  f"{', '.join(known)}")
        result[qid] = _parse_distribution(dist, known[qid], f"truth.{qid}")
    return result


def load_truth(path: str | Path, survey: Survey) -> dict[str, Truth]:
    """Read and validate a --truth JSON file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SimulationError(f"{path}: cannot read truth file: {exc}") from exc
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        raise SimulationError(f"{path}: invalid JSON: {exc}") from exc
    return parse_truth(data, survey)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number")


def _parse_distribution(dist: Any, question: Question, where: str) -> Truth:
    if question.type == "multiselect":
        from .multiselect import parse_set_truth

        return parse_set_truth(dist, question, where)  # type: ignore[return-value]
    if not isinstance(dist, Mapping) or not dist:
        raise SimulationError(f"{where}: must be a non-empty object {{label: probability}}")
    indices: list[int] = []
    probabilities: list[float] = []
    for key, p in dist.items():
        at = f"{where}.{key}"
        index = _answer_index(key, question, at)
        if index in indices:
            raise SimulationError(f"{at}: the same answer is listed twice")
        if isinstance(p, bool) or not isinstance(p, int | float) or not math.isfinite(p):
            raise SimulationError(f"{at}: probability must be a finite number")
        if p < 0:
            raise SimulationError(f"{at}: probability must be >= 0, got {p}")
        indices.append(index)
        probabilities.append(float(p))
    total = math.fsum(probabilities)
    if abs(total - 1.0) > PROBABILITY_TOLERANCE:
        raise SimulationError(f"{where}: probabilities sum to {total!r}, not 1 "
                              f"(within {PROBABILITY_TOLERANCE:g})")
    probs = np.array(probabilities)
    return Truth(np.array(indices, dtype=np.int64), probs / probs.sum())


def _answer_index(key: Any, question: Question, where: str) -> int:
    if question.type == "binary":
        word = str(key).strip().lower()
        if word in _YES:
            return 1
        if word in _NO:
            return 0
        raise SimulationError(f"{where}: unknown answer; a binary question takes yes or no")
    if question.type == "integer":
        assert question.min is not None and question.max is not None
        try:
            value = int(str(key).strip())
        except ValueError:
            raise SimulationError(f"{where}: not an integer value") from None
        if not question.min <= value <= question.max:
            raise SimulationError(f"{where}: {value} is outside [{question.min}, "
                                  f"{question.max}]")
        return value - question.min
    try:
        return question.options.index(key)
    except ValueError:
        raise SimulationError(f"{where}: unknown option; expected one of: "
                              f"{', '.join(question.options)}") from None


# --- running ---------------------------------------------------------------------------------


def chunk_size(k: int) -> int:
    """Respondents per chunk for a domain of k values."""
    return max(_MIN_CHUNK, min(_MAX_CHUNK, _CHUNK_CELLS // max(k, 1)))


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
    from .skip import has_skip_logic, simulate_with_skips

    if has_skip_logic(survey):  # respondents drawn whole: conditions read earlier answers
        return simulate_with_skips(survey, n, rng, truth, confidence, seed, progress)
    results = []
    for question in survey.questions:
        dist = truth.get(question.id) or default_truth(question)
        results.append(simulate_question(question, n, rng, dist, confidence, progress))
    return SimulationResult(survey=survey, n=n, seed=seed, confidence=confidence,
                            questions=results)


def simulate_question(question: Question, n: int, rng: np.random.Generator,
                      truth: Distribution | None = None, confidence: float = 0.95,
                      progress: Callable[[int], None] | None = None) -> QuestionResult:
    """Draw n true answers, randomize and aggregate them chunk by chunk, then estimate."""
    if question.type == "multiselect":
        from .multiselect import simulate_multiselect

        return simulate_multiselect(question, n, rng, truth, confidence, progress)
    mechanism = mechanism_for(question)
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
    estimate = mechanism.estimate(aggregate, confidence)
    return _compare(question, mechanism, estimate, true_counts / n if counted else None,
                    true_index_sum, n, confidence)


def _compare(question: Question, mechanism: Mechanism, estimate: Estimate,
             true_freq: np.ndarray | None, true_index_sum: int, n: int,
             confidence: float) -> QuestionResult:
    result = QuestionResult(question=question, mechanism=mechanism.name,
                            epsilon=mechanism.epsilon,
                            realized_epsilon=mechanism.realized_epsilon(), n=n,
                            confidence=confidence, estimate=estimate)
    rows = estimate.categories if estimate.categories is not None else estimate.distribution
    if rows is not None and true_freq is not None:
        result.values = [_row(row, float(f)) for row, f in zip(rows, true_freq, strict=True)]
        index = {label: i for i, label in enumerate(question.labels)}
        for group in estimate.groups:
            members = [index[label] for label in group.options]
            result.groups.append(_row(group, float(true_freq[members].sum()), group.name))
    if estimate.mean is not None and estimate.mean.estimate is not None \
            and question.type in ("integer", "ordinal"):
        # Integer answers are their values; ordinal options are scored 1..k.
        first = question.min if question.type == "integer" else 1
        assert first is not None
        true_mean = first + true_index_sum / n
        m = estimate.mean
        assert m.std_error is not None and m.ci_low is not None and m.ci_high is not None
        result.mean = MeanResult(truth=true_mean, estimate=m.estimate, std_error=m.std_error,
                                 ci_low=m.ci_low, ci_high=m.ci_high,
                                 covered=m.ci_low <= true_mean <= m.ci_high)
    return result


def _row(row: Any, truth: float, name: Any = None) -> ValueResult:
    value = row.value if isinstance(row, ValueEstimate) else name
    return ValueResult(value=value, truth=truth, estimate=row.estimate, std_error=row.std_error,
                       ci_low=row.ci_low, ci_high=row.ci_high,
                       covered=bool(row.ci_low <= truth <= row.ci_high))


def answer_label(value: Any) -> str:
    """How an answer value is shown: yes/no for binary answers."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)

