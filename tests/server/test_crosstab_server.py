"""Crosstabs on the server: declared joint aggregates kept with the marginals and rebuilt by
recompute, ad-hoc crosstabs from stored reports, the analyst endpoint and its errors."""

from __future__ import annotations

import json
import uuid
from typing import Any

import numpy as np
import pytest
from ldpsurvey.server.aggregation import recompute
from ldpsurvey.server.store import open_store
from ldpsurvey.shared.errors import SurveyError
from ldpsurvey.shared.survey import Survey
from support.server_data import manifest, mechanisms, snapshot, sql, survey_dict

BACKENDS = ("sqlite", "sqlite-process", "postgresql")


def declared_survey() -> dict[str, Any]:
    data = survey_dict("xt")
    data["questions"][1]["groups"] = {"cool": ["green", "blue"]}
    data["questions"].append({"id": "party", "text": "Party?", "type": "categorical",
                              "epsilon": 2.0, "options": ["a", "b", "c", "d"],
                              "mechanism": "oue", "groups": {"ab": ["a", "b"]}})
    data["questions"].append({"id": "mood", "text": "Mood?", "type": "ordinal",
                              "epsilon": 2.0, "options": ["1", "2", "3", "4", "5"],
                              "mechanism": "ordinal_exp", "optional": True})
    data["crosstabs"] = [["color", "party"], ["smoker", "color"], ["party", "mood"],
                         {"rows": "age", "cols": "party", "row_bins": [22, 26]}]
    return data


@pytest.fixture()
def xt(client, auth) -> dict[str, Any]:
    response = client.post("/api/surveys", json=manifest(declared_survey()), headers=auth)
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def submit_random(client, n: int, seed: int, optional_age: bool = True) -> None:
    """n submissions of simulated reports (numpy sampler: test data, not a respondent)."""
    mechs = mechanisms(declared_survey())
    rng = np.random.default_rng(seed)
    color = rng.integers(0, 3, n)
    party = np.where(rng.random(n) < 0.7, color, rng.integers(0, 4, n))
    truth = {"smoker": rng.integers(0, 2, n), "color": color, "party": party,
             "age": rng.integers(0, 13, n), "mood": rng.integers(0, 5, n)}
    reports = {qid: mechs[qid].perturb_many(values, rng) for qid, values in truth.items()}
    items = []
    for i in range(n):
        answers = {qid: _plain(reports[qid][i]) for qid in reports}
        if optional_age and i % 5 == 0:
            del answers["age"]
        items.append({"submission_id": str(uuid.uuid4()), "answers": answers})
    for start in range(0, n, 100):
        response = client.post("/api/surveys/xt/submissions",
                               json={"submissions": items[start:start + 100]})
        assert response.status_code in (200, 201), response.get_json()


def _plain(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return [int(v) for v in value]
    if isinstance(value, np.bool_):
        return bool(value)
    return int(value)


def get(client, auth, query: str) -> Any:
    return client.get(f"/api/surveys/xt/crosstab?{query}", headers=auth)


def test_declared_crosstab_equals_adhoc_and_recompute(client, auth, xt, db_path) -> None:
    submit_random(client, 600, 1)
    for query in ("rows=color&cols=party", "rows=smoker&cols=color", "rows=party&cols=mood",
                  "rows=age&cols=party&row_bins=22,26"):
        declared = get(client, auth, query + "&source=declared")
        adhoc = get(client, auth, query + "&source=reports")
        assert declared.status_code == adhoc.status_code == 200, declared.get_json()
        d, a = declared.get_json(), adhoc.get_json()
        assert d["source"] == "declared" and a["source"] == "reports"
        for doc in (d, a):
            doc.pop("source")
        assert d == a
    doc = get(client, auth, "rows=age&cols=party&bins=22,26").get_json()
    assert doc["source"] == "declared"  # auto: the declared aggregate when it matches
    assert doc["n"] == 480  # every fifth submission skipped the optional age question
    assert doc["rows"]["cells"] == ["18-21", "22-25", "26-30"]
    assert "cols_mean_given_row" not in doc  # the column question is not an integer one
    assert len(doc["rows_mean_given_col"]) == 4
    doc = get(client, auth, "rows=party&cols=mood").get_json()
    assert len(doc["cols_mean_given_row"]) == 4  # the ordinal question's mean score
    assert any("options scored 1..k" in note for note in doc["notes"])
    db = open_store(db_path)
    try:
        assert recompute(db, fix=False) == []
        # A damaged joint aggregate is found and rebuilt.
        sql(db_path, "UPDATE aggregates SET aggregate = ? WHERE key = ?",
            (json.dumps({"kind": "joint", "n": 0, "counts": [[0] * 5] * 4}),
             "crosstab:color:party"))
        found = recompute(db, fix=True)
        assert [m.question_id for m in found] == ["crosstab:color:party"]
        assert recompute(db, fix=False) == []
    finally:
        db.close()
    assert get(client, auth, "rows=color&cols=party&source=declared").get_json()["joint"] == \
        get(client, auth, "rows=color&cols=party&source=reports").get_json()["joint"]


def test_adhoc_pairs_without_declaration(client, auth, xt) -> None:
    submit_random(client, 300, 2)
    doc = get(client, auth, "rows=party&cols=smoker").get_json()
    assert doc["source"] == "reports" and doc["n"] == 300
    assert doc["rows"]["cells"] == ["a", "b", "c", "d"]
    assert doc["cols"]["cells"] == [False, True]
    total = sum(c["estimate"] for row in doc["joint"] for c in row)
    assert total == pytest.approx(1.0, abs=0.5)  # unbiased per cell; the sum is noisy too
    doc = get(client, auth, "rows=party&cols=age&bins=20,25").get_json()
    assert doc["cols"]["cells"] == ["18-19", "20-24", "25-30"]
    assert len(doc["cols_mean_given_row"]) == 4


def test_a_declared_group_is_a_crosstab_side(client, auth, xt) -> None:
    """color:cool (green + blue) against smoker: from the declared smoker x color aggregate,
    the same numbers as from the reports, each cell the sum of its options' cells."""
    submit_random(client, 400, 3)
    doc = get(client, auth, "rows=smoker&cols=color:cool").get_json()
    assert doc["source"] == "declared"
    assert doc["cols"]["cells"] == ["cool", "not cool"] and doc["cols"]["group"] == "cool"
    plain = get(client, auth, "rows=smoker&cols=color").get_json()
    for i in range(2):
        cool = plain["joint"][i][1]["estimate"] + plain["joint"][i][2]["estimate"]
        assert doc["joint"][i][0]["estimate"] == pytest.approx(cool, abs=1e-12)
        assert doc["joint"][i][1]["estimate"] == pytest.approx(plain["joint"][i][0]["estimate"],
                                                               abs=1e-12)
        assert doc["joint"][i][0]["std_error"] > 0
    adhoc = get(client, auth, "rows=smoker&cols=color:cool&source=reports").get_json()
    assert adhoc["source"] == "reports" and adhoc["joint"] == doc["joint"]
    assert any("'color:cool'" in note for note in plain["notes"])


def test_empty_survey_gives_undefined_numbers(client, auth, xt) -> None:
    doc = get(client, auth, "rows=color&cols=party").get_json()
    assert doc["n"] == 0
    assert doc["joint"][0][0]["estimate"] is None


@pytest.mark.parametrize(("query", "status", "code"), [
    ("cols=party", 400, "invalid_parameter"),
    ("rows=color", 400, "invalid_parameter"),
    ("rows=color&cols=nope", 422, "invalid_crosstab"),
    ("rows=color&cols=color", 422, "invalid_crosstab"),
    ("rows=color&cols=party&bins=x", 400, "invalid_parameter"),
    ("rows=color&cols=party&row_bins=1,2", 422, "invalid_crosstab"),
    ("rows=age&cols=party&bins=5,3", 400, "invalid_parameter"),
    ("rows=age&cols=party&bins=100", 422, "invalid_crosstab"),
    ("rows=party&cols=color&source=declared", 422, "invalid_crosstab"),
    ("rows=color&cols=party&source=magic", 422, "invalid_crosstab"),
    ("rows=color&cols=party&confidence=2", 400, "invalid_parameter"),
    ("rows=color&cols=party&bins=1,2", 422, "invalid_crosstab"),  # neither is integer
    ("rows=color:warm&cols=party", 422, "invalid_crosstab"),  # no such group
    ("rows=color&cols=party:ab", 422, "invalid_crosstab"),  # OUE: support sets
    ("rows=color:cool&cols=age&row_bins=1,2", 422, "invalid_crosstab"),
])
def test_bad_requests_are_clear_errors(client, auth, xt, db_path, query, status, code) -> None:
    before = snapshot(db_path)
    response = get(client, auth, query)
    assert response.status_code == status, response.get_json()
    assert response.get_json()["error"]["code"] == code
    assert snapshot(db_path) == before


def test_crosstab_needs_a_token(client, xt) -> None:
    assert client.get("/api/surveys/xt/crosstab?rows=color&cols=party").status_code == 401


def test_unknown_survey_is_404(client, auth) -> None:
    response = client.get("/api/surveys/nope/crosstab?rows=a&cols=b", headers=auth)
    assert response.status_code == 404


@pytest.mark.parametrize(("crosstabs", "field"), [
    ([["color", "nope"]], "crosstabs[0].cols"),
    ([["color", "color"]], "crosstabs[0]"),
    ([["color"]], "crosstabs[0]"),
    ([{"rows": "color", "cols": "party", "row_bins": [1]}], "crosstabs[0].row_bins"),
    ([{"rows": "age", "cols": "party", "row_bins": [100]}], "crosstabs[0]"),
    ([{"rows": "age", "cols": "party", "extra": 1}], "crosstabs[0].extra"),
    ([["color", "party"], ["color", "party"]], "crosstabs[1]"),
    ("color", "crosstabs"),
])
def test_survey_refuses_bad_crosstab_declarations(crosstabs: Any, field: str) -> None:
    data = declared_survey()
    data["crosstabs"] = crosstabs
    with pytest.raises(SurveyError) as info:
        Survey.from_dict(data)
    assert info.value.field == field


def test_declarations_round_trip_and_leave_other_surveys_unchanged() -> None:
    survey = Survey.from_dict(declared_survey())
    assert Survey.from_dict(survey.to_dict()) == survey
    assert "crosstabs" not in Survey.from_dict(survey_dict()).to_dict()


def test_declared_aggregate_follows_the_submission_transaction(client, auth, xt,
                                                               db_path) -> None:
    """A rejected batch changes no joint aggregate; a resent one is counted once; the joint
    rows always equal a recompute."""
    mechs = mechanisms(declared_survey())
    items = [{"submission_id": str(uuid.uuid4()),
              "answers": {"smoker": mechs["smoker"].perturb(i % 2 == 0),
                          "color": mechs["color"].perturb("red"),
                          "party": mechs["party"].perturb("b")}} for i in range(50)]
    assert client.post("/api/surveys/xt/submissions",
                       json={"submissions": items}).status_code in (200, 201)
    before = snapshot(db_path)
    bad = [*items[:5], {"submission_id": str(uuid.uuid4()), "answers": {"color": 7}}]
    assert client.post("/api/surveys/xt/submissions", json={"submissions": bad}).status_code == 422
    assert snapshot(db_path) == before
    response = client.post("/api/surveys/xt/submissions", json={"submissions": items})
    assert len(response.get_json()["duplicates"]) == 50
    doc = get(client, auth, "rows=color&cols=party&source=declared").get_json()
    assert doc["n"] == 50
    db = open_store(db_path)
    try:
        assert recompute(db, fix=False) == []
    finally:
        db.close()


def test_adhoc_pass_pages_through_the_reports(client, auth, xt, monkeypatch) -> None:
    """Pages of any size give the same crosstab as one page."""
    from ldpsurvey.server import crosstabs

    submit_random(client, 250, 3)
    whole = get(client, auth, "rows=party&cols=color&source=reports").get_json()
    monkeypatch.setattr(crosstabs, "PAGE", 7)
    paged = get(client, auth, "rows=party&cols=color&source=reports").get_json()
    assert paged == whole and paged["n"] == 250
