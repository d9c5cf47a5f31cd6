"""No password, database address or unbounded echo of the input reaches an error message
(issue 17): every form of credentials a target can carry, a PostgreSQL outage seen by a
client, and a 200,000-character survey id on the page and API routes."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from flask.testing import FlaskClient
from ldpsurvey.analyst.cli import cli
from ldpsurvey.server.app import create_app
from ldpsurvey.server.common.db_target import is_postgres, redact, scrub
from ldpsurvey.server.common.errors import STORE_UNAVAILABLE, StoreError
from ldpsurvey.shared.errors import clip
from support.clients import free_port
from support.server_data import manifest, submission

# Two pieces, each long enough to be recognizable: neither may appear anywhere.
PIECES = ("Sw0rdf", "ishPW9")


def targets(port: int) -> dict[str, str]:
    """Every way a target can carry the password Sw0rdf<delimiter>ishPW9."""
    host = f"127.0.0.1:{port}"
    a, b = PIECES
    return {
        "plain": f"postgresql://ldp:{a}{b}@{host}/db",
        "slash": f"postgresql://ldp:{a}/{b}@{host}/db",
        "hash": f"postgresql://ldp:{a}#{b}@{host}/db",
        "question": f"postgresql://ldp:{a}?{b}@{host}/db",
        "at": f"postgresql://ldp:{a}@{b}@{host}/db",
        "bad-percent": f"postgresql://ldp:%ZZ{a}{b}@{host}/db",
        "ipv6-unclosed": f"postgresql://ldp:{a}{b}@[::1:1/db",
        "postgres-scheme": f"postgres://ldp:{a}{b}@{host}/db",
        "query": f"postgresql://{host}/db?user=ldp&password={a}{b}",
        "query-ampersand": f"postgresql://{host}/db?password={a}&{b}&sslmode=disable",
        "dsn": f"host=127.0.0.1 port={port} user=ldp password={a}{b} dbname=db",
        "dsn-quoted": f"host=127.0.0.1 port={port} password='{a} {b}' dbname=db",
    }


FORMS = list(targets(1))


def assert_no_secret(text: str) -> None:
    for piece in PIECES:
        assert piece not in text, text


@pytest.mark.parametrize("form", FORMS)
def test_redact_hides_every_form_of_password(form: str) -> None:
    target = targets(5432)[form]
    shown = redact(target)
    assert_no_secret(shown)
    assert "***" in shown
    assert is_postgres(target)


# What drivers say about such targets: they quote the target, or the part they choke on.
DRIVER_MESSAGES = {
    "at": f"failed to resolve host '{PIECES[1]}@127.0.0.1'",
    "bad-percent": f'invalid percent-encoded token: "%ZZ{PIECES[0]}{PIECES[1]}"',
    "query-ampersand": f'invalid URI query parameter: "{PIECES[1]}"',
}


@pytest.mark.parametrize("form", FORMS)
def test_scrub_removes_the_password_from_a_driver_message(form: str) -> None:
    target = targets(5432)[form]
    for message in (f'end of string reached in URI: "{target}"',
                    DRIVER_MESSAGES.get(form, f"bad option {PIECES[0]}{PIECES[1]}")):
        assert_no_secret(scrub(message, target))


def test_redact_keeps_what_is_not_a_password() -> None:
    assert redact("postgresql://ann@db:5432/x?sslmode=require") == \
        "postgresql://ann@db:5432/x?sslmode=require"
    assert redact("host=db user=ann dbname=x") == "host=db user=ann dbname=x"
    assert redact("/var/lib/ldp/survey.db") == "/var/lib/ldp/survey.db"
    assert not is_postgres("/var/lib/ldp/hosted=1.db")


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("command", [["token", "list"], ["token", "create"],
                                     ["serve", "--port", "0"], ["recompute", "--check"]])
def test_cli_db_never_prints_the_password(form: str, command: list[str]) -> None:
    target = targets(free_port())[form]  # nothing listens there: every connection fails
    result = CliRunner().invoke(cli, [*command, "--db", target])
    assert result.exit_code == 1, result.output
    assert result.output.startswith("Error: ") and result.output.count("\n") == 1
    assert "cannot listen" not in result.output  # the database's error, not a busy port's
    assert_no_secret(result.output)


@pytest.mark.parametrize("form", FORMS)
def test_server_startup_never_shows_or_logs_the_password(
        form: str, caplog: pytest.LogCaptureFixture) -> None:
    target = targets(free_port())[form]
    caplog.set_level(logging.DEBUG)
    with pytest.raises(StoreError) as raised:
        create_app({"DATABASE": target, "TESTING": True})
    assert_no_secret(str(raised.value))
    assert_no_secret(caplog.text)


# --- a PostgreSQL outage -----------------------------------------------------------------------


def test_outage_503_tells_clients_nothing_about_the_database(
        pg_server: Any, caplog: pytest.LogCaptureFixture) -> None:
    """The database server stops under a running app: requests get a JSON 503 (retry later),
    never a 500 and never a 2xx; the body names nothing of the database, the log does."""
    from ldpsurvey.server.auth import create_token
    from ldpsurvey.server.http_request import STORE_EXTENSION
    from support.postgres import PgServer

    own = PgServer()
    try:
        app = create_app({"DATABASE": own.url, "TESTING": True})
        store = app.extensions[STORE_EXTENSION]
        auth = {"Authorization": f"Bearer {create_token(store)[1]}"}
        client = app.test_client()
        assert client.post("/api/surveys", json=manifest(), headers=auth).status_code == 201
        assert client.post("/api/surveys/health/submissions",
                           json=submission()).status_code == 200
    finally:
        own.stop()
    caplog.set_level(logging.WARNING)
    try:
        for method, path, body, headers in [
                ("POST", "/api/surveys/health/submissions", submission(), None),
                ("GET", "/api/surveys/health", None, None),
                ("GET", "/api/surveys/health/estimates", None, auth)]:
            reply = client.open(path, method=method, json=body, headers=headers)
            assert reply.status_code == 503, reply.get_data()[:300]
            error = reply.get_json()["error"]
            assert error["code"] == "store_unavailable"
            assert error["message"] == STORE_UNAVAILABLE
            text = reply.get_data(as_text=True)
            for leak in (str(own.port), "127.0.0.1", "postgres", "ldp@", "terminating"):
                assert leak not in text, text
    finally:
        store.close()
    # The operator still learns what happened, from the server's log.
    assert str(own.port) in caplog.text and "unavailable" in caplog.text


# --- bounded echoes -----------------------------------------------------------------------------

LONG = "a" * 200_000


def assert_bounded(reply: Any) -> None:
    assert 400 <= reply.status_code < 500, reply.status_code
    assert len(reply.get_data()) < 2_000, len(reply.get_data())
    error = reply.get_json()["error"]
    assert "characters]" in error["message"]


def test_clip_keeps_short_text_and_bounds_long_text() -> None:
    assert clip("short") == "short"
    clipped = clip("x" * 1000 + " is not a survey", 200)
    assert len(clipped) < 230 and clipped.endswith("is not a survey")
    assert "[817 characters]" in clipped  # 1016 characters, 133 head and 66 tail kept


@pytest.mark.parametrize("method, path", [
    ("GET", f"/s/{LONG}"),
    ("GET", f"/api/surveys/{LONG}"),
    ("POST", f"/api/surveys/{LONG}/submissions"),
    ("GET", f"/api/surveys/{LONG}/estimates"),
    ("GET", f"/api/surveys/{LONG}/submissions.jsonl"),
])
def test_a_huge_survey_id_is_not_echoed_whole(client: FlaskClient, auth: dict[str, str],
                                              method: str, path: str) -> None:
    body = submission() if method == "POST" else None
    assert_bounded(client.open(path, method=method, json=body, headers=auth))


def test_huge_fields_in_a_body_are_not_echoed_whole(client: FlaskClient,
                                                    published: dict[str, Any]) -> None:
    body = {**submission(), "submission_id": "x" * 100_000}
    body["answers"] = {**body["answers"], "q" * 5000: 1}
    reply = client.post("/api/surveys/health/submissions", json=body)
    assert 400 <= reply.status_code < 500
    assert len(reply.get_data()) < 4_000, reply.get_data()[:500]


def test_cli_error_echo_is_bounded(tmp_path: Path) -> None:
    db = tmp_path / "server.db"
    assert CliRunner().invoke(cli, ["token", "create", "--db", str(db)]).exit_code == 0
    result = CliRunner().invoke(cli, ["report", "--db", str(db), "--survey", LONG])
    assert result.exit_code != 0
    assert len(result.output) < 1_000, len(result.output)


def test_cli_usage_error_echo_is_bounded() -> None:
    result = CliRunner().invoke(cli, ["demo", "--n", LONG])
    assert result.exit_code == 2
    assert "characters]" in result.output and len(result.output) < 2_000
