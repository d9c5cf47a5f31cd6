"""Which mean mechanism a number question should use: the choice `auto` makes for a `decimal`
question asked for its mean (shared/question_types/decimal.py; issue 41).

Candidates: duchi, piecewise, hybrid (numeric_grid.py and its subclasses) and geometric
noise on the same grid (geometric.py). Each one's variance with one report is exact for every
grid value (on the [-1, 1] scale: geometric's 2α/(α - 1)² in grid steps times (2/(k - 1))²).

Criteria, as for categorical questions (`auto` ranks them by the variance averaged over the
options, the planner's margins use the worst case):
- default: the variance averaged over the grid values (a uniform prior): what a typical answer
  sees. At k = 1001 it picks duchi at ε = 0.5 and piecewise at ε >= 1, the lowest exact
  variance on uniform, skewed and bimodal data in 11 of 12 cells of
  bench/bench_numeric_mean.py and within 6% in the 12th (skewed at ε = 1: duchi).
- `worst_case=True`: the worst case over answers, what a margin of error must hold for. It
  picks hybrid above ε* ≈ 0.61 (its variance does not depend on the answer), which costs
  1.1-2.2x in MSE against piecewise on those data at ε >= 2: real answers seldom sit at the
  ends of the range, where PM's variance (growing with t²) peaks.
- `prior`: the designer's guess of the answers' shares over the grid: the variance expected
  under it (with the population's own histogram it is the lowest exact variance by
  construction). A survey gives it as a question's `typical = [a, b]` (equal weights on the
  grid values from a to b: shared/question_types/number_grid.py); `prior_words` names it in
  the reason. Duchi wins where answers pile at the ends (B² - t² shrinks there),
  piecewise where they sit in the middle.
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


def mean_variances(k: int, epsilon: float, prior: Sequence[float] | np.ndarray | None = None,
                   worst_case: bool = False) -> dict[str, float]:
    """One-report variance on [-1, 1] of each candidate that can be built for (k, ε): averaged
    over the grid values, the worst case over them, or expected under `prior` (k non-negative
    weights)."""
    if worst_case and prior is not None:
        raise ValueError("a prior and the worst case are two different criteria: pick one")
    weights = None if worst_case else np.full(k, 1.0 / k)
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
                          prior: Sequence[float] | np.ndarray | None = None,
                          worst_case: bool = False, prior_words: str | None = None
                          ) -> MeanChoice:
    """The candidate with the smallest one-report variance of the mean by the criterion the
    arguments name (module docstring); ValueError when none can be built for (k, ε).
    `prior_words` says in the reason what the prior is ("the prior" when not given)."""
    found = mean_variances(k, epsilon, prior, worst_case)
    if not found:
        raise ValueError(f"no mean mechanism can be built for k={k} at epsilon={epsilon:g}")
    name = min(found, key=lambda n: (found[n], n))
    what = ("worst-case" if worst_case else "averaged over the answers" if prior is None
            else f"expected (under {prior_words or 'the prior'})")
    others = ", ".join(f"{n} {v:.4g}" for n, v in sorted(found.items(), key=lambda x: x[1])
                       if n != name)
    reason = (f"auto: lowest {what} variance of the mean with one report on [-1, 1] at k={k}, "
              f"epsilon={epsilon:g}: {name} {found[name]:.4g}" + (f" (vs {others})" if others
                                                                   else ""))
    return MeanChoice(name, found[name], found, reason)
