"""The fast path of the estimators: sums over groups of respondents instead of rows.

Every quantity the linearized and replicate variances need is a sum over rows of weighted
pseudo-values, and every weight is the base weight times factors that are constant within a
PSU (replicate factors) or within a calibration cell (post-stratification and raking factors).
So with groups g = (PSU, joint calibration cell), one pass over the rows gives the group sums
T_g = Σ_{i in g} w_i d_i z_i and N_g = Σ_{i in g} w_i d_i, and the rest is exact algebra on
G groups: the calibration residuals (their regression on cell indicators needs only cell sums,
and the correction w_i·(JB)[cell] sums to W_g·(JB)[cell_g] within a group), the PSU totals, and
each replicate's recalibrated weights (IPF on cell tables). At 10^6 rows, 2,000 PSUs and 60
raking cells this is ~10^5 groups: the work per estimate no longer grows with n after the one
pass. Designs calibrated with linear (GREG) calibration on numeric covariates take the
row-level path (estimators.py); both give the same numbers (tests compare them).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from .calibration import PostStratification, Raking
from .keys import unique_keys
from .sample import Design


@dataclass(frozen=True, eq=False)
class Groups:
    """The (PSU, joint calibration cell) groups of a design and their fixed sums.

    `of_row` (n,): each row's group; `psu` (G,): each group's PSU; `cells[s]` (G,): each
    group's cell in calibration step s; `final` (G,): Σ final weights; `base` (G,): Σ base
    weights; `before[s]`, `after[s]` (G,): Σ weights before and after step s.
    """

    of_row: np.ndarray
    psu: np.ndarray
    cells: tuple[np.ndarray, ...]
    final: np.ndarray
    base: np.ndarray
    before: tuple[np.ndarray, ...]
    after: tuple[np.ndarray, ...]

    @property
    def count(self) -> int:
        return int(self.psu.size)


_CACHE: weakref.WeakKeyDictionary[Design, Groups] = weakref.WeakKeyDictionary()


def cell_based(design: Design) -> bool:
    """Whether every calibration step has cell-constant factors (the fast path applies)."""
    return all(isinstance(step, PostStratification | Raking) for step in design.calibration)


def groups_of(design: Design) -> Groups:
    """The design's groups (computed once per design object)."""
    found = _CACHE.get(design)
    if found is not None:
        return found
    key = design.psus.astype(np.int64)
    size = design.psu_count
    for step in design.calibration:
        cells = step.model.joint
        width = int(step.model.indicators.shape[0])
        key = key * width + cells
        size *= width
        if size > 2**62:  # renumber the distinct keys so far
            _, key = np.unique(key, return_inverse=True)
            key = key.reshape(-1).astype(np.int64)
            size = int(key.max()) + 1
    uniques, first, of_row = unique_keys(key, size, first=True)
    count = uniques.size

    def sums(weights: np.ndarray) -> np.ndarray:
        return np.bincount(of_row, weights=weights, minlength=count)

    base = design.base_weights
    assert base is not None
    groups = Groups(of_row=of_row, psu=design.psus[first],
                    cells=tuple(step.model.joint[first] for step in design.calibration),
                    final=sums(design.weights), base=sums(base),
                    before=tuple(sums(step.before) for step in design.calibration),
                    after=tuple(sums(step.after) for step in design.calibration))
    _CACHE[design] = groups
    return groups


def residualize(design: Design, groups: Groups, x: np.ndarray) -> np.ndarray:
    """Group totals of the calibration residuals of influence values whose group totals are
    `x` (G, m): each step's regression on its cell indicators, in order (calibration.py)."""
    for s, step in enumerate(design.calibration):
        cells = groups.cells[s]
        j = step.model.indicators
        c = j.shape[0]
        with np.errstate(divide="ignore", invalid="ignore"):
            # Σ_cell d_i e_i with e_i = x_i/w_i and d_i/w_i constant in a group: x_g·before/after
            ratio = np.where(groups.after[s] != 0, groups.before[s] / groups.after[s], 0.0)
        weights_by_cell = np.bincount(cells, weights=groups.before[s], minlength=c)
        cross = _cell_sums(cells, x * ratio[:, None], c)
        gram = j.T @ (j * weights_by_cell[:, None])
        beta = np.linalg.lstsq(gram, j.T @ cross, rcond=None)[0]
        x = x - groups.after[s][:, None] * (j @ beta)[cells]
    return x


def _cell_sums(cells: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
    out = np.empty((size, values.shape[1]))
    for k in range(values.shape[1]):
        out[:, k] = np.bincount(cells, weights=values[:, k], minlength=size)
    return out


def replicate_factors(design: Design, groups: Groups, psu_factors: np.ndarray) -> np.ndarray:
    """(R, G): each replicate's weight of each group relative to its final weight: the PSU's
    replicate factor times the replicate's recalibration over the full-sample calibration."""
    r_count = psu_factors.shape[0]
    out = np.empty((r_count, groups.count))
    for r in range(r_count):
        weights = groups.base * psu_factors[r][groups.psu]
        for s, step in enumerate(design.calibration):
            cells = groups.cells[s]
            table = np.bincount(cells, weights=weights,
                                minlength=step.model.indicators.shape[0])
            weights = weights * step.cell_factors(table)[cells]
        with np.errstate(divide="ignore", invalid="ignore"):
            out[r] = np.where(groups.final > 0, weights / groups.final, 0.0)
    return out
