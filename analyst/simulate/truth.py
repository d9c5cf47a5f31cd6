"""The truth a simulation draws answers from: the built-in skewed one and the one a --truth
file gives (each question's unit says how its answers are drawn and read: shared/
question_types), and how many answers are drawn at a time.

Simulation only: answers come from a seeded numpy Generator, never from the path that sends a
report. The distributions themselves are shared/question_types/truth.py's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ldpsurvey.shared.errors import SimulationError
from ldpsurvey.shared.question_types.truth import TruncatedGeometric, Truth
from ldpsurvey.shared.survey import Question, Survey

# Answers drawn per chunk are about this many report cells (k cells for unary encodings).
_CHUNK_CELLS = 4_000_000
_MAX_CHUNK = 200_000
_MIN_CHUNK = 1_000

Distribution = Truth | TruncatedGeometric


def default_truth(question: Question) -> Distribution:
    """The built-in skewed truth of a question (its unit's: Zipf-like options, 30% yes, a
    truncated geometric over integer ranges, clusters on a grid, sets of options)."""
    return question.unit.default_truth(question)  # type: ignore[no-any-return]


def parse_truth(data: Any, survey: Survey) -> dict[str, Truth]:
    """Truth distributions from {question_id: {label_or_value: probability}}.

    Binary questions take yes/no (or true/false) keys, integer questions their values as
    strings ("3"), categorical and ordinal questions their option labels, multiselect
    questions each option's probability of being selected (each unit's `parse_truth`).
    """
    if not isinstance(data, Mapping):
        raise SimulationError("truth: must be an object {question_id: {label: probability}}")
    known = {q.id: q for q in survey.questions}
    result: dict[str, Truth] = {}
    for qid, dist in data.items():
        if qid not in known:
            raise SimulationError(f"truth.{qid}: unknown question; the survey has: "
                                  f"{', '.join(known)}")
        question = known[qid]
        result[qid] = question.unit.parse_truth(question, dist, f"truth.{qid}")
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


def chunk_size(k: int) -> int:
    """Respondents per chunk for a domain of k values."""
    return max(_MIN_CHUNK, min(_MAX_CHUNK, _CHUNK_CELLS // max(k, 1)))


__all__ = ["Distribution", "TruncatedGeometric", "Truth", "chunk_size", "default_truth",
           "load_truth", "parse_truth"]
