"""The HTTP API through Flask's test client: every endpoint, every error status, auth."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.server.auth import revoke_token
from ldpsurvey.server.store import open_store
from support.server_data import manifest, snapshot, submission, survey_dict

BACKENDS = ("sqlite", "sqlite-process", "postgresql")

ANALYST_ROUTES = [
    ("GET", "/api/surveys"),
    ("POST", "/api/surveys"),
    ("GET", "/api/surveys/health/estimates"),
    ("GET", "/api/surveys/health/submissions.jsonl"),
    ("POST", "/api/surveys/health/close"),
]


def error_of(response: Any) -> dict[str, Any]:
    body = response.get_json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}
    return body["error"]


# --- public endpoints ----------------------------------------------------------------------


def test_healthz(client):
    response = client.get("/healthz")
    assert response.status_code == 200 and response.get_json() == {"status": "ok"}


def test_get_survey_serves_manifest_unchanged(client, auth):
    body = manifest()
    client.post("/api/surveys", json=body, headers=auth)
    got = client.get("/api/surveys/health").get_json()
    assert {k: got[k] for k in ("survey", "signature", "public_key")} == body
    assert got["status"] == "open" and len(got["sha256"]) == 64


def test_get_survey_versions(client, auth):
    client.post("/api/surveys", json=manifest(survey_dict(version=1)), headers=auth)
    client.post("/api/surveys", json=manifest(survey_dict(version=3)), headers=auth)
    assert client.get("/api/surveys/health").get_json()["survey"]["version"] == 3
    assert client.get("/api/surveys/health?version=1").get_json()["survey"]["version"] == 1
    assert client.get("/api/surveys/health?version=2").status_code == 404
    assert client.get("/api/surveys/health?version=x").status_code == 400
    assert client.get("/api/surveys/health?version=0").status_code == 400


def test_unknown_survey_and_route_are_404(client):
    assert error_of(client.get("/api/surveys/nope"))["code"] == "not_found"
    assert client.get("/api/nothing").status_code == 404
    response = client.post("/api/surveys/nope/submissions", json=submission())
    assert response.status_code == 404


def test_wrong_method_is_405_with_allow(client):
    response = client.put("/api/surveys/health")
    assert response.status_code == 405 and "GET" in response.headers["Allow"]
    error_of(response)


def test_openapi_documents_every_route(app, client):
    doc = client.get("/api/openapi.json").get_json()
    assert doc["openapi"].startswith("3.")
    documented = {(method.upper(), path) for path, ops in doc["paths"].items() for method in ops}
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "static":
            continue
        path = rule.rule.replace("<", "{").replace(">", "}")
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            assert (method, path) in documented, (method, path)
    assert len(documented) == sum(len(r.methods - {"HEAD", "OPTIONS"})
                                  for r in app.url_map.iter_rules() if r.endpoint != "static")


# --- submissions ---------------------------------------------------------------------------


def test_single_submission_and_duplicate(client, published):
    sub = submission()
    first = client.post("/api/surveys/health/submissions", json=sub)
    assert first.status_code == 200
    assert first.get_json() == {"accepted": [sub["submission_id"]], "duplicates": []}
    again = client.post("/api/surveys/health/submissions", json=sub)
    assert again.get_json() == {"accepted": [], "duplicates": [sub["submission_id"]]}


def test_duplicate_id_in_any_spelling_counts_once(client, auth, published):
    sid = str(uuid.uuid4())
    batch = {"submissions": [submission(sid=sid), submission(sid=sid.upper()),
                             submission(sid="{" + sid + "}")]}
    body = client.post("/api/surveys/health/submissions", json=batch).get_json()
    assert body == {"accepted": [sid], "duplicates": [sid, sid]}
    est = client.get("/api/surveys/health/estimates", headers=auth).get_json()
    assert est["n_submissions"] == 1
    assert all(q["n"] == 1 for q in est["questions"])


def test_optional_question_may_be_skipped_required_may_not(client, auth, published):
    skipped = submission({"smoker": False, "color": "red"})
    assert client.post("/api/surveys/health/submissions", json=skipped).status_code == 200
    missing = submission({"color": "red", "age": 20})
    response = client.post("/api/surveys/health/submissions", json=missing)
    assert response.status_code == 422
    item = error_of(response)["details"]["items"][0]
    assert item["errors"] == [{"field": "answers.smoker", "message": "required question missing"}]
    est = client.get("/api/surveys/health/estimates", headers=auth).get_json()
    n = {q["question"]: q["n"] for q in est["questions"]}
    assert n == {"smoker": 1, "color": 1, "age": 0} and est["n_submissions"] == 1


@pytest.mark.parametrize("bad_item, field", [
    ({"submission_id": "not-a-uuid", "answers": {"smoker": True, "color": 0}}, "submission_id"),
    ({"submission_id": 12345, "answers": {"smoker": True, "color": 0}}, "submission_id"),
    ({"submission_id": "DROP", "answers": {"smoker": True, "color": 0}}, "submission_id"),
    ({"submission_id": None, "answers": {"smoker": True, "color": 0}}, "submission_id"),
    ({"answers": {}}, "answers"),
    ({"answers": [1, 2]}, "answers"),
    ({"answers": {"smoker": 1, "color": 0}}, "answers.smoker"),     # 1 is not a yes/no report
    ({"answers": {"smoker": True, "color": 3}}, "answers.color"),   # outside [0, 3)
    ({"answers": {"smoker": True, "color": True}}, "answers.color"),
    ({"answers": {"smoker": True, "color": 1.0}}, "answers.color"),
    ({"answers": {"smoker": True, "color": 0, "age": "20"}}, "answers.age"),
    ({"answers": {"smoker": True, "color": 0, "age": 2**60}}, "answers.age"),
    ({"answers": {"smoker": True, "color": 0, "zzz": 1}}, "answers.zzz"),
    ({"answers": {"smoker": True, "color": 0}, "version": 7}, "version"),
    ({"answers": {"smoker": True, "color": 0}, "version": "1"}, "version"),
    ({"answers": {"smoker": True, "color": 0}, "ip": "1.2.3.4"}, "ip"),
])
def test_one_invalid_item_rejects_the_whole_batch(client, db_path, published, bad_item, field):
    bad = {"submission_id": str(uuid.uuid4()), **bad_item}
    if bad["submission_id"] == "DROP":
        del bad["submission_id"]
    before = snapshot(db_path)
    batch = {"submissions": [submission(), bad, submission()]}
    response = client.post("/api/surveys/health/submissions", json=batch)
    assert response.status_code == 422
    error = error_of(response)
    assert error["code"] == "invalid_submission"
    assert [i["index"] for i in error["details"]["items"]] == [1]
    assert field in {e["field"] for e in error["details"]["items"][0]["errors"]}
    assert snapshot(db_path) == before


@pytest.mark.parametrize("body", [
    {"submissions": []},
    {"submissions": "x"},
    {"submissions": [], "extra": 1},
])
def test_malformed_batches_are_422(client, db_path, published, body):
    before = snapshot(db_path)
    assert client.post("/api/surveys/health/submissions", json=body).status_code == 422
    assert snapshot(db_path) == before


def test_batch_over_max_is_422(client, published):
    batch = {"submissions": [submission() for _ in range(101)]}  # the app fixture caps at 100
    response = client.post("/api/surveys/health/submissions", json=batch)
    assert response.status_code == 422 and error_of(response)["details"]["max"] == 100


def test_submission_to_a_version(client, auth):
    client.post("/api/surveys", json=manifest(survey_dict(version=1)), headers=auth)
    client.post("/api/surveys", json=manifest(survey_dict(version=2)), headers=auth)
    client.post("/api/surveys/health/submissions", json=submission(version=1))
    client.post("/api/surveys/health/submissions", json=submission())
    client.post("/api/surveys/health/submissions", json=submission())
    n1 = client.get("/api/surveys/health/estimates?version=1", headers=auth).get_json()
    n2 = client.get("/api/surveys/health/estimates", headers=auth).get_json()
    assert (n1["version"], n1["n_submissions"]) == (1, 1)
    assert (n2["version"], n2["n_submissions"]) == (2, 2)


def test_the_largest_version_is_stored_and_read(client, auth):
    """ODK numbers versions yyyymmddrr (2017120701); the largest a store's 32-bit version
    column holds, 2147483647, is published, answered and read on every backend."""
    for version in (2_017_120_701, 2**31 - 1):
        body = manifest(survey_dict(version=version))
        assert client.post("/api/surveys", json=body, headers=auth).status_code == 201
        sent = client.post("/api/surveys/health/submissions", json=submission(version=version))
        assert sent.status_code == 200, sent.get_json()
        read = client.get(f"/api/surveys/health/estimates?version={version}",
                          headers=auth).get_json()
        assert (read["version"], read["n_submissions"]) == (version, 1)
    beyond = client.get(f"/api/surveys/health/estimates?version={2**31}", headers=auth)
    assert beyond.status_code == 400, beyond.get_json()


def test_closed_survey_refuses_submissions(client, auth, db_path, published):
    response = client.post("/api/surveys/health/close", headers=auth)
    assert response.status_code == 200
    assert response.get_json() == {"id": "health", "status": "closed", "versions": [1]}
    before = snapshot(db_path)
    refused = client.post("/api/surveys/health/submissions", json=submission())
    assert refused.status_code == 409 and error_of(refused)["code"] == "survey_closed"
    assert snapshot(db_path) == before
    assert client.get("/api/surveys/health").get_json()["status"] == "closed"
    assert client.post("/api/surveys/nope/close", headers=auth).status_code == 404


# --- strict JSON -----------------------------------------------------------------------------


@pytest.mark.parametrize("data", [
    b"", b"{", b'{"submission_id": NaN}', b'{"x": Infinity}', b'{"x": -Infinity}',
    b'{"x": 1e999}', b'{"a": 1, "a": 2}', b'{"answers": {"q": 1, "q": 2}}',
    b"[" * 50_000 + b"]" * 50_000, b'{"x": ' + b"9" * 5000 + b"}", b"\xff\xfe{}",
])
def test_malformed_json_is_400(client, db_path, published, data):
    before = snapshot(db_path)
    response = client.post("/api/surveys/health/submissions", data=data,
                           content_type="application/json")
    assert response.status_code == 400
    assert error_of(response)["code"] == "malformed_json"
    assert snapshot(db_path) == before


@pytest.mark.parametrize("data", [b"[]", b"1", b'"x"', b"null"])
def test_non_object_body_is_422(client, published, data):
    response = client.post("/api/surveys/health/submissions", data=data,
                           content_type="application/json")
    assert response.status_code == 422


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded",
                                          "application/json; charset=latin-1"])
def test_wrong_content_type_is_415(client, published, content_type):
    headers = {"Content-Type": content_type} if content_type else {}
    response = client.post("/api/surveys/health/submissions",
                           data=json.dumps(submission()), headers=headers)
    assert response.status_code == 415


def test_body_over_cap_is_413(client, db_path, published):
    before = snapshot(db_path)
    big = json.dumps({"submissions": [submission()], "pad": "x" * (1 << 20)})
    response = client.post("/api/surveys/health/submissions", data=big,
                           content_type="application/json")
    assert response.status_code == 413
    error_of(response)
    assert snapshot(db_path) == before


# --- analyst endpoints -----------------------------------------------------------------------


@pytest.mark.parametrize("method, path", ANALYST_ROUTES)
def test_analyst_routes_need_a_token(client, db_path, token, published, method, path):
    before = snapshot(db_path)
    missing = client.open(path, method=method, json=manifest())
    assert missing.status_code == 401 and "Bearer" in missing.headers["WWW-Authenticate"]
    malformed = client.open(path, method=method, json=manifest(),
                            headers={"Authorization": "Basic dXNlcjpwdw=="})
    assert malformed.status_code == 401
    unknown = client.open(path, method=method, json=manifest(),
                          headers={"Authorization": "Bearer ldp_" + "A" * 43})
    assert unknown.status_code == 403
    store = open_store(db_path)
    revoke_token(store, 1)
    store.close()
    revoked = client.open(path, method=method, json=manifest(),
                          headers={"Authorization": f"Bearer {token}"})
    assert revoked.status_code == 403 and error_of(revoked)["code"] == "forbidden"
    after = snapshot(db_path)
    after["tokens"] = before["tokens"]  # only the revocation changed
    assert after == before


@pytest.mark.parametrize("header, status, says", [
    ("Bearer ldp_wrong", 403, "unknown or revoked token"),      # well formed, not ours
    ("Bearer ldp_" + "A" * 43, 403, "unknown or revoked token"),
    ("Bearer something-else", 403, "unknown or revoked token"),
    ("Basic dXNlcjpwdw==", 401, "malformed Authorization header"),
    ("Bearer ", 401, "malformed Authorization header"),
    ("Bearer ldp_a ldp_b", 401, "malformed Authorization header"),
])
def test_a_well_formed_header_with_a_wrong_token_says_unknown_token(
        client, published, header, status, says):
    reply = client.get("/api/surveys/health/estimates", headers={"Authorization": header})
    assert reply.status_code == status
    assert says in error_of(reply)["message"]


def test_publish_idempotent_conflict_and_new_version(client, auth):
    key = Ed25519PrivateKey.generate()
    body = manifest(key=key)
    assert client.post("/api/surveys", json=body, headers=auth).status_code == 201
    again = client.post("/api/surveys", json=body, headers=auth)
    assert again.status_code == 200
    changed = survey_dict()
    changed["title"] = "Another title"
    conflict = client.post("/api/surveys", json=manifest(changed, key), headers=auth)
    assert conflict.status_code == 409 and error_of(conflict)["code"] == "conflict"
    other_key = client.post("/api/surveys", json=manifest(), headers=auth)
    assert other_key.status_code == 409
    assert client.post("/api/surveys", json=manifest(survey_dict(version=2), key),
                       headers=auth).status_code == 201
    # The body GET returns is accepted back unchanged (it carries sha256 and status).
    served = client.get("/api/surveys/health?version=2").get_json()
    assert client.post("/api/surveys", json=served, headers=auth).status_code == 200


def tampered(body: dict[str, Any]) -> dict[str, Any]:
    body = json.loads(json.dumps(body))
    body["survey"]["questions"][0]["epsilon"] = 5.0
    body["survey"]["questions"][0]["params"] = {}
    return body


@pytest.mark.parametrize("mutate", [
    lambda b: {k: v for k, v in b.items() if k != "signature"},
    lambda b: {**b, "signature": ""},
    lambda b: {**b, "signature": "!!notbase64"},
    lambda b: {**b, "public_key": manifest()["public_key"]},
    lambda b: {**b, "sha256": "0" * 64},
    lambda b: {**b, "extra": 1},
    lambda b: {**b, "survey": {"id": "x"}},
    tampered,
])
def test_bad_manifests_are_refused(client, auth, db_path, mutate):
    before = snapshot(db_path)
    response = client.post("/api/surveys", json=mutate(manifest()), headers=auth)
    assert response.status_code == 422
    error_of(response)
    assert snapshot(db_path) == before


def test_list_surveys(client, auth, published):
    client.post("/api/surveys/health/submissions", json=submission())
    surveys = client.get("/api/surveys", headers=auth).get_json()["surveys"]
    assert [(s["id"], s["version"], s["n_submissions"], s["status"]) for s in surveys] == [
        ("health", 1, 1, "open")]


def test_estimates_confidence_and_shape(client, auth, published):
    for _ in range(3):
        client.post("/api/surveys/health/submissions", json=submission())
    narrow = client.get("/api/surveys/health/estimates?confidence=0.5", headers=auth).get_json()
    wide = client.get("/api/surveys/health/estimates?confidence=0.99", headers=auth).get_json()
    assert narrow["n_submissions"] == 3 and narrow["last_submission_hour"].endswith(":00:00Z")
    assert [q["question"] for q in narrow["questions"]] == ["smoker", "color", "age"]
    a = narrow["questions"][0]["categories"][1]
    b = wide["questions"][0]["categories"][1]
    assert a["estimate"] == b["estimate"]
    assert b["ci_high"] - b["ci_low"] > a["ci_high"] - a["ci_low"]
    for bad in ("0", "1", "1.5", "-0.1", "nan", "abc", "", "0.9999999999999999"):
        response = client.get(f"/api/surveys/health/estimates?confidence={bad}", headers=auth)
        assert response.status_code == 400, bad
    assert client.get("/api/surveys/nope/estimates", headers=auth).status_code == 404


def test_export_jsonl(client, auth, published):
    subs = [submission(), submission({"smoker": False, "color": "blue"})]
    client.post("/api/surveys/health/submissions", json={"submissions": subs})
    response = client.get("/api/surveys/health/submissions.jsonl", headers=auth)
    assert response.status_code == 200 and response.mimetype == "application/x-ndjson"
    lines = [json.loads(line) for line in response.get_data(as_text=True).splitlines()]
    assert [(x["submission_id"], x["answers"]) for x in lines] == [
        (s["submission_id"], s["answers"]) for s in subs]
    assert all(set(x) == {"submission_id", "version", "received_hour", "answers"}
               for x in lines)
    assert client.get("/api/surveys/nope/submissions.jsonl", headers=auth).status_code == 404
