"""Composition of ε across reports: the plain sum and the advanced bound, and which is smaller.

A respondent who answers many questions or a panel of surveys spends ε on each report. The
plain (sequential) bound is Σ ε_i with δ = 0. The advanced composition theorem (Dwork,
Rothblum & Vadhan 2010) trades a small δ' for a total that grows like √k instead of k:
k mechanisms each ε-DP compose to (√(2k ln(1/δ'))·ε + k·ε·(e^ε − 1), δ')-DP. For unequal ε_i
the same proof (Azuma's inequality on the privacy loss, whose step i is bounded by ε_i and has
mean at most ε_i(e^{ε_i} − 1)) gives √(2 ln(1/δ') Σ ε_i²) + Σ ε_i(e^{ε_i} − 1): this module
uses that form, which equals the theorem's closed form when all ε_i are equal.

Only pure (δ = 0) mechanisms are composed here: every ldpsurvey mechanism is pure ε-DP.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from .errors import CompositionError

DEFAULT_DELTA = 1e-6


@dataclass(frozen=True)
class Composition:
    """The total ε of a list of pure ε-DP reports, both ways, and which is the smaller."""

    epsilons: tuple[float, ...]
    basic: float                 # Σ ε_i, with δ = 0
    advanced: float              # the advanced bound, with δ = `delta`
    delta: float

    @property
    def k(self) -> int:
        return len(self.epsilons)

    @property
    def best(self) -> str:
        """'advanced' when it is strictly smaller than the plain sum, else 'basic'."""
        return "advanced" if self.advanced < self.basic else "basic"

    @property
    def best_epsilon(self) -> float:
        return min(self.basic, self.advanced)

    @property
    def best_delta(self) -> float:
        return self.delta if self.best == "advanced" else 0.0

    def to_dict(self) -> dict[str, float | int | str | None]:
        advanced = self.advanced if math.isfinite(self.advanced) else None  # JSON has no inf
        return {"k": self.k, "basic_epsilon": self.basic, "advanced_epsilon": advanced,
                "delta": self.delta, "best": self.best}


def _check(epsilons: tuple[float, ...], delta: float) -> None:
    for eps in epsilons:
        if isinstance(eps, bool) or not (
                isinstance(eps, int | float) and math.isfinite(eps) and eps >= 0):
            raise CompositionError(f"every ε must be a finite number >= 0, got {eps!r}")
    if not (isinstance(delta, int | float) and 0 < delta < 1):
        raise CompositionError(f"δ' must be in (0, 1), got {delta!r}")


# Above this, math.expm1 raises OverflowError (e^709.78 is the largest float).
MAX_EXP_ARGUMENT = 709.0


def advanced_epsilon(epsilons: Iterable[float], delta: float = DEFAULT_DELTA) -> float:
    """The advanced composition bound's ε' at δ' = `delta` (heterogeneous form, see module)."""
    eps = tuple(epsilons)
    _check(eps, delta)
    if not eps:
        return 0.0
    if max(eps) > MAX_EXP_ARGUMENT:  # e^ε overflows a float: the bound is useless, not an error
        return math.inf
    spread = math.sqrt(2.0 * math.log(1.0 / delta) * math.fsum(e * e for e in eps))
    drift = math.fsum(e * math.expm1(e) for e in eps)
    return spread + drift


def compose(epsilons: Iterable[float], delta: float = DEFAULT_DELTA) -> Composition:
    """Both totals for these reports' ε at δ' = `delta`."""
    eps = tuple(epsilons)
    _check(eps, delta)
    return Composition(tuple(float(e) for e in eps), math.fsum(eps),
                       advanced_epsilon(eps, delta), float(delta))


def repeated(epsilon: float, k: int, delta: float = DEFAULT_DELTA) -> Composition:
    """The totals for k reports of the same ε (a survey answered k times, k questions)."""
    if not (isinstance(k, int) and k >= 0):
        raise CompositionError(f"k must be a whole number >= 0, got {k!r}")
    return compose([epsilon] * k, delta)


def group_epsilon(epsilon: float, group_size: int) -> float:
    """Group privacy: an ε-DP release is (g·ε)-DP for a group of g people (a household)."""
    if not (isinstance(group_size, int) and group_size >= 1):
        raise CompositionError(f"a group has at least 1 member, got {group_size!r}")
    _check((epsilon,), 0.5)
    return group_size * epsilon
