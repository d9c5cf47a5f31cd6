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
import json
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
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


def simulated(n: int, rng: np.random.Generator) -> list[dict]:
    survey = Survey.from_dict(SURVEY)
    mech = {q.id: mechanism_for(q) for q in survey.questions}
    smoker = mech["smoker"].perturb_many((rng.random(n) < 0.3).astype(np.int64), rng)
    color = mech["color"].perturb_many(rng.integers(0, 5, n), rng)
    return [{"submission_id": str(uuid.uuid4()), "answers": {"smoker": s, "color": c}}
            for s, c in zip(smoker.tolist(), color.tolist(), strict=True)]


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


def http_floor(singles: list[bytes], batches: list[bytes]) -> tuple[float, float]:
    """(single submissions/s, batched submissions/s) of the trivial endpoint."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-c", FLOOR_APP, str(port)])
    try:
        wait_ready(port, "/api/surveys/bench/submissions")
        seconds, failed = run_clients(port, singles, 8)
        single = len(singles) / seconds
        seconds, failed2 = run_clients(port, batches, 4)
        batched = len(batches) * 1000 / seconds
        if failed or failed2:
            print(f"  floor: {failed + failed2} non-2xx")
        return single, batched
    finally:
        stop(proc)


def ldpsurvey_rates(tmp: Path, singles: list[bytes], batches: list[bytes],
                    threads: int) -> tuple[float, float, str]:
    """(single/s, batched submissions/s, recompute --check output) of a real server."""
    db_path = tmp / "ldpsurvey.db"
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
        import http.client

        conn = http.client.HTTPConnection("127.0.0.1", port)
        signed = sign_survey(Survey.from_dict(SURVEY), Ed25519PrivateKey.generate())
        status = post(conn, "/api/surveys", json.dumps(signed.to_dict()).encode(),
                      {"Authorization": f"Bearer {token}"})
        assert status == 201, status
        conn.close()
        cpu = cpu_seconds(proc.pid)
        seconds, failed = run_clients(port, batches, 4)
        batch_cpu = (cpu_seconds(proc.pid) - cpu) / len(batches)
        batched = len(batches) * 1000 / seconds
        cpu = cpu_seconds(proc.pid)
        seconds, failed2 = run_clients(port, singles, 8)
        single_cpu = (cpu_seconds(proc.pid) - cpu) / len(singles)
        single = len(singles) / seconds
        print(f"  ldpsurvey server CPU: {batch_cpu * 1000:.1f} ms per batch of 1,000, "
              f"{single_cpu * 1000:.2f} ms per single submission; "
              f"{failed + failed2} non-2xx")
    finally:
        stop(proc)
    check = subprocess.run([exe, "recompute", "--db", str(db_path), "--check"],
                           capture_output=True, text=True, check=False)
    return single, batched, (check.stdout + check.stderr).strip() + f" (exit {check.returncode})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batches", type=int, default=60, help="batches of 1,000 per run")
    parser.add_argument("--singles", type=int, default=3000)
    parser.add_argument("--threads", type=int, default=8, help="server threads")
    parser.add_argument("--rounds", type=int, default=1, help="repeat the whole measurement")
    args = parser.parse_args()
    rng = np.random.default_rng(2026)
    for round_ in range(args.rounds):
        tmp = Path(tempfile.mkdtemp(prefix="ldpsurvey-ingest-"))
        batch_items = [simulated(1000, rng) for _ in range(args.batches)]
        batches = [json.dumps({"submissions": b}).encode() for b in batch_items]
        singles = [json.dumps(s).encode() for s in simulated(args.singles, rng)]
        raw = raw_sqlite_rows_per_s(tmp / "raw.db", [s for b in batch_items for s in b])
        floor_single, floor_batched = http_floor(singles, batches)
        single, batched, check = ldpsurvey_rates(tmp, singles, batches, args.threads)
        print(f"round {round_ + 1}: raw SQLite {raw:,.0f} rows/s | HTTP floor "
              f"{floor_single:,.0f} single/s, {floor_batched:,.0f} batched submissions/s")
        print(f"  ldpsurvey batched {batched:,.0f} submissions/s = {batched / raw:.2f} of raw "
              f"SQLite (goal >= 0.5); single {single:,.0f}/s = {single / floor_single:.2f} "
              f"of the HTTP floor (goal >= 0.9)")
        print(f"  recompute --check: {check}")


if __name__ == "__main__":
    main()
