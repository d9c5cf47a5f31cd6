"""The server's CLI commands, and the real `ldpsurvey serve` driven over HTTP."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from support.clients import free_port
from support.server_data import sql, submission, survey_dict
from support.timeouts import TEST_TIMEOUT

BACKENDS = ("sqlite", "postgresql")

LDPSURVEY = str(Path(sys.executable).with_name("ldpsurvey"))
CANARY_AGENT = "CanaryAgent/7.7 (serve-test)"


def run(*args: str) -> object:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_token_create_list_revoke(tmp_path):
    db = str(tmp_path / "t.db")
    created = run("token", "create", "--db", db, "--name", "alice")
    assert created.exit_code == 0
    token = created.stdout.strip()
    assert token.startswith("ldp_")
    listed = run("token", "list", "--db", db)
    assert "alice" in listed.stdout and "active" in listed.stdout
    assert token not in listed.stdout
    raw = Path(db).read_bytes() + (Path(db + "-wal").read_bytes()
                                   if Path(db + "-wal").exists() else b"")
    assert token.encode() not in raw  # only the hash is stored
    revoked = run("token", "revoke", "--db", db, "1")
    assert revoked.exit_code == 0 and "revoked" in revoked.stdout
    assert "revoked" in run("token", "list", "--db", db).stdout
    missing = run("token", "revoke", "--db", db, "99")
    assert missing.exit_code == 1 and "no token with id 99" in missing.output


def test_keys_generate(tmp_path):
    result = run("keys", "generate", "--out", str(tmp_path / "k"))
    assert result.exit_code == 0 and "fingerprint" in result.stdout
    key = tmp_path / "k" / "survey-signing.key"
    assert stat.S_IMODE(os.stat(key).st_mode) == 0o600
    assert (tmp_path / "k" / "survey-signing.pub").exists()
    again = run("keys", "generate", "--out", str(tmp_path / "k"))
    assert again.exit_code == 1 and "refusing to overwrite" in again.output


def test_recompute_cli(tmp_path, client, auth, db_path, published):
    client.post("/api/surveys/health/submissions", json={"submissions": [submission()] * 1})
    ok = run("recompute", "--db", str(db_path))
    assert ok.exit_code == 0 and "health v1: ok" in ok.stdout
    sql(db_path, "UPDATE aggregates SET aggregate = ? WHERE key = 'color'",
        (json.dumps({"kind": "counts", "n": 0, "counts": [0, 0, 0]}),))
    check = run("recompute", "--db", str(db_path), "--check")
    assert check.exit_code == 1 and "color" in check.stdout
    fixed = run("recompute", "--db", str(db_path), "--survey", "health")
    assert fixed.exit_code == 0 and "fixed" in fixed.stdout
    assert run("recompute", "--db", str(db_path), "--check").exit_code == 0
    missing = run("recompute", "--db", str(tmp_path / "none.db"))
    assert missing.exit_code == 1 and "does not exist" in missing.output


def wait_healthy(url: str, proc: subprocess.Popen, timeout: float = TEST_TIMEOUT) -> None:
    """Poll /healthz until TEST_TIMEOUT (the server needs a moment to bind; a loaded machine
    needs longer)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"server exited: {proc.communicate()}")
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.05)
    raise AssertionError("server never became healthy")


def http(method: str, url: str, body: object = None, token: str | None = None
         ) -> tuple[int, object]:
    headers = {"User-Agent": CANARY_AGENT}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=TEST_TIMEOUT) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.fixture()
def server(db_path):
    db = db_path
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([LDPSURVEY, "serve", "--db", str(db), "--port", str(port),
                             "--threads", "4"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_healthy(url, proc)
        yield url, db, proc
    finally:
        if proc.poll() is None:
            proc.terminate()
        proc.wait(timeout=TEST_TIMEOUT)


def test_real_server_publish_submit_estimate(server, tmp_path):
    url, db, proc = server
    token = run("token", "create", "--db", str(db)).stdout.strip()
    assert run("keys", "generate", "--out", str(tmp_path / "keys")).exit_code == 0
    survey_file = tmp_path / "health.json"
    survey_file.write_text(json.dumps(survey_dict()))
    key = str(tmp_path / "keys" / "survey-signing.key")
    published = run("publish", str(survey_file), "--server", url, "--token", token,
                    "--key", key)
    assert published.exit_code == 0 and "sha256" in published.stdout, published.output
    assert "already published" in run("publish", str(survey_file), "--server", url,
                                      "--token", token, "--key", key).stdout
    refused = run("publish", str(survey_file), "--server", url, "--token", "ldp_" + "x" * 43,
                  "--key", key)
    assert refused.exit_code == 1 and "403" in refused.output
    down = run("publish", str(survey_file), "--server", "http://127.0.0.1:1", "--token", token,
               "--key", key)
    assert down.exit_code == 1 and "cannot reach" in down.output

    status, doc = http("GET", url + "/api/surveys/health")
    assert status == 200 and doc["status"] == "open"
    subs = [submission() for _ in range(20)]
    status, body = http("POST", url + "/api/surveys/health/submissions", {"submissions": subs})
    assert status == 200 and len(body["accepted"]) == 20
    status, body = http("POST", url + "/api/surveys/health/submissions", subs[0])
    assert (status, body["duplicates"]) == (200, [subs[0]["submission_id"]])
    status, body = http("POST", url + "/api/surveys/health/submissions", {"submissions": []})
    assert status == 422 and body["error"]["code"] == "validation_failed"
    status, est = http("GET", url + "/api/surveys/health/estimates", token=token)
    assert status == 200 and est["n_submissions"] == 20

    proc.terminate()
    out, err = proc.communicate(timeout=TEST_TIMEOUT)
    assert f"serving on {url}/" in out
    assert CANARY_AGENT not in out + err
    assert "GET /" not in out + err and "POST /" not in out + err  # no access log
    for suffix in ("", "-wal"):
        path = Path(f"{db}{suffix}")
        if path.exists():
            assert CANARY_AGENT.encode() not in path.read_bytes()


def test_unusable_database_is_a_one_line_error(tmp_path):
    not_sqlite = tmp_path / "notes.db"
    not_sqlite.write_text("not a database")
    for db in (str(not_sqlite), str(tmp_path / "missing-dir" / "x.db")):
        result = run("token", "create", "--db", db)
        assert result.exit_code == 1
        assert "cannot open database" in result.output and "Traceback" not in result.output


def test_serve_on_a_busy_port_is_a_one_line_error(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run([LDPSURVEY, "serve", "--db", str(tmp_path / "x.db"),
                                 "--port", str(port)], capture_output=True, text=True,
                                timeout=TEST_TIMEOUT)
    assert result.returncode == 1
    assert "cannot listen on" in result.stderr and "Traceback" not in result.stderr
    assert list(tmp_path.iterdir()) == []  # the database file was not created
