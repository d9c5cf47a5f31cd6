"""Ingest against the hardware's limits, in one run (prints, asserts nothing).

    .venv/bin/python bench/bench_ingest.py [--batches 60] [--batch-segments 3]
                                           [--singles 1500] [--segments 6] [--rounds 1]
                                           [--against CHECKOUT]

Four rates, each next to its limit measured on the same machine in the same run:
1. raw SQLite: rows of the stored shape (the submissions table with its two indexes: survey id,
   version, a UUID, an hour, a small JSON payload) inserted in transactions of 1,000 with
   WAL and synchronous=NORMAL: what the disk and SQLite allow;
2. HTTP floor: a trivial waitress + Flask endpoint that parses the same JSON bodies and answers
   200, driven by the same client code (single submissions, 8 clients);
3. ldpsurvey batched: `ldpsurvey serve`, 4 clients sending batches of 1,000 submissions of 2
   reports; ratio to (1);
4. ldpsurvey single: 8 clients, one submission per request, with one keep-alive connection
   each and with a new connection per request; ratio to (2).
Each pair takes its load in alternating segments (the order reversed every other segment),
each ratio taken between neighbouring segments and its median printed with its range: measured
one after the other, a minute apart, two rates met different states of a shared machine, and
the ratio moved by 0.1 between runs. The batches and raw SQLite's rows are the same
submissions, and raw SQLite's database first takes the rows ldpsurvey's holds by then (the
single submissions): an insert's cost grows with the UUID index, so both sides grow alike
from the same size. For the single loads the bench also prints the clients' CPU and the cores
busy in all: on two cores, three busy processes (clients, server, ingest process) kept ~1.55
of them busy in issue 22's measurements.
Then `recompute --check` must be clean: the incremental aggregates equal the stored reports.
With --rounds N a last block lists each ratio per round, its median and how often it met its
goal. With --against CHECKOUT (another checkout, e.g. `git worktree add /tmp/before HEAD~1`)
that checkout's server runs beside this one's, on its own database, taking every load in the
same alternating segments: the bench then also prints this server's rate over that one's,
segment by segment, so that a change shows its cost on the same machine in the same run. Two
checkouts with the same ingest code gave 0.87-1.14 in single segments of single submissions,
0.85-1.26 in segments of batches, and medians of 0.95-1.06 (two rounds on 2026-11-26): read
the medians, over several rounds. Reports are simulated with seeded numpy generators
(benchmark only, never a device path).
Goals (issue 22): batched >= 0.5 of raw SQLite, single >= 0.9 of the HTTP floor.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import resource
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from bench_server import children, cpu_seconds, free_port, post, run_clients
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
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


class RawSqlite:
    """Raw SQLite on the same disk: rows of the stored shape (the submissions table with its
    two indexes) inserted in transactions of 1,000 (WAL, synchronous=NORMAL) into a database
    that grows segment by segment, as ldpsurvey's does under the batched load."""

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.execute("PRAGMA synchronous = NORMAL")
        for statement in SQLITE_MIGRATIONS[0][:4]:  # surveys, submissions and its two indexes
            self.conn.execute(statement)
        self.conn.execute("INSERT INTO surveys VALUES ('bench', 1, '{}', '', 'open', '', 0, "
                          "NULL)")

    def rows_per_s(self, submissions: list[dict]) -> float:
        hour = datetime.now(UTC).strftime("%Y-%m-%dT%H")
        rows = [("bench", 1, s["submission_id"], hour,
                 json.dumps(s["answers"], separators=(",", ":"))) for s in submissions]
        start = time.perf_counter()
        for i in range(0, len(rows), 1000):
            self.conn.execute("BEGIN")
            self.conn.executemany("INSERT INTO submissions (survey_id, version, "
                                  "submission_id, received_hour, reports) "
                                  "VALUES (?, ?, ?, ?, ?)", rows[i:i + 1000])
            self.conn.execute("COMMIT")
        return len(rows) / (time.perf_counter() - start)

    def close(self) -> None:
        self.conn.close()


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
class Server:
    """A server under measurement: its process and port, and its child processes (the SQLite
    ingest process), whose CPU is its cost too."""

    name: str
    proc: subprocess.Popen
    port: int

    def cpu(self) -> tuple[float, float]:
        """CPU seconds of the server process and of its children so far."""
        return (cpu_seconds(self.proc.pid),
                sum(cpu_seconds(c) for c in children(self.proc.pid)))


@dataclass
class Segment:
    """One stretch of load against one server."""

    rate: float  # submissions/s
    cpu_us: float  # server process CPU per submission
    child_us: float  # its children's CPU per submission
    driver_us: float  # the clients' (this process's) CPU per submission

    @property
    def cores(self) -> float:
        """Cores busy on average: server, its children and the clients (of 2 on the issue's
        machine; what is left is lost to waits and wake-ups between them)."""
        return (self.cpu_us + self.child_us + self.driver_us) * self.rate / 1e6


LOADS = ("keep-alive", "new connections")


def own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measured(server: Server, n: int, send: Callable[[], float]) -> Segment:
    """`send()` (its seconds) moving `n` submissions, with the CPU per submission of the
    server, of its children and of the clients."""
    before, driver = server.cpu(), own_cpu()
    seconds = send()
    after, driver = server.cpu(), own_cpu() - driver
    per = [(b - a) / n * 1e6 for a, b in zip(before, after, strict=True)]
    return Segment(n / seconds, per[0], per[1], driver / n * 1e6)


def send_singles(server: Server, bodies: list[bytes], load: str) -> Segment:
    """8 clients send `bodies` one submission per request; non-2xx answers are reported."""
    def send() -> float:
        if load != "keep-alive":
            return fresh_connection_clients(server.port, bodies, 8)
        seconds, failed = run_clients(server.port, bodies, 8)
        if failed:
            print(f"  {server.name}: {failed} non-2xx answers")
        return seconds

    return measured(server, len(bodies), send)


def interleaved_singles(servers: list[Server], segments: list[dict[str, list[bytes]]]
                        ) -> dict[tuple[str, str], list[Segment]]:
    """Every segment's bodies sent to each server in turn, the order reversed every other
    segment (ABBA): the floor and ldpsurvey meet the same machine state, seconds apart, and
    the same request bytes (each body reaches ldpsurvey once: its ids stay unique)."""
    found: dict[tuple[str, str], list[Segment]] = {}
    for i, bodies in enumerate(segments):
        order = servers if i % 2 == 0 else servers[::-1]
        for load in LOADS:
            for server in order:
                found.setdefault((server.name, load), []).append(
                    send_singles(server, bodies[load], load))
    return found


def start_floor() -> Server:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-c", FLOOR_APP, str(port)],
                            stderr=subprocess.DEVNULL)
    try:
        wait_ready(port, "/api/surveys/bench/submissions")
    except BaseException:
        stop(proc)
        raise
    return Server("HTTP floor", proc, port)


def checkout_env(tree: Path, links: Path) -> dict[str, str]:
    """An environment in which Python imports ldpsurvey from another checkout `tree`: `links`
    gets a folder ldpsurvey/ of links to the tree's package folders (its pyproject's
    package-dir), put first on PYTHONPATH, ahead of this checkout's editable install."""
    package_dir = tomllib.loads((tree / "pyproject.toml").read_text())[
        "tool"]["setuptools"]["package-dir"]
    (links / "ldpsurvey").mkdir(parents=True, exist_ok=True)
    for package, folder in package_dir.items():
        link = links / "ldpsurvey" / package.removeprefix("ldpsurvey.")
        if not link.exists():
            link.symlink_to((tree / folder).resolve(), target_is_directory=True)
    return {**os.environ, "PYTHONPATH": str(links)}


def cli(env: dict[str, str] | None) -> list[str]:
    """The `ldpsurvey` command of this checkout (env None) or of the one `env` imports."""
    if env is None:
        return [str(Path(sys.executable).with_name("ldpsurvey"))]
    return [sys.executable, "-c", "from ldpsurvey.analyst.cli import main; main()"]


def start_server(db_path: Path, threads: int = 8, env: dict[str, str] | None = None
                 ) -> tuple[subprocess.Popen, int]:
    """A real `ldpsurvey serve` (of this checkout, or of the one `env` imports) on a fresh
    SQLite database with the bench survey published; its stderr goes to a file beside the
    database."""
    token = subprocess.run([*cli(env), "token", "create", "--db", str(db_path), "--name",
                            "bench"], env=env, capture_output=True, text=True,
                           check=True).stdout.strip()
    port = free_port()
    with db_path.with_suffix(".log").open("wb") as log:
        proc = subprocess.Popen([*cli(env), "serve", "--db", str(db_path), "--port",
                                 str(port), "--threads", str(threads)],
                                env=env, stdout=subprocess.DEVNULL, stderr=log)
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


def interleaved_batches(servers: list[Server], raw: RawSqlite,
                        segments: list[list[list[dict]]]
                        ) -> dict[str, list[tuple[Segment, float]]]:
    """Each segment's batches sent by 4 clients to each server, next to raw SQLite inserting
    the same rows (the order reversed every other segment): per server, (its segment, raw
    SQLite's rows/s in that segment). All databases grow alike, and neighbours meet the same
    state of the machine."""
    found: dict[str, list[tuple[Segment, float]]] = {s.name: [] for s in servers}
    for i, batches in enumerate(segments):
        bodies = [json.dumps({"submissions": b}).encode() for b in batches]
        rows = [s for b in batches for s in b]
        ours: dict[str, Segment] = {}
        raw_rate = 0.0
        for side in ([*servers, raw] if i % 2 == 0 else [raw, *servers[::-1]]):
            if isinstance(side, RawSqlite):
                raw_rate = side.rows_per_s(rows)
            else:
                ours[side.name] = measured(side, len(rows),
                                           lambda s=side, b=bodies: send_batches(s, b))
        for name, segment in ours.items():
            found[name].append((segment, raw_rate))
    return found


def send_batches(server: Server, bodies: list[bytes]) -> float:
    seconds, failed = run_clients(server.port, bodies, 4)
    if failed:
        print(f"  {server.name}: {failed} non-2xx answers to batches")
    return seconds


def recompute_check(db_path: Path, env: dict[str, str] | None = None) -> str:
    check = subprocess.run([*cli(env), "recompute", "--db", str(db_path), "--check"],
                           env=env, capture_output=True, text=True, check=False)
    return (check.stdout + check.stderr).strip() + f" (exit {check.returncode})"


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


def median_range(ratios: list[float]) -> tuple[float, float, float]:
    return statistics.median(ratios), min(ratios), max(ratios)


OURS, AGAINST = "ldpsurvey", "against"  # this checkout's server, --against's
BATCHED = "batched / raw SQLite"
GOALS = {BATCHED: 0.5, **{f"single {load} / floor": 0.9 for load in LOADS}}


def one_round(args: argparse.Namespace, rng: np.random.Generator, tree: Path | None
              ) -> dict[str, dict[str, float]]:
    """One round: the singles against the floor, then the batches against raw SQLite, for this
    checkout's server (and another checkout's, `tree`, side by side), printed; returns each
    server's three ratios (medians over segments)."""
    tmp = Path(tempfile.mkdtemp(prefix="ldpsurvey-ingest-"))
    per_segment = max(1, args.batches // args.batch_segments)
    batch_segments = [[simulated(1000, rng) for _ in range(per_segment)]
                      for _ in range(args.batch_segments)]
    warm_items = simulated(WARMUP, rng)
    single_items = [{load: simulated(args.singles, rng) for load in LOADS}
                    for _ in range(args.segments)]
    warmup = [json.dumps(s).encode() for s in warm_items]
    segments = [{load: [json.dumps(s).encode() for s in items[load]] for load in LOADS}
                for items in single_items]
    checkouts: dict[str, dict[str, str] | None] = {OURS: None}
    if tree is not None:
        checkouts[AGAINST] = checkout_env(tree, tmp / "against")
    raw = RawSqlite(tmp / "raw.db")
    servers: list[Server] = []
    floor = start_floor()
    try:
        for name, env in checkouts.items():
            proc, port = start_server(tmp / f"{name}.db", args.threads, env)
            servers.append(Server(name, proc, port))
        for server in (floor, *servers):  # steady state: ingest process started, caches
            run_clients(server.port, warmup, 8)
        singles = interleaved_singles([floor, *servers], segments)
        # raw SQLite starts the batches holding as many rows as ldpsurvey then holds: a
        # transaction's cost grows with the UUID index it inserts into
        raw.rows_per_s(warm_items + [s for items in single_items for load in LOADS
                                     for s in items[load]])
        batches = interleaved_batches(servers, raw, batch_segments)
    finally:
        for server in servers:
            stop(server.proc)
        stop(floor.proc)
        raw.close()
    print(f"round: a synchronous=FULL commit takes {fsync_ms(tmp / 'fsync.db'):.2f} ms")
    found = {s.name: print_server(s.name, batches[s.name], singles, floor, per_segment)
             for s in servers}
    for name, env in checkouts.items():
        print(f"  recompute --check ({name}): {recompute_check(tmp / f'{name}.db', env)}")
    if tree is not None:
        print(f"  {OURS} / {AGAINST}, segment by segment (median):")
        def rates(name: str, load: str) -> list[float]:
            if load == "batched":
                return [o.rate for o, _ in batches[name]]
            return [o.rate for o in singles[(name, load)]]

        for load in ("batched", *LOADS):
            ratios = [a / b for a, b in zip(rates(OURS, load), rates(AGAINST, load),
                                            strict=True)]
            print(f"    {load}: {', '.join(f'{r:.2f}' for r in ratios)} "
                  f"({statistics.median(ratios):.2f})")
    return found


def print_server(name: str, batches: list[tuple[Segment, float]],
                 singles: dict[tuple[str, str], list[Segment]], floor: Server,
                 per_segment: int) -> dict[str, float]:
    """One server's lines of a round; its three ratios."""
    ratios: dict[str, float] = {}
    middle, low, high = median_range([o.rate / r for o, r in batches])
    ratios[BATCHED] = middle
    print(f"  {name} batched: raw SQLite {statistics.median(r for _, r in batches):,.0f} "
          f"rows/s, {name} {statistics.median(o.rate for o, _ in batches):,.0f} "
          f"submissions/s (medians of {len(batches)} segments of {per_segment:,} batches); "
          f"/ raw SQLite = {middle:.2f} (segments {low:.2f}-{high:.2f}; goal >= "
          f"{GOALS[BATCHED]})")
    print(f"    CPU per submission (medians): "
          f"{statistics.median(o.cpu_us for o, _ in batches):.1f} µs server + "
          f"{statistics.median(o.child_us for o, _ in batches):.1f} µs ingest process")
    for load in LOADS:
        f, o = singles[(floor.name, load)], singles[(name, load)]
        middle, low, high = median_range([a.rate / b.rate for a, b in zip(o, f, strict=True)])
        key = f"single {load} / floor"
        ratios[key] = middle
        print(f"  {name} single, {load}: HTTP floor "
              f"{statistics.median(s.rate for s in f):,.0f}/s, {name} "
              f"{statistics.median(s.rate for s in o):,.0f}/s (medians of {len(f)} "
              f"segments); / floor = {middle:.2f} (segments {low:.2f}-{high:.2f}; "
              f"goal >= {GOALS[key]})")
        print(f"    CPU per submission (medians): floor "
              f"{statistics.median(s.cpu_us for s in f):.0f} µs; {name} "
              f"{statistics.median(s.cpu_us for s in o):.0f} µs server + "
              f"{statistics.median(s.child_us for s in o):.0f} µs ingest process; clients "
              f"{statistics.median(s.driver_us for s in o):.0f} µs")
        print(f"    cores busy (medians, of {os.cpu_count()}): floor and clients "
              f"{statistics.median(s.cores for s in f):.2f}; {name}, its ingest process "
              f"and clients {statistics.median(s.cores for s in o):.2f}")
    return ratios


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batches", type=int, default=60, help="batches of 1,000 per round")
    parser.add_argument("--batch-segments", type=int, default=3,
                        help="alternating segments the batches are sent in, next to raw SQLite")
    parser.add_argument("--singles", type=int, default=1500,
                        help="single submissions per segment (each load, each server)")
    parser.add_argument("--segments", type=int, default=6,
                        help="alternating segments of single submissions per round")
    parser.add_argument("--threads", type=int, default=8, help="server threads")
    parser.add_argument("--rounds", type=int, default=1, help="repeat the whole measurement")
    parser.add_argument("--against", type=Path, metavar="CHECKOUT",
                        help="another checkout of ldpsurvey (e.g. a `git worktree` of an "
                             "earlier commit): its server takes the same loads side by side")
    args = parser.parse_args()
    if args.against is not None and not (args.against / "pyproject.toml").is_file():
        parser.error(f"--against {args.against}: no pyproject.toml there")
    rng = np.random.default_rng(2026)
    rounds = []
    for round_ in range(args.rounds):
        print(f"{round_ + 1}. ", end="")
        rounds.append(one_round(args, rng, args.against))
    if args.rounds > 1:
        print(f"over {args.rounds} rounds:")
        for server in rounds[0]:
            for name, goal in GOALS.items():
                values = [r[server][name] for r in rounds]
                met = sum(v >= goal for v in values)
                print(f"  {server} {name}: {', '.join(f'{v:.2f}' for v in values)}; median "
                      f"{statistics.median(values):.2f}; goal >= {goal} met in {met} of "
                      f"{len(values)}")


if __name__ == "__main__":
    main()
