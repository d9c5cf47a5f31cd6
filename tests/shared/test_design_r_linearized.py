"""Design-based estimates on pseudo-values against R's survey package (the oracle), linearized
variances: svymean, svytotal, svyratio and domain means (subset) on a stratified cluster sample
with unequal weights, with and without an fpc, to 1e-8 (relative for totals).

With an fpc, ldpsurvey adds the randomization term R does not know about (docs/design-based.md):
Σ_h f_h Σ_{i in h} a_i² V̂_i, V̂_i = z_i² − z_i for an indicator's pseudo-value. The R script
computes that term itself from the same data, so both sides of the sum are R's.
One Rscript run serves the whole module.
"""

from __future__ import annotations

import numpy as np
import pytest
from ldpsurvey.shared.design import from_values, mean, ratio, total
from support.design_data import fixture
from support.r_oracle import run_r

TOL = 1e-8

SCRIPT = r"""
d <- read.csv("data.csv")
out <- list()
for (with_fpc in c(FALSE, TRUE)) {
  des <- if (with_fpc) {
    svydesign(ids = ~psu, strata = ~stratum, weights = ~weight, fpc = ~fpc, data = d, nest = TRUE)
  } else {
    svydesign(ids = ~psu, strata = ~stratum, weights = ~weight, data = d, nest = TRUE)
  }
  tag <- if (with_fpc) "fpc_" else "plain_"
  # the randomization term an fpc hides: sum_h f_h sum_i a_i^2 (z^2 - z)
  npsu <- ave(as.numeric(factor(paste(d$stratum, d$psu))), d$stratum,
              FUN = function(x) length(unique(x)))
  f <- if (with_fpc) npsu / d$fpc else 0 * npsu
  term <- function(a, z) sum(f * a^2 * (z^2 - z))
  z <- as.matrix(d[, c("z1", "z2", "z3")])
  a_mean <- d$weight / sum(d$weight)
  dom <- d$sex == 1
  a_dom <- d$weight * dom / sum(d$weight * dom)
  m <- svymean(~z1 + z2 + z3, des)
  tt <- svytotal(~z1 + z2 + z3, des)
  md <- svymean(~z1 + z2 + z3, subset(des, sex == 1))
  r <- svyratio(~z1 + z2 + z3, ~age, des)
  a_ratio <- d$weight / sum(d$weight * d$age)
  out[[paste0(tag, "mean")]] <- coef(m)
  out[[paste0(tag, "mean_var")]] <- diag(vcov(m)) + apply(z, 2, function(v) term(a_mean, v))
  out[[paste0(tag, "total")]] <- coef(tt)
  out[[paste0(tag, "total_var")]] <- diag(vcov(tt)) + apply(z, 2, function(v) term(d$weight, v))
  out[[paste0(tag, "domain")]] <- coef(md)
  out[[paste0(tag, "domain_var")]] <- diag(vcov(md)) + apply(z, 2, function(v) term(a_dom, v))
  out[[paste0(tag, "ratio")]] <- coef(r)
  out[[paste0(tag, "ratio_var")]] <- as.vector(r$var) + apply(z, 2, function(v) term(a_ratio, v))
}
emit(out)
"""


@pytest.fixture(scope="module")
def data():
    return fixture()


@pytest.fixture(scope="module")
def r_results(data):
    return run_r(SCRIPT, {"data": data.table()})


@pytest.mark.parametrize("fpc", [False, True], ids=["no-fpc", "fpc"])
def test_mean_total_ratio_and_domain_equal_r(data, r_results, fpc: bool) -> None:
    tag = "fpc_" if fpc else "plain_"
    design = data.design(fpc=fpc)
    pv = data.pseudo()
    checks = {
        "mean": mean(design, pv),
        "total": total(design, pv),
        "domain": mean(design, pv, domain=data.sex == 1),
        "ratio": ratio(design, pv, from_values("age", data.age.astype(float))),
    }
    for name, result in checks.items():
        expected = np.array(r_results[tag + name])
        expected_var = np.array(r_results[tag + name + "_var"])
        scale = np.abs(expected) if name == "total" else 1.0
        np.testing.assert_allclose(result.estimates / scale, expected / scale, rtol=0,
                                   atol=TOL, err_msg=name)
        np.testing.assert_allclose(np.diag(result.covariance) / scale**2,
                                   expected_var / scale**2, rtol=0, atol=TOL, err_msg=name)
        np.testing.assert_allclose(result.std_errors, np.sqrt(expected_var), rtol=1e-8,
                                   err_msg=name)


def test_a_census_keeps_the_randomization_variance(data) -> None:
    """Every PSU of every stratum taken (N_h = n_h): the design variance is 0 (R says 0) but
    every answer is still randomized, so the variance is exactly Σ a_i² V̂_i."""
    from ldpsurvey.shared.design import Design

    sampled = {s: len(set(data.psu[data.stratum == s])) for s in set(data.stratum)}
    census = Design.build(data.weight, data.stratum, data.psu,
                          [sampled[s] for s in data.stratum])
    pv = data.pseudo()
    result = mean(census, pv)
    a = data.weight / data.weight.sum()
    expected = (a[:, None] ** 2 * (pv.values**2 - pv.values)).sum(axis=0)
    np.testing.assert_allclose(np.diag(result.covariance), expected, rtol=1e-12)
    assert np.all(expected > 0)
