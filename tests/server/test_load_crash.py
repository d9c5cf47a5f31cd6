"""A real `ldpsurvey serve` under load, and killed with SIGKILL in the middle of it.

Load: 50 concurrent clients POST 100,000 submissions (single and batched, some requests sent
twice) to a waitress server with 8 threads. Afterwards the stored rows are exactly the
acknowledged ids, the aggregates equal a recompute from the stored reports, and no request got
a 5xx (or any non-2xx: every body is valid).

Crash: the same kind of load, half of it through the real client outbox (one device state
directory per client), is cut by kill -9 once enough has been acknowledged. After a restart on
the same database: integrity_check is ok, every acknowledged id is stored exactly once, the
aggregates equal a recompute, and flushing the outboxes (plus resending the batches whose answer
never came) delivers everything else with no duplicate rows.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import threading
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from ldpsurvey.client.outbox import PENDING, SENT, Outbox
from ldpsurvey.client.state import StateDir
from ldpsurvey.client.transport import RetryPolicy, Transport
from ldpsurvey.server.aggregation import recompute
from ldpsurvey.server.store import open_store
from support.load import (
    SURVEY_ID,
    ClientLog,
    Request,
    ServerProcess,
    answer_pool,
    plan_requests,
    run_clients,
)

pytestmark = pytest.mark.load


def stored_ids(db_path: Path) -> Counter[str]:
    conn = sqlite3.connect(str(db_path))
    try:
        rows = conn.execute("SELECT submission_id FROM submissions WHERE survey_id = ?",
                            (SURVEY_ID,)).fetchall()
        return Counter(r[0] for r in rows)
    finally:
        conn.close()


def n_submissions_counter(db_path: Path) -> int:
    conn = sqlite3.connect(str(db_path))
    try:
        return conn.execute("SELECT n_submissions FROM surveys WHERE id = ?",
                            (SURVEY_ID,)).fetchone()[0]
    finally:
        conn.close()


def integrity(db_path: Path) -> str:
    conn = sqlite3.connect(str(db_path))
    try:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        conn.close()


def recompute_mismatches(db_path: Path) -> list[Any]:
    db = open_store(db_path)
    try:
        return recompute(db, SURVEY_ID, fix=False)
    finally:
        db.close()


def test_fifty_clients_one_hundred_thousand_submissions(tmp_path: Path) -> None:
    db_path = tmp_path / "load.db"
    server = ServerProcess(db_path, threads=8)
    server.start()
    try:
        server.publish(server.token())
        # 100 single submissions per client (5,000 requests), the rest in batches of 50..1000;
        # now and then an earlier request is resent, so duplicates are part of the workload.
        plans = plan_requests(50, 100_000, singles=100, batch_sizes=(50, 200, 1000, 100),
                              seed=7, resend_every=3)
        planned = {sid for plan in plans for r in plan for sid in r.ids}
        assert len(planned) == 100_000
        assert sum(r.single for plan in plans for r in plan) >= 5_000
        logs, _ = run_clients(server.url, plans)
    finally:
        server.stop()

    statuses = sum((log.statuses for log in logs), Counter())
    errors = [e for log in logs for e in log.errors]
    assert errors == [], errors[:5]
    assert all(200 <= s < 300 for s in statuses), statuses
    accepted = [sid for log in logs for sid in log.accepted]
    assert len(accepted) == len(set(accepted)) == 100_000  # each acknowledged as new once
    duplicates = [sid for log in logs for sid in log.duplicates]
    assert duplicates and set(duplicates) <= set(accepted)
    stored = stored_ids(db_path)
    assert set(stored) == set(accepted) == planned
    assert max(stored.values()) == 1
    assert n_submissions_counter(db_path) == 100_000
    assert integrity(db_path) == "ok"
    assert recompute_mismatches(db_path) == []


def test_the_ingest_process_killed_mid_load_loses_nothing_acknowledged(tmp_path: Path) -> None:
    """kill -9 of the server's SQLite ingest child (not the server) mid-load: the groups it
    held are answered 503 (devices send again), a new child takes over, the server stays up,
    and every submission ends up stored exactly once with aggregates equal to a recompute."""
    db_path = tmp_path / "child.db"
    server = ServerProcess(db_path, threads=8)
    server.start()
    try:
        server.publish(server.token())
        plans = plan_requests(20, 20_000, singles=100, batch_sizes=(20, 100, 300), seed=13)
        planned = {sid for plan in plans for r in plan for sid in r.ids}
        first = server.ingest_child()
        acked = [0]
        lock = threading.Lock()
        killed = threading.Event()

        def on_ack(n: int) -> None:
            with lock:
                acked[0] += n
                if acked[0] >= 5_000 and not killed.is_set():
                    killed.set()
                    os.kill(first, signal.SIGKILL)

        logs, _ = run_clients(server.url, plans, retries=5, retry_statuses=frozenset({503}),
                              on_ack=on_ack)
        assert killed.is_set(), "the load finished before the kill"
        assert server.proc is not None and server.proc.poll() is None  # the server stayed up
        second = server.ingest_child()
        assert second != first
    finally:
        server.stop()
    statuses = sum((log.statuses for log in logs), Counter())
    assert set(statuses) <= {200, 503}, statuses
    assert [e for log in logs for e in log.errors if not e.startswith("HTTP 503")] == []
    acknowledged = [sid for log in logs for sid in log.accepted + log.duplicates]
    assert set(acknowledged) == planned  # every request got its 2xx in the end
    stored = stored_ids(db_path)
    assert set(stored) == planned and max(stored.values()) == 1
    assert n_submissions_counter(db_path) == len(planned)
    assert integrity(db_path) == "ok"
    assert recompute_mismatches(db_path) == []


def _device_submissions(n: int, seed: int) -> list[dict[str, Any]]:
    return [{"submission_id": str(uuid.uuid4()), "answers": a} for a in answer_pool(n, seed)]


def test_kill_dash_nine_mid_load_loses_nothing_acknowledged(tmp_path: Path) -> None:
    db_path = tmp_path / "crash.db"
    server = ServerProcess(db_path, threads=8)
    server.start()
    server.publish(server.token())

    # 25 raw HTTP clients (batches and singles) and 25 devices using the real client outbox.
    plans = plan_requests(25, 30_000, singles=100, batch_sizes=(20, 100, 300), seed=11)
    n_devices, per_device = 25, 40
    device_subs = [_device_submissions(per_device, 100 + d) for d in range(n_devices)]
    acked = [0]
    lock = threading.Lock()
    enough = threading.Event()
    kill_after = 8_000  # acknowledged submissions before the kill: well inside the load

    def on_ack(n: int) -> None:
        with lock:
            acked[0] += n
            if acked[0] >= kill_after:
                enough.set()

    device_results: list[list[str]] = [[] for _ in range(n_devices)]
    no_retry = RetryPolicy(attempts=1, timeout=60.0)

    def device(d: int) -> None:
        outbox = Outbox(StateDir(str(tmp_path / f"device-{d}")))
        transport = Transport(server.url, no_retry, sleep=lambda s: None)
        for wire in device_subs[d]:
            record = outbox.put(server.url, SURVEY_ID, wire)
            delivery = outbox.deliver(record, transport)
            device_results[d].append(delivery.status)
            if delivery.status == SENT:
                on_ack(1)

    logs: list[ClientLog] = []
    runner = threading.Thread(
        target=lambda: logs.extend(run_clients(server.url, plans, stop_on_error=True,
                                               on_ack=on_ack)[0]), daemon=True)
    devices = [threading.Thread(target=device, args=(d,), daemon=True) for d in range(n_devices)]
    runner.start()
    for t in devices:
        t.start()
    # Bounded: if the load finished before reaching the threshold the test would be invalid.
    assert enough.wait(timeout=600), "the load never reached the kill threshold"
    server.kill9()
    runner.join(timeout=600)
    for t in devices:
        t.join(timeout=600)
    assert not runner.is_alive() and not any(t.is_alive() for t in devices)

    # The kill really landed mid-load: some requests never got an answer.
    unknown: list[Request] = [r for log in logs for r in log.unknown]
    pending_devices = sum(s == PENDING for res in device_results for s in res)
    assert unknown or pending_devices, "the server was killed after all work was done"
    assert all(200 <= s < 300 for log in logs for s in log.statuses)
    assert all(s in (SENT, PENDING) for res in device_results for s in res)

    # Acknowledged before the crash: present exactly once after it.
    assert integrity(db_path) == "ok"
    acknowledged = {sid for log in logs for sid in log.accepted}
    for d in range(n_devices):
        outbox = Outbox(StateDir(str(tmp_path / f"device-{d}")))
        acknowledged |= {r["submission_id"] for r in outbox.all_receipts()}
    after_crash = stored_ids(db_path)
    assert acknowledged <= set(after_crash)
    assert max(after_crash.values()) == 1

    server.start()  # same database, same port
    try:
        assert recompute_mismatches(db_path) == []
        # Each raw client resends, as it was, every request from the one whose answer never
        # came (maybe stored, maybe not) onwards; the devices flush their outboxes.
        unsent = [r for plan, log in zip(plans, logs, strict=True)
                  for r in plan[_sent_count(log):]]
        tail_logs, _ = run_clients(server.url, [unsent])
        assert all(not log.errors for log in tail_logs)
        flushed = []
        for d in range(n_devices):
            outbox = Outbox(StateDir(str(tmp_path / f"device-{d}")))
            flushed += outbox.flush(lambda url: Transport(url, no_retry, sleep=lambda s: None))
            assert outbox.pending(include_failed=True) == []
            assert {r["submission_id"] for r in outbox.all_receipts()} == {
                s["submission_id"] for s in device_subs[d]}
        assert all(f.status == SENT for f in flushed)
    finally:
        server.stop()

    planned = {sid for plan in plans for r in plan for sid in r.ids}
    planned |= {s["submission_id"] for subs in device_subs for s in subs}
    final = stored_ids(db_path)
    assert set(final) == planned
    assert max(final.values()) == 1  # nothing twice, whatever was resent
    assert n_submissions_counter(db_path) == len(planned)
    assert integrity(db_path) == "ok"
    assert recompute_mismatches(db_path) == []


def _sent_count(log: ClientLog) -> int:
    """Requests of a raw client that got an HTTP answer (it stops at its first unknown)."""
    return sum(log.statuses.values())
