"""Multiselect mechanisms side by side: each one's standard error of an option's share at
n = 10,000, over k in {5, 10, 20} options, at most m in {1, 3, k} selected, ε in {1, 2, 4}.

Run: `python bench/bench_multiselect.py [--simulate]`. Prints numbers, asserts nothing.

Per cell and mechanism (those that can serve the shape; set_ue only m <= k/2):
- worst: the worst-case per-option standard error, sqrt(V/n) with V the exact one-report
  variance at the worst truth (an option nobody or everybody selects; what the planner's
  margin guarantees, `SetMechanism.set_variances`);
- avg: the standard error averaged over the k options, worst case over the truth (what `auto`
  ranks by, as for categorical questions; shared/mechanisms/set_choice.py).
Then `auto`'s pick, and whether it is at or below the best of the others on each: on the
average by construction; on the worst case it can lose where padding and sampling pays for an
option everybody selects (docs/multiselect.md says where and why).

`--simulate` also measures the spread of each mechanism's estimates over 200 simulated
surveys of n respondents (the built-in Zipf-like sets, analyst/simulate/multiselect.py) for a
few cells, next to the formula's standard error at that truth: the formulas describe what the
simulations show (seeded numpy; simulation only).
"""

from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np
from ldpsurvey.shared.mechanisms import REPORT_SIZE_LIMIT
from ldpsurvey.shared.mechanisms.set_base import SetShape
from ldpsurvey.shared.mechanisms.set_choice import SET_MECHANISMS, set_candidates

KS = (5, 10, 20)
EPSILONS = (1.0, 2.0, 4.0)
N = 10_000
NAMES = tuple(SET_MECHANISMS)


def cell(shape: SetShape, epsilon: float) -> tuple[dict[str, tuple[float, float]], str]:
    """{name: (worst se, average se)} at n = N, and auto's pick."""
    ranked = set_candidates(shape, epsilon, REPORT_SIZE_LIMIT)
    ses = {name: (math.sqrt(worst / N), math.sqrt(average / N))
           for average, worst, name in ranked}
    return ses, ranked[0][2]


def table() -> None:
    print(f"standard error of an option's share at n = {N:,} (percentage points): "
          "worst case / averaged over options; * = auto's pick")
    head = "  ".join(f"{name:>17}" for name in NAMES)
    print(f"{'k':>3} {'m':>3} {'ε':>3}  {head}   auto        vs best worst   vs best avg")
    lost = []
    for k in KS:
        for m in sorted({1, 3, k}):
            for epsilon in EPSILONS:
                ses, auto = cell(SetShape(k, m), epsilon)
                cells = []
                for name in NAMES:
                    if name not in ses:
                        cells.append(f"{'–':>17}")
                        continue
                    worst, avg = ses[name]
                    mark = "*" if name == auto else " "
                    cells.append(f"{worst * 100:>7.3f} /{avg * 100:>6.3f}{mark}")
                best_worst = min(w for w, _ in ses.values())
                best_avg = min(a for _, a in ses.values())
                ratio_worst = ses[auto][0] / best_worst
                ratio_avg = ses[auto][1] / best_avg
                if ratio_worst > 1 + 1e-12:
                    lost.append((k, m, epsilon, auto, ratio_worst))
                print(f"{k:>3} {m:>3} {epsilon:>3g}  {'  '.join(cells)}   {auto:<10} "
                      f"{ratio_worst:>8.3f}x {ratio_avg:>12.3f}x")
    cells = len(KS) * 3 * len(EPSILONS)
    print(f"auto at or below the best average standard error: every cell (by construction); "
          f"at or below the best worst case: {cells - len(lost)} of {cells} cells")
    for k, m, epsilon, auto, ratio in lost:
        print(f"  worst case lost at k={k}, m={m}, ε={epsilon:g}: {auto} {ratio:.3f}x the best")


def simulate(runs: int = 200) -> None:
    from ldpsurvey.analyst.simulate.multiselect import default_set_truth
    from ldpsurvey.shared.survey import Survey

    print(f"\nsimulated spread over {runs} surveys of n = {N:,} (the built-in Zipf-like sets): "
          "measured s.d. / formula s.e. of the most and least selected option, percentage "
          "points")
    for k, m, epsilon in ((10, 3, 2.0), (20, 1, 1.0), (5, 5, 4.0)):
        rng = np.random.default_rng(k * 100 + m)
        question = Survey.from_dict({"id": "b", "title": "b", "version": 1, "questions": [
            {"id": "q", "text": "q", "type": "multiselect", "epsilon": epsilon,
             "options": [f"o{i}" for i in range(k)], "max_selected": m}]}).questions[0]
        sets = default_set_truth(question).draw(N, rng)  # a fixed population, re-randomized
        shares = sets.mean(axis=0)
        line = []
        for name in NAMES:
            cls = SET_MECHANISMS[name]
            if cls.shape_misfit(SetShape(k, m)) is not None:
                continue
            mech = cls(epsilon, question.labels, max_selected=m)
            estimates = np.array([mech.estimate(mech.aggregate_many(
                mech.perturb_many(sets, rng))).categories[j].estimate
                for _ in range(runs) for j in (0, k - 1)]).reshape(runs, 2)
            formula = np.sqrt(mech.option_variance(shares[[0, k - 1]], N))
            measured = estimates.std(axis=0, ddof=1)
            line.append(f"{name} {measured[0] * 100:.3f}/{formula[0] * 100:.3f}, "
                        f"{measured[1] * 100:.3f}/{formula[1] * 100:.3f}")
        print(f"  k={k} m={m} ε={epsilon:g}: " + "; ".join(line), flush=True)


def timing(reports: int = 2000) -> None:
    """One report drawn with the OS CSPRNG (the respondent's side), per mechanism."""
    print(f"\nsecure perturb (OS CSPRNG), Python client, mean of {reports} reports:")
    for k, m in ((5, 3), (20, 3), (64, 64)):
        line = []
        labels = tuple(f"o{i}" for i in range(k))
        answer = list(labels[:min(m, 3)])
        for name in NAMES:
            cls = SET_MECHANISMS[name]
            if cls.shape_misfit(SetShape(k, m)) is not None:
                continue
            start = time.perf_counter()
            mech = cls(2.0, labels, max_selected=m)
            built = (time.perf_counter() - start) * 1000
            start = time.perf_counter()
            for _ in range(reports):
                mech.perturb(answer)
            per = (time.perf_counter() - start) / reports * 1e6
            line.append(f"{name} build {built:.1f} ms, {per:.0f} µs/report")
        print(f"  k={k} m={m}: " + "; ".join(line), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--simulate", action="store_true",
                        help="also the spread of simulated estimates against the formulas")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    table()
    timing()
    if args.simulate:
        simulate()


if __name__ == "__main__":
    main()
