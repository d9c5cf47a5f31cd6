"""Design degrees of freedom and t intervals (issue 39): the design's df is R's `degf` (PSUs
minus strata; the rank of the replicate weights minus 1), and a design-based interval is
R's `confint(..., df = degf(design))`, Stata's `svy`; `quantile="normal"` gives R's default
confint. The t and χ² quantiles (shared/distributions.py, no scipy at run time) equal
scipy's."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from ldpsurvey.shared.design import Design, build_replicates, mean
from ldpsurvey.shared.design.replicates import from_weights
from ldpsurvey.shared.distributions import chi2_value, t_value
from support.design_data import fixture
from support.r_oracle import run_r

TOL = 1e-10
BOOTSTRAP = 30


def test_t_and_chi2_quantiles_equal_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    for confidence, df in itertools.product((0.5, 0.8, 0.9, 0.95, 0.99, 0.999),
                                            (1, 2, 3, 5.5, 6, 14, 30, 100, 1000)):
        assert t_value(confidence, df) == pytest.approx(
            stats.t.ppf(0.5 + confidence / 2, df), rel=1e-12)
    for p, df in itertools.product((0.001, 0.0125, 0.025, 0.5, 0.975, 0.9875, 0.999),
                                   (1, 2, 3, 6, 14, 30, 100, 1000)):
        assert chi2_value(p, df) == pytest.approx(stats.chi2.ppf(p, df), rel=1e-11)
    assert round(t_value(0.95, 14), 3) == 2.145  # 15 PSUs in one stratum: Stata's svy
    assert t_value(0.95, None) == t_value(0.95, float("inf")) == pytest.approx(1.959964, 1e-6)


@pytest.fixture(scope="module")
def data():
    return fixture()


def _unstratified(data) -> Design:
    psus = np.array([f"{s}-{p}" for s, p in zip(data.stratum, data.psu, strict=True)])
    return Design.build(data.weight, None, psus)


@pytest.fixture(scope="module")
def boot(data):
    return build_replicates(data.design(fpc=False), "bootstrap", replicates=BOOTSTRAP, seed=5)


@pytest.fixture(scope="module")
def r_results(data, boot):
    table = data.table()
    table["psu_global"] = [f"{s}-{p}" for s, p in zip(data.stratum, data.psu, strict=True)]
    design = data.design(fpc=False)
    weights = design.weights[:, None] * boot.factors[:, design.psus].T
    for r in range(boot.count):
        table[f"rw{r}"] = weights[:, r]
    script = f"""
d <- read.csv("data.csv")
des <- svydesign(ids = ~psu, strata = ~stratum, weights = ~weight, data = d, nest = TRUE)
one <- svydesign(ids = ~psu_global, weights = ~weight, data = d)
rw <- as.matrix(d[, grep("^rw", names(d))])
designs <- list(
  linearized = des, jkn = as.svrepdesign(des, type = "JKn", compress = FALSE),
  jk1 = as.svrepdesign(one, type = "JK1", compress = FALSE),
  bootstrap = svrepdesign(data = d, repweights = rw, weights = ~weight, type = "bootstrap",
                          combined.weights = TRUE, scale = {boot.scale!r},
                          rscales = 1))
out <- list()
for (name in names(designs)) {{
  x <- designs[[name]]
  m <- svymean(~z1 + z2 + z3, x)
  out[[paste0(name, "_df")]] <- degf(x)
  ci_t <- confint(m, df = degf(x), level = 0.9)
  ci_z <- confint(m, level = 0.9)
  out[[paste0(name, "_t_low")]] <- ci_t[, 1]
  out[[paste0(name, "_t_high")]] <- ci_t[, 2]
  out[[paste0(name, "_z_low")]] <- ci_z[, 1]
  out[[paste0(name, "_z_high")]] <- ci_z[, 2]
}}
emit(out)
"""
    return run_r(script, {"data": table})


def _designs(data, boot):
    linearized = data.design(fpc=False)
    unstratified = _unstratified(data)
    return {"linearized": (linearized, "linearized"),
            "jkn": (linearized, build_replicates(linearized, "jkn")),
            "jk1": (unstratified, build_replicates(unstratified, "jk1")),
            "bootstrap": (linearized, boot)}


@pytest.mark.parametrize("name", ["linearized", "jkn", "jk1", "bootstrap"])
def test_df_and_intervals_equal_r_confint_with_degf(data, boot, r_results, name) -> None:
    design, variance = _designs(data, boot)[name]
    pv = data.pseudo()
    assert r_results[f"{name}_df"] == [pytest.approx(
        mean(design, pv, variance=variance).df, abs=0)]
    for quantile, tag in (("t", "t"), ("normal", "z")):
        rows = mean(design, pv, variance=variance, confidence=0.9, quantile=quantile).rows()
        assert [r.ci_low for r in rows] == pytest.approx(r_results[f"{name}_{tag}_low"],
                                                         rel=TOL if name == "linearized"
                                                         else 1e-8)
        assert [r.ci_high for r in rows] == pytest.approx(r_results[f"{name}_{tag}_high"],
                                                          rel=TOL if name == "linearized"
                                                          else 1e-8)


def test_degrees_of_freedom_are_psus_minus_strata_and_replicate_rank(data, boot) -> None:
    design = data.design(fpc=False)
    assert design.degrees_of_freedom == design.psu_count - design.stratum_count
    assert build_replicates(design, "jkn").degrees_of_freedom == design.degrees_of_freedom
    unstratified = _unstratified(data)
    assert build_replicates(unstratified, "jk1").degrees_of_freedom == design.psu_count - 1
    given = from_weights(design, "bootstrap", design.weights[:, None]
                         * boot.factors[:, design.psus].T, boot.scale)
    assert given.degrees_of_freedom == boot.degrees_of_freedom


def test_calibrated_replicate_designs_have_rs_degf(data) -> None:
    """R's postStratify and rake recompute a replicate design's degf on the recalibrated
    replicate weights (21 → 26 here); calibrate and linearized designs keep PSUs − strata."""
    from ldpsurvey.shared.design import Margin, poststratify, rake

    design = data.design(fpc=False)
    n_pop = float(data.weight.sum() * 1.05)
    sex = Margin("sex", data.sex, {0: n_pop * 0.48, 1: n_pop * 0.52})
    region = Margin("region", data.region, {0: n_pop * 0.3, 1: n_pop * 0.3, 2: n_pop * 0.4})
    raked, post = rake(design, [sex, region], tolerance=1e-13), poststratify(design, sex)
    pv = data.pseudo()
    ours = {name: mean(d, pv, variance=build_replicates(d, "jkn"), confidence=0.9)
            for name, d in (("rk", raked), ("ps", post))}
    ours["lin_ps"] = mean(post, pv)
    script = f"""
d <- read.csv("data.csv"); d$sex <- factor(d$sex); d$region <- factor(d$region)
des <- svydesign(ids = ~psu, strata = ~stratum, weights = ~weight, data = d, nest = TRUE)
jk <- as.svrepdesign(des, type = "JKn", compress = FALSE)
pop_sex <- data.frame(sex = c("0", "1"), Freq = c({n_pop * 0.48!r}, {n_pop * 0.52!r}))
pop_region <- data.frame(region = c("0", "1", "2"),
                         Freq = c({n_pop * 0.3!r}, {n_pop * 0.3!r}, {n_pop * 0.4!r}))
rk <- rake(jk, list(~sex, ~region), list(pop_sex, pop_region),
           control = list(maxit = 200, epsilon = 1e-13))
ps <- postStratify(jk, ~sex, pop_sex)
ci <- confint(svymean(~z1 + z2 + z3, rk), df = degf(rk), level = 0.9)
emit(list(rk = degf(rk), ps = degf(ps), lin_ps = degf(postStratify(des, ~sex, pop_sex)),
          rk_low = ci[, 1], rk_high = ci[, 2]))
"""
    r = run_r(script, {"data": data.table()})
    assert {k: [v.df] for k, v in ours.items()} == {k: r[k] for k in ("rk", "ps", "lin_ps")}
    rows = ours["rk"].rows()
    assert [x.ci_low for x in rows] == pytest.approx(r["rk_low"], rel=1e-8)
    assert [x.ci_high for x in rows] == pytest.approx(r["rk_high"], rel=1e-8)
