"""Mechanisms by name, and the choice `auto` makes.

`mechanism_for(question)` builds the mechanism a question names. `auto` picks, among the
mechanisms that fit the question type and whose report stays under the size limit, the one
with the lowest worst-case variance with one report for the question's (k, ε)
(`selection_variance`):
- binary and categorical questions: each mechanism's `average_variance`, the variance of an
  option's estimate averaged over the k options, worst case over the truth (for pure protocols
  it is the same for every truth). This is the expected squared error per option that accuracy
  benchmarks measure. The per-option worst case (`worst_case_variance`, reached only when
  everyone gives the same answer) would favour SUE almost everywhere and lose 1.3-4.8x in
  mean squared error on realistic data (bench/RESULTS.md); the planner still uses it
  (`margin_variance`), because a margin of error must hold for every option and every truth.
- integer questions: the variance of the mean, which does not depend on the truth.
- ordinal questions: the variance of the mean score (options scored 1..k), worst case over the
  truth. An ordered scale is read for its mean (like an integer question), and a per-option
  criterion would ignore the order the distance-aware mechanism exploits. Mechanisms whose
  mean-score variance is not derived (`Mechanism.mean_score_variance` is None) are left out.

Only mechanisms that can be built for the question are candidates: each declares its limits
(ε range, domain size, integer range) through `Mechanism.misfit`, so `auto` never picks one
that its constructor would refuse.
"""

from __future__ import annotations

from typing import Any

from ..errors import SurveyError
from .asked_geometric import AskedGeometric
from .base import Mechanism, Misfit
from .binary_rr import BinaryRR
from .duchi import Duchi
from .geometric import Geometric
from .grr import GRR
from .hr import HR
from .hybrid import Hybrid
from .location import GeoExp
from .olh import OLH
from .ordinal_exp import OrdinalExp
from .piecewise import Piecewise
from .rr_designs import DESIGNS, refuse_not_private
from .set_choice import SET_MECHANISMS, choose_set_mechanism
from .ss import SubsetSelection
from .unary import OUE, SUE

MECHANISMS: dict[str, type[Mechanism]] = {
    cls.name: cls for cls in (BinaryRR, GRR, Geometric, OUE, SUE, OLH, HR, SubsetSelection,
                              OrdinalExp)
}

# Mechanisms over a designer's grid (location questions) are built from the grid, not from
# (k, ε): they are looked up by name but never offered by `auto` or planned per (k, ε).
GRID_MECHANISMS: dict[str, type[Mechanism]] = {GeoExp.name: GeoExp}
# SET_MECHANISMS (multiselect questions: sets of at most m options) are looked up by name too,
# and built and ranked per (k, m, ε) in set_choice.py, never for a single-answer question.
# Mechanisms only for questions with a "not asked" value (skip logic, shared/skip_logic.py):
# looked up by name, chosen by skip_logic.choose_mechanism, never by `auto` for a plain question.
SKIP_MECHANISMS: dict[str, type[Mechanism]] = {AskedGeometric.name: AskedGeometric}
# Mean mechanisms for numbers over an answer grid (issue 41: duchi, piecewise, hybrid), for the
# `decimal` question type that no survey has yet (question_types = {"decimal"}): looked up by
# name, never offered by `auto` for an existing type, and kept out of MECHANISMS until that type
# exists, because every suite over MECHANISMS builds surveys, crosstabs and per-option
# estimates of the existing types. Their own choice, among them and geometric on the same grid,
# is numeric_auto.choose_mean_mechanism.
MEAN_MECHANISMS: dict[str, type[Mechanism]] = {cls.name: cls for cls in (Duchi, Piecewise, Hybrid)}

REPORT_SIZE_LIMIT = 1024  # bytes of JSON per report that `auto` accepts


def mechanism_class(name: str, where: str = "mechanism") -> type[Mechanism]:
    """The mechanism class registered under `name` (or a named design, shared/mechanisms/
    rr_designs.py: never chosen by `auto`); SurveyError if there is none, or the design is
    known but not differentially private."""
    for registry in (MECHANISMS, DESIGNS, GRID_MECHANISMS, SET_MECHANISMS, SKIP_MECHANISMS,
                     MEAN_MECHANISMS):
        if name in registry:
            return registry[name]
    refuse_not_private(name, where)
    known = ", ".join(sorted(MECHANISMS) + sorted(DESIGNS) + sorted(SET_MECHANISMS))
    raise SurveyError(where, f"unknown mechanism {name!r}; expected auto or one of: {known}")


def candidates(question_type: str, k: int, epsilon: float,
               size_limit: int = REPORT_SIZE_LIMIT, low: int = 0,
               layered: bool = False) -> list[tuple[float, str]]:
    """(worst-case variance with one report, name) of every mechanism that fits, best first.

    A mechanism fits when it takes the question type, can be built for k answers (integers
    from `low`) at ε (`misfit`), its report stays under `size_limit`, and (`layered`: the
    question has RAPPOR's instantaneous layer) it can carry that layer. The variance is
    `selection_variance`: `average_variance`, or of the mean score for ordinal questions
    (mechanisms without a derived mean-score variance are then left out).
    """
    found = []
    for name, cls in MECHANISMS.items():
        if (question_type in cls.question_types and cls.misfit(k, epsilon, low) is None
                and cls.report_bytes(k, epsilon) <= size_limit
                and (cls.supports_instantaneous_layer or not layered)):
            variance = selection_variance(cls, question_type, k, epsilon)
            if variance is not None:
                found.append((variance, name))
    return sorted(found)


def misfits(question_type: str, k: int, epsilon: float,
            low: int = 0) -> dict[str, Misfit]:
    """Why each mechanism of this question type cannot be built for (k, low, ε)."""
    found = {}
    for name, cls in MECHANISMS.items():
        if question_type in cls.question_types:
            misfit = cls.misfit(k, epsilon, low)
            if misfit is not None:
                found[name] = misfit
    return found


def selection_variance(cls: type[Mechanism], question_type: str, k: int,
                       epsilon: float) -> float | None:
    """What `auto` minimizes (see the module docstring): `average_variance`, or for ordinal
    questions the mean score's worst-case variance (None: not derived for `cls`)."""
    if question_type == "ordinal":
        return cls.mean_score_variance(k, epsilon)
    return cls.average_variance(k, epsilon)


def margin_variance(cls: type[Mechanism], question_type: str, k: int,
                    epsilon: float) -> float | None:
    """One-report variance a margin of error must cover: one option's estimate, worst case
    over options and truth (ordinal: the mean score's; integer: the mean's)."""
    if question_type == "ordinal":
        return cls.mean_score_variance(k, epsilon)
    return cls.worst_case_variance(k, epsilon)


def choose_mechanism(question: Any, size_limit: int = REPORT_SIZE_LIMIT,
                     where: str | None = None) -> tuple[str, str]:
    """(name, reason) of the mechanism `auto` picks for a question; SurveyError naming the
    field (`where`.epsilon, .options, .min/max or .mechanism) when none fits."""
    where = where or f"questions.{question.id}"
    if question.type == "multiselect":
        return choose_set_mechanism(question, size_limit, where)
    low = getattr(question, "min", None) or 0
    layered = getattr(question, "instantaneous_epsilon", None) is not None
    ranked = candidates(question.type, question.k, question.epsilon, size_limit, low, layered)
    if not ranked:
        refused = misfits(question.type, question.k, question.epsilon, low)
        of_type = [name for name, cls in MECHANISMS.items()
                   if question.type in cls.question_types]
        if refused and len(refused) == len(of_type):  # none of this type can be built
            fields = {m.field for m in refused.values()}
            field = ("epsilon" if fields == {"epsilon"} else
                     domain_field(question.type) if fields == {"domain"} else "mechanism")
            raise SurveyError(f"{where}.{field}",
                              f"no mechanism can be built ({describe_misfits(refused)})")
        if layered:
            raise SurveyError(f"{where}.instantaneous_epsilon",
                              f"no mechanism for a {question.type} question carries an "
                              f"instantaneous layer (it needs a symmetric randomized response)")
        raise SurveyError(f"{where}.mechanism",
                          f"no mechanism fits a {question.type} question with k={question.k} "
                          f"at epsilon={question.epsilon:g} under the {size_limit}-byte "
                          f"report limit")
    best_var, best = ranked[0]
    others = ", ".join(f"{name} {var:.4g}" for var, name in ranked[1:])
    what = {"ordinal": "of the mean score (1..k)", "integer": "of the mean"}.get(
        question.type, "averaged over options")
    reason = (f"auto: lowest worst-case variance {what} with one report at k={question.k}, "
              f"epsilon={question.epsilon:g}: {best} {best_var:.4g}"
              + (f" (vs {others})" if others else "")
              + f"; reports under {size_limit} bytes")
    return best, reason


def describe_misfits(refused: dict[str, Misfit]) -> str:
    """'grr, oue: must lie between ...; ordinal_exp: at most ...': mechanisms by problem."""
    by_problem: dict[str, list[str]] = {}
    for name, misfit in refused.items():
        by_problem.setdefault(misfit.problem, []).append(name)
    return "; ".join(f"{', '.join(names)}: {problem}" for problem, names in by_problem.items())


def domain_field(question_type: str) -> str:
    """The survey field that sets a question's domain (what a "domain" misfit names)."""
    from ..question_types import unit_for

    return unit_for(question_type).domain_field


def mechanism_for(question: Any) -> Mechanism:
    """The mechanism object for a question (its ε proven on construction; a disclosed
    question gets the identity channel, which claims no ε)."""
    if getattr(question, "disclosed", False):
        from .disclosed import Disclosed

        return Disclosed.from_question(question)
    if getattr(question, "not_asked", False):  # skip logic: options + "not asked"
        from ..among_asked import not_asked_mechanism

        return not_asked_mechanism(question)
    mechanism = mechanism_class(question.mechanism).from_question(question)
    instantaneous = getattr(question, "instantaneous_epsilon", None)
    if instantaneous is not None:  # RAPPOR's second layer, for longitudinal surveys
        from .longitudinal import Longitudinal

        return Longitudinal(mechanism, instantaneous)
    return mechanism


__all__ = [
    "DESIGNS",
    "MEAN_MECHANISMS",
    "MECHANISMS",
    "SET_MECHANISMS",
    "Mechanism",
    "Misfit",
    "candidates",
    "choose_mechanism",
    "describe_misfits",
    "domain_field",
    "margin_variance",
    "mechanism_class",
    "mechanism_for",
    "misfits",
    "selection_variance",
]
