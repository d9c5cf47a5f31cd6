"""Two `ldpsurvey serve` processes on one PostgreSQL database under concurrent load, and
kill -9 of one of them in the middle of it.

30 clients POST 20,000 submissions (singles and batches), half to each process; some batches
are sent to both processes at once (the same ids racing in two processes), some twice to one.
Once enough is acknowledged, process A is killed with SIGKILL while B keeps serving. Then:
every acknowledged id is stored exactly once, and the sharded aggregates equal a recompute.
After A restarts and every client resends what never got an answer, the stored ids are exactly
the planned ones, the counters count them once, and the aggregates still equal a recompute.
"""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path

import pytest
from ldpsurvey.server.aggregation import recompute
from ldpsurvey.server.store import open_store
from support.load import SURVEY_ID, ClientLog, ServerProcess, plan_requests, run_clients
from support.server_data import sql

pytestmark = pytest.mark.load


def stored_ids(url: str) -> Counter[str]:
    return Counter(r[0] for r in sql(url, "SELECT submission_id FROM submissions "
                                          "WHERE survey_id = ?", (SURVEY_ID,)))


def mismatches(url: str) -> list:
    store = open_store(url)
    try:
        return recompute(store, SURVEY_ID, fix=False)
    finally:
        store.close()


def n_counted(url: str) -> int:
    store = open_store(url)
    try:
        return store.aggregates(SURVEY_ID, 1).n_submissions
    finally:
        store.close()


def _answered(log: ClientLog) -> int:
    return sum(log.statuses.values())


def test_two_processes_one_killed_mid_load(pg_server, tmp_path: Path) -> None:
    url = pg_server.create_database()
    a = ServerProcess(url, threads=6, log_dir=tmp_path)
    b = ServerProcess(url, threads=6, log_dir=tmp_path)
    a.start()
    b.start()
    try:
        a.publish(a.token())
        plans = plan_requests(30, 20_000, singles=60, batch_sizes=(20, 100, 250), seed=23,
                              resend_every=7)
        plans_a, plans_b = plans[:15], plans[15:]
        for i in range(0, 15, 3):  # the same batches race in both processes
            plans_b[i] = plans_b[i] + [r for r in plans_a[i] if not r.single][:3]
        acked = [0]
        lock = threading.Lock()
        enough = threading.Event()

        def on_ack(n: int) -> None:
            with lock:
                acked[0] += n
                if acked[0] >= 6_000:
                    enough.set()

        logs_a: list[ClientLog] = []
        logs_b: list[ClientLog] = []
        runner_a = threading.Thread(target=lambda: logs_a.extend(run_clients(
            a.url, plans_a, stop_on_error=True, on_ack=on_ack)[0]), daemon=True)
        runner_b = threading.Thread(target=lambda: logs_b.extend(run_clients(
            b.url, plans_b, on_ack=on_ack)[0]), daemon=True)
        runner_a.start()
        runner_b.start()
        assert enough.wait(timeout=600), "the load never reached the kill threshold"
        a.kill9()
        runner_a.join(timeout=900)
        runner_b.join(timeout=900)
        assert not runner_a.is_alive() and not runner_b.is_alive()

        assert any(log.unknown for log in logs_a), "A was killed after all its work was done"
        assert all(200 <= s < 300 for log in logs_a + logs_b for s in log.statuses)
        assert not any(log.errors for log in logs_b)  # B never noticed
        acknowledged = {sid for log in logs_a + logs_b for sid in log.accepted}
        after = stored_ids(url)
        assert acknowledged <= set(after) and max(after.values()) == 1
        assert mismatches(url) == []

        a.start()
        unsent = [r for plan, log in zip(plans_a, logs_a, strict=True)
                  for r in plan[_answered(log):]]
        tail, _ = run_clients(a.url, [unsent[i::4] for i in range(4)])
        assert not any(log.errors for log in tail)
    finally:
        a.stop()
        b.stop()

    planned = {sid for plan in plans for r in plan for sid in r.ids}
    final = stored_ids(url)
    assert set(final) == planned and max(final.values()) == 1
    assert n_counted(url) == len(planned)
    assert mismatches(url) == []
    pg_server.drop_database(url)
