"""Planning across collection modes: respondents a margin needs with local DP (today's mode)
and with two servers (central DP), at the same ε, with and without a local ε0.

Both modes are compared with the same accounting: respondents are a random sample of the
population, so every variance counts sampling as well as the privacy noise (today's `plan`
rows count only the privacy noise of a fixed group of respondents). For one option's share, or
an integer question's mean, the worst case over every truth has the form

    Var = a/n + b/n²,

a = the worst-case variance of one respondent's term (sampling + local randomization), b = the
variance both servers' noise adds to the total, times the estimator's squared weights (0 in
the LDP mode). A margin m at confidence z needs the smallest n with z·sqrt(a/n + b/n²) <= m:
n = ceil((a + sqrt(a² + 4·b·v))/(2v)) with v = (m/z)².

- LDP: the best mechanism that fits (type, k, ε), ranked by this worst case. For a pure
  protocol the fixed-population variance is linear in the share f (A + B·f, endpoints from
  `variance_at`), and sampling adds f(1 - f): a = max over f of A + (B + 1)f - f².
- Two-server without ε0: a = max f(1 - f) = 1/4, b = 2σ² (σ² one server's noise variance at
  the question's sensitivity; a yes/no Count and a Histogram coordinate alike).
- Two-server with ε0: the device runs the question's local mechanism, or the best of those a
  two-server survey allows (`config.LOCAL_MECHANISMS`: one index per report) at ε0; a and b
  from the same `Design` the estimator uses (shared/two_server/estimates.py), worst case over
  options.
- Integer questions, on the mean: a = (max - min)²/4 (+ the local geometric noise's variance),
  b = 2σ² at the Sum's sensitivity (max - min, or the local report range with ε0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np
from ldpsurvey.shared.errors import PlanError
from ldpsurvey.shared.mechanisms import MECHANISMS, candidates
from ldpsurvey.shared.mechanisms.geometric import Geometric
from ldpsurvey.shared.mechanisms.pure import PureProtocol
from ldpsurvey.shared.question_types import REGISTRY, unit_for
from ldpsurvey.shared.two_server.config import LOCAL_MECHANISMS
from ldpsurvey.shared.two_server.encoding import Measure
from ldpsurvey.shared.two_server.estimates import Design, sum_design
from ldpsurvey.shared.two_server.estimates import local_design as estimates_local_design
from ldpsurvey.shared.two_server.noise import SERVERS, noise_plan

from .multiselect import compare_set_modes
from .rows import (
    LDP,
    TWO_SERVER,
    TWO_SERVER_LOCAL,
    ModeComparison,
    check_k,
    check_target,
    format_margin,
    mode_rows,
)
from .skip import compare_not_asked_integer

# --- per-report worst cases --------------------------------------------------------------------


def ldp_share_per_report(name: str, k: int, epsilon: float, f: float | None = None) -> float:
    """a for one option's share under LDP mechanism `name`: fixed(f) + f(1 - f) at the share f,
    or (f None) its worst case over f."""
    cls = MECHANISMS[name]
    if not issubclass(cls, PureProtocol):
        raise PlanError(f"{name}: no share variance of this form is derived")
    p, q = cls.support_probabilities(k, epsilon)
    low = float(cls.variance_at(p, q, k, 0.0, 1, 1))
    slope = float(cls.variance_at(p, q, k, 1.0, 1, 1)) - low
    t = min(max((slope + 1) / 2, 0.0), 1.0) if f is None else f
    return low + (slope + 1) * t - t * t


def best_ldp_share(question_type: str, k: int, epsilon: float,
                   f: float | None = None) -> tuple[float, str]:
    """(a, name) of the LDP mechanism with the smallest share variance (at f, or worst case)."""
    return min((ldp_share_per_report(name, k, epsilon, f), name)
               for name in _share_mechanisms(question_type, k, epsilon))


def _share_mechanisms(question_type: str, k: int, epsilon: float, low: int = 0,
                      index_only: bool = False) -> list[str]:
    unit = REGISTRY.get(question_type)
    kinds = unit.shares_planned_as() if unit is not None else question_type
    names = [name for _, name in candidates(kinds, k, epsilon, low=low)]
    names = [n for n in names if issubclass(MECHANISMS[n], PureProtocol)
             and question_type in MECHANISMS[n].question_types
             and (not index_only or n in LOCAL_MECHANISMS)]
    if not names:
        raise PlanError(f"no mechanism fits a {question_type} question with k={k} at "
                        f"epsilon={epsilon:g}")
    return names


def local_design(name: str, question_type: str, k: int, epsilon0: float) -> Design:
    """The two-server design of a share question randomized locally by `name` at ε0."""
    labels, kind = share_measurement(question_type, k)
    return estimates_local_design(MECHANISMS[name](epsilon0, labels), labels, kind)


def share_measurement(question_type: str, k: int) -> tuple[tuple[Any, ...], str]:
    """(cell labels, Prio3 measurement) of a question of the type with k answers measured by
    two servers: what its unit's two-server section says of a stand-in question whose
    options are 0..k-1 (a binary answer: a Count of yes; an index: a Histogram)."""
    stand_in = SimpleNamespace(id="plan", options=tuple(range(k)), not_asked=False, groups={})
    unit = unit_for(question_type)
    return (tuple(unit.two_server_labels(stand_in)),
            unit.two_server_encoding(stand_in, Measure(stand_in)).kind)


def design_worst(design: Design, noise_variance: float) -> tuple[float, float]:
    """(a, b) of the worst option of a design (the largest per-report worst case)."""
    _, worst, noise = design.option_stats(np.full(design.k, 1 / design.k))
    a = int(np.argmax(worst + 1e-12 * noise))
    return float(worst[a]), SERVERS * noise_variance * float(noise[a])


# --- the comparison ----------------------------------------------------------------------------


def compare_modes(question_type: str, k: int, epsilon: float, *,
                  local_epsilon: float | None = None, margin: float | None = None,
                  n: int | None = None, confidence: float = 0.95, low: int = 0,
                  question: str = "", local_mechanism: str | None = None) -> ModeComparison:
    """LDP (best mechanism) vs two-server at the same ε, and with a local ε0 if given (by
    `local_mechanism`, else the best index-report mechanism at ε0)."""
    check_target(margin, n, confidence)
    for value, what in ((epsilon, "epsilon"), (local_epsilon, "the local epsilon")):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)
                                  or not math.isfinite(value) or value <= 0):
            raise PlanError(f"{what} must be a finite number > 0, got {value!r}")
    if isinstance(k, bool) or not isinstance(k, int) or k < 2:
        raise PlanError(f"k (the number of possible answers) must be an integer >= 2, got {k!r}")
    check_k(question_type, k)
    eps = float(epsilon)
    pairs = _ModePairs(question_type, k, eps, local_epsilon, low, local_mechanism)
    unit = REGISTRY.get(question_type)
    probe = SimpleNamespace(id=question, type=question_type, k=k, min=low)
    found, what = unit.visit(probe, pairs) if unit is not None else pairs.options(probe)
    rows = mode_rows(found, eps, margin, n, confidence)
    return ModeComparison(question, question_type, k, eps, confidence, what, rows)


_Pairs = list[tuple[str, str, float | None, float, float]]  # mode_rows' (mode, mech, ε0, a, b)


@dataclass(frozen=True)
class _ModePairs:
    """`compare_modes`' rows per kind of answer (QuestionType.visit), and the unit of their
    margin: one option's share, or the mean of a number."""

    question_type: str
    k: int
    eps: float
    local_epsilon: float | None
    low: int
    local_mechanism: str | None

    def options(self, probe: Any) -> tuple[_Pairs, str]:
        question_type, k, eps = self.question_type, self.k, self.eps
        ldp = best_ldp_share(question_type, k, eps)  # PlanError where no mechanism fits
        _, kind = share_measurement(question_type, k)
        pairs: _Pairs = [(LDP, ldp[1], None, ldp[0], 0.0),
                        (TWO_SERVER, "-", None, 0.25, SERVERS * noise_plan(kind, eps).variance)]
        if self.local_epsilon is not None:
            plan = noise_plan(kind, eps)
            names = ([self.local_mechanism] if self.local_mechanism is not None else
                     _share_mechanisms(question_type, k, self.local_epsilon, index_only=True))
            best = min((design_worst(local_design(name, question_type, k, self.local_epsilon),
                                     plan.variance), name) for name in names)
            pairs.append((TWO_SERVER_LOCAL, best[1], float(self.local_epsilon), *best[0]))
        return pairs, "proportion"

    option_set = cell = options

    def number(self, probe: Any) -> tuple[_Pairs, str]:
        return _integer_pairs(self.k, self.eps, self.local_epsilon, self.low), "answer units"


def _integer_pairs(k: int, eps: float, local_epsilon: float | None,
                   low: int) -> list[tuple[str, str, float | None, float, float]]:
    spread = (k - 1) ** 2 / 4
    probe = _IntegerProbe(low, low + k - 1, local_epsilon)
    out: list[tuple[str, str, float | None, float, float]] = [
        (LDP, Geometric.name, None, spread + Geometric.noise_variance(k, eps), 0.0),
        (TWO_SERVER, "-", None, spread,
         SERVERS * noise_plan("sum", eps, k - 1).variance)]
    if local_epsilon is not None:
        design = sum_design(probe)
        out.append((TWO_SERVER_LOCAL, Geometric.name, float(local_epsilon),
                    design.worst_per_report(),
                    SERVERS * noise_plan("sum", eps, design.sensitivity).variance))
    return out


@dataclass(frozen=True)
class _IntegerProbe:
    """The fields `sum_design` reads of an integer question with a local geometric ε0."""

    min: int
    max: int
    local_epsilon: float | None
    id: str = "plan"
    type: str = "integer"
    mechanism: str = Geometric.name
    groups: tuple = ()

    @property
    def epsilon(self) -> float:
        return self.local_epsilon or 1.0

    @property
    def labels(self) -> range:
        return range(self.min, self.max + 1)


# Why a question of an LDP survey gets no comparison rows (`ModeComparison.not_compared`).
DISCLOSED = ("disclosed: sent as given and counted exactly, no ε and no randomization cost in "
             "either mode; not compared (a two-server survey has no disclosed questions yet)")
NO_TWO_SERVER_LOCATION = ("not comparable: a two-server survey has no location questions "
                          "(they are collected with local DP only)")


def compare_question(question: Any, *, margin: float | None = None, n: int | None = None,
                     confidence: float = 0.95) -> ModeComparison:
    """The comparison for a survey question: at its central ε (two-server surveys) or its ε
    (LDP surveys), with its local ε0 if set. A disclosed question (no ε, no mechanism) and a
    location question (no two-server mode) get no rows, and say why (`not_compared`)."""
    if getattr(question, "disclosed", False):
        return _not_compared(question, confidence, DISCLOSED)
    modes = _QuestionModes(margin, n, confidence)
    return question.unit.visit(question, modes)  # type: ignore[no-any-return]


def compares_mean(question: Any) -> bool:
    """Whether `compare_question` compares `question` on a mean, in its answer's units (a
    number: its mean, or its mean among those asked), rather than on one option's share (every
    other kind, ordinal options included): the margin that applies (`plan --mean-margin`)."""
    return bool(question.unit.visit(question, _ComparesMean()))


class _ComparesMean:
    """`compares_mean` per kind of answer (QuestionType.visit)."""

    def number(self, question: Any) -> bool:
        return True

    def options(self, question: Any) -> bool:
        return False

    option_set = cell = options


def _not_compared(question: Any, confidence: float, why: str) -> ModeComparison:
    return ModeComparison(question.id, question.type, question.k, 0.0, confidence,
                          "", [], not_compared=why)


@dataclass(frozen=True)
class _QuestionModes:
    """`compare_question` per kind of answer (QuestionType.visit)."""

    margin: float | None
    n: int | None
    confidence: float

    def options(self, question: Any) -> ModeComparison:
        eps, local = _epsilons(question)
        configured = question.mechanism if local is not None else None
        if getattr(question, "not_asked", False):  # skip logic: shares of its values + not asked
            return compare_modes("categorical", question.k, eps, local_epsilon=local,
                                 margin=self.margin, n=self.n, confidence=self.confidence,
                                 question=question.id, local_mechanism=configured)
        return compare_modes(question.type, question.k, eps, local_epsilon=local,
                             margin=self.margin, n=self.n, confidence=self.confidence,
                             low=getattr(question, "min", None) or 0, question=question.id,
                             local_mechanism=configured)

    def cell(self, question: Any) -> ModeComparison:
        return _not_compared(question, self.confidence, NO_TWO_SERVER_LOCATION)

    def number(self, question: Any) -> ModeComparison:
        if getattr(question, "not_asked", False):  # skip logic: the mean among asked (skip.py)
            return compare_not_asked_integer(  # type: ignore[no-any-return]
                question, margin=self.margin, n=self.n, confidence=self.confidence)
        eps, local = _epsilons(question)
        return compare_modes(question.type, question.k, eps, local_epsilon=local,
                             margin=self.margin, n=self.n, confidence=self.confidence,
                             low=getattr(question, "min", None) or 0, question=question.id)

    def option_set(self, question: Any) -> ModeComparison:
        eps, local = _epsilons(question)
        return compare_set_modes(  # type: ignore[no-any-return]
            question.multiselect, eps, local_epsilon=local, margin=self.margin, n=self.n,
            confidence=self.confidence, question=question.id,
            local_mechanism=question.mechanism if local is not None else None,
            not_asked=getattr(question, "not_asked", False))


def _epsilons(question: Any) -> tuple[float, float | None]:
    """A survey question's ε of the comparison (its central ε in a two-server survey) and its
    local ε0 (None: none)."""
    eps = getattr(question, "central_epsilon", None) or question.epsilon
    return eps, getattr(question, "local_epsilon", None)


# --- text --------------------------------------------------------------------------------------


def format_comparison(c: ModeComparison) -> str:
    """A plain-text table, one row per mode."""
    header = ["mode", "mechanism", "epsilon", "s.e. at n", "respondents", "margin of error"]
    body = []
    for r in c.rows:
        eps = f"{r.epsilon:g}" + (f" (ε0 {r.local_epsilon:g})" if r.local_epsilon else "")
        se = math.sqrt(r.variance(r.n))
        body.append([r.mode, r.mechanism, eps,
                     f"{se * 100:.2f} pp" if c.unit == "proportion" else f"{se:.4g}",
                     f"{r.n:,}", format_margin(r.margin, c.unit)])
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
             for row in [header, *body]]
    lines.insert(1, "  ".join("-" * w for w in widths).rstrip())
    return "\n".join(lines)


def respondents_per_mode(comparisons: list[ModeComparison]) -> dict[str, int]:
    """Per mode, the respondents every question needs (the largest n over questions)."""
    needed: dict[str, int] = {}
    for c in comparisons:
        for r in c.rows:
            needed[r.mode] = max(needed.get(r.mode, 0), r.n)
    return needed


def describe_comparison(c: ModeComparison) -> str:
    if c.not_compared:
        return f"{c.question + ': ' if c.question else ''}{c.question_type}, {c.not_compared}"
    what = ("the mean, in the answer's units" if c.unit == "answer units"
            else "one option's share, in percentage points")
    return (f"{c.question + ': ' if c.question else ''}{c.question_type}, k={c.k}, "
            f"epsilon={c.epsilon:g}, {c.confidence:.0%} confidence; margin on {what}, "
            "worst case over the truth, sampling included in every mode")


__all__ = ["best_ldp_share", "compare_modes", "compare_question", "compares_mean",
           "describe_comparison",
           "format_comparison", "ldp_share_per_report", "respondents_per_mode"]
