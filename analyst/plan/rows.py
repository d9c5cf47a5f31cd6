"""A plan's rows and the arithmetic behind them, shared by every planner in analyst/plan/.

A row is one mechanism (`PlanRow`) or one collection mode (`ModeRow`) for one question: the
respondents a margin of error needs, or the margin n respondents give. For a worst-case
variance V1/n of one report, a normal interval has half-width z·sqrt(V1/n), so a margin m needs
n = ceil(z²·V1/m²) (`respondents_needed`); with both servers' noise, Var = a/n + b/n²
(`respondents_for`, analyst/plan/modes.py). The per-type planners (location.py,
multiselect.py, skip.py) and the dispatchers (survey.py, modes.py) import these; this module
imports none of them, so the dependency goes one way.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ldpsurvey.shared.errors import PlanError
from ldpsurvey.shared.estimates import z_value
from ldpsurvey.shared.question_types import REGISTRY
from ldpsurvey.shared.readable import readable_number


@dataclass(frozen=True)
class PlanRow:
    """One mechanism for one question: its one-report worst-case variance, n and margin."""

    mechanism: str
    variance_one: float
    n: int
    margin: float
    auto: bool = False
    configured: bool = False


@dataclass(frozen=True)
class MedianPlan:
    """A question's median: the respondents for `margin` (or the margin `n` give), in the
    question's units, with its mechanism, ε and how it was found."""

    mechanism: str
    epsilon: float
    n: int
    margin: float
    runs: int
    truth: str


@dataclass(frozen=True)
class QuestionPlan:
    """The plan for one question (or a bare k/ε): a row per mechanism that fits."""

    question: str
    question_type: str
    k: int
    epsilon: float
    confidence: float
    rows: list[PlanRow]
    margin_unit: str  # "proportion", "answer units" (integer mean) or "score" (ordinal mean)
    row_label: str = "mechanism"  # what a row is: a mechanism, or an "estimate" (a region)
    median: MedianPlan | None = None  # a number's median (a decimal's distribution: median.py)
    # auto's reason where the question tells auto more than (k, ε): a number's estimates and
    # typical range
    auto_reason: str | None = None


# Beyond this n (far past any population) the margin's square underflows or n overflows a float.
_MAX_RESPONDENTS = 1e300


def respondents_needed(variance_one: float, margin: float, confidence: float) -> int:
    """n = ceil(z²·V1/m²): the smallest n whose worst-case half-width is at most `margin`."""
    z = z_value(confidence)
    root = z * math.sqrt(variance_one) / margin  # sqrt(n): no underflow of margin²
    if not root * root < _MAX_RESPONDENTS:
        raise PlanError(f"a margin of {margin:g} needs more than {_MAX_RESPONDENTS:.0e} "
                        f"respondents at this epsilon: widen the margin or raise epsilon")
    n = math.ceil(root * root)
    # Guard against float rounding making the half-width a hair above the margin.
    for _ in range(4):
        if z * math.sqrt(variance_one / max(n, 1)) <= margin * (1 + 1e-12):
            break
        n += 1
    return max(n, 1)


def margin_for(variance_one: float, n: int, confidence: float) -> float:
    """m = z·sqrt(V1/n): the worst-case half-width of the interval with n respondents."""
    return z_value(confidence) * math.sqrt(variance_one / n)


def check_target(margin: float | None, n: int | None, confidence: float) -> None:
    """Exactly one of margin / n, each in range, and a confidence in (0, 1)."""
    if (margin is None) == (n is None):
        raise PlanError("give exactly one of a margin of error (--margin) or a number of "
                        "respondents (--n)")
    if margin is not None and not (math.isfinite(margin) and margin > 0):
        raise PlanError(f"the margin of error must be a number > 0, got {margin!r}")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise PlanError(f"the number of respondents must be an integer >= 1, got {n!r}")
    if not (isinstance(confidence, float | int) and 0 < confidence < 1):
        raise PlanError(f"the confidence must lie strictly between 0 and 1, got {confidence!r}")


def check_k(question_type: str, k: int) -> None:
    """PlanError when the type has a fixed number of answers (binary: 2) and k is not it."""
    unit = REGISTRY.get(question_type)
    fixed = unit.fixed_k if unit is not None else None
    if fixed is not None and k != fixed:
        raise PlanError(f"a {question_type} question has k = {fixed}, got {k}")


def plan_row(name: str, variance_one: float, margin: float | None, n: int | None,
             confidence: float, auto: bool, configured: bool = False) -> PlanRow:
    """A row for mechanism `name`: the respondents `margin` needs, or the margin `n` give."""
    if margin is not None:
        needed = respondents_needed(variance_one, margin, confidence)
        return PlanRow(name, variance_one, needed, margin, auto, configured)
    assert n is not None
    return PlanRow(name, variance_one, n, margin_for(variance_one, n, confidence), auto,
                   configured)


def format_margin(margin: float, unit: str) -> str:
    if unit == "proportion":
        return f"±{margin * 100:.2f} pp"
    return f"±{readable_number(margin)}"


# --- collection modes (analyst/plan/modes.py) -----------------------------------------------------


LDP, TWO_SERVER, TWO_SERVER_LOCAL = "ldp", "two-server", "two-server + local"


@dataclass(frozen=True)
class ModeRow:
    """One collection mode for one question: Var = per_report/n + noise/n², worst case."""

    mode: str
    mechanism: str            # the LDP or local mechanism ("-": none)
    epsilon: float            # ε of the comparison (the LDP ε, or the central ε)
    local_epsilon: float | None
    per_report: float         # a
    noise: float              # b
    n: int
    margin: float

    def variance(self, n: int) -> float:
        return self.per_report / n + self.noise / n**2


@dataclass(frozen=True)
class ModeComparison:
    question: str
    question_type: str
    k: int
    epsilon: float
    confidence: float
    unit: str  # "proportion" or "answer units"
    rows: list[ModeRow]
    # Why the question has no rows (a disclosed question, a location one): shown instead
    not_compared: str = ""


def respondents_for(per_report: float, noise: float, margin: float, confidence: float) -> int:
    """The smallest n with z·sqrt(a/n + b/n²) <= margin."""
    if noise == 0:
        return respondents_needed(per_report, margin, confidence)
    z = z_value(confidence)
    v = (margin / z) ** 2
    root = (per_report + math.sqrt(per_report**2 + 4 * noise * v)) / (2 * v)
    if not root < 1e300:
        raise PlanError(f"a margin of {margin:g} needs more than 1e300 respondents: widen it")
    n = math.ceil((per_report + math.sqrt(per_report**2 + 4 * noise * v)) / (2 * v))
    while z * math.sqrt(per_report / n + noise / n**2) > margin * (1 + 1e-12):
        n += 1
    return max(n, 1)


def margin_at(per_report: float, noise: float, n: int, confidence: float) -> float:
    return z_value(confidence) * math.sqrt(per_report / n + noise / n**2)


def mode_rows(pairs: Sequence[tuple[str, str, float | None, float, float]], epsilon: float,
              margin: float | None, n: int | None, confidence: float) -> list[ModeRow]:
    """One row per (mode, mechanism, local ε, per-report a, noise b): the respondents a
    margin needs, or the margin n respondents give (check_target has required one of them)."""
    rows = []
    for mode, mech, local, a, b in pairs:
        if margin is not None:
            rows.append(ModeRow(mode, mech, epsilon, local, a, b,
                                respondents_for(a, b, margin, confidence), margin))
        else:
            assert n is not None
            rows.append(ModeRow(mode, mech, epsilon, local, a, b, n,
                                margin_at(a, b, n, confidence)))
    return rows
