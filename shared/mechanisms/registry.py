"""The mechanisms by name, building a question's mechanism, and ranking them for `auto`.

What a question's type decides (which mechanisms fit it, the criterion `auto` minimizes, its
"not asked" and disclosed variants) its unit says (shared/question_types); this module holds
the generic mechanics every unit uses: the registries, `mechanism_class`, `mechanism_for` and
`rank`. It imports no unit and nothing that imports the units, so the units may import it
(shared/mechanisms/__init__.py, which answers by a type's name, asks the units).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import SurveyError
from .asked_geometric import AskedGeometric
from .asked_grid import AskedGrid
from .base import Mechanism, Misfit
from .binary_rr import BinaryRR
from .duchi import Duchi
from .geometric import Geometric
from .grr import GRR
from .hr import HR
from .hybrid import Hybrid
from .location import GeoExp
from .numeric_pair import MeanAndDistribution
from .olh import OLH
from .one_bit_mean import OneBitMean
from .ordinal_exp import OrdinalExp
from .piecewise import Piecewise
from .rr_designs import DESIGNS, refuse_not_private
from .set_choice import SET_MECHANISMS
from .square_wave import SquareWave
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
# looked up by name, chosen by the unit's `choose_not_asked_mechanism`, never by `auto` for a
# plain question.
SKIP_MECHANISMS: dict[str, type[Mechanism]] = {AskedGeometric.name: AskedGeometric,
                                                AskedGrid.name: AskedGrid}
# Mean mechanisms for numbers over an answer grid (issue 41: duchi, piecewise, hybrid), for the
# `decimal` question type (question_types = {"decimal"}, shared/question_types/decimal.py):
# looked up by name, never offered by `rank` for another type, and kept out of MECHANISMS,
# because every suite over MECHANISMS builds surveys, crosstabs and per-option estimates of the
# option types. Their choice, among them and geometric on the same grid, is the decimal unit's
# (numeric_auto.choose_mean_mechanism).
# one_bit_mean (Ding et al.'s 1BitMean with α-point rounding, for a series) is looked up by name
# with them; numeric_auto does not rank it (its round's variance is duchi's).
MEAN_MECHANISMS: dict[str, type[Mechanism]] = {cls.name: cls for cls in (Duchi, Piecewise, Hybrid,
                                                                          OneBitMean)}
# The distribution mechanism for numbers (issue 41: square_wave, with EMS and quantiles in
# shared/numeric/), for the `decimal` type too, kept apart from MECHANISMS for the same reason.
DISTRIBUTION_MECHANISMS: dict[str, type[Mechanism]] = {SquareWave.name: SquareWave}
# Both at once (a decimal's estimate = ["mean", "distribution"]): one answer sent twice, its ε
# split between a mean mechanism and square_wave (numeric_pair.py); built by the decimal unit.
PAIR_MECHANISMS: dict[str, type[Mechanism]] = {MeanAndDistribution.name: MeanAndDistribution}

REPORT_SIZE_LIMIT = 1024  # bytes of JSON per report that `auto` accepts


def mechanism_class(name: str, where: str = "mechanism") -> type[Mechanism]:
    """The mechanism class registered under `name` (or a named design, shared/mechanisms/
    rr_designs.py: never chosen by `auto`); SurveyError if there is none, or the design is
    known but not differentially private."""
    for registry in (MECHANISMS, DESIGNS, GRID_MECHANISMS, SET_MECHANISMS, SKIP_MECHANISMS,
                     MEAN_MECHANISMS, DISTRIBUTION_MECHANISMS, PAIR_MECHANISMS):
        if name in registry:
            return registry[name]
    refuse_not_private(name, where)
    known = ", ".join(sorted(MECHANISMS) + sorted(DESIGNS) + sorted(SET_MECHANISMS))
    raise SurveyError(where, f"unknown mechanism {name!r}; expected auto or one of: {known}")


def rank(question_type: str, k: int, epsilon: float, size_limit: int, low: int,
         layered: bool, variance: Callable[[type[Mechanism], int, float], float | None]
         ) -> list[tuple[float, str]]:
    """(variance, name) of every registered mechanism that fits, best first: it takes the
    question type, can be built for k answers (integers from `low`) at ε (`misfit`), its
    report stays under `size_limit`, it can carry RAPPOR's instantaneous layer if `layered`,
    and `variance` (the unit's criterion) is derived for it (not None)."""
    found = []
    for name, cls in MECHANISMS.items():
        if (question_type in cls.question_types and cls.misfit(k, epsilon, low) is None
                and cls.report_bytes(k, epsilon) <= size_limit
                and (cls.supports_instantaneous_layer or not layered)):
            value = variance(cls, k, epsilon)
            if value is not None:
                found.append((value, name))
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


def describe_misfits(refused: dict[str, Misfit]) -> str:
    """'grr, oue: must lie between ...; ordinal_exp: at most ...': mechanisms by problem."""
    by_problem: dict[str, list[str]] = {}
    for name, misfit in refused.items():
        by_problem.setdefault(misfit.problem, []).append(name)
    return "; ".join(f"{', '.join(names)}: {problem}" for problem, names in by_problem.items())


def mechanism_for(question: Any) -> Mechanism:
    """The mechanism object for a question (its ε proven on construction; a disclosed
    question gets its unit's identity channel, which claims no ε; a question with a "not
    asked" value or special values its unit's mechanism over the options and those values)."""
    if getattr(question, "disclosed", False):
        return question.unit.disclosed_mechanism(question)
    if getattr(question, "not_asked", False) or getattr(question, "special", None):
        return question.unit.not_asked_mechanism(question)  # options + special + "not asked"
    unit = getattr(question, "unit", None)
    mechanism = None if unit is None else unit.plain_mechanism(question)
    if mechanism is None:
        mechanism = mechanism_class(question.mechanism).from_question(question)
    instantaneous = getattr(question, "instantaneous_epsilon", None)
    if instantaneous is not None:  # RAPPOR's second layer, for longitudinal surveys
        from .longitudinal import Longitudinal

        return Longitudinal(mechanism, instantaneous)
    return mechanism
