"""Design-based crosstabs with integer questions (bins), declared groups, and the design
effect of conditional shares (analyst/design/crosstab.py): the numbers equal R's `svymean` and
`svyratio` (with `deff = TRUE`) on the respondents' pseudo-values, computed here from the
stored reports by the formulas (not by the code under test)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.analyst.design.crosstab import residual_noise_estimate
from support import designed
from support.r_oracle import run_r

MARGINS = ("question,value,total\nregion,north,3000\nregion,south,5000\nregion,east,7000\n"
           "region,west,9000\nsex,female,12500\nsex,male,11500\n")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> designed.Built:
    return designed.build(tmp_path_factory.mktemp("crosstab") / "survey.db", fpc=False)


@pytest.fixture(scope="module")
def margins(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return designed.write(tmp_path_factory.mktemp("margins") / "margins.csv", MARGINS)


def crosstab(built: designed.Built, *args: Any) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["report", "--db", str(built.path), "--survey",
                                      built.survey_id, "--format", "json",
                                      *map(str, args)])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def stored(built: designed.Built) -> list[dict[str, Any]]:
    from ldpsurvey.server.store import open_store

    store = open_store(built.path)
    try:
        return [json.loads(r[4]) for r in store.export_rows(built.survey_id, 1, 0, 10**6)]
    finally:
        store.close()


def bin_pseudo_values(reports: list[int | None], a: float) -> np.ndarray:
    """g(y) = [(1 + a²)h(y) − a·h(y − 1) − a·h(y + 1)]/(1 − a)² for each bin's indicator h
    (reports below 0 or above 20 fall in the end bins): unbiased for the bin under two-sided
    geometric noise of ratio a (0 where unanswered)."""
    def bin_of(v: int) -> int:
        return int(v >= 3) + int(v >= 6)

    out = np.zeros((len(reports), 3))
    for i, y in enumerate(reports):
        if y is None:
            continue
        for j in range(3):
            hits = [float(bin_of(v) == j) for v in (y, y - 1, y + 1)]
            out[i, j] = ((1 + a * a) * hits[0] - a * hits[1] - a * hits[2]) / (1 - a) ** 2
    return out


def pseudo(built: designed.Built) -> dict[str, np.ndarray]:
    rows = stored(built)
    mechs = designed.mechanisms()
    z = mechs["mood"].pseudo_values(np.array([r["mood"] for r in rows]))
    smoker = mechs["smoker"].pseudo_values(np.array([r["smoker"] for r in rows]))
    a = math.exp(-float(mechs["drinks"].rate))
    bins = bin_pseudo_values([r.get("drinks") for r in rows], a)
    return {"group": z[:, 1] + z[:, 2], "rest": z[:, 0], "smoker_yes": smoker[:, 1],
            "mood_high": z[:, 2], **{f"b{j}": bins[:, j] for j in range(3)},
            "both": np.array([int("drinks" in r) for r in rows])}


def test_a_group_against_binned_integers_equals_r(built: designed.Built,
                                                   margins: Path) -> None:
    """mood's declared group 'not low' (against the rest) by drinks in bins 0-2, 3-5, 6-20:
    joint shares are svymean of the products, shares within a row or column svyratio, over
    the respondents who answered both, on the raked design."""
    doc = crosstab(built, "--rake", margins, "--crosstab", "mood:not low", "drinks", "--bins",
                   "3,6")
    assert doc["rows"]["cells"] == ["not low", "not not low"] and doc["rows"]["group"] == \
        "not low"
    assert doc["cols"]["cells"] == ["0-2", "3-5", "6-20"]
    z = pseudo(built)
    units = built.responded
    table = {"w": [u.weight for u in units], "stratum": [u.stratum for u in units],
             "psu": [u.psu for u in units], "region": [u.answers["region"] for u in units],
             "sex": [u.answers["sex"] for u in units], "both": z["both"],
             "g": z["group"], "r": z["rest"],
             **{f"b{j}": z[f"b{j}"] for j in range(3)},
             **{f"p_g_{j}": z["group"] * z[f"b{j}"] for j in range(3)},
             **{f"p_r_{j}": z["rest"] * z[f"b{j}"] for j in range(3)}}
    script = designed.RAKED_R + """
s <- subset(cal, both == 1)
j <- svymean(~p_g_0 + p_g_1 + p_g_2 + p_r_0 + p_r_1 + p_r_2, s)
given_g <- svyratio(~p_g_0 + p_g_1 + p_g_2, ~g, s)
given_b2 <- svyratio(~p_g_2 + p_r_2, ~b2, s)
emit(list(joint = coef(j), joint_se = SE(j), cond = coef(given_g), cond_se = SE(given_g),
          col = coef(given_b2), col_se = SE(given_b2)))
"""
    r = run_r(script, {"d": table})
    joint = [c for row in doc["joint"] for c in row]
    assert np.allclose([c["estimate"] for c in joint], r["joint"], atol=1e-8, rtol=0)
    assert np.allclose([c["std_error"] for c in joint], r["joint_se"], rtol=1e-7, atol=0)
    cond = doc["col_given_row"][0]
    assert np.allclose([c["estimate"] for c in cond], r["cond"], atol=1e-8, rtol=0)
    assert np.allclose([c["std_error"] for c in cond], r["cond_se"], rtol=1e-7, atol=0)
    col = [doc["row_given_col"][a][2] for a in range(2)]
    assert np.allclose([c["estimate"] for c in col], r["col"], atol=1e-8, rtol=0)
    assert np.allclose([c["std_error"] for c in col], r["col_se"], rtol=1e-7, atol=0)
    assert doc["n"] == int(z["both"].sum())


def test_conditional_shares_of_disclosed_answers_have_rs_svyratio_deff(
        built: designed.Built) -> None:
    """Two disclosed questions: each share within a row is svyratio's estimate, standard
    error and design effect (deff = TRUE); nothing is randomized, so deff privacy is 1."""
    doc = crosstab(built, "--weighted", "--crosstab", "region", "sex")
    units = built.responded
    table = {"w": [u.weight for u in units], "stratum": [u.stratum for u in units],
             "psu": [u.psu for u in units],
             "north": [float(u.answers["region"] == "north") for u in units],
             "north_male": [float(u.answers["region"] == "north" and u.answers["sex"] == "male")
                            for u in units],
             "male": [float(u.answers["sex"] == "male") for u in units],
             "west_male": [float(u.answers["region"] == "west" and u.answers["sex"] == "male")
                           for u in units]}
    script = """
d <- read.csv("d.csv")
des <- svydesign(ids = ~psu, strata = ~stratum, weights = ~w, nest = TRUE, data = d)
a <- svyratio(~north_male, ~north, des, deff = TRUE)
b <- svyratio(~west_male, ~male, des, deff = TRUE)
emit(list(est = c(coef(a), coef(b)), se = c(SE(a), SE(b)),
          deff = c(attr(a, "deff"), attr(b, "deff"))))
"""
    r = run_r(script, {"d": table})
    north_male = doc["col_given_row"][0][1]   # P(male | north)
    west_given_male = doc["row_given_col"][3][1]  # P(west | male)
    got = [north_male, west_given_male]
    assert np.allclose([c["estimate"] for c in got], r["est"], atol=1e-10, rtol=0)
    assert np.allclose([c["std_error"] for c in got], r["se"], rtol=1e-9, atol=0)
    assert np.allclose([c["deff"]["total"] for c in got], r["deff"], rtol=1e-9, atol=0)
    for c in got:
        assert c["deff"]["privacy"] == pytest.approx(1.0, abs=1e-12)
        assert c["deff"]["sampling"] == pytest.approx(c["deff"]["total"], rel=1e-12)


def test_conditional_shares_of_randomized_answers_split_their_deff(
        built: designed.Built) -> None:
    """A randomized pair: the SRS variance is R's svyratio(deff = TRUE) one on the
    pseudo-values less the residuals' estimated randomization variance (the answers' own
    spread, as for every design effect here), and deff = sampling × privacy."""
    doc = crosstab(built, "--weighted", "--crosstab", "smoker", "mood")
    z = pseudo(built)
    units = built.responded
    w = np.array([u.weight for u in units])
    x, v = z["smoker_yes"], z["mood_high"]
    table = {"w": w, "stratum": [u.stratum for u in units], "psu": [u.psu for u in units],
             "x": x, "p": x * v}
    script = """
d <- read.csv("d.csv")
des <- svydesign(ids = ~psu, strata = ~stratum, weights = ~w, nest = TRUE, data = d)
a <- svyratio(~p, ~x, des, deff = TRUE)
emit(list(est = coef(a), se = SE(a), deff = attr(a, "deff")))
"""
    r = run_r(script, {"d": table})
    cell = doc["col_given_row"][1][2]  # P(mood = high | smoker = yes)
    assert cell["estimate"] == pytest.approx(r["est"][0], abs=1e-10)
    assert cell["std_error"] == pytest.approx(r["se"][0], rel=1e-9)
    variance = cell["std_error"] ** 2
    srs_r = variance / r["deff"][0]
    n, population, base = len(units), w.sum(), w @ x
    noise = residual_noise_estimate(x, v[:, None], np.array([cell["estimate"]]))[:, 0]
    srs = srs_r - population**2 * (1 - n / population) / n * (w @ noise) / (base**2 * population)
    deff = cell["deff"]
    assert deff["total"] == pytest.approx(variance / srs, rel=1e-9)
    assert deff["total"] == pytest.approx(deff["sampling"] * deff["privacy"], rel=1e-12)
    assert deff["effective_n"] == pytest.approx(n / deff["total"], rel=1e-12)
    assert deff["privacy"] > 1


def test_crosstab_sides_are_refused_with_the_reason(built: designed.Built) -> None:
    def error(*args: Any) -> str:
        result = CliRunner().invoke(cli, ["report", "--db", str(built.path), "--survey",
                                          built.survey_id, "--weighted", *map(str, args)])
        assert result.exit_code == 1, result.output
        return result.output.strip().splitlines()[-1]

    assert "has no group 'nope'" in error("--crosstab", "mood:nope", "smoker")
    assert "an integer question has bins, not groups" in error("--crosstab", "drinks:x",
                                                              "smoker")
    assert "bins apply to integer questions" in error("--crosstab", "mood", "smoker",
                                                      "--bins", "1")
    assert "do not split [0, 20]" in error("--crosstab", "drinks", "smoker", "--bins", "40")


def test_every_format_shows_the_design_effects(built: designed.Built) -> None:
    args = ("--weighted", "--crosstab", "region", "sex")
    doc = crosstab(built, *args)
    deff = doc["col_given_row"][0][1]["deff"]
    for fmt, expected in (("table", "Design effect of"), ("md", "Design effect of"),
                          ("html", "Design effect of"), ("csv", "deff_sampling")):
        result = CliRunner().invoke(cli, ["report", "--db", str(built.path), "--survey",
                                          built.survey_id, "--format", fmt, *args])
        assert result.exit_code == 0 and expected in result.output, result.output
        if fmt == "csv":
            header, *lines = result.stdout.splitlines()
            assert header.endswith("deff,deff_sampling,deff_privacy,effective_n,"
                                   "deff_sampling_low,deff_sampling_high,deff_split_supported,"
                                   "df,interval_quantile")
            line = next(x for x in lines if ",col_given_row,north,male," in x)
            assert ",".join(repr(deff[k]) for k in
                            ("total", "sampling", "privacy", "effective_n")) in line
            # the design's degrees of freedom (issue 39): 24 PSUs in 4 strata
            assert line.endswith(f",{str(deff['split_supported']).lower()},20,t")
        if fmt == "table":
            assert "20 design degrees of freedom (24 PSUs − 4 strata)" in result.stdout
