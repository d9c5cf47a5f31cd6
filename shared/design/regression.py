"""Design-based regression: pseudo-likelihood weights and the sandwich over PSUs within
strata, for `shared/regression.py`'s logistic fit and `shared/regression_linear.py`'s linear
one (Binder 1983; Lumley's `svyglm`; docs/design-based.md).

The fits take two extras: `weights`, each row's survey weight (the fit weights each row's
log-likelihood, or its estimating equation, rescaled to mean 1 as svyglm does), and
`variance`, a function from the rows' influence values u_i = w_i s_i A⁻¹ (s_i the row's score,
A the weighted information) to their design-based covariance. `fit_options(design, rows)`
gives both for the rows of the design that enter the fit:

    fit_logistic(x, names, symbols, channel, ..., **fit_options(design, rows))

With replicate weights (`replicate_covariance`) the model is refitted on every replicate's
(recalibrated) weights and the covariance is the replicates' spread, R's `svrVar` (as R's
svyglm on a `svrepdesign`); the replicates are built without the fpc, for the same reason.

The covariance is the ultimate-cluster one (linearization.py) of the influence values, padded
with zeros for the design's rows not in the fit (R's svyglm on a subset keeps the whole
design), after each calibration step's residuals, as R's svy.varcoef does. It is with
replacement even when the design has an fpc: the fpc would shrink the design's part of the
variance but not the randomization's, and for a regression the randomization's part has no
closed form here; leaving the fpc out is conservative (a note says so).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import numpy as np

from ..errors import DesignError
from .linearization import covariance
from .replicates import Replicates
from .replicates import build as build_replicates
from .sample import Design

FPC_NOTE = ("the regression's standard errors are with replacement (the design's fpc is left "
            "out: it would shrink the sampling part but not the randomization's; conservative)")


def _rows(design: Design, rows: np.ndarray | None) -> np.ndarray:
    """Row indices into the design (None: all rows; a boolean mask: its True rows)."""
    if rows is None:
        return np.arange(design.n)
    index = np.asarray(rows)
    if index.dtype == bool:
        if index.size != design.n:
            raise DesignError(f"the row mask has {index.size} entries for {design.n} rows")
        return np.flatnonzero(index)
    index = index.astype(np.int64).reshape(-1)
    if index.size and (index.min() < 0 or index.max() >= design.n):
        raise DesignError("a regression row is outside the design")
    return index


def sandwich(design: Design, rows: np.ndarray | None = None
             ) -> Callable[[np.ndarray], np.ndarray]:
    """The function from the fit rows' influence values (len(rows), p) to their design-based
    covariance (p, p) (module docstring)."""
    index = _rows(design, rows)
    with_replacement = (replace(design, population_psus=np.full(design.stratum_count, np.inf))
                        if design.has_fpc else design)

    def design_covariance(influence: np.ndarray) -> np.ndarray:
        u = np.asarray(influence, dtype=np.float64)
        if u.shape[0] != index.size:
            raise DesignError(f"{u.shape[0]} influence rows for {index.size} regression rows")
        full = np.zeros((design.n, u.shape[1]))
        full[index] = u
        for step in design.calibration:
            full = step.residuals(full)
        return covariance(with_replacement, full)

    return design_covariance


def fit_options(design: Design, rows: np.ndarray | None = None) -> dict[str, Any]:
    """`weights` and `variance` for fit_logistic / fit_linear over the design's `rows`."""
    index = _rows(design, rows)
    return {"weights": design.weights[index], "variance": sandwich(design, index)}


def with_replacement(design: Design) -> Design:
    """The design without its fpc (a regression's variance is with replacement)."""
    if not design.has_fpc:
        return design
    return replace(design, population_psus=np.full(design.stratum_count, np.inf))


def regression_replicates(design: Design, kind: str, replicates: int) -> Replicates:
    """Replicate factors for a regression: built on the design without its fpc."""
    return build_replicates(with_replacement(design), kind, replicates=replicates)


def replicate_weights(design: Design, replicates: Replicates) -> Iterator[np.ndarray]:
    """Each replicate's weights for every row of the design, recalibrated as the design was
    (R's replicate designs calibrate every replicate)."""
    base = design.base_weights
    assert base is not None
    for r in range(replicates.count):
        weights = base * replicates.factors[r][design.psus]
        for step in design.calibration:
            weights = step.recalibrate(weights)
        yield weights


def replicate_covariance(design: Design, replicates: Replicates, estimate: np.ndarray,
                         refit: Callable[[np.ndarray], np.ndarray],
                         rows: np.ndarray | None = None) -> np.ndarray:
    """The replicate covariance of a fit's coefficients: `refit(weights of the rows)` gives
    the coefficients on one replicate's weights; their spread by R's `svrVar` (mse = FALSE:
    around the replicates' mean)."""
    index = _rows(design, rows)
    fits = np.array([refit(weights[index]) for weights in replicate_weights(design,
                                                                             replicates)])
    return replicates.variance(np.asarray(estimate, dtype=float), fits)
