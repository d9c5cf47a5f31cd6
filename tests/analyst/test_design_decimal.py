"""Design-based reports of decimal questions (issue 41): the mean and total of a number kept on
a grid, and its bins' shares and CDF at their edges (with totals), equal R's survey (`svymean`,
`svytotal`, weighted and raked) on the same respondents' pseudo-values, for a decimal through
the mean-and-distribution pair and one through the Square Wave, and every format shows the
median, quartiles and CDF; each report's randomization-variance estimate
(`Mechanism.value_noise`) is unbiased where the mechanism allows it (square_wave) and in the
question's units. A hidden decimal (asked_grid): its share not asked and mean among those
asked equal R's svymean and svyratio, and its export runs in R to the report's numbers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.skip_logic import NOT_ASKED
from ldpsurvey.shared.survey import Survey
from support import designed
from support.r_oracle import run_r

SURVEY: dict[str, Any] = {**designed.SURVEY, "id": "decimal-2026", "questions": [
    *designed.SURVEY["questions"],
    {"id": "income", "text": "Income?", "type": "decimal", "epsilon": 2.0, "min": 0,
     "max": 5000, "resolution": 10, "estimate": ["mean", "distribution"], "bins": 5},
    {"id": "hours", "text": "Hours?", "type": "decimal", "epsilon": 3.0, "min": 0, "max": 60,
     "resolution": 0.5, "estimate": ["distribution"], "bins": 6, "optional": True}]}
MARGINS = ("question,value,total\nregion,north,3000\nregion,south,5000\nregion,east,7000\n"
           "region,west,9000\nsex,female,12500\nsex,male,11500\n")
DECIMALS = ("income", "hours")


def units() -> list[designed.Unit]:
    """The designed population with two numbers that depend on the stratum and the cluster
    (a separate generator: the other answers are the fixture's)."""
    rng = np.random.default_rng(41)
    out = []
    for u in designed.population_frame():
        h = designed.REGIONS.index(u.stratum)
        answers = {**u.answers,
                   "income": float(np.clip(rng.normal(1500 + 600 * h, 700), 0, 5000)),
                   **({} if rng.random() < 0.1 else
                      {"hours": float(np.clip(rng.normal(20 + 5 * h, 8), 0, 60))})}
        out.append(designed.Unit(u.id, u.weight, u.stratum, u.psu, u.fpc, answers))
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[designed.Built, Path]:
    folder = tmp_path_factory.mktemp("decimal-design")
    built = designed.build(folder / "survey.db", survey=SURVEY, units=units(), fpc=False)
    return built, designed.write(folder / "margins.csv", MARGINS)


def document(built: designed.Built, *args: Any) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["report", "--db", str(built.path), "--survey",
                                      built.survey_id, "--format", "json",
                                      *(str(a) for a in args)])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def stored_table(built: designed.Built) -> dict[str, list[Any]]:
    """The respondents' design, covariates and the decimals' pseudo-values, straight from the
    mechanisms and the stored reports (None where skipped): R's input."""
    from ldpsurvey.server.store import open_store

    store = open_store(built.path)
    try:
        stored = [json.loads(r[4]) for r in store.export_rows(built.survey_id, 1, 0, 10**6)]
    finally:
        store.close()
    mechs = designed.mechanisms(SURVEY)
    table: dict[str, list[Any]] = {
        "w": [u.weight for u in built.responded], "stratum": [u.stratum for u in built.responded],
        "psu": [u.psu for u in built.responded],
        "region": [u.answers["region"] for u in built.responded],
        "sex": [u.answers["sex"] for u in built.responded]}
    for qid in DECIMALS:
        answered = [a[qid] for a in stored if qid in a]
        z = iter(mechs[qid].pseudo_values(np.array(answered)).reshape(-1).tolist())
        table[qid] = [next(z) if qid in a else None for a in stored]
        columns = mechs[qid].distribution_columns(np.array(answered)).values
        for c in range(columns.shape[1]):
            found = iter(columns[:, c].tolist())
            table[f"{qid}_c{c}"] = [next(found) if qid in a else None for a in stored]
    return table


def column_scales(table: dict[str, list[Any]]) -> list[float]:
    """Per distribution row in the report's order (each decimal's bin and CDF columns' means,
    then their totals): the weighted mean and the total of the column's |pseudo-values|."""
    scales: list[float] = []
    for qid in DECIMALS:
        columns = [key for key in table if key.startswith(f"{qid}_c")]
        columns.sort(key=lambda key: int(key.rsplit("_c", 1)[1]))
        asked = [i for i, z in enumerate(table[columns[0]]) if z is not None]
        weight = sum(table["w"][i] for i in asked)
        mass = [sum(table["w"][i] * abs(table[c][i]) for i in asked) for c in columns]
        scales += [m / weight for m in mass] + mass
    return scales


R_SCRIPT = designed.RAKED_R + """
est <- function(des) {
  m <- svymean(~income, des); h <- svymean(~hours, des, na.rm = TRUE)
  t <- svytotal(~income, des); u <- svytotal(~hours, des, na.rm = TRUE)
  list(est = c(coef(m), coef(h), coef(t), coef(u)), se = c(SE(m), SE(h), SE(t), SE(u)))
}
w <- est(des); r <- est(cal)
columns <- function(q) grep(paste0("^", q, "_c[0-9]+$"), names(d), value = TRUE)
dist <- function(des) {
  e <- c(); s <- c()
  for (q in c("income", "hours")) {
    f <- as.formula(paste("~", paste(columns(q), collapse = " + ")))
    m <- svymean(f, des, na.rm = TRUE); t <- svytotal(f, des, na.rm = TRUE)
    e <- c(e, coef(m), coef(t)); s <- c(s, SE(m), SE(t))
  }
  list(est = e, se = s)
}
dw <- dist(des); dr <- dist(cal)
emit(list(w_est = w$est, w_se = w$se, r_est = r$est, r_se = r$se,
          dw_est = dw$est, dw_se = dw$se, dr_est = dr$est, dr_se = dr$se))
"""


def test_decimal_means_and_totals_equal_r_survey(built: tuple[designed.Built, Path]) -> None:
    db, margins = built
    table = stored_table(db)
    r = run_r(R_SCRIPT, {"d": table})
    for key, args in (("w", ["--weighted"]), ("r", ["--rake", margins])):
        questions = {q["question"]: q for q in document(db, *args)["questions"]}
        means = [questions[qid]["mean"] for qid in DECIMALS]
        ours = [*means, *(m["total"] for m in means)]
        for j, (row, est, se) in enumerate(zip(ours, r[f"{key}_est"], r[f"{key}_se"],
                                               strict=True)):
            assert row["estimate"] == pytest.approx(est, rel=1e-10), (key, j)
            assert row["std_error"] == pytest.approx(se, rel=1e-10), (key, j)
        # the distribution: each bin's share and the CDF at each edge, then their totals,
        # are R's svymean and svytotal of the same pseudo-values (the square-wave part's)
        ours = []
        for qid in DECIMALS:
            rows = [*questions[qid]["distribution"], *questions[qid]["cdf"]]
            ours += [*rows, *(row["total"] for row in rows)]
        assert len(ours) == len(r[f"d{key}_est"])
        scales = column_scales(table)
        for j, (row, est, se, scale) in enumerate(zip(ours, r[f"d{key}_est"],
                                                      r[f"d{key}_se"], scales, strict=True)):
            # A bin's pseudo-values (about ±1/(p - q) each) cancel to a share near 0, so its
            # estimate's rounding (and the raked weights' convergence, 1e-10 relative) is
            # relative to Σ w|z|, not to the estimate itself.
            assert row["estimate"] == pytest.approx(est, rel=1e-10, abs=1e-10 * scale), (key, j)
            assert row["std_error"] == pytest.approx(se, rel=1e-10, abs=1e-12), (key, j)
        for qid in DECIMALS:  # the median and quartiles, and a note saying how
            found = [q["value"] for q in questions[qid]["quantiles"]]
            assert found == ["1st quartile", "median", "3rd quartile"], qid
            for q in questions[qid]["quantiles"]:
                assert q["ci_low"] <= q["estimate"] <= q["ci_high"], (qid, q)
            assert any("test inversion" in n for n in questions[qid]["notes"]), qid


@pytest.mark.parametrize(("epsilon", "k"), [(1.0, 7), (3.0, 25), (0.5, 101)])
def test_square_waves_report_noise_is_unbiased_for_its_variance(epsilon: float, k: int
                                                                ) -> None:
    """Σ_y P[y | j]·V̂(y) equals the exact variance of grid point j's pseudo-value, in the
    question's units (resolution 0.5: a quarter of the index scale's)."""
    survey = Survey.from_dict({"id": "s", "title": "s", "version": 1, "questions": [
        {"id": "x", "text": "x", "type": "decimal", "epsilon": epsilon, "min": 10,
         "max": 10 + 0.5 * (k - 1), "resolution": 0.5, "estimate": ["distribution"],
         "bins": 2}]})
    mechanism = mechanism_for(survey.question("x"))
    inner = mechanism  # the scale wrapper over square_wave: its channel is the inner one's
    channel = np.array([[float(p) for p in row] for row in inner.channel()])
    cells = np.arange(channel.shape[1])
    v = mechanism.pseudo_values(cells).reshape(-1)
    noise = mechanism.value_noise(cells).reshape(-1)
    d = channel.shape[0]
    for j in range(d):
        mean = channel[j] @ v
        variance = channel[j] @ (v - mean) ** 2
        assert mean == pytest.approx(10 + 0.5 * j * (k - 1) / (d - 1), abs=1e-9)
        assert channel[j] @ noise == pytest.approx(variance, rel=1e-8), j


@pytest.mark.parametrize("design", [(), ("--weighted",)])
def test_regress_takes_a_decimal_outcome(built: tuple[designed.Built, Path],
                                         design: tuple[str, ...]) -> None:
    """A decimal outcome is a linear model of each report's unbiased value (the pair's mean
    part, in dollars): each region's coefficient is within 4 of its standard errors of the
    same regression on the respondents' true answers (rounded as the device keeps them; a
    false alarm about 6e-5 per coefficient)."""
    db, _ = built
    result = CliRunner().invoke(cli, ["regress", "--db", str(db.path), "--survey",
                                      db.survey_id, "--outcome", "income", "--covariates",
                                      "region", "--format", "json", *design])
    assert result.exit_code == 0, result.output
    fit = json.loads(result.stdout)
    question = Survey.from_dict(SURVEY).question("income")
    truth = np.array([float(question.unit.device_answer(question, u.answers["income"]))
                      for u in db.responded])
    region = np.array([u.answers["region"] for u in db.responded])
    weights = (np.array([u.weight for u in db.responded]) if design
               else np.ones(len(db.responded)))
    means = {r: float(np.average(truth[region == r], weights=weights[region == r]))
             for r in designed.REGIONS}
    wanted = {"(intercept)": means["north"],
              **{f"region={r}": means[r] - means["north"] for r in designed.REGIONS[1:]}}
    got = {c["name"]: c for c in fit["coefficients"]}
    assert set(got) == set(wanted)
    for name, value in wanted.items():
        assert abs(got[name]["estimate"] - value) < 4 * got[name]["std_error"], name


HIDDEN_SURVEY: dict[str, Any] = {**designed.SURVEY, "id": "hidden-decimal", "questions": [
    *designed.SURVEY["questions"],
    {"id": "lost", "type": "decimal", "text": "If you smoke: how much a week?",
     "relevant": "smoker", "min": 0, "max": 100, "resolution": 5, "epsilon": 2.0}]}


@pytest.fixture(scope="module")
def hidden(tmp_path_factory: pytest.TempPathFactory) -> designed.Built:
    """The designed population with a decimal asked of smokers only (asked_grid)."""
    rng = np.random.default_rng(7)
    frame = [designed.Unit(u.id, u.weight, u.stratum, u.psu, u.fpc,
                           {**u.answers, "lost": float(rng.integers(0, 20) * 5)
                            if u.answers["smoker"] else NOT_ASKED})
             for u in designed.population_frame()]
    return designed.build(tmp_path_factory.mktemp("hidden") / "survey.db",
                          survey=HIDDEN_SURVEY, units=frame, fpc=False)


def test_a_hidden_decimals_mean_among_those_asked_is_r_svyratio(hidden: designed.Built
                                                                 ) -> None:
    """A decimal asked only after a randomized yes (asked_grid: an asked bit and a grid mean
    report) had no design-based estimate (a note: "not built yet"). Its share not asked is
    R's svymean of 1 − Z and its mean among those asked R's svyratio of the reports' centred
    values over Z plus the grid's middle, on a stratified cluster design, to 1e-10; every
    other question is still estimated."""
    built, survey = hidden, HIDDEN_SURVEY
    docs = {d["question"]: d for d in document(built, "--weighted")["questions"]}
    lost = docs["lost"]
    assert docs["drinks"]["mean"]["estimate"] is not None
    assert not any("not built" in n for n in lost["notes"])
    mechanism = designed.mechanisms(survey)["lost"]
    pairs = np.array(_stored_reports(built, "lost"))
    parts = mechanism.asked_number(pairs)
    table = {"w": [u.weight for u in built.responded],
             "stratum": [u.stratum for u in built.responded],
             "psu": [u.psu for u in built.responded],
             "z": parts.asked, "na": 1.0 - parts.asked, "y": parts.centred}
    r = run_r("""
d <- read.csv("d.csv")
des <- svydesign(ids = ~psu, strata = ~stratum, weights = ~w, nest = TRUE, data = d)
na <- svymean(~na, des); m <- svyratio(~y, ~z, des)
emit(list(est = c(coef(na), coef(m)), se = c(SE(na), SE(m))))
""", {"d": table})
    r["est"][1] += parts.default  # the mean among those asked is d + the ratio
    ours = [lost["not_asked"], lost["among_asked"]["mean"]]
    for row, est, se in zip(ours, r["est"], r["se"], strict=True):
        assert row["estimate"] == pytest.approx(est, rel=1e-10)
        assert row["std_error"] == pytest.approx(se, rel=1e-10)
    # in dollars: the true mean among those asked is within 4 standard errors (a false alarm
    # about 6e-5), and the share not asked is a share
    truth = np.average([u.answers["lost"] for u in built.responded
                        if u.answers["lost"] != NOT_ASKED],
                       weights=[u.weight for u in built.responded
                                if u.answers["lost"] != NOT_ASKED])
    mean = lost["among_asked"]["mean"]
    assert abs(mean["estimate"] - truth) < 4 * mean["std_error"]
    assert any("grid mean report" in n for n in lost["notes"])


def test_a_hidden_decimals_export_gives_the_reports_numbers_in_r(
        hidden: designed.Built, tmp_path: Path) -> None:
    """`export --weighted` writes a hidden decimal's columns (share not asked, asked, value)
    and the R script, which prints the report's share not asked, mean among those asked and
    totals (to 1e-8: the CSV's digits)."""
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["export", "--db", str(hidden.path), "--survey",
                                      hidden.survey_id, "--weighted", "--out", str(out)])
    assert result.exit_code == 0, result.output
    stem = f"{hidden.survey_id}-v1"
    script = (out / f"{stem}.R").read_text() + (
        'e <- lapply(ldp_results, function(t) c(t$estimate, t$std_error))\n'
        'emit(list(na = e[["lost"]], asked = e[["lost among those asked"]], '
        'total = e[["lost total"]]))\n')
    r = run_r(script, {}, files={f"{stem}.csv": (out / f"{stem}.csv").read_text()})
    lost = {d["question"]: d for d in document(hidden, "--weighted")["questions"]}["lost"]
    mean = lost["among_asked"]["mean"]
    expected = {"na": [lost["not_asked"]["estimate"], lost["not_asked"]["std_error"]],
                "asked": [mean["estimate"], mean["std_error"]],
                "total": [lost["not_asked"]["total"]["estimate"], mean["total"]["estimate"],
                          lost["not_asked"]["total"]["std_error"],
                          mean["total"]["std_error"]]}
    for key, values in expected.items():
        np.testing.assert_allclose(r[key], values, rtol=1e-8, atol=0, err_msg=key)


def _stored_reports(built: designed.Built, qid: str) -> list[Any]:
    import sqlite3

    with sqlite3.connect(built.path) as conn:
        rows = conn.execute("SELECT reports FROM submissions ORDER BY seq").fetchall()
    return [json.loads(r[0])[qid] for r in rows]


@pytest.mark.parametrize("fmt", ["table", "md", "csv", "html"])
def test_every_format_shows_the_design_based_quartiles_and_cdf(
        built: tuple[designed.Built, Path], fmt: str) -> None:
    """Under --weighted every report format shows a decimal's design-based median and
    quartiles and its CDF at the bins' edges, the numbers of the JSON document."""
    db, _ = built
    doc = {q["question"]: q for q in document(db, "--weighted")["questions"]}
    result = CliRunner().invoke(cli, ["report", "--db", str(db.path), "--survey",
                                      db.survey_id, "--weighted", "--format", fmt])
    assert result.exit_code == 0, result.output
    median = next(q for q in doc["hours"]["quantiles"] if q["value"] == "median")
    for words in ("median", "1st quartile", "3rd quartile", "share below 10",
                  "share at most 60", f"{median['estimate']:.2f}"[:4]):
        assert words in result.stdout, (fmt, words)


CROSSTAB_R = designed.RAKED_R + """
k <- sum(grepl("^m[0-9]+$", names(d)))
given <- function(s) {
  est <- c(); se <- c()
  for (c in seq_len(k) - 1) {
    cols <- grep(paste0("^p", c, "_[0-9]+$"), names(d), value = TRUE)
    f <- as.formula(paste("~", paste(cols, collapse = " + ")))
    r <- svyratio(f, as.formula(paste0("~m", c)), s)
    est <- c(est, coef(r)); se <- c(se, SE(r))
  }
  list(est = est, se = se)
}
r <- given(subset(cal, both == 1)); w <- given(subset(des, both == 1))
emit(list(rake_est = r$est, rake_se = r$se, weighted_est = w$est, weighted_se = w$se))
"""


@pytest.mark.parametrize(("number", "by", "design"), [
    ("income", "mood", "rake"), ("hours", "smoker", "weighted")])
def test_a_design_based_crosstab_gives_a_decimals_mean_and_cdf_per_category_as_r(
        built: tuple[designed.Built, Path], number: str, by: str, design: str) -> None:
    """A design-based crosstab of a decimal by a randomized question (main refused it in one
    line): the decimal's mean among each category is R's svyratio of v·W_c over W_c (v the
    decimal's pseudo-value, W_c the category's) over those who answered both, and the CDF at
    each bin edge among each category R's svyratio of G_t·W_c over W_c (G_t the square wave's
    linear estimate of the share below t), estimates and standard errors to 1e-7, on the
    raked and on the weighted stratified cluster design; the quartiles per category read that
    CDF (each inside its interval, the CDF below p at the interval's low end's bin edge and
    above it at the high end's)."""
    db, margins = built
    args = ["--rake", margins] if design == "rake" else ["--weighted"]
    doc = document(db, *args, "--crosstab", number, by)
    assert doc["rows"]["cells"] == ["everyone"] and doc["rows"]["question"] == number
    means = doc["rows_mean_given_col"]
    found = doc["quantiles_given_category"]
    assert found["method"] == "design" and found["by"] == by
    from ldpsurvey.server.store import open_store

    store = open_store(db.path)
    try:
        stored = [json.loads(r[4]) for r in store.export_rows(db.survey_id, 1, 0, 10**6)]
    finally:
        store.close()
    mechs = designed.mechanisms(SURVEY)
    both = np.array([int(number in a and by in a) for a in stored])
    rows = [a for a in stored if number in a and by in a]
    v = mechs[number].pseudo_values(np.array([a[number] for a in rows])).reshape(-1)
    g = mechs[number].distribution_columns(np.array([a[number] for a in rows]))
    cdf = g.values[:, len(g.bins):]
    w_c = mechs[by].pseudo_values(np.array([a[by] for a in rows]))
    k = len(doc["cols"]["cells"])
    table: dict[str, list[Any]] = {
        "w": [u.weight for u in db.responded], "stratum": [u.stratum for u in db.responded],
        "psu": [u.psu for u in db.responded],
        "region": [u.answers["region"] for u in db.responded],
        "sex": [u.answers["sex"] for u in db.responded], "both": both.tolist()}

    def spread(values: np.ndarray) -> list[float]:  # 0 where not both
        out = np.zeros(both.size)
        out[both == 1] = values
        return out.tolist()

    for c in range(k):
        table[f"m{c}"] = spread(w_c[:, c])
        table[f"p{c}_0"] = spread(v * w_c[:, c])
        for t in range(cdf.shape[1]):
            table[f"p{c}_{t + 1}"] = spread(cdf[:, t] * w_c[:, c])
    r = run_r(CROSSTAB_R, {"d": table})
    ours_est, ours_se = [], []
    for c, category in enumerate(found["categories"]):
        ours_est += [means[c]["estimate"], *(x["estimate"] for x in category["cdf"])]
        ours_se += [means[c]["std_error"], *(x["std_error"] for x in category["cdf"])]
    np.testing.assert_allclose(ours_est, r[f"{design}_est"], rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(ours_se, r[f"{design}_se"], rtol=1e-7, atol=1e-12)
    for category in found["categories"]:
        assert [q["name"] for q in category["quantiles"]] == ["q1", "median", "q3"]
        points = [x["point"] for x in category["cdf"]]
        for q in category["quantiles"]:
            assert q["ci_low"] <= q["estimate"] <= q["ci_high"], q
            assert points[0] - 1e-9 <= q["estimate"] <= points[-1] + 1e-9
    assert any("svyratio" in note and number in note for note in doc["notes"])
    assert any("test inversion" in note for note in doc["notes"])


def test_a_design_based_crosstab_of_two_decimals_is_refused_in_one_line(
        built: tuple[designed.Built, Path]) -> None:
    """Two numbers read by their mean have no category to take a mean among (as the plain
    crosstab says): one line, no traceback."""
    db, _ = built
    result = CliRunner().invoke(cli, ["report", "--db", str(db.path), "--survey", db.survey_id,
                                      "--weighted", "--crosstab", "income", "hours"])
    assert result.exit_code != 0
    lines = result.output.strip().splitlines()
    assert "both numbers read by their mean" in lines[-1], result.output
    assert not any("Traceback" in line for line in lines)
