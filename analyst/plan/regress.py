"""`ldpsurvey plan --regress`: respondents needed to detect an odds ratio with 80% power.

Asymptotic (Wald test) formula for a binary covariate X (a share `exposed` has X = 1) and a
yes/no outcome whose reports pass through a channel P(report yes | Y = y) = a_y. In group x the
outcome's log-odds η_x has per-respondent Fisher information from one report

    J_x = (Δ μ_x (1 - μ_x))² / (π_x (1 - π_x)),   π_x = a_0 + Δ μ_x,  Δ = a_1 - a_0,

so the log odds ratio β = η_1 - η_0 has variance (1/(ρ J_1) + 1/((1 - ρ) J_0)) / n, and the
two-sided test at level α has power 1 - β_II when n = (z_{1-α/2} + z_{1-β_II})² · that / β².
With a_0 = 0, a_1 = 1 (true answers) J_x = μ_x (1 - μ_x), the textbook formula. A simulation
test (tests/analyst/test_plan_regress.py) checks the power at the planned n.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

from ldpsurvey.shared.errors import PlanError


@dataclass(frozen=True)
class RegressPlan:
    """Respondents for a target odds ratio, through the channel and on true answers."""

    odds_ratio: float
    baseline: float
    exposed: float
    power: float
    alpha: float
    n: int
    n_true_answers: int
    se_one: float  # standard error of the log odds ratio with one respondent

    def describe(self) -> str:
        return (f"to detect an odds ratio of {self.odds_ratio:g} (outcome {self.baseline:.0%} "
                f"among the unexposed, {self.exposed:.0%} exposed) with {self.power:.0%} power "
                f"at two-sided α = {self.alpha:g}: {self.n:,} respondents "
                f"({self.n_true_answers:,} if the outcome were asked directly; "
                f"{self.n / self.n_true_answers:.1f}x for privacy). Asymptotic Wald formula.")


def information(mu: float, a0: float, a1: float) -> float:
    """Per-report Fisher information about the log-odds at mean μ through the channel."""
    delta = a1 - a0
    pi = a0 + delta * mu
    return (delta * mu * (1 - mu)) ** 2 / (pi * (1 - pi))


def plan_regress(a0: float, a1: float, *, odds_ratio: float, baseline: float = 0.2,
                 exposed: float = 0.5, power: float = 0.8, alpha: float = 0.05) -> RegressPlan:
    """Respondents needed (see the module docstring)."""
    if not (odds_ratio > 0 and odds_ratio != 1 and math.isfinite(odds_ratio)):
        raise PlanError("--odds-ratio must be a positive number other than 1")
    for name, value in (("baseline", baseline), ("exposed", exposed), ("power", power),
                        ("alpha", alpha)):
        if not 0 < value < 1:
            raise PlanError(f"--{name} must lie strictly between 0 and 1")
    if not 0 <= a0 < a1 <= 1 and not 0 <= a1 < a0 <= 1:
        raise PlanError("the outcome's channel does not depend on the answer")
    beta = math.log(odds_ratio)
    eta0 = math.log(baseline / (1 - baseline))
    mu0, mu1 = baseline, 1 / (1 + math.exp(-(eta0 + beta)))
    z = NormalDist().inv_cdf(1 - alpha / 2) + NormalDist().inv_cdf(power)

    def n_for(lo: float, hi: float) -> tuple[int, float]:
        var = 1 / (exposed * information(mu1, lo, hi)) + 1 / ((1 - exposed)
                                                              * information(mu0, lo, hi))
        return math.ceil(z * z * var / (beta * beta)), math.sqrt(var)

    n, se = n_for(a0, a1)
    n_true, _ = n_for(0.0, 1.0)
    return RegressPlan(odds_ratio, baseline, exposed, power, alpha, n, n_true, se)
