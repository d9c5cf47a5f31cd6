"""Design-based estimates on pseudo-values against R's survey package (the oracle), linearized
variances: svymean, svytotal, svyratio and domain means (subset) on a stratified cluster sample
with unequal weights, with and without an fpc, to 1e-8 (relative for totals).

With an fpc, ldpsurvey adds the randomization term R does not know about (docs/design-based.md):
Σ_h f_h Σ_{i in h} a_i² V̂_i, V̂_i = z_i² − z_i for an indicator's pseudo-value. The R script
computes that term itself from the same data, so both sides of the sum are R's.
Also: the lonely-PSU options (R's survey.lonely.psu) on a stratum left with one PSU, and the
design effect of disclosed answers against svymean(deff = TRUE).
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
# a stratum with a single PSU (s0 keeps only PSU 1): the lonely-PSU options
lone <- d[!(d$stratum == "s0" & d$psu == 2), ]
a_lone <- lone$weight / sum(lone$weight)
in_s0 <- lone$stratum == "s0"
zl <- as.matrix(lone[, c("z1", "z2", "z3")])
for (opt in c("remove", "certainty", "adjust", "average")) {
  options(survey.lonely.psu = opt)
  des <- svydesign(ids = ~psu, strata = ~stratum, weights = ~weight, data = lone, nest = TRUE)
  v <- diag(vcov(svymean(~z1 + z2 + z3, des)))
  if (opt == "certainty") {  # the certain PSU's answers are still randomized
    v <- v + apply(zl, 2, function(z) sum(in_s0 * a_lone^2 * (z^2 - z)))
  }
  out[[paste0("lonely_", opt)]] <- v
}
options(survey.lonely.psu = "fail")
# design effects of disclosed answers (true answers as indicators)
d$truth_f <- factor(d$truth)
for (with_fpc in c(FALSE, TRUE)) {
  des <- if (with_fpc) {
    svydesign(ids = ~psu, strata = ~stratum, weights = ~weight, fpc = ~fpc, data = d, nest = TRUE)
  } else {
    svydesign(ids = ~psu, strata = ~stratum, weights = ~weight, data = d, nest = TRUE)
  }
  m <- svymean(~truth_f, des, deff = TRUE)
  out[[paste0("deff_", with_fpc)]] <- deff(m)
  out[[paste0("deff_se_", with_fpc)]] <- SE(m)
}
# relative weights (rescaled to mean 1): the SRS baseline without (1 - n/N), deff = "replace"
d$relative <- d$weight / mean(d$weight)
rel <- svydesign(ids = ~psu, strata = ~stratum, weights = ~relative, data = d, nest = TRUE)
out$deff_relative <- deff(svymean(~truth_f, rel, deff = "replace"))
out$deff_relative_domain <- deff(svymean(~truth_f, subset(rel, sex == 0), deff = "replace"))
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


@pytest.mark.parametrize("option", ["remove", "certainty", "adjust", "average"])
def test_lonely_psu_options_equal_r(data, r_results, option: str) -> None:
    from ldpsurvey.shared.design import Design, pseudo_values

    keep = ~((data.stratum == "s0") & (data.psu == 2))
    design = Design.build(data.weight[keep], data.stratum[keep], data.psu[keep],
                          lonely_psu=option)
    pv = pseudo_values(data.question, data.grr, data.reports[keep])
    result = mean(design, pv)
    np.testing.assert_allclose(np.diag(result.covariance), r_results["lonely_" + option],
                               rtol=1e-9, atol=1e-14)


def test_lonely_psu_fail_refuses_naming_the_stratum(data) -> None:
    from ldpsurvey.shared.design import Design
    from ldpsurvey.shared.errors import DesignError

    keep = ~((data.stratum == "s0") & (data.psu == 2))
    with pytest.raises(DesignError, match=r"'s0'.*lonely_psu"):
        Design.build(data.weight[keep], data.stratum[keep], data.psu[keep])


@pytest.mark.parametrize("fpc", [False, True], ids=["no-fpc", "fpc"])
def test_design_effect_of_disclosed_answers_equals_r(data, r_results, fpc: bool) -> None:
    """On answers that are not randomized the privacy part is 1 and the design effect is R's
    svymean(deff = TRUE), to 1e-8."""
    from ldpsurvey.shared.design import pseudo_values
    from ldpsurvey.shared.mechanisms.disclosed import Disclosed
    from support.design_data import question

    q = question("use")
    pv = pseudo_values(q, Disclosed(q.labels, question_id="use"), data.truth)
    result = mean(data.design(fpc=fpc), pv)
    np.testing.assert_allclose(result.std_errors, r_results[f"deff_se_{str(fpc).upper()}"],
                               rtol=1e-9)
    for effect, expected in zip(result.effects(), r_results[f"deff_{str(fpc).upper()}"],
                                strict=True):
        assert effect.total == pytest.approx(expected, rel=1e-8)
        assert effect.sampling == pytest.approx(expected, rel=1e-8)
        assert effect.privacy == pytest.approx(1.0, abs=1e-12)
        assert effect.effective_n == pytest.approx(data.n / expected, rel=1e-8)


def test_relative_weights_take_no_finite_population_factor(data, r_results) -> None:
    """Issue 39: weights rescaled to mean 1 have N̂ = Σ w about n, so R's (1 − n/N̂) would
    shrink V_srs to about 0 and blow the deff up (in a domain whose weights average above
    1, or when Σ w exceeds n by rounding: 36 times R's deff = "replace" in the domain
    below). Relative weights (estimators.totals_refusal) take R's deff = "replace" instead,
    and the same weights × 1000 (population-scaled, no fpc) keep R's deff = TRUE: their
    deffs differ by exactly that factor, 1 − n/N̂ (0.999 here)."""
    from ldpsurvey.shared.design import Design, pseudo_values, totals_refusal
    from ldpsurvey.shared.mechanisms.disclosed import Disclosed
    from support.design_data import question

    q = question("use")
    pv = pseudo_values(q, Disclosed(q.labels, question_id="use"), data.truth)
    relative = data.weight / data.weight.mean()
    rel = Design.build(relative, data.stratum, data.psu)
    scaled = Design.build(relative * 1000, data.stratum, data.psu)
    assert totals_refusal(rel) is not None and totals_refusal(scaled) is None
    for domain, expected in ((None, r_results["deff_relative"]),
                             (data.sex == 0, r_results["deff_relative_domain"])):
        d = np.ones(data.n, dtype=bool) if domain is None else domain
        assert domain is None or relative[d].sum() > d.sum()  # R's 1 − n/N̂: 0.028 here
        factor = 1 - d.sum() / (relative[d].sum() * 1000)
        for a, b, r in zip(mean(rel, pv, domain=domain).effects(),
                           mean(scaled, pv, domain=domain).effects(), expected, strict=True):
            assert a.total == pytest.approx(r, rel=1e-8)
            assert a.total == pytest.approx(b.total * factor, rel=1e-9)


def test_randomized_answers_split_their_design_effect(data) -> None:
    """deff = deff_sampling × deff_privacy and effective n = n/deff; privacy > 1 for
    randomized answers (GRR at ε = 4 here, so that the design's part is estimable at n ~ 250:
    at ε = 1 the randomization can swamp it and the split is then None)."""
    from ldpsurvey.shared.design import pseudo_values
    from ldpsurvey.shared.mechanisms.grr import GRR

    grr = GRR(4.0, data.question.labels, question_id="use")
    reports = grr.perturb_many(data.truth, np.random.default_rng(4))
    result = mean(data.design(fpc=False), pseudo_values(data.question, grr, reports))
    for effect in result.effects():
        assert effect.privacy > 1
        assert effect.total == pytest.approx(effect.sampling * effect.privacy, rel=1e-12)
        assert effect.effective_n == pytest.approx(data.n / effect.total, rel=1e-12)
    noisy = mean(data.design(fpc=False), data.pseudo())  # ε = 1: not always estimable
    assert all((e.sampling is None) == (e.privacy is None) for e in noisy.effects())
