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

The criterion and the choice are the question type's unit's (shared/question_types:
`selection_variance`, `margin_variance`, `choose_mechanism`); the registries and the ranking
mechanics are in registry.py, which the units import. The functions here answer by a type's
name, for callers that have a name rather than a question (the planner, the tests).
"""

from __future__ import annotations

from typing import Any

from ..question_types import unit_for
from .base import Mechanism, Misfit
from .registry import (
    DESIGNS,
    DISTRIBUTION_MECHANISMS,
    GRID_MECHANISMS,
    MEAN_MECHANISMS,
    MECHANISMS,
    REPORT_SIZE_LIMIT,
    SET_MECHANISMS,
    SKIP_MECHANISMS,
    describe_misfits,
    mechanism_class,
    mechanism_for,
    misfits,
    rank,
)
from .set_choice import choose_set_mechanism


def candidates(question_type: str, k: int, epsilon: float,
               size_limit: int = REPORT_SIZE_LIMIT, low: int = 0,
               layered: bool = False) -> list[tuple[float, str]]:
    """(worst-case variance with one report, name) of every mechanism that fits, best first.

    A mechanism fits when it takes the question type, can be built for k answers (integers
    from `low`) at ε (`misfit`), its report stays under `size_limit`, and (`layered`: the
    question has RAPPOR's instantaneous layer) it can carry that layer. The variance is the
    type's `selection_variance`: `average_variance`, or of the mean score for ordinal
    questions (mechanisms without a derived mean-score variance are then left out).
    """
    return unit_for(question_type).candidates(k, epsilon, size_limit, low, layered)


def selection_variance(cls: type[Mechanism], question_type: str, k: int,
                       epsilon: float) -> float | None:
    """What `auto` minimizes (see the module docstring): `average_variance`, or for ordinal
    questions the mean score's worst-case variance (None: not derived for `cls`)."""
    return unit_for(question_type).selection_variance(cls, k, epsilon)


def margin_variance(cls: type[Mechanism], question_type: str, k: int,
                    epsilon: float) -> float | None:
    """One-report variance a margin of error must cover: one option's estimate, worst case
    over options and truth (ordinal: the mean score's; integer: the mean's)."""
    return unit_for(question_type).margin_variance(cls, k, epsilon)


def choose_mechanism(question: Any, size_limit: int = REPORT_SIZE_LIMIT,
                     where: str | None = None) -> tuple[str, str]:
    """(name, reason) of the mechanism `auto` picks for a question (or a probe with its id,
    type, k, ε and min); SurveyError naming the field (`where`.epsilon, .options, .min/max
    or .mechanism) when none fits."""
    return unit_for(question.type).choose_mechanism(
        question, size_limit, where or f"questions.{question.id}")


def domain_field(question_type: str) -> str:
    """The survey field that sets a question's domain (what a "domain" misfit names)."""
    return unit_for(question_type).domain_field


__all__ = [
    "DESIGNS",
    "DISTRIBUTION_MECHANISMS",
    "GRID_MECHANISMS",
    "MEAN_MECHANISMS",
    "MECHANISMS",
    "REPORT_SIZE_LIMIT",
    "SET_MECHANISMS",
    "SKIP_MECHANISMS",
    "Mechanism",
    "Misfit",
    "candidates",
    "choose_mechanism",
    "choose_set_mechanism",
    "describe_misfits",
    "domain_field",
    "margin_variance",
    "mechanism_class",
    "mechanism_for",
    "misfits",
    "rank",
    "selection_variance",
]
