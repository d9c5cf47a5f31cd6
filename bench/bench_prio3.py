"""Prio3 speed: both aggregators' preparation + aggregation per report, and client sharding.

The machine is shared, so each number is given per wall-clock second and per CPU second of
this process (the second is what one free core would do).

Prints numbers, asserts nothing. Run: .venv/bin/python bench/bench_prio3.py [--seconds 2]
"prep+agg" is one process doing, per report, what the leader and the helper do together:
decode both input shares, prep_init x2, prep_shares_to_prep, prep_next x2, agg_update x2
(messages pass through their byte encodings, as they would over HTTP). Reports are sharded
beforehand and not timed. Histogram chunk lengths are best_chunk_length(k).
"""

from __future__ import annotations

import argparse
import os
import platform
import time

from ldpsurvey.shared.prio3 import (
    Prio3,
    best_chunk_length,
    prio3_count,
    prio3_histogram,
    prio3_sum,
    prio3_sumvec,
)

CTX = b"ldpsurvey bench survey"


def prep_agg_rate(vdaf: Prio3, measurement, seconds: float) -> tuple[float, float]:
    """(reports per wall-clock second, reports per CPU second of this process)."""
    key = os.urandom(vdaf.VERIFY_KEY_SIZE)
    reports = []
    for _ in range(200):
        nonce, public, shares = vdaf.shard_random(CTX, measurement)
        reports.append((nonce, vdaf.encode_public_share(public),
                        [vdaf.encode_input_share(j, s) for j, s in enumerate(shares)]))
    aggs = [vdaf.agg_init(None), vdaf.agg_init(None)]
    done = 0
    start, cpu_start = time.perf_counter(), time.process_time()
    while time.perf_counter() - start < seconds:
        for nonce, public_bytes, share_bytes in reports:
            public = vdaf.decode_public_share(public_bytes)
            states, prep_shares = [], []
            for j in (0, 1):
                share = vdaf.decode_input_share(j, share_bytes[j])
                state, prep_share = vdaf.prep_init(key, CTX, j, None, nonce, public, share)
                states.append(state)
                prep_shares.append(vdaf.decode_prep_share(vdaf.encode_prep_share(prep_share)))
            msg = vdaf.prep_shares_to_prep(CTX, None, prep_shares)
            for j in (0, 1):
                out = vdaf.prep_next(CTX, states[j], msg)
                aggs[j] = vdaf.agg_update(None, aggs[j], out)
        done += len(reports)
    return (done / (time.perf_counter() - start), done / (time.process_time() - cpu_start))


def shard_ms(vdaf: Prio3, measurement, n: int = 300) -> tuple[float, float]:
    """(wall-clock ms, CPU ms) per shard_random call."""
    start, cpu_start = time.perf_counter(), time.process_time()
    for _ in range(n):
        vdaf.shard_random(CTX, measurement)
    return ((time.perf_counter() - start) / n * 1000,
            (time.process_time() - cpu_start) / n * 1000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    args = parser.parse_args()
    print(f"python {platform.python_version()} on {platform.machine()}, "
          f"{os.cpu_count()} cpus; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")

    print("\nprep+agg (both aggregators, one process): reports/s wall-clock, per CPU second")
    cases = [("Count", prio3_count(), 1), ("Sum 0..30", prio3_sum(30), 17)]
    for k in (2, 5, 16, 64, 256):
        cases.append((f"Histogram k={k} chunk={best_chunk_length(k)}",
                      prio3_histogram(k, best_chunk_length(k)), k - 1))
    cases.append(("SumVec 8x8 bits", prio3_sumvec(8, 8, best_chunk_length(64)), [200] * 8))
    for name, vdaf, m in cases:
        wall, cpu = prep_agg_rate(vdaf, m, args.seconds)
        print(f"  {name:34s} {wall:9.0f} {cpu:9.0f}", flush=True)

    print("\nclient shard (os.urandom randomness): ms wall-clock, CPU ms")
    total = [0.0, 0.0]
    for name, vdaf, m in [("Count", prio3_count(), 1), ("Sum 0..30", prio3_sum(30), 17),
                          ("Histogram k=5", prio3_histogram(5, best_chunk_length(5)), 3),
                          ("Histogram k=16", prio3_histogram(16, best_chunk_length(16)), 3),
                          ("Histogram k=256", prio3_histogram(256, best_chunk_length(256)), 3)]:
        wall, cpu = shard_ms(vdaf, m)
        if name in ("Count", "Sum 0..30", "Histogram k=5"):
            total = [total[0] + wall, total[1] + cpu]
        print(f"  {name:34s} {wall:9.3f} {cpu:9.3f}")
    print(f"  {'sample survey (Count+Hist5+Sum30)':34s} {total[0]:9.3f} {total[1]:9.3f}")


if __name__ == "__main__":
    main()
