"""Two-server protocol speed: the device's upload, and leader + helper aggregation over HTTP.

1. Client: `build_upload` of the bundled sample survey as a two-server survey (encode, shard
   with proofs from os.urandom, seal both halves with HPKE), per call.
2. Servers: a real helper and leader (subprocesses, own SQLite each, loopback) aggregate N
   uploads of one Histogram k question (plus nothing else) in one aggregation request: the
   leader's prep_init, the HTTP job, the helper's opening, prep_init, combine, prep_next and
   commit, the leader's prep_next and commit. Reports/s = N / wall seconds of that request.

Prints numbers, asserts nothing. Run:
    .venv/bin/python bench/bench_two_server.py [--n 2000] [--k 16]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from bench_server import cpu_seconds
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.analyst.demo import sample_survey
from ldpsurvey.analyst.demo.two_server import two_server_version
from ldpsurvey.client.two_server import build_upload
from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.two_server.config import b64url
from support.clients import http_json
from support.two_server import signed_survey, start_pair


def client(calls: int) -> None:
    survey = two_server_version(sample_survey(), "https://helper.example", os.urandom(32),
                                os.urandom(32), 100)
    answers = {"rx_misuse": True, "cannabis_frequency": "weekly", "drinks_last_week": 4,
               "substances": ["stimulants", "cocaine"]}
    build_upload(survey, answers)  # warm the Prio3 instances
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(calls):
        build_upload(survey, answers)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    size = len(json.dumps(build_upload(survey, answers).wire()))
    print(f"client: sample survey (Count + Histogram k=5 + Sum 0..30) encode+shard+prove+seal: "
          f"{1000 * wall / calls:.2f} ms wall, {1000 * cpu / calls:.2f} ms CPU per upload; "
          f"upload {size:,} bytes of JSON")


def servers(n: int, k: int) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="bench-two-server-"))
    pair = start_pair(tmp)
    try:
        data = {"id": "bench", "title": "Bench", "version": 1, "collection": "two-server",
                "two_server": {"helper_url": pair.helper.url,
                               "helper_hpke_key": b64url(pair.helper_key),
                               "leader_hpke_key": b64url(pair.leader_key),
                               "min_batch_size": n},
                "questions": [{"id": "pick", "text": "Pick", "type": "categorical",
                               "central_epsilon": 1.0,
                               "options": [f"o{i}" for i in range(k)]}]}
        survey = Survey.from_dict(data)
        http_json("POST", pair.leader.url + "/api/surveys",
                  signed_survey(data, Ed25519PrivateKey.generate()), pair.token)
        for i in range(n):
            body = build_upload(survey, {"pick": f"o{i % k}"}).wire()
            http_json("POST", pair.leader.url + "/api/surveys/bench/two-server/uploads", body)
        procs = (pair.leader.proc.pid, pair.helper.proc.pid)
        cpu0 = sum(cpu_seconds(pid) for pid in procs)
        t0 = time.perf_counter()
        req = urllib.request.Request(
            pair.leader.url + "/api/surveys/bench/two-server/aggregate", data=b"{}",
            method="POST", headers={"Content-Type": "application/json",
                                    "Authorization": f"Bearer {pair.token}"})
        with urllib.request.urlopen(req, timeout=3600) as r:
            summary = json.loads(r.read())
        wall = time.perf_counter() - t0
        cpu = sum(cpu_seconds(pid) for pid in procs) - cpu0
        print(f"servers: Histogram k={k}, {n:,} reports, one batch over HTTP: {wall:.2f} s wall "
              f"({n / wall:,.0f} reports/s), {cpu:.2f} CPU s of both processes "
              f"({n / cpu:,.0f} reports per CPU second); {summary}")
    finally:
        pair.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--k", type=int, nargs="*", default=[16])
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    client(args.calls)
    for k in args.k:
        servers(args.n, k)


if __name__ == "__main__":
    main()
