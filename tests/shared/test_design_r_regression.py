"""Design-based regression (pseudo-likelihood weights, sandwich over PSUs within strata)
against R's svyglm on a stratified cluster sample with unequal weights:

- logistic regression of a disclosed yes/no outcome (svyglm, quasibinomial): coefficients and
  covariance equal, to 1e-8, on the whole sample, on a subset of rows (the complete
  submissions; svyglm's subset keeps the whole design) and on a post-stratified design;
- logistic regression of a yes/no outcome randomized by Warner's design (binary RR): the
  pseudo-likelihood of a report is that of a binomial GLM with the link
  μ = (1 − p) + (2p − 1)·expit(η), so svyglm with that link fits the same coefficients (to
  1e-6: its Fisher scoring stops early; polished by three Newton steps in R, to 1e-8). Its
  covariance uses glm's expected information as the bread where ldpsurvey uses the observed
  one (the two agree asymptotically; they differ for a non-canonical link), so the R script
  also builds the sandwich with the observed information through R's own svyrecvar: equal
  to 1e-8; svyglm's own within 10% (n ~ 250 here);
- linear regression of a noisy integer report (svyglm, gaussian): equal to 1e-8.
"""

from __future__ import annotations

import numpy as np
import pytest
from ldpsurvey.shared.design import Margin, poststratify
from ldpsurvey.shared.design.regression import fit_options
from ldpsurvey.shared.regression import fit_logistic
from ldpsurvey.shared.regression_linear import fit_linear
from support.design_data import fixture
from support.r_oracle import r_numbers, run_r

TOL = 1e-8
P_WARNER = 0.8


@pytest.fixture(scope="module")
def data():
    f = fixture()
    rng = np.random.default_rng(5)
    yes = (f.truth > 0).astype(np.int64)
    flip = rng.random(f.n) >= P_WARNER
    answered = rng.random(f.n) > 0.1
    return f, yes, (yes ^ flip).astype(np.int64), answered


def _x(f) -> tuple[np.ndarray, list[str]]:
    x = np.column_stack([np.ones(f.n), f.sex == 1, f.region == 1, f.region == 2, f.age])
    return x.astype(float), ["(intercept)", "sex1", "region1", "region2", "age"]


@pytest.fixture(scope="module")
def r_results(data):
    f, yes, report, answered = data
    table = f.table()
    table.update({"yes": yes, "report": report, "answered": answered.astype(int)})
    n_pop = float(f.weight.sum() * 1.05)
    script = f"""
d <- read.csv("data.csv"); d$sex <- factor(d$sex); d$region <- factor(d$region)
des <- svydesign(ids = ~psu, strata = ~stratum, weights = ~weight, data = d, nest = TRUE)
out <- list()
put <- function(tag, g) {{ out[[tag]] <<- coef(g); out[[paste0(tag, "_vcov")]] <<- vcov(g) }}
tight <- glm.control(epsilon = 1e-14, maxit = 100)
put("disclosed", svyglm(yes ~ sex + region + age, des, family = quasibinomial(),
                        control = tight))
put("subset", svyglm(yes ~ sex + region + age, des, subset = answered == 1,
                     family = quasibinomial(), control = tight))
ps <- postStratify(des, ~sex, data.frame(sex = c("0", "1"),
                                         Freq = {r_numbers([n_pop * 0.48, n_pop * 0.52])}))
put("poststratified", svyglm(yes ~ sex + region + age, ps, family = quasibinomial(),
                             control = tight))
put("linear", svyglm(y ~ sex + region + age, des))
# Warner's design: P(report yes) = (1 - p) + (2p - 1) expit(eta)
p <- {P_WARNER}
a <- 1 - p; cc <- 2 * p - 1
warner <- structure(list(
  linkfun = function(mu) qlogis((mu - a) / cc),
  linkinv = function(eta) a + cc * plogis(eta),
  mu.eta = function(eta) cc * dlogis(eta),
  valideta = function(eta) TRUE, name = "warner"), class = "link-glm")
g <- svyglm(report ~ sex + region + age, des, family = quasibinomial(link = warner),
            start = rep(0, 5), control = tight)
out[["warner_svyglm"]] <- coef(g)
out[["warner_svyglm_vcov"]] <- vcov(g)
# Fisher scoring stops with a score of ~1e-5 here: three Newton steps on the same
# pseudo-likelihood polish it; then the sandwich with the observed information as its bread,
# through R's svyrecvar
X <- model.matrix(g); r <- d$report; w <- d$weight / mean(d$weight)
beta <- coef(g)
for (step in 0:3) {{
  eta <- drop(X %*% beta); m <- plogis(eta); mu <- a + cc * m
  D <- cc * m * (1 - m); D1 <- D * (1 - 2 * m)
  s <- (r - mu) / (mu * (1 - mu))
  ds <- (-D * mu * (1 - mu) - (r - mu) * (1 - 2 * mu) * D) / (mu * (1 - mu))^2
  info <- -crossprod(X * w * (ds * D + s * D1), X)
  if (step < 3) beta <- beta + drop(solve(info, colSums(X * w * s * D)))
}}
out[["warner"]] <- beta
u <- (X * w * s * D) %*% solve(info)
out[["warner_vcov"]] <- survey:::svyrecvar(u, des$cluster, des$strata, des$fpc,
                                           postStrata = des$postStrata)
emit(out)
"""
    return run_r(script, {"data": table})


def _logistic(f, symbols, channel, design, rows=None):
    x, names = _x(f)
    index = np.arange(f.n) if rows is None else np.flatnonzero(rows)
    return fit_logistic(x[index], names, symbols[index], channel, outcome="yes",
                        outcome_level="yes", **fit_options(design, index))


def _check(result, r_results, tag, vcov_tag=None) -> None:
    estimates = np.array([c.estimate for c in result.coefficients])
    np.testing.assert_allclose(estimates, r_results[tag], rtol=0, atol=TOL)
    se = np.array([c.std_error for c in result.coefficients])
    expected = np.sqrt(np.diag(np.array(r_results[vcov_tag or tag + "_vcov"]).reshape(5, 5)))
    np.testing.assert_allclose(se, expected, rtol=1e-8)


def test_logistic_on_a_disclosed_outcome_equals_svyglm(data, r_results) -> None:
    f, yes, _, answered = data
    design = f.design(fpc=False)
    identity = np.eye(2)
    _check(_logistic(f, yes, identity, design), r_results, "disclosed")
    _check(_logistic(f, yes, identity, design, rows=answered), r_results, "subset")
    n_pop = float(f.weight.sum() * 1.05)
    post = poststratify(design, Margin("sex", f.sex, {0: n_pop * 0.48, 1: n_pop * 0.52}))
    _check(_logistic(f, yes, identity, post), r_results, "poststratified")


def test_logistic_on_a_randomized_outcome_equals_svyglm_with_the_rr_link(data,
                                                                         r_results) -> None:
    f, _, report, _ = data
    channel = np.array([[P_WARNER, 1 - P_WARNER], [1 - P_WARNER, P_WARNER]])
    result = _logistic(f, report, channel, f.design(fpc=False))
    _check(result, r_results, "warner", "warner_vcov")
    se = np.array([c.std_error for c in result.coefficients])
    svyglm_se = np.sqrt(np.diag(np.array(r_results["warner_svyglm_vcov"]).reshape(5, 5)))
    assert np.all(np.abs(se / svyglm_se - 1) < 0.10)
    np.testing.assert_allclose([c.estimate for c in result.coefficients],
                               r_results["warner_svyglm"], rtol=1e-6)


def test_linear_on_a_noisy_integer_equals_svyglm(data, r_results) -> None:
    f, _, _, _ = data
    x, names = _x(f)
    design = f.design(fpc=False)
    result = fit_linear(x, names, f.count_reports.astype(float), 10.0, outcome="count",
                        outcome_range=20.0, **fit_options(design))
    _check(result, r_results, "linear")


def test_the_fpc_is_left_out_of_regression_variances(data) -> None:
    f, yes, _, _ = data
    with_fpc = _logistic(f, yes, np.eye(2), f.design(fpc=True))
    without = _logistic(f, yes, np.eye(2), f.design(fpc=False))
    assert [c.std_error for c in with_fpc.coefficients] == pytest.approx(
        [c.std_error for c in without.coefficients], rel=1e-12)
