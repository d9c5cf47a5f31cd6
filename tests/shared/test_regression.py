"""Regression through the channel (shared/regression.py), on simulated surveys (seeded numpy).

- With known coefficients, estimates are within Z standard errors (Z = 4.5: two-sided
  false-alarm rate 7e-6 per check).
- 95% intervals cover at the stated rate (also with a randomized covariate that depends on the
  disclosed one): R fits, the number of misses is Binomial(R, 0.05);
  the test fails when it is outside the central 1 - 1e-4 range of that binomial.
- With ε large (the channel is the identity in floating point) the fit equals an independent
  maximum-likelihood logistic regression of the true answers (scipy's BFGS on the plain
  log-likelihood) to 1e-5.
- Linear regression of geometric-noise reports: unbiased, with the noise in its standard error.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from ldpsurvey.shared.errors import AnalysisError
from ldpsurvey.shared.mechanisms.geometric import Geometric
from ldpsurvey.shared.regression import (
    INTERCEPT,
    NOISY_ODDS,
    LatentCovariate,
    expit,
    fit_logistic,
    verdict,
)
from ldpsurvey.shared.regression_linear import fit_linear

Z = 4.5
NAMES = ["(intercept)", "male", "age10"]
BETA = np.array([-0.6, 0.7, -0.3])


def warner_channel(epsilon: float) -> np.ndarray:
    p = math.exp(epsilon) / (math.exp(epsilon) + 1)
    return np.array([[p, 1 - p], [1 - p, p]])


def simulate(rng: np.random.Generator, n: int, epsilon: float, beta: np.ndarray = BETA
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(design, true answers, randomized-response reports)."""
    x = np.column_stack([np.ones(n), rng.integers(0, 2, n), rng.normal(0, 1, n)])
    y = (rng.random(n) < expit(x @ beta)).astype(np.int64)
    p = warner_channel(epsilon)[1, 1]
    reports = np.where(rng.random(n) < p, y, 1 - y)
    return x, y, reports


def test_converges_to_known_coefficients() -> None:
    rng = np.random.default_rng(11)
    x, _, reports = simulate(rng, 40_000, 1.0)
    fit = fit_logistic(x, NAMES, reports, warner_channel(1.0), outcome="y", outcome_level="yes")
    assert fit.converged and fit.n == 40_000
    for c, true in zip(fit.coefficients, BETA, strict=True):
        assert abs(c.estimate - true) < Z * c.std_error, (c.name, c.estimate, true)
        assert c.odds_ratio == pytest.approx(math.exp(c.estimate))
        assert c.se_inflation > 1.5  # ε = 1 costs information
    assert fit.coefficients[1].verdict == "higher" and fit.coefficients[2].verdict == "lower"


@pytest.mark.slow
def test_intervals_cover_at_the_stated_rate() -> None:
    from scipy.stats import binom

    rng = np.random.default_rng(12)
    reps, misses = 300, np.zeros(3, dtype=int)
    for _ in range(reps):
        x, _, reports = simulate(rng, 3000, 1.0)
        fit = fit_logistic(x, NAMES, reports, warner_channel(1.0), outcome="y",
                           outcome_level="yes")
        for j, c in enumerate(fit.coefficients):
            misses[j] += not (c.ci_low <= BETA[j] <= c.ci_high)
    low, high = binom.ppf(5e-5, reps, 0.05), binom.isf(5e-5, reps, 0.05)
    for j in range(3):
        assert low <= misses[j] <= high, (NAMES[j], misses[j], low, high)


def test_epsilon_large_matches_plain_maximum_likelihood_on_true_answers() -> None:
    from scipy.optimize import minimize

    rng = np.random.default_rng(13)
    x, y, _ = simulate(rng, 5000, 50.0)
    channel = warner_channel(50.0)
    assert channel[1, 1] == 1.0  # the identity in floating point
    fit = fit_logistic(x, NAMES, y, channel, outcome="y", outcome_level="yes")

    def negative(beta: np.ndarray) -> float:
        eta = x @ beta
        return float(np.logaddexp(0, eta).sum() - y @ eta)

    def gradient(beta: np.ndarray) -> np.ndarray:
        return x.T @ (expit(x @ beta) - y)

    ref = minimize(negative, np.zeros(3), jac=gradient, method="BFGS",
                   options={"gtol": 1e-10}).x
    mu = expit(x @ ref)
    ref_se = np.sqrt(np.diag(np.linalg.inv((x * (mu * (1 - mu))[:, None]).T @ x)))
    assert [c.estimate for c in fit.coefficients] == pytest.approx(ref.tolist(), abs=1e-5)
    assert [c.std_error for c in fit.coefficients] == pytest.approx(ref_se.tolist(), rel=1e-4)
    assert [c.se_inflation for c in fit.coefficients] == pytest.approx([1, 1, 1], abs=1e-4)


def test_randomized_categorical_covariate_enters_through_its_channel() -> None:
    rng = np.random.default_rng(14)
    n = 30_000
    x = np.column_stack([np.ones(n), rng.integers(0, 2, n)])
    v = rng.choice(3, size=n, p=[0.5, 0.3, 0.2])
    gamma = np.array([0.0, 0.8, -0.7])
    beta = np.array([-0.4, 0.5])
    y = (rng.random(n) < expit(x @ beta + gamma[v])).astype(np.int64)
    p = warner_channel(3.0)[1, 1]
    s = np.where(rng.random(n) < p, y, 1 - y)
    e = math.exp(2.0)
    keep, other = rng.random(n) < e / (e + 2), rng.integers(0, 2, n)
    r = np.where(keep, v, other + (other >= v))
    grr = np.full((3, 3), 1 / (e + 2)) + np.eye(3) * ((e - 1) / (e + 2))
    fit = fit_logistic(x, ["(intercept)", "male"], s, warner_channel(3.0), outcome="y",
                       outcome_level="yes",
                       latent=[LatentCovariate("drug", ["a", "b", "c"], r, grr)],
                       latent_names=["drug=b", "drug=c"])
    assert fit.converged
    truth = [*beta, *gamma[1:]]
    for c, t in zip(fit.coefficients, truth, strict=True):
        assert abs(c.estimate - t) < Z * c.std_error, (c.name, c.estimate, t)
    # the latent covariate's coefficients pay twice: outcome noise and covariate noise
    assert fit.coefficients[2].se_inflation > fit.coefficients[1].se_inflation
    assert "cell shares" in fit.notes[0]


def test_too_noisy_to_say_when_the_interval_spans_both_directions_widely() -> None:
    rng = np.random.default_rng(15)
    x, _, reports = simulate(rng, 300, 0.3)
    fit = fit_logistic(x, NAMES, reports, warner_channel(0.3), outcome="y", outcome_level="yes")
    assert any(c.verdict == "too noisy to say" for c in fit.coefficients)


@pytest.mark.parametrize("or_low, or_high, expected", [
    (0.728, 8.13, "too noisy to say"),   # issue 32: was "no clear effect"
    (0.4, 1.5, "too noisy to say"),      # past a halving only
    (0.9, 2.1, "too noisy to say"),      # past a doubling only
    (0.6, 1.8, "no clear effect"),       # includes 1, within a halving and a doubling
    (0.5, 2.0, "no clear effect"),       # the edges themselves are not past them
    (1.1, 40.0, "higher"),
    (0.01, 0.9, "lower"),
])
def test_verdict_of_an_odds_ratio_interval(or_low: float, or_high: float,
                                           expected: str) -> None:
    assert verdict(math.log(or_low), math.log(or_high), NOISY_ODDS, odds=True) == expected


@pytest.mark.parametrize("low, high, expected", [
    (-0.5, 3.0, "too noisy to say"), (-2.5, 0.5, "too noisy to say"),
    (-1.5, 1.9, "no clear effect"), (0.1, 9.0, "positive"), (-9.0, -0.1, "negative")])
def test_verdict_of_a_slope_interval(low: float, high: float, expected: str) -> None:
    """For an outcome range R = 20 the linear equivalent of a halving/doubling is ±R/10 = ±2."""
    assert verdict(low, high, 20 / 10, odds=False) == expected


def test_the_intercept_gets_no_verdict() -> None:
    rng = np.random.default_rng(11)
    x, _, reports = simulate(rng, 4_000, 1.0)
    fit = fit_logistic(x, NAMES, reports, warner_channel(1.0), outcome="y", outcome_level="yes")
    assert fit.coefficients[0].name == INTERCEPT and fit.coefficients[0].verdict == ""
    assert all(c.verdict for c in fit.coefficients[1:])
    linear = fit_linear(x, NAMES, x @ [3.0, 1.0, -0.5] + rng.normal(0, 1, len(x)), 0.0,
                        outcome="z", outcome_range=10)
    assert linear.coefficients[0].verdict == "" and all(c.verdict for c in linear.coefficients[1:])


def test_linear_regression_of_geometric_reports() -> None:
    rng = np.random.default_rng(16)
    mech = Geometric(1.0, range(0, 21), question_id="drinks")
    n = 20_000
    x = np.column_stack([np.ones(n), rng.integers(0, 2, n), rng.integers(18, 80, n)])
    beta = np.array([4.0, 3.0, 0.1])
    answers = np.clip(np.rint(x @ beta + rng.normal(0, 2, n)), 0, 20).astype(np.int64)
    truth = np.linalg.lstsq(x, answers, rcond=None)[0]  # the OLS of the true answers
    reports = mech.perturb_many(answers, rng)
    noise = Geometric.noise_variance(21, 1.0)
    fit = fit_linear(x, ["(intercept)", "male", "age"], reports, noise, outcome="drinks",
                     outcome_range=20.0)
    resid = answers - x @ truth
    se_true = np.sqrt(np.diag(np.linalg.inv(x.T @ x)) * (resid @ resid) / (n - 3))
    for j, c in enumerate(fit.coefficients):
        # the reports' OLS differs from the true answers' OLS by OLS of pure noise
        noise_se = math.sqrt(noise * np.linalg.inv(x.T @ x)[j, j])
        assert abs(c.estimate - truth[j]) < Z * noise_se
        assert c.std_error == pytest.approx(math.hypot(se_true[j], noise_se), rel=0.05)
        # the true answers' spread σ²_e = s² - σ²_N: s² has standard error about s²·√(2/n)
        s2 = c.std_error ** 2 / np.linalg.inv(x.T @ x)[j, j]
        assert abs((s2 - noise) - resid @ resid / (n - 3)) < Z * s2 * math.sqrt(2 / n)
        assert c.se_inflation == pytest.approx(math.sqrt(s2 / (s2 - noise)))


def test_too_few_rows_is_a_clear_error() -> None:
    with pytest.raises(AnalysisError, match="cannot fit"):
        fit_logistic(np.ones((2, 3)), NAMES, np.array([0, 1]), warner_channel(1.0),
                     outcome="y", outcome_level="yes")


def simulate_dependent_latent(rng: np.random.Generator, n: int
                              ) -> tuple[np.ndarray, np.ndarray, LatentCovariate]:
    """A randomized covariate whose distribution depends on the disclosed one (drug use differs
    by sex), and an outcome that depends on the randomized covariate but not directly on sex."""
    from ldpsurvey.shared.mechanisms.grr import GRR

    male = rng.integers(0, 2, n)
    shares = np.where(male[:, None] == 1, [0.2, 0.3, 0.5], [0.6, 0.3, 0.1])
    v = (rng.random(n)[:, None] > np.cumsum(shares, axis=1)).sum(axis=1)
    y = (rng.random(n) < expit(DEPENDENT_BETA[0] + DEPENDENT_BETA[1] * male
                               + np.r_[0.0, DEPENDENT_BETA[2:]][v])).astype(np.int64)
    p = warner_channel(2.0)[1, 1]
    s = np.where(rng.random(n) < p, y, 1 - y)
    drug = GRR(1.5, ["a", "b", "c"])
    latent = LatentCovariate("drug", ["a", "b", "c"], drug.perturb_many(v, rng),
                             *drug.index_channel())
    return np.column_stack([np.ones(n), male]), s, latent


DEPENDENT_BETA = np.array([-0.5, 0.0, 0.8, -0.7])


def fit_dependent(x: np.ndarray, s: np.ndarray, latent: LatentCovariate):
    return fit_logistic(x, ["(intercept)", "male"], s, warner_channel(2.0), outcome="y",
                        outcome_level="yes", latent=[latent],
                        latent_names=["drug=b", "drug=c"])


def test_a_randomized_covariate_may_depend_on_the_disclosed_ones() -> None:
    """Its distribution is a multinomial logit on the disclosed covariates: with it assumed
    independent of sex (as ldpsurvey once did) this survey gave sex an effect of 0.41 ± 0.04
    that it does not have (z = 9)."""
    x, s, latent = simulate_dependent_latent(np.random.default_rng(17), 30_000)
    fit = fit_dependent(x, s, latent)
    assert fit.converged
    for c, t in zip(fit.coefficients, DEPENDENT_BETA, strict=True):
        assert abs(c.estimate - t) < Z * c.std_error, (c.name, c.estimate, t)
    assert "multinomial logit on the disclosed covariates" in fit.notes[0]


@pytest.mark.slow
def test_intervals_cover_with_a_dependent_randomized_covariate() -> None:
    from scipy.stats import binom

    rng = np.random.default_rng(18)
    reps, misses = 400, np.zeros(4, dtype=int)
    for _ in range(reps):
        fit = fit_dependent(*simulate_dependent_latent(rng, 3000))
        misses += [not (c.ci_low <= t <= c.ci_high)
                   for c, t in zip(fit.coefficients, DEPENDENT_BETA, strict=True)]
    low, high = binom.ppf(5e-5, reps, 0.05), binom.isf(5e-5, reps, 0.05)
    assert all(low <= m <= high for m in misses), (misses, low, high)


def test_too_many_latent_parameters_is_a_clear_error() -> None:
    """Two 10-option randomized covariates with 9 disclosed columns: 891 parameters for how the
    100 answer combinations depend on the covariates; refused before any work, saying why."""
    n = 2000
    grr = np.full((10, 10), 0.05) + np.eye(10) * 0.5
    latent = [LatentCovariate(name, [str(i) for i in range(10)], np.zeros(n, dtype=np.int64),
                              grr) for name in ("a", "b")]
    with pytest.raises(AnalysisError, match="891 describe how the 100 combinations"):
        fit_logistic(np.ones((n, 9)), [f"c{j}" for j in range(9)], np.zeros(n, dtype=np.int64),
                     warner_channel(1.0), outcome="y", outcome_level="yes", latent=latent)


SUPPORT_EFFECTS = np.array([0.0, 0.8, -0.6, 0.4, 0.0])
SUPPORT_BETA = np.array([-0.5, 0.3])
REGION = ["a", "b", "c", "d", "e"]


def support_bit_survey(mechanism: str, rng: np.random.Generator, n: int):
    """A 5-option covariate randomized by a support-bit mechanism, depending on the disclosed
    covariate; the outcome through Warner at ε = 3. Returns the fit."""
    from ldpsurvey.shared.mechanisms import mechanism_for
    from ldpsurvey.shared.regression import support_bit_covariate
    from ldpsurvey.shared.survey import Survey

    labels = REGION
    mech = mechanism_for(Survey.from_dict({"id": "s", "title": "t", "version": 1, "questions": [
        {"id": "region", "text": "Region?", "type": "categorical", "options": labels,
         "epsilon": 2.0, "mechanism": mechanism}]}).question("region"))
    male = rng.integers(0, 2, n)
    shares = np.where(male[:, None] == 1, [0.1, 0.2, 0.2, 0.2, 0.3], [0.3, 0.3, 0.2, 0.1, 0.1])
    v = (rng.random(n)[:, None] > np.cumsum(shares, axis=1)).sum(axis=1)
    effects, beta = SUPPORT_EFFECTS, SUPPORT_BETA
    y = (rng.random(n) < expit(beta[0] + beta[1] * male + effects[v])).astype(np.int64)
    p = warner_channel(3.0)[1, 1]
    s = np.where(rng.random(n) < p, y, 1 - y)
    bits = mech.support_bits(np.asarray(mech.perturb_many(v, rng)).reshape(n, -1))
    latent = support_bit_covariate("region", labels, bits, float(mech.privacy_loss().ratio))
    return fit_logistic(np.column_stack([np.ones(n), male]), ["(intercept)", "male"], s,
                        warner_channel(3.0), outcome="y", outcome_level="yes", latent=[latent],
                        latent_names=[f"region={v}" for v in labels[1:]])


@pytest.mark.parametrize("mechanism", ["oue", "sue", "ss", "olh"])
def test_a_support_bit_covariate_enters_through_its_relative_likelihood(mechanism: str) -> None:
    """ss is what `auto` picks for 5+ options at ε <= 1: its reports' likelihood is
    ratio^[supports v] up to a factor of the report alone (support_bit_covariate)."""
    fit = support_bit_survey(mechanism, np.random.default_rng(19), 40_000)
    assert fit.converged
    for c, t in zip(fit.coefficients, [*SUPPORT_BETA, *SUPPORT_EFFECTS[1:]], strict=True):
        assert abs(c.estimate - t) < Z * c.std_error, (c.name, c.estimate, t, c.std_error)


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", ["oue", "ss"])
def test_intervals_cover_with_a_support_bit_covariate(mechanism: str) -> None:
    from scipy.stats import binom

    rng = np.random.default_rng(20)
    truth = [*SUPPORT_BETA, *SUPPORT_EFFECTS[1:]]
    reps, misses = 300, np.zeros(len(truth), dtype=int)
    for _ in range(reps):
        fit = support_bit_survey(mechanism, rng, 4000)
        misses += [not (c.ci_low <= t <= c.ci_high)
                   for c, t in zip(fit.coefficients, truth, strict=True)]
    low, high = binom.ppf(5e-5, reps, 0.05), binom.isf(5e-5, reps, 0.05)
    assert all(low <= m <= high for m in misses), (misses, low, high)
