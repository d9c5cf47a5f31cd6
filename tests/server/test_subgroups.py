"""Subgroups of a disclosed question: exact sizes, each randomized question's own estimator
within each subgroup, over HTTP (GET /api/surveys/<id>/subgroups) and `report --by` in every
format; crosstabs accept disclosed questions."""

from __future__ import annotations

import csv
import io
import json
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Survey
from support.server_data import manifest

BACKENDS = ("sqlite", "postgresql")
SEXES = ["f", "m", "x"]
SMOKING = {"f": 0.2, "m": 0.45, "x": 0.3}  # true share of smokers per subgroup
Z = 4.5  # per-check two-sided false-alarm rate 7e-6


def survey_data() -> dict[str, Any]:
    return {"id": "habits", "title": "Habits", "version": 1, "questions": [
        {"id": "sex", "text": "Sex?", "type": "categorical", "options": SEXES,
         "disclosed": True},
        {"id": "age", "text": "Age?", "type": "integer", "min": 18, "max": 90,
         "disclosed": True},
        {"id": "smoker", "text": "Do you smoke?", "type": "binary", "epsilon": 1.0,
         "mechanism": "binary_rr"},
        {"id": "drinks", "text": "Drinks a week?", "type": "integer", "min": 0, "max": 10,
         "epsilon": 1.0, "optional": True},
        {"id": "mood", "text": "Mood?", "type": "categorical", "options": ["bad", "ok", "good"],
         "epsilon": 2.0, "mechanism": "oue"},
    ]}


@pytest.fixture()
def loaded(client, auth) -> dict[str, Any]:
    """3,000 simulated respondents (seeded numpy: test data, not a device's reports)."""
    survey = Survey.from_dict(survey_data())
    mechs = {q.id: mechanism_for(q) for q in survey.questions}
    rng = np.random.default_rng(5)
    n = 3000
    sex = rng.choice(3, size=n, p=[0.5, 0.3, 0.2])
    smoker = (rng.random(n) < np.array([SMOKING[s] for s in SEXES])[sex]).astype(int)
    drinks = rng.integers(0, 11, size=n)
    mood = rng.integers(0, 3, size=n)
    age = rng.integers(18, 91, size=n)
    reports = {"smoker": mechs["smoker"].perturb_many(smoker, rng).tolist(),
               "drinks": mechs["drinks"].perturb_many(drinks, rng).tolist(),
               "mood": mechs["mood"].perturb_many(mood, rng).tolist()}
    subs = []
    for i in range(n):
        answers = {"sex": int(sex[i]), "age": int(age[i]), "smoker": reports["smoker"][i],
                   "mood": reports["mood"][i]}
        if i % 3:
            answers["drinks"] = reports["drinks"][i]
        subs.append({"submission_id": str(uuid.uuid4()), "answers": answers})
    assert client.post("/api/surveys", json=manifest(survey_data()), headers=auth
                       ).status_code == 201
    for start in range(0, n, 100):
        response = client.post("/api/surveys/habits/submissions",
                               json={"submissions": subs[start:start + 100]})
        assert response.status_code in (200, 201), response.get_json()
    return {"sex": sex, "age": age, "subs": subs, "mechs": mechs}


def test_subgroup_sizes_are_exact_and_estimates_are_each_mechanisms_own(client, auth,
                                                                         loaded) -> None:
    doc = client.get("/api/surveys/habits/subgroups?by=sex", headers=auth).get_json()
    assert doc["by"] == "sex" and [g["value"] for g in doc["subgroups"]] == SEXES
    sex, subs, mechs = loaded["sex"], loaded["subs"], loaded["mechs"]
    for g, group in enumerate(doc["subgroups"]):
        members = [s["answers"] for s, v in zip(subs, sex, strict=True) if v == g]
        assert group["n"] == len(members)
        by_q = {e["question"]: e for e in group["questions"]}
        assert set(by_q) == {"smoker", "drinks", "mood"}  # randomized questions only
        for qid in by_q:
            given = [m[qid] for m in members if qid in m]
            want = mechs[qid].estimate(mechs[qid].aggregate_many(np.asarray(given))).to_dict()
            assert by_q[qid] == want
        smoke = by_q["smoker"]["categories"][1]
        truth = SMOKING[SEXES[g]]
        assert abs(smoke["estimate"] - truth) < Z * smoke["std_error"]


def test_a_disclosed_integer_question_groups_by_its_bins(client, auth, loaded) -> None:
    doc = client.get("/api/surveys/habits/subgroups?by=age&bins=30,50",
                     headers=auth).get_json()
    assert [g["value"] for g in doc["subgroups"]] == ["18-29", "30-49", "50-90"]
    age, subs, mechs = loaded["age"], loaded["subs"], loaded["mechs"]
    bin_of = np.searchsorted([30, 50], age, side="right")
    for g, group in enumerate(doc["subgroups"]):
        members = [s["answers"] for s, b in zip(subs, bin_of, strict=True) if b == g]
        assert group["n"] == len(members)
        by_q = {e["question"]: e for e in group["questions"]}
        given = [m["smoker"] for m in members]
        assert by_q["smoker"] == mechs["smoker"].estimate(
            mechs["smoker"].aggregate_many(np.asarray(given))).to_dict()
    default = client.get("/api/surveys/habits/subgroups?by=age", headers=auth).get_json()
    assert len(default["subgroups"]) == 4  # 73 values: four bins of equal width
    assert sum(g["n"] for g in default["subgroups"]) == 3000
    refused = client.get("/api/surveys/habits/subgroups?by=sex&bins=1", headers=auth)
    assert refused.status_code == 422 and "integer" in refused.get_json()["error"]["message"]


def test_adhoc_crosstab_bins_a_disclosed_integer_question(client, auth, loaded) -> None:
    doc = client.get("/api/surveys/habits/crosstab?rows=age&cols=smoker&bins=30,50",
                     headers=auth).get_json()
    assert doc["n"] == 3000
    assert doc["rows"]["cells"] == ["18-29", "30-49", "50-90"]
    sub = client.get("/api/surveys/habits/subgroups?by=age&bins=30,50",
                     headers=auth).get_json()
    # a disclosed bin's share is read exactly (its channel is the identity): the subgroup's size
    for g, group in enumerate(sub["subgroups"]):
        assert doc["row_shares"][g]["estimate"] == pytest.approx(group["n"] / 3000, abs=1e-9)
    # and smoking given the bin is the subgroup's own binary_rr estimate
    for g, group in enumerate(sub["subgroups"]):
        smoke = next(q for q in group["questions"] if q["question"] == "smoker")
        assert doc["col_given_row"][g][1]["estimate"] == pytest.approx(
            smoke["categories"][1]["estimate"], abs=1e-9)


def test_bad_grouping_questions_are_refused(client, auth, loaded) -> None:
    for by, code in (("smoker", 422), ("nope", 422)):
        response = client.get(f"/api/surveys/habits/subgroups?by={by}", headers=auth)
        assert response.status_code == code
        assert response.get_json()["error"]["code"] == "invalid_analysis"
    assert client.get("/api/surveys/habits/subgroups", headers=auth).status_code == 400
    assert client.get("/api/surveys/habits/subgroups?by=sex").status_code == 401


def test_adhoc_crosstab_accepts_a_disclosed_question(client, auth, loaded) -> None:
    doc = client.get("/api/surveys/habits/crosstab?rows=sex&cols=smoker",
                     headers=auth).get_json()
    assert doc["n"] == 3000
    text = json.dumps(doc)
    assert "conditional" in text or "cells" in text


@pytest.mark.parametrize("fmt", ["table", "json", "csv", "md", "html"])
def test_report_by_in_every_format(app, db_path: Path, loaded, fmt: str) -> None:
    result = CliRunner().invoke(cli, ["report", "--db", str(db_path), "--survey", "habits",
                                      "--by", "sex", "--format", fmt])
    assert result.exit_code == 0, result.output
    out = result.output
    sizes = [int((loaded["sex"] == g).sum()) for g in range(3)]
    if fmt == "json":
        assert [g["n"] for g in json.loads(out)["subgroups"]] == sizes
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(out)))
        assert {(r["subgroup"], int(r["subgroup_n"])) for r in rows} == set(
            zip(SEXES, sizes, strict=True))
        assert {r["question"] for r in rows} == {"smoker", "drinks", "mood"}
    else:
        for label, n in zip(SEXES, sizes, strict=True):
            assert f"sex = {label} (n = {n:,})" in out
        if fmt == "html":
            assert out.count("<html") == 1 and out.count("</html>") == 1


def test_report_by_a_randomized_question_is_one_clear_line(app, db_path: Path, loaded) -> None:
    result = CliRunner().invoke(cli, ["report", "--db", str(db_path), "--survey", "habits",
                                      "--by", "smoker"])
    assert result.exit_code != 0
    assert "subgroups are of a disclosed question" in result.output


def test_report_by_an_integer_question_with_bins(app, db_path: Path, loaded) -> None:
    result = CliRunner().invoke(cli, ["report", "--db", str(db_path), "--survey", "habits",
                                      "--by", "age", "--bins", "30,50"])
    assert result.exit_code == 0, result.output
    age = loaded["age"]
    for label, n in (("18-29", (age < 30).sum()), ("30-49", ((age >= 30) & (age < 50)).sum()),
                     ("50-90", (age >= 50).sum())):
        assert f"age = {label} (n = {int(n):,})" in result.output
    lone = CliRunner().invoke(cli, ["report", "--db", str(db_path), "--survey", "habits",
                                    "--bins", "30,50"])
    assert lone.exit_code != 0 and "(--bins also works with --by QUESTION)" in lone.output
