"""The Hybrid Mechanism (HM) of Wang et al. (ICDE 2019, Section III-C), on an answer grid
(numeric_grid.py): with probability α the Piecewise Mechanism, else Duchi et al.'s.

The paper. With α = 1 - e^(-ε/2) for ε > ε*, else α = 0 (Duchi alone), the worst-case
variance is, for ε > ε*,
    (e^(ε/2) + 3)/(3e^(ε/2)(e^(ε/2) - 1)) + (e^ε + 1)²/(e^(ε/2)(e^ε - 1)²),
the same for every t (α·t²/(e^(ε/2) - 1) and -(1 - α)·t² cancel); for ε <= ε* it is Duchi's
((e^ε + 1)/(e^ε - 1))². ε* ≈ 0.61 is where PM's variance at t = 0, (s + 3)/(3(s - 1)²), equals
Duchi's, B² (s = e^(ε/2)): below it PM never helps the worst case.

Exactness. s = a/b = `rational_exp_floor(ε/2)` stands for e^(ε/2) in both parts: PM as in
piecewise.py (same cells) and Duchi with e = a²/b². α = 1 - b/a, and "PM or not" is decided
exactly with α, so ε <= ε* is decided by comparing the two rational variances at t = 0. The
reports are disjoint: indices 0..m are PM's cells, m + 1 and m + 2 are Duchi's -B and +B. A
column's probabilities are α (or 1 - α) times one part's, the same factor for every answer,
so its ratio is that part's; the loss is the larger of the two parts' exact losses, each
computed over every grid value. Drawing: bernoulli(α) (`randbelow(a) < a - b`), then the part's
own draw; when α = 0 the Duchi draw alone (no coin).

Both parts are unbiased, so Var_j = α·Var_PM,j + (1 - α)·Var_Duchi,j exactly.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np

from ..exact import PrivacyLoss
from ..randomness import RandomSource, bernoulli, draw_weighted
from .duchi import DuchiGrid
from .numeric_grid import GridMean
from .piecewise import PiecewiseGrid, piecewise_grid, piecewise_variances


def mixing(pm: PiecewiseGrid) -> Fraction:
    """α: 1 - 1/s when PM's t = 0 variance is below Duchi's (ε > ε*), else 0."""
    s = Fraction(pm.a, pm.b)
    duchi_zero = ((s * s + 1) / (s * s - 1)) ** 2
    return 1 - 1 / s if pm.paper_variance(Fraction(0)) < duchi_zero else Fraction(0)


@lru_cache(maxsize=256)
def _parts(k: int, epsilon: float) -> tuple[PiecewiseGrid, DuchiGrid, Fraction]:
    pm = piecewise_grid(k, epsilon)
    return pm, DuchiGrid(pm.a**2, pm.b**2, k), mixing(pm)


@lru_cache(maxsize=256)
def _variances(k: int, epsilon: float) -> np.ndarray:
    _, duchi, alpha = _parts(k, epsilon)
    if alpha == 0:
        return duchi.variances()
    # PM's are piecewise.py's cached ones (the same grid): computed once per (k, ε)
    return float(alpha) * piecewise_variances(k, epsilon) + float(1 - alpha) * duchi.variances()


def paper_worst_variance(epsilon: float) -> float:
    """The paper's worst-case variance of HM on [-1, 1] (module docstring), in floats."""
    import math

    s, e = math.exp(epsilon / 2), math.exp(epsilon)
    pm_zero = (s + 3) / (3 * (s - 1) ** 2)
    duchi_zero = ((e + 1) / (e - 1)) ** 2
    if pm_zero >= duchi_zero:
        return duchi_zero
    return (s + 3) / (3 * s * (s - 1)) + (e + 1) ** 2 / (s * (e - 1) ** 2)


class Hybrid(GridMean):
    name = "hybrid"
    summary = ("Wang et al.'s Hybrid Mechanism: the Piecewise Mechanism or Duchi's at random, "
               "the mix that minimizes the worst-case variance; unbiased mean.")

    def __init__(self, epsilon: float, labels: range, **kwargs: Any) -> None:
        super().__init__(epsilon, labels, **kwargs)
        self.pm, self.duchi, self.alpha = _parts(self.k, self.epsilon)
        self.exp_half_epsilon = Fraction(self.pm.a, self.pm.b)
        self.cells = self.pm.m
        self.values = (*self.pm.values, *self.duchi.values)
        self._certify()

    @classmethod
    def output_count(cls, k: int, epsilon: float) -> int:
        return piecewise_grid(k, epsilon).m + 3

    @classmethod
    def grid_variances(cls, k: int, epsilon: float) -> np.ndarray:
        return _variances(k, epsilon)

    def params(self) -> dict[str, Any]:
        return {"exp_half_epsilon": str(self.exp_half_epsilon), "cells": self.cells,
                "alpha": str(self.alpha)}

    def privacy_loss(self) -> PrivacyLoss | None:
        losses = [self.duchi.loss()] + ([self.pm.loss()] if self.alpha else [])
        if any(loss is None for loss in losses):
            return None
        return PrivacyLoss(ratio=max(loss.ratio for loss in losses  # type: ignore[union-attr]
                                     if loss is not None and loss.ratio is not None))

    def row(self, index: int) -> list[Fraction]:
        pm_w, duchi_w = self.pm.weights(index), self.duchi.weights(index)
        pm_total, duchi_total = sum(pm_w), sum(duchi_w)
        return ([self.alpha * Fraction(w, pm_total) for w in pm_w]
                + [(1 - self.alpha) * Fraction(w, duchi_total) for w in duchi_w])

    def float_row(self, index: int) -> list[float]:
        return [float(p) for p in self.row(index)]

    def perturb_index(self, index: int, source: RandomSource) -> int:
        if self.alpha and bernoulli(self.alpha, source):
            return draw_weighted(self.pm.weights(index), source)
        return self.pm.m + 1 + draw_weighted(self.duchi.weights(index), source)

    def variance_at(self, index: int) -> Fraction:
        return (self.alpha * self.pm.variance(index)
                + (1 - self.alpha) * self.duchi.variance(index))
