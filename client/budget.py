"""The respondent's ε ceiling, and which composition bound it is measured with.

`--max-epsilon` caps what one survey may cost (each question, and all its questions together);
`--max-total-epsilon` optionally caps everything this device has answered, this survey
included. A total is measured by the respondent's rule (`--budget-rule`):
- `basic` (the default): the plain sum of ε (sequential composition, δ = 0);
- `advanced`: the better of the plain sum and the advanced composition bound (Dwork, Rothblum
  & Vadhan) at δ = `--delta` (default 1e-6): k reports of ε compose to
  √(2k ln(1/δ))·ε + k·ε·(e^ε − 1) with probability 1 − δ of that bound holding. Both are valid
  bounds, so the ceiling is held against the smaller one (shared/composition.py).
A single question's ε is always compared as is: one report is its own ε under either rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ldpsurvey.shared.composition import DEFAULT_DELTA, Composition, compose
from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.two_server.guarantees import crosstabs_sent

from .errors import PolicyError

DEFAULT_MAX_EPSILON = 5.0
BUDGET_RULES = ("basic", "advanced")


@dataclass(frozen=True)
class Budget:
    """A respondent's ε ceilings and the rule totals are measured by."""

    max_epsilon: float = DEFAULT_MAX_EPSILON
    rule: str = "basic"
    delta: float = DEFAULT_DELTA
    max_total: float | None = None

    def __post_init__(self) -> None:
        if self.rule not in BUDGET_RULES:
            raise PolicyError(f"unknown budget rule {self.rule!r}; expected basic or advanced")
        compose([], self.delta)  # CompositionError for a δ outside (0, 1)

    def total(self, epsilons: Iterable[float]) -> tuple[float, Composition]:
        """The total these ε count for under the rule, and both bounds."""
        both = compose([e for e in epsilons if e > 0], self.delta)
        return (both.basic if self.rule == "basic" else both.best_epsilon), both

    def describe(self, both: Composition) -> str:
        if self.rule == "basic":
            return "plain sum"
        return (f"advanced bound at δ = {self.delta:g}" if both.best == "advanced"
                else "plain sum (smaller than the advanced bound here)")

    def check(self, survey: Survey, spent: Sequence[float] = ()) -> None:
        """Refuse a survey whose releases, total, or total with `spent` pass a ceiling, under
        each view of what answering it costs (`cost_views`)."""
        for costs in cost_views(survey):
            self._check_view(survey, costs, spent)

    def _check_view(self, survey: Survey, costs: Sequence[tuple[str, float]],
                    spent: Sequence[float]) -> None:
        for name, cost in costs:
            if cost > self.max_epsilon:
                raise PolicyError(f"refusing survey {survey.id!r}: question {name!r} costs ε = "
                                  f"{cost:g}, above your limit of {self.max_epsilon:g} "
                                  f"(--max-epsilon)", {"question": name, "epsilon": cost})
        epsilons = [cost for _, cost in costs]
        total, both = self.total(epsilons)
        if total > self.max_epsilon:
            raise PolicyError(f"refusing survey {survey.id!r}: answering it costs ε = "
                              f"{total:g} in total, above your limit of {self.max_epsilon:g} "
                              f"(--max-epsilon; measured as the {self.describe(both)})",
                              {"total_epsilon": total, "rule": self.rule})
        if self.max_total is not None:
            lifetime, both = self.total([*spent, *epsilons])
            if lifetime > self.max_total:
                raise PolicyError(
                    f"refusing survey {survey.id!r}: with what this device already answered "
                    f"the total would be ε = {lifetime:g}, above your limit of "
                    f"{self.max_total:g} (--max-total-epsilon; measured as the "
                    f"{self.describe(both)})",
                    {"lifetime_epsilon": lifetime, "rule": self.rule})


def cost_views(survey: Survey) -> list[list[tuple[str, float]]]:
    """What answering every question costs, release by release, under each view of who looks.

    The LDP mode: each question's ε (a crosstab is computed from the same reports and costs
    nothing more). The two-server mode, two views, each held to the ceilings: against one
    party, the central ε of every release: each question, and each declared crosstab (a noisy
    release of its own); if the servers collude, the local ε0 of each question randomized on the
    device (one without ε0 is exposed then, as the survey states). A large central ε cannot
    hide behind a small ε0, nor the other way round."""
    if survey.two_server is None:
        return [[(q.id, q.epsilon) for q in survey.questions]]
    central = [(q.id, float(q.central_epsilon or 0.0)) for q in survey.questions]
    central += [(spec.key, eps) for spec, eps in
                crosstabs_sent(survey, [q.id for q in survey.questions])]
    local = [(q.id, float(q.local_epsilon)) for q in survey.questions
             if q.local_epsilon is not None]
    return [central, local] if local else [central]


def as_budget(limit: float | Budget) -> Budget:
    """A bare --max-epsilon number is the default rule's budget."""
    return limit if isinstance(limit, Budget) else Budget(max_epsilon=limit)
