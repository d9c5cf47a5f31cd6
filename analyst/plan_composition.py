"""What answering a survey costs a respondent in total: over its questions, over k repeats (a
panel), and for a household answering on several devices. `ldpsurvey plan SURVEY_FILE` prints it.

Totals come from shared/composition.py: the plain sum (δ = 0) and the advanced composition
bound at δ (Dwork, Rothblum & Vadhan; heterogeneous form), the better of the two marked.
Group privacy (Dwork & Roth, Theorem 2.2): an ε-DP release is (g·ε)-DP for a group of g people.
A household answering the same survey on g devices about something they share (an address, a
household income) sends g reports about one secret: the household as a whole is protected at
g times one device's total, which is also what g-fold sequential composition gives.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..shared.composition import DEFAULT_DELTA, Composition, compose, group_epsilon
from ..shared.errors import PlanError
from ..shared.survey import Survey

DEFAULT_REPEATS = 12  # a monthly panel for a year
DEFAULT_HOUSEHOLD = 2


@dataclass(frozen=True)
class CompositionPlan:
    survey: str
    questions: Composition       # one respondent, every question once
    repeated: Composition        # the survey answered `repeats` times
    repeats: int
    household: int
    household_epsilon: float     # group privacy of one answering of the survey
    household_repeated: float    # ... and of `repeats` answerings (their better bound)


def plan_composition(survey: Survey, repeats: int = DEFAULT_REPEATS,
                     household: int = DEFAULT_HOUSEHOLD,
                     delta: float = DEFAULT_DELTA) -> CompositionPlan:
    """Totals over the survey's questions, over `repeats` answerings, and for a household."""
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise PlanError(f"--repeat must be a whole number >= 1, got {repeats!r}")
    if isinstance(household, bool) or not isinstance(household, int) or household < 1:
        raise PlanError(f"--household must be a whole number >= 1, got {household!r}")
    epsilons = [q.epsilon for q in survey.questions]
    once = compose(epsilons, delta)
    many = compose(epsilons * repeats, delta)
    return CompositionPlan(survey.id, once, many, repeats, household,
                           group_epsilon(once.best_epsilon, household),
                           group_epsilon(many.best_epsilon, household))


def _both(c: Composition) -> str:
    mark = {"basic": ("  <- better", ""), "advanced": ("", "  <- better")}[c.best]
    return (f"plain sum ε = {c.basic:.4g}{mark[0]}; advanced bound ε = {c.advanced:.4g} "
            f"at δ = {c.delta:g}{mark[1]}")


def format_composition(p: CompositionPlan) -> str:
    """Plain-text lines for `plan`."""
    once, many = p.questions, p.repeated
    delta_note = (f" (with probability 1 - {once.delta:g} that the bound holds)"
                  if many.best == "advanced" or once.best == "advanced" else "")
    return "\n".join([
        "privacy per respondent (composition):",
        f"  all {once.k} questions once: {_both(once)}",
        f"  the survey answered {p.repeats} times (--repeat): {_both(many)}",
        f"  a household answering on {p.household} devices (--household), about what they "
        f"share: ε = {p.household_epsilon:.4g} per answering, {p.household_repeated:.4g} over "
        f"{p.repeats} (group privacy: {p.household} x one device's total){delta_note}",
    ])
