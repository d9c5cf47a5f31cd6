"""Profile a real `ldpsurvey serve` under one ingest load (prints, asserts nothing).

    .venv/bin/python bench/profile_ingest.py single|fresh|batched [--py-spy OUT] [--strace OUT]

Starts a server on a fresh SQLite database, publishes bench_ingest's survey and drives one of
bench_ingest's loads (8 keep-alive clients sending one submission each; the same with a new
connection per request; 4 clients sending batches of 1,000). Prints the rate and the server's
user and system CPU per submission next to the driver's own, so a change to the ingest path
can be profiled the way issue 22's was:
- `--py-spy OUT`: `py-spy record --gil` on the server (only samples that hold the GIL), raw
  collapsed stacks in OUT, and the top frames by own and total share printed here;
- `--strace OUT`: `strace -c -f` on the server: system calls per submission (futex counts
  show how often threads hand the GIL over).
Reports are simulated with seeded numpy generators (benchmark only, never a device path).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_ingest import fresh_connection_clients, simulated, start_server, stop
from bench_server import run_clients


def cpu_split(pid: int) -> tuple[float, float]:
    """(user, system) CPU seconds of a process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def attach(tool: list[str]) -> subprocess.Popen:
    proc = subprocess.Popen(tool, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)  # let the profiler attach before the load starts
    return proc


def print_stacks(path: str, top: int = 25) -> None:
    """The frames that hold the GIL most, by own samples and by samples under them."""
    own: collections.Counter[str] = collections.Counter()
    under: collections.Counter[str] = collections.Counter()
    total = 0
    for line in Path(path).read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack:
            continue
        n = int(count)
        total += n
        frames = stack.split(";")
        own[frames[-1]] += n
        for frame in set(frames):
            under[frame] += n
    print(f"py-spy: {total} samples holding the GIL")
    for title, counter in (("own", own), ("total", under)):
        print(f"  by {title} share:")
        for frame, n in counter.most_common(top):
            print(f"    {n / max(total, 1) * 100:5.1f}%  {frame}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("load", choices=["single", "fresh", "batched"])
    parser.add_argument("--n", type=int, default=6000, help="submissions (singles)")
    parser.add_argument("--batches", type=int, default=60)
    parser.add_argument("--py-spy", dest="py_spy", metavar="OUT")
    parser.add_argument("--strace", metavar="OUT")
    args = parser.parse_args()
    rng = np.random.default_rng(2026)
    if args.load == "batched":
        bodies = [json.dumps({"submissions": simulated(1000, rng)}).encode()
                  for _ in range(args.batches)]
        n = 1000 * args.batches
    else:
        bodies = [json.dumps(s).encode() for s in simulated(args.n, rng)]
        n = args.n
    tmp = Path(tempfile.mkdtemp(prefix="ldpsurvey-profile-"))
    proc, port = start_server(tmp / "profile.db")
    tools = []
    try:
        if args.py_spy:
            spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
            tools.append(attach([spy, "record", "--gil", "-r", "200", "-f", "raw",
                                 "-p", str(proc.pid), "-o", args.py_spy]))
        if args.strace:
            tools.append(attach(["strace", "-c", "-f", "-o", args.strace,
                                 "-p", str(proc.pid)]))
        user, system = cpu_split(proc.pid)
        driver = own_cpu()
        if args.load == "batched":
            seconds, failed = run_clients(port, bodies, 4)
        elif args.load == "single":
            seconds, failed = run_clients(port, bodies, 8)
        else:
            seconds, failed = fresh_connection_clients(port, bodies, 8), 0
        user2, system2 = cpu_split(proc.pid)
        driver = own_cpu() - driver
        print(f"{args.load}: {n / seconds:,.0f} submissions/s ({failed} non-2xx); per "
              f"submission: server user {(user2 - user) / n * 1e6:.0f} µs, system "
              f"{(system2 - system) / n * 1e6:.0f} µs; driver {driver / n * 1e6:.0f} µs")
    finally:
        for tool in tools:
            tool.send_signal(signal.SIGINT)
            tool.wait(timeout=60)
        stop(proc)
    if args.py_spy:
        print_stacks(args.py_spy)
    if args.strace:
        print("\n".join(Path(args.strace).read_text().splitlines()[:14]))


if __name__ == "__main__":
    main()
