"""`ldpsurvey export --format survey-csv` (issue 35's "Done when"): the exported CSV and the
generated R script, run in R, reproduce the numbers of `ldpsurvey report` with the same design
options: invitation-code designs with an fpc, raked to census margins, linearized and JKn
variances; a question some respondents skipped; declared groups and the ordinal mean score.
Bad input is one line. One Rscript run for the module."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from support import designed
from support.r_oracle import run_r

MARGINS = ("question,value,total\nregion,north,3000\nregion,south,5000\nregion,east,7000\n"
           "region,west,9000\nsex,female,12500\nsex,male,11500\n")
CASES = {"weighted": ["--weighted"],
         "raked": ["--weighted", "--rake", "MARGINS"],
         "jkn": ["--weighted", "--rake", "MARGINS", "--variance", "jkn"],
         "srs": []}


def run(*args: Any) -> Any:
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> designed.Built:
    return designed.build(tmp_path_factory.mktemp("export") / "survey.db", fpc=True)


@pytest.fixture(scope="module")
def margins(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return designed.write(tmp_path_factory.mktemp("margins") / "margins.csv", MARGINS)


def _args(name: str, margins: Path) -> list[str]:
    return [str(margins) if a == "MARGINS" else a for a in CASES[name]]


@pytest.fixture(scope="module")
def exported(built, margins, tmp_path_factory) -> dict[str, Any]:
    files, script = {}, []
    for name in CASES:
        out = tmp_path_factory.mktemp(f"out-{name}")
        result = run("export", "--db", built.path, "--survey", built.survey_id, "--out", out,
                     *_args(name, margins))
        assert result.exit_code == 0, result.output
        stem = f"{built.survey_id}-v1"
        text = (out / f"{stem}.R").read_text()
        csv_name = f"{name}.csv"
        files[csv_name] = (out / f"{stem}.csv").read_text()
        files[f"{name}.do"] = (out / f"{stem}.do").read_text()
        script.append(text.replace(f'"{stem}.csv"', f'"{csv_name}"'))
        script.append(f"e_{name} <- lapply(ldp_results, function(t) c(t$estimate, "
                      "t$std_error))\n")
    emits = ", ".join(f"{name}_{q} = e_{name}[[\"{q}\"]]" for name in CASES
                      for q in ("smoker", "mood", "drinks"))
    results = run_r("\n".join(script) + f"emit(list({emits}))\n", {}, files=files)
    return {"r": results, "files": files}


def _report(built, margins, name: str) -> dict[str, Any]:
    result = run("report", "--db", built.path, "--survey", built.survey_id, "--format", "json",
                 *_args(name, margins))
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _rows(doc: dict[str, Any], qid: str) -> list[tuple[float, float]]:
    """(estimate, std error) of a question's rows in the export's column order: options, the
    mean score (ordinal), declared groups; an integer question's mean."""
    q = next(q for q in doc["questions"] if q["question"] == qid)
    if q.get("categories") is None:
        return [(q["mean"]["estimate"], q["mean"]["std_error"])]
    out = [(c["estimate"], c["std_error"]) for c in q["categories"]]
    if q.get("mean"):
        out.append((q["mean"]["estimate"], q["mean"]["std_error"]))
    out += [(g["estimate"], g["std_error"]) for g in q.get("groups") or []]
    return out


@pytest.mark.parametrize("name", [n for n in CASES if n != "srs"])
def test_r_reproduces_the_report_from_the_export(built, margins, exported, name) -> None:
    doc = _report(built, margins, name)
    for qid in ("smoker", "mood", "drinks"):
        expected = _rows(doc, qid)
        got = exported["r"][f"{name}_{qid}"]
        m = len(expected)
        assert len(got) == 2 * m, (qid, got, expected)
        for j, (estimate, se) in enumerate(expected):
            assert got[j] == pytest.approx(estimate, abs=1e-8), (qid, j)
            assert got[m + j] == pytest.approx(se, rel=1e-7), (qid, j)


def test_the_csv_holds_the_design_covariates_and_pseudo_values(built, exported) -> None:
    rows = list(csv.DictReader(io.StringIO(exported["files"]["jkn.csv"])))
    assert len(rows) == len(built.responded)
    header = list(rows[0])
    assert header[:5] == ["submission_id", "weight", "stratum", "psu", "fpc"]
    for column in ("region", "sex", "cal_region", "cal_sex", "smoker_yes", "mood_mean_score",
                   "mood_not_low", "drinks_mean", "ldp_noise_smoker_yes", "ldp_fraction",
                   "rep_1"):
        assert column in header, column
    assert {r["region"] for r in rows} == set(designed.REGIONS)
    skipped = [r for r in rows if r["drinks_mean"] == ""]
    assert skipped and all(r["smoker_yes"] != "" for r in skipped)
    assert "svyset [pweight=weight], jkrweight(rep_1-" in exported["files"]["jkn.do"]
    srs = list(csv.DictReader(io.StringIO(exported["files"]["srs.csv"])))
    assert {r["weight"] for r in srs} == {"1.0"} and "stratum" not in srs[0]


def test_bad_input_is_one_line(built, tmp_path) -> None:
    result = run("export", "--db", built.path, "--survey", "nope", "--out", tmp_path)
    assert result.exit_code == 1 and result.output.count("Error: ") == 1, result.output
    result = run("export", "--db", built.path, "--survey", built.survey_id, "--out", tmp_path,
                 "--variance", "jk1", "--weighted")
    assert result.exit_code == 1 and "JK1" in result.output, result.output
    assert not list(tmp_path.iterdir())
