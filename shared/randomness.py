"""Exact samplers over an injectable integer random source; the default is the OS CSPRNG.

Every report that leaves a device is drawn here with `SECURE` (`secrets.randbelow`). A test may
inject any object with a `randbelow(n)` method to make a draw deterministic. Samplers use only
integer draws (no floating point), following Canonne, Kamath and Steinke (2020).
"""

from __future__ import annotations

import secrets
from fractions import Fraction
from typing import Protocol

from .errors import PrivacyCheckError


class RandomSource(Protocol):
    """Uniform integers in [0, n)."""

    def randbelow(self, n: int) -> int: ...


class SystemSource:
    """The OS CSPRNG."""

    def randbelow(self, n: int) -> int:
        return secrets.randbelow(n)


SECURE: RandomSource = SystemSource()


def resolve(source: RandomSource | None) -> RandomSource:
    return SECURE if source is None else source


def bernoulli(p: Fraction, source: RandomSource) -> bool:
    """True with probability exactly p (a rational in [0, 1])."""
    return source.randbelow(p.denominator) < p.numerator


def choice_except(k: int, excluded: int, source: RandomSource) -> int:
    """Uniform over [0, k) without `excluded`."""
    draw = source.randbelow(k - 1)
    return draw + 1 if draw >= excluded else draw


def bernoulli_exp_neg(gamma: Fraction, source: RandomSource) -> bool:
    """True with probability exactly exp(-gamma), gamma >= 0 rational (CKS 2020, Algorithm 1)."""
    if gamma < 0:
        raise PrivacyCheckError("bernoulli_exp_neg needs gamma >= 0")
    while gamma > 1:
        if not bernoulli_exp_neg(Fraction(1), source):
            return False
        gamma -= 1
    k = 1
    while bernoulli(gamma / k, source):
        k += 1
    return k % 2 == 1


def discrete_laplace(rate: Fraction, source: RandomSource) -> int:
    """An integer z with P[z] proportional to exp(-rate * |z|), rate > 0 (CKS 2020, Algorithm 2)."""
    if rate <= 0:
        raise PrivacyCheckError("discrete_laplace needs a rate > 0 (a rate of 0 hides nothing)")
    s, t = rate.numerator, rate.denominator  # scale t/s
    while True:
        u = source.randbelow(t)
        if not bernoulli_exp_neg(Fraction(u, t), source):
            continue
        v = 0
        while bernoulli_exp_neg(Fraction(1), source):
            v += 1
        y = (u + t * v) // s
        negative = source.randbelow(2) == 1
        if negative and y == 0:
            continue
        return -y if negative else y
