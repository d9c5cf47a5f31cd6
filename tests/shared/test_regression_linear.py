"""Linear regression of a geometric-noise integer outcome on randomized categorical covariates
(shared/regression_linear.py: corrected moments, sandwich standard errors), on simulated
surveys (seeded numpy) with known coefficients.

- The true answers are integers built exactly from known coefficients (integer intercept and
  effects, integer errors), so the regression's target is known without rounding.
- Convergence: every estimate within Z = 4.5 of its own standard errors of the truth
  (two-sided false-alarm rate 7e-6 per check).
- Coverage: R fits; the misses of each 95% interval are Binomial(R, 0.05); the test fails
  outside that binomial's central 1 - 1e-4 range (false-alarm rate 1e-4 per coefficient).
- se × privacy: over the same R surveys the spread of the estimates through the channels,
  divided by the spread of least squares on the true answers of the same respondents, is the
  price of privacy the fit reports. log of a ratio of two sample standard deviations over R
  surveys has standard error at most sqrt(1/(2(R-1)) · 2) (independent spreads; positive
  correlation between the two fits only shrinks it), checked at Z = 4.5.
- Through an identity channel the corrected moments are the plain moments: the fit is least
  squares, and its standard errors are statsmodels' HC1 ones (an identity, to 1e-8).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from ldpsurvey.shared.errors import AnalysisError
from ldpsurvey.shared.mechanisms.geometric import Geometric
from ldpsurvey.shared.mechanisms.grr import GRR
from ldpsurvey.shared.regression import LatentCovariate
from ldpsurvey.shared.regression_linear import fit_linear, indicator_rows

Z = 4.5
# (intercept), male (disclosed), drug=b, drug=c (randomized, 3 options), night=yes (randomized)
TRUTH = np.array([10.0, 2.0, 3.0, -2.0, 1.0])
NAMES = ["(intercept)", "male"]
LATENT_NAMES = ["drug=b", "drug=c", "night=yes"]
OUTCOME = Geometric(6.0, range(0, 31), question_id="drinks")
DRUG = GRR(2.0, ["a", "b", "c"], question_id="drug")
NIGHT = GRR(1.5, [False, True], question_id="night")


def simulate(rng: np.random.Generator, n: int, *, two: bool = True) -> dict[str, np.ndarray]:
    """True answers, their reports and the fit's inputs of one simulated survey."""
    male = rng.integers(0, 2, n)
    drug = rng.choice(3, n, p=[0.5, 0.3, 0.2])
    night = rng.integers(0, 2, n) if two else np.zeros(n, dtype=np.int64)
    errors = rng.integers(-3, 4, n) * (1 + male)  # heteroskedastic: the sandwich's business
    y = (10 + 2 * male + 3 * (drug == 1) - 2 * (drug == 2) + 1 * (night == 1)
         + errors).astype(np.int64)
    assert y.min() >= 0 and y.max() <= 30
    return {"x": np.column_stack([np.ones(n), male]), "y": y, "drug": drug, "night": night,
            "reports": OUTCOME.perturb_many(y, rng), "drug_r": DRUG.perturb_many(drug, rng),
            "night_r": NIGHT.perturb_many(night, rng)}


def latent(data: dict[str, np.ndarray], two: bool = True) -> list[LatentCovariate]:
    covs = [LatentCovariate("drug", ["a", "b", "c"], data["drug_r"], *DRUG.index_channel())]
    if two:
        covs.append(LatentCovariate("night", ["no", "yes"], data["night_r"],
                                    *NIGHT.index_channel()))
    return covs


def fit(data: dict[str, np.ndarray], two: bool = True):
    return fit_linear(data["x"], NAMES, data["reports"], Geometric.noise_variance(31, 6.0),
                      outcome="drinks", outcome_range=30.0, latent=latent(data, two),
                      latent_names=LATENT_NAMES if two else LATENT_NAMES[:2])


def true_answers_ols(data: dict[str, np.ndarray], two: bool = True) -> np.ndarray:
    """Least squares on what the respondents really answered (simulation only)."""
    columns = [data["x"], (data["drug"][:, None] == np.array([1, 2])).astype(float)]
    if two:
        columns.append((data["night"] == 1).astype(float)[:, None])
    design = np.hstack(columns)
    return np.linalg.lstsq(design, data["y"], rcond=None)[0]


@pytest.mark.parametrize("two", [False, True], ids=["one randomized", "two randomized"])
def test_converges_to_known_coefficients(two: bool) -> None:
    data = simulate(np.random.default_rng(31 + two), 60_000, two=two)
    result = fit(data, two)
    truth = TRUTH if two else TRUTH[:4]
    assert [c.name for c in result.coefficients] == NAMES + LATENT_NAMES[:3 if two else 2]
    for c, t in zip(result.coefficients, truth, strict=True):
        assert abs(c.estimate - t) < Z * c.std_error, (c.name, c.estimate, t, c.std_error)
    for c in result.coefficients[2:]:  # a randomized covariate pays for its channel
        assert c.se_inflation > 1.5
    assert "corrected moments" in result.notes[0] and "drug: a 0." in result.notes[0]


def test_least_squares_on_the_reports_would_be_attenuated() -> None:
    """Why the correction: the naive fit on report dummies is biased toward 0 by the channel's
    p - q (here (e² - 1)/(e² + 2) = 0.68), far beyond its own standard errors."""
    data = simulate(np.random.default_rng(35), 60_000, two=False)
    naive = np.column_stack([data["x"], data["drug_r"] == 1, data["drug_r"] == 2]).astype(float)
    slope = np.linalg.lstsq(naive, data["reports"], rcond=None)[0][2]
    corrected = fit(data, two=False).coefficients[2]
    assert slope < TRUTH[2] - 6 * corrected.std_error  # ~1.0 below: 9 standard errors
    assert abs(corrected.estimate - TRUTH[2]) < Z * corrected.std_error


def test_intervals_cover_and_se_inflation_is_the_price_of_privacy() -> None:
    from scipy.stats import binom

    rng = np.random.default_rng(33)
    reps, n = 400, 3000
    misses = np.zeros(5, dtype=int)
    estimates, truths, inflation = [], [], []
    for _ in range(reps):
        data = simulate(rng, n)
        result = fit(data)
        misses += [not (c.ci_low <= t <= c.ci_high)
                   for c, t in zip(result.coefficients, TRUTH, strict=True)]
        estimates.append([c.estimate for c in result.coefficients])
        truths.append(true_answers_ols(data))
        inflation.append([c.se_inflation for c in result.coefficients])
    low, high = binom.ppf(5e-5, reps, 0.05), binom.isf(5e-5, reps, 0.05)
    names = NAMES + LATENT_NAMES
    for j in range(5):
        assert low <= misses[j] <= high, (names[j], misses[j], low, high)
    spread = np.std(estimates, axis=0, ddof=1) / np.std(truths, axis=0, ddof=1)
    reported = np.mean(inflation, axis=0)
    tolerance = Z * math.sqrt(2 / (2 * (reps - 1)))
    for j in range(5):
        assert abs(math.log(reported[j] / spread[j])) < tolerance, (names[j], reported[j],
                                                                     spread[j])


def test_identity_channel_is_least_squares_with_hc1_errors() -> None:
    import statsmodels.api as sm

    rng = np.random.default_rng(34)
    data = simulate(rng, 2000)
    identity = [LatentCovariate("drug", ["a", "b", "c"], data["drug"], np.eye(3)),
                LatentCovariate("night", ["no", "yes"], data["night"], np.eye(2))]
    result = fit_linear(data["x"], NAMES, data["y"], 0.0, outcome="drinks",
                        outcome_range=30.0, latent=identity, latent_names=LATENT_NAMES)
    design = np.column_stack([data["x"], data["drug"] == 1, data["drug"] == 2,
                              data["night"] == 1]).astype(float)
    ols = sm.OLS(data["y"].astype(float), design).fit(cov_type="HC1")
    assert [c.estimate for c in result.coefficients] == pytest.approx(ols.params.tolist(),
                                                                      rel=1e-8, abs=1e-8)
    assert [c.std_error for c in result.coefficients] == pytest.approx(ols.bse.tolist(),
                                                                       rel=1e-8)


def test_refused_when_the_corrected_moments_are_not_positive_definite() -> None:
    """Every drug report says "a": the corrected share of "b" is (0 - q)/(p - q) < 0, so the
    corrected second-moment matrix cannot be a second-moment matrix."""
    rng = np.random.default_rng(36)
    data = simulate(rng, 500, two=False)
    data["drug_r"] = np.zeros(500, dtype=np.int64)
    with pytest.raises(AnalysisError, match="not positive definite"):
        fit(data, two=False)


def test_refused_when_the_channel_cannot_be_inverted() -> None:
    alike = np.array([[0.5, 0.5], [0.5, 0.5]])
    cov = LatentCovariate("coin", ["no", "yes"], np.zeros(10, dtype=np.int64), alike)
    with pytest.raises(AnalysisError, match="cannot be inverted"):
        indicator_rows(cov)


def test_indicator_rows_are_unbiased_for_a_non_square_matrix_design() -> None:
    """A channel with more reports than answers: the pseudo-inverse still gives E[h(r)|v] = e_v."""
    a = np.array([[0.6, 0.3, 0.1], [0.2, 0.3, 0.5]])
    h = indicator_rows(LatentCovariate("v", ["a", "b"], np.zeros(1, dtype=np.int64), a))
    assert a @ h == pytest.approx(np.eye(2))


@pytest.mark.parametrize("mechanism", ["ss", "oue", "olh"])
def test_support_bit_covariate_converges_to_known_coefficients(mechanism: str) -> None:
    """A categorical covariate whose reports are support bits (what `auto` picks for 5+ options
    at small ε) enters through h_v = (bit_v - q*)/(p* - q*)."""
    from ldpsurvey.shared.mechanisms import mechanism_for
    from ldpsurvey.shared.regression_linear import IndicatorEstimates, support_estimates
    from ldpsurvey.shared.survey import Survey

    labels = ["a", "b", "c", "d", "e"]
    survey = Survey.from_dict({"id": "s", "title": "t", "version": 1, "questions": [
        {"id": "region", "text": "Region?", "type": "categorical", "options": labels,
         "epsilon": 2.0, "mechanism": mechanism}]})
    mech = mechanism_for(survey.question("region"))
    assert mech.joint_reports == "support_bits"
    rng = np.random.default_rng(37)
    n = 60_000
    male = rng.integers(0, 2, n)
    region = rng.choice(5, n, p=[0.3, 0.25, 0.2, 0.15, 0.1])
    effects = np.array([0.0, 2.0, -1.0, 3.0, 1.0])
    y = (10 + 2 * male + effects[region] + rng.integers(-3, 4, n)).astype(np.int64)
    reports = OUTCOME.perturb_many(y, rng)
    bits = mech.support_bits(np.asarray(mech.perturb_many(region, rng)).reshape(n, -1))
    cov = IndicatorEstimates("region", labels,
                             support_estimates(bits, float(mech.p_star), float(mech.q_star)))
    result = fit_linear(np.column_stack([np.ones(n), male]), NAMES, reports,
                        Geometric.noise_variance(31, 6.0), outcome="drinks",
                        outcome_range=30.0, latent=[cov],
                        latent_names=[f"region={v}" for v in labels[1:]])
    for c, t in zip(result.coefficients, [10.0, 2.0, *effects[1:]], strict=True):
        assert abs(c.estimate - t) < Z * c.std_error, (c.name, c.estimate, t, c.std_error)
