"""Linear regression of an integer outcome randomized with noise of known variance.

The outcome's report is Ỹ = Y + N with N the mechanism's noise (two-sided geometric: mean 0,
known variance σ²_N, drawn independently of everything else).

Disclosed covariates only: ordinary least squares on the reports. It is unbiased (N has mean 0
and is independent of x), its residual variance estimates σ²_e + σ²_N, so the usual OLS
standard errors already carry the noise, and `se_inflation` = sqrt((σ²_e + σ²_N)/σ²_e).

With randomized categorical covariates (at most two; server/regression.py limits them), least
squares on their reports would be biased toward no effect (attenuation: a report is a
misclassified answer). ldpsurvey fits by corrected moments instead (deconvolution: the
method-of-moments correction for measurement error whose distribution, here the channel, is
known). The regression on the true values solves E[z zᵀ] β = E[z Y] for z = (x, d(V₁), d(V₂)), d the
dummies of V against its first option. With V's channel A[v][r] = P(r | v), the unbiased
indicator estimate h(r) (E[h(r) | V = v] = e_v; the mechanism's estimator rows, or A's
pseudo-inverse; for support-bit reports (bit_v - q*)/(p* - q*)) gives, per respondent, an
unbiased estimate of each moment, because the device draws r independently of Y, of the
outcome's noise and of the other covariate's report:

    E[x d(V)ᵀ]  ← x h̃(r)ᵀ           E[d(V) d(V)ᵀ] = diag(E d(V))  ← diag(h̃(r))
    E[d(V₁) d(V₂)ᵀ] ← h̃₁(r₁) h̃₂(r₂)ᵀ     E[d(V) Y] ← h̃(r) Ỹ        (h̃ = h without its first entry)

β̂ = Â⁻¹ b̂ solves the averaged estimating equations Σ ψ_i(β) = Σ (b_i - A_i β) = 0, so its
standard errors are the M-estimation sandwich Â⁻¹ (Σ ψ_i ψ_iᵀ) Â⁻¹ (with the n/(n - p) factor
of HC1): they carry the outcome's noise, the covariates' channel and any heteroskedasticity.
No distributional assumption on V is made (unlike the logistic path's latent cells).
`se_inflation` divides each standard error by the classical OLS one the same fit would have on
the true answers, σ̂²_e · (Â⁻¹)_jj / (n - p), with σ̂²_e = mean(Ỹ²) - β̂ᵀb̂ - σ²_N the true
answers' residual variance (unbiased: E[(Ỹ - zβ)²] = σ²_e + σ²_N); it assumes homoskedastic
errors on the true answers, the classical model.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .distributions import t_value
from .errors import AnalysisError
from .regression import (
    Coefficient,
    LatentCovariate,
    RegressionResult,
    _coefficient,
    _inverse_pd,
    residual_df,
)


@dataclass
class IndicatorEstimates:
    """A randomized covariate given as each respondent's unbiased indicator estimate h(r)
    (n x k, E[h(r) | V = v] = e_v) instead of a report index and a channel: how support-bit
    reports (oue, sue, ss, olh) enter, h_v(r) = (bit_v(r) - q*)/(p* - q*)."""

    name: str
    labels: Sequence[str]
    estimates: np.ndarray


def support_estimates(bits: np.ndarray, p_star: float, q_star: float) -> np.ndarray:
    """h(r) of support-bit reports: the pure protocol's P(bit_v = 1 | V = v) = p*, q* for any
    other answer, so (bit_v - q*)/(p* - q*) has expectation 1[V = v]."""
    return (np.asarray(bits, dtype=float) - q_star) / (p_star - q_star)


def fit_linear(x: np.ndarray, names: Sequence[str], reports: np.ndarray, noise_variance: float,
               *, outcome: str, outcome_range: float, confidence: float = 0.95,
               n_dropped: int = 0,
               latent: Sequence[LatentCovariate | IndicatorEstimates] = (),
               latent_names: Sequence[str] = (), weights: np.ndarray | None = None,
               variance: Callable[[np.ndarray], np.ndarray] | None = None,
               design_df: int | None = None) -> RegressionResult:
    """Linear regression of the noisy integer reports on x (an intercept column included) and
    on the dummies of the randomized covariates in `latent` (named `latent_names`).

    Survey weights (shared/design/regression.py): `weights` weight each row's estimating
    equation (rescaled to mean 1, as R's svyglm does) and `variance` maps the rows' influence
    values (n, coefficients) to their design-based covariance, which replaces the model-based
    (OLS) or HC1 sandwich standard errors; `design_df` (R's degf) makes the intervals and
    p-values t with the residual df degf + 1 - coefficients (R's svyglm)."""
    if latent:
        return _fit_corrected(x, names, reports, noise_variance, outcome=outcome,
                              outcome_range=outcome_range, confidence=confidence,
                              n_dropped=n_dropped, latent=latent, latent_names=latent_names,
                              weights=weights, variance=variance, design_df=design_df)
    df = residual_df(design_df, len(names))
    z = t_value(confidence, df)
    x = np.asarray(x, dtype=float)
    y = np.asarray(reports, dtype=float)
    n, p = x.shape
    if n <= p:
        raise AnalysisError(f"{n} complete submissions cannot fit {p} coefficients")
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float) / np.mean(weights)
    gram = x.T @ (x * w[:, None])
    inverse = _inverse_pd(gram)
    if inverse is None:
        raise AnalysisError("the covariates are collinear (a disclosed option nobody chose, or "
                            "two covariates that always agree)")
    beta = inverse @ (x.T @ (w * y))
    residual = y - x @ beta
    s2 = float(w @ (residual * residual)) / (n - p)
    signal = s2 - noise_variance
    inflation = math.sqrt(s2 / signal) if signal > 0 else None
    covariance = s2 * inverse
    if variance is not None:  # design-based: R's svyglm(family = gaussian()) sandwich
        covariance = variance((x * (w * residual)[:, None]) @ inverse)
    coefficients = [_coefficient(name, float(beta[j]), float(covariance[j, j]), z, odds=False,
                                 complete_var=None if inflation is None
                                 else float(covariance[j, j]) / inflation ** 2,
                                 noisy=outcome_range / 10, df=df)
                    for j, name in enumerate(names)]
    notes = [f"residual variance {s2:.4g}, of which the randomization's noise is "
             f"{noise_variance:.4g} (known exactly)"
             + ("" if signal > 0 else "; the residual variance is not above the noise: the "
                                      "true answers' spread is not measurable at this n")]
    return RegressionResult("linear", outcome, None, n, n_dropped, confidence, True, 1, None,
                            coefficients, notes, df)


def indicator_rows(covariate: LatentCovariate) -> np.ndarray:
    """The m x k matrix whose row r is h(r), the unbiased estimate of the answer's indicator
    from report r: Σ_r A[v][r] h(r) = e_v. The covariate's own estimator rows when given, else
    the pseudo-inverse of its channel; refused when no such h exists (two answers report
    alike)."""
    a = np.asarray(covariate.channel, dtype=float)
    h = (np.linalg.pinv(a) if covariate.indicator is None
         else np.asarray(covariate.indicator, dtype=float).T)
    if h.shape != (a.shape[1], a.shape[0]) or not np.allclose(a @ h, np.eye(a.shape[0]),
                                                              rtol=0, atol=1e-8):
        raise AnalysisError(f"randomized covariate {covariate.name!r}: its channel cannot be "
                            "inverted (two answers are reported alike), so no unbiased "
                            "correction exists")
    return h


def _fit_corrected(x: np.ndarray, names: Sequence[str], reports: np.ndarray,
                   noise_variance: float, *, outcome: str, outcome_range: float,
                   confidence: float, n_dropped: int,
                   latent: Sequence[LatentCovariate | IndicatorEstimates],
                   latent_names: Sequence[str], weights: np.ndarray | None = None,
                   variance: Callable[[np.ndarray], np.ndarray] | None = None,
                   design_df: int | None = None) -> RegressionResult:
    """The corrected-moments fit (module docstring); with `weights`, each respondent's moment
    terms are weighted (rescaled to mean 1) and `variance` gives the design-based sandwich
    (`design_df`: t intervals, as fit_linear)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(reports, dtype=float)
    n = len(y)
    full = [np.asarray(c.estimates, dtype=float) if isinstance(c, IndicatorEstimates)
            else indicator_rows(c)[np.asarray(c.reports, dtype=np.int64)] for c in latent]  # n x k
    blocks = [f[:, 1:] for f in full]  # the dummies' estimates, first option as reference
    w = np.hstack([x, *blocks])
    p = w.shape[1]
    if n <= p:
        raise AnalysisError(f"{n} complete submissions cannot fit {p} coefficients")
    spans, start = [], x.shape[1]
    for block in blocks:
        spans.append(slice(start, start + block.shape[1]))
        start += block.shape[1]
    rw = np.ones(n) if weights is None else np.asarray(weights, dtype=float) / np.mean(weights)
    a = w.T @ (w * rw[:, None]) / n
    for span, block in zip(spans, blocks, strict=True):  # d(V)d(V)ᵀ = diag(d(V))
        a[span, span] = np.diag(rw @ block / n)
    b = w.T @ (rw * y) / n
    a_inv = _inverse_pd(a)
    if a_inv is None:
        raise AnalysisError(
            "the corrected second moments of the covariates are not positive definite: at this "
            "n the randomized covariates' channel noise swamps their spread (or an option is "
            f"(almost) never the true answer, or two covariates always agree) — {n:,} "
            "submissions cannot separate these coefficients; use fewer options or covariates, "
            "or more respondents")
    beta = a_inv @ b
    psi = w * (y - w @ beta)[:, None]  # ψ_i = b_i - A_i β, by blocks
    for span in spans:
        h, g = w[:, span], beta[span]
        psi[:, span] += h * (h @ g)[:, None] - h * g[None, :]
    if variance is None:
        meat = psi.T @ (psi * (rw * rw)[:, None]) / n
        covariance = a_inv @ meat @ a_inv / (n - p)  # HC1: n/(n - p) · A⁻¹ meat A⁻¹ / n
    else:  # design-based: each row's influence A⁻¹ψ_i w_i/n, summed over PSUs
        covariance = variance((psi * rw[:, None]) @ a_inv / n)
    sigma2 = (float(rw @ (y * y)) / n - float(beta @ b) - noise_variance) * n / (n - p)
    all_names = [*names, *latent_names]
    df = residual_df(design_df, len(all_names))
    z = t_value(confidence, df)
    coefficients: list[Coefficient] = [
        _coefficient(name, float(beta[j]), float(covariance[j, j]), z, odds=False,
                     complete_var=sigma2 * a_inv[j, j] / (n - p) if sigma2 > 0 else None,
                     noisy=outcome_range / 10, df=df)
        for j, name in enumerate(all_names)]
    shares = "; ".join(
        f"{c.name}: " + ", ".join(f"{label} {share:.3f}"
                                 for label, share in zip(c.labels, f.mean(axis=0), strict=True))
        for c, f in zip(latent, full, strict=True))
    notes = [
        "randomized covariates: " + ", ".join(c.name for c in latent)
        + (" enter" if len(latent) > 1 else " enters")
        + " by corrected moments (each report replaced by the unbiased estimate of its answer's "
        "indicator, through its channel); sandwich standard errors carry the outcome's noise "
        "and the covariates' channel; se × privacy compares with least squares on the true answers "
        f"(homoskedastic); estimated shares {shares}",
        f"the true answers' residual variance is estimated at {sigma2:.4g}; the outcome "
        f"randomization's noise variance is {noise_variance:.4g} (known exactly)"
        + ("" if sigma2 > 0 else ": the true answers' spread is not measurable at this n")]
    return RegressionResult("linear", outcome, None, n, n_dropped, confidence, True, 1, None,
                            coefficients, notes, df)
