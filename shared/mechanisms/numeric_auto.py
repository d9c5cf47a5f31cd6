"""Which mean mechanism a number question should use: the choice `auto` will make for a
`decimal` question (and wide integer ranges) once that question type exists (issue 41).

Candidates: duchi, piecewise, hybrid (numeric_grid.py and its subclasses) and geometric
noise on the same grid (geometric.py). Each one's variance with one report is exact for every
grid value (on the [-1, 1] scale: geometric's 2α/(α - 1)² in grid steps times (2/(k - 1))²).
Without a prior the choice minimizes the worst case over answers, which is what a margin of
error must hold for; with a designer's prior over the grid (expected shares of the answers) it
minimizes the variance expected under that prior. The worst case favours hybrid at ε > ε* and
duchi below; on data piled at the ends of the range duchi does better (B² - t² shrinks there),
on data in the middle piecewise does (its variance grows with t²) - bench/bench_numeric_mean.py
measures both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .duchi import Duchi
from .geometric import Geometric
from .hybrid import Hybrid
from .numeric_grid import GridMean
from .piecewise import Piecewise

MEAN_MECHANISMS: tuple[type[GridMean], ...] = (Duchi, Piecewise, Hybrid)


@dataclass(frozen=True)
class MeanChoice:
    """The chosen mechanism, its one-report variance on [-1, 1] (worst case, or expected under
    the prior), every candidate's, and a sentence for the survey's `mechanism_choice`."""

    name: str
    variance: float
    variances: dict[str, float]
    reason: str


def mean_variances(k: int, epsilon: float,
                   prior: Sequence[float] | np.ndarray | None = None) -> dict[str, float]:
    """One-report variance on [-1, 1] of each candidate that can be built for (k, ε): the worst
    case over the grid, or expected under `prior` (k non-negative weights)."""
    weights = None
    if prior is not None:
        weights = np.asarray(prior, dtype=float)
        if weights.shape != (k,) or (weights < 0).any() or not weights.sum() > 0:
            raise ValueError(f"prior must be {k} non-negative weights with a positive sum")
        weights = weights / weights.sum()
    found: dict[str, float] = {}
    for cls in MEAN_MECHANISMS:
        if cls.misfit(k, epsilon) is None:
            grid = cls.grid_variances(k, epsilon)
            found[cls.name] = float(grid.max() if weights is None else weights @ grid)
    if Geometric.misfit(k, epsilon) is None:
        found[Geometric.name] = Geometric.noise_variance(k, epsilon) * (2 / (k - 1)) ** 2
    return found


def choose_mean_mechanism(k: int, epsilon: float,
                          prior: Sequence[float] | np.ndarray | None = None) -> MeanChoice:
    """The candidate with the smallest one-report variance of the mean (module docstring);
    ValueError when none can be built for (k, ε)."""
    found = mean_variances(k, epsilon, prior)
    if not found:
        raise ValueError(f"no mean mechanism can be built for k={k} at epsilon={epsilon:g}")
    name = min(found, key=lambda n: (found[n], n))
    what = "worst-case" if prior is None else "expected (under the prior)"
    others = ", ".join(f"{n} {v:.4g}" for n, v in sorted(found.items(), key=lambda x: x[1])
                       if n != name)
    reason = (f"auto: lowest {what} variance of the mean with one report on [-1, 1] at k={k}, "
              f"epsilon={epsilon:g}: {name} {found[name]:.4g}" + (f" (vs {others})" if others
                                                                   else ""))
    return MeanChoice(name, found[name], found, reason)
