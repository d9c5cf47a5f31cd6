"""Accuracy of the two-server mode against the best single-server LDP mechanism (issue 18).

Run: `python bench/bench_two_server_accuracy.py [--reps R] [--markdown]`. Prints numbers,
asserts nothing; the last lines say whether the issue's target holds (at n = 1,000 and ε = 1
the total standard error of a 5-option share is at most 1/3 of the best LDP mechanism's).

"Total standard error": respondents are a random sample of a population, so every mode's
error counts sampling as well as privacy noise, the same accounting in both columns:
- LDP: the best mechanism that fits (k, ε) for the share at hand (`best_ldp_share`, plan/modes.py):
  its fixed-population variance plus sampling, f(1 - f)/n.
- two-server: f(1 - f)/n plus both servers' geometric noise 2σ²/n² (σ² = 2α/(1 - α)²,
  α = e^(-ε/Δ), Δ = 2 for a Histogram, 1 for a yes/no Count).
- hybrid: two-server with a local ε0 = 2 on the device first (GRR / binary RR), the
  estimator's own variance (`shared/two_server/estimates.py`).
Shares: a 5-option question at f = 0.2 (one of five equally common answers) and a yes/no
question at f = 0.5 (the worst case for sampling), plus the worst case over f for both.

The formulas are checked by simulation at every (n, ε) with `--reps` seeded batches
(respondents drawn from the population, local randomization, both servers' noise as numpy
geometric draws; the estimators under test): the simulated s.e. is printed next to the formula.
"""

from __future__ import annotations

import argparse
import math
import sys
from types import SimpleNamespace

import numpy as np
from ldpsurvey.analyst.plan.modes import best_ldp_share, design_worst, local_design
from ldpsurvey.shared.mechanisms import MECHANISMS
from ldpsurvey.shared.two_server.estimates import Design
from ldpsurvey.shared.two_server.noise import SERVERS, NoisePlan, noise_plan

NS = (200, 1_000, 10_000)
EPSILONS = (0.5, 1.0, 2.0)
LOCAL_EPSILON = 2.0
TARGET = 1 / 3
CASES = (("5-option share", "categorical", 5, 0.2), ("yes/no share", "binary", 2, 0.5))


def two_server_se(kind: str, eps: float, n: int, f: float) -> float:
    plan = noise_plan(kind, eps)
    return math.sqrt(f * (1 - f) / n + SERVERS * plan.variance / n**2)


def hybrid_se(qtype: str, k: int, eps: float, n: int, f: float | None) -> float:
    design = _hybrid_design(qtype, k)
    plan = noise_plan("count" if qtype == "binary" else "histogram", eps)
    if f is None:
        a, b = design_worst(design, plan.variance)
        return math.sqrt(a / n + b / n**2)
    per, _, noise = design.option_stats(_population(k, f))
    return math.sqrt(per[-1] / n + SERVERS * plan.variance * noise[-1] / n**2)


def _hybrid_design(qtype: str, k: int) -> Design:
    return local_design("binary_rr" if qtype == "binary" else "grr", qtype, k, LOCAL_EPSILON)


def _population(k: int, f: float) -> np.ndarray:
    """f on the last answer, the rest spread evenly."""
    pi = np.full(k, (1 - f) / (k - 1))
    pi[-1] = f
    return pi


def ldp_se(qtype: str, k: int, eps: float, n: int, f: float | None) -> tuple[float, str]:
    a, name = best_ldp_share(qtype, k, eps, f)
    return math.sqrt(a / n), name


# --- simulation -------------------------------------------------------------------------------


def _noise(rng: np.random.Generator, plan: NoisePlan, size: int) -> np.ndarray:
    p = 1.0 - plan.alpha
    total = np.zeros(size)
    for _ in range(SERVERS):
        total += rng.geometric(p, size) - rng.geometric(p, size)
    return total


def simulate_two_server(qtype: str, k: int, eps: float, n: int, f: float, reps: int,
                        rng: np.random.Generator, local: bool = False) -> float:
    """Empirical s.e. of the last option's share over `reps` batches."""
    pi = _population(k, f)
    kind = "count" if qtype == "binary" else "histogram"
    design = _hybrid_design(qtype, k) if local else Design(tuple(range(k)), kind, k)
    plan = noise_plan(kind, eps)
    counts = rng.multinomial(n, design.cell_probabilities(pi), size=reps).astype(float)
    if qtype == "binary":  # one released total: "yes"; "no" = n - yes carries its noise
        yes = counts[:, 1] + _noise(rng, plan, reps)
        counts = np.stack([n - yes, yes], axis=1)
    else:
        counts += _noise(rng, plan, counts.size).reshape(counts.shape)
    estimates = (counts @ design.dense_inverse()[-1]) / n
    return float(estimates.std(ddof=1))


def simulate_ldp(name: str, qtype: str, k: int, eps: float, n: int, f: float, reps: int,
                 rng: np.random.Generator) -> float:
    labels = (False, True) if qtype == "binary" else tuple(range(k))
    mech = MECHANISMS[name](eps, labels)
    pi = _population(k, f)
    estimates = np.empty(reps)
    for r in range(reps):
        answers = rng.choice(k, size=n, p=pi)
        aggregate = mech.aggregate_many(mech.perturb_many(answers, rng))
        estimates[r] = mech.estimate(aggregate).categories[-1].estimate
    return float(estimates.std(ddof=1))


# --- output -----------------------------------------------------------------------------------


def rows(reps: int, seed: int) -> list[SimpleNamespace]:
    rng = np.random.default_rng(seed)
    out = []
    for label, qtype, k, f in CASES:
        kind = "count" if qtype == "binary" else "histogram"
        for eps in EPSILONS:
            for n in NS:
                ldp, name = ldp_se(qtype, k, eps, n, f)
                two = two_server_se(kind, eps, n, f)
                hyb = hybrid_se(qtype, k, eps, n, f)
                worst_ldp, worst_name = ldp_se(qtype, k, eps, n, None)
                worst_two = two_server_se(kind, eps, n, 0.5)
                row = SimpleNamespace(case=label, f=f, eps=eps, n=n, ldp=ldp, mech=name,
                                      two=two, hybrid=hyb, ratio=two / ldp,
                                      worst_ratio=worst_two / worst_ldp, worst_mech=worst_name,
                                      sim_ldp=None, sim_two=None, sim_hybrid=None)
                if reps:
                    row.sim_ldp = simulate_ldp(name, qtype, k, eps, n, f,
                                               max(reps // (1 + n // 2000), 50), rng)
                    row.sim_two = simulate_two_server(qtype, k, eps, n, f, reps, rng)
                    row.sim_hybrid = simulate_two_server(qtype, k, eps, n, f, reps, rng,
                                                         local=True)
                out.append(row)
    return out


def pp(x: float | None) -> str:
    return "–" if x is None else f"{x * 100:.2f}"


def render(table: list[SimpleNamespace], markdown: bool) -> str:
    header = ["share", "ε", "n", "LDP best", "LDP s.e. pp (sim)", "two-server s.e. pp (sim)",
              f"hybrid ε0={LOCAL_EPSILON:g} s.e. pp (sim)", "two/LDP", "two/LDP worst case"]
    body = [[r.case + f" (f={r.f:g})", f"{r.eps:g}", f"{r.n:,}", r.mech,
             f"{pp(r.ldp)} ({pp(r.sim_ldp)})", f"{pp(r.two)} ({pp(r.sim_two)})",
             f"{pp(r.hybrid)} ({pp(r.sim_hybrid)})", f"{r.ratio:.3f}",
             f"{r.worst_ratio:.3f} ({r.worst_mech})"] for r in table]
    if markdown:
        lines = ["| " + " | ".join(header) + " |",
                 "|" + "|".join(["---"] * 4 + ["---:"] * (len(header) - 4)) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in body]
        return "\n".join(lines)
    widths = [max(len(x[i]) for x in [header, *body]) for i in range(len(header))]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True))
                     for row in [header, *body])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=2000,
                        help="simulated batches per cell (0: formulas only)")
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--markdown", action="store_true", help="a Markdown table")
    args = parser.parse_args()
    table = rows(args.reps, args.seed)
    print(render(table, args.markdown))
    target = next(r for r in table if r.case == "5-option share" and r.eps == 1.0
                  and r.n == 1_000)
    verdict = "met" if max(target.ratio, target.worst_ratio) <= TARGET else "MISSED"
    print(f"\nissue 18 target (n = 1,000, ε = 1, 5-option share: two-server s.e. <= 1/3 of "
          f"the best LDP's): {verdict}; ratio {target.ratio:.3f} at f = 0.2, "
          f"{target.worst_ratio:.3f} worst case over f")
    return 0


if __name__ == "__main__":
    sys.exit(main())
