"""SQLite ingest in a child process (`ldpsurvey serve`): the same outcomes as in process, and
nothing acknowledged that is not committed when the child dies.

The API-level behaviour through the child (accepted and duplicate ids, refusals of a closed or
changed survey found in the child's transaction, invitation codes, crosstabs, every
mechanism's aggregates) is covered by the modules whose BACKENDS include "sqlite-process";
the load test kills the child mid-load (tests/server/test_load_crash.py)."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from ldpsurvey.server import submissions
from ldpsurvey.server.aggregation import recompute
from ldpsurvey.server.common.errors import (
    NotFound,
    StoreUnavailable,
    SubmissionRejected,
    ValidationFailed,
)
from ldpsurvey.server.store import ingest_process, ingest_wire, open_store
from ldpsurvey.server.submissions import CHILD_PLAN
from support.ingest_crash import CRASH_MARKER, CRASH_PLAN
from support.server_data import sql, submission

SUBMIT = "/api/surveys/health/submissions"
EXIT_WAIT_S = 60.0  # bounded polling for a process to end (not a timing assumption)


def child_of(store) -> int:
    return store.ingest_process._process.pid


def gone(pid: int) -> bool:
    """The process has exited (a zombie counts: it runs nothing and holds no lock)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def wait_gone(pid: int) -> bool:
    deadline = time.monotonic() + EXIT_WAIT_S
    while time.monotonic() < deadline:
        if gone(pid):
            return True
        time.sleep(0.05)
    return False


def crash_app(db_path):
    from ldpsurvey.server.app import create_app
    from ldpsurvey.server.http_request import STORE_EXTENSION

    app = create_app({"DATABASE": str(db_path), "TESTING": True})
    store = app.extensions[STORE_EXTENSION]
    store.close()
    store = open_store(db_path, ingest_process=CRASH_PLAN)
    app.extensions[STORE_EXTENSION] = store
    return app, store


def stop_a_working_child(store) -> tuple[dict[str, Any], int]:
    """Store one submission (the child is then up, and this thread has its channel), then
    stop the child (SIGSTOP): it holds its state but reads and answers nothing. Returns the
    stored submission and the child's pid."""
    first = submission()
    submissions.submit_body(store, "health", json.dumps(first).encode(), 10)
    child = child_of(store)
    os.kill(child, signal.SIGSTOP)
    return first, child


def test_a_child_dead_while_idle_is_replaced_without_an_error(db_path, published):
    from ldpsurvey.server.app import create_app
    from ldpsurvey.server.http_request import STORE_EXTENSION

    app = create_app({"DATABASE": str(db_path), "TESTING": True, "INGEST_PROCESS": True})
    store = app.extensions[STORE_EXTENSION]
    try:
        client = app.test_client()
        assert client.post(SUBMIT, json=submission()).status_code == 200
        first = child_of(store)
        os.kill(first, signal.SIGKILL)
        assert wait_gone(first)
        again = submission()
        response = client.post(SUBMIT, json=again)  # the group never reached the dead child
        assert response.status_code == 200, response.get_json()
        assert response.get_json()["accepted"] == [again["submission_id"]]
        assert child_of(store) != first
        assert sql(db_path, "SELECT n_submissions FROM surveys") == [(2,)]
    finally:
        store.close()


def test_a_request_the_dead_child_never_read_goes_to_a_new_child(db_path, published,
                                                                 monkeypatch):
    """The child is stopped, so the request sits unread on the thread's channel when the
    child is killed: the channel reports it unread (reset, not a clean end), so no child can
    have stored it, and a new child takes it."""
    store = open_store(db_path, ingest_process=CHILD_PLAN)
    try:
        _, child = stop_a_working_child(store)
        read_frame = ingest_wire.read_frame
        resets: list[str] = []

        def kill_before_reading(sock: Any) -> bytes | None:
            if not resets:
                os.kill(child, signal.SIGKILL)
                assert wait_gone(child)
            try:
                return read_frame(sock)
            except ConnectionResetError:
                resets.append("unread")
                raise

        monkeypatch.setattr(ingest_process, "read_frame", kill_before_reading)
        again = submission()
        result = submissions.submit_body(store, "health", json.dumps(again).encode(), 10)
        assert resets == ["unread"]
        assert result.accepted == [again["submission_id"]]
        assert child_of(store) != child
        assert sql(db_path, "SELECT n_submissions FROM surveys") == [(2,)]
    finally:
        store.close()


def test_a_hung_child_is_killed_and_the_request_fails_with_503(db_path, published,
                                                               monkeypatch):
    """A stopped child never answers: past its channel's timeout the request fails with
    StoreUnavailable, the child is killed, and the next request goes to a new child. (The
    child is stopped, not slow: the timeout fires whatever the machine's speed. A channel
    takes the timeout when a thread opens it, so the short one is given only to a thread
    that opens its channel after the child is stopped.)"""
    store = open_store(db_path, ingest_process=CHILD_PLAN)
    try:
        first, child = stop_a_working_child(store)
        failures: list[Exception] = []

        def send() -> None:
            try:
                submissions.submit_body(store, "health", json.dumps(submission()).encode(), 10)
            except Exception as exc:
                failures.append(exc)

        with monkeypatch.context() as patch:
            patch.setattr(ingest_process, "ANSWER_TIMEOUT_S", 0.5)
            thread = threading.Thread(target=send)
            thread.start()
            thread.join(EXIT_WAIT_S)  # bounds a hang: the request must fail, not wait forever
        assert not thread.is_alive()
        assert [type(f) for f in failures] == [StoreUnavailable]
        assert "did not answer within 0.5 s" in str(failures[0])
        assert wait_gone(child)
        again = submission()
        result = submissions.submit_body(store, "health", json.dumps(again).encode(), 10)
        assert result.accepted == [again["submission_id"]]
        assert child_of(store) != child
        stored = {sid for (sid,) in sql(db_path, "SELECT submission_id FROM submissions")}
        assert stored == {first["submission_id"], again["submission_id"]}
    finally:
        store.close()


def test_a_child_dying_mid_group_acknowledges_nothing_and_the_next_child_stores(
        db_path, published):
    app, store = crash_app(db_path)
    try:
        client = app.test_client()
        assert client.post(SUBMIT, json=submission()).status_code == 200
        first = child_of(store)
        Path(db_path).with_name(CRASH_MARKER).touch()
        lost = submission()
        response = client.post(SUBMIT, json=lost)
        assert response.status_code == 503
        assert response.get_json()["error"]["code"] == "store_unavailable"
        assert wait_gone(first)
        assert sql(db_path, "SELECT count(*) FROM submissions") == [(1,)]  # nothing committed
        response = client.post(SUBMIT, json=lost)  # the device sends it again
        assert response.status_code == 200
        assert response.get_json()["accepted"] == [lost["submission_id"]]
        assert sql(db_path, "SELECT n_submissions FROM surveys") == [(2,)]
        assert recompute(store, fix=False) == []
    finally:
        store.close()


def test_the_child_ends_with_its_server(tmp_path):
    """kill -9 of the server process: its ingest child reads EOF and exits."""
    db = tmp_path / "orphan.db"
    script = textwrap.dedent(f"""
        import sys, time
        from ldpsurvey.server.store import open_store
        from ldpsurvey.server.submissions import CHILD_PLAN
        store = open_store({str(db)!r}, ingest_process=CHILD_PLAN)
        print(store.ingest_process._process.pid, flush=True)
        time.sleep(600)
    """)
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        child = int(parent.stdout.readline())
        assert not gone(child)
        parent.kill()
        parent.wait(timeout=30)
        assert wait_gone(child)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


def test_closing_the_store_ends_the_child(db_path):
    store = open_store(db_path, ingest_process=CHILD_PLAN)
    child = child_of(store)
    store.close()
    assert wait_gone(child)


def test_a_closed_store_refuses_a_request_and_starts_no_child(db_path, published):
    store = open_store(db_path, ingest_process=CHILD_PLAN)
    child = child_of(store)
    store.close()
    with pytest.raises(StoreUnavailable, match="closed"):
        submissions.submit_body(store, "health", json.dumps(submission()).encode(), 10)
    assert wait_gone(child)
    assert multiprocessing.active_children() == []
    assert sql(db_path, "SELECT count(*) FROM submissions") == [(0,)]


def test_a_body_is_parsed_checked_and_stored_in_the_child(db_path, published, monkeypatch):
    """`submit_body` hands the bytes to the child: the server process's parser and checks never
    run (they fail here if called; the spawned child has its own), and refusals come back
    whole, nothing of a refused request stored."""
    def not_here(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a body was parsed or checked in the server process")

    monkeypatch.setattr(submissions, "object_of", not_here)
    monkeypatch.setattr(submissions, "prepare", not_here)
    store = open_store(db_path, ingest_process=CHILD_PLAN)
    try:
        good = submission()
        result = submissions.submit_body(store, "health", json.dumps(good).encode(), 10)
        assert result.accepted == [good["submission_id"]] and result.duplicates == []
        bad = submission()
        bad["answers"]["smoker"] = 7
        with pytest.raises(SubmissionRejected) as refused:
            submissions.submit_body(store, "health",
                                    json.dumps({"submissions": [submission(), bad]}).encode(), 10)
        assert refused.value.details["invalid"] == 1
        assert [item["index"] for item in refused.value.details["items"]] == [1]
        with pytest.raises(ValidationFailed, match="must be an object"):
            submissions.submit_body(store, "health", b"[1]", 10)
        with pytest.raises(ValidationFailed, match="at most 1 submissions"):
            submissions.submit_body(store, "health",
                                    json.dumps({"submissions": [good, good]}).encode(), 1)
        with pytest.raises(NotFound):
            submissions.submit_body(store, "nosuch", json.dumps(good).encode(), 10)
        assert sql(db_path, "SELECT submission_id FROM submissions") == [(good["submission_id"],)]
    finally:
        store.close()
