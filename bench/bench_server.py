"""Ingest and estimate throughput of a real `ldpsurvey serve` on loopback (prints, asserts nothing).

    .venv/bin/python bench/bench_server.py [--reports 1000000] [--singles 4000] [--threads 8]

1. single submissions: 8 concurrent clients, one submission per request (keep-alive);
2. batches of 1,000 submissions until `--reports` reports are stored;
3. estimate latency over those stored reports.
Reports are simulated with seeded numpy generators (benchmark only, never a device path).
Targets on a 2-core machine: batch >= 20,000 reports/s, single >= 500 submissions/s,
estimate < 50 ms at 10^6 reports.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from pathlib import Path

import numpy as np
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.server.auth import create_token
from ldpsurvey.server.store import open_store
from ldpsurvey.shared.manifest import sign_survey
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Survey

SURVEY = {
    "id": "bench", "title": "Benchmark", "version": 1,
    "questions": [
        {"id": "smoker", "text": "Smoke?", "type": "binary", "epsilon": 1.0,
         "mechanism": "binary_rr"},
        {"id": "color", "text": "Colour?", "type": "categorical", "epsilon": 1.5,
         "options": ["red", "green", "blue", "black", "white"], "mechanism": "grr"},
        {"id": "age", "text": "Age?", "type": "integer", "epsilon": 2.0, "min": 18,
         "max": 90, "mechanism": "geometric"},
    ],
}
QUESTIONS = len(SURVEY["questions"])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def simulated_submissions(n: int, rng: np.random.Generator) -> list[dict]:
    survey = Survey.from_dict(SURVEY)
    mech = {q.id: mechanism_for(q) for q in survey.questions}
    smoker = mech["smoker"].perturb_many((rng.random(n) < 0.3).astype(np.int64), rng)
    color = mech["color"].perturb_many(rng.integers(0, 5, n), rng)
    age = mech["age"].perturb_many(rng.integers(0, 73, n), rng)
    return [{"submission_id": str(uuid.uuid4()),
             "answers": {"smoker": s, "color": c, "age": a}}
            for s, c, a in zip(smoker.tolist(), color.tolist(), age.tolist(), strict=True)]


LAST_ERROR: list[bytes] = []


def post(conn: http.client.HTTPConnection, path: str, body: bytes,
         headers: dict[str, str] | None = None) -> int:
    conn.request("POST", path, body, {"Content-Type": "application/json", **(headers or {})})
    response = conn.getresponse()
    reply = response.read()
    if response.status >= 300:
        LAST_ERROR[:] = [reply[:500]]
    return response.status


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux /proc), to separate server cost from load."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children(pid: int) -> list[int]:
    """The live child processes of `pid` (Linux /proc), e.g. the SQLite ingest process."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def process_tree_cpu(pid: int) -> float:
    """CPU seconds of a server process and its worker children (Linux /proc)."""
    return cpu_seconds(pid) + sum(cpu_seconds(child) for child in children(pid))


def run_clients(port: int, bodies: list[bytes], clients: int) -> tuple[float, int]:
    """Send `bodies` from `clients` keep-alive connections; (seconds, non-2xx count)."""
    chunks = [bodies[i::clients] for i in range(clients)]
    failures = [0] * clients

    def worker(i: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        for body in chunks[i]:
            if post(conn, "/api/surveys/bench/submissions", body) != 200:
                failures[i] += 1
        conn.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - start, sum(failures)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reports", type=int, default=1_000_000)
    parser.add_argument("--singles", type=int, default=4000)
    parser.add_argument("--threads", type=int, default=8, help="server threads")
    parser.add_argument("--db", default=None)
    args = parser.parse_args()
    rng = np.random.default_rng(2026)
    tmp = tempfile.mkdtemp(prefix="ldpsurvey-bench-")
    db_path = args.db or str(Path(tmp) / "bench.db")
    db = open_store(db_path)
    token = create_token(db, "bench")[1]
    db.close()
    port = free_port()
    exe = str(Path(sys.executable).with_name("ldpsurvey"))
    proc = subprocess.Popen([exe, "serve", "--db", db_path, "--port", str(port),
                             "--threads", str(args.threads)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(400):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1):
                    break
            except OSError:
                time.sleep(0.05)
        auth = {"Authorization": f"Bearer {token}"}
        signed = sign_survey(Survey.from_dict(SURVEY), Ed25519PrivateKey.generate())
        conn = http.client.HTTPConnection("127.0.0.1", port)
        assert post(conn, "/api/surveys", json.dumps(signed.to_dict()).encode(), auth) == 201

        singles = [json.dumps(s).encode() for s in simulated_submissions(args.singles, rng)]
        cpu = process_tree_cpu(proc.pid)
        seconds, failed = run_clients(port, singles, 8)
        cpu = process_tree_cpu(proc.pid) - cpu
        print(f"single submissions, 8 clients: {len(singles) / seconds:,.0f} submissions/s "
              f"({len(singles) * QUESTIONS / seconds:,.0f} reports/s; {len(singles)} in "
              f"{seconds:.2f} s; {failed} non-2xx; server CPU "
              f"{cpu / len(singles) * 1000:.2f} ms per request)")

        n_batches = max(1, args.reports // (1000 * QUESTIONS))
        batches = [json.dumps({"submissions": simulated_submissions(1000, rng)}).encode()
                   for _ in range(n_batches)]
        cpu = process_tree_cpu(proc.pid)
        seconds, failed = run_clients(port, batches, 2)
        cpu = process_tree_cpu(proc.pid) - cpu
        n_reports = n_batches * 1000 * QUESTIONS
        print(f"batches of 1,000 submissions, 2 clients: {n_reports / seconds:,.0f} reports/s "
              f"({n_batches * 1000 / seconds:,.0f} submissions/s; {n_batches} batches in "
              f"{seconds:.2f} s; {failed} non-2xx; server CPU "
              f"{cpu / n_batches * 1000:.1f} ms per batch)")

        stored = (n_batches * 1000 + len(singles)) * QUESTIONS
        latencies = []
        for _ in range(50):
            start = time.perf_counter()
            conn.request("GET", "/api/surveys/bench/estimates", headers=auth)
            response = conn.getresponse()
            response.read()
            latencies.append(time.perf_counter() - start)
            assert response.status == 200
        latencies.sort()
        print(f"estimate latency with {stored:,} stored reports: median "
              f"{statistics.median(latencies) * 1000:.1f} ms, p95 "
              f"{latencies[int(0.95 * len(latencies))] * 1000:.1f} ms")
    finally:
        proc.send_signal(signal.SIGINT)  # waitress stops cleanly on Ctrl-C
        _, err = proc.communicate(timeout=30)
        if LAST_ERROR:
            print("last error response:", LAST_ERROR[0].decode(errors="replace"))
        if err.strip():
            print("server stderr:", err.decode()[-2000:])


if __name__ == "__main__":
    main()
