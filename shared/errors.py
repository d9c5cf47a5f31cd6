"""Typed errors raised by the library; the CLI and HTTP API map them to messages at the edge."""

from __future__ import annotations

from typing import Any


class LdpSurveyError(Exception):
    """Base class of every error this package raises on purpose."""

    code = "error"

    def __init__(self, message: str, details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled whole, whatever a subclass's constructor takes: the SQLite writer process
        hands ingest outcomes back to the request threads (server/store/ingest_process.py)."""
        return _rebuilt, (type(self), self.args, self.__dict__)


def _rebuilt(cls: type[LdpSurveyError], args: tuple[Any, ...],
             state: dict[str, Any]) -> LdpSurveyError:
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error


class SurveyError(LdpSurveyError):
    """A survey definition is invalid; the message names the field and the problem."""

    code = "invalid_survey"

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}", {"field": field, "problem": problem})
        self.field = field
        self.problem = problem


class AnswerError(LdpSurveyError):
    """A true answer does not fit its question (refused on the device, never clamped)."""

    code = "invalid_answer"


class ReportError(LdpSurveyError):
    """A perturbed report lies outside its mechanism's report domain."""

    code = "invalid_report"


class PrivacyCheckError(LdpSurveyError):
    """A mechanism's exact channel does not satisfy the ε it claims."""

    code = "privacy_check_failed"


class AggregateError(LdpSurveyError):
    """Aggregates that do not belong together, or a stored aggregate that does not parse."""

    code = "invalid_aggregate"


class ManifestError(LdpSurveyError):
    """A signed survey manifest is malformed, unsigned, or its signature does not verify."""

    code = "invalid_manifest"


class SigningKeyError(LdpSurveyError):
    """A signing key file is missing, unreadable or not an Ed25519 key."""

    code = "invalid_key"


class SimulationError(LdpSurveyError):
    """A simulation's inputs are invalid: a truth distribution that does not fit the survey."""

    code = "invalid_simulation"


class EstimateError(LdpSurveyError):
    """Estimation inputs are invalid: a confidence level outside (0, 1), or so close to 1
    that its interval is infinite."""

    code = "invalid_estimate"


class PlanError(LdpSurveyError):
    """Planner inputs are invalid: k < 2, ε <= 0, or not exactly one of margin / n."""

    code = "invalid_plan"


class ReportRenderError(LdpSurveyError):
    """An estimate report cannot be produced: a malformed estimate document, an unknown format,
    or a server that cannot be read."""

    code = "report_failed"


class CrosstabError(LdpSurveyError):
    """A crosstab cannot be computed as asked: an unknown question, bins that do not fit, a
    mechanism without a joint estimator, or a table too large."""

    code = "invalid_crosstab"


class CompositionError(LdpSurveyError):
    """An ε list or δ' that no composition bound can be stated for."""

    code = "invalid_composition"


class AnalysisError(LdpSurveyError):
    """A subgroup estimate or a regression cannot be computed as asked: an unknown question, a
    grouping question that is not disclosed, an outcome or covariate of the wrong kind."""

    code = "invalid_analysis"


class DesignError(LdpSurveyError):
    """A design-based estimate cannot be made as asked: a frame value that is not a usable
    weight, stratum, PSU or fpc, a stratum with one PSU under lonely_psu="fail", replicate
    weights that do not fit, or a mechanism without a linear debias (no pseudo-values)."""

    code = "invalid_design"


class CalibrationError(DesignError):
    """Weights cannot be calibrated as asked: an empty post-stratum, margins whose totals
    disagree, raking or bounded calibration that does not converge (with its iteration count),
    or a covariate that is a randomized answer (calibration takes disclosed ones only)."""

    code = "calibration_failed"


ECHO_LIMIT = 200
MESSAGE_LIMIT = 3 * ECHO_LIMIT  # a message is a sentence around at most an echo or two


def clip(text: str, limit: int = ECHO_LIMIT) -> str:
    """`text` if it is at most `limit` characters, else its head and tail around a marker.

    Error messages echo what was sent (an id, a key, a value); the edges (HTTP bodies, CLI
    lines) pass every message through this so hostile input cannot make them unbounded. The
    tail is kept because a message's explanation usually ends it.
    """
    if len(text) <= limit:
        return text
    head, tail = (limit * 2) // 3, limit // 3
    return f"{text[:head]}…[{len(text) - head - tail} characters]…{text[len(text) - tail:]}"
