"""The survey-csv export run in R: the exported CSV and its generated script give ldpsurvey's
estimates and standard errors, to 1e-8, for a stratified cluster design with an fpc (so the
randomization term is exported and added back), post-stratified, raked, linearly calibrated
with bounds, and with JKn and bootstrap replicate weights; a question some respondents skipped
(its pseudo-values are empty there: a domain). One Rscript run for the module.
"""

from __future__ import annotations

import io

import numpy as np
import pytest
from ldpsurvey.shared.design import (
    Margin,
    build_replicates,
    calibrate,
    estimate,
    model_matrix,
    poststratify,
    pseudo_values,
    rake,
)
from ldpsurvey.shared.design.export import r_script, stata_script, write_csv
from support.design_data import fixture
from support.r_oracle import run_r

CASES = ("plain", "post", "rake", "bounded", "jkn", "boot")


@pytest.fixture(scope="module")
def data():
    return fixture()


def _case(data, name):
    design = data.design(fpc=True)
    n_pop = float(data.weight.sum() * 1.05)
    sex = Margin("sex", data.sex, {0: n_pop * 0.48, 1: n_pop * 0.52})
    region = Margin("region", data.region, {0: n_pop * 0.3, 1: n_pop * 0.3, 2: n_pop * 0.4})
    replicates = None
    if name == "post":
        design = poststratify(design, sex)
    elif name == "rake":
        design = rake(design, [sex, region], tolerance=1e-13)
    elif name == "bounded":
        model, totals, names = model_matrix([sex, region], data.n)
        design = calibrate(design, np.column_stack([model, data.age]),
                           np.append(totals, n_pop * 50), names=[*names, "age"],
                           bounds=(0.6, 1.6), tolerance=1e-13, max_iterations=200)
    elif name == "jkn":
        replicates = build_replicates(design, "jkn")
        design = rake(design, [sex, region], tolerance=1e-13)
    elif name == "boot":
        replicates = build_replicates(design, "bootstrap", replicates=40, seed=2)
    skipped = np.random.default_rng(9).random(data.n) < 0.15
    count = pseudo_values(data.count_question, data.geometric, data.count_reports[~skipped],
                          present=~skipped)
    return design, [data.pseudo(), count], replicates


@pytest.fixture(scope="module")
def exported(data):
    files, script = {}, []
    for name in CASES:
        design, questions, replicates = _case(data, name)
        handle = io.StringIO()
        ids = [f"sub-{i}" for i in range(data.n)]
        plan = write_csv(handle, design, ids, questions,
                         {"sex": data.sex.tolist(), "region": data.region.tolist()}, replicates)
        files[f"{name}.csv"] = handle.getvalue()
        script.append(r_script(f"{name}.csv", design, plan, replicates))
        script.append(f"emit_{name} <- lapply(ldp_results, "
                      "function(t) c(t$estimate, t$std_error))\n")
    collect = ", ".join(f"{name}_{j} = emit_{name}[[{j + 1}]]" for name in CASES for j in range(2))
    # the totals (svytotal, with the fpc's randomization term) come after the means
    collect += ", " + ", ".join(f"{name}_total_{j} = emit_{name}[[{j + 3}]]" for name in CASES
                                for j in range(2))
    text = "\n".join(script) + f"emit(list({collect}))\n"
    return run_r(text, {}, files=files)


@pytest.mark.parametrize("name", CASES)
def test_the_exported_csv_and_script_give_the_same_numbers_in_r(data, exported, name) -> None:
    design, questions, replicates = _case(data, name)
    results = estimate(design, questions, variance=replicates or "linearized")
    for j, result in enumerate(results):
        got = np.array(exported[f"{name}_{j}"])
        m = result.estimates.size
        np.testing.assert_allclose(got[:m], result.estimates, rtol=0, atol=1e-8)
        np.testing.assert_allclose(got[m:], result.std_errors, rtol=1e-8)
    totals = estimate(design, questions, statistic="total", variance=replicates or "linearized")
    for j, result in enumerate(totals):
        got = np.array(exported[f"{name}_total_{j}"])
        m = result.estimates.size - (1 if "mean score" in result.labels else 0)
        keep = [i for i, label in enumerate(result.labels) if label != "mean score"]
        assert got.size == 2 * m, (name, j, got)  # the weights are 1/π: totals are given
        np.testing.assert_allclose(got[:m], result.estimates[keep], rtol=1e-10)
        np.testing.assert_allclose(got[m:], result.std_errors[keep], rtol=1e-10)


def test_stata_lines_name_the_design(data) -> None:
    design, questions, replicates = _case(data, "plain")
    handle = io.StringIO()
    plan = write_csv(handle, design, [str(i) for i in range(data.n)], questions, {})
    text = stata_script("survey.csv", design, plan, replicates)
    assert "svyset psu [pweight=weight], strata(stratum) fpc(fpc)" in text
    assert "svy: mean use_never use_sometimes use_often" in text
    header = handle.getvalue().splitlines()[0].split(",")
    assert header[:5] == ["submission_id", "weight", "stratum", "psu", "fpc"]
    assert "ldp_noise_use_never" in header and header[-1] == "ldp_fraction"
