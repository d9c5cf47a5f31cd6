"""Exact samplers over an injectable integer random source; the default is the OS CSPRNG.

Every report that leaves a device is drawn here with `SECURE` (`secrets.randbelow`). A test may
inject any object with a `randbelow(n)` method to make a draw deterministic. Samplers use only
integer draws (no floating point), following Canonne, Kamath and Steinke (2020).

Bulk draws (`randbelow_many`, `randbelow_each`) mean exactly the same as that many sequential
`randbelow` calls, so an injected source sees the same requests in the same order. For the OS
CSPRNG they read `os.urandom` in one go and reject per element with numpy (numpy only handles
those bytes: no numpy generator is involved): bitmap mechanisms draw k bits per report, and a
system call per bit was their bottleneck. The client's JS port (client/web/js/randomness.js)
requests the same draws.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Sequence
from fractions import Fraction
from typing import Protocol

import numpy as np

from .errors import PrivacyCheckError


class RandomSource(Protocol):
    """Uniform integers in [0, n)."""

    def randbelow(self, n: int) -> int: ...


class SystemSource:
    """The OS CSPRNG."""

    def randbelow(self, n: int) -> int:
        return secrets.randbelow(n)


SECURE: RandomSource = SystemSource()
_CANDIDATES = 3  # bulk rejection: candidates per element and round (each passes w.p. > 1/2)


def resolve(source: RandomSource | None) -> RandomSource:
    return SECURE if source is None else source


def randbelow_many(source: RandomSource, n: int, count: int) -> np.ndarray:
    """`count` uniform integers in [0, n): exactly `count` sequential `source.randbelow(n)`.

    A uint64 array when n < 2^64 (else an object array of Python ints).
    """
    return randbelow_each(source, np.full(count, n, dtype=np.uint64) if 0 < n < 2**64
                          else [n] * count)


def randbelow_each(source: RandomSource, bounds: Sequence[int] | np.ndarray) -> np.ndarray:
    """One uniform integer in [0, b) for each bound b, in order: exactly the sequential
    `source.randbelow(b)` calls. A uint64 array when every bound is < 2^64 (else object)."""
    bounds = np.asarray(bounds, dtype=np.uint64) if _fits_u64(bounds) else list(bounds)
    if isinstance(bounds, np.ndarray) and type(source) is SystemSource:
        return _urandom_below(bounds)
    draws = [source.randbelow(int(b)) for b in bounds]
    return np.array(draws, dtype=np.uint64 if isinstance(bounds, np.ndarray) else object)


def _fits_u64(bounds: Sequence[int] | np.ndarray) -> bool:
    if isinstance(bounds, np.ndarray) and bounds.dtype.kind in "iu" and bounds.itemsize <= 8:
        return not bounds.size or int(bounds.min()) > 0
    return all(0 < int(b) < 2**64 for b in bounds)


def _bit_lengths(bounds: np.ndarray) -> np.ndarray:
    """int(b).bit_length() per element (frexp is exact below 2^53)."""
    if bounds.size and int(bounds.max()) < 2**53:
        return np.frexp(bounds.astype(np.float64))[1].astype(np.uint64)
    return np.array([int(b).bit_length() for b in bounds], dtype=np.uint64)


def _urandom_below(bounds: np.ndarray) -> np.ndarray:
    """Uniform draws in [0, b) per element from os.urandom, by rejection: a candidate is the top
    bit_length(b) bits of a fresh 32- or 64-bit word, kept if < b (probability > 1/2).

    Each round reads `_CANDIDATES` independent candidates for every element still open and
    keeps the first that passes: the same law as redrawing one at a time, in fewer rounds.
    """
    bits = _bit_lengths(bounds)  # every bound >= 1 (`_fits_u64`)
    wide = bool(bounds.size) and int(bits.max()) > 32
    dtype, width = (np.uint64, 64) if wide else (np.uint32, 32)
    shift = (width - bits).astype(dtype)
    limit = bounds.astype(dtype)
    out = np.empty(bounds.size, dtype=np.uint64)
    todo = np.arange(bounds.size)
    while todo.size:
        raw = np.frombuffer(os.urandom(todo.size * _CANDIDATES * (width // 8)), dtype=dtype)
        values = raw.reshape(_CANDIDATES, todo.size) >> shift[todo]
        ok = values < limit[todo]
        first = ok.argmax(axis=0)  # the first candidate that passed (0 if none did)
        passed = ok[first, np.arange(todo.size)]
        out[todo[passed]] = values[first[passed], np.flatnonzero(passed)]
        todo = todo[~passed]
    return out


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


def draw_weighted(weights: Sequence[int], source: RandomSource) -> int:
    """The index i with probability exactly weights[i] / sum(weights) (non-negative integers,
    positive total): one draw u = randbelow(total), then the first i whose running sum
    exceeds u. The numeric mean mechanisms draw a report cell this way (the page's port
    requests the same draw)."""
    total = sum(weights)
    if total <= 0 or any(w < 0 for w in weights):
        raise PrivacyCheckError("draw_weighted needs non-negative weights with a positive total")
    u = source.randbelow(total)
    running = 0
    for index, weight in enumerate(weights):
        running += weight
        if u < running:
            return index
    raise AssertionError("unreachable: u < total")
