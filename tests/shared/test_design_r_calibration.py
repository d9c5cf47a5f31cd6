"""Calibrated weights and their linearized variances against R's survey package, on
pseudo-values of a randomized answer with disclosed covariates: postStratify, rake, calibrate
(calfun = "raking", "linear", and "linear" with bounds), without and with an fpc, to 1e-8.

Raking: the weights and estimates equal R's `rake()` (both iterate to 1e-13); the standard
errors equal R's `calibrate(calfun = "raking")`, which reaches the same weights and linearizes
with the exact weighted projection on the margins. R's `rake()` linearizes with 10 unweighted
back-fitting sweeps instead (svyrecvar's "raking" branch), an approximation whose standard
errors differ by about 1% here: the test shows that difference and bounds it.
With an fpc the R script adds the randomization term itself (a_i = calibrated w_i/Σw).
"""

from __future__ import annotations

import numpy as np
import pytest
from ldpsurvey.shared.design import (
    Coded,
    Margin,
    calibrate,
    mean,
    model_matrix,
    poststratify,
    rake,
)
from ldpsurvey.shared.errors import CalibrationError
from support.design_data import fixture
from support.r_oracle import r_numbers, run_r

TOL = 1e-8
BOUNDS = (0.6, 1.6)


@pytest.fixture(scope="module")
def data():
    return fixture()


@pytest.fixture(scope="module")
def margins(data):
    n_pop = float(data.weight.sum() * 1.05)
    return {"N": n_pop,
            "sex": Margin("sex", data.sex, {0: n_pop * 0.48, 1: n_pop * 0.52}),
            "region": Margin("region", data.region,
                             {0: n_pop * 0.3, 1: n_pop * 0.3, 2: n_pop * 0.4})}


def _linear_model(data, margins):
    model, totals, names = model_matrix([margins["sex"], margins["region"]], data.n)
    return (np.column_stack([model, data.age]), np.append(totals, margins["N"] * 50.0),
            [*names, "age"])


def _calibrated(data, margins, fpc: bool) -> dict:
    design = data.design(fpc=fpc)
    model, totals, names = _linear_model(data, margins)
    raked = rake(design, [margins["sex"], margins["region"]], tolerance=1e-13)
    return {
        "ps": poststratify(design, margins["sex"]),
        "rk": raked,
        "cr": raked,
        "lin": calibrate(design, model, totals, names=names),
        "lb": calibrate(design, model, totals, names=names, bounds=BOUNDS, tolerance=1e-13,
                        max_iterations=200),
    }


@pytest.fixture(scope="module")
def r_results(data, margins):
    sex, region = margins["sex"].totals, margins["region"].totals
    _, totals, _ = _linear_model(data, margins)
    script = f"""
d <- read.csv("data.csv"); d$sex <- factor(d$sex); d$region <- factor(d$region)
pop_sex <- data.frame(sex = c("0", "1"), Freq = {r_numbers([sex[0], sex[1]])})
pop_region <- data.frame(region = c("0", "1", "2"),
                         Freq = {r_numbers([region[0], region[1], region[2]])})
npsu <- ave(as.numeric(factor(paste(d$stratum, d$psu))), d$stratum,
            FUN = function(x) length(unique(x)))
z <- as.matrix(d[, c("z1", "z2", "z3")])
out <- list()
for (with_fpc in c(FALSE, TRUE)) {{
  des <- if (with_fpc) {{
    svydesign(ids = ~psu, strata = ~stratum, weights = ~weight, fpc = ~fpc, data = d, nest = TRUE)
  }} else {{
    svydesign(ids = ~psu, strata = ~stratum, weights = ~weight, data = d, nest = TRUE)
  }}
  f <- if (with_fpc) npsu / d$fpc else 0 * npsu
  cal <- list(
    ps = postStratify(des, ~sex, pop_sex),
    rk = rake(des, list(~sex, ~region), list(pop_sex, pop_region),
              control = list(maxit = 200, epsilon = 1e-13)),
    cr = calibrate(des, ~sex + region, {r_numbers(totals[:4])}, calfun = "raking",
                   epsilon = 1e-13, maxit = 200),
    lin = calibrate(des, ~sex + region + age, {r_numbers(totals)}, calfun = "linear"),
    lb = calibrate(des, ~sex + region + age, {r_numbers(totals)}, calfun = "linear",
                   bounds = c({BOUNDS[0]}, {BOUNDS[1]}), epsilon = 1e-13, maxit = 200))
  for (name in names(cal)) {{
    m <- svymean(~z1 + z2 + z3, cal[[name]])
    w <- weights(cal[[name]])
    a <- w / sum(w)
    tag <- paste0(name, "_", with_fpc)
    out[[tag]] <- coef(m)
    out[[paste0(tag, "_var")]] <- diag(vcov(m)) + apply(z, 2, function(v) sum(f * a^2 * (v^2 - v)))
    out[[paste0(tag, "_weights")]] <- w
  }}
}}
emit(out)
"""
    return run_r(script, {"data": data.table()})


@pytest.mark.parametrize("fpc", [False, True], ids=["no-fpc", "fpc"])
@pytest.mark.parametrize("method", ["ps", "cr", "lin", "lb"])
def test_calibrated_estimates_and_standard_errors_equal_r(data, margins, r_results, method,
                                                          fpc) -> None:
    design = _calibrated(data, margins, fpc)[method]
    tag = f"{method}_{str(fpc).upper()}"
    np.testing.assert_allclose(design.weights, r_results[tag + "_weights"], rtol=1e-10)
    result = mean(design, data.pseudo())
    np.testing.assert_allclose(result.estimates, r_results[tag], rtol=0, atol=TOL)
    np.testing.assert_allclose(np.diag(result.covariance), r_results[tag + "_var"], rtol=0,
                               atol=TOL)


@pytest.mark.parametrize("fpc", [False, True], ids=["no-fpc", "fpc"])
def test_raking_equals_r_rake_weights_and_its_approximate_standard_errors(
        data, margins, r_results, fpc) -> None:
    design = _calibrated(data, margins, fpc)["rk"]
    tag = f"rk_{str(fpc).upper()}"
    np.testing.assert_allclose(design.weights, r_results[tag + "_weights"], rtol=1e-10)
    result = mean(design, data.pseudo())
    np.testing.assert_allclose(result.estimates, r_results[tag], rtol=0, atol=TOL)
    # R's rake(): 10 unweighted back-fitting sweeps; close to, not equal to, the projection
    ratio = result.std_errors / np.sqrt(r_results[tag + "_var"])
    assert np.all(np.abs(ratio - 1) < 0.05)


def test_bounded_calibration_keeps_g_within_bounds(data, margins) -> None:
    design = _calibrated(data, margins, False)["lb"]
    g = design.weights / design.base_weights
    assert g.min() >= BOUNDS[0] - 1e-12 and g.max() <= BOUNDS[1] + 1e-12
    assert np.isclose(g.min(), BOUNDS[0]) or np.isclose(g.max(), BOUNDS[1])  # bounds bind


def test_calibration_errors_say_what_is_wrong(data, margins) -> None:
    design = data.design(fpc=False)
    n_pop = margins["N"]
    with pytest.raises(CalibrationError, match=r"empty cell.*'region' = 3"):
        poststratify(design, Margin("region", data.region,
                                    {0: 1.0, 1: 1.0, 2: 1.0, 3: 5.0}))
    with pytest.raises(CalibrationError, match="'sex' = 1 has respondents but no"):
        poststratify(design, Margin("sex", data.sex, {0: n_pop}))
    with pytest.raises(CalibrationError, match="totals disagree"):
        rake(design, [margins["sex"], Margin("region", data.region,
                                             {0: 1.0, 1: 1.0, 2: 1.0})])
    with pytest.raises(CalibrationError, match=r"did not converge in 3 iterations"):
        rake(design, [margins["sex"], margins["region"]], max_iterations=3, tolerance=1e-15)
    model, totals, _ = _linear_model(data, margins)
    with pytest.raises(CalibrationError, match="did not converge in 50 iterations"):
        calibrate(design, model, totals, bounds=(0.95, 1.05))
    with pytest.raises(CalibrationError, match="no value of 'sex'"):
        poststratify(design, Margin("sex", [None, *data.sex[1:].tolist()], {0: 1.0, 1: 1.0}))


def test_calibrating_on_a_randomized_answer_is_refused_with_the_reason(data) -> None:
    from ldpsurvey.shared.design import require_disclosed

    with pytest.raises(CalibrationError, match=r"randomized answer.*its own estimator"):
        require_disclosed(data.question)


def test_a_coded_margin_is_the_same_margin_as_its_labels(data, margins) -> None:
    """Categories given as numbers into a label list (`Coded`, how `report --rake` reads
    disclosed answers) calibrate exactly as the same labels given per respondent: the same
    weights bit for bit, the same categories in the same order (first appearance), the same
    refusals."""
    design = data.design(fpc=True)
    names = ["north", "south", "east", "west"]  # "west" unused; numbered out of label order
    labels = np.array(names)[[2, 0, 1]][data.region]
    totals = {name: margins["region"].totals[i] for i, name in enumerate(["east", "north",
                                                                            "south"])}
    coded = Coded(np.array([2, 0, 1])[data.region], names)
    as_labels = rake(design, [margins["sex"], Margin("region", labels.tolist(), totals)],
                     tolerance=1e-13)
    as_codes = rake(design, [margins["sex"], Margin("region", coded, totals)],
                    tolerance=1e-13)
    assert np.array_equal(as_codes.weights, as_labels.weights)
    (by_codes,), (by_labels,) = as_codes.calibration, as_labels.calibration
    assert by_codes.labels == by_labels.labels == ((0, 1), ("north", "south", "east"))
    assert by_codes.describe() == by_labels.describe()
    one = poststratify(design, Margin("region", coded, totals))
    assert np.array_equal(one.weights, poststratify(
        design, Margin("region", labels.tolist(), totals)).weights)
    missing = np.array([2, 0, 1])[data.region]
    missing[[3, 7]] = -1
    with pytest.raises(CalibrationError, match=r"2 respondent\(s\) have no value of 'region' "
                                               r"\(first: row 4\)"):
        rake(design, [margins["sex"], Margin("region", Coded(missing, names), totals)])
    with pytest.raises(CalibrationError, match=r"'region' = 'west' \(population"):
        rake(design, [margins["sex"], Margin("region", coded, {**totals, "west": 5.0})])
