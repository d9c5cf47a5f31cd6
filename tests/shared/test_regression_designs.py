"""Regression through the named designs and the longitudinal layer, against closed forms.

- Forced response and unrelated question (Boruch 1971; Greenberg et al. 1969): with one binary
  covariate the logistic model is saturated, so its maximum-likelihood fit is the closed-form
  estimator within each group, π̂_g = (λ̂_g - q_yes)/p, and the observed-information standard
  errors are the delta method of the textbook variance λ̂(1 - λ̂)/(n p²):
  se(logit π̂) = se(π̂)/(π̂(1 - π̂)). Checked on fixed counts (a deterministic identity, no
  false alarm) to 2e-5 in the estimates, 1e-4 relative in the standard errors: the fit stops
  when the Newton decrement is below 1e-9, which leaves the estimate within
  ~sqrt(2e-9 · variance) ≈ 2e-6 of the maximum.
- A longitudinal (two-layer RAPPOR) outcome regresses through its composite channel (p*, q*):
  simulated with both layers drawn (seeded numpy), estimates within Z = 4.5 standard errors
  (two-sided false-alarm rate 7e-6 per check).
- Collapsing identical rows (shared/regression.collapse) changes nothing: the weighted
  likelihood, gradient, Hessian, EM step and complete information equal the row-by-row ones.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from ldpsurvey.shared.mechanisms.grr import GRR
from ldpsurvey.shared.mechanisms.longitudinal import Longitudinal
from ldpsurvey.shared.mechanisms.rr_designs import ForcedResponse, UnrelatedQuestion
from ldpsurvey.shared.regression import (
    LatentCovariate,
    _Model,
    collapse,
    expit,
    fit_logistic,
    outcome_channel,
)

YES_NO = (False, True)
Z = 4.5


def logit(p: float) -> float:
    return math.log(p / (1 - p))


@pytest.mark.parametrize(("mech", "p", "q_yes"), [
    (ForcedResponse(None, YES_NO, params={"p_truth": "3/4", "forced": {"yes": "1/6",
                                                                        "no": "1/12"}}),
     0.75, 1 / 6),
    (UnrelatedQuestion(None, YES_NO, params={"p_truth": "3/5", "prevalence": "1/3"}),
     0.6, 0.4 / 3),
])
def test_saturated_fit_is_the_closed_form_estimator_per_group(mech, p: float,
                                                               q_yes: float) -> None:
    how, channel = outcome_channel(mech, 1)
    assert how == "index"
    groups = {0: (3000, 1020), 1: (2000, 1150)}  # group: (n, reports of "yes")
    x = np.concatenate([np.full(n, g) for g, (n, _) in groups.items()]).astype(float)
    reports = np.concatenate([np.r_[np.ones(yes), np.zeros(n - yes)]
                              for n, yes in groups.values()]).astype(np.int64)
    fit = fit_logistic(np.column_stack([np.ones(len(x)), x]), ["(intercept)", "g"], reports,
                       channel, outcome="q", outcome_level="yes")
    assert fit.converged
    closed = {}
    for g, (n, yes) in groups.items():
        lam = yes / n
        share = (lam - q_yes) / p                      # the textbook estimator
        se = math.sqrt(lam * (1 - lam) / (n * p ** 2))  # its textbook standard error
        closed[g] = (logit(share), se / (share * (1 - share)))
    intercept, slope = fit.coefficients
    assert intercept.estimate == pytest.approx(closed[0][0], abs=2e-5)
    assert intercept.std_error == pytest.approx(closed[0][1], rel=1e-4)
    assert slope.estimate == pytest.approx(closed[1][0] - closed[0][0], abs=2e-5)
    assert slope.std_error == pytest.approx(math.hypot(closed[0][1], closed[1][1]), rel=1e-4)
    assert slope.odds_ratio == pytest.approx(math.exp(closed[1][0] - closed[0][0]), rel=1e-4)


def test_longitudinal_outcome_regresses_through_its_composite_channel() -> None:
    mech = Longitudinal(GRR(2.0, ("no", "yes"), question_id="smoker"), 1.5)
    how, channel = outcome_channel(mech, 1)
    assert how == "index"
    p_star, q_star = float(mech.p_star), float(mech.q_star)
    assert channel == pytest.approx(np.array([[p_star, q_star], [q_star, p_star]]))
    rng = np.random.default_rng(20)
    n, beta = 60_000, np.array([-0.5, 0.9])
    x = np.column_stack([np.ones(n), rng.integers(0, 2, n)])
    y = (rng.random(n) < expit(x @ beta)).astype(np.int64)
    reports = np.asarray(mech.perturb_many(y, rng), dtype=np.int64)  # both layers drawn
    fit = fit_logistic(x, ["(intercept)", "male"], reports, channel, outcome="smoker",
                       outcome_level="yes")
    assert fit.converged
    for c, true in zip(fit.coefficients, beta, strict=True):
        assert abs(c.estimate - true) < Z * c.std_error, (c.name, c.estimate, true)


def test_collapsing_identical_rows_changes_nothing() -> None:
    rng = np.random.default_rng(5)
    n = 4000
    x = np.column_stack([np.ones(n), rng.integers(0, 2, n), rng.integers(0, 3, n)])
    symbols = rng.integers(0, 2, n)
    grr = np.full((3, 3), 0.2) + 0.4 * np.eye(3)
    latent = [LatentCovariate("v", ["a", "b", "c"], rng.integers(0, 3, n), grr)]
    channel = np.array([[0.8, 0.2], [0.3, 0.7]])
    cx, cs, cl, counts = collapse(x, symbols, latent)
    assert len(cx) == 2 * 3 * 2 * 3 and counts.sum() == n
    full = _Model(x, symbols, channel, latent)
    small = _Model(cx, cs, channel, cl, counts)
    theta = rng.normal(0, 0.5, full.k_params)
    assert small.loglik(theta) == pytest.approx(full.loglik(theta), rel=1e-12)
    for method in ("gradient", "hessian", "em_step", "complete_information"):
        assert getattr(small, method)(theta) == pytest.approx(getattr(full, method)(theta),
                                                              rel=1e-6, abs=1e-9), method


def test_analytic_information_with_latent_cells_equals_differences_of_the_gradient() -> None:
    """Louis's identity (shared/regression._Model._louis_information) against central
    differences of the analytic gradient, at a random parameter, with one and with two latent
    covariates (a deterministic identity up to the differences' error, ~1e-9 here)."""
    rng = np.random.default_rng(5)
    n = 500
    x = np.column_stack([np.ones(n), rng.integers(0, 2, n), rng.normal(0, 1, n)])
    grr3, grr2 = GRR(1.0, ["a", "b", "c"]), GRR(1.2, ["n", "y"])
    latent = [LatentCovariate("v", ["a", "b", "c"], rng.integers(0, 3, n),
                              *grr3.index_channel()),
              LatentCovariate("w", ["n", "y"], rng.integers(0, 2, n), *grr2.index_channel())]
    for covariates in ([latent[0]], latent):
        model = _Model(x, rng.integers(0, 2, n), np.array([[0.7, 0.3], [0.2, 0.8]]),
                       covariates, rng.integers(1, 4, n).astype(float))
        theta = rng.normal(0, 0.5, model.k_params)
        assert model.hessian(theta) == pytest.approx(model.difference_hessian(theta),
                                                     abs=1e-6)
