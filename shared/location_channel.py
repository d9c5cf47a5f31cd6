"""The exact channel of a location question: the exponential mechanism over grid cells, with
every probability rational and its privacy certified in rational arithmetic.

Geo-indistinguishability (Andrés et al. 2013) asks, for true cells x, x' and any report z,
    P(z | x) <= e^(ε_geo·d(x, x')) · P(z | x'),        d in km, ε_geo per km,
and the exponential mechanism P(z | x) ∝ e^(-ε_geo·d(x, z)/2) gives it. Euclidean distances
between cell centres are irrational (√2 cells on a diagonal) and so is e^(...): floating-point
planar Laplace breaks the guarantee (Mironov 2012; Gazeau, Miller & Palamidessi 2016). So:

1. Distances are rounded UP to a whole number of steps of 1/Q of a cell (Q = `QUANTUM`):
   D(x, z) = ceil(Q·√m) for m = Δrow² + Δcol², computed exactly with integer square roots.
   D is a metric: ceil is monotone and subadditive (ceil(a + b) <= ceil(a) + ceil(b)) and the
   Euclidean distance obeys the triangle inequality, so D(x, z) <= D(x, y) + D(y, z).
2. The weight of report z for truth x is β^-D(x, z) for one rational base β = s/t > 1; as
   integers W_D = t^D·s^(Dmax - D) (so W_0/W_D = β^D exactly), Z_x = Σ_z W_D(x,z) and
   P(z | x) = W_D(x,z)/Z_x: every probability is an exact rational; the device draws
   `randbelow(Z_x)` and walks the cells in index order.
3. The exact worst ratio between two truths. For x, x' and any z, by the triangle inequality
   D(x', z) - D(x, z) <= D(x, x'), with equality at z = x, so
       max_z P(z | x)/P(z | x') = β^D(x, x') · Z_x'/Z_x                          (exactly),
   and Z_x' <= β^D(x, x')·Z_x (termwise), so the ratio is at most β^(2·D(x, x')).
4. Geo-indistinguishability is certified per distinct offset m: β^(2·D_m) <= e^(ε_geo·c·√m)
   (c the cell size in km), checked exactly with a rational lower bound on √m (integer square
   root at 64 bits) and `exp_lower`. β is the largest short rational that passes: ln β just
   under (ε_geo·c/2)·min_m √m/D_m. The rounding makes the mechanism a little MORE private than
   ε_geo claims (at Q = 16 the worst offset, the diagonal, keeps 98.4% of ln β; others more).
5. The plain LDP ε the ledger books is the exact log of max over pairs of β^D(x,x')·Z_x'/Z_x:
   found exactly (integer comparisons only) among each x' 's Pareto candidates x (larger D,
   smaller Z_x), with x' in one quarter of the grid (the grid's mirror symmetries map every
   pair to one whose x' lies there and keep D and Z).
Small grids (<= `_EXPLICIT_MAX_CELLS` cells) are also checked by listing every ratio of the
exact channel in Fractions; tests check both agree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property, lru_cache
from math import isqrt

import numpy as np

from .errors import PrivacyCheckError
from .exact import PrivacyLoss, exp_lower, simplest_between

QUANTUM = 16          # distance steps per cell side
_SQRT_BITS = 64       # precision of the rational lower bounds on √m
_EXPLICIT_MAX_CELLS = 36


def steps(m: int) -> int:
    """ceil(QUANTUM·√m), exactly: the rounded-up distance of squared offset m, in steps."""
    if m == 0:
        return 0
    n = QUANTUM * QUANTUM * m
    root = isqrt(n)
    return root if root * root == n else root + 1


def sqrt_lower(m: int) -> Fraction:
    """A rational <= √m (within 2^-64)."""
    return Fraction(isqrt(m << (2 * _SQRT_BITS)), 1 << _SQRT_BITS)


@dataclass(frozen=True)
class GridShape:
    rows: int
    cols: int
    cell_km: float

    @property
    def cells(self) -> int:
        return self.rows * self.cols

    def centre_distance_km(self) -> np.ndarray:
        """(cells, cells) Euclidean distances between cell centres, in km (floats: reporting)."""
        r, c = np.divmod(np.arange(self.cells), self.cols)
        return self.cell_km * np.hypot(r[:, None] - r[None, :], c[:, None] - c[None, :])


@dataclass
class GeoChannel:
    """The exact channel for a grid at ε_geo (per km): see the module docstring."""

    shape: GridShape
    epsilon_geo: float
    base: Fraction = field(init=False)

    def __post_init__(self) -> None:
        self.base = self._best_base()

    @staticmethod
    def plain_epsilon_floor(shape: GridShape, epsilon_geo: float) -> float:
        """A lower bound on the plain ε (opposite corners: about ε_geo·diagonal/2, less the
        rounding), known before any channel is built: what refuses hopeless grids cheaply."""
        return 0.45 * epsilon_geo * shape.cell_km * math.hypot(shape.rows - 1, shape.cols - 1)

    # --- the rounded metric --------------------------------------------------------------------

    @cached_property
    def offset_steps(self) -> np.ndarray:
        """(rows, cols): D for |Δrow|, |Δcol| (integers)."""
        rows, cols = self.shape.rows, self.shape.cols
        return np.array([[steps(dr * dr + dc * dc) for dc in range(cols)] for dr in range(rows)],
                        dtype=np.int64)

    @cached_property
    def cell_steps(self) -> np.ndarray:
        """(cells, cells): D(x, z) between every pair of cells."""
        r, c = np.divmod(np.arange(self.shape.cells), self.shape.cols)
        return self.offset_steps[np.abs(r[:, None] - r[None, :]), np.abs(c[:, None] - c[None, :])]

    @cached_property
    def distinct_offsets(self) -> list[tuple[int, int]]:
        """(m, D_m) for every squared offset m >= 1 present in the grid."""
        rows, cols = self.shape.rows, self.shape.cols
        ms = sorted({dr * dr + dc * dc for dr in range(rows) for dc in range(cols)} - {0})
        return [(m, steps(m)) for m in ms]

    def _best_base(self) -> Fraction:
        if not self.distinct_offsets:
            raise PrivacyCheckError("a location grid needs at least 2 cells")
        g = min(sqrt_lower(m) / d for m, d in self.distinct_offsets)  # <= √m/D_m for every m
        target = exp_lower(Fraction(self.epsilon_geo) * Fraction(self.shape.cell_km) * g / 2)
        # Strictly below target, within 2^-12 of its excess over 1 (relative in ln β).
        excess = target - 1
        return simplest_between(target - excess / 2**12, target - excess / 2**60)

    # --- exact weights ---------------------------------------------------------------------

    @cached_property
    def dmax(self) -> int:
        return int(self.offset_steps.max())

    @cached_property
    def weights(self) -> dict[int, int]:
        """W_D = t^D·s^(Dmax - D) for every D present (β = s/t)."""
        s, t, top = self.base.numerator, self.base.denominator, self.dmax
        present = sorted({0, *(d for _, d in self.distinct_offsets)})
        out: dict[int, int] = {}
        t_pow, t_at = 1, 0
        s_pows: dict[int, int] = {}
        s_pow, s_at = 1, 0
        for d in reversed(present):  # s^(Dmax - D) grows as D falls
            s_pow *= s ** (top - d - s_at)
            s_at = top - d
            s_pows[d] = s_pow
        for d in present:
            t_pow *= t ** (d - t_at)
            t_at = d
            out[d] = t_pow * s_pows[d]
        return out

    @cached_property
    def weight_row_classes(self) -> tuple[np.ndarray, list[int]]:
        """(class index per (Δrow, Δcol), W per class): D values as compact class indices."""
        values = sorted(self.weights)
        lookup = {d: i for i, d in enumerate(values)}
        classes = np.vectorize(lookup.__getitem__, otypes=[np.int64])(self.offset_steps)
        return classes, [self.weights[d] for d in values]

    @cached_property
    def totals(self) -> list[int]:
        """Z_x for every cell (exact integers), computed on one quarter and mirrored."""
        rows, cols = self.shape.rows, self.shape.cols
        classes, w = self.weight_row_classes
        rr, cc = np.arange(rows), np.arange(cols)
        z = [[0] * cols for _ in range(rows)]
        for r in range((rows + 1) // 2):
            for c in range((cols + 1) // 2):
                hist = np.bincount(classes[np.abs(rr - r)][:, np.abs(cc - c)].ravel(),
                                   minlength=len(w))
                total = sum(int(n) * w[i] for i, n in enumerate(hist) if n)
                for r2 in {r, rows - 1 - r}:
                    for c2 in {c, cols - 1 - c}:
                        z[r2][c2] = total
        return [v for row in z for v in row]

    def row_weights(self, x: int) -> list[int]:
        """The integer weights W_D(x,z) of every report z for truth x (they sum to Z_x)."""
        return [self.weights[int(d)] for d in self.cell_steps[x]]

    # --- privacy ---------------------------------------------------------------------------

    def check_geo(self) -> None:
        """β^(2·D_m) <= e^(ε_geo·c·√m) for every offset present, exactly (module docstring)."""
        scale = Fraction(self.epsilon_geo) * Fraction(self.shape.cell_km)
        for m, d in self.distinct_offsets:
            if self.base ** (2 * d) > exp_lower(scale * sqrt_lower(m)):
                raise PrivacyCheckError(
                    f"location channel: cells {math.sqrt(m):.4g} cells apart differ by more "
                    f"than e^(ε_geo·d) (ε_geo = {self.epsilon_geo!r} per km)")

    @cached_property
    def loss(self) -> PrivacyLoss:
        """The exact worst ratio max_{x,x',z} P(z|x)/P(z|x') (module docstring, point 5)."""
        rows, cols = self.shape.rows, self.shape.cols
        z = self.totals
        order = sorted(range(len(z)), key=z.__getitem__)  # exact: Python integers
        z_rank = np.empty(len(z), dtype=np.int64)
        z_rank[order] = np.arange(len(z))
        w0 = self.weights[0]
        best: tuple[int, int] | None = None  # (numerator, denominator)
        for r in range((rows + 1) // 2):
            for c in range((cols + 1) // 2):
                xp = r * cols + c
                d = self.cell_steps[xp]
                by = np.lexsort((z_rank, -d))  # D descending, then Z ascending
                ranks = z_rank[by]
                previous = np.minimum.accumulate(np.concatenate(([len(z)], ranks[:-1])))
                for x in by[ranks < previous]:
                    if x == xp:
                        continue
                    num, den = w0 * z[xp], self.weights[int(d[x])] * z[int(x)]
                    if best is None or num * best[1] > best[0] * den:
                        best = (num, den)
        assert best is not None
        return PrivacyLoss(ratio=Fraction(*best))

    def explicit_loss(self) -> PrivacyLoss:
        """The same worst ratio, from every ratio of the channel listed in Fractions (small
        grids: tests, and the build's second check)."""
        from .exact import channel_ratio

        rows = [[Fraction(w, self.totals[x]) for w in self.row_weights(x)]
                for x in range(self.shape.cells)]
        ratio = channel_ratio(rows)
        if ratio is None:
            raise PrivacyCheckError("location channel: a report impossible for some cell")
        return PrivacyLoss(ratio=ratio)

    def certify(self) -> PrivacyLoss:
        """Check geo-indistinguishability; the exact plain loss (cross-checked when small)."""
        if self.base <= 1:
            raise PrivacyCheckError("location channel: ε_geo·cell size is too small for a "
                                    "rational base above 1")
        self.check_geo()
        loss = self.loss
        if self.shape.cells <= _EXPLICIT_MAX_CELLS and self.explicit_loss() != loss:
            raise PrivacyCheckError("location channel: the exact channel's worst ratio differs "
                                    "from the one derived for it")
        return loss

    # --- floats (simulation, estimation, reporting) ----------------------------------------

    @cached_property
    def log_base(self) -> float:
        return math.log(self.base.numerator) - math.log(self.base.denominator)

    @cached_property
    def dense(self) -> np.ndarray:
        """(cells, cells) float channel A[x][z] = P(z | x)."""
        logw = -self.log_base * self.cell_steps.astype(float)
        a = np.exp(logw - logw.max(axis=1, keepdims=True))
        return a / a.sum(axis=1, keepdims=True)

    def within_km(self, x: int, km: float) -> float:
        """P(report within `km` of the true cell x's centre), in floats (for words)."""
        near = self.shape.centre_distance_km()[x] <= km * (1 + 1e-12)
        return float(self.dense[x][near].sum())


@lru_cache(maxsize=16)
def geo_channel(rows: int, cols: int, cell_km: float, epsilon_geo: float) -> GeoChannel:
    """The channel for a grid at ε_geo, built once per parameters (certified by the caller)."""
    return GeoChannel(GridShape(rows, cols, float(cell_km)), float(epsilon_geo))
