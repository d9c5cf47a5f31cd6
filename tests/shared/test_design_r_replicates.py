"""Replicate variances against R's survey package: JK1 and JKn as R's as.svrepdesign builds
them (the same replicates, so the same numbers, to 1e-8), raked replicate designs (each
replicate recalibrated, as R does), lonely-PSU strata under JKn, and the bootstrap given the
same replicate weights (R draws its own otherwise) with the scale R's bootweights sets
(n̄/((n̄ − 1)(R − 1)), checked against R's as.svrepdesign(type = "bootstrap")$scale).
With an fpc the R script adds the randomization term (docs/design-based.md).
"""

from __future__ import annotations

import numpy as np
import pytest
from ldpsurvey.shared.design import Design, Margin, build_replicates, mean, rake
from ldpsurvey.shared.design.replicates import jkn
from ldpsurvey.shared.errors import DesignError
from support.design_data import fixture
from support.r_oracle import r_numbers, run_r

TOL = 1e-8
BOOTSTRAP = 50


@pytest.fixture(scope="module")
def data():
    return fixture()


@pytest.fixture(scope="module")
def margins(data):
    n_pop = float(data.weight.sum() * 1.05)
    return [Margin("sex", data.sex, {0: n_pop * 0.48, 1: n_pop * 0.52}),
            Margin("region", data.region, {0: n_pop * 0.3, 1: n_pop * 0.3, 2: n_pop * 0.4})]


def _global_psu(data) -> np.ndarray:
    return np.array([f"{s}-{p}" for s, p in zip(data.stratum, data.psu, strict=True)])


def _unstratified(data, fpc: bool) -> Design:
    return Design.build(data.weight, None, _global_psu(data),
                        np.full(data.n, 60.0) if fpc else None)


@pytest.fixture(scope="module")
def boots(data):
    return {fpc: build_replicates(data.design(fpc=fpc), "bootstrap", replicates=BOOTSTRAP,
                                  seed=11) for fpc in (False, True)}


@pytest.fixture(scope="module")
def r_results(data, margins, boots):
    table = data.table()
    table["psu_global"] = _global_psu(data)
    design = data.design(fpc=False)
    for fpc, boot in boots.items():
        weights = design.weights[:, None] * boot.factors[:, design.psus].T
        for r in range(boot.count):
            table[f"rw{int(fpc)}_{r}"] = weights[:, r]
    keep = ~((data.stratum == "s0") & (data.psu == 2))
    lone = {key: np.asarray(values)[keep] for key, values in table.items()
            if not key.startswith("rw")}
    sex, region = margins[0].totals, margins[1].totals
    scales = r_numbers([boots[False].scale, boots[True].scale])
    script = f"""
d <- read.csv("data.csv"); d$sex <- factor(d$sex); d$region <- factor(d$region)
pop_sex <- data.frame(sex = c("0", "1"), Freq = {r_numbers([sex[0], sex[1]])})
pop_region <- data.frame(region = c("0", "1", "2"),
                         Freq = {r_numbers([region[0], region[1], region[2]])})
npsu <- ave(as.numeric(factor(paste(d$stratum, d$psu))), d$stratum,
            FUN = function(x) length(unique(x)))
z <- as.matrix(d[, c("z1", "z2", "z3")])
term <- function(w, f) {{ a <- w / sum(w); apply(z, 2, function(v) sum(f * a^2 * (v^2 - v))) }}
out <- list()
for (with_fpc in c(FALSE, TRUE)) {{
  tag <- if (with_fpc) "_fpc" else ""
  des <- if (with_fpc) {{
    svydesign(ids = ~psu, strata = ~stratum, weights = ~weight, fpc = ~fpc, data = d, nest = TRUE)
  }} else {{
    svydesign(ids = ~psu, strata = ~stratum, weights = ~weight, data = d, nest = TRUE)
  }}
  f <- if (with_fpc) npsu / d$fpc else 0 * npsu
  jk <- as.svrepdesign(des, type = "JKn", compress = FALSE)
  out[[paste0("jkn", tag)]] <- diag(vcov(svymean(~z1 + z2 + z3, jk))) + term(d$weight, f)
  out[[paste0("jkn_rscales", tag)]] <- sort(jk$rscales)
  raked <- rake(jk, list(~sex, ~region), list(pop_sex, pop_region),
                control = list(maxit = 200, epsilon = 1e-13))
  out[[paste0("jkn_rake", tag)]] <- diag(vcov(svymean(~z1 + z2 + z3, raked))) +
    term(weights(raked, "sampling"), f)
  one <- if (with_fpc) {{
    svydesign(ids = ~psu_global, weights = ~weight, fpc = rep(60, nrow(d)), data = d)
  }} else svydesign(ids = ~psu_global, weights = ~weight, data = d)
  f1 <- if (with_fpc) length(unique(d$psu_global)) / 60 else 0
  jk1 <- as.svrepdesign(one, type = "JK1")
  out[[paste0("jk1", tag)]] <- diag(vcov(svymean(~z1 + z2 + z3, jk1))) + term(d$weight, f1)
  rw <- as.matrix(d[, grep(paste0("^rw", as.integer(with_fpc), "_"), names(d))])
  boot <- svrepdesign(data = d, repweights = rw, weights = ~weight, type = "bootstrap",
                      combined.weights = TRUE, scale = {scales}[as.integer(with_fpc) + 1],
                      rscales = 1)
  out[[paste0("boot", tag)]] <- diag(vcov(svymean(~z1 + z2 + z3, boot))) + term(d$weight, f)
  braked <- rake(boot, list(~sex, ~region), list(pop_sex, pop_region),
                 control = list(maxit = 200, epsilon = 1e-13))
  out[[paste0("boot_rake", tag)]] <- diag(vcov(svymean(~z1 + z2 + z3, braked))) +
    term(weights(braked, "sampling"), f)
  set.seed(1)
  r_boot <- as.svrepdesign(des, type = "bootstrap", replicates = {BOOTSTRAP})
  out[[paste0("boot_scale", tag)]] <- r_boot$scale
}}
lone <- read.csv("lone.csv")
for (opt in c("remove", "certainty", "adjust", "average")) {{
  options(survey.lonely.psu = opt)
  des <- svydesign(ids = ~psu, strata = ~stratum, weights = ~weight, data = lone, nest = TRUE)
  jk <- as.svrepdesign(des, type = "JKn")
  out[[paste0("lonely_", opt)]] <- diag(vcov(svymean(~z1 + z2 + z3, jk)))
}}
emit(out)
"""
    return run_r(script, {"data": table, "lone": lone})


def _with_fpc(fpc: bool) -> str:
    return "_fpc" if fpc else ""


@pytest.mark.parametrize("fpc", [False, True], ids=["no-fpc", "fpc"])
def test_jackknives_equal_r(data, margins, r_results, fpc) -> None:
    design = data.design(fpc=fpc)
    pv = data.pseudo()
    replicates = build_replicates(design, "jkn")
    np.testing.assert_allclose(np.sort(replicates.rscales),
                               r_results["jkn_rscales" + _with_fpc(fpc)], rtol=1e-12)
    checks = {
        "jkn": mean(design, pv, variance=replicates),
        "jkn_rake": mean(rake(design, margins, tolerance=1e-13), pv, variance=replicates),
        "jk1": mean(_unstratified(data, fpc), pv,
                    variance=build_replicates(_unstratified(data, fpc), "jk1")),
    }
    for name, result in checks.items():
        np.testing.assert_allclose(np.diag(result.covariance),
                                   r_results[name + _with_fpc(fpc)], rtol=0, atol=TOL,
                                   err_msg=name)


@pytest.mark.parametrize("fpc", [False, True], ids=["no-fpc", "fpc"])
def test_bootstrap_given_the_same_replicates_equals_r(data, margins, boots, r_results,
                                                      fpc) -> None:
    design = data.design(fpc=fpc)
    pv = data.pseudo()
    boot = boots[fpc]
    assert boot.scale == pytest.approx(r_results["boot_scale" + _with_fpc(fpc)][0],
                                       rel=1e-12)
    plain = mean(design, pv, variance=boot)
    raked = mean(rake(design, margins, tolerance=1e-13), pv, variance=boot)
    np.testing.assert_allclose(np.diag(plain.covariance), r_results["boot" + _with_fpc(fpc)],
                               rtol=0, atol=TOL)
    np.testing.assert_allclose(np.diag(raked.covariance),
                               r_results["boot_rake" + _with_fpc(fpc)], rtol=0, atol=TOL)


@pytest.mark.parametrize("option", ["remove", "certainty", "adjust", "average"])
def test_jkn_lonely_psu_options_equal_r(data, r_results, option) -> None:
    keep = ~((data.stratum == "s0") & (data.psu == 2))
    design = Design.build(data.weight[keep], data.stratum[keep], data.psu[keep],
                          lonely_psu=option)
    from ldpsurvey.shared.design import pseudo_values

    pv = pseudo_values(data.question, data.grr, data.reports[keep])
    result = mean(design, pv, variance=jkn(design))
    expected = np.array(r_results["lonely_" + option])
    if option == "certainty":  # the certain PSU's answers are still randomized
        a = design.weights / design.weights.sum()
        in_s0 = data.stratum[keep] == "s0"
        expected = expected + ((a**2 * in_s0)[:, None] * (pv.values**2 - pv.values)).sum(0)
    np.testing.assert_allclose(np.diag(result.covariance), expected, rtol=0, atol=TOL)


def test_bootstrap_factors_follow_r_definition(data) -> None:
    """Each replicate draws n_h PSUs per stratum: factors are counts summing to n_h; with an
    fpc the draw is without replacement from N_h copies, so no factor exceeds ceil(N_h/n_h)."""
    design = data.design(fpc=True)
    boot = build_replicates(design, "bootstrap", replicates=200, seed=5)
    for s in range(design.stratum_count):
        members = design.psu_stratum == s
        sums = boot.factors[:, members].sum(axis=1)
        assert np.all(sums == members.sum())
        copies = int(np.ceil(design.population_psus[s] / members.sum()))
        assert boot.factors[:, members].max() <= copies
    again = build_replicates(design, "bootstrap", replicates=200, seed=5)
    assert np.array_equal(boot.factors, again.factors)  # a stated seed reproduces them


def test_replicate_errors(data) -> None:
    with pytest.raises(DesignError, match=r"JK1 .* stratified"):
        build_replicates(data.design(), "jk1")
    with pytest.raises(DesignError, match="one of jk1, jkn, bootstrap"):
        build_replicates(data.design(), "brr")
    with pytest.raises(DesignError, match="replicates must be an integer"):
        build_replicates(data.design(), "bootstrap", replicates=1)
