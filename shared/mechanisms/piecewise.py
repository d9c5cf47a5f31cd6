"""The Piecewise Mechanism (PM) of Wang et al., "Collecting and analyzing multidimensional data
with local differential privacy" (ICDE 2019, Algorithm 2), on an answer grid (numeric_grid.py),
with its output discretized to a grid of cells and proven exactly.

The paper. For t in [-1, 1] and s = e^(ε/2), C = (s + 1)/(s - 1), the output y in [-C, C] has
density p = (e^ε - e^(ε/2))/(2e^(ε/2) + 2) = s(s - 1)/(2(s + 1)) on the high band
[l(t), r(t)], l(t) = (C + 1)/2·t - (C - 1)/2, r(t) = l(t) + C - 1, and p/e^ε elsewhere.
E[y | t] = t and Var[y | t] = t²/(s - 1) + (s + 3)/(3(s - 1)²).

The discretization. s is replaced by the rational a/b = `rational_exp_floor(ε/2)` <= e^(ε/2)
(so e^ε by a²/b² <= e^ε; the identities above hold for any s > 1, so y stays unbiased). The
output is rounded to the m + 1 points v_i = -C + i·2C/m by randomized rounding: y between two
neighbours goes to each with probability linear in the distance (the hat function of v_i), so
E[v | y] = y and the report stays unbiased, while its variance grows by Δ²·E[φ(1 - φ)] <= Δ²/4,
Δ = 2C/m, φ the position of y within its cell (about Δ²/6).

In the grid coordinate u = (y + C)/Δ in [0, m] everything is rational with denominator
Q = (a + b)(k - 1): the band of grid value j is [L_j, L_j + W] with L_j = m·a·j/Q and
W = m·b·(k - 1)/Q; the density is s/m on the band and 1/(s·m) elsewhere. With T_ij the integral
of hat i over the band (scaled by 2Q², an integer) and H_i the hat's own integral (2Q², or Q² at
the two ends),
    P[i | j] = (b²·H_i + (a² - b²)·T_ij) / (2Q²·a·b·m),
a common denominator for every row. b²·H_i <= numerator <= a²·H_i, so each column's ratio is at
most a²/b²; the certificate computes every entry (only the few hats a band edge crosses differ
from b²·H_i or a²·H_i) and takes the exact worst ratio over every grid value and cell.

Cells. m is the smallest power of two from 16 with (1) m >= 2(s + 1), so that a band spans a
whole hat and the channel reaches the full ratio a²/b² (no ε is wasted), and (2) the rounding
term Δ²/6 at most 1% of the paper's variance at t = 0: m² >= 200(s + 1)²/(s + 3); at most 4096.
That is 16 cells below ε ≈ 0.62, 32 to ε ≈ 3.47, 64 to 6.12, 128 to 8.29 (rule 1 from there
on), 4096 from ε ≈ 13.9; past that the cap keeps a report to 4 digits and the channel a little
more private than claimed. The rounding costs at most 1% of the variance at t = 0 (0.3-0.95% at
ε = 0.5-4, bench/bench_numeric_mean.py; 0.08-0.8% of the worst case).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property, lru_cache
from typing import Any

import numpy as np

from ..exact import PrivacyLoss, rational_exp_floor
from .numeric_grid import GridMean, grid_point

MIN_CELLS = 16
MAX_CELLS = 4096
ROUNDING_SHARE = 100  # rounding variance Δ²/6 <= 1/ROUNDING_SHARE of the paper's at t = 0


def cells_for(a: int, b: int) -> int:
    """m for s = a/b (module docstring): exact integer comparisons, as the page computes."""
    m = MIN_CELLS
    while m < MAX_CELLS and (m * b < 2 * (a + b)
                             or m * m * (a + 3 * b) * b < 2 * ROUNDING_SHARE * (a + b) ** 2):
        m *= 2
    return m


@dataclass(frozen=True)
class PiecewiseGrid:
    """PM's discretized channel for s = a/b, m cells, on a k-value grid (integers only)."""

    a: int
    b: int
    m: int
    k: int

    @cached_property
    def q(self) -> int:
        return (self.a + self.b) * (self.k - 1)

    @cached_property
    def width(self) -> int:
        """W·Q: the band's width in units of 1/Q cells."""
        return self.m * self.b * (self.k - 1)

    @cached_property
    def denominator(self) -> int:
        return 2 * self.q**2 * self.a * self.b * self.m

    @property
    def c(self) -> Fraction:
        return Fraction(self.a + self.b, self.a - self.b)

    @cached_property
    def values(self) -> tuple[Fraction, ...]:
        c, m = self.c, self.m
        return tuple(c * Fraction(2 * i - m, m) for i in range(m + 1))

    def hat(self, i: int) -> int:
        """H_i: the integral of hat i over [0, m], scaled by 2Q²."""
        return 2 * self.q**2 if 0 < i < self.m else self.q**2

    def _cumulative(self, i: int, position: int) -> int:
        """∫ hat i up to `position` (in 1/Q cells), scaled by 2Q² (the full hat's 2Q² even at
        the ends: only differences over [0, m] are used)."""
        q = self.q
        d = position - i * q
        if d <= -q:
            return 0
        if d <= 0:
            return (d + q) ** 2
        if d < q:
            return 2 * q * q - (q - d) ** 2
        return 2 * q * q

    def band(self, j: int) -> tuple[int, int, int, int]:
        """(L, R, first, last): the band of grid value j and the hats it touches."""
        low = self.m * self.a * j
        high = low + self.width
        return low, high, max(0, low // self.q), min(self.m, -(-high // self.q))

    def crossed(self, j: int) -> tuple[dict[int, int], range]:
        """(T_ij scaled by 2Q² of the hats an edge of grid value j's band crosses, the hats
        it covers whole): a covered hat (0 < i < m, [(i - 1)Q, (i + 1)Q] inside the band) has
        T_ij = H_i = 2Q² exactly, so only the few crossed ones are integrated. The channel's
        weights, its variance and its certificate all read the band through this."""
        q = self.q
        low, high, first, last = self.band(j)
        inner = range(max(1, -(-low // q) + 1), min(self.m - 1, high // q - 1) + 1)
        if not inner:
            inner = range(last + 1, last + 1)
        cumulative = self._cumulative
        return ({i: cumulative(i, high) - cumulative(i, low)
                 for i in (*range(first, inner.start), *range(inner.stop, last + 1))}, inner)

    def touched(self, j: int) -> dict[int, int]:
        """T_ij (scaled by 2Q²) for the hats the band of grid value j overlaps."""
        crossed, inner = self.crossed(j)
        whole = 2 * self.q**2
        return {**crossed, **dict.fromkeys(inner, whole)}

    def weights(self, j: int) -> list[int]:
        """The numerators of P[i | j] over `denominator`."""
        b2, spread = self.b**2, self.a**2 - self.b**2
        row = [b2 * self.hat(i) for i in range(self.m + 1)]
        for i, t in self.touched(j).items():
            row[i] += spread * t
        return row

    def loss(self) -> PrivacyLoss | None:
        """The exact worst ratio max_i max_j P[i|j] / min_j P[i|j] over every grid value j.

        Every row is checked to be a distribution (its T's integrate the band: Σ_i T_ij =
        2Q·W·Q); entries of hats a band does not touch are b²·H_i exactly. The hats a band
        covers whole (0 < i < m with [(i - 1)Q, (i + 1)Q] inside it) have T_ij = H_i = 2Q²
        exactly, so their entries are a²·H_i: they are counted and marked (a difference array
        over the columns) instead of integrated one by one, and only the few hats a band
        edge crosses are integrated, which takes a 50,001-value grid from seconds to a
        fraction of one with the same entries, bounds and ratio."""
        b2, spread, q, m = self.b**2, self.a**2 - self.b**2, self.q, self.m
        whole, width = 2 * q * q, self.width
        # per column, the least and most T_ij of the bands crossing it (spread > 0: the
        # entry b²·H_i + spread·T_ij orders as T_ij)
        least: list[int | None] = [None] * (m + 1)
        most: list[int | None] = [None] * (m + 1)
        covered = [0] * (m + 2)  # difference array: columns some band covers whole
        untouched_below, untouched_above = 0, m  # columns < / > these are untouched
        for j in range(self.k):
            low, high, first, last = self.band(j)
            if not 0 <= low <= high <= m * q:
                return None
            crossed, inner = self.crossed(j)
            total = whole * len(inner)
            for i, t in crossed.items():
                if t <= 0:
                    return None
                total += t
                seen = least[i]
                if seen is None:
                    least[i] = most[i] = t
                elif t < seen:
                    least[i] = t
                elif t > most[i]:  # type: ignore[operator]
                    most[i] = t
            if total != 2 * q * width:
                return None
            if inner:
                covered[inner.start] += 1
                covered[inner.stop] -= 1
            untouched_below = max(untouched_below, first)
            untouched_above = min(untouched_above, last)
        depth = 0
        worst = Fraction(1)
        for i in range(m + 1):
            depth += covered[i]
            found = [t for t in (least[i], most[i], whole if depth else None) if t is not None]
            untouched = b2 * self.hat(i)
            column = [b2 * self.hat(i) + spread * t for t in found] + (
                [untouched] if i < untouched_below or i > untouched_above else [])
            worst = max(worst, Fraction(max(column), min(column)))
        return PrivacyLoss(ratio=worst)

    def loss_by_hats(self) -> PrivacyLoss | None:
        """`loss` integrating every hat each band touches (the definition, slow on a wide
        grid): the tests check `loss` equals it."""
        b2, spread = self.b**2, self.a**2 - self.b**2
        lows: dict[int, int] = {}
        highs: dict[int, int] = {}
        untouched_below, untouched_above = 0, self.m
        for j in range(self.k):
            low, high, first, last = self.band(j)
            if not 0 <= low <= high <= self.m * self.q:
                return None
            touched = {i: self._cumulative(i, high) - self._cumulative(i, low)
                       for i in range(first, last + 1)}
            if sum(touched.values()) != 2 * self.q * self.width or min(touched.values()) <= 0:
                return None
            for i, t in touched.items():
                value = b2 * self.hat(i) + spread * t
                lows[i] = min(lows.get(i, value), value)
                highs[i] = max(highs.get(i, value), value)
            untouched_below = max(untouched_below, first)
            untouched_above = min(untouched_above, last)
        worst = Fraction(1)
        for i in range(self.m + 1):
            untouched = b2 * self.hat(i)
            column = ([lows[i], highs[i]] if i in lows else []) + (
                [untouched] if i < untouched_below or i > untouched_above else [])
            worst = max(worst, Fraction(max(column), min(column)))
        return PrivacyLoss(ratio=worst)

    @cached_property
    def _baseline_moment(self) -> int:
        b2, m = self.b**2, self.m
        return sum(b2 * self.hat(i) * (2 * i - m) ** 2 for i in range(m + 1))

    def variance(self, j: int) -> Fraction:
        """Exact Σ_i P[i|j] v_i² - t_j²: the discretized channel's variance, one report."""
        spread, m = self.a**2 - self.b**2, self.m
        moment = self._baseline_moment + spread * sum(
            t * (2 * i - m) ** 2 for i, t in self.touched(j).items())
        return self.c**2 * Fraction(moment, m * m * self.denominator) - grid_point(j, self.k) ** 2

    def paper_variance(self, t: Fraction) -> Fraction:
        """The paper's continuous Var[y | t] = t²/(s - 1) + (s + 3)/(3(s - 1)²), same s."""
        s = Fraction(self.a, self.b)
        return t**2 / (s - 1) + (s + 3) / (3 * (s - 1) ** 2)

    def _moment_integral(self, position: int) -> int:
        """S(P), with Σ_i T_ij·(2i - m)² = (S(R_j) - S(L_j))/(3Q) for the band [L_j, R_j]
        (positions in 1/Q cells, within [0, mQ]).

        Σ_i hat_i(x)·g(i) is the linear interpolant of g(x) = (2x - m)², which is g(x) plus
        4φ(1 - φ) for x = n + φ (the interpolation error of a quadratic with g'' = 8); and
        T_ij = 2Q²·∫ hat_i over the band, so the sum is 2Q² times the integral of the
        interpolant over the band. Its antiderivative from 0, times 6Q³, is
        (2P - mQ)³ + m³Q³ + 4nQ³ + 12r²Q - 8r³ for P = nQ + r: S(P) without the constant."""
        q = self.q
        n, r = divmod(position, q)
        return (2 * position - self.m * q) ** 3 + 4 * n * q**3 + 12 * r * r * q - 8 * r**3

    def variances(self) -> np.ndarray:
        """Every `variance(j)` as the float nearest it: the same exact rationals, each moment
        in closed form (`_moment_integral`) and one correctly rounded int / int division per
        grid value, so a 50,001-value grid takes a fraction of a second (the per-hat sums took
        seconds) and the floats are those of float(variance(j))."""
        q, m, k = self.q, self.m, self.k
        spread = self.a**2 - self.b**2
        # variance_j = c²·(baseline + spread·Σ)/(m²·den) - t_j², c = (a+b)/(a-b),
        # Σ = ΔS/(3Q), t_j = (2j - (k-1))/(k-1): over the common denominator
        # D = 3Q·m²·den·(a-b)²·(k-1)²
        scale = (self.a + self.b) ** 2 * (k - 1) ** 2
        denominator = 3 * q * m * m * self.denominator * (self.a - self.b) ** 2 * (k - 1) ** 2
        baseline = 3 * q * self._baseline_moment
        t_scale = 3 * q * m * m * self.denominator * (self.a - self.b) ** 2
        width, step = self.width, m * self.a
        moment = self._moment_integral
        found = np.empty(k)
        for j in range(k):
            low = step * j
            numerator = (scale * (baseline + spread * (moment(low + width) - moment(low)))
                         - t_scale * (2 * j - (k - 1)) ** 2)
            found[j] = numerator / denominator
        return found


@lru_cache(maxsize=256)
def piecewise_grid(k: int, epsilon: float) -> PiecewiseGrid:
    """PM's grid for k answers at ε: s = rational_exp_floor(ε/2), m = cells_for(s)."""
    s = rational_exp_floor(epsilon / 2)
    return PiecewiseGrid(s.numerator, s.denominator, cells_for(s.numerator, s.denominator), k)


@lru_cache(maxsize=256)
def piecewise_variances(k: int, epsilon: float) -> np.ndarray:
    """Var_j of every grid value at (k, ε), on [-1, 1] (cached: hybrid mixes the same)."""
    return piecewise_grid(k, epsilon).variances()


class Piecewise(GridMean):
    name = "piecewise"
    summary = ("Wang et al.'s Piecewise Mechanism: a value near the answer more likely than one "
               "far from it, on a grid of cells; unbiased mean.")

    def __init__(self, epsilon: float, labels: range, **kwargs: Any) -> None:
        super().__init__(epsilon, labels, **kwargs)
        self.grid = piecewise_grid(self.k, self.epsilon)
        self.exp_half_epsilon = Fraction(self.grid.a, self.grid.b)
        self.cells = self.grid.m
        self.values = self.grid.values
        self._certify()

    @classmethod
    def output_count(cls, k: int, epsilon: float) -> int:
        return piecewise_grid(k, epsilon).m + 1

    @classmethod
    def grid_variances(cls, k: int, epsilon: float) -> np.ndarray:
        return piecewise_variances(k, epsilon)

    def params(self) -> dict[str, Any]:
        return {"exp_half_epsilon": str(self.exp_half_epsilon), "cells": self.cells}

    def privacy_loss(self) -> PrivacyLoss | None:
        return self.grid.loss()

    def weights(self, index: int) -> list[int]:
        return self.grid.weights(index)

    def variance_at(self, index: int) -> Fraction:
        return self.grid.variance(index)
