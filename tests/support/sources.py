"""Deterministic random sources for the exact samplers (tests only: never used for a report).

They implement the `RandomSource` protocol of `ldpsurvey.shared.randomness`: `randbelow(n)`.
"""

from __future__ import annotations

import random
from collections.abc import Iterable


class SeededSource:
    """Uniform integers from `random.Random(seed)`: reproducible draws for the exact samplers."""

    def __init__(self, seed: int) -> None:
        self._random = random.Random(seed)
        self.calls = 0

    def randbelow(self, n: int) -> int:
        if n <= 0:
            raise ValueError("randbelow needs n > 0")
        self.calls += 1
        return self._random.randrange(n)


class ScriptedSource:
    """Returns the given draws in order, checking each lies in [0, n): forces a sampler's path."""

    def __init__(self, draws: Iterable[int]) -> None:
        self._draws = list(draws)
        self.requests: list[int] = []

    def randbelow(self, n: int) -> int:
        if not self._draws:
            raise AssertionError(f"sampler asked for more draws than scripted (n={n})")
        value = self._draws.pop(0)
        if not 0 <= value < n:
            raise AssertionError(f"scripted draw {value} is outside [0, {n})")
        self.requests.append(n)
        return value

    @property
    def exhausted(self) -> bool:
        return not self._draws


class RecordingSource:
    """A `SeededSource` that records every (n, value) it hands out: the tape of a draw."""

    def __init__(self, seed: int) -> None:
        self.inner = SeededSource(seed)
        self.tape: list[tuple[int, int]] = []

    def randbelow(self, n: int) -> int:
        value = self.inner.randbelow(n)
        self.tape.append((n, value))
        return value
