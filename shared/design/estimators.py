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
    V_srs     = Ŝ²/n·(1 − n/N̂), a simple random sample of n true answers (R's deff; without
              (1 − n/N̂), R's deff = "replace", when the weights are relative, `srs_factor`), with
              Ŝ² = Σ w d (z − ŷ)²/Σ w d · n/(n − 1) − Σ w d V̂/Σ w d (the answers' variance:
              the pseudo-values' minus the noise's)
    deff_sampling = V_sampling/V_srs,  deff_privacy = V/V_sampling,
    deff = V/V_srs = deff_sampling · deff_privacy,  effective n = n/deff.
When V_sampling or Ŝ² is not positive (the randomization swamps the design at this n) the
split is not estimable and those numbers are None.

The split's uncertainty (`DesignEffect.sampling_low`/`sampling_high`, docs/design-based.md §6):
V_sampling is a design variance estimate (about df = PSUs − strata degrees of freedom, R's
`degf`; relative s.e. about √(2/df)) less the privacy variance, which is known to within
O(1/√n); V_srs rests on Ŝ², estimated with its own s.e. At confidence 1 − α the interval of
deff_sampling is [max(V_lo − V_privacy, 0)/S_hi, (V_hi − V_privacy)/S_lo], with
[V_lo, V_hi] = the χ²_df interval df·V̂_lin/χ²_{df, 1−α/4}, df·V̂_lin/χ²_{df, α/4} of the
linearized (or replicate) part V̂_lin, plus the randomization term an fpc hides, and
[S_lo, S_hi] = V_srs ± t_{df, 1−α/4}·s.e.(V_srs): each at 1 − α/2, so both hold together with
probability at least 1 − α (Bonferroni). `DesignEffect.split_supported` is True when that
interval excludes 1 (or the answer is disclosed: no privacy part to split off): only then do
reports say in words how much the design adds or saves.

Intervals: estimate ± q·s.e., q = t_{df, (1 + confidence)/2} with df the design's degrees of
freedom (R's `confint(..., df = degf(design))`, Stata's `svy`), or the normal quantile when
asked (`quantile="normal"`, R's default confint).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..distributions import chi2_value, t_value
from ..errors import DesignError
from ..estimates import finite_or_none, z_value
from .groups import cell_based, groups_of, replicate_factors, residualize
from .linearization import (
    covariance,
    covariance_of_totals,
    randomization_fractions,
    randomization_terms,
    sums_by,
)
from .pseudo import Lookup, PseudoValues
from .replicates import Replicates
from .sample import Design

STATISTICS = ("mean", "total")
QUANTILES = ("t", "normal")


# A design effect below this is a variance of 0 up to rounding (~1e-31 is left): an estimate the
# calibration fixed (a calibration variable's own shares). Its deff is 0 and it has no effective
# n (it was 1.8e32 in the CSV and JSON).
FIXED = 1e-9


@dataclass(frozen=True)
class DesignEffect:
    """The design effect split (module docstring); None where not estimable. `sampling_low`
    and `sampling_high` bound the sampling factor at the estimate's confidence level (None
    high: unbounded; both None: no interval, e.g. 0 degrees of freedom)."""

    sampling: float | None
    privacy: float | None
    total: float | None
    effective_n: float | None
    sampling_low: float | None = None
    sampling_high: float | None = None

    @property
    def split_supported(self) -> bool:
        """Whether the data can tell the design's part from the privacy's (module docstring):
        the sampling factor's interval excludes 1, or there is no randomization (a disclosed
        answer: privacy exactly 1, the whole deff is the design's)."""
        if self.privacy == 1.0 and self.sampling is not None:
            return True
        if self.sampling_low is None:
            return False
        return self.sampling_low > 1 or (self.sampling_high is not None
                                         and self.sampling_high < 1)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {k: finite_or_none(v) for k, v in self.__dict__.items()}
        d["split_supported"] = self.split_supported
        return d


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
    df: int | None = None  # the design's degrees of freedom (None: not known, normal)
    quantile: str = "t"  # intervals: "t" with df, or "normal"
    hidden_variance: np.ndarray | None = None  # the randomization term an fpc hides
    srs_std_error: np.ndarray | None = None  # of srs_variance, from Ŝ²'s s.e.

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
            out.append(DesignEffect(sampling, privacy, total, effective,
                                    *self._sampling_interval(len(out), v, vp, vs)))
        return out

    def _sampling_interval(self, j: int, v: float, vp: float, vs: float
                           ) -> tuple[float | None, float | None]:
        """The sampling factor's interval (module docstring) for estimate j."""
        if not self.df or self.df < 1 or self.srs_std_error is None:
            return None, None
        tail = (1.0 - self.confidence) / 4
        hidden = 0.0 if self.hidden_variance is None else float(self.hidden_variance[j])
        spread = max(v - hidden, 0.0) * self.df
        v_low = hidden + spread / chi2_value(1.0 - tail, self.df)
        v_high = hidden + spread / chi2_value(tail, self.df)
        margin = t_value(1.0 - 2 * tail, self.df) * float(self.srs_std_error[j])
        s_low, s_high = vs - margin, vs + margin
        low = max(v_low - vp, 0.0) / s_high if s_high > 0 else 0.0
        high = (v_high - vp) / s_low if s_low > 0 else None
        return low, None if high is None else max(high, 0.0)

    def quantile_value(self) -> float:
        """The interval's multiplier: t with the design's df, or the normal quantile (NaN: a
        t interval with no degrees of freedom)."""
        if self.quantile == "normal" or self.df is None:
            return z_value(self.confidence)
        return t_value(self.confidence, self.df) if self.df >= 1 else float("nan")

    def rows(self) -> list[DesignEstimate]:
        z = self.quantile_value()
        return [DesignEstimate(label, float(e), float(s), float(e - z * s), float(e + z * s),
                               deff)
                for label, e, s, deff in zip(self.labels, self.estimates, self.std_errors,
                                             self.effects(), strict=True)]

    def to_dict(self) -> dict[str, Any]:
        return {"statistic": self.statistic, "question": self.question, "n": self.n,
                "population": finite_or_none(self.population),
                "variance_method": self.variance_method, "design": self.design,
                "confidence": self.confidence, "df": self.df, "quantile": self.quantile,
                "rows": [r.to_dict() for r in self.rows()],
                "notes": list(self.notes)}


Variance = str | Replicates


def _method(variance: Variance) -> str:
    if isinstance(variance, Replicates):
        return variance.describe()
    if variance != "linearized":
        raise DesignError(f"variance must be 'linearized' or replicate weights "
                          f"(replicates.build), got {variance!r}")
    return "linearized (ultimate cluster, with replacement)"


def degrees_of_freedom(design: Design, variance: Variance,
                       factors: np.ndarray | None = None) -> int:
    """The design's degrees of freedom (R's `degf`): PSUs minus strata for linearization, the
    rank of the replicate weights minus 1 for replicates. R's postStratify and rake recompute
    it on the recalibrated replicate weights (calibrate keeps the design's): so does this, as
    the rank of each (PSU, cell) group's recalibrated factors (a group's rows have
    proportional replicate weights, so the (n, R) weights have that rank). `factors`: those
    (R, G) factors if the caller has made them (`replicate_factors`), else made here.

    The rank: the singular values above 1e-5 x the largest factor, of the triangular factor
    of a QR decomposition of the (G, R) factors (R's `degf` takes `qr(...)$rank`): the same
    singular values as the (R, G) matrix's to rounding, 2-3x faster at ~10^5 groups than
    numpy's SVD of the wide matrix."""
    if not isinstance(variance, Replicates):
        return design.degrees_of_freedom
    if not (design.calibration and cell_based(design)) or variance.count == 0:
        return variance.degrees_of_freedom
    if factors is None:
        factors = replicate_factors(design, groups_of(design), variance.factors)
    factors = np.where(np.isfinite(factors), factors, 0.0)
    tol = 1e-5 * float(np.abs(factors).max())
    triangle = np.linalg.qr(factors.T, mode="r")
    return int((np.linalg.svd(triangle, compute_uv=False) > tol).sum()) - 1


def _quantile(quantile: str) -> str:
    if quantile not in QUANTILES:
        raise DesignError(f"quantile must be one of {', '.join(QUANTILES)}, got {quantile!r}")
    return quantile


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
             variance: Variance = "linearized", confidence: float = 0.95,
             quantile: str = "t") -> list[DesignEstimates]:
    """Means (or totals) of the columns of one or more questions' pseudo-values, over the
    respondents in `domain` (a disclosed subgroup, (n,) bool; None: everyone) who answered.
    Several questions at once share the replicate loop (one pass of replicate weights).

    Designs without calibration, or post-stratified or raked, take the group path (groups.py:
    one pass over the rows, then sums over (PSU, cell) groups); linear calibration the row
    path. Both compute the same formulas. Intervals use t with the design's degrees of
    freedom, or the normal quantile with `quantile="normal"`."""
    if statistic not in STATISTICS:
        raise DesignError(f"statistic must be one of {', '.join(STATISTICS)}")
    return _estimates(design, values, (statistic,), domain, variance, confidence,
                      quantile)[statistic]


def means_and_totals(design: Design, values: Sequence[PseudoValues], *,
                     domain: np.ndarray | None = None, variance: Variance = "linearized",
                     confidence: float = 0.95, quantile: str = "t"
                     ) -> tuple[list[DesignEstimates], list[DesignEstimates]]:
    """`estimate`'s means and totals of the same pseudo-values in one pass over the rows:
    the passes both need (the domain, the sums over (PSU, cell) groups, the SRS baseline's
    spread and its s.e.) are made once. Each number is computed by the same operations as
    `estimate` with that statistic, so the results are equal to its, bit for bit."""
    found = _estimates(design, values, ("mean", "total"), domain, variance, confidence,
                       quantile)
    return found["mean"], found["total"]


def _estimates(design: Design, values: PseudoValues | Sequence[PseudoValues],
               statistics: Sequence[str], domain: np.ndarray | None, variance: Variance,
               confidence: float, quantile: str) -> dict[str, list[DesignEstimates]]:
    """`estimate` for each of `statistics` (module docstring), sharing what they share."""
    many = [values] if isinstance(values, PseudoValues) else list(values)
    z_value(confidence)
    _quantile(quantile)
    method = _method(variance)
    relative = totals_refusal(design) is not None  # the SRS baseline's factor: srs_factor
    replicated = isinstance(variance, Replicates)
    groups = groups_of(design) if cell_based(design) else None
    # each replicate's factor of each (PSU, cell) group (R, G): made once, for the degrees of
    # freedom and the replicate estimates
    factors = (replicate_factors(design, groups, variance.factors)
               if isinstance(variance, Replicates) and groups is not None else None)
    df = degrees_of_freedom(design, variance, factors)
    w = design.weights
    results: dict[str, list[DesignEstimates]] = {s: [] for s in statistics}
    group_sums = []
    # each row's randomization fraction c_h (None: all 0), for the lookups' terms: made once
    row_fractions = None
    if any(pv.rows is not None and not pv.disclosed for pv in many):
        c = randomization_fractions(design)
        row_fractions = c[design.strata] if c.any() else None
    for pv in many:
        d = _mask(design, pv, domain)
        wd = w * d
        weight_sum = float(wd.sum())
        count = int(d.sum())
        if count == 0 or weight_sum == 0:
            raise DesignError(f"{pv.question!r}: no respondent in the domain answered it")
        lookup = pv.rows  # sums over the rows once per report value (pseudo.Lookup)
        by_value = None if lookup is None else lookup.sums(wd)
        totals = wd @ pv.values if by_value is None else by_value @ lookup.table
        t = n_g = None
        if groups is not None:
            t = (sums_by(groups.of_row, pv.values, groups.count, wd) if lookup is None
                 else lookup.sums_times(wd, groups.of_row, groups.count, lookup.table))
            n_g = np.bincount(groups.of_row, weights=wd, minlength=groups.count)
            group_sums.append((t, n_g))
        baseline = _srs_baseline(design, pv, wd, weight_sum, count, totals, by_value)
        for statistic in statistics:
            est = totals / weight_sum if statistic == "mean" else totals
            coefficients = wd / weight_sum if statistic == "mean" else wd
            if pv.disclosed:  # no randomization: its terms are zeros, without two passes
                added, privacy = np.zeros(pv.width), np.zeros(pv.width)
            elif lookup is not None:
                added, privacy = _lookup_randomization_terms(coefficients, lookup,
                                                             row_fractions)
            else:
                added, privacy = randomization_terms(design, coefficients, pv.noise)
            cov = np.zeros((est.size, est.size))
            if groups is not None:
                if not replicated:
                    x = (t - np.outer(n_g, est)) / weight_sum if statistic == "mean" else t
                    x = residualize(design, groups, x)
                    cov = covariance_of_totals(design, sums_by(groups.psu, x,
                                                               design.psu_count))
            elif not replicated:
                x = ((pv.values - est) * coefficients[:, None] if statistic == "mean"
                     else pv.values * wd[:, None])
                cov = covariance(design, _residualized(design, x))
            cov = cov + np.diag(added)
            srs, srs_se = _srs_variance(baseline, weight_sum, count, statistic, relative)
            results[statistic].append(DesignEstimates(
                statistic, pv.question, pv.labels, est, cov, count, weight_sum, method,
                design.describe(), confidence, privacy, srs, df=df, quantile=quantile,
                hidden_variance=added, srs_std_error=srs_se))
    if isinstance(variance, Replicates):
        for statistic in statistics:
            if factors is not None:
                replicate_values = [
                    (factors @ t) / (factors @ n_g)[:, None] if statistic == "mean"
                    else factors @ t for t, n_g in group_sums]
            else:
                masks = [_mask(design, pv, domain) for pv in many]
                replicate_values = _replicate_estimates(design, many, masks, variance,
                                                        statistic)
            for result, reps in zip(results[statistic], replicate_values, strict=True):
                result.covariance[...] += variance.variance(result.estimates, reps)
    return results


def mean(design: Design, values: PseudoValues, *, domain: np.ndarray | None = None,
         variance: Variance = "linearized", confidence: float = 0.95,
         quantile: str = "t") -> DesignEstimates:
    """Hájek means of one question's pseudo-values (shares of its options, its mean score or
    mean), over `domain`; see `estimate`."""
    return estimate(design, values, statistic="mean", domain=domain, variance=variance,
                    confidence=confidence, quantile=quantile)[0]


def total(design: Design, values: PseudoValues, *, domain: np.ndarray | None = None,
          variance: Variance = "linearized", confidence: float = 0.95,
          quantile: str = "t") -> DesignEstimates:
    """Horvitz-Thompson totals (estimated population counts, or sums of a value)."""
    return estimate(design, values, statistic="total", domain=domain, variance=variance,
                    confidence=confidence, quantile=quantile)[0]


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
          confidence: float = 0.95, cross_noise: np.ndarray | None = None,
          quantile: str = "t") -> DesignEstimates:
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
    _quantile(quantile)
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
    srs, srs_se = _ratio_srs_variance(design, residual, noise, wd, base, int(d.sum()),
                                      totals_refusal(design) is not None)
    return DesignEstimates("ratio", numerator.question, numerator.labels, est, cov,
                           int(d.sum()), float(wd.sum()), method, design.describe(),
                           confidence, privacy, srs, df=degrees_of_freedom(design, variance),
                           quantile=quantile, hidden_variance=added, srs_std_error=srs_se)


def srs_factor(weight_sum: float, count: int, relative: bool) -> float:
    """The finite-population factor of the simple-random-sample baseline V_srs: 1 − n/N̂
    with N̂ = Σ w (R's `deff = TRUE`: (psum − nobs)/psum) when the weights count a population
    and N̂ > n; 1 (R's `deff = "replace"`, sampling with replacement) for `relative` weights
    (`totals_refusal`: weights rescaled to mean 1, or every respondent counting 1), whose Σ w
    is about n, so 1 − n/N̂ would be about 0 and the deff would explode (107 against 1.5 with
    the same weights scaled to the population)."""
    if relative or weight_sum <= count:
        return 1.0
    return (weight_sum - count) / weight_sum


def _ratio_srs_variance(design: Design, residual: np.ndarray, noise: np.ndarray,
                        wd: np.ndarray, base: float, count: int, relative: bool
                        ) -> tuple[np.ndarray, np.ndarray]:
    """A ratio's variance from a simple random sample of `count` TRUE answers, as R's
    `svyratio(deff = TRUE)` takes it: the SRS variance of the total of its influence values
    r_i = (z_i − R x_i)/Σ w x, N̂²·(1 − n/N̂)·S_r²/n, with S_r² the weighted variance of r
    (× n/(n − 1)) less the residuals' mean randomization variance (`noise`/(Σ w x)²), the
    factor (1 − n/N̂) as `srs_factor` takes it; with its s.e. (`_spread_std_error`)."""
    weight_sum = float(wd.sum())
    r = residual / base
    centre = (wd @ r) / weight_sum
    spread = np.maximum((wd @ (r * r)) / weight_sum - centre * centre, 0.0)
    inflation = count / (count - 1) if count > 1 else 1.0
    answers = (spread * count / (count - 1) if count > 1 else spread) - (
        wd @ noise) / (base * base * weight_sum)
    correction = srs_factor(weight_sum, count, relative)
    scale = correction * weight_sum**2 / count
    se = _spread_std_error(design, r, noise / (base * base), centre, inflation, answers, wd,
                           weight_sum)
    return answers * correction * weight_sum**2 / count, se * scale


def _spread_std_error(design: Design, values: np.ndarray, noise: np.ndarray | None,
                      centre: np.ndarray, inflation: float, spread: np.ndarray,
                      wd: np.ndarray, weight_sum: float) -> np.ndarray:
    """The s.e. of Ŝ² = Σ w u / Σ w, u_i = (z_i − centre)²·inflation − V̂_i (each respondent's
    squared deviation less their randomization variance), over the design: the ultimate
    cluster variance of its influence values w_i (u_i − Ŝ²)/Σ w, summed by PSU one column at
    a time (no (n, m) temporaries: about 10% more time for `estimate` at 10^6 rows, where an
    (n, m) influence matrix doubled it). Calibration is left aside: an approximation for the
    deff's interval only."""
    p, m = design.psu_count, values.shape[1]
    weights = np.bincount(design.psus, weights=wd, minlength=p)
    totals = np.empty((p, m))
    for j in range(m):  # one column at a time: no (n, m) temporaries
        deviation = values[:, j] - centre[j]
        u = deviation * deviation * inflation
        if noise is not None:  # None: no randomization (a disclosed answer)
            u -= noise[:, j]
        totals[:, j] = (np.bincount(design.psus, weights=u * wd, minlength=p)
                        - spread[j] * weights) / weight_sum
    return np.sqrt(np.maximum(np.diag(covariance_of_totals(design, totals)), 0.0))


@dataclass(frozen=True)
class _SrsBaseline:
    """What the SRS baseline of a mean and of a total share (`_srs_variance`)."""

    answers: np.ndarray  # the answers' variance: the pseudo-values' less the randomization's
    std_error: np.ndarray  # its s.e. (`_spread_std_error`)


def _lookup_randomization_terms(coefficients: np.ndarray, lookup: Lookup,
                                row_fractions: np.ndarray | None
                                ) -> tuple[np.ndarray, np.ndarray]:
    """`randomization_terms` of a lookup's noise: the sums of a_i² (and c_h·a_i²) per report
    value, times the noise table (`row_fractions`: each row's c_h, None where all are 0)."""
    a2 = np.asarray(coefficients, dtype=np.float64) ** 2
    privacy = lookup.sums(a2) @ lookup.noise_table
    if row_fractions is None:
        return np.zeros_like(privacy), privacy
    return lookup.sums(a2 * row_fractions) @ lookup.noise_table, privacy


def _srs_baseline(design: Design, pv: PseudoValues, wd: np.ndarray, weight_sum: float,
                  count: int, totals: np.ndarray, by_value: np.ndarray | None) -> _SrsBaseline:
    """The answers' variance estimated as the pseudo-values' minus the mean randomization
    variance (module docstring), with its s.e. (`by_value`: a lookup's sums of wd per report
    value, which the totals were made of; None without a lookup)."""
    centre = totals / weight_sum
    lookup = pv.rows
    if lookup is not None:  # per report value: the totals' sums, one bincount by PSU
        assert by_value is not None
        squares = by_value @ (lookup.table * lookup.table)
        spread = np.maximum(squares / weight_sum - centre * centre, 0.0)
        inflation = count / (count - 1) if count > 1 else 1.0
        answers = (spread * count / (count - 1) if count > 1 else spread) - (
            0.0 if pv.disclosed else (by_value @ lookup.noise_table) / weight_sum)
        deviation = lookup.table - centre
        u = deviation * deviation * inflation
        if not pv.disclosed:
            u -= lookup.noise_table
        p = design.psu_count
        weights = np.bincount(design.psus, weights=wd, minlength=p)
        psu_totals = (lookup.sums_times(wd, design.psus, p, u) - np.outer(weights, answers)) \
            / weight_sum
        se = np.sqrt(np.maximum(np.diag(covariance_of_totals(design, psu_totals)), 0.0))
        return _SrsBaseline(answers, se)
    squares = np.einsum("i,ij,ij->j", wd, pv.values, pv.values)
    spread = np.maximum(squares / weight_sum - centre * centre, 0.0)
    inflation = count / (count - 1) if count > 1 else 1.0
    noise = None if pv.disclosed else pv.noise  # a disclosed answer's are zeros
    answers = (spread * count / (count - 1) if count > 1 else spread) - (
        0.0 if noise is None else (wd @ noise) / weight_sum)
    se = _spread_std_error(design, pv.values, noise, centre, inflation, answers, wd,
                           weight_sum)
    return _SrsBaseline(answers, se)


def _srs_variance(baseline: _SrsBaseline, weight_sum: float, count: int, statistic: str,
                  relative: bool) -> tuple[np.ndarray, np.ndarray]:
    """Variance of the same estimate from a simple random sample of `count` TRUE answers
    (R's deff convention: (1 − n/N̂) when N̂ = Σ w > n, none for `relative` weights:
    `srs_factor`), with its s.e."""
    correction = srs_factor(weight_sum, count, relative)
    per = baseline.answers * correction / count
    scale = correction / count
    if statistic == "total":
        per = per * weight_sum**2
        scale = scale * weight_sum**2
    return per, baseline.std_error * scale


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
