"""`ldpsurvey regress --variance jk1|jkn|bootstrap`: the model refitted on every replicate's
(recalibrated) weights, the covariance the replicates' spread; equal to R's svyglm on the
replicate design (as.svrepdesign, or svrepdesign given the same bootstrap weights)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from support import designed
from support.r_oracle import r_numbers, r_strings, run_r

MARGINS = ("question,value,total\nregion,north,3000\nregion,south,5000\nregion,east,7000\n"
           "region,west,9000\nsex,female,12500\nsex,male,11500\n")
POPULATION = """
pop <- {pop}
names(pop) <- {names}
""".format(pop=r_numbers([24000.0, 5000, 7000, 9000, 11500]),
           names=r_strings(["(Intercept)", "regionsouth", "regioneast", "regionwest",
                            "sexmale"]))
DESIGN = """
d <- read.csv("d.csv")
d$region <- factor(d$region, levels = c("north", "south", "east", "west"))
d$sex <- factor(d$sex, levels = c("female", "male"))
des <- svydesign(ids = ~psu, strata = ~stratum, weights = ~w, nest = TRUE, data = d)
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> designed.Built:
    return designed.build(tmp_path_factory.mktemp("regress") / "survey.db", fpc=False)


@pytest.fixture(scope="module")
def margins(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return designed.write(tmp_path_factory.mktemp("margins") / "margins.csv", MARGINS)


def regress(built: designed.Built, *args: Any) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["regress", "--db", str(built.path), "--survey",
                                      built.survey_id, "--format", "json", *map(str, args)])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def table(built: designed.Built) -> dict[str, Any]:
    from ldpsurvey.server.store import open_store

    store = open_store(built.path)
    try:
        stored = [json.loads(r[4]) for r in store.export_rows(built.survey_id, 1, 0, 10**6)]
    finally:
        store.close()
    units = built.responded
    return {"w": [u.weight for u in units], "stratum": [u.stratum for u in units],
            "psu": [u.psu for u in units], "region": [u.answers["region"] for u in units],
            "sex": [u.answers["sex"] for u in units],
            "drinks": [float(a.get("drinks", 0)) for a in stored],
            "answered": [int("drinks" in a) for a in stored]}


def check(doc: dict[str, Any], r: dict[str, Any]) -> None:
    coefficients = doc["coefficients"]
    assert np.allclose([c["estimate"] for c in coefficients], r["coef"], rtol=0, atol=1e-8)
    assert np.allclose([c["std_error"] for c in coefficients], r["se"], rtol=1e-7, atol=0)


def test_linear_jkn_on_a_raked_design_equals_r(built: designed.Built, margins: Path) -> None:
    """The noisy integer on disclosed covariates, raked, JKn: each replicate re-raked and the
    model refitted (R: calibrate on the JKn replicate design, svyglm on its subset)."""
    doc = regress(built, "--outcome", "drinks", "--covariates", "region,sex", "--rake",
                  margins, "--variance", "jkn")
    assert "JKn (stratified) jackknife, 24 replicates" in doc["notes"][0]
    script = DESIGN + POPULATION + """
jk <- as.svrepdesign(des, type = "JKn", compress = FALSE)
cal <- calibrate(jk, ~region + sex, population = pop, calfun = "raking", epsilon = 1e-13,
                 compress = FALSE,
                 maxit = 200)
fit <- svyglm(drinks ~ region + sex, design = subset(cal, answered == 1))
emit(list(coef = coef(fit), se = SE(fit)))
"""
    check(doc, run_r(script, {"d": table(built)}))


def test_logistic_jkn_equals_r(built: designed.Built) -> None:
    """A disclosed yes/no outcome (sex = male) on region, weighted, JKn: svyglm's
    quasibinomial fit and its replicate standard errors."""
    doc = regress(built, "--outcome", "sex", "--level", "male", "--covariates", "region",
                  "--weighted", "--variance", "jkn")
    script = DESIGN + """
jk <- as.svrepdesign(des, type = "JKn", compress = FALSE)
fit <- svyglm(I(sex == "male") ~ region, design = jk, family = quasibinomial(),
              control = glm.control(epsilon = 1e-14, maxit = 100))
ci <- confint(fit)
emit(list(coef = coef(fit), se = SE(fit), low = ci[, 1], high = ci[, 2],
          p = summary(fit)$coefficients[, 4], df = fit$df.residual, degf = degf(jk)))
"""
    r = run_r(script, {"d": table(built)})
    check(doc, r)
    # t with svyglm's residual df, the replicates' degf + 1 - 4 coefficients
    coefficients = doc["coefficients"]
    assert (doc["design"]["df"], doc["design"]["residual_df"]) == (r["degf"][0], r["df"][0])
    assert np.allclose([c["ci_low"] for c in coefficients], r["low"], rtol=1e-7, atol=1e-9)
    assert np.allclose([c["ci_high"] for c in coefficients], r["high"], rtol=1e-7, atol=1e-9)
    assert np.allclose([c["p_value"] for c in coefficients], r["p"], rtol=1e-6, atol=1e-12)


def test_bootstrap_given_the_same_replicate_weights_equals_r(built: designed.Built) -> None:
    """The bootstrap's draws are numpy's (stated seed); R is given the same replicate weights,
    scale and rscales (svrepdesign), and refits the linear model on each."""
    from ldpsurvey.shared.design import Design
    from ldpsurvey.shared.design.regression import regression_replicates, replicate_weights

    doc = regress(built, "--outcome", "drinks", "--covariates", "region,sex", "--weighted",
                  "--variance", "bootstrap", "--replicates", "30")
    units = built.responded
    design = Design.build([u.weight for u in units], [u.stratum for u in units],
                          [u.psu for u in units])
    replicates = regression_replicates(design, "bootstrap", 30)
    weights = np.column_stack(list(replicate_weights(design, replicates)))
    data = table(built)
    data.update({f"rep{r}": weights[:, r] for r in range(weights.shape[1])})
    script = DESIGN + f"""
rd <- svrepdesign(data = d, repweights = "rep[0-9]+", weights = ~w, type = "bootstrap",
                  combined.weights = TRUE, scale = {replicates.scale!r}, rscales = 1,
                  mse = FALSE)
fit <- svyglm(drinks ~ region + sex, design = subset(rd, answered == 1))
emit(list(coef = coef(fit), se = SE(fit)))
"""
    check(doc, run_r(script, {"d": data}))


def test_a_randomized_outcome_takes_replicate_variances(built: designed.Built) -> None:
    """Through the channels (a randomized outcome and covariate): the replicate standard errors
    are the spread of the refits, and the table names the method."""
    doc = regress(built, "--outcome", "smoker", "--covariates", "sex,mood", "--weighted",
                  "--variance", "jkn")
    assert doc["converged"] and all(c["std_error"] > 0 for c in doc["coefficients"])
    assert "refitted on each replicate's weights" in doc["notes"][0]
