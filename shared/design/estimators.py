"""Design-based estimates on pseudo-values: Hájek means (shares), Horvitz-Thompson totals and
ratios, in domains, with linearized or replicate variances and the design effect split into
its sampling and privacy parts (docs/design-based.md).

- mean (Hájek): ŷ = Σ w_i d_i z_i / Σ w_i d_i, d_i = 1 for respondents in the domain who
  answered the question (a domain estimate is a ratio on the whole design, as R's `subset`);
  influence values w_i d_i (z_i − ŷ)/Σ w d (R's `svymean`).
- total (Horvitz-Thompson): Σ w_i d_i z_i; influence w_i d_i z_i (R's `svytotal`).
- ratio: Σ w d z / Σ w d x, influence w_i d_i (z_i − R x_i)/Σ w d x (R's `svyratio`); its
  V_srs is R's `svyratio(deff = TRUE)`: the SRS variance of the total of the influence values
  (z_i − R x_i)/Σ w d x, their answers' variance again the pseudo-values' minus the noise's.

Influence values are residualized by each calibration step, then go through the ultimate
cluster formula (linearization.py); with an fpc the randomization term is added back.
Replicate variances recompute the estimate on every replicate's (recalibrated) weights.

Design effect, per estimate (docs/design-based.md):
    V         the estimate's variance (design and randomization together)
    V_privacy = Σ a_i² V̂_i, the randomization's part (a_i the weight on z_i)
    V_sampling = V − V_privacy, the design's variance had the true answers been observed
    V_srs     = Ŝ²/n·(1 − n/N̂), a simple random sample of n true answers (R's deff), with
              Ŝ² = Σ w d (z − ŷ)²/Σ w d · n/(n − 1) − Σ w d V̂/Σ w d (the answers' variance:
              the pseudo-values' minus the noise's)
    deff_sampling = V_sampling/V_srs,  deff_privacy = V/V_sampling,
    deff = V/V_srs = deff_sampling · deff_privacy,  effective n = n/deff.
When V_sampling or Ŝ² is not positive (the randomization swamps the design at this n) the
split is not estimable and those numbers are None.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import DesignError
from ..estimates import finite_or_none, z_value
from .groups import cell_based, groups_of, replicate_factors, residualize
from .linearization import covariance, covariance_of_totals, randomization_terms, sums_by
from .pseudo import PseudoValues
from .replicates import Replicates
from .sample import Design

STATISTICS = ("mean", "total")


# A design effect below this is a variance of 0 up to rounding (~1e-31 is left): an estimate the
# calibration fixed (a calibration variable's own shares). Its deff is 0 and it has no effective
# n (it was 1.8e32 in the CSV and JSON).
FIXED = 1e-9


@dataclass(frozen=True)
class DesignEffect:
    """The design effect split (module docstring); None where not estimable."""

    sampling: float | None
    privacy: float | None
    total: float | None
    effective_n: float | None

    def to_dict(self) -> dict[str, Any]:
        return {k: finite_or_none(v) for k, v in self.__dict__.items()}


@dataclass(frozen=True)
class DesignEstimate:
    """One estimated quantity: a share, mean, total or ratio with its standard error."""

    label: str
    estimate: float
    std_error: float
    ci_low: float
    ci_high: float
    deff: DesignEffect | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"label": self.label}
        for key in ("estimate", "std_error", "ci_low", "ci_high"):
            d[key] = finite_or_none(getattr(self, key))
        d["deff"] = self.deff.to_dict() if self.deff is not None else None
        return d


@dataclass(frozen=True, eq=False)
class DesignEstimates:
    """The estimates of one question (or ratio): values, covariance, and what they rest on.

    `n` respondents contributed (in the domain and answering); `population` is Σ w over them
    (the estimated population size of the domain); `variance_method` names linearization or
    the replicate method; `design` describes the design.
    """

    statistic: str
    question: str
    labels: tuple[str, ...]
    estimates: np.ndarray
    covariance: np.ndarray
    n: int
    population: float
    variance_method: str
    design: str
    confidence: float
    privacy_variance: np.ndarray | None = None
    srs_variance: np.ndarray | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def std_errors(self) -> np.ndarray:
        return np.sqrt(np.maximum(np.diag(self.covariance), 0.0))

    def effects(self) -> list[DesignEffect | None]:
        """The design effect split of each estimate (module docstring)."""
        if self.privacy_variance is None or self.srs_variance is None:
            return [None] * len(self.labels)
        out: list[DesignEffect | None] = []
        for v, vp, vs in zip(np.diag(self.covariance).tolist(), self.privacy_variance.tolist(),
                             self.srs_variance.tolist(), strict=True):
            if vs > 0 and v < FIXED * vs:  # fixed by the calibration: no effective n
                out.append(DesignEffect(0.0, 1.0 if vp < FIXED * vs else None, 0.0, None))
                continue
            total = v / vs if vs > 0 else None
            sampling_var = v - vp
            sampling = sampling_var / vs if vs > 0 and sampling_var > 0 else None
            privacy = v / sampling_var if sampling_var > 0 else None
            effective = self.n / total if total else None
            out.append(DesignEffect(sampling, privacy, total, effective))
        return out

    def rows(self) -> list[DesignEstimate]:
        z = z_value(self.confidence)
        return [DesignEstimate(label, float(e), float(s), float(e - z * s), float(e + z * s),
                               deff)
                for label, e, s, deff in zip(self.labels, self.estimates, self.std_errors,
                                             self.effects(), strict=True)]

    def to_dict(self) -> dict[str, Any]:
        return {"statistic": self.statistic, "question": self.question, "n": self.n,
                "population": finite_or_none(self.population),
                "variance_method": self.variance_method, "design": self.design,
                "confidence": self.confidence, "rows": [r.to_dict() for r in self.rows()],
                "notes": list(self.notes)}


Variance = str | Replicates


def _method(variance: Variance) -> str:
    if isinstance(variance, Replicates):
        return variance.describe()
    if variance != "linearized":
        raise DesignError(f"variance must be 'linearized' or replicate weights "
                          f"(replicates.build), got {variance!r}")
    return "linearized (ultimate cluster, with replacement)"


def _mask(design: Design, values: PseudoValues, domain: np.ndarray | None) -> np.ndarray:
    if values.n != design.n:
        raise DesignError(f"{values.question!r} has {values.n} rows for a design of "
                          f"{design.n} respondents")
    d = values.present
    if domain is not None:
        dom = np.asarray(domain, dtype=bool).reshape(-1)
        if dom.size != design.n:
            raise DesignError(f"the domain has {dom.size} rows for a design of {design.n}")
        d = d & dom
    return d


def _residualized(design: Design, x: np.ndarray) -> np.ndarray:
    for step in design.calibration:
        x = step.residuals(x)
    return x


def estimate(design: Design, values: PseudoValues | Sequence[PseudoValues], *,
             statistic: str = "mean", domain: np.ndarray | None = None,
             variance: Variance = "linearized", confidence: float = 0.95
             ) -> list[DesignEstimates]:
    """Means (or totals) of the columns of one or more questions' pseudo-values, over the
    respondents in `domain` (a disclosed subgroup, (n,) bool; None: everyone) who answered.
    Several questions at once share the replicate loop (one pass of replicate weights).

    Designs without calibration, or post-stratified or raked, take the group path (groups.py:
    one pass over the rows, then sums over (PSU, cell) groups); linear calibration the row
    path. Both compute the same formulas."""
    many = [values] if isinstance(values, PseudoValues) else list(values)
    if statistic not in STATISTICS:
        raise DesignError(f"statistic must be one of {', '.join(STATISTICS)}")
    z_value(confidence)
    method = _method(variance)
    replicated = isinstance(variance, Replicates)
    groups = groups_of(design) if cell_based(design) else None
    w = design.weights
    results, group_sums = [], []
    for pv in many:
        d = _mask(design, pv, domain)
        wd = w * d
        weight_sum = float(wd.sum())
        count = int(d.sum())
        if count == 0 or weight_sum == 0:
            raise DesignError(f"{pv.question!r}: no respondent in the domain answered it")
        totals = wd @ pv.values
        est = totals / weight_sum if statistic == "mean" else totals
        coefficients = wd / weight_sum if statistic == "mean" else wd
        added, privacy = randomization_terms(design, coefficients, pv.noise)
        cov = np.zeros((est.size, est.size))
        if groups is not None:
            t = sums_by(groups.of_row, pv.values, groups.count, wd)
            n_g = np.bincount(groups.of_row, weights=wd, minlength=groups.count)
            group_sums.append((t, n_g))
            if not replicated:
                x = (t - np.outer(n_g, est)) / weight_sum if statistic == "mean" else t
                x = residualize(design, groups, x)
                cov = covariance_of_totals(design, sums_by(groups.psu, x, design.psu_count))
        elif not replicated:
            x = ((pv.values - est) * coefficients[:, None] if statistic == "mean"
                 else pv.values * wd[:, None])
            cov = covariance(design, _residualized(design, x))
        cov = cov + np.diag(added)
        srs = _srs_variance(pv, wd, weight_sum, count, totals, statistic)
        results.append(DesignEstimates(statistic, pv.question, pv.labels, est, cov, count,
                                       weight_sum, method, design.describe(), confidence,
                                       privacy, srs))
    if isinstance(variance, Replicates):
        if groups is not None:
            factors = replicate_factors(design, groups, variance.factors)  # (R, G)
            replicate_values = [
                (factors @ t) / (factors @ n_g)[:, None] if statistic == "mean"
                else factors @ t for t, n_g in group_sums]
        else:
            masks = [_mask(design, pv, domain) for pv in many]
            replicate_values = _replicate_estimates(design, many, masks, variance, statistic)
        for result, reps in zip(results, replicate_values, strict=True):
            result.covariance[...] += variance.variance(result.estimates, reps)
    return results


def mean(design: Design, values: PseudoValues, *, domain: np.ndarray | None = None,
         variance: Variance = "linearized", confidence: float = 0.95) -> DesignEstimates:
    """Hájek means of one question's pseudo-values (shares of its options, its mean score or
    mean), over `domain`; see `estimate`."""
    return estimate(design, values, statistic="mean", domain=domain, variance=variance,
                    confidence=confidence)[0]


def total(design: Design, values: PseudoValues, *, domain: np.ndarray | None = None,
          variance: Variance = "linearized", confidence: float = 0.95) -> DesignEstimates:
    """Horvitz-Thompson totals (estimated population counts, or sums of a value)."""
    return estimate(design, values, statistic="total", domain=domain, variance=variance,
                    confidence=confidence)[0]


def totals_refusal(design: Design) -> str | None:
    """Why Horvitz-Thompson totals on this design's weights would not estimate population
    counts (None: they do). A total Σ w z counts people only when the weights are scaled to
    the population: design weights 1/π (each ≥ 1, summing to more than the respondents), or
    weights calibrated to population totals (their sum is the population given). Relative
    weights (some below 1, or summing to the number of respondents, as weights rescaled to
    mean 1 or a sample weighted 1 each) give a total of the sample, not of a population: the
    reports then leave totals out and say so (docs/design-based.md §2)."""
    w = design.weights
    n = design.n
    total = float(w.sum())
    if total <= n * (1.0 + 1e-9):
        return (f"the weights sum to {total:,.6g}, not more than the {n:,} respondents: they "
                "are relative weights (or every respondent counts 1), so a weighted total "
                "would count the sample, not the population. Give design weights 1/selection "
                "probability, or calibrate to population totals (--poststratify, --rake, "
                "--calibrate)")
    if not design.calibration and float(w.min()) < 1.0 - 1e-12:
        return (f"a weight is {float(w.min()):.6g}, below 1, so the weights are not "
                "1/selection probability (relative weights): a weighted total would not "
                "count the population. Give design weights 1/selection probability, or "
                "calibrate to population totals (--poststratify, --rake, --calibrate)")
    return None


def ratio(design: Design, numerator: PseudoValues, denominator: PseudoValues, *,
          domain: np.ndarray | None = None, variance: Variance = "linearized",
          confidence: float = 0.95, cross_noise: np.ndarray | None = None) -> DesignEstimates:
    """Ratios Σ w z / Σ w x of each numerator column to the denominator's single column, over
    respondents in `domain` who answered both (R's `svyratio`). Without `cross_noise` the two
    are assumed randomized independently (different questions, or a disclosed denominator):
    the randomization terms are V̂(z) + R²·V̂(x). `cross_noise` (n, m) gives each respondent's
    unbiased estimate of the randomization covariance of each numerator column with the
    denominator (both read off one report, e.g. a share among those asked,
    shared/design/among_asked.py): the terms are then V̂(z) + R²·V̂(x) − 2R·Ĉ."""
    if denominator.values.shape[1] != 1:
        raise DesignError("a ratio's denominator must be one column")
    method = _method(variance)
    d = _mask(design, numerator, domain) & denominator.present
    wd = design.weights * d
    x = denominator.values[:, 0]
    base = float(wd @ x)
    if int(d.sum()) == 0 or base == 0:
        raise DesignError("the ratio's denominator totals 0 over the respondents used")
    est = (wd @ numerator.values) / base
    residual = numerator.values - np.outer(x, est)
    coefficients = wd / base
    noise = numerator.noise + np.outer(denominator.noise[:, 0], est**2)
    if cross_noise is not None:
        noise = noise - 2.0 * cross_noise * est
    added, privacy = randomization_terms(design, coefficients, noise)
    if isinstance(variance, Replicates):
        num, den = _replicate_totals(design, [numerator.values * d[:, None], (x * d)[:, None]],
                                     variance)
        reps = num / den
        cov = variance.variance(est, reps)
    else:
        cov = covariance(design, _residualized(design, residual * coefficients[:, None]))
    cov = cov + np.diag(added)
    srs = _ratio_srs_variance(residual, noise, wd, base, int(d.sum()))
    return DesignEstimates("ratio", numerator.question, numerator.labels, est, cov,
                           int(d.sum()), float(wd.sum()), method, design.describe(),
                           confidence, privacy, srs)


def _ratio_srs_variance(residual: np.ndarray, noise: np.ndarray, wd: np.ndarray,
                        base: float, count: int) -> np.ndarray:
    """A ratio's variance from a simple random sample of `count` TRUE answers, as R's
    `svyratio(deff = TRUE)` takes it: the SRS variance of the total of its influence values
    r_i = (z_i − R x_i)/Σ w x, N̂²·(1 − n/N̂)·S_r²/n, with S_r² the weighted variance of r
    (× n/(n − 1)) less the residuals' mean randomization variance (`noise`/(Σ w x)²)."""
    weight_sum = float(wd.sum())
    r = residual / base
    centre = (wd @ r) / weight_sum
    spread = np.maximum((wd @ (r * r)) / weight_sum - centre * centre, 0.0)
    if count > 1:
        spread = spread * count / (count - 1)
    answers = spread - (wd @ noise) / (base * base * weight_sum)
    correction = (weight_sum - count) / weight_sum if weight_sum > count else 1.0
    return answers * correction * weight_sum**2 / count


def _srs_variance(pv: PseudoValues, wd: np.ndarray, weight_sum: float, count: int,
                  totals: np.ndarray, statistic: str) -> np.ndarray:
    """Variance of the same estimate from a simple random sample of `count` TRUE answers
    (R's deff convention: (1 − n/N̂) when N̂ = Σ w > n), the answers' variance estimated as
    the pseudo-values' minus the mean randomization variance (module docstring)."""
    centre = totals / weight_sum
    squares = np.einsum("i,ij,ij->j", wd, pv.values, pv.values)
    spread = np.maximum(squares / weight_sum - centre * centre, 0.0)
    if count > 1:
        spread = spread * count / (count - 1)
    answers = spread - (wd @ pv.noise) / weight_sum
    correction = (weight_sum - count) / weight_sum if weight_sum > count else 1.0
    per = answers * correction / count
    if statistic == "total":
        per = per * weight_sum**2
    return per


def _replicate_totals(design: Design, columns: list[np.ndarray],
                      replicates: Replicates) -> list[np.ndarray]:
    """Σ_i w_ri c_i for every replicate r and every column block c (each (n, m)): (R, m) per
    block. One pass over the replicates; each replicate's weights are recalibrated."""
    base = design.base_weights
    assert base is not None
    stacked = np.hstack(columns)
    out = np.empty((replicates.count, stacked.shape[1]))
    for r in range(replicates.count):
        weights = base * replicates.factors[r][design.psus]
        for step in design.calibration:
            weights = step.recalibrate(weights)
        out[r] = weights @ stacked
    bounds = np.cumsum([0, *(c.shape[1] for c in columns)])
    return [out[:, bounds[j]:bounds[j + 1]] for j in range(len(columns))]


def _replicate_estimates(design: Design, many: Sequence[PseudoValues],
                         masks: Sequence[np.ndarray], replicates: Replicates,
                         statistic: str) -> list[np.ndarray]:
    """Replicate estimates (R, m) of each question's means or totals."""
    blocks = [pv.values * d[:, None] for pv, d in zip(many, masks, strict=True)]
    if statistic == "mean":
        blocks.append(np.column_stack([d.astype(np.float64) for d in masks]))
    sums = _replicate_totals(design, blocks, replicates)
    if statistic == "total":
        return sums
    denominators = sums[-1]
    return [sums[j] / denominators[:, j:j + 1] for j in range(len(many))]
