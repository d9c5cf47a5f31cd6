"""Accuracy of the mean mechanisms for numbers (issue 41): duchi, piecewise, hybrid and geometric
noise on the same answer grid, and the choice `choose_mean_mechanism` makes.

Run: `python bench/bench_numeric_mean.py [--runs R] [--n N]`. Prints numbers, asserts nothing.

The question: an income in 0..200,000 kept to a resolution of 200 (k = 1,001 grid values, the
grid a `decimal` question with min 0, max 200000, resolution 200 would have). Three fixed
populations of n respondents (seeded): uniform over the range; skewed, a log-normal income
(median 30,000, σ = 0.9) clipped to the range; bimodal, two normal bumps at 25% and 80% of the
range. For each ε and mechanism, R runs randomize the same population (`perturb_many`, a seeded
numpy generator: simulation only) and estimate the mean.

Common random numbers. Run r of a cell seeds every mechanism's generator with the same seed,
crc32("<data> <ε> <r>"): the mechanisms are compared on the same uniforms, so where two are
the same channel they send the same reports and their MSEs tie instead of differing by the
runs' noise. Hybrid at ε <= ε* ≈ 0.61 (α = 0) is Duchi's channel: it draws no coin, only its
Duchi part's one draw per answer (hybrid.py), and `perturb_many` spends one uniform per answer
for both, so with one seed their reports are the same (index m + 1 + Duchi's). Its Duchi part
stands for e^ε with (a/b)², a/b the rational for e^(ε/2), where duchi.py uses a rational for
e^ε directly (relative difference < 10^-9), so the two estimates differ by about 10^-10 of the
mean: MSEs within a relative 10^-6 (TIE) count as equal ("= best").

The table gives the empirical MSE of
the mean (around the true mean of the population) against the exact variance for that
population (Σ_j c_j Var_j / n², Var_j the discretized channel's, exact in rationals; geometric's
2α/(α - 1)² steps²); R·MSE/σ² ~ χ²(R) when the exact variance is right, "ok" when it lies in the
two-sided 99% band. Then which mechanism has the lowest MSE and the lowest exact variance, and
the ones `choose_mean_mechanism` picks: by default (variance averaged over the grid values), by
the worst case, with the population's own histogram as the prior (an oracle for what a
designer's good guess can do), and as a survey's `auto` picks it at publish with the designer's
`typical = [a, b]` (shared/question_types/number_grid.py: equal weights on the grid values from
a to b) set to the population's 10th-90th percentiles, "auto (typical)", and to its 25th-75th,
"auto (typ IQR)"; "x1.26" is the MSE over the best's. Last, per cell, whether auto by default
and auto with the typical range are at or below the best MSE.

The second table is on the papers' scale [-1, 1]: each mechanism's exact worst-case variance with
one report (discretized, with the rational stand-ins for e^ε) against the paper's continuous
formula, and Laplace-type noise's 8/ε².
"""

from __future__ import annotations

import argparse
import math
import time
import zlib
from decimal import Decimal

import numpy as np
from ldpsurvey.shared.mechanisms.duchi import Duchi
from ldpsurvey.shared.mechanisms.geometric import Geometric
from ldpsurvey.shared.mechanisms.hybrid import Hybrid, paper_worst_variance
from ldpsurvey.shared.mechanisms.numeric_auto import choose_mean_mechanism
from ldpsurvey.shared.mechanisms.piecewise import Piecewise, piecewise_grid
from ldpsurvey.shared.question_types import unit_for
from ldpsurvey.shared.question_types.number_grid import resolve_mechanism
from scipy.stats import chi2

EPSILONS = (0.5, 1.0, 2.0, 4.0)
LOW, HIGH, RESOLUTION = 0, 200_000, 200
K = (HIGH - LOW) // RESOLUTION + 1
NAMES = ("duchi", "piecewise", "hybrid", "geometric")
TIE = 1e-6  # MSEs this close (relative) are equal: the same channel on the same uniforms


def populations(n: int) -> dict[str, np.ndarray]:
    """Grid indices of the three fixed populations."""
    rng = np.random.default_rng(41)
    uniform = rng.integers(0, K, n)
    income = np.clip(rng.lognormal(math.log(30_000), 0.9, n), LOW, HIGH)
    skewed = np.rint((income - LOW) / RESOLUTION).astype(np.int64)
    bump = rng.random(n) < 0.5
    bimodal = np.where(bump, rng.normal(0.25 * (K - 1), 0.06 * (K - 1), n),
                       rng.normal(0.8 * (K - 1), 0.05 * (K - 1), n))
    bimodal = np.clip(np.rint(bimodal), 0, K - 1).astype(np.int64)
    return {"uniform": uniform, "skewed": skewed, "bimodal": bimodal}


def mechanisms(epsilon: float) -> dict[str, object]:
    unit = Decimal(RESOLUTION)
    grid = range(LOW // RESOLUTION, HIGH // RESOLUTION + 1)
    return {"duchi": Duchi(epsilon, grid, unit=unit),
            "piecewise": Piecewise(epsilon, grid, unit=unit),
            "hybrid": Hybrid(epsilon, grid, unit=unit),
            "geometric": Geometric(epsilon, grid)}


def estimate_mean(name: str, mech: object, answers: np.ndarray,
                  rng: np.random.Generator) -> float:
    reports = mech.perturb_many(answers, rng)  # type: ignore[attr-defined]
    if name == "geometric":  # reports are grid labels plus noise
        return float(np.mean(reports)) * RESOLUTION
    agg = mech.aggregate_many(reports)  # type: ignore[attr-defined]
    return float(mech.estimate(agg).mean.estimate)  # type: ignore[attr-defined]


def exact_variance(name: str, mech: object, counts: np.ndarray, n: int) -> float:
    if name == "geometric":
        return Geometric.noise_variance(K, mech.epsilon) * RESOLUTION**2 / n  # type: ignore[attr-defined]
    return mech.fixed_population_variance(counts.tolist())  # type: ignore[attr-defined]


def typical_choice(answers: np.ndarray, epsilon: float, percentiles: tuple[int, int]) -> str:
    """The mean mechanism a decimal question (min 0, max 200,000, resolution 200, `auto`) picks
    at publish with `typical` set to these percentiles of the population's answers."""
    unit = unit_for("decimal")
    low, high = np.percentile(answers * RESOLUTION + LOW, percentiles)
    spec = unit.parse_spec({"min": LOW, "max": HIGH, "resolution": RESOLUTION,
                            "typical": [float(low), float(high)]}, "bench")
    name, _, _ = resolve_mechanism(unit, spec, epsilon, "auto", {}, "bench")
    return name


def at_or_below(mse: dict[str, float], pick: str) -> bool:
    return mse[pick] <= min(mse.values()) * (1 + TIE)


def accuracy_table(n: int, runs: int) -> None:
    pops = populations(n)
    low, high = chi2.ppf([0.005, 0.995], runs) / runs
    print(f"Mean of an income on 0..{HIGH:,} at resolution {RESOLUTION} (k = {K}), n = {n:,}, "
          f"R = {runs} runs (common random numbers); MSE/exact: R·MSE/σ² in the 99% band "
          f"[{low:.3f}, {high:.3f}] is 'ok'")
    columns = ("auto", "auto (worst)", "auto (prior)", "auto (typical)", "auto (typ IQR)")
    print(f"{'data':>8} {'eps':>4} | " + " | ".join(f"{m:>27}" for m in NAMES)
          + " | best MSE  | best exact | " + " | ".join(f"{c:<16}" for c in columns))
    print(f"{'':>8} {'':>4} | " + " | ".join(f"{'MSE':>9} {'exact':>9} {'ratio':>7}"
                                             for _ in NAMES))
    misses, verdicts = [], []
    for data, answers in pops.items():
        counts = np.bincount(answers, minlength=K)
        truth = float(np.mean(answers)) * RESOLUTION + LOW
        for epsilon in EPSILONS:
            mechs = mechanisms(epsilon)
            errors: dict[str, list[float]] = {name: [] for name in mechs}
            for run in range(runs):
                seed = zlib.crc32(f"{data} {epsilon} {run}".encode())
                for name, mech in mechs.items():
                    rng = np.random.default_rng(seed)  # the same uniforms for every mechanism
                    errors[name].append(estimate_mean(name, mech, answers, rng) - truth)
            mse, exact, cells = {}, {}, []
            for name, mech in mechs.items():
                mse[name] = float(np.mean(np.square(errors[name])))
                exact[name] = exact_variance(name, mech, counts, n)
                ratio = mse[name] / exact[name]
                flag = "ok" if low <= ratio <= high else "!!"
                cells.append(f"{mse[name]:9.4g} {exact[name]:9.4g} {ratio:5.2f}{flag}")
            best = min(mse, key=mse.__getitem__)
            best_exact = min(exact, key=exact.__getitem__)
            picks = [choose_mean_mechanism(K, epsilon).name,
                     choose_mean_mechanism(K, epsilon, worst_case=True).name,
                     choose_mean_mechanism(K, epsilon, counts).name,
                     typical_choice(answers, epsilon, (10, 90)),
                     typical_choice(answers, epsilon, (25, 75))]
            for label, pick in (("by default", picks[0]), ("with typical 10-90", picks[3])):
                if not at_or_below(mse, pick):
                    misses.append((data, epsilon, label, pick, best,
                                   exact[pick] / exact[best]))
            verdicts.append((data, epsilon, best, picks[0], at_or_below(mse, picks[0]),
                             picks[3], at_or_below(mse, picks[3])))
            print(f"{data:>8} {epsilon:4g} | " + " | ".join(cells)
                  + f" | {best:>9} | {best_exact:>10} | " + " | ".join(
                      f"{pick:>9} " + (f"{'= best':>6}" if at_or_below(mse, pick)
                                       else f"x{mse[pick] / mse[best]:5.2f}")
                      for pick in picks))
    print("\nPer cell, auto at or below the best MSE (within TIE), by default and with the "
          "typical range at the 10th-90th percentiles:")
    for data, epsilon, best, default, ok, typical, typical_ok in verdicts:
        print(f"  {data:>8} ε = {epsilon:<3g} best {best:<9}  default {default:<9} "
              f"{'yes' if ok else 'NO ':<3}  typical {typical:<9} {'yes' if typical_ok else 'NO'}")
    print(f"  at or below the best: default {sum(v[4] for v in verdicts)} of {len(verdicts)}, "
          f"typical {sum(v[6] for v in verdicts)} of {len(verdicts)}")
    if misses:
        print("\nWhere auto is not at or below the lowest MSE, the exact variances for this "
              "population (auto's / the best's): > 1 the data favour another mechanism, "
              "about 1 the runs' noise decided:")
        for data, epsilon, label, auto, best, factor in misses:
            print(f"  {data} at ε = {epsilon:g}, {label}: {auto} vs {best}, exact variance "
                  f"ratio {factor:.3f}")


def formula_table() -> None:
    print("\nOne report's variance on [-1, 1] (the papers' scale), worst case over the answer; "
          "exact = the discretized channel on k = 1001 grid values")
    print(f"{'eps':>4} | {'duchi exact':>11} {'paper':>7} | {'pm exact':>9} {'paper':>7} "
          f"{'t=0':>6} {'cells':>5} {'+round':>7} | {'hm exact':>8} {'paper':>7} | "
          f"{'geometric':>9} {'8/eps^2':>7}")
    for epsilon in EPSILONS:
        e, s = math.exp(epsilon), math.exp(epsilon / 2)
        duchi_paper = ((e + 1) / (e - 1)) ** 2
        pm_zero = (s + 3) / (3 * (s - 1) ** 2)
        pm_paper = 1 / (s - 1) + pm_zero
        pm_exact = Piecewise.scaled_worst_case_variance(K, epsilon)
        grid = piecewise_grid(K, epsilon)
        rounding = float(Piecewise.grid_variances(K, epsilon)[K // 2]) / pm_zero - 1
        geometric = Geometric.noise_variance(K, epsilon) * (2 / (K - 1)) ** 2
        print(f"{epsilon:4g} | {Duchi.scaled_worst_case_variance(K, epsilon):11.4f} "
              f"{duchi_paper:7.4f} | {pm_exact:9.4f} {pm_paper:7.4f} {pm_zero:6.3f} "
              f"{grid.m:5d} {rounding:+7.2%} | "
              f"{Hybrid.scaled_worst_case_variance(K, epsilon):8.4f} "
              f"{paper_worst_variance(epsilon):7.4f} | {geometric:9.4f} {8 / epsilon**2:7.4f}")
    print("(+round: PM's discretized variance at t = 0 over the paper's, the cost of the cells)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=200, help="runs per cell (R)")
    parser.add_argument("--n", type=int, default=10_000, help="respondents")
    args = parser.parse_args()
    start = time.process_time()
    accuracy_table(args.n, args.runs)
    formula_table()
    print(f"\nCPU {time.process_time() - start:.1f} s")


if __name__ == "__main__":
    main()
