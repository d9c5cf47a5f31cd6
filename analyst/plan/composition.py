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

from ldpsurvey.shared.composition import DEFAULT_DELTA, Composition, compose, group_epsilon
from ldpsurvey.shared.errors import PlanError
from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.wording import epsilon_text

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
    epsilons = [q.epsilon for q in survey.questions if not q.disclosed]  # disclosed: no ε
    once = compose(epsilons, delta)
    many = compose(epsilons * repeats, delta)
    return CompositionPlan(survey.id, once, many, repeats, household,
                           group_epsilon(once.best_epsilon, household),
                           group_epsilon(many.best_epsilon, household))


def _total(c: Composition, advanced: bool) -> str:
    """The plain sum; the advanced bound beside it when asked (`advanced`) or when it is the
    smaller, i.e. when it changes the answer."""
    text = f"ε = {epsilon_text(c.basic)} (plain sum)"
    if c.best == "advanced":
        return (f"{text}; smaller by the advanced composition bound: ε = "
                f"{epsilon_text(c.advanced)} at δ = {c.delta:g}")
    if advanced:
        return f"{text}; the advanced bound at δ = {c.delta:g} is larger here: ε = " \
               f"{epsilon_text(c.advanced)}"
    return text


def format_composition(p: CompositionPlan, *, repeat: bool = False, household: bool = False,
                       advanced: bool = False) -> str:
    """Plain-text lines for `plan`: only what was asked (`repeat`: --repeat, `household`:
    --household, `advanced`: --delta), and the advanced bound of one answering where it is
    smaller than the plain sum. Empty when there is nothing to add to the total."""
    once, many = p.questions, p.repeated
    if not (repeat or household or advanced):
        if once.best != "advanced":
            return ""
        return (f"  (over its {once.k} reports the advanced composition bound is smaller: "
                f"ε = {epsilon_text(once.advanced)} at δ = {once.delta:g}, a bound that holds "
                f"with probability 1 - δ; devices count it under --budget-rule advanced)")
    lines = ["privacy per respondent (composition):",
             f"  {_questions(once.k)} once: {_total(once, advanced)}"]
    if repeat:
        lines.append(f"  the survey answered {p.repeats} times: {_total(many, advanced)}")
    if household:
        over = (f", {epsilon_text(p.household_repeated)} over {p.repeats} answerings"
                if repeat else "")
        lines.append(f"  a household answering on {p.household} devices, about what they "
                     f"share: ε = {epsilon_text(p.household_epsilon)} per answering{over} "
                     f"(group privacy: {p.household} x one device's total)")
    if once.best == "advanced" or (repeat and many.best == "advanced"):
        lines.append(f"  (an advanced bound holds with probability 1 - {once.delta:g})")
    return "\n".join(lines)


def _questions(k: int) -> str:
    return {0: "no randomized question", 1: "its one randomized question"}.get(
        k, f"all {k} randomized questions")
