"""The truth a simulation draws answers from: distributions over a question's answers, the
built-in skewed ones, the ones a --truth file gives, and how many answers are drawn at a time.

Simulation only: answers come from a seeded numpy Generator, never from the path that sends a
report. Sets of options are multiselect.py's, clusters on a grid location.py's.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from ldpsurvey.shared.errors import SimulationError
from ldpsurvey.shared.survey import Question, Survey

from .location import location_weights
from .multiselect import default_set_truth, parse_set_truth

# Answers drawn per chunk are about this many report cells (k cells for unary encodings).
_CHUNK_CELLS = 4_000_000
_MAX_CHUNK = 200_000
_MIN_CHUNK = 1_000
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


def default_truth(question: Question) -> Distribution:
    """The built-in skewed truth for a question type."""
    if question.type == "binary":
        return Truth(np.array([0, 1]), np.array([1 - BINARY_YES, BINARY_YES]))
    if question.type == "integer":
        return TruncatedGeometric(question.k, math.exp(-INTEGER_DECAY / question.k))
    if question.type == "multiselect":  # sets of options (multiselect.py)
        return default_set_truth(question)  # type: ignore[return-value]
    if question.type == "location":  # clusters on the grid (location.py)
        grid = question.location
        return Truth(np.arange(question.k), location_weights(grid.rows, grid.cols))
    weights = 1.0 / np.arange(1, question.k + 1) ** ZIPF_EXPONENT
    return Truth(np.arange(question.k), weights / weights.sum())


def parse_truth(data: Any, survey: Survey) -> dict[str, Truth]:
    """Truth distributions from {question_id: {label_or_value: probability}}.

    Binary questions take yes/no (or true/false) keys, integer questions their values as
    strings ("3"), categorical and ordinal questions their option labels, multiselect
    questions each option's probability of being selected (multiselect.py).
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


def chunk_size(k: int) -> int:
    """Respondents per chunk for a domain of k values."""
    return max(_MIN_CHUNK, min(_MAX_CHUNK, _CHUNK_CELLS // max(k, 1)))

