"""A `decimal` question in a crosstab and in by-group reports (issue 41: "crosstab and
by-group means and medians").

- `report --crosstab DECIMAL Q` (and the HTTP crosstab) with Q randomized: the decimal's mean
  among those whose true Q answer is each category, Σ y·w_c(a) / Σ w_c(a) with its delta-method
  interval, from the CLI and the HTTP API alike, in every format; the note says per-category
  medians need a disclosed grouping.
- `report --by G` (G disclosed): per group the mean with its interval and the median and
  quartiles with theirs, in every format.

The statistics themselves (exact unbiasedness, the delta-method s.e. against a seeded
simulation) are tests/shared/test_decimal_crosstab_statistics.py.
"""

from __future__ import annotations

import csv
import html
import io
import json
import uuid
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.numeric.joint_ems import MEAN_ONLY
from ldpsurvey.shared.survey import Survey
from support.server_data import manifest

SURVEY = {"id": "money", "title": "Money", "version": 1, "questions": [
    {"id": "region", "type": "categorical", "text": "Region?", "options": ["north", "south"],
     "disclosed": True},
    {"id": "smoker", "type": "binary", "text": "Smoke?", "epsilon": 3.0},
    {"id": "party", "type": "categorical", "text": "Party?", "options": ["a", "b", "c"],
     "epsilon": 3.0, "mechanism": "grr"},
    {"id": "income", "type": "decimal", "text": "Income?", "min": 0, "max": 2000,
     "resolution": 10, "epsilon": 4.0, "estimate": ["mean", "distribution"], "bins": 4},
    {"id": "hours", "type": "decimal", "text": "Hours?", "min": 0, "max": 80,
     "resolution": 0.5, "epsilon": 4.0, "optional": True},
    {"id": "spent", "type": "decimal", "text": "Spent?", "min": 0, "max": 500,
     "resolution": 1, "epsilon": 4.0, "estimate": ["distribution"], "bins": 5},
    {"id": "age", "type": "decimal", "text": "Age?", "min": 18, "max": 90,
     "resolution": 0.5, "disclosed": True}]}
N = 3000


def truth(n: int, seed: int) -> dict[str, np.ndarray]:
    """True answers as grid indices, the decimals depending on smoker and party."""
    rng = np.random.default_rng(seed)
    smoker = (rng.random(n) < 0.4).astype(np.int64)
    party = rng.integers(0, 3, n)
    region = rng.integers(0, 2, n)
    income = np.clip(60 + 60 * smoker + 20 * party + rng.integers(-30, 31, n), 0, 200)
    hours = np.clip(40 + 40 * smoker + rng.integers(-20, 21, n), 0, 160)
    spent = np.clip(100 + 150 * smoker + rng.integers(-50, 51, n), 0, 500)
    age = rng.integers(0, 145, n)
    return {"region": region, "smoker": smoker, "party": party, "income": income,
            "hours": hours, "spent": spent, "age": age}


def submit(client: Any, n: int, seed: int) -> dict[str, np.ndarray]:
    """n submissions of simulated reports (numpy sampler: test data, not a respondent)."""
    survey = Survey.from_dict(SURVEY)
    mechs = {q.id: mechanism_for(q) for q in survey.questions}
    answers = truth(n, seed)
    rng = np.random.default_rng(seed + 1)
    reports = {qid: mechs[qid].perturb_many(values, rng) for qid, values in answers.items()}
    items = []
    for i in range(n):
        one = {qid: _plain(reports[qid][i]) for qid in reports}
        if i % 10 == 0:
            del one["hours"]
        items.append({"submission_id": str(uuid.uuid4()), "answers": one})
    for start in range(0, n, 100):
        response = client.post("/api/surveys/money/submissions",
                               json={"submissions": items[start:start + 100]})
        assert response.status_code in (200, 201), response.get_json()
    return answers


def _plain(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return [int(v) for v in value]
    if isinstance(value, np.bool_):
        return bool(value)
    return int(value)


@pytest.fixture()
def filled(client, auth, db_path) -> tuple[Any, dict[str, np.ndarray]]:
    assert client.post("/api/surveys", json=manifest(SURVEY), headers=auth).status_code == 201
    return db_path, submit(client, N, 7)


def _true_means(answers: dict[str, np.ndarray], decimal: str, by: str, step: float,
                origin: float = 0.0, keep: np.ndarray | None = None) -> list[float]:
    keep = np.ones(answers[by].size, dtype=bool) if keep is None else keep
    values = origin + step * answers[decimal]
    return [float(values[keep & (answers[by] == c)].mean())
            for c in range(int(answers[by].max()) + 1)]


Z = 4.42  # two-sided normal quantile at a false-alarm rate of 1e-5 per number


@pytest.mark.parametrize(("decimal", "by", "step"), [
    ("income", "smoker", 10.0), ("hours", "party", 0.5), ("spent", "smoker", 1.0)])
def test_http_crosstab_gives_the_decimals_mean_per_randomized_category(
        client, auth, filled, decimal, by, step) -> None:
    _, answers = filled
    response = client.get(f"/api/surveys/money/crosstab?rows={decimal}&cols={by}",
                          headers=auth)
    assert response.status_code == 200, response.get_json()
    doc = response.get_json()
    assert doc["rows"]["question"] == decimal
    means = doc["rows_mean_given_col"]
    keep = np.arange(N) % 10 != 0 if decimal == "hours" else None
    expected = _true_means(answers, decimal, by, step, keep=keep)
    assert len(means) == len(expected) == len(doc["cols"]["cells"])
    for cell, true in zip(means, expected, strict=True):
        assert cell["ci_low"] < cell["estimate"] < cell["ci_high"]
        # the estimate is within Z stated s.e. of the truth (the delta method's s.e.)
        assert abs(cell["estimate"] - true) < Z * cell["std_error"], (cell, true)
    found = doc.get("quantiles_given_category")
    if decimal == "hours":  # a mean mechanism's reports: no quartiles per randomized category
        # (only the mean is identified by its channel): each category says so, no number
        assert found["method"] == "none" and found["by"] == by
        assert [c["category"] for c in found["categories"]] == doc["cols"]["cells"]
        for category in found["categories"]:
            assert category["note"] == MEAN_ONLY
            assert [q["name"] for q in category["quantiles"]] == ["q1", "median", "q3"]
            assert all(q["estimate"] is None and q["ci_low"] is None
                       for q in category["quantiles"])
        assert any("median" in note and "--by" in note for note in doc["notes"])
    else:  # square wave reports (alone or the pair's distribution part): EM over both channels
        assert found["question"] == decimal and found["by"] == by
        values = step * answers[decimal]
        for c, category in enumerate(found["categories"]):
            median = next(q for q in category["quantiles"] if q["name"] == "median")
            true = float(np.median(values[answers[by] == c]))
            assert median["ci_low"] <= median["estimate"] <= median["ci_high"]
            # within Z bootstrap s.e. of the truth, plus one grid step (cells vs the sample's)
            assert abs(median["estimate"] - true) < Z * median["std_error"] + step, (median,
                                                                                    true)
        assert not any("--by" in note for note in doc["notes"])
    # the same table with the decimal as the column side
    flipped = client.get(f"/api/surveys/money/crosstab?rows={by}&cols={decimal}",
                         headers=auth).get_json()
    assert [c["estimate"] for c in flipped["cols_mean_given_row"]] == pytest.approx(
        [c["estimate"] for c in means], rel=1e-12)


def test_a_disclosed_decimal_side_gives_its_mean_per_category(client, auth, filled) -> None:
    _, answers = filled
    doc = client.get("/api/surveys/money/crosstab?rows=age&cols=smoker",
                     headers=auth).get_json()
    expected = _true_means(answers, "age", "smoker", 0.5, origin=18.0)
    for cell, true in zip(doc["rows_mean_given_col"], expected, strict=True):
        assert abs(cell["estimate"] - true) < Z * cell["std_error"]


def test_the_cli_and_the_http_api_agree_in_every_format(client, auth, filled) -> None:
    db, _ = filled
    http = client.get("/api/surveys/money/crosstab?rows=income&cols=party",
                      headers=auth).get_json()
    runner = CliRunner()
    base = ["report", "--db", str(db), "--survey", "money", "--crosstab", "income", "party"]
    out = runner.invoke(cli, [*base, "--format", "json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    assert doc["rows_mean_given_col"] == http["rows_mean_given_col"]
    assert doc["quantiles_given_category"] == http["quantiles_given_category"]
    medians = [next(q for q in c["quantiles"] if q["name"] == "median")
               for c in http["quantiles_given_category"]["categories"]]
    for fmt in ("table", "md", "html", "csv"):
        out = runner.invoke(cli, [*base, "--format", fmt])
        assert out.exit_code == 0, (fmt, out.output)
        first = f"{http['rows_mean_given_col'][0]['estimate']:.1f}"
        if fmt == "csv":
            rows = list(csv.DictReader(io.StringIO(out.output)))
            means = [r for r in rows if r["table"] == "rows_mean_given_col"]
            assert [r["col"] for r in means] == ["a", "b", "c"]
            assert [float(r["estimate"]) for r in means] == pytest.approx(
                [c["estimate"] for c in http["rows_mean_given_col"]], rel=1e-12)
            found = [r for r in rows if r["table"] == "quantiles_given_category:median"]
            assert [r["col"] for r in found] == ["a", "b", "c"]
            assert [float(r[k]) for r in found for k in ("estimate", "ci_low", "ci_high")] \
                == pytest.approx([m[k] for m in medians for k in ("estimate", "ci_low",
                                                                  "ci_high")], rel=1e-12)
        else:
            assert "mean income" in out.output, fmt
            assert first in out.output.replace(",", ""), fmt
            assert "median income" in out.output, fmt
            for m in medians:  # "estimate [low, high]"
                shown = f"{m['estimate']:.2f} [{m['ci_low']:.2f}, {m['ci_high']:.2f}]"
                assert shown in out.output.replace("\\[", "[").replace("\\]", "]"), fmt


@pytest.mark.parametrize("fmt", ["table", "md", "html", "csv"])
def test_a_mean_mechanisms_quartiles_per_category_are_said_not_estimated(
        client, auth, filled, fmt) -> None:
    """A decimal answered by a mean mechanism (hours: auto's choice, duchi/piecewise/hybrid)
    crossed with a randomized question: the text formats show each category's quartiles as
    '–' with the note that the mechanism estimates the mean only; CSV gives no quartile
    rows (no numbers exist)."""
    db, _ = filled
    result = CliRunner().invoke(cli, ["report", "--db", str(db), "--survey", "money",
                                      "--crosstab", "hours", "party", "--format", fmt])
    assert result.exit_code == 0, result.output
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(result.output)))
        assert not any(r["table"].startswith("quantiles_given_category") for r in rows)
        assert [r["col"] for r in rows if r["table"] == "rows_mean_given_col"] == \
            ["a", "b", "c"]
    else:
        flat = " ".join(html.unescape(result.output).split())
        assert "Quartiles of" in flat and "not estimated" in flat, fmt
        assert flat.count(" ".join(MEAN_ONLY.split())) >= 3, fmt  # one per category


def test_bins_and_design_based_decimal_crosstabs_are_refused_in_one_line(
        client, auth, filled) -> None:
    db, _ = filled
    response = client.get("/api/surveys/money/crosstab?rows=income&cols=smoker&bins=100,500",
                          headers=auth)
    assert response.status_code == 422
    message = response.get_json()["error"]["message"]
    assert "income" in message and "\n" not in message
    runner = CliRunner()
    out = runner.invoke(cli, ["report", "--db", str(db), "--survey", "money", "--crosstab",
                               "income", "smoker", "--bins", "100,500"])
    assert out.exit_code != 0 and len(out.output.strip().splitlines()) == 1, out.output


def test_by_group_reports_give_each_groups_mean_and_quartiles_in_every_format(
        client, auth, filled) -> None:
    db, answers = filled
    runner = CliRunner()
    base = ["report", "--db", str(db), "--survey", "money", "--by", "region"]
    out = runner.invoke(cli, [*base, "--format", "json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    assert [g["value"] for g in doc["subgroups"]] == ["north", "south"]
    for g, group in enumerate(doc["subgroups"]):
        by_id = {q["question"]: q for q in group["questions"]}
        inside = answers["region"] == g
        for qid, step in (("income", 10.0), ("spent", 1.0)):
            found = by_id[qid]
            mean = found["mean"]
            true = float((step * answers[qid][inside]).mean())
            assert mean["ci_low"] < mean["estimate"] < mean["ci_high"]
            assert abs(mean["estimate"] - true) < Z * mean["std_error"], (qid, mean, true)
            quartiles = {q["value"]: q for q in found["quantiles"]}
            assert set(quartiles) == {"1st quartile", "median", "3rd quartile"}
            for q in quartiles.values():
                assert q["ci_low"] <= q["estimate"] <= q["ci_high"]
            assert (quartiles["1st quartile"]["estimate"] <= quartiles["median"]["estimate"]
                    <= quartiles["3rd quartile"]["estimate"])
        assert "quantiles" not in by_id["hours"]  # the mean only: its estimate asks no more
    for fmt in ("table", "md", "html", "csv"):
        out = runner.invoke(cli, [*base, "--format", fmt])
        assert out.exit_code == 0, (fmt, out.output)
        if fmt == "csv":
            rows = list(csv.DictReader(io.StringIO(out.output)))
            for region in ("north", "south"):
                kinds = {(r["question"], r["kind"], r["option"]) for r in rows
                         if r["subgroup"] == region}
                assert ("income", "mean", "mean") in kinds
                assert ("income", "quantile", "median") in kinds
                assert ("spent", "quantile", "1st quartile") in kinds
        else:
            text = out.output
            assert text.count("median") >= 4, fmt  # income and spent, in each region
            assert text.count("3rd quartile") >= 4, fmt


def test_by_a_disclosed_decimal_groups_in_the_answers_units(client, auth, filled) -> None:
    """`--by age` (a disclosed decimal, 18..90 by 0.5): bins in years, labelled as the
    decimal's own bins ("18 to 36"), not in grid indices; `--bins` edges in years too."""
    db, answers = filled
    runner = CliRunner()
    base = ["report", "--db", str(db), "--survey", "money", "--by", "age", "--format", "json"]
    doc = json.loads(runner.invoke(cli, base).output)
    assert [g["value"] for g in doc["subgroups"]] == [
        "18 to 36", "36 to 54", "54 to 72", "72 to 90"]
    years = 18 + 0.5 * answers["age"]
    assert [g["n"] for g in doc["subgroups"]] == [
        int(((years >= lo) & ((years < hi) | (hi == 90))).sum())
        for lo, hi in ((18, 36), (36, 54), (54, 72), (72, 90))]
    doc = json.loads(runner.invoke(cli, [*base, "--bins", "30,65"]).output)
    assert [(g["value"], g["n"]) for g in doc["subgroups"]] == [
        ("18 to 30", int((years < 30).sum())), ("30 to 65", int(((years >= 30)
                                                                  & (years < 65)).sum())),
        ("65 to 90", int((years >= 65).sum()))]
    out = runner.invoke(cli, [*base, "--bins", "300"])
    assert out.exit_code != 0 and len(out.output.strip().splitlines()) == 1, out.output


def test_a_declared_decimal_crosstab_equals_the_adhoc_one(client, auth, db_path) -> None:
    data = {**SURVEY, "id": "money", "crosstabs": [["income", "party"], ["smoker", "spent"]]}
    assert client.post("/api/surveys", json=manifest(data), headers=auth).status_code == 201
    submit(client, 600, 3)
    for query in ("rows=income&cols=party", "rows=smoker&cols=spent"):
        declared = client.get(f"/api/surveys/money/crosstab?{query}&source=declared",
                              headers=auth).get_json()
        adhoc = client.get(f"/api/surveys/money/crosstab?{query}&source=reports",
                           headers=auth).get_json()
        assert declared["source"] == "declared" and adhoc["source"] == "reports"
        for key in ("rows_mean_given_col", "cols_mean_given_row", "col_shares", "row_shares"):
            assert declared.get(key) == adhoc.get(key), key


def test_a_declared_crosstab_of_two_numbers_is_refused_naming_it() -> None:
    from ldpsurvey.shared.errors import SurveyError

    with pytest.raises(SurveyError) as exc:
        Survey.from_dict({**SURVEY, "crosstabs": [["party", "income"], ["income", "hours"]]})
    assert exc.value.field == "crosstabs[1]" and "both numbers" in exc.value.message
