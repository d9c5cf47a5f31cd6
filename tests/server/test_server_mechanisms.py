"""Every registered mechanism through the server: publish, submit secure-path reports (JSON
round trip), estimate, export, and recompute equal to the incremental aggregates. Parametrized
over the registry, so a newly registered mechanism is covered automatically."""

from __future__ import annotations

import json
import uuid

import pytest
from ldpsurvey.server.aggregation import recompute
from ldpsurvey.server.store import open_store
from ldpsurvey.shared.mechanisms import MECHANISMS, SET_MECHANISMS, mechanism_for
from ldpsurvey.shared.survey import Survey
from support.mechanisms import set_answer
from support.server_data import manifest

BACKENDS = ("sqlite", "sqlite-process", "postgresql")


def question_for(name: str) -> dict:
    cls = MECHANISMS[name]
    # the first type it fits, an integer before a decimal (tests/shared covers decimals')
    qtype = min(cls.question_types, key=lambda t: (t == "decimal", t))
    q = {"id": f"q_{name}", "text": name, "type": qtype, "epsilon": 1.0, "mechanism": name}
    if qtype in ("categorical", "ordinal"):
        q["options"] = [f"option-{i}" for i in range(6)]
    if qtype == "integer":
        q.update(min=0, max=9)
    return q


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_mechanism_end_to_end(client, auth, db_path, name):
    data = {"id": "mech", "title": name, "version": 1, "questions": [question_for(name)]}
    assert client.post("/api/surveys", json=manifest(data), headers=auth).status_code == 201
    question = Survey.from_dict(data).questions[0]
    mechanism = mechanism_for(question)
    empty = client.get("/api/surveys/mech/estimates", headers=auth)
    assert empty.status_code == 200 and empty.get_json()["questions"][0]["n"] == 0

    labels = list(mechanism.labels)
    items = []
    for i in range(30):
        report = mechanism.perturb(labels[i % len(labels)])
        items.append({"submission_id": str(uuid.uuid4()),
                      "answers": {question.id: json.loads(json.dumps(
                          report, default=lambda o: o.tolist()))}})
    response = client.post("/api/surveys/mech/submissions", json={"submissions": items})
    assert response.status_code == 200, response.get_json()
    assert len(response.get_json()["accepted"]) == 30

    est = client.get("/api/surveys/mech/estimates", headers=auth).get_json()
    assert est["n_submissions"] == 30 and est["questions"][0]["n"] == 30
    lines = client.get("/api/surveys/mech/submissions.jsonl", headers=auth).get_data(
        as_text=True).splitlines()
    assert len(lines) == 30
    db = open_store(db_path)
    assert recompute(db, fix=False) == []
    db.close()


# --- multiselect mechanisms (sets of options) ------------------------------------------------


def multiselect_survey(name: str) -> dict:
    return {"id": "mech", "title": name, "version": 1, "questions": [
        {"id": "q", "text": name, "type": "multiselect", "epsilon": 2.0, "mechanism": name,
         "options": [f"option-{i}" for i in range(8)], "max_selected": 3,
         "required_min": 1}]}


@pytest.mark.parametrize("name", sorted(SET_MECHANISMS))
def test_multiselect_mechanism_end_to_end(client, auth, db_path, name):
    data = multiselect_survey(name)
    assert client.post("/api/surveys", json=manifest(data), headers=auth).status_code == 201
    mechanism = mechanism_for(Survey.from_dict(data).questions[0])
    items = [{"submission_id": str(uuid.uuid4()),
              "answers": {"q": json.loads(json.dumps(mechanism.perturb(set_answer(mechanism, i))))}}
             for i in range(30)]
    response = client.post("/api/surveys/mech/submissions", json={"submissions": items})
    assert response.status_code == 200, response.get_json()
    est = client.get("/api/surveys/mech/estimates", headers=auth).get_json()["questions"][0]
    assert est["n"] == 30 and est["consistent_method"] == "clip"
    assert [c["value"] for c in est["categories"]] == [f"option-{i}" for i in range(8)]
    assert est["mean"]["estimate"] is not None  # the mean number selected
    db = open_store(db_path)
    assert recompute(db, fix=False) == []
    db.close()


@pytest.mark.parametrize("name", sorted(SET_MECHANISMS))
def test_hostile_multiselect_report_is_refused_and_nothing_is_stored(client, auth, name):
    data = multiselect_survey(name)
    assert client.post("/api/surveys", json=manifest(data), headers=auth).status_code == 201
    mechanism = mechanism_for(Survey.from_dict(data).questions[0])
    good = json.loads(json.dumps(mechanism.perturb(["option-0"])))
    hostile = [["option-0"], "option-0", [True], None, -1, [2**40], [1, 2, 3], 10**6, [0.5, 1]]
    for bad in hostile:
        if bad == good:
            continue
        response = client.post("/api/surveys/mech/submissions",
                               json={"submission_id": str(uuid.uuid4()), "answers": {"q": bad}})
        assert 400 <= response.status_code < 500, (bad, response.get_json())
        assert "error" in response.get_json()
    est = client.get("/api/surveys/mech/estimates", headers=auth).get_json()["questions"][0]
    assert est["n"] == 0


def test_a_multiselect_question_is_refused_by_regression_and_crossed_by_option(client, auth):
    """Its options overlap: no regression outcome or covariate (422 with the reason, never a
    wrong fit); a crosstab crosses one option against not selecting it, from the declared
    aggregate and from the reports alike, and refuses the whole question."""
    data = multiselect_survey("psfo_grr")
    data["questions"].append({"id": "smoker", "text": "Smoke?", "type": "binary",
                              "epsilon": 1.0})
    data["crosstabs"] = [["q", "smoker"]]
    assert client.post("/api/surveys", json=manifest(data), headers=auth).status_code == 201
    survey = Survey.from_dict(data)
    used, smoker = (mechanism_for(survey.question(qid)) for qid in ("q", "smoker"))
    items = [{"submission_id": str(uuid.uuid4()),
              "answers": {"q": used.perturb(set_answer(used, i)),
                          "smoker": smoker.perturb(i % 3 == 0)}} for i in range(40)]
    assert client.post("/api/surveys/mech/submissions",
                       json={"submissions": items}).status_code == 200
    for query in ("outcome=smoker&covariates=q", "outcome=q&covariates=smoker"):
        response = client.get(f"/api/surveys/mech/regression?{query}", headers=auth)
        assert response.status_code == 422, response.get_json()
        assert "multiselect question" in response.get_json()["error"]["message"]
    response = client.get("/api/surveys/mech/crosstab?rows=q&cols=smoker", headers=auth)
    assert response.status_code == 422, response.get_json()
    assert "crossed one option at a time" in response.get_json()["error"]["message"]
    docs = {source: client.get(f"/api/surveys/mech/crosstab?rows=q:option-1&cols=smoker"
                               f"&source={source}", headers=auth).get_json()
            for source in ("declared", "reports")}
    assert docs["declared"]["rows"]["cells"] == ["option-1", "not option-1"]
    assert docs["declared"]["rows"]["group"] == "option-1"
    assert docs["declared"]["joint"] == docs["reports"]["joint"]
    assert any("respondents who selected 'option-1'" in n for n in docs["declared"]["notes"])
    response = client.get("/api/surveys/mech/crosstab?rows=q:heroin&cols=smoker", headers=auth)
    assert response.status_code == 422 and "not an option" in \
        response.get_json()["error"]["message"]
