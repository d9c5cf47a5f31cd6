"""A `decimal` question on the server (issue 41): its reports (grid cells, or the
[mean, distribution] pair) are checked at ingest, a bad one refused with a 422 naming the field
and nothing stored, and the estimates are the mean in the question's units, with the bins and
quartiles when the distribution is asked."""

from __future__ import annotations

import uuid
from typing import Any

from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Survey
from support.server_data import manifest

SURVEY = {"id": "money", "title": "Money", "version": 1, "questions": [
    {"id": "income", "type": "decimal", "text": "Income?", "min": 0, "max": 2000,
     "resolution": 10, "epsilon": 2.0, "estimate": ["mean", "distribution"], "bins": 4},
    {"id": "hours", "type": "decimal", "text": "Hours?", "min": 0, "max": 80,
     "resolution": 0.5, "epsilon": 1.0, "optional": True}]}
MECHS = {q.id: mechanism_for(q) for q in Survey.from_dict(SURVEY).questions}


def submission(answers: dict[str, Any]) -> dict[str, Any]:
    return {"submission_id": str(uuid.uuid4()),
            "answers": {qid: MECHS[qid].perturb(v) for qid, v in answers.items()}}


def test_reports_are_ingested_and_estimated_in_the_questions_units(client, auth) -> None:
    assert client.post("/api/surveys", json=manifest(SURVEY), headers=auth).status_code == 201
    batch = {"submissions": [submission({"income": 10 * (i % 200), "hours": 0.5 * (i % 160)})
                             for i in range(60)]}
    response = client.post("/api/surveys/money/submissions", json=batch)
    assert response.status_code == 200, response.get_json()
    est = client.get("/api/surveys/money/estimates", headers=auth).get_json()
    income, hours = est["questions"]
    assert income["n"] == hours["n"] == 60
    assert income["mechanism"] == "mean_and_distribution"
    assert [b["value"] for b in income["distribution"]] == [
        "0 to 500", "500 to 1000", "1000 to 1500", "1500 to 2000"]
    assert [q["value"] for q in income["quantiles"]] == ["1st quartile", "median",
                                                         "3rd quartile"]
    assert hours["mean"]["ci_low"] < hours["mean"]["estimate"] < hours["mean"]["ci_high"]


def test_a_bad_report_is_refused_naming_the_field_and_nothing_is_stored(client, auth) -> None:
    client.post("/api/surveys", json=manifest(SURVEY), headers=auth)
    good = submission({"income": 1230})
    for bad in ([0], [0, 0, 0], "5", [0, 10**6], 1234.5, [True, 0]):
        body = {"submission_id": str(uuid.uuid4()),
                "answers": {**good["answers"], "income": bad}}
        response = client.post("/api/surveys/money/submissions", json=body)
        assert response.status_code == 422, bad
        item = response.get_json()["error"]["details"]["items"][0]
        assert item["errors"][0]["field"] == "answers.income"
    est = client.get("/api/surveys/money/estimates", headers=auth).get_json()
    assert est["n_submissions"] == 0
