"""Ingest against the hardware's limits, in one run (prints, asserts nothing).

    .venv/bin/python bench/bench_ingest.py [--batches 60] [--singles 3000] [--rounds 1]

Four rates, each next to its limit measured on the same machine in the same run:
1. raw SQLite: rows of the stored shape (the submissions table with its two indexes: survey id,
   version, a UUID, an hour, a small JSON payload) inserted in transactions of 1,000 with
   WAL and synchronous=NORMAL: what the disk and SQLite allow;
2. HTTP floor: a trivial waitress + Flask endpoint that parses the same JSON bodies and answers
   200, driven by the same client code (single submissions, 8 clients);
3. ldpsurvey batched: `ldpsurvey serve`, 4 clients sending batches of 1,000 submissions of 2
   reports; ratio to (1);
4. ldpsurvey single: 8 clients, one submission per request; ratio to (2).
Then `recompute --check` must be clean: the incremental aggregates equal the stored reports.
Reports are simulated with seeded numpy generators (benchmark only, never a device path).
Goals (issue 22): batched >= 0.5 of raw SQLite, single >= 0.9 of the HTTP floor.
"""

from __future__ import annotations

import argparse
import http.client
import json
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from bench_server import cpu_seconds, free_port, post, run_clients
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.server.auth import create_token
from ldpsurvey.server.store import open_store
from ldpsurvey.server.store.schema import SQLITE_MIGRATIONS
from ldpsurvey.shared.manifest import sign_survey
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Survey

SURVEY = {
    "id": "bench", "title": "Ingest benchmark", "version": 1,
    "questions": [
        {"id": "smoker", "text": "Smoke?", "type": "binary", "epsilon": 1.0,
         "mechanism": "binary_rr"},
        {"id": "color", "text": "Colour?", "type": "categorical", "epsilon": 1.5,
         "options": ["red", "green", "blue", "black", "white"], "mechanism": "grr"},
    ],
}
FLOOR_APP = """
import sys
from flask import Flask, request
from waitress import serve
app = Flask("floor")
@app.post("/api/surveys/bench/submissions")
def submissions():
    body = request.get_json()
    n = len(body["submissions"]) if "submissions" in body else 1
    return {"accepted": n}
serve(app, host="127.0.0.1", port=int(sys.argv[1]), threads=8, _quiet=True)
"""


WARMUP = 300  # single submissions sent to each server before anything is measured


def simulated(n: int, rng: np.random.Generator) -> list[dict]:
    survey = Survey.from_dict(SURVEY)
    mech = {q.id: mechanism_for(q) for q in survey.questions}
    smoker = mech["smoker"].perturb_many((rng.random(n) < 0.3).astype(np.int64), rng)
    color = mech["color"].perturb_many(rng.integers(0, 5, n), rng)
    return [{"submission_id": str(uuid.uuid4()), "answers": {"smoker": s, "color": c}}
            for s, c in zip(smoker.tolist(), color.tolist(), strict=True)]


def children(pid: int) -> list[int]:
    """The live child processes of `pid` (Linux /proc), e.g. the SQLite ingest process."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def fresh_connection_clients(port: int, bodies: list[bytes], clients: int) -> float:
    """Seconds to send `bodies` from `clients` threads, each request on a new connection, as
    respondents' devices do (one submission each); non-2xx answers abort the run."""
    chunks = [bodies[i::clients] for i in range(clients)]
    failed: list[int] = []

    def worker(chunk: list[bytes]) -> None:
        for body in chunk:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            if post(conn, "/api/surveys/bench/submissions", body) != 200:
                failed.append(1)
            conn.close()

    threads = [threading.Thread(target=worker, args=(c,)) for c in chunks]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failed:
        print(f"  {len(failed)} non-2xx answers")
    return time.perf_counter() - start


def raw_sqlite_rows_per_s(path: Path, submissions: list[dict]) -> float:
    """Rows of the stored shape, in transactions of 1,000 (WAL, synchronous=NORMAL)."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    for statement in SQLITE_MIGRATIONS[0][:4]:  # surveys, submissions and its two indexes
        conn.execute(statement)
    conn.execute("INSERT INTO surveys VALUES ('bench', 1, '{}', '', 'open', '', 0, NULL)")
    hour = datetime.now(UTC).strftime("%Y-%m-%dT%H")
    rows = [("bench", 1, s["submission_id"], hour,
             json.dumps(s["answers"], separators=(",", ":"))) for s in submissions]
    start = time.perf_counter()
    for i in range(0, len(rows), 1000):
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO submissions (survey_id, version, submission_id, "
                         "received_hour, reports) VALUES (?, ?, ?, ?, ?)", rows[i:i + 1000])
        conn.execute("COMMIT")
    seconds = time.perf_counter() - start
    conn.close()
    return len(rows) / seconds


def wait_ready(port: int, path: str) -> None:
    for _ in range(600):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=1):
                return
        except urllib.error.HTTPError:
            return  # the server answers (405 for GET on a POST route): it is up
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"server on port {port} did not start")


def stop(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()


@dataclass
class Rates:
    """Submissions per second of one server under the three loads."""

    single_keepalive: float
    single_fresh: float
    batched: float


def drive(port: int, loads: dict[str, list[bytes]], pid: int | None = None,
          label: str = "") -> Rates:
    """The three loads against a server: 8 clients with one keep-alive connection each, 8
    clients with a new connection per request, 4 clients sending batches of 1,000. With the
    server's `pid`, prints its CPU time per submission under each load."""
    cpu: list[float] = []

    helpers = children(pid) if pid is not None else []
    helper_cpu: list[float] = []

    def mark() -> None:
        if pid is not None:
            cpu.append(cpu_seconds(pid))
            helper_cpu.append(sum(cpu_seconds(c) for c in helpers))

    run_clients(port, loads["warmup"], 8)  # steady state: a child process started, caches
    mark()
    seconds, failed = run_clients(port, loads["keepalive"], 8)
    keepalive = len(loads["keepalive"]) / seconds
    mark()
    fresh = len(loads["fresh"]) / fresh_connection_clients(port, loads["fresh"], 8)
    mark()
    seconds, failed2 = run_clients(port, loads["batches"], 4)
    mark()
    if failed or failed2:
        print(f"  {failed + failed2} non-2xx answers")
    if pid is not None:
        counts = [len(loads["keepalive"]), len(loads["fresh"]), 1000 * len(loads["batches"])]
        per = [(b - a) / n * 1e6 for a, b, n in zip(cpu[:-1], cpu[1:], counts, strict=True)]
        print(f"  {label} server CPU per submission: single {per[0]:.0f} µs keep-alive, "
              f"{per[1]:.0f} µs new connections; batched {per[2]:.1f} µs")
        if helpers:  # the SQLite ingest process: the rest of the server's cost
            per = [(b - a) / n * 1e6
                   for a, b, n in zip(helper_cpu[:-1], helper_cpu[1:], counts, strict=True)]
            print(f"  {label} ingest process CPU per submission: single {per[0]:.0f} µs "
                  f"keep-alive, {per[1]:.0f} µs new connections; batched {per[2]:.1f} µs")
    return Rates(keepalive, fresh, len(loads["batches"]) * 1000 / seconds)


def http_floor(loads: dict[str, list[bytes]]) -> Rates:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-c", FLOOR_APP, str(port)],
                            stderr=subprocess.DEVNULL)
    try:
        wait_ready(port, "/api/surveys/bench/submissions")
        return drive(port, loads, proc.pid, "HTTP floor")
    finally:
        stop(proc)


def start_server(db_path: Path, threads: int = 8) -> tuple[subprocess.Popen, int]:
    """A real `ldpsurvey serve` on a fresh SQLite database with the bench survey published."""
    db = open_store(str(db_path))
    token = create_token(db, "bench")[1]
    db.close()
    port = free_port()
    exe = str(Path(sys.executable).with_name("ldpsurvey"))
    proc = subprocess.Popen([exe, "serve", "--db", str(db_path), "--port", str(port),
                             "--threads", str(threads)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_ready(port, "/healthz")
        conn = http.client.HTTPConnection("127.0.0.1", port)
        signed = sign_survey(Survey.from_dict(SURVEY), Ed25519PrivateKey.generate())
        status = post(conn, "/api/surveys", json.dumps(signed.to_dict()).encode(),
                      {"Authorization": f"Bearer {token}"})
        assert status == 201, status
        conn.close()
    except BaseException:
        stop(proc)
        raise
    return proc, port


def ldpsurvey_rates(tmp: Path, loads: dict[str, list[bytes]], threads: int
                    ) -> tuple[Rates, str]:
    """The rates of a real `ldpsurvey serve`, and what `recompute --check` says after."""
    db_path = tmp / "ldpsurvey.db"
    proc, port = start_server(db_path, threads)
    try:
        rates = drive(port, loads, proc.pid, "ldpsurvey")
    finally:
        stop(proc)
    exe = str(Path(sys.executable).with_name("ldpsurvey"))
    check = subprocess.run([exe, "recompute", "--db", str(db_path), "--check"],
                           capture_output=True, text=True, check=False)
    return rates, (check.stdout + check.stderr).strip() + f" (exit {check.returncode})"


def fsync_ms(path: Path, commits: int = 200) -> float:
    """Median-free mean latency of a one-row commit with synchronous=FULL (what every
    acknowledged ldpsurvey transaction waits for) on this disk now."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("CREATE TABLE t (x)")
    start = time.perf_counter()
    for i in range(commits):
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO t VALUES (?)", (i,))
        conn.execute("COMMIT")
    conn.close()
    return (time.perf_counter() - start) / commits * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batches", type=int, default=60, help="batches of 1,000 per run")
    parser.add_argument("--singles", type=int, default=3000, help="per single-submission load")
    parser.add_argument("--threads", type=int, default=8, help="server threads")
    parser.add_argument("--rounds", type=int, default=1, help="repeat the whole measurement")
    args = parser.parse_args()
    rng = np.random.default_rng(2026)
    for round_ in range(args.rounds):
        tmp = Path(tempfile.mkdtemp(prefix="ldpsurvey-ingest-"))
        batch_items = [simulated(1000, rng) for _ in range(args.batches)]
        loads = {"batches": [json.dumps({"submissions": b}).encode() for b in batch_items],
                 "warmup": [json.dumps(s).encode() for s in simulated(WARMUP, rng)],
                 "keepalive": [json.dumps(s).encode() for s in simulated(args.singles, rng)],
                 "fresh": [json.dumps(s).encode() for s in simulated(args.singles, rng)]}
        rows = [s for b in batch_items for s in b]
        raw_before = raw_sqlite_rows_per_s(tmp / "raw1.db", rows)
        floor = http_floor(loads)
        ours, check = ldpsurvey_rates(tmp, loads, args.threads)
        raw = (raw_before + raw_sqlite_rows_per_s(tmp / "raw2.db", rows)) / 2
        sync = fsync_ms(tmp / "fsync.db")
        print(f"round {round_ + 1}: raw SQLite {raw:,.0f} rows/s (before {raw_before:,.0f}); "
              f"a synchronous=FULL commit takes {sync:.2f} ms")
        print(f"  HTTP floor: single {floor.single_keepalive:,.0f}/s keep-alive, "
              f"{floor.single_fresh:,.0f}/s new connections; batched "
              f"{floor.batched:,.0f} submissions/s")
        print(f"  ldpsurvey: single {ours.single_keepalive:,.0f}/s keep-alive, "
              f"{ours.single_fresh:,.0f}/s new connections; batched "
              f"{ours.batched:,.0f} submissions/s")
        print(f"  batched / raw SQLite = {ours.batched / raw:.2f} (goal >= 0.5)")
        print(f"  single / HTTP floor = {ours.single_fresh / floor.single_fresh:.2f} with new "
              f"connections (goal >= 0.9), {ours.single_keepalive / floor.single_keepalive:.2f} "
              "keep-alive")
        print(f"  recompute --check: {check}")


if __name__ == "__main__":
    main()
