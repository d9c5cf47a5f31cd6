"""The PostgreSQL backend on its own terms: URLs and credentials, shards, moving data between
backends, and several server processes (`serve --workers`). The API, hostile-input,
idempotency and recompute suites run on both backends through the `db_path` fixture."""

from __future__ import annotations

import os
import signal
import sys
import threading
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.server.aggregation import recompute
from ldpsurvey.server.common.db_target import redact
from ldpsurvey.server.common.errors import StoreError
from ldpsurvey.server.report_columns import submission_designs
from ldpsurvey.server.store import open_store
from ldpsurvey.server.store.postgres import N_SHARDS
from support.clients import free_port
from support.postgres import lock_wait_or_end
from support.server_data import manifest, snapshot, sql, submission, survey_dict

SUBMIT = "/api/surveys/health/submissions"
LDPSURVEY = str(Path(sys.executable).with_name("ldpsurvey"))


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_redact_hides_passwords_only():
    assert redact("postgresql://ann:s3cret@db.example/surveys") == \
        "postgresql://ann:***@db.example/surveys"
    assert redact("postgresql://db/x?user=ann&password=s3cret&sslmode=require") == \
        "postgresql://db/x?user=ann&password=***"  # to the end: a raw '&' may be in it
    assert redact("postgresql://ann@db/x") == "postgresql://ann@db/x"
    assert redact("/var/lib/ldp/survey.db") == "/var/lib/ldp/survey.db"


def test_unreachable_server_is_one_line_without_the_password():
    port = free_port()
    url = f"postgresql://ann:hunter2secret@127.0.0.1:{port}/nope?connect_timeout=2"
    result = run("token", "list", "--db", url)
    assert result.exit_code == 1
    assert "cannot connect" in result.output and "hunter2secret" not in result.output
    assert len(result.output.strip().splitlines()) == 1


@pytest.fixture()
def pg_url(pg_server):
    url = pg_server.create_database()
    yield url
    pg_server.drop_database(url)


def test_password_from_the_environment(pg_server, pg_url, monkeypatch):
    """libpq takes what the URL leaves out from PG* variables (here the user)."""
    monkeypatch.setenv("PGUSER", "ldp")
    bare = pg_url.replace("ldp@", "")
    assert run("token", "create", "--db", bare).exit_code == 0
    assert "active" in run("token", "list", "--db", pg_url).output


def test_concurrent_writers_spread_over_shards_and_merge_exactly(pg_url):
    """16 threads post at once: rows land in several shards, readers merge them, and the
    merged aggregates equal a recompute; each id is stored once."""
    from ldpsurvey.server.app import create_app
    from ldpsurvey.server.auth import create_token
    from ldpsurvey.server.http_request import STORE_EXTENSION

    app = create_app({"DATABASE": pg_url, "POOL_SIZE": 16, "TESTING": True})
    store = app.extensions[STORE_EXTENSION]
    auth = {"Authorization": f"Bearer {create_token(store)[1]}"}
    client = app.test_client()
    assert client.post("/api/surveys", json=manifest(), headers=auth).status_code == 201
    shared = [str(uuid.uuid4()) for _ in range(10)]
    accepted: list[str] = []
    lock = threading.Lock()

    def worker(seed: int) -> None:
        own = app.test_client()
        for i in range(20):
            sid = shared[(seed + i) % 10] if i % 4 == 0 else None
            body = {"submissions": [submission(sid=sid), submission()]}
            reply = own.post(SUBMIT, json=body)
            assert reply.status_code == 200, reply.get_json()
            with lock:
                accepted.extend(reply.get_json()["accepted"])

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(accepted) == len(set(accepted))
    stored = [r[0] for r in sql(pg_url, "SELECT submission_id FROM submissions")]
    assert sorted(stored) == sorted(accepted)
    shards = {r[0] for r in sql(pg_url, "SELECT DISTINCT shard FROM aggregates")}
    assert len(shards) > 1 and shards <= set(range(N_SHARDS))
    est = client.get("/api/surveys/health/estimates", headers=auth).get_json()
    assert est["n_submissions"] == len(accepted)
    assert recompute(store, fix=False) == []
    store.close()


def _fill(target, n: int = 30, codes: int = 3) -> None:
    from ldpsurvey.server.app import create_app
    from ldpsurvey.server.auth import create_token
    from ldpsurvey.server.http_request import STORE_EXTENSION
    from ldpsurvey.server.invites import create

    app = create_app({"DATABASE": str(target), "TESTING": True})
    store = app.extensions[STORE_EXTENSION]
    auth = {"Authorization": f"Bearer {create_token(store, 'mover')[1]}"}
    client = app.test_client()
    assert client.post("/api/surveys", json=manifest(), headers=auth).status_code == 201
    for _ in range(n // 10):
        body = {"submissions": [submission() for _ in range(10)]}
        assert client.post(SUBMIT, json=body).status_code == 200
    if codes:
        code = create(store, "health", codes)[0]
        assert client.post(SUBMIT, json=submission(invite=code)).status_code == 200
        # a second survey whose codes carry their units' designs (invites create --design)
        from ldpsurvey.server.invites import create_designed
        from ldpsurvey.shared.design_frame import parse_frame

        assert client.post("/api/surveys", json=manifest(survey_dict("designed")),
                           headers=auth).status_code == 201
        frame = parse_frame("id,weight,stratum,psu,fpc\na,2.5,n,p1,10\nb,2.5,n,p2,10\n"
                            "c,1.25,s,p1,4\nd,1.25,s,p3,4\n")
        (_, designed), *_ = create_designed(store, "designed", frame, groups=2)
        assert client.post("/api/surveys/designed/submissions",
                           json=submission(invite=designed)).status_code == 200
        # a third whose codes carry covariates from a main survey's export (--from-export)
        from ldpsurvey.server.invites.carried import create_carried, parse_export

        assert client.post("/api/surveys", json=manifest(survey_dict("sidecar")),
                           headers=auth).status_code == 201
        export = parse_export("KEY,region\nk1,north\nk2,södra\n", "main.csv", "KEY",
                              ("region",))
        (_, carried), *_ = create_carried(store, "sidecar", export)
        assert client.post("/api/surveys/sidecar/submissions",
                           json=submission(invite=carried)).status_code == 200
    store.close()


def _listed(column: Any) -> list[Any]:
    """A design column as a list (numbered labels as their labels)."""
    return (column.texts() if hasattr(column, "texts") else column).tolist()


@pytest.mark.parametrize("direction", ["sqlite->postgresql", "postgresql->sqlite"])
def test_migrate_store_copies_everything_and_verifies(tmp_path, pg_url, direction):
    sqlite_path = str(tmp_path / "survey.db")
    source, target = (sqlite_path, pg_url) if direction.startswith("sqlite") \
        else (pg_url, sqlite_path)
    _fill(source)
    result = run("migrate-store", "--from", source, "--to", target)
    assert result.exit_code == 0, result.output
    assert "33 report(s), 1 token(s), 9 invitation code(s)" in result.output
    src, dst = open_store(source), open_store(target)
    try:
        assert dst.dump() == src.dump()
        for s in (src, dst):
            assert recompute(s, fix=False) == []
        designs = Counter(src.invite_designs("designed"))
        assert Counter(dst.invite_designs("designed")) == designs and designs
        # each submission's copy of its code's design comes along (schema 6 / 4)
        read = [submission_designs(s, "designed", 1) for s in (src, dst)]
        assert read[0] is not None and read[1] is not None and read[0]["group"] is not None
        for name, column in read[0].items():
            other = read[1][name]
            assert (other is None) if column is None else _listed(column) == _listed(other)
        carried = src.submission_carried("sidecar", 1)
        assert dst.submission_carried("sidecar", 1) == carried and carried
        assert dst.invite_carried_names("sidecar") == ("region",)
        assert dst.aggregates("health", 1).n_submissions == 31
    finally:
        src.close()
        dst.close()
    # The copy answers like the original: same estimates, and the copied token still works.
    from ldpsurvey.analyst.reports.sources import db_report

    assert db_report(target, "health").estimates == db_report(source, "health").estimates
    before = snapshot(target)
    again = run("migrate-store", "--from", source, "--to", target)
    assert again.exit_code == 1 and "not empty" in again.output
    assert snapshot(target) == before


def test_migrate_store_from_a_missing_file_is_one_line(tmp_path, pg_url):
    result = run("migrate-store", "--from", str(tmp_path / "none.db"), "--to", pg_url)
    assert result.exit_code == 1 and "does not exist" in result.output


def test_newer_postgres_schema_is_refused(pg_url):
    open_store(pg_url).close()
    sql(pg_url, "INSERT INTO schema_version VALUES (99, 'later')")
    with pytest.raises(StoreError, match="newer"):
        open_store(pg_url)


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found.extend(int(t) for t in text)
    return found


def test_serve_workers_share_a_port_and_replace_a_killed_worker(pg_url, tmp_path):
    """`serve --workers 2`: two processes answer on one port; kill -9 of one loses nothing
    acknowledged, the supervisor starts another, and the aggregates equal a recompute."""
    from support.load import HttpClient, ServerProcess

    _fill(pg_url, 0, codes=0)
    server = ServerProcess(pg_url, threads=4, workers=2, log_dir=tmp_path)
    server.start()
    try:
        assert server.proc is not None
        workers = _children(server.proc.pid)
        assert len(workers) == 2
        client = HttpClient(server.url)
        accepted: list[str] = []
        for _ in range(20):
            status, body, _ = client.post(SUBMIT, {"submissions": [submission()
                                                                   for _ in range(5)]})
            assert status == 200
            accepted += body["accepted"]
        client.close()
        os.kill(workers[0], signal.SIGKILL)
        for _ in range(600):  # bounded polling: the supervisor forks a replacement
            now = _children(server.proc.pid)
            if len(now) == 2 and workers[0] not in now:
                break
            threading.Event().wait(0.05)
        else:
            pytest.fail("the killed worker was not replaced")
        server.wait_healthy()
        for _ in range(10):  # both workers answer (the kernel picks one per connection)
            status, body, _ = HttpClient(server.url).post(SUBMIT, submission())
            assert status == 200
            accepted += body["accepted"]
    finally:
        server.stop()
    stored = sorted(r[0] for r in sql(pg_url, "SELECT submission_id FROM submissions"))
    assert stored == sorted(accepted)
    store = open_store(pg_url)
    assert recompute(store, fix=False) == []
    store.close()


def test_password_from_a_password_file_never_shown(pg_server, pg_url, tmp_path, monkeypatch):
    """A role that must authenticate (scram): without a password the command fails in one line;
    with PGPASSFILE it works; with the password in the URL it works and is never printed."""
    secret = "pw-" + uuid.uuid4().hex
    role = "ann_" + uuid.uuid4().hex[:8]
    schema = pg_url.rsplit("%3D", 1)[1]
    sql(pg_server.url, f"CREATE ROLE {role} LOGIN PASSWORD '{secret}'")
    sql(pg_server.url, f"GRANT ALL ON SCHEMA {schema} TO {role}")
    hba = pg_server.data / "pg_hba.conf"
    hba.write_text(f"host all {role} 127.0.0.1/32 scram-sha-256\n" + hba.read_text())
    sql(pg_server.url, "SELECT pg_reload_conf()")
    as_role = pg_url.replace("ldp@", f"{role}@")
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "none"))
    refused = run("token", "create", "--db", as_role)
    assert refused.exit_code == 1 and "cannot connect" in refused.output
    passfile = tmp_path / "pgpass"
    passfile.write_text(f"127.0.0.1:{pg_server.port}:*:{role}:{secret}\n")
    passfile.chmod(0o600)
    monkeypatch.setenv("PGPASSFILE", str(passfile))
    created = run("token", "create", "--db", as_role)
    assert created.exit_code == 0, created.output
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "none"))
    in_url = as_role.replace(f"{role}@", f"{role}:{secret}@")
    listed = run("token", "list", "--db", in_url)
    assert listed.exit_code == 0 and secret not in listed.output
    store = open_store(in_url)
    assert secret not in store.describe() and "***" in store.describe()
    store.close()


# A database that goes away under a running app: tests/server/test_secrets_in_errors.py
# (test_outage_503_tells_clients_nothing_about_the_database) checks the JSON 503, never a 500
# or a 2xx, and that its body names nothing of the database.


def test_conflicts_are_retried_whole_and_rolled_back_between_attempts(pg_url):
    """A serialization failure or deadlock reruns the whole transaction; the failed attempts
    leave nothing behind; a transaction that keeps failing is a 503 (try again), not a 500."""
    from psycopg import errors as pg_errors

    store = open_store(pg_url)
    attempts: list[int] = []

    def work(conn):
        attempts.append(1)
        conn.execute("INSERT INTO tokens (name, token_sha256, created) VALUES (%s, %s, 'now')",
                     (f"try-{len(attempts)}", uuid.uuid4().hex))
        if len(attempts) == 1:
            raise pg_errors.SerializationFailure("simulated")
        if len(attempts) == 2:
            raise pg_errors.DeadlockDetected("simulated")
        return len(attempts)

    assert store._write(work) == 3
    assert [t.name for t in store.list_tokens()] == ["try-3"]

    def always(conn):
        raise pg_errors.SerializationFailure("simulated")

    from ldpsurvey.server.common.errors import StoreUnavailable

    with pytest.raises(StoreUnavailable, match="try again"):
        store._write(always)
    store.close()


# --- a survey made invite-only while submissions are stored (issue 39) -----------------------
# READ COMMITTED: an ingest that read "not invite-only" could commit a code-less submission
# after `invites create` had committed and returned. add_invites now locks the survey's rows
# FOR UPDATE, as close_survey does, which waits for ingests in flight (FOR KEY SHARE) and holds
# new ones back; an ingest reads the flag after its lock, in a statement (a snapshot) of its own.


def _invite_race_app(pg_url):
    from ldpsurvey.server.app import create_app
    from ldpsurvey.server.auth import create_token
    from ldpsurvey.server.http_request import STORE_EXTENSION

    app = create_app({"DATABASE": pg_url, "TESTING": True})
    store = app.extensions[STORE_EXTENSION]
    auth = {"Authorization": f"Bearer {create_token(store)[1]}"}
    assert app.test_client().post("/api/surveys", json=manifest(),
                                  headers=auth).status_code == 201
    return app, store


def test_invites_create_returns_only_after_an_ingest_in_flight_committed(pg_url, monkeypatch):
    """An ingest has read that the survey takes anyone and is paused before it stores: `invites
    create` waits for it, so no code-less submission commits after it returned."""
    from ldpsurvey.server import invites
    from ldpsurvey.server.store import postgres

    app, store = _invite_race_app(pg_url)
    paused, go = threading.Event(), threading.Event()
    real = postgres.refusal

    def pausing(job, statuses):
        paused.set()
        assert go.wait(60)
        return real(job, statuses)

    monkeypatch.setattr(postgres, "refusal", pausing)
    order: list[str] = []
    replies: list[int] = []

    def ingest() -> None:
        replies.append(app.test_client().post(SUBMIT, json=submission()).status_code)
        order.append("submission stored")

    def make_invite_only() -> None:
        other = open_store(pg_url)
        try:
            invites.create(other, "health", 1)
        finally:
            other.close()
        order.append("invites create returned")

    storing = threading.Thread(target=ingest)
    storing.start()
    assert paused.wait(60)
    creating = threading.Thread(target=make_invite_only)
    creating.start()
    state = lock_wait_or_end(pg_url, creating)
    go.set()
    storing.join(60)
    creating.join(60)
    store.close()
    assert state == "waiting", "invites create returned while a code-less submission was " \
                               "still to be stored"
    assert replies == [200]  # its request came first: stored
    assert order == ["submission stored", "invites create returned"]


def test_an_ingest_behind_invites_create_sees_the_survey_invite_only(pg_url):
    """`invites create` is inside its transaction; an ingest that starts now either stored its
    submission before that committed, or (waiting for the lock) is refused for the missing
    code: never stored after it."""
    from ldpsurvey.server.invites import PREFIX
    from ldpsurvey.server.invites.claims import digest

    app, store = _invite_race_app(pg_url)
    inside, go = threading.Event(), threading.Event()

    def holding(stored) -> None:
        inside.set()
        assert go.wait(60)

    def make_invite_only() -> None:
        other = open_store(pg_url)
        try:
            assert other.add_invites("health", [digest(PREFIX + uuid.uuid4().hex)], None,
                                     holding)
        finally:
            other.close()

    creating = threading.Thread(target=make_invite_only)
    creating.start()
    assert inside.wait(60)
    replies: list[Any] = []
    storing = threading.Thread(
        target=lambda: replies.append(app.test_client().post(SUBMIT, json=submission())))
    storing.start()
    state = lock_wait_or_end(pg_url, storing)
    go.set()
    creating.join(60)
    storing.join(60)
    store.close()
    [reply] = replies
    if state == "done":  # stored before invites create committed (main's add_invites)
        assert reply.status_code == 200
    else:
        assert reply.status_code == 403, reply.get_json()
        assert reply.get_json()["error"]["details"]["items"][0]["reason"] == "missing"
    assert len(sql(pg_url, "SELECT 1 FROM submissions")) == (reply.status_code == 200)
