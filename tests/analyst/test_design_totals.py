"""Horvitz-Thompson totals in design-based reports and the export (issue 39, "No totals"):
each option's estimated population count (yes/no, categorical, ordinal, a declared group, a
check-all-that-apply option) and an integer question's population total, with their standard
errors, equal R's `svytotal` on the same pseudo-values to 1e-10 (design weights, raked, a
subgroup, JKn replicates, an fpc's randomization term through the exported script); shown in
every format, the existing columns and keys left where they were; and refused, with the reason,
when the weights are relative (they would count the sample, not a population). The totals of
a hidden question (skip logic) are checked in test_export_skip_logic.py."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.analyst.reports.csv_format import (
    COLUMNS,
    DESIGN_COLUMNS,
    INTERVAL_COLUMNS,
    TOTAL_COLUMNS,
)
from ldpsurvey.analyst.reports.design_view import total_text
from ldpsurvey.analyst.reports.model import answer_label
from support import designed
from support.r_oracle import run_r

MARGINS = ("question,value,total\nregion,north,3000\nregion,south,5000\nregion,east,7000\n"
           "region,west,9000\nsex,female,12500\nsex,male,11500\n")
HABITS = ("walk", "cycle", "swim")
SURVEY = {**designed.SURVEY, "id": "totals-2026", "questions": [
    *designed.SURVEY["questions"],
    {"id": "habits", "text": "What do you do each week?", "type": "multiselect",
     "epsilon": 2.0, "options": list(HABITS), "optional": True}]}


def units(relative: bool = False) -> list[designed.Unit]:
    """The design fixture's units with a check-all-that-apply answer (skipped by some);
    `relative`: their weights rescaled to mean 1, as relative weights are."""
    rng = np.random.default_rng(21)
    frame = designed.population_frame()
    mean = sum(u.weight for u in frame) / len(frame)
    out = []
    for u in frame:
        answers = dict(u.answers)
        if rng.random() < 0.9:
            h = REGION_INDEX[u.stratum]
            answers["habits"] = [o for o, p in zip(HABITS, (0.7, 0.2 + 0.1 * h, 0.3),
                                                   strict=True) if rng.random() < p]
        out.append(designed.Unit(u.id, u.weight / mean if relative else u.weight, u.stratum,
                                 u.psu, u.fpc, answers))
    return out


REGION_INDEX = {r: i for i, r in enumerate(designed.REGIONS)}


def run(*args: Any) -> Any:
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> designed.Built:
    return designed.build(tmp_path_factory.mktemp("totals") / "survey.db", survey=SURVEY,
                          units=units(), fpc=False)


@pytest.fixture(scope="module")
def relative(tmp_path_factory: pytest.TempPathFactory) -> designed.Built:
    return designed.build(tmp_path_factory.mktemp("relative") / "survey.db", survey=SURVEY,
                          units=units(relative=True), fpc=False)


@pytest.fixture(scope="module")
def margins(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return designed.write(tmp_path_factory.mktemp("margins") / "margins.csv", MARGINS)


def report(built: designed.Built, *args: Any) -> str:
    result = run("report", "--db", built.path, "--survey", built.survey_id, *args)
    assert result.exit_code == 0, result.output
    return result.stdout


def document(built: designed.Built, *args: Any) -> dict[str, Any]:
    return json.loads(report(built, "--format", "json", *args))


def question(doc: dict[str, Any], qid: str) -> dict[str, Any]:
    return next(q for q in doc["questions"] if q["question"] == qid)


def totals(q: dict[str, Any]) -> list[dict[str, Any]]:
    """A question's totals in the R script's order: options, groups; an integer's."""
    if "categories" not in q:
        return [q["mean"]["total"]]
    return [r["total"] for r in (*q["categories"], *q.get("groups", []))]


def stored_table(built: designed.Built) -> dict[str, list[Any]]:
    """The respondents' design, covariates and pseudo-values, straight from the mechanisms
    and the stored reports (None where a question was skipped): R's input."""
    from ldpsurvey.server.store import open_store

    store = open_store(built.path)
    try:
        stored = [json.loads(r[4]) for r in store.export_rows(built.survey_id, 1, 0, 10**6)]
    finally:
        store.close()
    mechs = designed.mechanisms(SURVEY)
    units_ = built.responded
    table: dict[str, list[Any]] = {
        "w": [u.weight for u in units_], "stratum": [u.stratum for u in units_],
        "psu": [u.psu for u in units_], "region": [u.answers["region"] for u in units_],
        "sex": [u.answers["sex"] for u in units_]}
    for qid in ("smoker", "mood", "habits"):
        answered = [a for a in stored if qid in a]
        z = iter(mechs[qid].pseudo_values(np.array([a[qid] for a in answered])).tolist())
        rows = [next(z) if qid in a else None for a in stored]
        for j, label in enumerate(mechs[qid].labels):
            table[f"{qid}_{answer_label(label)}"] = [None if r is None else r[j] for r in rows]
    table["mood_not_low"] = [a + b for a, b in zip(table["mood_mid"], table["mood_high"],
                                                   strict=True)]
    table["drinks"] = [float(a["drinks"]) if "drinks" in a else None for a in stored]
    return table


R_TOTALS = designed.RAKED_R + """
tot <- function(des) {
  a <- svytotal(~smoker_no + smoker_yes, des)
  b <- svytotal(~mood_low + mood_mid + mood_high + mood_not_low, des)
  h <- svytotal(~habits_walk + habits_cycle + habits_swim, des, na.rm = TRUE)
  i <- svytotal(~drinks, des, na.rm = TRUE)
  north <- svytotal(~smoker_no + smoker_yes, subset(des, region == "north"))
  list(est = c(coef(a), coef(b), coef(h), coef(i), coef(north)),
       se = c(SE(a), SE(b), SE(h), SE(i), SE(north)))
}
w <- tot(des); r <- tot(cal)
emit(list(w_est = w$est, w_se = w$se, r_est = r$est, r_se = r$se))
"""


def test_totals_equal_r_svytotal_on_the_pseudo_values(built: designed.Built,
                                                      margins: Path) -> None:
    r = run_r(R_TOTALS, {"d": stored_table(built)})
    for key, args in (("w", ["--weighted"]), ("r", ["--rake", margins])):
        doc = document(built, *args)
        assert doc["design"]["totals"] is True
        by = document(built, *args, "--by", "region")
        north = next(g for g in by["subgroups"] if g["value"] == "north")
        ours = [*(t for qid in ("smoker", "mood", "habits", "drinks")
                  for t in totals(question(doc, qid))),
                *totals(question(north, "smoker"))]
        assert len(ours) == len(r[f"{key}_est"])
        for j, (t, est, se) in enumerate(zip(ours, r[f"{key}_est"], r[f"{key}_se"],
                                             strict=True)):
            assert t["estimate"] == pytest.approx(est, rel=1e-10), (key, j)
            assert t["std_error"] == pytest.approx(se, rel=1e-10), (key, j)
            assert t["ci_high"] - t["estimate"] == pytest.approx(
                t["estimate"] - t["ci_low"], rel=1e-9)
        # a total is the share times the population that answered, in people
        smoker = question(doc, "smoker")
        yes = smoker["categories"][1]
        assert yes["total"]["estimate"] == pytest.approx(yes["estimate"] * smoker["population"],
                                                         rel=1e-12)
        mood = question(doc, "mood")
        assert mood["mean"]["total"] is None  # a total of scores counts nothing


def test_every_format_shows_the_totals_beside_the_unchanged_columns(
        built: designed.Built) -> None:
    doc = document(built, "--weighted")
    yes = question(doc, "smoker")["categories"][1]
    assert set(yes) == {"value", "estimate", "std_error", "ci_low", "ci_high",
                        "variance_bound", "deff", "consistent", "total"}
    assert set(yes["total"]) == {"estimate", "std_error", "ci_low", "ci_high"}
    assert "Horvitz-Thompson" in doc["design"]["totals_note"]
    shown = (total_text(yes["total"]["estimate"]), total_text(yes["total"]["std_error"]))
    assert "," in shown[0]  # thousands: a count of people, not a share

    table = report(built, "--weighted")
    assert "total  total s.e." in table and "totals: Horvitz-Thompson" in table
    smoker = table.split("smoker: ", 1)[1].split("\n\n", 1)[0]
    line = next(x for x in smoker.splitlines() if x.strip().startswith("yes "))
    assert line.split()[-2:] == list(shown)

    md = report(built, "--weighted", "--format", "md")
    assert "| effective n | total | total s.e. |" in md
    row = next(x for x in md.splitlines() if x.startswith("| option | yes |"))
    assert row.endswith(f"| {shown[0]} | {shown[1]} |")

    rows = list(csv.reader(io.StringIO(report(built, "--weighted", "--format", "csv"))))
    # new ones at the end (then the deff interval and design df columns, issue 39)
    assert tuple(rows[0]) == COLUMNS + DESIGN_COLUMNS + TOTAL_COLUMNS + INTERVAL_COLUMNS
    by = {(r[2], r[3], r[4]): dict(zip(rows[0], r, strict=True)) for r in rows[1:]}
    cells = by[("smoker", "option", "yes")]
    assert [float(cells[c]) for c in TOTAL_COLUMNS] == [
        yes["total"][k] for k in ("estimate", "std_error", "ci_low", "ci_high")]
    assert by[("mood", "mean", "mean")]["total"] == ""  # no total of scores
    assert float(by[("habits", "option", "swim")]["total"]) == pytest.approx(
        question(doc, "habits")["categories"][2]["total"]["estimate"], rel=1e-15)

    html = report(built, "--weighted", "--format", "html")
    section = html.split('id="q-smoker"', 1)[1].split("</section>", 1)[0]
    assert "<th>population total</th><th>std error</th>" in section
    row = section.split("<td>yes</td>", 1)[1].split("</tr>", 1)[0]
    assert row.endswith(f"<td>{shown[0]}</td><td>{shown[1]}</td>")
    assert "<h3>Totals</h3>" in html


def test_relative_weights_give_no_totals_and_say_why(relative: designed.Built, margins: Path,
                                                    tmp_path: Path) -> None:
    doc = document(relative, "--weighted")
    assert doc["design"]["totals"] is False
    assert "below 1" in doc["design"]["totals_note"]
    assert all(t is None for qid in ("smoker", "mood", "habits", "drinks")
               for t in totals(question(doc, qid)))
    table = report(relative, "--weighted")
    assert "totals: not given: a weight is" in table and "total s.e." not in table
    rows = list(csv.DictReader(io.StringIO(report(relative, "--weighted", "--format", "csv"))))
    assert all(r[c] == "" for r in rows for c in TOTAL_COLUMNS)
    assert "<th>population total</th>" not in report(relative, "--weighted", "--format", "html")
    out = tmp_path / "export"
    result = run("export", "--db", relative.path, "--survey", relative.survey_id, "--out", out,
                 "--weighted")
    assert result.exit_code == 0, result.output
    script = (out / f"{relative.survey_id}-v1.R").read_text()
    assert "# no svytotal lines: a weight is" in script and "ldp_totals(" not in script
    assert "* no svy: total lines" in (out / f"{relative.survey_id}-v1.do").read_text()
    # the same respondents raked to population margins are scaled to the population again
    raked = document(relative, "--rake", margins)
    assert raked["design"]["totals"] is True
    south = next(c for c in question(raked, "region")["categories"] if c["value"] == "south")
    assert south["total"]["estimate"] == pytest.approx(5000.0, rel=1e-9)
    assert south["total"]["std_error"] == pytest.approx(0.0, abs=1e-6)  # fixed by the raking


def test_relative_weights_take_the_deff_without_the_finite_population_factor(
        built: designed.Built, relative: designed.Built) -> None:
    """Issue 39: the same respondents with relative weights (mean 1) and with population
    weights: the relative weights' SRS baseline takes no 1 − n/N̂ (R's deff = "replace"),
    so every deff is the population weights' one times exactly their 1 − n/N̂, and the
    design's note says so (the population weights' does not)."""
    weighted, rel = document(built, "--weighted"), document(relative, "--weighted")
    n, population = weighted["design"]["respondents"], weighted["design"]["population"]
    assert population > 10 * n
    assert "R's deff = \"replace\"" in rel["design"]["note"]
    assert "replace" not in weighted["design"]["note"]
    compared = 0
    for qid in ("region", "smoker"):  # asked of everyone: n is the respondents'
        for a, b in zip(question(weighted, qid)["categories"], question(rel, qid)["categories"],
                        strict=True):
            if a["deff"] is None or a["deff"]["total"] is None:
                continue
            compared += 1
            assert b["deff"]["total"] == pytest.approx(a["deff"]["total"] * (1 - n / population),
                                                       rel=1e-9)
    assert compared >= 4


def test_the_library_refuses_totals_of_relative_weights() -> None:
    from ldpsurvey.shared.design import Design, Margin, poststratify, totals_refusal

    assert totals_refusal(Design.build([20.0, 30.0, 50.0])) is None
    assert "below 1" in totals_refusal(Design.build([0.5, 2.0, 3.5]))
    assert "sum to 3," in totals_refusal(Design.build([0.5, 1.0, 1.5]))  # rescaled to mean 1
    assert "sum to 3," in totals_refusal(Design.build([1.0, 1.0, 1.0]))  # each counted once
    calibrated = poststratify(Design.build([0.5, 1.0, 1.5]),
                              Margin("cell", ["a", "b", "b"], {"a": 400.0, "b": 600.0}))
    assert totals_refusal(calibrated) is None


EXPORT_CASES = {"weighted": ["--weighted"],
                "raked": ["--weighted", "--rake", "MARGINS"],
                "jkn": ["--weighted", "--rake", "MARGINS", "--variance", "jkn"]}


def test_the_exported_script_gives_the_reports_totals(tmp_path_factory: pytest.TempPathFactory,
                                                      margins: Path) -> None:
    """With an fpc (the randomization term added to svytotal's variance, as `report` adds it),
    design weights, raked, and raked with JKn replicates: one Rscript run."""
    built = designed.build(tmp_path_factory.mktemp("fpc") / "survey.db", survey=SURVEY,
                           units=units(), fpc=True)
    stem = f"{built.survey_id}-v1"
    files, script, names = {}, [], []
    for name, args in EXPORT_CASES.items():
        args = [str(margins) if a == "MARGINS" else a for a in args]
        out = tmp_path_factory.mktemp(f"out-{name}")
        result = run("export", "--db", built.path, "--survey", built.survey_id, "--out", out,
                     *args)
        assert result.exit_code == 0, result.output
        files[f"{name}.csv"] = (out / f"{stem}.csv").read_text()
        text = (out / f"{stem}.R").read_text()
        script.append(text.replace(f'"{stem}.csv"', f'"{name}.csv"'))
        script.append(f"e_{name} <- lapply(ldp_results, function(t) c(t$estimate, "
                      "t$std_error))\n")
        names += [(name, qid) for qid in ("smoker", "mood", "habits", "drinks")]
        stata = (out / f"{stem}.do").read_text()
        assert "svy: total habits_walk habits_cycle habits_swim  // habits totals" in stata
        assert "svy: total mood_low mood_mid mood_high mood_not_low  // mood totals" in stata
    emits = ", ".join(f'{n}_{q} = e_{n}[["{q} total"]]' for n, q in names)
    r = run_r("\n".join(script) + f"emit(list({emits}))\n", {}, files=files)
    for name, args in EXPORT_CASES.items():
        doc = document(built, *[str(margins) if a == "MARGINS" else a for a in args])
        for qid in ("smoker", "mood", "habits", "drinks"):
            expected = totals(question(doc, qid))
            got = r[f"{name}_{qid}"]
            m = len(expected)
            assert len(got) == 2 * m, (name, qid, got)
            for j, t in enumerate(expected):
                assert got[j] == pytest.approx(t["estimate"], rel=1e-10), (name, qid, j)
                assert got[m + j] == pytest.approx(t["std_error"], rel=1e-10), (name, qid, j)
