"""Load benchmark: many concurrent clients against a real `ldpsurvey serve` on loopback.

Prints throughput (submissions per second) and p50/p99 request latency for single and batched
submissions. Asserts nothing: the numbers depend on the machine and whatever shares its CPU
(the clients run in this process, so they compete with the server for the same cores).

    .venv/bin/python bench/bench_load.py [--clients 50] [--total 100000] [--singles 100]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from support.load import ServerProcess, percentile, plan_requests, run_clients


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--total", type=int, default=100_000, help="submissions in total")
    parser.add_argument("--singles", type=int, default=100,
                        help="single-submission requests per client; the rest are batched")
    parser.add_argument("--batch", type=int, nargs="+", default=[50, 200, 1000, 100])
    parser.add_argument("--threads", type=int, default=8, help="server threads")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        server = ServerProcess(Path(tmp) / "bench.db", threads=args.threads)
        server.start()
        try:
            server.publish(server.token())
            plans = plan_requests(args.clients, args.total, singles=args.singles,
                                  batch_sizes=args.batch, seed=1)
            logs, seconds = run_clients(server.url, plans)
        finally:
            server.stop()

    statuses = sum((log.statuses for log in logs), Counter())
    accepted = sum(len(log.accepted) for log in logs)
    singles = [x for log in logs for x in log.single_latency]
    batches = [x for log in logs for x in log.batch_latency]
    print(f"clients {args.clients}, server threads {args.threads}, "
          f"{sum(statuses.values())} requests in {seconds:.2f} s; statuses {dict(statuses)}")
    print(f"throughput: {accepted / seconds:,.0f} submissions/s accepted ({accepted:,} in total)")
    for name, values in (("single", singles), ("batch", batches)):
        print(f"{name:>6} requests: n={len(values):,}  p50 {1000 * percentile(values, 50):.1f} ms"
              f"  p99 {1000 * percentile(values, 99):.1f} ms")
    errors = [e for log in logs for e in log.errors]
    if errors:
        print(f"{len(errors)} client errors, first: {errors[0]}")


if __name__ == "__main__":
    main()
