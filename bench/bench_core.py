"""Core throughput: secure perturb, perturb_many, aggregate updates, estimation, simulation.

Run: `python bench/bench_core.py [--quick]`. Prints numbers, asserts nothing. Every registered
mechanism at ε = 1, for k = 16 and k = 1024 where the mechanism takes categorical answers
(binary-only mechanisms: k = 2; integer mechanisms: ranges of 16 and 1024 values).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from ldpsurvey.analyst.simulate.survey import simulate_survey
from ldpsurvey.shared.mechanisms import MECHANISMS, Mechanism
from ldpsurvey.shared.survey import Survey

EPSILON = 1.0
ESTIMATE_N = 1_000_000
FREQUENCY_TYPES = {"categorical", "ordinal"}
# Fixed numbers of calls per domain size: large domains are slower per report (k-bit reports).
SECURE_CALLS = {16: 2_000, 1024: 1_000}
ONE_BY_ONE = {16: 20_000, 1024: 2_000}
MANY = {16: 200_000, 1024: 20_000}


def build(cls: type[Mechanism], k: int) -> Mechanism:
    if cls.question_types & FREQUENCY_TYPES:
        return cls(EPSILON, tuple(f"v{i}" for i in range(k)))
    if "binary" in cls.question_types:
        return cls(EPSILON, (False, True))
    return cls(EPSILON, range(k))


def sizes(cls: type[Mechanism]) -> list[int]:
    if not cls.question_types & (FREQUENCY_TYPES | {"integer"}):
        return [2]
    return [16, 1024]


def rate(count: int, fn: Callable[[], Any]) -> tuple[float, float]:
    """(items per second, seconds) for fn() processing `count` items."""
    start = time.perf_counter()
    fn()
    elapsed = time.perf_counter() - start
    return count / elapsed, elapsed


def wire(report: Any) -> Any:
    return report.tolist() if hasattr(report, "tolist") else report


def bench_mechanism(cls: type[Mechanism], k: int, secure_calls: int, one_by_one: int,
                    many: int) -> None:
    mech = build(cls, k)
    rng = np.random.default_rng(0)
    answers = rng.integers(0, k, size=many)
    labels = [mech.labels[i] for i in answers[:secure_calls]]

    secure, _ = rate(secure_calls, lambda: [mech.perturb(a) for a in labels])
    reports_box: list[Any] = []
    vector, _ = rate(many, lambda: reports_box.append(mech.perturb_many(answers, rng)))
    reports = reports_box[0]

    rows = [mech.validate_report(wire(r)) for r in reports[:one_by_one]]
    agg = mech.new_aggregate()
    add_one, _ = rate(one_by_one, lambda: [agg.add(r) for r in rows])
    add_many, _ = rate(many, lambda: mech.aggregate_many(reports))

    # Estimation at n = 10^6: the aggregate of `many` reports merged into itself up to 10^6
    # (aggregating 10^6 fresh reports costs minutes for the slowest decoders; estimate() only
    # sees the counters, so its time is the same).
    big = mech.new_aggregate()
    small = mech.aggregate_many(reports)
    while big.n + small.n <= ESTIMATE_N:
        big.merge(small)
    start = time.perf_counter()
    mech.estimate(big)
    estimate_s = time.perf_counter() - start

    print(f"{cls.name:<12} k={k:<5} secure perturb {secure:>10,.0f}/s   "
          f"perturb_many {vector:>12,.0f}/s   add {add_one:>9,.0f}/s   "
          f"add_many {add_many:>12,.0f}/s   estimate(n=1e6) {estimate_s * 1000:>8.1f} ms",
          flush=True)


def bench_simulate(n: int) -> None:
    survey = Survey.from_dict({
        "id": "bench", "title": "bench", "version": 1,
        "questions": [{"id": "q", "text": "q", "type": "categorical", "epsilon": EPSILON,
                       "options": [f"o{i}" for i in range(16)]}],
    })
    start = time.perf_counter()
    result = simulate_survey(survey, n, np.random.default_rng(1))
    elapsed = time.perf_counter() - start
    q = result.questions[0]
    print(f"simulate: {n:,} respondents, 16 options, {q.mechanism}: {elapsed:.2f} s "
          f"({n / elapsed:,.0f} respondents/s)", flush=True)


def bench_secure_bitmaps(calls: int = 3_000) -> None:
    """Secure perturb (OS CSPRNG, bulk draws) of the k-bit mechanisms at k = 1024, per wall
    second and per CPU second of this process (steadier on a shared, busy machine)."""
    for name in ("oue", "sue", "ss"):
        for epsilon in (0.1, 1.0, 5.0):
            mech = MECHANISMS[name](epsilon, tuple(f"v{i}" for i in range(1024)))
            labels = [mech.labels[i % 1024] for i in range(calls)]
            cpu = time.process_time()
            per_s, _ = rate(calls, lambda m=mech, a=labels: [m.perturb(x) for x in a])
            per_cpu_s = calls / (time.process_time() - cpu)
            print(f"{name:<4} k=1024 ε={epsilon:<4} secure perturb {per_s:>9,.0f} reports/s "
                  f"({per_cpu_s:,.0f} per CPU second)",
                  flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller counts, for a smoke run")
    parser.add_argument("--secure-bitmaps", action="store_true",
                        help="only secure perturb of the bitmap mechanisms (oue, sue, ss) at "
                             "k = 1024 over several ε (target >= 5,000 reports/s)")
    args = parser.parse_args()
    if args.secure_bitmaps:
        bench_secure_bitmaps()
        return
    scale = 10 if args.quick else 1
    print(f"ldpsurvey core benchmark, ε = {EPSILON}; per k: secure perturb over "
          f"{SECURE_CALLS[16] // scale:,}/{SECURE_CALLS[1024] // scale:,} calls (k <= 16/k = 1024),"
          f" add over {ONE_BY_ONE[16] // scale:,}/{ONE_BY_ONE[1024] // scale:,}, perturb_many and "
          f"add_many over {MANY[16] // scale:,}/{MANY[1024] // scale:,} reports")
    for name in sorted(MECHANISMS):
        cls = MECHANISMS[name]
        for k in sizes(cls):
            try:
                size = 16 if k <= 16 else 1024
                bench_mechanism(cls, k, SECURE_CALLS[size] // scale, ONE_BY_ONE[size] // scale,
                                MANY[size] // scale)
            except Exception as exc:  # a benchmark reports, it does not stop
                print(f"{name:<12} k={k:<5} FAILED: {type(exc).__name__}: {exc}", flush=True)
    bench_simulate(1_000_000)


if __name__ == "__main__":
    main()
