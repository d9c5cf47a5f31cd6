"""Rational arithmetic behind every privacy claim: certified bounds on e^ε and channel ratios.

Floats never decide whether a mechanism is private. A claimed ε (a float, hence an exact dyadic
rational) is turned into a certified rational lower bound on e^ε, and a mechanism's worst-case
likelihood ratio, computed from its channel in `Fraction`s, must not exceed it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from .errors import PrivacyCheckError

_PRECISION_BITS = 192
# A rational standing in for e^ε may sit this far (relatively) below it: the channel is then a
# hair more private than claimed (never less), and its fractions stay short.
_ROUNDING = Fraction(1, 2**32)


def exp_lower(x: Fraction) -> Fraction:
    """A rational that is <= e^x, within about 2^-180 relative, for x >= 0.

    Partial sums of the Taylor series with every term rounded down are lower bounds.
    """
    if x < 0:
        raise PrivacyCheckError("exp_lower needs x >= 0")
    scale = 1 << _PRECISION_BITS
    x_fixed = (x.numerator * scale) // x.denominator
    term = scale
    total = scale
    n = 1
    while term:
        term = (term * x_fixed) // (scale * n)
        total += term
        n += 1
    return Fraction(total, scale)


def simplest_between(lo: Fraction, hi: Fraction) -> Fraction:
    """The rational with the smallest denominator in [lo, hi] (continued fractions)."""
    if lo > hi:
        raise PrivacyCheckError("simplest_between: empty interval")
    if lo <= 0 <= hi:
        return Fraction(0)
    if hi < 0:
        return -simplest_between(-hi, -lo)
    floor_lo = lo.numerator // lo.denominator
    if Fraction(floor_lo) == lo:
        return Fraction(floor_lo)
    if floor_lo + 1 <= hi:
        return Fraction(floor_lo + 1)
    # lo and hi share an integer part: recurse on the reciprocals of the fractional parts.
    inner = simplest_between(1 / (hi - floor_lo), 1 / (lo - floor_lo))
    return floor_lo + 1 / inner


@lru_cache(maxsize=1024)  # pure in ε, and every mechanism build and plan asks for it
def rational_exp_floor(epsilon: float) -> Fraction:
    """A short rational r with r <= e^ε: it replaces the irrational e^ε in a channel.

    For ε = ln 3 (as a float) this is exactly 3, so GRR with k = 100 gets p = 3/102.
    """
    bound = exp_lower(Fraction(epsilon))
    return simplest_between(bound * (1 - _ROUNDING), bound)


def rational_floor(value: float) -> Fraction:
    """A short rational <= value (within 2^-32 relative), for ε used in log-domain samplers."""
    exact = Fraction(value)
    return simplest_between(exact * (1 - _ROUNDING), exact)


@dataclass(frozen=True)
class PrivacyLoss:
    """A mechanism's exact worst-case privacy loss.

    Held either as the worst likelihood ratio P[y|x]/P[y|x'] (finite or closed-form channels) or,
    for samplers that work in the log domain (discrete Laplace), as the rational log-ratio itself.
    """

    ratio: Fraction | None = None
    log: Fraction | None = None

    def __post_init__(self) -> None:
        if (self.ratio is None) == (self.log is None):
            raise PrivacyCheckError("PrivacyLoss holds exactly one of ratio and log")

    def within(self, epsilon: float) -> bool:
        """Exactly decide loss <= ε."""
        if self.log is not None:
            return self.log <= Fraction(epsilon)
        assert self.ratio is not None
        if self.ratio <= 1:
            return True
        return self.ratio <= exp_lower(Fraction(epsilon))

    def __float__(self) -> float:
        if self.log is not None:
            return float(self.log)
        assert self.ratio is not None
        return math.log(self.ratio.numerator) - math.log(self.ratio.denominator)

    def describe(self) -> str:
        if self.log is not None:
            return f"{self.log} (log-ratio)"
        return f"ln({self.ratio})"


def channel_ratio(channel: Sequence[Sequence[Fraction]]) -> Fraction | None:
    """Worst ratio max_y max_{x,x'} P[y|x] / P[y|x'] of a finite channel; None if unbounded.

    `channel[x][y]` is P[report y | answer x]. Each row must be a probability distribution.
    """
    if not channel:
        raise PrivacyCheckError("empty channel")
    width = len(channel[0])
    for x, row in enumerate(channel):
        if len(row) != width:
            raise PrivacyCheckError(f"channel row {x} has {len(row)} outputs, expected {width}")
        if any(not isinstance(p, Fraction) for p in row):
            raise PrivacyCheckError(f"channel row {x} is not exact: use Fraction probabilities")
        if any(p < 0 or p > 1 for p in row) or sum(row) != 1:
            raise PrivacyCheckError(f"channel row {x} is not a probability distribution")
    worst = Fraction(1)
    for y in range(width):
        column = [row[y] for row in channel]
        high, low = max(column), min(column)
        if high == 0:
            continue
        if low == 0:
            return None
        worst = max(worst, high / low)
    return worst


def certify(loss: PrivacyLoss | WorstOfLosses | None, epsilon: float,
            name: str) -> PrivacyLoss | WorstOfLosses:
    """Raise PrivacyCheckError unless `loss` is finite and within the claimed ε."""
    if loss is None:
        raise PrivacyCheckError(f"{name}: some report is impossible under one answer and possible "
                                f"under another, so its privacy loss is unbounded")
    if not loss.within(epsilon):
        raise PrivacyCheckError(
            f"{name}: the channel's exact privacy loss {float(loss):.12g} = {loss.describe()} "
            f"exceeds the claimed epsilon {epsilon!r}",
            {"claimed": epsilon, "realized": float(loss)},
        )
    return loss


@dataclass(frozen=True)
class WorstOfLosses:
    """The exact worst-case privacy loss of a channel stated as the largest of several terms,
    each a rational ratio times e^(a rational log): ratio·e^log. A report pair whose parts are
    randomized independently has, for each pair of answers, the product of its parts' ratios;
    the worst case over pairs of answers is the largest such product (asked_geometric.py).

    `within(ε)` decides exactly (never with floats) that every term is <= e^ε: log <= ε and
    ratio <= a certified lower bound of e^(ε - log)."""

    terms: tuple[tuple[Fraction, Fraction], ...]  # (ratio, log)

    def within(self, epsilon: float) -> bool:
        eps = Fraction(epsilon)
        for ratio, log in self.terms:
            if log > eps:
                return False
            if ratio > 1 and ratio > exp_lower(eps - log):
                return False
        return True

    def __float__(self) -> float:
        return max(math.log(r.numerator) - math.log(r.denominator) + float(log)
                   for r, log in self.terms)

    def describe(self) -> str:
        return "max(" + ", ".join(f"ln({r}) + {log}" for r, log in self.terms) + ")"


def rational_exp_floor_of(x: Fraction) -> Fraction:
    """`rational_exp_floor` of an exact rational x >= 0: a short rational r <= e^x."""
    bound = exp_lower(x)
    return simplest_between(bound * (1 - _ROUNDING), bound)
