"""Duchi, Jordan and Wainwright's one-dimensional mean mechanism (JASA 2018; as Algorithm 1 of
Wang et al., ICDE 2019), on an answer grid (numeric_grid.py).

For t in [-1, 1] the report is ±B, B = (e^ε + 1)/(e^ε - 1), with
    P[+B | t] = 1/2 + t·(e^ε - 1)/(2(e^ε + 1)).
E[report | t] = t and Var[report | t] = B² - t² (worst case B², at t = 0).

Exactness. e^ε is replaced by e = c/d = `rational_exp_floor(ε)` <= e^ε. For grid value j,
t_j = (2j - (k - 1))/(k - 1), and the two outputs (index 0: -B, index 1: +B) get the integer
weights (c + d)(k - 1) ∓ (2j - (k - 1))(c - d), whose total 2(c + d)(k - 1) is the same for every
j. The worst column ratio, found by listing every grid value, is c/d = e (output +B, answers max
and min), so the claim is proven at ε' = ln e <= ε. The output is already two values: no
discretization and no variance is lost beyond the rounding of e^ε (relative 2^-32).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np

from ..exact import PrivacyLoss, rational_exp_floor
from .numeric_grid import GridMean, grid_point


@dataclass(frozen=True)
class DuchiGrid:
    """Duchi's channel on a k-value grid for e = c/d (a rational standing for e^ε)."""

    c: int
    d: int
    k: int

    @property
    def bound(self) -> Fraction:
        """B = (e + 1)/(e - 1)."""
        return Fraction(self.c + self.d, self.c - self.d)

    @property
    def values(self) -> tuple[Fraction, Fraction]:
        return (-self.bound, self.bound)

    def weights(self, j: int) -> list[int]:
        base = (self.c + self.d) * (self.k - 1)
        tilt = (2 * j - (self.k - 1)) * (self.c - self.d)
        return [base - tilt, base + tilt]

    def loss(self) -> PrivacyLoss | None:
        """The exact worst column ratio over every grid value (every row has the same total,
        so the ratio of weights is the ratio of probabilities)."""
        lows = [None, None]
        highs = [0, 0]
        for j in range(self.k):
            for i, w in enumerate(self.weights(j)):
                if w < 0:
                    return None
                lows[i] = w if lows[i] is None else min(lows[i], w)  # type: ignore[type-var]
                highs[i] = max(highs[i], w)
        if any(low == 0 for low in lows):
            return None
        return PrivacyLoss(ratio=max(Fraction(h, lo) for h, lo in zip(highs, lows, strict=True)
                                     if lo is not None))

    def variance(self, j: int) -> Fraction:
        """B² - t_j²."""
        return self.bound**2 - grid_point(j, self.k) ** 2

    def variances(self) -> np.ndarray:
        t = np.linspace(-1.0, 1.0, self.k)
        return float(self.bound**2) - t * t


@lru_cache(maxsize=256)
def _grid(k: int, epsilon: float) -> DuchiGrid:
    e = rational_exp_floor(epsilon)
    return DuchiGrid(e.numerator, e.denominator, k)


class Duchi(GridMean):
    name = "duchi"
    summary = ("Duchi et al.'s mean mechanism: one of two values ±B, the larger more likely "
               "the larger the answer; unbiased mean.")

    def __init__(self, epsilon: float, labels: range, **kwargs: Any) -> None:
        super().__init__(epsilon, labels, **kwargs)
        self.grid = _grid(self.k, self.epsilon)
        self.exp_epsilon = Fraction(self.grid.c, self.grid.d)
        self.values = self.grid.values
        self._certify()

    @classmethod
    def output_count(cls, k: int, epsilon: float) -> int:
        return 2

    @classmethod
    def grid_variances(cls, k: int, epsilon: float) -> np.ndarray:
        return _grid(k, epsilon).variances()

    def params(self) -> dict[str, Any]:
        return {"exp_epsilon": str(self.exp_epsilon)}

    def privacy_loss(self) -> PrivacyLoss | None:
        return self.grid.loss()

    def weights(self, index: int) -> list[int]:
        return self.grid.weights(index)

    def variance_at(self, index: int) -> Fraction:
        return self.grid.variance(index)
