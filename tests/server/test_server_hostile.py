"""Hostile bodies and parameters: always a 4xx with the JSON error body, never a 5xx, and the
database unchanged. (The property-based version over every endpoint lives with issue 7.)"""

from __future__ import annotations

import json
import uuid

import pytest
from support.server_data import manifest, snapshot, submission

SID = "3b241101-e2bb-4255-8caf-4136c566a962"
RAW_BODIES = [
    '{"submission_id": "SID", "answers": {"smoker": "\\ud800"}}',
    '{"submission_id": "\\ud800", "answers": {"smoker": true, "color": 0}}',
    '{"submission_id": "SID", "answers": {"\\ud800": 1, "smoker": true, "color": 0}}',
    '{"submission_id": "SID", "answers": {"smoker": true, "color": 0, "age": 1e308}}',
    '{"submission_id": "SID", "answers": {"smoker": true, "color": 0, "age": -0.0}}',
    '{"submission_id": "SID", "answers": {"smoker": true, "color": 99999999999999999999999}}',
    '{"submission_id": "SID", "answers": {"smoker": [[[[true]]]], "color": {"a": 1}}}',
    '{"submission_id": "SID", "answers": {"smoker": null, "color": 0}}',
    '{"submission_id": "SID", "answers": {"smoker": true, "color": 0}, "version": 1e3}',
    '{"submission_id": "SID", "answers": {"smoker": true, "color": 0}, "version": -1}',
    '{"submission_id": "SID", "answers": {"smoker": true, "color": 0},'
    ' "version": 99999999999999999999999}',
    '{"submission_id": "SID' + "x" * 100_000 + '", "answers": {"smoker": true}}',
    '{"submission_id": "SID\\u0000", "answers": {"smoker": true, "color": 0}}',
    '{"submissions": [null, 1, "x", [], {}]}',
    '{"submissions": {"a": 1}}',
    '{"submissions": [' + ",".join(['{"answers": 1}'] * 500) + "]}",
    '{"": ""}',
    "{}",
]
BODIES = [body.replace("SID", SID) for body in RAW_BODIES]


@pytest.mark.parametrize("body", BODIES)
def test_hostile_submission_bodies(client, db_path, published, body):
    before = snapshot(db_path)
    response = client.post("/api/surveys/health/submissions", data=body.encode("utf-8",
                           "surrogatepass"), content_type="application/json")
    assert 400 <= response.status_code < 500, response.get_data()
    error = response.get_json()["error"]
    assert isinstance(error["code"], str) and isinstance(error["message"], str)
    assert snapshot(db_path) == before


@pytest.mark.parametrize("mutate", [
    lambda b: {**b, "survey": {**b["survey"], "title": "\ud800"}},
    lambda b: {**b, "survey": {**b["survey"], "questions": "x"}},
    lambda b: {**b, "survey": None},
    lambda b: {**b, "survey": [b["survey"]]},
    lambda b: {**b, "signature": 12},
    lambda b: {**b, "public_key": "-----BEGIN PUBLIC KEY-----\nxx\n-----END PUBLIC KEY-----"},
    lambda b: {**b, "public_key": "A" * 10_000},
    lambda b: {**b, "survey": {**b["survey"], "version": 2**70}},
    lambda b: {**b, "survey": {**b["survey"], "questions": [
        {**b["survey"]["questions"][0], "epsilon": 1e308}]}},
])
def test_hostile_manifests(client, auth, db_path, mutate):
    before = snapshot(db_path)
    body = json.dumps(mutate(manifest())).encode("utf-8", "surrogatepass")
    response = client.post("/api/surveys", data=body, content_type="application/json",
                           headers=auth)
    assert 400 <= response.status_code < 500, response.get_data()
    assert snapshot(db_path) == before


@pytest.mark.parametrize("path", [
    "/api/surveys/%00", "/api/surveys/" + "x" * 5000, "/api/surveys/health?version=%00",
    "/api/surveys/health?version=99999999999999999999", "/api/surveys/\u00e9t\u00e9",
    "/api/surveys/health/estimates?confidence=1e-400",
    "/api/surveys/health/estimates?confidence=inf",
    "/api/surveys/health/estimates?version=-1", "/api/surveys/health/submissions.jsonl?version=a",
])
def test_hostile_paths_and_parameters(client, auth, published, path):
    response = client.get(path, headers=auth)
    assert 400 <= response.status_code < 500, (path, response.status_code)
    assert "error" in response.get_json()


def test_head_and_options_are_not_errors(client, published):
    assert client.head("/api/surveys/health").status_code == 200
    assert client.options("/api/surveys/health/submissions").status_code == 200
    sub = submission()
    assert client.post("/api/surveys/health/submissions", json=sub).status_code == 200
    assert uuid.UUID(sub["submission_id"])
