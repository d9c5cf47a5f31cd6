"""`ldpsurvey export --format survey-csv` for a survey with skip logic (issue 35 with issue 33):
questions that apply only to smokers, whose condition reads the randomized `smoker` answer, so
every respondent sends a report with "not asked" as one of its values.

`report` gives such a question's shares among those asked (and an ordinal one's mean score
among those asked, a hidden integer's share not asked and mean among those asked); the exported
R script gave only the shares of everyone and left the integer question out. Now the CSV holds
each hidden question's `_asked` column (and `_score`, or `_not_asked` and `_value`), and the
script's `svyratio` lines, with the fpc's randomization term (numerator, denominator and their
covariance off one report) added, print `report --format json`'s numbers to 1e-8 on a
stratified cluster design with an fpc: linearized, raked, and raked with JKn replicates. One
Rscript run for the module.
"""

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
from ldpsurvey.shared.skip_logic import NOT_ASKED
from support import designed
from support.r_oracle import run_r

MARGINS = ("question,value,total\nregion,north,3000\nregion,south,5000\nregion,east,7000\n"
           "region,west,9000\nsex,female,12500\nsex,male,11500\n")
SURVEY = {**designed.ASKED_SURVEY, "id": "asked-export-2026", "questions": [
    *designed.ASKED_SURVEY["questions"],
    {"id": "quit", "text": "Have you tried to quit?", "type": "binary", "epsilon": 2.0,
     "relevant": "smoker"},
    {"id": "days", "text": "Days drinking last week?", "type": "integer", "epsilon": 2.0,
     "min": 0, "max": 7, "special": {"refused": "Prefer not to say"}}]}
NUMBERS = ("cigs", "days")  # sent as pairs: a hidden integer's, one with a special value
HIDDEN = ("brand", "craving", "quit")  # with options; `cigs` is the hidden integer
CASES = {"weighted": ["--weighted"],
         "raked": ["--weighted", "--rake", "MARGINS"],
         "jkn": ["--weighted", "--rake", "MARGINS", "--variance", "jkn"]}


def units() -> list[designed.Unit]:
    rng = np.random.default_rng(12)
    out = []
    for u in designed.asked_units():
        smoker = u.answers["smoker"]
        quit_ = bool(rng.random() < (0.3 if u.stratum == "north" else 0.6)) if smoker else None
        days = ("Prefer not to say" if rng.random() < (0.1 if u.stratum == "north" else 0.25)
                else int(rng.integers(0, 8)))
        out.append(designed.Unit(u.id, u.weight, u.stratum, u.psu, u.fpc,
                                 {**u.answers, "quit": NOT_ASKED if not smoker else quit_,
                                  "days": days}))
    return out


def run(*args: Any) -> Any:
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> designed.Built:
    return designed.build(tmp_path_factory.mktemp("asked-export") / "survey.db", survey=SURVEY,
                          units=units(), fpc=True)


@pytest.fixture(scope="module")
def margins(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return designed.write(tmp_path_factory.mktemp("margins") / "margins.csv", MARGINS)


def _args(name: str, margins: Path) -> list[str]:
    return [str(margins) if a == "MARGINS" else a for a in CASES[name]]


@pytest.fixture(scope="module")
def exported(built, margins, tmp_path_factory) -> dict[str, Any]:
    files, script, names = {}, [], []
    stem = f"{built.survey_id}-v1"
    for name in CASES:
        out = tmp_path_factory.mktemp(f"out-{name}")
        result = run("export", "--db", built.path, "--survey", built.survey_id, "--out", out,
                     *_args(name, margins))
        assert result.exit_code == 0, result.output
        assert "left out" not in result.output, result.output
        files[f"{name}.csv"] = (out / f"{stem}.csv").read_text()
        files[f"{name}.do"] = (out / f"{stem}.do").read_text()
        files[f"{name}.R"] = (out / f"{stem}.R").read_text()
        script.append(files[f"{name}.R"].replace(f'"{stem}.csv"', f'"{name}.csv"'))
        script.append(f"e_{name} <- lapply(ldp_results, function(t) c(t$estimate, "
                      "t$std_error))\n")
        for qid in (*HIDDEN, *NUMBERS):
            names.append((f"{name}_{qid}", f'e_{name}[["{qid}"]]'))
            names.append((f"{name}_{qid}_asked", f'e_{name}[["{qid} among those asked"]]'))
            names.append((f"{name}_{qid}_total", f'e_{name}[["{qid} total"]]'))
    emits = ", ".join(f"{key} = {value}" for key, value in names)
    results = run_r("\n".join(script) + f"emit(list({emits}))\n", {}, files=files)
    return {"r": results, "files": files}


def _report(built, margins, name: str) -> dict[str, dict[str, Any]]:
    result = run("report", "--db", built.path, "--survey", built.survey_id, "--format", "json",
                 *_args(name, margins))
    assert result.exit_code == 0, result.output
    return {q["question"]: q for q in json.loads(result.stdout)["questions"]}


def _pairs(rows: list[dict[str, Any]]) -> list[tuple[float, float]]:
    return [(r["estimate"], r["std_error"]) for r in rows]


def _expected(q: dict[str, Any]) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    """(everyone's rows, the rows among those asked) of a hidden question in the export's
    order: the options (with "(not asked)") and groups; among those asked the options, groups
    and an ordinal question's mean score; a hidden integer's share not asked and mean."""
    among = q["among_asked"]
    if "categories" not in q:  # a number: its special values' shares, then "not asked"
        return _pairs(_extras(q)), _pairs([among["mean"]])
    everyone = _pairs([*q["categories"], *q.get("groups", [])])
    asked = _pairs([*among["categories"], *among["groups"],
                    *([among["mean"]] if "mean" in among else [])])
    return everyone, asked


def _extras(q: dict[str, Any]) -> list[dict[str, Any]]:
    """A number's extra values' rows in the export's order: special values, "not asked"."""
    return [*q.get("special", []), *([q["not_asked"]] if "not_asked" in q else [])]


def _expected_totals(q: dict[str, Any]) -> list[tuple[float, float]]:
    """A hidden question's totals in the export's order: each option's population count (with
    "(not asked)") and each group's; a hidden integer's number not asked and the total of its
    answers over those asked."""
    if "categories" not in q:
        rows = [*(r["total"] for r in _extras(q)), q["among_asked"]["mean"]["total"]]
    else:
        rows = [r["total"] for r in (*q["categories"], *q.get("groups", []))]
    return _pairs(rows)


def _check(got: list[float], expected: list[tuple[float, float]], what: str) -> None:
    m = len(expected)
    assert len(got) == 2 * m, (what, got, expected)
    for j, (estimate, se) in enumerate(expected):
        assert got[j] == pytest.approx(estimate, abs=1e-8), (what, j)
        assert got[m + j] == pytest.approx(se, rel=1e-7, abs=1e-12), (what, j)


@pytest.mark.parametrize("name", list(CASES))
def test_r_gives_the_reports_numbers_among_those_asked(built, margins, exported, name) -> None:
    doc = _report(built, margins, name)
    for qid in (*HIDDEN, *NUMBERS):
        everyone, asked = _expected(doc[qid])
        _check(exported["r"][f"{name}_{qid}"], everyone, f"{name} {qid}")
        _check(exported["r"][f"{name}_{qid}_asked"], asked, f"{name} {qid} among those asked")
        # totals: R's svytotal on the same pseudo-values (with the fpc's randomization term)
        totals = _expected_totals(doc[qid])
        got = exported["r"][f"{name}_{qid}_total"]
        m = len(totals)
        assert len(got) == 2 * m, (name, qid, got, totals)
        for j, (estimate, se) in enumerate(totals):
            assert got[j] == pytest.approx(estimate, rel=1e-10), (name, qid, j)
            assert got[m + j] == pytest.approx(se, rel=1e-10), (name, qid, j)
        among = doc[qid]["among_asked"]
        if qid not in NUMBERS:  # an option's count among those asked is its count: it was asked
            counted = {c["value"]: c["total"] for c in doc[qid]["categories"]}
            assert all(c["total"] == counted[c["value"]] for c in among["categories"])
            assert among.get("mean", {}).get("total") is None  # no total of scores
    # the report's share not asked is the last category of everyone's shares
    assert doc["brand"]["categories"][-1]["value"] == NOT_ASKED
    assert "mean" not in doc["craving"]  # no mean score of everyone, in the report or the export


def test_the_csv_and_the_scripts_name_the_columns_among_those_asked(exported) -> None:
    files = exported["files"]
    rows = list(csv.DictReader(io.StringIO(files["weighted.csv"])))
    header = list(rows[0])
    for column in ("brand_asked", "craving_score", "quit_asked", "cigs_not_asked", "cigs_asked",
                   "cigs_value", "ldp_noise_cigs_value", "ldp_cross_cigs_value",
                   "ldp_cross_brand_a", "ldp_cross_craving_score", "ldp_noise_brand_asked"):
        assert column in header, column
    assert "craving_mean_score" not in header  # it would score "not asked" as an option
    for r in rows:  # the asked column is 1 − the "not asked" pseudo-value
        assert float(r["brand_asked"]) == pytest.approx(1 - float(r["brand_not_asked"]),
                                                        abs=1e-12)
        assert float(r["cigs_asked"]) == pytest.approx(1 - float(r["cigs_not_asked"]),
                                                       abs=1e-12)
    script = files["weighted.R"]
    assert 'ldp_ratios(c("brand_a", "brand_b", "brand_c", "brand_a_or_b"), "brand_asked")' \
        in script
    assert 'ldp_ratios(c("cigs_value"), "cigs_asked")' in script
    assert 'ldp_ratios(c("days_value"), "days_asked")' in script  # among those who answered
    assert [c for c in header if c.startswith("days")] == [
        "days_Prefer_not_to_say", "days_asked", "days_value"]
    # totals: the number not asked and the total of the answers over those asked
    assert 'ldp_totals(c("cigs_not_asked", "cigs_value"))' in script
    assert 'ldp_totals(c("craving_mild", "craving_strong", "craving_severe", ' in script
    stata = files["weighted.do"]
    assert "svy: ratio (r_cigs_value: cigs_value/cigs_asked)" in stata
    assert "svy: total cigs_not_asked cigs_value  // cigs totals" in stata
    assert "not run" in stata
