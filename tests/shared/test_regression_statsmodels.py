"""ldpsurvey's regressions against statsmodels (the reference the issue names), on simulated
surveys (seeded numpy).

- Through an identity channel the logistic likelihood is the plain one: the fit equals
  statsmodels' `Logit` (coefficients and standard errors from the same observed information)
  to 1e-6; both stop at a gradient ~1e-9, far below that.
- At ε = 12 (binary_rr: a report flips with probability δ = 1/(1 + e¹²) = 6.1e-6) the fit on
  the randomized reports matches `Logit` on the true answers. In this seeded survey no report
  flipped (asserted), so the only difference is the channel's δ in the likelihood,
  P(s | x) = δ + (1 - 2δ)μ: it moves each score term by at most δ/(μ(1 - μ)) relative, and
  here μ ∈ [0.03, 0.97] (asserted), so by at most 35δ = 2e-4; through the information matrix
  (whose inverse has entries below 5/n here) the coefficients move by far less than 1e-3,
  3% of their standard errors (~0.04), which is the tolerance; standard errors within 1e-3
  relative by the same bound.
- Linear: with no noise (a disclosed integer outcome) `fit_linear` is statsmodels' `OLS` with
  its classical standard errors, to 1e-8; with negligible geometric noise (ε = 50 on 0..3,
  noise variance 1.2e-7) it matches `OLS` on the true answers: the difference is least squares
  of the noise, within Z = 4.5 of its standard deviation sqrt(σ²_N (XᵀX)⁻¹_jj) plus 1e-9.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import statsmodels.api as sm
from ldpsurvey.shared.mechanisms.binary_rr import BinaryRR
from ldpsurvey.shared.mechanisms.geometric import Geometric
from ldpsurvey.shared.regression import expit, fit_logistic
from ldpsurvey.shared.regression_linear import fit_linear

Z = 4.5
NAMES = ["(intercept)", "male", "age10"]
BETA = np.array([-0.6, 0.7, -0.3])


def simulate(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    x = np.column_stack([np.ones(n), rng.integers(0, 2, n), rng.normal(0, 1, n)])
    return x, (rng.random(n) < expit(x @ BETA)).astype(np.int64)


def test_identity_channel_equals_statsmodels_logit() -> None:
    x, y = simulate(np.random.default_rng(41), 4000)
    fit = fit_logistic(x, NAMES, y, np.eye(2), outcome="y", outcome_level="yes")
    ref = sm.Logit(y, x).fit(disp=0, method="newton", tol=1e-12, maxiter=100)
    assert fit.converged
    assert [c.estimate for c in fit.coefficients] == pytest.approx(ref.params.tolist(),
                                                                   abs=1e-6)
    assert [c.std_error for c in fit.coefficients] == pytest.approx(ref.bse.tolist(), rel=1e-6)
    assert fit.log_likelihood == pytest.approx(ref.llf, abs=1e-6)


def test_epsilon_12_reports_match_statsmodels_logit_on_the_true_answers() -> None:
    rng = np.random.default_rng(42)
    x, y = simulate(rng, 5000)
    mech = BinaryRR(12.0, question_id="y")
    reports = mech.perturb_many(y, rng)  # simulation: seeded numpy
    assert np.array_equal(reports, y)  # no flip in this survey (expected 0.03 flips)
    channel, _ = mech.index_channel()
    assert channel[0, 1] == pytest.approx(1 / (1 + math.exp(12)))
    fit = fit_logistic(x, NAMES, reports, channel, outcome="y", outcome_level="yes")
    ref = sm.Logit(y, x).fit(disp=0, method="newton", tol=1e-12, maxiter=100)
    mu = expit(x @ ref.params)
    assert mu.min() >= 0.03 and mu.max() <= 0.97
    assert [c.estimate for c in fit.coefficients] == pytest.approx(ref.params.tolist(),
                                                                   abs=1e-3)
    assert [c.std_error for c in fit.coefficients] == pytest.approx(ref.bse.tolist(), rel=1e-3)
    assert [c.se_inflation for c in fit.coefficients] == pytest.approx([1, 1, 1], abs=1e-3)


def linear_survey(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    x = np.column_stack([np.ones(n), rng.integers(0, 2, n), rng.normal(0, 1, n)])
    y = np.clip(np.rint(1 + 0.8 * x[:, 1] + 0.4 * x[:, 2] + rng.normal(0, 0.7, n)), 0, 3)
    return x, y.astype(np.int64)


def test_noiseless_linear_equals_statsmodels_ols() -> None:
    x, y = linear_survey(np.random.default_rng(43), 3000)
    fit = fit_linear(x, NAMES, y, 0.0, outcome="y", outcome_range=3.0)
    ref = sm.OLS(y.astype(float), x).fit()
    assert [c.estimate for c in fit.coefficients] == pytest.approx(ref.params.tolist(),
                                                                   rel=1e-8, abs=1e-10)
    assert [c.std_error for c in fit.coefficients] == pytest.approx(ref.bse.tolist(), rel=1e-8)
    assert [c.p_value for c in fit.coefficients] == pytest.approx(ref.pvalues.tolist(),
                                                                  rel=1e-3, abs=1e-12)


def test_negligible_noise_linear_matches_statsmodels_ols_on_the_true_answers() -> None:
    rng = np.random.default_rng(44)
    x, y = linear_survey(rng, 3000)
    mech = Geometric(50.0, range(0, 4), question_id="y")
    noise = Geometric.noise_variance(4, 50.0)
    assert noise < 2e-7
    fit = fit_linear(x, NAMES, mech.perturb_many(y, rng), noise, outcome="y",
                     outcome_range=3.0)
    ref = sm.OLS(y.astype(float), x).fit()
    inverse = np.linalg.inv(x.T @ x)
    for j, c in enumerate(fit.coefficients):
        assert abs(c.estimate - ref.params[j]) < Z * math.sqrt(noise * inverse[j, j]) + 1e-9
        assert c.std_error == pytest.approx(ref.bse[j], rel=1e-6)
        assert c.se_inflation == pytest.approx(1.0, abs=1e-6)
