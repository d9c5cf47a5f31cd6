"""The with-replacement (ultimate cluster) linearized variance with strata, as R's survey
computes it for a one-stage design (`svyrecvar` -> `onestage`/`onestrat`), and the
randomization term an fpc needs added back (docs/design-based.md).

For influence values x_i (n x m; a mean's are w_i (z_i - ŷ)/Σw, after calibration their
residuals), PSU totals t_hj = Σ_{i in PSU hj} x_i and, per stratum h with n_h PSUs,

    v = Σ_h (1 - f_h) · n_h/(n_h - 1) · Σ_j (t_hj - t̄_h)(t_hj - t̄_h)ᵀ,   f_h = n_h/N_h

(f_h = 0 without an fpc; a stratum with f_h = 1 is a census and adds nothing). A stratum with
one PSU follows the design's lonely_psu option (sample.py). Applied to pseudo-values z this
estimates the design's variance and the randomization's together (Chaudhuri 2011: with
independent randomization the squared terms of z_i carry E[(c·z_i)² | x] = (c·y_i)² + V_i, and
the with-replacement formula's coefficient of them is exactly a_i², a_i the estimator's
weight on z_i). With an fpc that coefficient is (1 - f_h)·a_i², so f_h·Σ a_i² V̂_i is added
back (`randomization_terms`), V̂_i the unbiased estimates of pseudo.py.
"""

from __future__ import annotations

import numpy as np

from ..errors import DesignError
from .sample import Design

# R's onestrat: a stratum whose finite-population factor is below this is a census (0 variance).
CENSUS = 1e-7


def sums_by(codes: np.ndarray, values: np.ndarray, size: int,
            weights: np.ndarray | None = None) -> np.ndarray:
    """(size, m): the sums of the columns of `values` (n, m) (times `weights` (n,), if given)
    over the rows of each code: one bincount per column, each column made contiguous as it
    is weighted (five times faster at 10^6 rows than one bincount over a flattened (n, m)
    index, and 1.5x faster than weighting the (m, n) transpose at once, whose rows bincount
    copied again since that product kept the transpose's strides)."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim == 1:
        values = values[:, None]
    out = np.empty((size, values.shape[1]))
    for j in range(values.shape[1]):
        column = (values[:, j] * weights if weights is not None
                  else np.ascontiguousarray(values[:, j]))
        out[:, j] = np.bincount(codes, weights=column, minlength=size)
    return out


def psu_totals(design: Design, x: np.ndarray) -> np.ndarray:
    """(P, m): the sum of each column of x over each PSU's rows."""
    return sums_by(design.psus, x, design.psu_count)


def stratum_factors(design: Design) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Per stratum: (scale, centred, counted) and the "average" multiplier.

    scale_h = (1 - f_h)·n_h/(n_h - 1) (lonely: 1 - f_h; census or removed: 0); centred_h
    whether PSU totals are centred at the stratum mean ("adjust" leaves a lonely PSU's total
    uncentred); counted_h False for a lonely stratum under "average", whose variance the
    others' average stands for (the sum is multiplied by H / H_ok).
    """
    n_h = design.sampled_psus.astype(np.float64)
    finite = np.isfinite(design.population_psus)
    f = np.where(finite, 1.0 - n_h / np.where(finite, design.population_psus, 1.0), 1.0)
    lonely = n_h == 1
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(lonely, f, f * n_h / (n_h - 1))
    census = f < CENSUS
    scale = np.where(census, 0.0, scale)
    centred = np.ones(n_h.size, dtype=bool)
    counted = np.ones(n_h.size, dtype=bool)
    option = design.lonely_psu
    live_lonely = lonely & ~census
    if live_lonely.any():
        if option == "fail":
            s = int(np.flatnonzero(live_lonely)[0])
            raise DesignError(f"stratum {design.stratum_labels[s]!r} has a single PSU: choose "
                              "--lonely-psu (lonely_psu) remove, certainty, adjust or average")
        if option in ("remove", "certainty"):
            scale = np.where(live_lonely, 0.0, scale)
        elif option == "adjust":
            centred = ~live_lonely
        elif option == "average":
            counted = ~live_lonely
            scale = np.where(live_lonely, 0.0, scale)
    ok = int(counted.sum())
    multiplier = n_h.size / ok if ok else 0.0
    return scale, centred, counted, multiplier


def covariance(design: Design, x: np.ndarray) -> np.ndarray:
    """(m, m) ultimate-cluster covariance of the totals of the columns of x (influence values
    already residualized for calibration)."""
    return covariance_of_totals(design, psu_totals(design, x))


def covariance_of_totals(design: Design, t: np.ndarray) -> np.ndarray:
    """(m, m) ultimate-cluster covariance from the PSU totals t (P, m) of influence values."""
    strata = design.psu_stratum
    h = design.stratum_count
    scale, centred, _, multiplier = stratum_factors(design)
    counts = design.sampled_psus.astype(np.float64)
    means = np.empty((h, t.shape[1]))
    for j in range(t.shape[1]):
        means[:, j] = np.bincount(strata, weights=t[:, j], minlength=h) / counts
    deviations = t - np.where(centred[strata, None], means[strata], 0.0)
    deviations *= np.sqrt(scale)[strata, None]
    return (deviations.T @ deviations) * multiplier


def randomization_fractions(design: Design) -> np.ndarray:
    """c_h per stratum: the share of its respondents' randomization variance that the
    linearized formula leaves out and `randomization_terms` adds back: the sampling fraction
    f_h (0 without an fpc, 1 for a census stratum); a lonely stratum: 1 under "certainty" (the
    PSU is certain, its answers are still randomized), 0 under "remove" (R drops the stratum's
    whole contribution), f_h under "adjust" and "average"."""
    n_h = design.sampled_psus.astype(np.float64)
    fraction = np.where(np.isfinite(design.population_psus),
                        n_h / np.where(np.isfinite(design.population_psus),
                                       design.population_psus, 1.0), 0.0)
    lonely = (n_h == 1) & (fraction < 1 - CENSUS)
    if design.lonely_psu == "certainty":
        fraction = np.where(lonely, 1.0, fraction)
    elif design.lonely_psu == "remove":
        fraction = np.where(lonely, 0.0, fraction)
    return fraction


def randomization_terms(design: Design, coefficients: np.ndarray,
                        noise: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(added, privacy), each (m,): added = Σ_h c_h Σ_{i in h} a_i² V̂_i, the randomization
    variance an fpc (or a certainty PSU) hides from the linearized formula; privacy =
    Σ_i a_i² V̂_i, all of the randomization's variance (the privacy part of the design
    effect). a_i = `coefficients` (n,), the estimator's weight on z_i; V̂ = `noise` (n, m)."""
    a2 = np.asarray(coefficients, dtype=np.float64) ** 2
    privacy = a2 @ noise
    c = randomization_fractions(design)
    if not c.any():
        return np.zeros_like(privacy), privacy
    return (a2 * c[design.strata]) @ noise, privacy
