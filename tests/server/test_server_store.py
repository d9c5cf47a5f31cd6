"""Storage: schema and pragmas, aggregates equal a recompute after a mixed workload, estimates
from aggregates only, and no request metadata anywhere (database files or logs)."""

from __future__ import annotations

import json
import logging
import random
import uuid
from datetime import UTC, datetime

import numpy as np
import pytest
from ldpsurvey.server import submissions as submissions_module
from ldpsurvey.server.aggregation import recompute
from ldpsurvey.server.common.errors import StoreError
from ldpsurvey.server.store import current_hour, open_store
from ldpsurvey.server.store.schema import SQLITE_MIGRATIONS
from ldpsurvey.server.store.sqlite import SqliteStore
from support.server_data import MECHS, manifest, snapshot, sql, submission, survey_dict
from support.timeouts import TEST_TIMEOUT

BACKENDS = ("sqlite", "postgresql")

SUBMIT = "/api/surveys/health/submissions"


def test_pragmas_and_schema(tmp_path):
    store = SqliteStore(tmp_path / "s.db")
    conn = store._conn()
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    # NORMAL: COMMIT writes the WAL unsynced; the store fsyncs the WAL itself before it
    # acknowledges anything (tests below), off the write lock.
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] > 0
    assert store.schema_version() == len(SQLITE_MIGRATIONS)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"surveys", "submissions", "aggregates", "tokens", "invites"} <= tables
    store.close()


def test_newer_schema_is_refused(db_path, app):
    from ldpsurvey.server.store.schema import POSTGRES_MIGRATIONS

    newest = len(POSTGRES_MIGRATIONS if "://" in str(db_path) else SQLITE_MIGRATIONS)
    sql(db_path, "INSERT INTO schema_version VALUES (?, 'later')", (newest + 1,))
    with pytest.raises(StoreError, match="newer"):
        open_store(db_path)


def test_an_old_sqlite_schema_is_migrated_in_place(tmp_path):
    """A database made by schema 2 (aggregates by question_id) opens and keeps its rows."""
    import sqlite3

    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied TEXT)")
    for number, statements in enumerate(SQLITE_MIGRATIONS[:2], start=1):
        for statement in statements:
            conn.execute(statement)
        conn.execute("INSERT INTO schema_version VALUES (?, 'then')", (number,))
    conn.execute("INSERT INTO surveys (id, version, manifest, sha256, status, created_hour, "
                 "n_submissions) VALUES ('s', 1, '{}', 'x', 'open', 'h', 7)")
    conn.execute("INSERT INTO aggregates (survey_id, version, question_id, aggregate) "
                 "VALUES ('s', 1, 'q', '{\"kind\": \"counts\"}')")
    conn.commit()
    conn.close()
    store = SqliteStore(path)
    assert store.schema_version() == len(SQLITE_MIGRATIONS)
    stored = store.aggregates("s", 1)
    assert stored.texts == {"q": ['{"kind": "counts"}']} and stored.n_submissions == 7
    store.close()


def test_hours_round_down():
    assert current_hour(datetime(2026, 1, 2, 3, 59, 59, tzinfo=UTC)) == "2026-01-02T03:00:00Z"
    assert current_hour(datetime(2026, 1, 2, 4, 0, 0, tzinfo=UTC)) == "2026-01-02T04:00:00Z"


def stored_aggregates(db_path) -> dict:
    """(survey, version, key) -> the stored aggregate, its partial rows (shards) merged."""
    merged: dict = {}
    for s, v, key, text in sql(db_path, "SELECT survey_id, version, key, aggregate "
                                        "FROM aggregates"):
        part = MECHS[key].aggregate_from_dict(json.loads(text))
        if (s, v, key) in merged:
            merged[(s, v, key)].merge(part)
        else:
            merged[(s, v, key)] = part
    return merged


def test_aggregates_equal_recompute_after_mixed_workload(client, auth, db_path):
    """Batches with repeated ids, rejected batches, skipped optional questions and two
    versions; the incremental aggregates must equal both a recompute and the aggregates of
    exactly the reports the server acknowledged as accepted."""
    rng = random.Random(20261122)
    for version in (1, 2):
        client.post("/api/surveys", json=manifest(survey_dict(version=version)), headers=auth)
    accepted: dict[str, tuple[int, dict]] = {}
    seen_ids: list[str] = []
    n_rejected = 0
    for _round in range(40):
        items = []
        for _ in range(rng.randint(1, 12)):
            truth = {"smoker": rng.random() < 0.3, "color": rng.choice(["red", "green", "blue"])}
            if rng.random() < 0.6:
                truth["age"] = rng.randint(18, 30)
            sid = rng.choice(seen_ids) if seen_ids and rng.random() < 0.2 else None
            item = submission(truth, sid=sid)
            if rng.random() < 0.3:
                item["version"] = 1
            items.append(item)
        if rng.random() < 0.2:
            items.append({"submission_id": str(uuid.uuid4()), "answers": {"smoker": 7}})
        body = {"submissions": items} if len(items) > 1 or rng.random() < 0.5 else items[0]
        response = client.post(SUBMIT, json=body)
        if response.status_code == 422:
            n_rejected += 1
            continue
        assert response.status_code == 200
        result = response.get_json()
        for sid in result["accepted"]:
            item = next(i for i in items if i["submission_id"] == sid)
            accepted[sid] = (item.get("version", 2), item["answers"])
            seen_ids.append(sid)
        assert set(result["duplicates"]) <= set(accepted)
    assert n_rejected > 0 and len(accepted) > 100

    store = open_store(db_path)
    assert recompute(store, fix=False) == []
    stored = stored_aggregates(db_path)
    for version in (1, 2):
        for qid, mechanism in MECHS.items():
            reports = [a[qid] for v, a in accepted.values() if v == version and qid in a]
            expected = mechanism.aggregate_many(np.asarray(reports)) if reports else \
                mechanism.new_aggregate()
            got = stored.get(("health", version, qid), mechanism.new_aggregate())
            assert got == expected, (version, qid)
    assert sql(db_path, "SELECT count(*) FROM submissions") == [(len(accepted),)]

    # A tampered aggregate is found, fixed, and the next recompute is clean.
    sql(db_path, "UPDATE aggregates SET aggregate = ? WHERE key = 'smoker' AND version = 2",
        (json.dumps(MECHS["smoker"].new_aggregate().to_dict()),))
    found = recompute(store)
    assert [(m.version, m.question_id) for m in found] == [(2, "smoker")]
    assert recompute(store, fix=False) == []
    store.close()


def test_estimates_track_the_truth(client, auth, published):
    """End to end through the API with simulated reports (seeded numpy: simulation only).
    Binary RR at ε=1 keeps an answer with p = e/(1+e); the unbiased proportion has
    Var = p(1-p) / (n (2p-1)^2) ≈ 2.3e-4 at n = 4000, sd ≈ 0.015; 5 sd = 0.076."""
    rng = np.random.default_rng(5)
    n, truth = 4000, 0.3
    smokers = (rng.random(n) < truth).astype(np.int64)
    smoker_reports = MECHS["smoker"].perturb_many(smokers, rng)
    colors = MECHS["color"].perturb_many(rng.integers(0, 3, n), rng)
    items = [{"submission_id": str(uuid.uuid4()),
              "answers": {"smoker": s, "color": c}}
             for s, c in zip(smoker_reports.tolist(), colors.tolist(), strict=True)]
    for start in range(0, n, 100):
        assert client.post(SUBMIT, json={"submissions": items[start:start + 100]}
                           ).status_code == 200
    est = client.get("/api/surveys/health/estimates", headers=auth).get_json()
    smoker = est["questions"][0]
    yes = next(c for c in smoker["categories"] if c["value"] is True)
    assert est["n_submissions"] == n and smoker["n"] == n
    assert abs(yes["estimate"] - truth) < 5 * 0.0152
    assert yes["std_error"] == pytest.approx(0.0152, rel=0.15)


def test_estimates_read_only_aggregates(client, auth, db_path, published):
    client.post(SUBMIT, json={"submissions": [submission() for _ in range(5)]})
    before = client.get("/api/surveys/health/estimates", headers=auth).get_json()
    sql(db_path, "DELETE FROM submissions")
    assert client.get("/api/surveys/health/estimates", headers=auth).get_json() == before


CANARY_IP = "203.0.113.77"
CANARY_FORWARDED = "198.51.100.23"
CANARY_AGENT = "CanaryAgent/9.9 (zz-unique-ua)"


def test_no_ip_or_user_agent_in_database_or_logs(app, auth, db_path, caplog, monkeypatch):
    caplog.set_level(logging.DEBUG)
    client = app.test_client()
    client.environ_base.update({"REMOTE_ADDR": CANARY_IP, "HTTP_USER_AGENT": CANARY_AGENT})
    headers = {**auth, "X-Forwarded-For": CANARY_FORWARDED, "X-Real-IP": CANARY_FORWARDED}
    assert client.post("/api/surveys", json=manifest(), headers=headers).status_code == 201
    assert client.post(SUBMIT, json={"submissions": [submission(), submission()]},
                       headers=headers).status_code == 200
    assert client.post(SUBMIT, json={"submissions": [{"x": 1}]}, headers=headers
                       ).status_code == 422
    client.get("/api/surveys/health/estimates", headers=headers)
    client.get("/api/surveys/health/submissions.jsonl", headers=headers)

    # An unexpected failure is a JSON 500 whose log line carries no request metadata.
    def boom(*args, **kwargs):
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(submissions_module, "submit", boom)
    response = client.post(SUBMIT, json=submission(), headers=headers)
    assert response.status_code == 500
    assert response.get_json()["error"]["code"] == "internal_error"
    assert "simulated bug" in caplog.text  # the log did capture the failure

    dump = repr(snapshot(db_path))
    for canary in (CANARY_IP, CANARY_FORWARDED, CANARY_AGENT):
        assert canary not in dump
    for suffix in ("", "-wal", "-shm"):
        path = f"{db_path}{suffix}"
        try:
            data = open(path, "rb").read()  # noqa: SIM115
        except FileNotFoundError:
            continue
        for canary in (CANARY_IP, CANARY_FORWARDED, CANARY_AGENT):
            assert canary.encode() not in data, (path, canary)
    for canary in (CANARY_IP, CANARY_FORWARDED, CANARY_AGENT):
        assert canary not in caplog.text


@pytest.mark.backends("sqlite", "sqlite-process", "postgresql")
def test_concurrent_submissions_share_transactions_correctly(app, client, auth, db_path,
                                                             published):
    """8 threads submit at once (group commit merges their transactions; through the ingest
    process, each thread on its own channel); ids repeated across threads are stored once, and
    every thread learns the fate of its own ids."""
    import threading

    shared = [str(uuid.uuid4()) for _ in range(20)]
    replies: list[dict] = []
    lock = threading.Lock()

    def worker(seed: int) -> None:
        rng = random.Random(seed)
        own = app.test_client()
        for i in range(25):
            sid = rng.choice(shared) if i % 3 == 0 else None
            body = own.post(SUBMIT, json=submission(sid=sid)).get_json()
            with lock:
                replies.append(body)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    accepted = [sid for r in replies for sid in r["accepted"]]
    duplicates = [sid for r in replies for sid in r["duplicates"]]
    assert len(accepted) + len(duplicates) == 8 * 25
    assert len(set(accepted)) == len(accepted)
    assert set(duplicates) <= set(shared) and set(duplicates) <= set(accepted)
    est = client.get("/api/surveys/health/estimates", headers=auth).get_json()
    assert est["n_submissions"] == len(accepted)
    store = open_store(db_path)
    assert recompute(store, fix=False) == []
    store.close()


def test_group_committer_results_and_failures():
    """Each job gets its own outcome; a failing transaction fails exactly its group."""
    import threading

    from ldpsurvey.server.group_commit import GroupCommitter

    committer: GroupCommitter[int] = GroupCommitter()
    groups: list[list[int]] = []

    def commit(jobs):
        groups.append(list(jobs))
        if any(j < 0 for j in jobs):
            raise ValueError("bad group")
        return [j * 10 if j % 7 else KeyError(j) for j in jobs]

    results: dict[int, object] = {}

    def worker(job: int) -> None:
        try:
            results[job] = committer.run(job, commit)
        except (ValueError, KeyError) as exc:
            results[job] = type(exc)

    threads = [threading.Thread(target=worker, args=(j,)) for j in range(1, 41)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(j for g in groups for j in g) == list(range(1, 41))
    assert all(results[j] == (KeyError if j % 7 == 0 else j * 10) for j in range(1, 41))
    with pytest.raises(ValueError, match="bad group"):
        committer.run(-1, commit)
    assert committer.run(3, commit) == 30  # the committer recovers after a failed group


def test_the_wal_is_fsynced_after_commit_and_before_any_acknowledgement(
        tmp_path, monkeypatch):
    """Every write returns only after an fsync of the WAL file that follows its COMMIT; a WAL
    file seen for the first time also gets its directory synced (it was just created)."""
    import os

    events: list[tuple[str, str]] = []
    real_fsync = os.fsync

    def fsync(fd):
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    store = SqliteStore(tmp_path / "s.db")  # the migrations: a write that creates the WAL
    wal = str((tmp_path / "s.db-wal").resolve())
    assert events[:2] == [("fsync", wal), ("fsync", str(tmp_path.resolve()))]
    events.clear()
    conn = store._writer  # every write of the store runs on this one connection
    assert conn is not None
    conn.set_trace_callback(lambda sql: events.append(("sql", sql)))
    store.add_token("x", "0" * 64, "2026-01-01T00")
    assert events[-2:] == [("sql", "COMMIT"), ("fsync", wal)]  # no directory sync again
    store.close()


def test_the_kept_wal_descriptor_names_the_wal_while_the_store_is_open(tmp_path):
    """The store keeps the WAL open between syncs. Another process opening and closing the
    database (the last close of a database deletes its WAL) cannot swap the file under it."""
    import os
    import sqlite3

    store = SqliteStore(tmp_path / "s.db")
    store.add_token("a", "0" * 64, "2026-01-01T00")
    wal = tmp_path / "s.db-wal"
    other = sqlite3.connect(tmp_path / "s.db")
    other.execute("INSERT INTO tokens (name, token_sha256, created) VALUES ('b', ?, 'x')",
                  ("1" * 64,))
    other.commit()
    other.close()  # not the last connection: the store's writer keeps the WAL in place
    store.add_token("c", "2" * 64, "2026-01-01T00")
    assert store._wal_fd is not None
    assert os.fstat(store._wal_fd).st_ino == os.stat(wal).st_ino
    store.close()
    assert store._wal_fd is None


def test_a_failed_sync_acknowledges_nothing(tmp_path, monkeypatch):
    import os

    from ldpsurvey.server.common.errors import StoreError

    store = SqliteStore(tmp_path / "s.db")

    def fsync(fd):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(StoreError, match="cannot sync"):
        store.add_token("x", "0" * 64, "2026-01-01T00")
    store.close()


def test_the_next_group_commits_while_this_group_syncs():
    """Group commit hands the write over before syncing: a sync that has not finished holds
    back only its own group's answers, never the next group's transaction."""
    import threading

    from ldpsurvey.server.group_commit import GroupCommitter

    committer: GroupCommitter[str] = GroupCommitter()
    first_syncing, release_first = threading.Event(), threading.Event()
    second_committed = threading.Event()
    answered: list[str] = []

    def commit(jobs):
        if jobs == ["second"]:
            second_committed.set()
        return list(jobs)

    def sync_first():
        first_syncing.set()
        assert release_first.wait(TEST_TIMEOUT)

    def run(job, sync):
        answered.append(committer.run(job, commit, sync))

    first = threading.Thread(target=run, args=("first", sync_first))
    first.start()
    assert first_syncing.wait(TEST_TIMEOUT)
    second = threading.Thread(target=run, args=("second", lambda: None))
    second.start()
    assert second_committed.wait(TEST_TIMEOUT)  # committed while the first group syncs
    second.join(TEST_TIMEOUT)
    assert answered == ["second"]  # the first group is not answered before its sync ends
    release_first.set()
    first.join(TEST_TIMEOUT)
    assert answered == ["second", "first"]


def test_a_group_whose_sync_fails_gets_the_error_not_its_results():
    from ldpsurvey.server.group_commit import GroupCommitter

    committer: GroupCommitter[int] = GroupCommitter()

    def sync():
        raise OSError("disk gone")

    with pytest.raises(OSError, match="disk gone"):
        committer.run(1, lambda jobs: [j * 2 for j in jobs], sync)
    assert committer.run(2, lambda jobs: [j * 2 for j in jobs], lambda: None) == 4


def test_opening_the_sqlite_store_does_not_import_pandas():
    """Opening the store imports neither sqlite_utils (which imports pandas when installed;
    `is_empty` imports it where it is used) nor pandas: every command that opens a database,
    `report --rake` at 10^6 included, spent about a second of wall time (0.4-0.5 s of CPU)
    importing pandas for nothing."""
    import subprocess
    import sys

    code = ("import sys, ldpsurvey.server.store.sqlite, ldpsurvey.analyst.design.report; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pandas', "
            "'sqlite_utils')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=TEST_TIMEOUT)
    assert out.stdout.strip() == "[]"


def test_schema_version_and_emptiness_are_read_with_sql(tmp_path):
    """`schema_version` (read from sqlite_master with plain SQL) is the last migration
    applied; `is_empty` is True until a survey, token or invitation code is stored."""
    from ldpsurvey.server.auth import create_token

    store = SqliteStore(tmp_path / "s.db")
    assert store.schema_version() == len(SQLITE_MIGRATIONS)
    assert store.is_empty()
    create_token(store, "t")
    assert not store.is_empty()
    store.close()
