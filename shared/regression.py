"""Regression on randomized answers, by maximum likelihood through the known channel.

Logistic regression of a binary outcome Y (for a categorical outcome, one option against the
rest) on covariates, where the server holds only a randomized report of Y. Each outcome report
is reduced to a symbol s with a known 2 x S channel B[y][s] = P(s | Y = y) (the mechanism's
exact channel; shared/regression_data.py builds it), so

    P(s_i | x_i) = B[0, s_i] + (B[1, s_i] - B[0, s_i]) · σ(x_i β)

(Magder & Hughes 1997; the same model as RRreg's RRlog and rr's rrreg). Up to two covariates may
themselves be randomized categorical answers V with index reports r and channel A[v][r]: the
true V is latent, its distribution over the joint cells of the latent covariates given the
disclosed ones, π_c(x) (a multinomial logit on x: the randomized covariates may depend on the
disclosed ones, as drug use depends on age), is estimated with the coefficients, and

    P(s_i, r_i | x_i) = Σ_c π_c(x_i) · Π_j A_j[c_j, r_ij] · P(s_i | x_i, c).

Fitting: EM iterations (the E-step's posterior over (cell, Y); as the M-step one weighted IRLS
step and one Newton step of the cells' multinomial logit: a generalized EM) from a neutral
start, then Newton steps on the observed log-likelihood with step halving. Standard errors come
from the observed information (the analytic Hessian; with latent covariates by Louis's
identity, checked against central differences of the analytic gradient in the tests).
`se_inflation` is the standard error divided by the one the same fit would have on the true
answers (the complete-data information at the estimate): the price of privacy per coefficient.

Linear regression of an integer outcome (with disclosed and randomized covariates) is in
shared/regression_linear.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np

from .distributions import incomplete_beta, t_value
from .errors import AnalysisError
from .estimates import finite_or_none
from .mechanisms.base import JointReading

MAX_EM = 5  # a robust start; Newton finishes (EM alone crawls when the channel is noisy)
MAX_NEWTON = 50
# with latent covariates a Newton step costs (cells)² products over the rows plus a solve in the
# parameters: this keeps a fit on 10^5 submissions to seconds (one 10-option covariate with 9
# disclosed columns: 99 parameters, ~10 s)
MAX_LATENT_PARAMETERS = 150
TOLERANCE = 1e-9  # on the Newton decrement (log-likelihood units) and EM's relative change
# "too noisy to say": an interval that includes no effect and reaches past a halving or a
# doubling of the odds (odds ratio below 1/2 or above 2: an effect that large in either
# direction still fits the data); for a linear slope, past -R/10 or R/10 for an outcome range R.
# "no clear effect" is what remains: the interval includes no effect and stays within them.
NOISY_ODDS = math.log(2.0)
# The name of the intercept column: it gets no verdict (it is the reference group's level, not
# an effect, so "higher" or "no clear effect" would say nothing an analyst asked).
INTERCEPT = "(intercept)"


@dataclass
class Coefficient:
    """One coefficient with its standard error, test, interval and plain-language verdict."""

    name: str
    estimate: float
    std_error: float | None
    z: float | None
    p_value: float | None
    ci_low: float | None
    ci_high: float | None
    odds_ratio: float | None = None
    or_low: float | None = None
    or_high: float | None = None
    se_inflation: float | None = None
    verdict: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {k: (v if k in ("name", "verdict") else finite_or_none(v))
                for k, v in asdict(self).items()}


@dataclass
class RegressionResult:
    """A fitted regression: what an analyst reads (table, JSON, CSV, forest plot)."""

    kind: str                       # "logistic" or "linear"
    outcome: str
    outcome_level: str | None       # the option modelled against the rest (logistic)
    n: int                          # submissions used (answering outcome and every covariate)
    n_dropped: int                  # submissions missing the outcome or a covariate
    confidence: float
    converged: bool
    iterations: int
    log_likelihood: float | None
    coefficients: list[Coefficient]
    notes: list[str] = field(default_factory=list)
    # design-based fits: the residual degrees of freedom of the t intervals and p-values
    # (R's svyglm: degf + 1 - coefficients); None: the normal quantile
    df: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "outcome": self.outcome, "outcome_level": self.outcome_level,
                "n": self.n, "n_dropped": self.n_dropped, "confidence": self.confidence,
                "converged": self.converged, "iterations": self.iterations,
                "log_likelihood": finite_or_none(self.log_likelihood),
                "coefficients": [c.to_dict() for c in self.coefficients],
                "notes": list(self.notes)}


@dataclass
class LatentCovariate:
    """A randomized categorical covariate: report indices and its channel A[v][r]."""

    name: str
    labels: Sequence[str]
    reports: np.ndarray     # int report index per respondent
    channel: np.ndarray     # k x m, P(report r | answer v) (or proportional to it in each column)
    indicator: np.ndarray | None = None  # k x m, the mechanism's unbiased estimator rows M[v][r]


def support_bit_covariate(name: str, labels: Sequence[str], bits: np.ndarray,
                          ratio: float) -> LatentCovariate:
    """A randomized covariate whose reports are support bits (oue, sue, ss, olh), as report
    indices and a relative channel. For these mechanisms a report's likelihood is, up to a
    factor of the report alone, ratio^[report supports v], with ratio the mechanism's exact
    worst-case ratio: oue and sue are products over independent bits (bit v is 1 with p, the
    others with q: ratio p(1 - q)/(q(1 - p))); ss draws its set Z with P(Z | v) = r/D or 1/D;
    olh puts the hashed bucket through GRR (p'/q' = r). The likelihood sums over the latent
    value only through ratios between values, so the report's own factor cancels (it shifts the
    log-likelihood by a constant). Each distinct bit pattern becomes one report index whose
    channel column holds those relative likelihoods."""
    patterns, index = np.unique(np.asarray(bits, dtype=np.int8), axis=0, return_inverse=True)
    channel = np.power(float(ratio), patterns.T.astype(float))  # k x (distinct patterns)
    return LatentCovariate(name, labels, index.reshape(-1), channel)


def expit(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


class _Model:
    """The observed-data log-likelihood of the logistic model and its derivatives."""

    def __init__(self, x: np.ndarray, symbols: np.ndarray, outcome_channel: np.ndarray,
                 latent: Sequence[LatentCovariate], counts: np.ndarray | None = None) -> None:
        self.x = np.ascontiguousarray(x, dtype=float)
        self.n, self.p = self.x.shape
        # how many respondents share each row (identical covariates and reports): every sum
        # over respondents is a sum over rows weighted by these
        self.count = np.ones(self.n) if counts is None else np.asarray(counts, dtype=float)
        b = np.asarray(outcome_channel, dtype=float)
        self.b0 = b[0, symbols]
        self.delta = b[1, symbols] - self.b0
        sizes = [len(c.labels) for c in latent]
        self.cells = [tuple(int(i) for i in idx) for idx in np.ndindex(*sizes)] if latent \
            else [()]
        self.c = len(self.cells)
        # D: the dummy columns (first option as reference) of each latent cell
        self.q = sum(s - 1 for s in sizes)
        self.d = np.zeros((self.c, self.q))
        for ci, cell in enumerate(self.cells):
            offset = 0
            for j, v in enumerate(cell):
                if v > 0:
                    self.d[ci, offset + v - 1] = 1.0
                offset += sizes[j] - 1
        # R[i, c] = Π_j P(r_ij | v = c_j)
        self.r = np.ones((self.n, self.c))
        for ci, cell in enumerate(self.cells):
            for j, cov in enumerate(latent):
                self.r[:, ci] *= np.asarray(cov.channel, dtype=float)[cell[j], cov.reports]
        # the latent cells' distribution given x: a multinomial logit on all of x's columns
        # (cell 0 the reference), α of shape (C - 1) x p
        self.k_params = self.p + self.q + (self.c - 1) * self.p

    def split(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(β, γ, π) with π[i, c] = P(latent cell c | x_i)."""
        beta, gamma = theta[:self.p], theta[self.p:self.p + self.q]
        if self.c == 1:
            return beta, gamma, np.ones((self.n, 1))
        alpha = theta[self.p + self.q:].reshape(self.c - 1, self.p)
        logits = np.hstack([np.zeros((self.n, 1)), self.x @ alpha.T])
        pi = np.exp(logits - logits.max(axis=1, keepdims=True))
        return beta, gamma, pi / pi.sum(axis=1, keepdims=True)

    def _state(self, theta: np.ndarray) -> tuple[np.ndarray, ...]:
        beta, gamma, pi = self.split(theta)
        eta = (self.x @ beta)[:, None] + (self.d @ gamma)[None, :]
        mu = expit(eta)
        f = self.b0[:, None] + self.delta[:, None] * mu
        w = pi * self.r
        likelihood = np.maximum((w * f).sum(axis=1), 1e-300)
        return pi, mu, f, w, likelihood

    def loglik(self, theta: np.ndarray) -> float:
        return float(self.count @ np.log(self._state(theta)[-1]))

    def gradient(self, theta: np.ndarray) -> np.ndarray:
        pi, mu, f, w, likelihood = self._state(theta)
        g = w * (self.count * self.delta / likelihood)[:, None] * mu * (1 - mu)  # n x C
        grad_beta = self.x.T @ g.sum(axis=1)
        grad_gamma = self.d.T @ g.sum(axis=0)
        share = (w * f) / likelihood[:, None]  # posterior of the cell
        grad_alpha = ((share - pi)[:, 1:] * self.count[:, None]).T @ self.x
        return np.concatenate([grad_beta, grad_gamma, grad_alpha.reshape(-1)])

    def row_scores(self, theta: np.ndarray) -> np.ndarray:
        """(n, parameters): each row's term of `gradient` (its count included); they sum to the
        gradient. A design-based sandwich takes them per PSU (shared/design/regression.py)."""
        pi, mu, f, w, likelihood = self._state(theta)
        g = w * (self.count * self.delta / likelihood)[:, None] * mu * (1 - mu)  # n x C
        share = (w * f) / likelihood[:, None]
        alpha = ((share - pi)[:, 1:] * self.count[:, None])[:, :, None] * self.x[:, None, :]
        return np.hstack([self.x * g.sum(axis=1)[:, None], g @ self.d,
                          alpha.reshape(self.n, -1)])

    def hessian(self, theta: np.ndarray) -> np.ndarray:
        if self.c == 1:  # analytic: ℓ_i = log(b0 + Δ μ)
            _, mu, _f, _, likelihood = self._state(theta)
            slope = self.delta * (mu[:, 0] * (1 - mu[:, 0]))
            second = slope * (1 - 2 * mu[:, 0]) / likelihood - (slope / likelihood) ** 2
            return (self.x * (self.count * second)[:, None]).T @ self.x
        return -self._louis_information(theta)

    def difference_hessian(self, theta: np.ndarray) -> np.ndarray:
        """Central differences of the analytic gradient (a check on the analytic Hessian)."""
        h = np.zeros((self.k_params, self.k_params))
        for j in range(self.k_params):
            step = 1e-5 * max(1.0, abs(theta[j]))
            up, down = theta.copy(), theta.copy()
            up[j] += step
            down[j] -= step
            h[:, j] = (self.gradient(up) - self.gradient(down)) / (2 * step)
        return (h + h.T) / 2

    def _louis_information(self, theta: np.ndarray) -> np.ndarray:
        """The observed information with latent cells, by Louis's identity (1982): the
        posterior mean of the complete-data information minus the posterior covariance of the
        complete-data score, over the states (cell c, true outcome y) of each row.

        The complete-data score is (h ⊗ x, u·d_c) with u = y - μ_c and h = (u, e_c - π) (cells
        1..C-1 of e_c - π), in the order (β, α, γ); so every block is a per-row C x C (or C x q)
        matrix of posterior moments times x xᵀ (or x d_cᵀ), summed with one product per block.
        """
        pi, mu, _f, w, likelihood = self._state(theta)
        n, c, p, q = self.n, self.c, self.p, self.q
        scale = (self.count / likelihood)[:, None]
        p1 = w * (self.b0 + self.delta)[:, None] * mu * scale  # count · P(c, y = 1 | report)
        p0 = w * self.b0[:, None] * (1 - mu) * scale
        weight = self.count[:, None]
        t = (p0 + p1) / weight                                  # P(c | report)
        u1 = (p1 * (1 - mu) - p0 * mu) / weight                 # Σ_y P(c, y) u
        u2 = (p1 * (1 - mu) ** 2 + p0 * mu ** 2) / weight       # Σ_y P(c, y) u²
        var_mu = mu * (1 - mu)
        su1 = u1.sum(axis=1)
        # K_i = complete information - score covariance, on the h ⊗ x block
        k = np.zeros((n, c, c))
        k[:, 0, 0] = (t * var_mu).sum(axis=1) - u2.sum(axis=1) + su1 ** 2
        k[:, 0, 1:] = -(u1[:, 1:] - su1[:, None] * t[:, 1:])
        k[:, 1:, 0] = k[:, 0, 1:]
        tail_pi, tail_t = pi[:, 1:], t[:, 1:]
        k[:, 1:, 1:] = (np.einsum("na,ab->nab", tail_pi - tail_t, np.eye(c - 1))
                        - tail_pi[:, :, None] * tail_pi[:, None, :]
                        + tail_t[:, :, None] * tail_t[:, None, :])
        size = c * p + q
        info = np.zeros((size, size))
        for a in range(c):
            for b in range(a, c):
                block = (self.x * (self.count * k[:, a, b])[:, None]).T @ self.x
                info[a * p:(a + 1) * p, b * p:(b + 1) * p] = block
                info[b * p:(b + 1) * p, a * p:(a + 1) * p] = block.T
        if q:
            m_d = u1 @ self.d                                    # n x q
            cross = np.zeros((n, c, q))
            cross[:, 0, :] = (t * var_mu) @ self.d - (u2 @ self.d - su1[:, None] * m_d)
            cross[:, 1:, :] = -(u1[:, 1:, None] * self.d[None, 1:, :]
                                - t[:, 1:, None] * m_d[:, None, :])
            for a in range(c):
                block = self.x.T @ (cross[:, a, :] * self.count[:, None])
                info[a * p:(a + 1) * p, c * p:] = block
                info[c * p:, a * p:(a + 1) * p] = block.T
            diag = self.count @ (t * var_mu - u2)
            info[c * p:, c * p:] = (self.d.T * diag) @ self.d + (m_d.T * self.count) @ m_d
        order = [*range(p), *range(c * p, size), *range(p, c * p)]  # (β, α, γ) -> (β, γ, α)
        return info[np.ix_(order, order)]

    def em_step(self, theta: np.ndarray) -> np.ndarray:
        """One generalized EM step: the posterior over (cell, Y), then one Newton step of the
        weighted multinomial logit of the cells on x, and one IRLS step of the weighted logistic
        regression on (x, cell)."""
        pi, mu, _f, w, likelihood = self._state(theta)
        b1 = self.b0 + self.delta
        scale = (self.count / likelihood)[:, None]
        q1 = w * b1[:, None] * mu * scale
        q0 = w * self.b0[:, None] * (1 - mu) * scale
        weight = q0 + q1
        dim = self.p + self.q
        grad = np.zeros(dim)
        info = np.zeros((dim, dim))
        for ci in range(self.c):
            z = np.hstack([self.x, np.broadcast_to(self.d[ci], (self.n, self.q))])
            resid = q1[:, ci] - weight[:, ci] * mu[:, ci]
            grad += z.T @ resid
            info += (z * (weight[:, ci] * mu[:, ci] * (1 - mu[:, ci]))[:, None]).T @ z
        step = _solve(info, grad)
        new = theta.copy()
        new[:dim] += step if step is not None else 0.0
        if self.c > 1:
            alpha_step = self._cells_step(pi, weight)
            if alpha_step is not None:
                new[dim:] += alpha_step
        return new

    def _cells_step(self, pi: np.ndarray, weight: np.ndarray) -> np.ndarray | None:
        """The Newton step of Σ_i Σ_c weight_ic log π_c(x_i; α) (concave in α): gradient
        (weight - count·π)ᵀx, information Σ_i count_i (diag π_i - π_i π_iᵀ) ⊗ x_i x_iᵀ."""
        k, p = self.c - 1, self.p
        grad = (weight[:, 1:] - self.count[:, None] * pi[:, 1:]).T @ self.x  # k x p
        info = np.zeros((k * p, k * p))
        for a in range(k):  # block by block: memory stays O(n p)
            for b in range(a, k):
                w = self.count * ((a == b) * pi[:, a + 1] - pi[:, a + 1] * pi[:, b + 1])
                block = (self.x * w[:, None]).T @ self.x
                info[a * p:(a + 1) * p, b * p:(b + 1) * p] = block
                info[b * p:(b + 1) * p, a * p:(a + 1) * p] = block.T
        return _solve(info, grad.reshape(-1))

    def complete_information(self, theta: np.ndarray) -> np.ndarray:
        """Information about (β, γ) had the true answers been reported: Σ μ(1-μ) z zᵀ, averaged
        over the posterior of the latent cells."""
        _pi, mu, f, w, likelihood = self._state(theta)
        share = (w * f) * (self.count / likelihood)[:, None]
        dim = self.p + self.q
        info = np.zeros((dim, dim))
        for ci in range(self.c):
            z = np.hstack([self.x, np.broadcast_to(self.d[ci], (self.n, self.q))])
            info += (z * (share[:, ci] * mu[:, ci] * (1 - mu[:, ci]))[:, None]).T @ z
        return info


def collapse(x: np.ndarray, symbols: np.ndarray, latent: Sequence[LatentCovariate]
             ) -> tuple[np.ndarray, np.ndarray, list[LatentCovariate], np.ndarray]:
    """Respondents with the same covariates and the same reports contribute the same term to
    the likelihood: keep one row per distinct (x, outcome symbol, latent reports) with its count.
    Disclosed categorical covariates leave few distinct rows (10^6 respondents of the bench:
    ~3,500), so the fit's cost stops growing with n; rows are kept as they are when collapsing
    would not halve them."""
    n = len(symbols)
    code, size = np.zeros(n, dtype=np.int64), 1
    for column in (*x.T, symbols, *[c.reports for c in latent]):  # one mixed-radix row code
        values, index = np.unique(column, return_inverse=True)
        if size * len(values) > 2 ** 62:  # renumber the distinct codes so far: 0..size-1
            seen, code = np.unique(code, return_inverse=True)
            code, size = code.reshape(-1).astype(np.int64), len(seen)
        code = code * len(values) + index.reshape(-1)
        size *= len(values)
    _, first, counts = np.unique(code, return_index=True, return_counts=True)
    if len(first) * 2 > n:
        return x, symbols, list(latent), np.ones(n)
    return (x[first], symbols[first],
            [replace(c, reports=c.reports[first]) for c in latent],
            counts.astype(float))


def _solve(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray | None:
    try:
        return np.linalg.solve(matrix, vector)
    except np.linalg.LinAlgError:
        return None


def fit_logistic(x: np.ndarray, names: Sequence[str], symbols: np.ndarray,
                 outcome_channel: np.ndarray, *, outcome: str, outcome_level: str | None,
                 latent: Sequence[LatentCovariate] = (), confidence: float = 0.95,
                 n_dropped: int = 0, latent_names: Sequence[str] = (),
                 weights: np.ndarray | None = None,
                 variance: Callable[[np.ndarray], np.ndarray] | None = None,
                 design_df: int | None = None) -> RegressionResult:
    """Maximum likelihood logistic regression through the outcome's (and latent covariates')
    channel. `x` holds an intercept column; `names` names x's columns.

    Survey weights (shared/design/regression.py): `weights` (one per row) make it a
    pseudo-likelihood fit (each row's log-likelihood weighted, rescaled to mean 1 as R's
    svyglm does), and `variance` maps the rows' influence values (n, parameters) to their
    design-based covariance: the sandwich replaces the model-based standard errors.
    `design_df` (the design's degrees of freedom, R's degf): intervals and p-values use t
    with the residual df `residual_df` (R's svyglm); None: the normal quantile."""
    n = len(symbols)
    k_params = (len(names) + sum(len(c.labels) - 1 for c in latent)
                + (math.prod(len(c.labels) for c in latent) - 1) * len(names))
    if n <= k_params:
        raise AnalysisError(f"{n} complete submissions cannot fit {k_params} parameters")
    if latent and k_params > MAX_LATENT_PARAMETERS:
        cells = math.prod(len(c.labels) for c in latent)
        raise AnalysisError(
            f"with randomized covariates this model has {k_params} parameters, of which "
            f"{(cells - 1) * len(names)} describe how the {cells} combinations of their answers "
            f"depend on the {len(names)} disclosed columns; at most {MAX_LATENT_PARAMETERS} "
            "(the fit's cost grows fast with them): use fewer options or covariates")
    if weights is None:
        x, symbols, latent, counts = collapse(x, np.asarray(symbols, dtype=np.int64), latent)
    else:  # rows stay apart: each belongs to its own PSU in the sandwich
        counts = np.asarray(weights, dtype=float) / float(np.mean(weights))
        symbols = np.asarray(symbols, dtype=np.int64)
    model = _Model(x, symbols, outcome_channel, latent, counts)
    theta = np.zeros(model.k_params)
    if model.c > 1:  # start the latent cells at their channel-inverted shares
        theta[model.p + model.q:] = 0.0
    previous = model.loglik(theta)
    iterations = 0
    for _ in range(MAX_EM):
        iterations += 1
        candidate = model.em_step(theta)
        value = model.loglik(candidate)
        if not math.isfinite(value):
            break
        theta, done = candidate, abs(value - previous) <= TOLERANCE * max(1.0, abs(value)) * 1e3
        previous = value
        if done:
            break
    converged = False
    for _ in range(MAX_NEWTON):
        iterations += 1
        grad = model.gradient(theta)
        hess = model.hessian(theta)
        step = _solve(-hess, grad)
        if step is None:
            break
        decrement = float(grad @ step)
        if decrement < 0:  # not a concave region: fall back to an EM step
            theta = model.em_step(theta)
            continue
        if decrement / 2 <= TOLERANCE:
            theta = theta + step  # near the maximum a full step squares the error, for free
            converged = True
            break
        base, t = model.loglik(theta), 1.0
        while t > 1e-8 and not model.loglik(theta + t * step) >= base:
            t /= 2
        theta = theta + t * step
    info = -model.hessian(theta)
    covariance = _inverse_pd(info)
    if covariance is None:
        converged = False
    complete = _inverse_pd(model.complete_information(theta))
    if variance is not None and covariance is not None:
        # the sandwich; se_inflation keeps comparing the model-based variances (privacy alone)
        model_based = covariance
        covariance = variance(model.row_scores(theta) @ model_based)
        if complete is not None:  # (β, γ) only: the latent cells' logit has no complete-data twin
            m = complete.shape[0]
            complete = complete * (np.diag(covariance)[:m] / np.diag(model_based)[:m])[None, :]
    loglik = model.loglik(theta)
    all_names = [*names, *latent_names]
    df = residual_df(design_df, len(all_names))
    z = t_value(confidence, df)
    coefficients = []
    for j, name in enumerate(all_names):
        var = None if covariance is None else covariance[j, j]
        full = None if complete is None else complete[j, j]
        coefficients.append(_coefficient(name, float(theta[j]), var, z, odds=True,
                                         complete_var=full, noisy=NOISY_ODDS, df=df))
    notes = []
    if not converged:
        notes.append("the fit did not converge (or the information matrix is singular): the "
                     "data cannot separate these coefficients; standard errors are not given")
    if latent:
        _, _, pi = model.split(theta)
        shares = model.count @ pi / model.count.sum()  # averaged over the respondents
        notes.append("randomized covariates: " + ", ".join(c.name for c in latent)
                     + (" enter " if len(latent) > 1 else " enters ")
                     + "through their channel (their true answers' distribution estimated "
                     "jointly, as a multinomial logit on the disclosed covariates); estimated "
                     "cell shares "
                     + ", ".join(f"{'/'.join(str(latent[j].labels[v]) for j, v in enumerate(c))}"
                                 f" {p:.3f}" for c, p in zip(model.cells, shares, strict=True)))
    return RegressionResult("logistic", outcome, outcome_level, n, n_dropped, confidence,
                            converged, iterations, loglik, coefficients, notes, df)


def residual_df(design_df: int | None, coefficients: int) -> int | None:
    """The residual degrees of freedom of a design-based fit's t intervals and p-values, as
    R's svyglm sets df.residual: the design's df (degf) + 1 - the model's coefficients; None
    (the normal quantile) without a design df. Refused when none is left (R's confint gives
    NaN intervals then)."""
    if design_df is None:
        return None
    df = design_df + 1 - coefficients
    if df < 1:
        raise AnalysisError(f"the design has {design_df} degrees of freedom and the model "
                            f"{coefficients} coefficients: no residual degrees of freedom "
                            "for t intervals (degf + 1 - coefficients, as R's svyglm); fit "
                            "fewer coefficients or use --interval-quantile normal")
    return df


def _inverse_pd(matrix: np.ndarray) -> np.ndarray | None:
    """The inverse of a positive definite matrix, or None."""
    try:
        np.linalg.cholesky(matrix)
        return np.linalg.inv(matrix)
    except np.linalg.LinAlgError:
        return None


def verdict(low: float, high: float, noisy: float, *, odds: bool) -> str:
    """The plain-language reading of an interval [low, high] of a log odds ratio (`odds`) or a
    slope: its direction when it excludes 0; "too noisy to say" when it includes 0 and reaches
    past ±`noisy` (for odds ln 2: below a halving or above a doubling); else "no clear effect"
    (it includes 0 and is narrow)."""
    if low > 0:
        return "higher" if odds else "positive"
    if high < 0:
        return "lower" if odds else "negative"
    if low < -noisy or high > noisy:
        return "too noisy to say"
    return "no clear effect"


def _coefficient(name: str, estimate: float, variance: float | None, z: float, *, odds: bool,
                 complete_var: float | None, noisy: float,
                 df: float | None = None) -> Coefficient:
    """One coefficient's row: interval estimate ± z s.e. (z: t with `df` for a design-based
    fit), p-value from the normal or (with `df`) Student's t."""
    if variance is None or not math.isfinite(variance) or variance <= 0:
        return Coefficient(name, estimate, None, None, None, None, None,
                           math.exp(estimate) if odds and abs(estimate) < 700 else None,
                           verdict="" if name == INTERCEPT else "too noisy to say")
    se = math.sqrt(variance)
    stat = estimate / se
    p_value = (math.erfc(abs(stat) / math.sqrt(2)) if df is None
               else incomplete_beta(df / 2.0, 0.5, df / (df + stat * stat)))
    low, high = estimate - z * se, estimate + z * se
    reading = "" if name == INTERCEPT else verdict(low, high, noisy, odds=odds)
    inflation = (se / math.sqrt(complete_var) if complete_var is not None and complete_var > 0
                 else None)
    if odds:
        return Coefficient(name, estimate, se, stat, p_value, low, high, _exp(estimate),
                           _exp(low), _exp(high), inflation, reading)
    return Coefficient(name, estimate, se, stat, p_value, low, high, se_inflation=inflation,
                       verdict=reading)


def _exp(x: float) -> float | None:
    return math.exp(x) if x < 700 else None


def outcome_channel(mechanism: Any, level: int) -> tuple[str, np.ndarray]:
    """How an outcome report becomes a symbol, and the 2 x S channel P(symbol | Y) with
    Y = 1[answer = level]: ("index", B) when the symbol is the report index (k = 2) or
    1[report = level]; ("support", B) when it is the report's support bit of `level`."""
    if mechanism.joint_reports == JointReading.INDEX:
        a, _ = mechanism.index_channel()
        if mechanism.k == 2:
            return "index", np.vstack([a[1 - level], a[level]])
        column = a[:, level] if a.shape[1] > level else None
        others = None if column is None else np.delete(column, level)
        if others is None or not np.allclose(others, others[0], rtol=0, atol=1e-15):
            raise AnalysisError(f"{mechanism.name}'s reports of other options do not report "
                                f"{level} equally often: one-vs-rest needs a symmetric channel")
        a0, a1 = float(others[0]), float(column[level])
        return "hit", np.array([[1 - a0, a0], [1 - a1, a1]])
    if mechanism.joint_reports == JointReading.SUPPORT_BITS:
        p, q = float(mechanism.p_star), float(mechanism.q_star)  # type: ignore[attr-defined]
        return "support", np.array([[1 - q, q], [1 - p, p]])
    raise AnalysisError(f"no regression through mechanism {mechanism.name!r}")
