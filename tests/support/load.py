"""Load driver shared by tests/server/test_load_crash.py and bench/bench_load.py.

A real `ldpsurvey serve` (waitress, several threads) in a subprocess on a free loopback port,
and many client threads, each on its own keep-alive HTTP connection, POSTing single and batched
submissions. Readiness is bounded polling of /healthz, never a fixed sleep. Reports are drawn
with each mechanism's numpy `perturb_many` (seeded): this is a load generator, nothing here
stands for a respondent's device.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.shared.manifest import sign_survey
from ldpsurvey.shared.mechanisms import Mechanism, mechanism_for
from ldpsurvey.shared.survey import Survey

from support.clients import free_port, ldpsurvey_exe

SURVEY_ID = "load"
HEALTH_ATTEMPTS = 600  # x up to 0.05 s wait each between attempts: at most ~30 s + connects


def load_survey_dict() -> dict[str, Any]:
    """Binary RR, GRR, OUE and an optional geometric question: the common report shapes."""
    return {
        "id": SURVEY_ID, "title": "Load", "version": 1,
        "questions": [
            {"id": "smoker", "text": "Smoke?", "type": "binary", "epsilon": 1.0,
             "mechanism": "binary_rr"},
            {"id": "color", "text": "Colour?", "type": "categorical", "epsilon": 1.5,
             "options": ["red", "green", "blue", "black"], "mechanism": "grr"},
            {"id": "fruit", "text": "Fruit?", "type": "categorical", "epsilon": 1.0,
             "options": ["apple", "pear", "plum", "fig", "kiwi", "lime"], "mechanism": "oue"},
            {"id": "age", "text": "Age?", "type": "integer", "epsilon": 2.0,
             "min": 18, "max": 60, "mechanism": "geometric", "optional": True},
        ],
    }


def signed_manifest(key: Ed25519PrivateKey | None = None) -> dict[str, Any]:
    body = sign_survey(Survey.from_dict(load_survey_dict()),
                       key or Ed25519PrivateKey.generate()).to_dict()
    body.pop("sha256")
    return body


def load_mechanisms() -> dict[str, Mechanism]:
    survey = Survey.from_dict(load_survey_dict())
    return {q.id: mechanism_for(q) for q in survey.questions}


def _plain(value: Any) -> Any:
    return value.tolist() if hasattr(value, "tolist") else value


def answer_pool(n: int, seed: int) -> list[dict[str, Any]]:
    """n answer dicts (perturbed reports), every 5th one skipping the optional question."""
    rng = np.random.default_rng(seed)
    columns = {}
    for qid, mech in load_mechanisms().items():
        truth = rng.integers(0, mech.k, n)
        columns[qid] = _plain(mech.perturb_many(truth, rng))
    pool = []
    for i in range(n):
        answers = {qid: col[i] for qid, col in columns.items()}
        if i % 5 == 0:
            del answers["age"]
        pool.append(answers)
    return pool


class ServerProcess:
    """`ldpsurvey serve` on a fixed port; start, kill -9 and restart on the same database."""

    def __init__(self, db_path: Path | str, threads: int = 8, port: int | None = None, *,
                 workers: int = 1, log_dir: Path | None = None) -> None:
        self.db_path = db_path  # a SQLite file or a PostgreSQL URL (then give log_dir)
        self.threads = threads
        self.workers = workers
        self.port = port or free_port()
        self.log_path = (log_dir or Path(db_path).parent) / f"server.{self.port}.log"
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self._log: Any = None

    def start(self) -> None:
        self._log = open(self.log_path, "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [*ldpsurvey_exe(), "serve", "--db", str(self.db_path), "--port", str(self.port),
             "--threads", str(self.threads), "--workers", str(self.workers)],
            stdout=subprocess.DEVNULL, stderr=self._log,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self.wait_healthy()

    def wait_healthy(self) -> None:
        assert self.proc is not None
        for _ in range(HEALTH_ATTEMPTS):
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}: {self.log()}")
            try:
                with urllib.request.urlopen(self.url + "/healthz", timeout=2) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                # Bounded polling: wait for the process for a moment (not a timing assumption).
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.proc.wait(timeout=0.05)
        self.stop()
        raise RuntimeError(f"server not healthy after {HEALTH_ATTEMPTS} attempts: {self.log()}")

    def log(self) -> str:
        path = self.log_path
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def ingest_child(self) -> int:
        """The pid of this server's SQLite ingest process (server/store/ingest_process.py)."""
        assert self.proc is not None
        for task in Path(f"/proc/{self.proc.pid}/task").iterdir():
            for pid in (task / "children").read_text().split():
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
                if b"spawn_main" in cmdline:
                    return int(pid)
        raise RuntimeError("the server has no ingest process")

    def kill9(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)
        self._close_log()
        self.proc = None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)
        self.proc = None
        self._close_log()

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None

    def token(self) -> str:
        from ldpsurvey.server.auth import create_token
        from ldpsurvey.server.store import open_store

        store = open_store(self.db_path)
        try:
            return create_token(store, "load")[1]
        finally:
            store.close()

    def publish(self, token: str) -> None:
        status, body, _ = HttpClient(self.url).post("/api/surveys", signed_manifest(),
                                                     {"Authorization": f"Bearer {token}"})
        if status != 201:
            raise RuntimeError(f"publish failed: {status} {body}")


class HttpClient:
    """One keep-alive connection; reconnects after a connection error."""

    def __init__(self, url: str, timeout: float = 120.0) -> None:
        host, port = url.removeprefix("http://").split(":")
        self.host, self.port, self.timeout = host, int(port), timeout
        self.conn: http.client.HTTPConnection | None = None

    def post(self, path: str, body: Any,
             headers: Mapping[str, str] | None = None) -> tuple[int, Any, float]:
        """(status, parsed body, seconds); raises OSError/HTTPException on connection errors."""
        data = json.dumps(body, separators=(",", ":")).encode()
        if self.conn is None:
            self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        start = time.perf_counter()
        try:
            self.conn.request("POST", path, data, {"Content-Type": "application/json",
                                                   **(headers or {})})
            response = self.conn.getresponse()
            raw = response.read()
        except (OSError, http.client.HTTPException):
            self.close()
            raise
        elapsed = time.perf_counter() - start
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = raw[:200]
        if response.getheader("Connection", "").lower() == "close":
            self.close()
        return response.status, parsed, elapsed

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


@dataclass
class Request:
    """One planned POST: a single submission or a batch (ids in order)."""

    body: dict[str, Any]
    ids: list[str]

    @property
    def single(self) -> bool:
        return "submissions" not in self.body


def plan_requests(n_clients: int, total: int, singles: int, batch_sizes: Sequence[int],
                  seed: int, resend_every: int = 0) -> list[list[Request]]:
    """Per client, its requests: `total` submissions over all clients, `singles` of each
    client's sent one per request and the rest in batches cycling through `batch_sizes`,
    interleaved. With `resend_every`, every so many requests an earlier request is sent again
    unchanged (a duplicate, as after a lost acknowledgement)."""
    pool = iter(answer_pool(total, seed))

    def request(size: int) -> Request:
        subs = [{"submission_id": str(uuid.uuid4()), "answers": next(pool)}
                for _ in range(size)]
        body = subs[0] if size == 1 else {"submissions": subs}
        return Request(body, [s["submission_id"] for s in subs])

    plans: list[list[Request]] = []
    for c in range(n_clients):
        count = total // n_clients + (c < total % n_clients)
        n_single = min(singles, count)
        batches, left, b = [], count - n_single, c
        while left:
            size = min(batch_sizes[b % len(batch_sizes)], left)
            batches.append(request(size))
            left -= size
            b += 1
        single = [request(1) for _ in range(n_single)]
        every = max(1, len(single) // max(1, len(batches)))
        plan: list[Request] = []
        rounds = 0
        while single or batches:
            plan.extend(single[:every])
            del single[:every]
            if batches:
                plan.append(batches.pop(0))
            rounds += 1
            if resend_every and rounds % resend_every == 0:
                plan.append(plan[len(plan) // 2])
        plans.append(plan)
    return plans


@dataclass
class ClientLog:
    """What one client saw: acknowledged ids, statuses, latencies, unknown outcomes."""

    accepted: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    single_latency: list[float] = field(default_factory=list)
    batch_latency: list[float] = field(default_factory=list)
    unknown: list[Request] = field(default_factory=list)  # no answer: maybe stored, maybe not
    errors: list[str] = field(default_factory=list)


def run_clients(url: str, plans: Sequence[Sequence[Request]], *, retries: int = 2,
                stop_on_error: bool = False, retry_statuses: frozenset[int] = frozenset(),
                on_ack: Callable[[int], None] | None = None) -> tuple[list[ClientLog], float]:
    """Every client on its own thread; returns the logs and the wall time in seconds.

    A connection error, or an answer whose status is in `retry_statuses`, is retried `retries`
    times with the same body (the server dedupes by submission id); with `stop_on_error` the
    client records a request without an answer as unknown and stops (the crash test)."""
    logs = [ClientLog() for _ in plans]
    path = f"/api/surveys/{SURVEY_ID}/submissions"

    def client(plan: Sequence[Request], log: ClientLog) -> None:
        http = HttpClient(url)
        try:
            for request in plan:
                for attempt in range(retries + 1):
                    try:
                        status, body, seconds = http.post(path, request.body)
                    except (OSError, http_client_errors) as exc:
                        log.errors.append(f"{type(exc).__name__}: {exc}")
                        if stop_on_error or attempt == retries:
                            log.unknown.append(request)
                            if stop_on_error:
                                return
                            break
                        continue
                    log.statuses[status] += 1
                    if status in retry_statuses and attempt < retries:
                        continue
                    (log.single_latency if request.single else log.batch_latency).append(seconds)
                    if 200 <= status < 300:
                        log.accepted.extend(body["accepted"])
                        log.duplicates.extend(body["duplicates"])
                        if on_ack is not None:
                            on_ack(len(body["accepted"]))
                    else:
                        log.errors.append(f"HTTP {status}: {str(body)[:300]}")
                    break
        finally:
            http.close()

    threads = [threading.Thread(target=client, args=(p, log), daemon=True)
               for p, log in zip(plans, logs, strict=True)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=900)
        if t.is_alive():
            raise RuntimeError("a load client did not finish within 900 s")
    return logs, time.perf_counter() - start


http_client_errors = http.client.HTTPException


def percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) if values else float("nan")
