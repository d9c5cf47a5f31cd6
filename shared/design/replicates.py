"""Replicate weights: JK1, JKn and the bootstrap, defined exactly as R's survey builds them
(`as.svrepdesign(type = "JK1" | "JKn" | "bootstrap")`: `jk1weights`, `jknweights`,
`bootweights`), and the replicate variance (`svrVar`).

A replicate multiplies each respondent's design weight by a factor of their PSU; calibration is
then redone on every replicate's weights (calibration.py `recalibrate`), as R does for a
calibrated replicate design. For an estimate θ with replicate estimates θ_r,

    v = scale · Σ_r rscale_r (θ_r − θ̄)²,   θ̄ = mean of the θ_r (R's default, mse = FALSE)

- JK1 (unstratified): replicate j drops PSU j and multiplies the others by n/(n − 1);
  scale = (1 − f)(n − 1)/n, rscales 1. R refuses JK1 for a stratified design; so does this.
- JKn: for each stratum h with n_h >= 2 PSUs, n_h replicates, each dropping one PSU of h and
  multiplying the others of h by n_h/(n_h − 1); rscale = (1 − f_h)(n_h − 1)/n_h, scale 1. A
  census stratum (f_h = 1) has no replicates. Single-PSU strata as R: "fail" refuses;
  "remove", "certainty" and "average" give them no replicate ("average" then multiplies scale
  by (number of PSUs)/(number of replicates)); "adjust" gives each one replicate that zeroes
  it and multiplies every other PSU by H/(H − 1), with rscale (H − 1)/H.
- bootstrap (Canty & Davison's rescaled bootstrap as R's `bootweights`): in each stratum draw
  n_h PSUs with replacement from its n_h (with an fpc: n_h without replacement from a
  pseudo-population repeating the shuffled PSUs to N_h); a PSU's factor is the number of
  times it was drawn. scale = n̄/((n̄ − 1)(R − 1)) with n̄ the harmonic mean of the n_h,
  rscales 1. The draws come from numpy's generator with a stated seed: analysis on the server,
  nothing here is sent by a device (R's draws differ; tests give R the same replicate weights).

The randomization variance an fpc hides (linearization.py) is added to replicate variances
in the same way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import DesignError
from .sample import Design

KINDS = ("jk1", "jkn", "bootstrap")
DEFAULT_BOOTSTRAP_REPLICATES = 80
DEFAULT_SEED = 20260101
MAX_REPLICATES = 10_000


@dataclass(frozen=True, eq=False)
class Replicates:
    """Replicate factors per PSU, (R, P), with R's scale, rscales and centring.

    Replicate r's weight for respondent i (before calibration) is base_weight_i ·
    factors[r, psu_i]. `describe()` names the method for reports.
    """

    kind: str
    factors: np.ndarray
    scale: float
    rscales: np.ndarray
    mse: bool = False
    seed: int | None = None

    @property
    def count(self) -> int:
        return int(self.factors.shape[0])

    def describe(self) -> str:
        extra = f", seed {self.seed}" if self.seed is not None else ""
        names = {"jk1": "JK1 jackknife", "jkn": "JKn (stratified) jackknife",
                 "bootstrap": "bootstrap (Canty-Davison, as R's bootweights)"}
        return f"{names[self.kind]}, {self.count} replicates{extra}"

    @property
    def degrees_of_freedom(self) -> int:
        """The rank of the replicate weights minus 1 (R's `degf` of a replicate design,
        `qr(weights(design, "analysis"), tol = 1e-5)$rank - 1`). A replicate's weight is the
        base weight times its PSU's factor, so the rank is the factor matrix's."""
        if self.count == 0:
            return 0
        f = self.factors
        return int(np.linalg.matrix_rank(f, tol=1e-5 * float(np.abs(f).max()))) - 1

    def variance(self, estimate: np.ndarray, replicates: np.ndarray) -> np.ndarray:
        """(m, m) covariance from replicate estimates (R, m) (R's `svrVar`)."""
        if self.count == 0:
            return np.zeros((estimate.size, estimate.size))
        centre = estimate if self.mse else replicates[self.rscales > 0].mean(axis=0)
        deviations = (replicates - centre) * np.sqrt(self.rscales)[:, None]
        return (deviations.T @ deviations) * self.scale


def build(design: Design, kind: str, *, replicates: int = DEFAULT_BOOTSTRAP_REPLICATES,
          seed: int | None = None) -> Replicates:
    """Replicate factors of `kind` ("jk1", "jkn" or "bootstrap") for the design (its PSUs,
    strata, fpc and lonely-PSU option); `replicates` and `seed` only for the bootstrap."""
    if kind == "jk1":
        return jk1(design)
    if kind == "jkn":
        return jkn(design)
    if kind == "bootstrap":
        return bootstrap(design, replicates, seed=DEFAULT_SEED if seed is None else seed)
    raise DesignError(f"replicate weights must be one of {', '.join(KINDS)}, got {kind!r}")


def _finite_correction(design: Design) -> np.ndarray:
    """1 − f_h per stratum (1 without an fpc)."""
    population = design.population_psus
    finite = np.isfinite(population)
    return np.where(finite, 1.0 - design.sampled_psus / np.where(finite, population, 1.0),
                    1.0)


def jk1(design: Design) -> Replicates:
    """JK1 (module docstring); DesignError for a stratified design."""
    if design.stratum_count > 1:
        raise DesignError("JK1 ignores strata and is not appropriate for a stratified design "
                          "(R refuses it too): use JKn")
    n = design.psu_count
    if n < 2:
        raise DesignError("a jackknife needs at least 2 PSUs")
    correction = float(_finite_correction(design)[0])
    if correction == 0:  # a census: R drops every replicate (variance 0)
        return Replicates("jk1", np.zeros((0, n)), 0.0, np.zeros(0))
    factors = np.full((n, n), n / (n - 1))
    np.fill_diagonal(factors, 0.0)
    return Replicates("jk1", factors, correction * (n - 1) / n, np.ones(n))


def jkn(design: Design) -> Replicates:
    """JKn, the stratified jackknife (module docstring)."""
    p, h = design.psu_count, design.stratum_count
    correction = _finite_correction(design)
    rows, rscales = [], []
    for s in range(h):
        members = np.flatnonzero(design.psu_stratum == s)
        n_h = members.size
        if correction[s] == 0:  # census stratum: no replicate (R drops them)
            continue
        if n_h == 1:
            option = design.lonely_psu
            if option == "fail":
                raise DesignError(f"stratum {design.stratum_labels[s]!r} has a single PSU: "
                                  "choose --lonely-psu (lonely_psu) remove, certainty, adjust "
                                  "or average")
            if option == "adjust":
                if h < 2:
                    raise DesignError("lonely_psu adjust needs at least 2 strata")
                row = np.full(p, h / (h - 1))
                row[design.psu_stratum == s] = 0.0
                rows.append(row)
                rscales.append((h - 1) / h)
            continue
        for j in members:
            row = np.ones(p)
            row[members] = n_h / (n_h - 1)
            row[j] = 0.0
            rows.append(row)
            rscales.append(correction[s] * (n_h - 1) / n_h)
    if not rows:
        raise DesignError("every stratum was sampled exhaustively: the whole population was "
                          "observed, there is nothing to replicate")
    scale = 1.0
    if len(rows) < p and design.lonely_psu == "average":
        scale = p / len(rows)
    return Replicates("jkn", np.array(rows), scale, np.array(rscales))


def bootstrap(design: Design, replicates: int = DEFAULT_BOOTSTRAP_REPLICATES, *,
              seed: int = DEFAULT_SEED) -> Replicates:
    """R's bootweights (module docstring): `replicates` draws from numpy with `seed`."""
    if isinstance(replicates, bool) or not isinstance(replicates, int) or not (
            2 <= replicates <= MAX_REPLICATES):
        raise DesignError(f"bootstrap replicates must be an integer from 2 to "
                          f"{MAX_REPLICATES}, got {replicates!r}")
    rng = np.random.default_rng(seed)
    p = design.psu_count
    factors = np.zeros((replicates, p))
    for s in range(design.stratum_count):
        members = np.flatnonzero(design.psu_stratum == s)
        n_h = members.size
        population = design.population_psus[s]
        for r in range(replicates):
            order = rng.permutation(members)
            if math.isfinite(population):
                # R: sample(rep(upsu, length = popsize), n_h) without replacement. Position i
                # of rep(order, length = N) holds order[i % n_h], so n_h positions drawn from
                # range(N) are the same draws (numpy's choice of an array draws its indices
                # so) without building N entries: 10^7 PSUs took 15 s, 10^308 overflowed.
                drawn = order[rng.choice(int(population), size=n_h, replace=False) % n_h]
            else:
                drawn = rng.choice(order, size=n_h, replace=True)
            np.add.at(factors[r], drawn, 1.0)
    harmonic = 1.0 / float(np.mean(1.0 / design.sampled_psus))
    if harmonic <= 1:
        raise DesignError("the bootstrap needs strata with at least 2 PSUs on average")
    scale = harmonic / ((harmonic - 1) * (replicates - 1))
    return Replicates("bootstrap", factors, scale, np.ones(replicates), seed=seed)


def from_weights(design: Design, kind: str, weights: np.ndarray, scale: float,
                 rscales: np.ndarray | None = None) -> Replicates:
    """Replicates given as replicate weights (n, R) (e.g. R's own, in tests): their factors
    per PSU, checked to be constant within each PSU."""
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 2 or w.shape[0] != design.n:
        raise DesignError(f"replicate weights must be (respondents, replicates), got {w.shape}")
    factors_rows = w / design.base_weights[:, None]
    factors = np.zeros((w.shape[1], design.psu_count))
    factors[:, design.psus] = factors_rows.T
    if not np.allclose(factors[:, design.psus], factors_rows.T, rtol=1e-12, atol=1e-12):
        raise DesignError("replicate factors vary within a PSU")
    return Replicates(kind, factors, float(scale),
                      np.ones(w.shape[1]) if rscales is None else np.asarray(rscales, float))
