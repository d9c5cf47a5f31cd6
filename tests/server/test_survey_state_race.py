"""Once `invites create` (or a close) is acknowledged, no ingest path takes a submission it
forbids (issue 39), under load on a real `ldpsurvey serve`: two worker processes, each with
its SQLite ingest process (or both on PostgreSQL), and client threads sending code-less
submissions without pause while the survey is made invite-only (or closed) in the middle.

Every request's start is read from the test's monotonic clock before it is sent, and the
moment the action returned after it: a request that started after that moment must be
refused (403 invite_refused, reason missing; 409 closed), whichever process and ingest group it
met. The clients stop once each has had enough such answers: conditions, never a delay.
"""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from ldpsurvey.server import invites
from ldpsurvey.server.store import open_store
from support.load import SURVEY_ID, HttpClient, ServerProcess, answer_pool

pytestmark = pytest.mark.load
BACKENDS = ("sqlite", "postgresql")
CLIENTS = 6
BEFORE = 150  # acknowledged submissions before the action: the ingest paths are busy
AFTER = 40  # answers per client to requests that started after the action returned


@dataclass
class Sent:
    start: float  # time.monotonic() before the request was sent
    status: int
    body: Any
    submission_id: str


@dataclass
class Run:
    acknowledged: int = 0
    returned: float | None = None  # time.monotonic() once the action returned
    lock: threading.Condition = field(default_factory=threading.Condition)
    sent: list[list[Sent]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def client(url: str, run: Run, log: list[Sent], pool: list[dict[str, Any]]) -> None:
    http = HttpClient(url)
    after = 0
    try:
        for answers in pool:
            sid = str(uuid.uuid4())
            start = time.monotonic()
            try:
                status, body, _ = http.post(f"/api/surveys/{SURVEY_ID}/submissions",
                                            {"submission_id": sid, "answers": answers})
            except OSError as exc:
                run.errors.append(f"{type(exc).__name__}: {exc}")
                return
            log.append(Sent(start, status, body, sid))
            with run.lock:
                if 200 <= status < 300:
                    run.acknowledged += 1
                    run.lock.notify_all()
                if run.returned is not None and start > run.returned:
                    after += 1
                    if after == AFTER:
                        return
        run.errors.append("the client ran out of answers before the action returned")
    finally:
        http.close()


def make_invite_only(db_path: Any, url: str, token: str) -> None:
    """What `ldpsurvey invites create --db` runs (server/invites_cli.py)."""
    store = open_store(db_path)
    try:
        invites.create(store, SURVEY_ID, 5)
    finally:
        store.close()


def close(db_path: Any, url: str, token: str) -> None:
    status, body, _ = HttpClient(url).post(f"/api/surveys/{SURVEY_ID}/close", {},
                                           {"Authorization": f"Bearer {token}"})
    assert status == 200, body


ACTIONS = {"invites create": (make_invite_only, 403, "invite_refused"),
           "close": (close, 409, "survey_closed")}


@pytest.mark.parametrize("action", list(ACTIONS))
def test_nothing_forbidden_is_taken_after_the_change_returned(db_path: Any, backend: str,
                                                              tmp_path: Path,
                                                              action: str) -> None:
    change, refused_status, refused_code = ACTIONS[action]
    server = ServerProcess(db_path, threads=4, workers=2, log_dir=tmp_path)
    server.start()
    try:
        token = server.token()
        server.publish(token)
        run = Run(sent=[[] for _ in range(CLIENTS)])
        pool = answer_pool(CLIENTS * (BEFORE + 4 * AFTER) * 4, seed=39)
        share = len(pool) // CLIENTS
        threads = [threading.Thread(target=client, args=(server.url, run, run.sent[i],
                                                         pool[i * share:(i + 1) * share]))
                   for i in range(CLIENTS)]
        for t in threads:
            t.start()
        with run.lock:
            assert run.lock.wait_for(lambda: run.acknowledged >= BEFORE or run.errors,
                                     timeout=300), "the clients stalled"
        change(db_path, server.url, token)
        with run.lock:
            run.returned = time.monotonic()
        for t in threads:
            t.join(timeout=600)
            assert not t.is_alive()
    finally:
        server.stop()

    assert run.errors == []
    sent = [s for log in run.sent for s in log]
    after = [s for s in sent if s.start > run.returned]
    taken = [s for s in after if 200 <= s.status < 300]
    assert taken == [], f"{len(taken)} submission(s) taken after {action} returned"
    assert len(after) >= CLIENTS * AFTER
    assert {(s.status, s.body["error"]["code"]) for s in after} == {
        (refused_status, refused_code)}
    if action == "invites create":
        assert {s.body["error"]["details"]["items"][0]["reason"] for s in after} == {"missing"}
    # what was acknowledged is what is stored: nothing refused slipped in
    store = open_store(db_path)
    try:
        stored = {row[2] for row in store.export_rows(SURVEY_ID, None, 0, 10**6)}
    finally:
        store.close()
    assert stored == {s.submission_id for s in sent if 200 <= s.status < 300}
    assert len(stored) >= BEFORE
