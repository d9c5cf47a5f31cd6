"""A stored survey version turned into what validation needs: its mechanisms, built once.

Building a mechanism runs its exact privacy check, so compiled surveys are cached in process,
keyed by the manifest's SHA-256 (the same bytes always compile to the same mechanisms).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..shared.joint_features import Encoder, encoder_for_question
from ..shared.mechanisms import Mechanism, mechanism_for
from ..shared.survey import CrosstabSpec, Survey

_CACHE_SIZE = 256


@dataclass(frozen=True)
class CompiledSurvey:
    """One survey version with a mechanism per question and the ids of required questions."""

    survey: Survey
    sha256: str
    mechanisms: Mapping[str, Mechanism]
    required: frozenset[str]
    # Declared crosstabs by aggregate key ("crosstab:rows:cols"): spec, row and column encoders.
    crosstabs: Mapping[str, tuple[CrosstabSpec, Encoder, Encoder]] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return self.survey.id

    @property
    def version(self) -> int:
        return self.survey.version


_cache: dict[str, CompiledSurvey] = {}
_lock = threading.Lock()


def compile_survey(sha256: str, survey_dict: Mapping[str, Any]) -> CompiledSurvey:
    """The compiled survey for a stored manifest; built on first use, then cached."""
    with _lock:
        found = _cache.get(sha256)
    if found is not None:
        return found
    survey = Survey.from_dict(survey_dict)
    mechanisms = {q.id: mechanism_for(q) for q in survey.questions}
    compiled = CompiledSurvey(
        survey=survey, sha256=sha256, mechanisms=mechanisms,
        required=frozenset(q.id for q in survey.questions if not q.optional),
        crosstabs={spec.key: (spec, encoder_for_question(survey.question(spec.rows),
                                                         mechanisms[spec.rows], spec.row_bins),
                              encoder_for_question(survey.question(spec.cols),
                                                   mechanisms[spec.cols], spec.col_bins))
                   for spec in survey.crosstabs})
    with _lock:
        if len(_cache) >= _CACHE_SIZE:
            _cache.pop(next(iter(_cache)))
        _cache[sha256] = compiled
    return compiled


def cached(sha256: str) -> CompiledSurvey | None:
    with _lock:
        return _cache.get(sha256)
