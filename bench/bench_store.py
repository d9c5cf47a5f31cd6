"""SQLite vs PostgreSQL behind a real `ldpsurvey serve`, same driver (prints, asserts nothing).

    .venv/bin/python bench/bench_store.py [--reports 1000000] [--clients 4] [--threads 8]
                                          [--pg-url postgresql://...] [--only sqlite,pg1,pg2]

For each configuration (SQLite, one process; PostgreSQL with 1 and 2 server processes via
`serve --workers`), on a fresh database: batched ingest (batches of 1,000 submissions of 3
questions from `--clients` keep-alive clients) until `--reports` reports are stored, then the
estimate latency over them. Without `--pg-url` a throwaway PostgreSQL server is started with
durable settings (fsync on, as in production). Reports are simulated with seeded numpy
generators (benchmark only). Targets: PostgreSQL ingest >= 0.5x SQLite's with one process on a
2-core machine, and more with two processes where cores allow; estimates < 50 ms at 10^6.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np
from bench_server import (
    QUESTIONS,
    SURVEY,
    free_port,
    post,
    process_tree_cpu,
    run_clients,
    simulated_submissions,
)
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.server.auth import create_token
from ldpsurvey.server.store import open_store
from ldpsurvey.shared.manifest import sign_survey
from ldpsurvey.shared.survey import Survey

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))


def fresh_target(kind: str, tmp: Path, pg_url: str | None, n: int) -> str:
    if kind == "sqlite":
        return str(tmp / f"bench-{n}.db")
    import psycopg

    schema = f"bench_{os.getpid()}_{n}"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in pg_url else "?"
    return f"{pg_url}{sep}options=-csearch_path%3D{schema}"


def estimate_in_process(target: str, rounds: int = 200) -> tuple[float, float]:
    """(median, p95) ms of `aggregation.estimates` called directly on the store."""
    from ldpsurvey.server.aggregation import estimates

    store = open_store(target)
    try:
        times = []
        for _ in range(rounds):
            start = time.perf_counter()
            estimates(store, "bench", None, 0.95)
            times.append((time.perf_counter() - start) * 1000)
    finally:
        store.close()
    times.sort()
    return statistics.median(times), times[int(0.95 * len(times))]


def run_config(name: str, target: str, workers: int, batches: list[bytes], clients: int,
               threads: int) -> dict[str, float]:
    store = open_store(target)
    token = create_token(store, "bench")[1]
    store.close()
    port = free_port()
    exe = str(Path(sys.executable).with_name("ldpsurvey"))
    proc = subprocess.Popen([exe, "serve", "--db", target, "--port", str(port), "--threads",
                             str(threads), "--workers", str(workers)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(600):
            if proc.poll() is not None:
                raise RuntimeError(f"{name}: the server exited with {proc.returncode}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1):
                    break
            except OSError:
                time.sleep(0.05)
        else:
            raise RuntimeError(f"{name}: the server never answered /healthz")
        import http.client

        auth = {"Authorization": f"Bearer {token}"}
        signed = sign_survey(Survey.from_dict(SURVEY), Ed25519PrivateKey.generate())
        conn = http.client.HTTPConnection("127.0.0.1", port)
        assert post(conn, "/api/surveys", json.dumps(signed.to_dict()).encode(), auth) == 201
        cpu = process_tree_cpu(proc.pid)
        seconds, failed = run_clients(port, batches, clients)
        cpu = process_tree_cpu(proc.pid) - cpu
        n_reports = len(batches) * 1000 * QUESTIONS
        latencies = []
        for _ in range(50):
            start = time.perf_counter()
            conn.request("GET", "/api/surveys/bench/estimates", headers=auth)
            response = conn.getresponse()
            body = json.loads(response.read())
            latencies.append(time.perf_counter() - start)
            assert response.status == 200 and body["n_submissions"] == len(batches) * 1000
        latencies.sort()
        direct = estimate_in_process(target)
        result = {"reports_per_s": n_reports / seconds, "seconds": seconds,
                  "failed": failed, "cpu_ms_per_batch": cpu / len(batches) * 1000,
                  "estimate_median_ms": statistics.median(latencies) * 1000,
                  "estimate_p95_ms": latencies[int(0.95 * len(latencies))] * 1000,
                  "estimate_in_process_median_ms": direct[0],
                  "estimate_in_process_p95_ms": direct[1]}
        print(f"{name:<28} {result['reports_per_s']:>10,.0f} reports/s  "
              f"({len(batches)} batches in {seconds:6.1f} s, {failed} non-2xx, server CPU "
              f"{result['cpu_ms_per_batch']:5.1f} ms/batch)  estimates at {n_reports:,} "
              f"reports: median {result['estimate_median_ms']:.1f} ms, p95 "
              f"{result['estimate_p95_ms']:.1f} ms (in process, no HTTP: median {direct[0]:.1f} "
              f"ms, p95 {direct[1]:.1f} ms)", flush=True)
        return result
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=60)
        if err.strip():
            print("  server stderr:", err.decode()[-1500:])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reports", type=int, default=1_000_000)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--threads", type=int, default=8, help="server threads per process")
    parser.add_argument("--pg-url", default=None)
    parser.add_argument("--only", default="sqlite,pg1,pg2")
    parser.add_argument("--json", default=None, help="also write the numbers here")
    args = parser.parse_args()
    rng = np.random.default_rng(2026)
    n_batches = max(1, args.reports // (1000 * QUESTIONS))
    batches = [json.dumps({"submissions": simulated_submissions(1000, rng)}).encode()
               for _ in range(n_batches)]
    tmp = Path(tempfile.mkdtemp(prefix="ldpsurvey-bench-store-"))
    server = None
    pg_url = args.pg_url
    wanted = args.only.split(",")
    if pg_url is None and any(w.startswith("pg") for w in wanted):
        from support.postgres import PgServer

        server = PgServer(durable=True)
        pg_url = server.url
    print(f"{os.cpu_count()} CPUs; {args.clients} clients; {args.threads} threads per server "
          f"process; {n_batches} batches of 1,000 submissions x {QUESTIONS} questions")
    results = {}
    try:
        configs = [("sqlite", "SQLite, 1 process", "sqlite", 1),
                   ("pg1", "PostgreSQL, 1 process", "pg", 1),
                   ("pg2", "PostgreSQL, 2 processes", "pg", 2)]
        for n, (key, name, kind, workers) in enumerate(configs):
            if key in wanted:
                target = fresh_target(kind, tmp, pg_url, n)
                results[key] = run_config(name, target, workers, batches, args.clients,
                                          args.threads)
    finally:
        if server is not None:
            server.stop()
    if "sqlite" in results:
        base = results["sqlite"]["reports_per_s"]
        for key in ("pg1", "pg2"):
            if key in results:
                print(f"{key} / sqlite ingest: {results[key]['reports_per_s'] / base:.2f}x")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
