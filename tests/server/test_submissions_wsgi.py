"""The lean submissions endpoint (server/submissions_wsgi.py) answers exactly as Flask does.

Each request of a battery goes to two apps on two fresh stores holding the same surveys: once
through the app (its wsgi_app is the lean endpoint in front of Flask) and once through Flask
alone (the original wsgi_app it wraps). Status, headers (but Date), body bytes and, at the
end, the stored rows must be equal. The lean side runs both ways it is served: ingest in
process, and as `ldpsurvey serve` runs it, where the body is parsed, checked and stored in the
SQLite ingest process and its refusals come back from there. The battery holds what the lean
endpoint answers itself and what it must hand to Flask. Further tests show that it really
answers (the Flask view is not called for a valid submission) and that a bug inside it is
Flask's JSON 500 with a log line that names the endpoint and nothing of the request.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from ldpsurvey.server import submissions
from ldpsurvey.server.app import create_app
from ldpsurvey.server.auth import create_token
from ldpsurvey.server.http_request import STORE_EXTENSION
from ldpsurvey.server.submissions_wsgi import SubmissionsEndpoint
from support.server_data import manifest, sql, submission, survey_dict
from support.two_server import two_server_survey
from werkzeug.test import Client, TestResponse

ORIGIN = "https://pages.example.org"
LIMIT = 4096  # MAX_CONTENT_LENGTH of both apps: small, so that a batch of 3 fits and 4 KB not
CONFIG = {"MAX_CONTENT_LENGTH": LIMIT, "MAX_BATCH": 3, "TESTING": True,
          "ALLOWED_ORIGINS": [ORIGIN]}
SUBMIT = "/api/surveys/health/submissions"
JSON = "application/json"
WAITRESS = {"wsgi.input_terminated": True}  # waitress ends wsgi.input at the body's end


@dataclass
class Side:
    app: Flask
    db: Path
    client: Client


def _published_app(db: Path, manifests: list[dict[str, Any]], in_child: bool = False) -> Flask:
    app = create_app({"DATABASE": str(db), **CONFIG, "INGEST_PROCESS": in_child})
    auth = {"Authorization": f"Bearer {create_token(app.extensions[STORE_EXTENSION], 't')[1]}"}
    client = app.test_client()
    for body in manifests:
        assert client.post("/api/surveys", json=body, headers=auth).status_code == 201
    assert client.post("/api/surveys/shut/close", headers=auth).status_code == 200
    return app


@contextmanager
def two_sides(tmp_path: Path, in_child: bool = False) -> Iterator[tuple[Side, Side]]:
    """(the app as served, Flask alone), each on its own fresh store with the same surveys:
    'health' open, 'shut' closed, 'pulse' collected by two servers. `in_child`: the app's
    ingest runs in the SQLite ingest process (Flask alone runs it in process)."""
    manifests = [manifest(), manifest(survey_dict("shut")),
                 manifest(two_server_survey("https://helper.example", b"h" * 32, b"l" * 32))]
    lean = _published_app(tmp_path / "lean.db", manifests, in_child)
    alone = _published_app(tmp_path / "flask.db", manifests)
    endpoint = alone.wsgi_app
    assert isinstance(endpoint, SubmissionsEndpoint) and isinstance(lean.wsgi_app,
                                                                    SubmissionsEndpoint)
    assert (lean.extensions[STORE_EXTENSION].ingest_process is not None) == in_child
    try:
        yield (Side(lean, tmp_path / "lean.db", Client(lean)),
               Side(alone, tmp_path / "flask.db", Client(endpoint.flask_wsgi)))
    finally:
        for app in (lean, alone):
            app.extensions[STORE_EXTENSION].close()


@pytest.fixture()
def sides(tmp_path: Path) -> Iterator[tuple[Side, Side]]:
    with two_sides(tmp_path) as both:
        yield both


def _post(path: str = SUBMIT, body: Any = None, raw: bytes | None = None,
          content_type: str | None = JSON, **kwargs: Any) -> dict[str, Any]:
    data = raw if raw is not None else json.dumps(body).encode()
    return {"path": path, "method": "POST", "data": data, "content_type": content_type,
            **kwargs}


# What the lean endpoint hands to Flask; it answers every other request of the battery.
# What it hands to Flask (a body of another length than declared: with the same bytes).
HANDED = {"wrong content type", "charset latin-1", "charset utf8 (Flask's)", "no content type",
          "no Content-Length", "odd Content-Length", "chunked", "body above MAX_CONTENT_LENGTH",
          "encoded slash in the id", "uppercase id", "trailing slash", "GET",
          "OPTIONS preflight", "truncated body",
          "stream longer than its Content-Length, as waitress passes it"}


def battery() -> list[tuple[str, dict[str, Any]]]:
    """(name, werkzeug Client.open arguments): fixed reports, so both sides get equal bytes."""
    first, again = submission(), submission()
    wrong_report = submission()
    wrong_report["answers"]["smoker"] = 7
    missing = submission()
    del missing["answers"]["color"]
    sid = str(uuid.uuid4())
    return [
        ("single", _post(body=first)),
        ("batch", _post(body={"submissions": [submission(), submission()]})),
        ("duplicate", _post(body=first)),
        ("repeated id in a batch", _post(body={"submissions": [again, again]})),
        ("bad JSON", _post(raw=b'{"submission_id": ')),
        ("duplicate keys", _post(raw=f'{{"submission_id": "{sid}", "submission_id": "{sid}", '
                                     f'"answers": {{"smoker": 1}}}}'.encode())),
        ("not UTF-8", _post(raw=b'{"submission_id": "\xff"}')),
        ("array body", _post(raw=b"[1, 2]")),
        ("unknown keys", _post(body={**submission(), "where": "here"})),
        ("bad report", _post(body=wrong_report)),
        ("missing required question", _post(body=missing)),
        ("unknown survey", _post("/api/surveys/nosuch/submissions", submission())),
        ("closed survey", _post("/api/surveys/shut/submissions", submission())),
        ("two-server survey", _post("/api/surveys/pulse/submissions", submission())),
        ("version the survey lacks", _post(body=submission(version=9))),
        ("wrong content type", _post(body=submission(), content_type="text/plain")),
        ("charset latin-1", _post(body=submission(),
                                  content_type="application/json; charset=latin-1")),
        ("charset utf-8", _post(body=submission(), content_type="application/json; charset=utf-8")),
        ("charset UTF-8", _post(body=submission(), content_type="application/json;charset=UTF-8")),
        ("charset utf8 (Flask's)", _post(body=submission(),
                                         content_type="application/json; charset=utf8")),
        ("no content type", _post(body=submission(), content_type=None)),
        ("empty body", _post(raw=b"", environ_overrides={"CONTENT_LENGTH": "0"})),
        ("no Content-Length", _post(raw=b"")),
        ("odd Content-Length", _post(body=submission(),
                                     environ_overrides={"CONTENT_LENGTH": "+120"})),
        ("truncated body", _post(raw=b'{"a": 1}', environ_overrides={"CONTENT_LENGTH": "90"})),
        ("chunked", _post(body=submission(), headers={"Transfer-Encoding": "chunked"})),
        ("body above MAX_CONTENT_LENGTH", _post(body={"pad": "x" * LIMIT})),
        ("stream longer than its Content-Length, as waitress passes it",
         _post(raw=b" " * (LIMIT + 10) + b"{}",
               environ_overrides={**WAITRESS, "CONTENT_LENGTH": "12"})),
        ("as waitress passes it", _post(body=submission(), environ_overrides=WAITRESS)),
        ("MAX_BATCH exceeded", _post(body={"submissions": [submission() for _ in range(4)]})),
        ("allowed Origin", _post(body=submission(), headers={"Origin": ORIGIN})),
        ("allowed Origin, refused body", _post(raw=b"{", headers={"Origin": ORIGIN})),
        ("other Origin", _post(body=submission(), headers={"Origin": "https://evil.example"})),
        ("encoded slash in the id", _post("/api/surveys/health%2Fx/submissions", submission())),
        ("uppercase id", _post("/api/surveys/Health/submissions", submission())),
        ("trailing slash", _post(SUBMIT + "/", submission())),
        ("GET", {"path": SUBMIT, "method": "GET"}),
        ("OPTIONS preflight", {"path": SUBMIT, "method": "OPTIONS",
                               "headers": {"Origin": ORIGIN,
                                           "Access-Control-Request-Method": "POST"}}),
    ]


def answer(response: TestResponse) -> tuple[str, list[tuple[str, str]], bytes]:
    headers = [(k, v) for k, v in response.headers.to_wsgi_list() if k != "Date"]
    return response.status, headers, response.get_data()


def stored(db: Path) -> dict[str, list[tuple]]:
    """What a submission can change (hours left out: the two sides may straddle one)."""
    return {
        "submissions": sql(db, "SELECT survey_id, version, submission_id, reports "
                               "FROM submissions ORDER BY seq"),
        "aggregates": sql(db, "SELECT * FROM aggregates ORDER BY 1, 2, 3"),
        "surveys": sql(db, "SELECT id, version, sha256, status, n_submissions FROM surveys "
                           "ORDER BY 1, 2"),
        "invites": sql(db, "SELECT * FROM invites ORDER BY 1, 2"),
    }


@pytest.mark.parametrize("in_child", [False, True], ids=["in process", "ingest process"])
def test_the_lean_endpoint_answers_and_stores_exactly_as_flask(tmp_path, monkeypatch, in_child):
    with two_sides(tmp_path, in_child) as (lean, alone):
        compare_battery(lean, alone, monkeypatch)


def compare_battery(lean: Side, alone: Side, monkeypatch: pytest.MonkeyPatch) -> None:
    endpoint = lean.app.wsgi_app
    behind = endpoint.flask_wsgi  # the lean side's own Flask, counted
    handed = []

    def flask_wsgi(environ: dict[str, Any], start_response: Any) -> Any:
        handed.append(environ["PATH_INFO"])
        return behind(environ, start_response)

    monkeypatch.setattr(endpoint, "flask_wsgi", flask_wsgi)
    statuses = set()
    accepted = 0
    for name, request in battery():
        handed.clear()
        ours = answer(lean.client.open(**request))
        assert bool(handed) == (name in HANDED), name
        flask = answer(alone.client.open(**request))
        assert ours == flask, name
        statuses.add(ours[0])
        if request["method"] == "POST" and ours[0] == "200 OK":
            accepted += len(json.loads(ours[2])["accepted"])
    # the battery reaches every kind of answer (so that the comparison above means something)
    assert statuses >= {"200 OK", "400 BAD REQUEST", "404 NOT FOUND", "405 METHOD NOT ALLOWED",
                        "409 CONFLICT", "413 REQUEST ENTITY TOO LARGE",
                        "415 UNSUPPORTED MEDIA TYPE", "422 UNPROCESSABLE ENTITY"}
    after = stored(lean.db)
    assert len(after["submissions"]) == accepted > 5  # every accepted one, each once
    assert after == stored(alone.db)


def test_a_valid_submission_never_reaches_the_flask_view(sides, monkeypatch):
    lean, _ = sides
    calls = []

    def view(survey_id: str) -> dict[str, Any]:
        calls.append(survey_id)
        return {"answered_by": "flask"}

    monkeypatch.setitem(lean.app.view_functions, "public.post_submissions", view)
    body = submission()
    response = lean.client.post(SUBMIT, json=body)
    assert response.status_code == 200
    assert response.get_json() == {"accepted": [body["submission_id"]], "duplicates": []}
    assert calls == []
    # a request it does not take (a Content-Type outside its short list) reaches the view
    handed = lean.client.post(SUBMIT, data=json.dumps(submission()),
                              content_type="application/json; charset=utf8")
    assert handed.get_json() == {"answered_by": "flask"} and calls == ["health"]


def test_a_bug_inside_it_is_flasks_json_500_and_logs_no_request_metadata(sides, monkeypatch,
                                                                         caplog):
    caplog.set_level(logging.DEBUG)

    def boom(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(submissions, "submit", boom)  # in both the lean path and the view
    canaries = {"REMOTE_ADDR": "203.0.113.77", "HTTP_USER_AGENT": "CanaryAgent/9.9 (zz-ua)"}
    body = submission()
    request = _post(body=body, headers={"Origin": ORIGIN}, environ_base=canaries)
    answers = []
    for side in sides:
        caplog.clear()
        answers.append(answer(side.client.open(**request)))
        [record] = [r for r in caplog.records if r.name == "ldpsurvey.server"]
        assert record.getMessage() == "unexpected error in endpoint public.post_submissions"
        assert "simulated bug" in caplog.text  # the failure itself is logged
        for canary in (*canaries.values(), ORIGIN, body["submission_id"]):
            assert canary not in caplog.text
    assert answers[0] == answers[1]
    status, headers, data = answers[0]
    assert status == "500 INTERNAL SERVER ERROR"
    assert ("Access-Control-Allow-Origin", ORIGIN) in headers
    assert json.loads(data)["error"]["code"] == "internal_error"
