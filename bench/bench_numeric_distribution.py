"""Square Wave + EMS (issue 41): distribution accuracy and median interval coverage.

Run: `python bench/bench_numeric_distribution.py [--wasserstein-runs R] [--coverage-runs R]
[--sizes 2000,20000] [--coverage-epsilons 1,2] [--data uniform,lognormal,bimodal,beta]
[--epsilons-of beta=1] [--runs-file F] [--skip accuracy|coverage]... [--table-only]
[--point-runs R]`. Prints tables, asserts nothing.

(a) Accuracy, the paper's synthetic setting (Li et al., SIGMOD 2020, §6): answers from
Beta(5, 2) on [0, 1], bucketized into d = 1024 buckets, n = 10^5 respondents, ε in
{0.5, 1, 2, 4}; the Wasserstein distance W1 = Σ_j |F̂_j - F_j|/d between the estimate and the
histogram of the run's own answers (the paper measures against the data set itself). The
paper gives its distances only as curves, so both sides are measured here on the same answers:
ours (the discretized, exactly sampled Square Wave over 1024 grid points and m = 1024 + 2B
report cells, EMS) and the paper's own pipeline as its public reference code runs it
(continuous ṽ drawn in floating point, bucketized into 1024 output buckets over [-b, 1 + b],
the transform integrated over each input bucket, here exactly (`mean_overlap`), the same EMS:
uniform start, (1, 2, 1)/4 smoothing, τ = 10^-3, the 1/n move). Each ratio of mean distances
comes with its 95% interval over paired runs (delta method); the target is ours within 1.2x.
One EMS fit per run and estimator, all runs in one batch: ~0.3 s of CPU per run.

(b) Interval coverage: the 95% intervals of the 1st quartile, median and 3rd quartile that
`distribution_estimate` reports (EMS on the counts and on R = 79 bootstrap replicates, each
interval the percentile interval of the replicates' quartiles, their 2nd and 78th smallest,
widened to the estimate should it fall outside: `quantile_summary`), over independent runs
(default 400) at n = 2,000 and 20,000, ε in {1, 2}, on answers over a grid of 1024 points from
a uniform law, a log-normal income (0..200,000, median 40,000, σ = 0.7, top-coded), a bimodal
mixture (40% N(250, 60), 60% N(700, 90)) and Beta(5, 2) (the paper's law, median 752.7 of
0..1023); the truth is the quantile of the exact bucketized law read as `Cells.quantile` reads
estimates. Each cell's coverage is printed with its exact (Clopper-Pearson) 95% interval and
with the band where an exactly-95% interval's measured coverage falls with probability 95% over
that many runs (at 400 runs [0.928, 0.970]). Runs go round-robin over the cells, one JSON line
each in --runs-file (default numeric-coverage-runs-percentile.jsonl), and a rerun resumes: a
bench cut short keeps every cell's runs so far (--table-only prints them). Earlier files, kept
for the history in the results file: numeric-coverage-runs.jsonl (the percentile interval at R
= 199) and numeric-coverage-runs-inversion*.jsonl (R = 79; the reported interval then was test
inversion of the EMS CDF, and each quartile's entry also holds the same replicates' percentile
interval: --table-only shows both). Simulated answers and reports come from numpy generators
seeded per run (a simulation, not a device). CPU per run: see the results file.

(c) --point-runs R: the quartile estimates' own bias and standard deviation over R runs per
cell, one EMS fit each (no intervals, so 1/200 of a coverage run's CPU).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from pathlib import Path

import numpy as np
from ldpsurvey.shared.mechanisms.square_wave import SquareWave
from ldpsurvey.shared.numeric.distribution import (
    QUARTILES,
    RESAMPLES,
    Cells,
    bootstrap_counts,
    quantile_summary,
    window_channel,
)
from ldpsurvey.shared.numeric.ems import WindowChannel, ems
from scipy import sparse, stats

D = 1024
BETA = stats.beta(5, 2)


def paper_b(epsilon: float) -> float:
    """The paper's b in floating point, as its pipeline computes it."""
    e = math.exp(epsilon)
    return (epsilon * e - e + 1) / (2 * e * (e - 1 - epsilon))


class PaperChannel:
    """The paper's bucketized transform for `ems`: A = q·w (every entry: the far density over
    an output bucket of width w) + (p - q)·O, O[y, j] the mean overlap of output bucket y with
    [v - b, v + b] for v uniform in input bucket j: a band, kept sparse (exact products,
    a few times fewer operations than the dense m x d matrix)."""

    def __init__(self, epsilon: float, d: int = D, m: int = D) -> None:
        b = paper_b(epsilon)
        e = math.exp(epsilon)
        p, q = e / (2 * b * e + 1), 1 / (2 * b * e + 1)
        self.d, self.far = d, q * (1 + 2 * b) / m
        overlap = mean_overlap(b, d, m)
        overlap[overlap < 1e-12 * overlap.max()] = 0.0  # rounding residue outside the band
        self.band = sparse.csr_matrix((p - q) * overlap.T)  # (m, d)

    def dense(self) -> np.ndarray:
        return self.far + self.band.toarray()

    def reports(self, f: np.ndarray) -> np.ndarray:
        return self.far * f.sum(axis=1, keepdims=True) + (self.band @ f.T).T

    def pull_back(self, g: np.ndarray) -> np.ndarray:
        return self.far * g.sum(axis=1, keepdims=True) + (self.band.T @ g.T).T


def mean_overlap(b: float, d: int, m: int) -> np.ndarray:
    """(d, m): the length of output bucket y ∩ [v - b, v + b], v uniform in input bucket
    [j/d, (j + 1)/d], output buckets splitting [-b, 1 + b] into m, exactly: the measure of
    {(v, x): |x - v| <= b} over the two buckets' rectangle is H(b) - H(-b), H(t) =
    ∫ clip(v + t - e0, 0, e1 - e0) dv = Φ(a1 + t) - Φ(a0 + t) with Φ that clip's antiderivative."""
    a = np.arange(d + 1)[:, None] / d
    edges = np.linspace(-b, 1 + b, m + 1)[None, :]
    e0, e1 = edges[:, :-1], edges[:, 1:]

    def antiderivative(u: np.ndarray) -> np.ndarray:
        inside = np.clip(u - e0, 0, e1 - e0)
        return inside**2 / 2 + (e1 - e0) * np.clip(u - e1, 0, None)

    def h(t: float) -> np.ndarray:
        return antiderivative(a[1:] + t) - antiderivative(a[:-1] + t)

    return (h(b) - h(-b)) * d


def paper_reports(epsilon: float, v: np.ndarray, rng: np.random.Generator,
                  m: int = D) -> np.ndarray:
    """The paper's sampler (floating point: a reproduction only, never on a device)."""
    b = paper_b(epsilon)
    e = math.exp(epsilon)
    near = rng.random(v.size) < 2 * b * e / (2 * b * e + 1)
    inside = v - b + 2 * b * rng.random(v.size)
    far = rng.random(v.size) * 1.0  # the rest of [-b, 1 + b]: length 1, split around v
    far = np.where(far < v, far - b, far + b)
    out = np.where(near, inside, far)
    return np.clip(((out + b) / (1 + 2 * b) * m).astype(int), 0, m - 1)


def wasserstein(f: np.ndarray, true: np.ndarray) -> np.ndarray:
    """W1 on [0, 1] between distributions over the same d buckets, per row: Σ_j |F̂_j - F_j|/d
    (the paper's; scipy's wasserstein_distance between the buckets' weights, in units of the
    range)."""
    return np.abs(np.cumsum(f, axis=-1) - np.cumsum(true, axis=-1)).sum(axis=-1) / true.shape[-1]


def ratio_interval(ours: np.ndarray, paper: np.ndarray, z: float = 1.96) -> tuple[float, float]:
    """The ratio of mean distances and its half-width at level z, by the delta method over
    paired runs (each run's two estimators share its answers): var(r)/r² = (s_o²/m_o² +
    s_p²/m_p² - 2 s_op/(m_o m_p))/R."""
    runs = ours.size
    mo, mp = ours.mean(), paper.mean()
    cov = np.cov(ours, paper)
    rel = (cov[0, 0] / mo**2 + cov[1, 1] / mp**2 - 2 * cov[0, 1] / (mo * mp)) / runs
    return mo / mp, z * mo / mp * math.sqrt(rel)


def accuracy(epsilons: list[float], runs: int, n: int) -> None:
    """(a): for each ε, `runs` data sets of n Beta(5, 2) answers, each reported once through
    ours and once through the paper's pipeline; all runs' EMS fits in one batch per estimator
    (each row stops by its own rule, as alone)."""
    print(f"\n(a) Beta(5,2), d = {D}, n = {n:,}: Wasserstein distance to the answers' own "
          f"histogram, mean ± s.e. over {runs} runs")
    print("| ε | B (steps) | ours: exact discrete SW + EMS | paper's float SW + EMS | "
          "ratio (95% CI) | CPU s |")
    print("|---:|---:|---:|---:|---:|---:|")
    for epsilon in epsilons:
        cpu = time.process_time()
        mech = SquareWave(epsilon, range(D))
        ours_channel = WindowChannel(mech.d, mech.window, float(mech.p_cell),
                                     float(mech.q_cell))
        paper_channel = PaperChannel(epsilon)
        rng = np.random.default_rng(int(epsilon * 1000))
        hist, ours_counts, paper_counts = [], [], []
        for _ in range(runs):
            v = BETA.rvs(n, random_state=rng)
            answers = np.minimum((v * D).astype(int), D - 1)
            hist.append(np.bincount(answers, minlength=D) / n)
            ours_counts.append(np.bincount(mech.perturb_many(answers, rng), minlength=mech.m))
            paper_counts.append(np.bincount(paper_reports(epsilon, v, rng), minlength=D))
        true = np.array(hist)
        ours = wasserstein(ems(ours_channel, np.array(ours_counts)), true)
        paper = wasserstein(ems(paper_channel, np.array(paper_counts)), true)  # type: ignore[arg-type]
        ratio, half = ratio_interval(ours, paper)
        root = math.sqrt(runs)
        print(f"| {epsilon:g} | {mech.half_window} | {ours.mean():.5f} ± "
              f"{ours.std(ddof=1) / root:.5f} | {paper.mean():.5f} ± "
              f"{paper.std(ddof=1) / root:.5f} | {ratio:.3f} ± {half:.3f} | "
              f"{time.process_time() - cpu:.0f} |", flush=True)


def clopper_pearson(hits: int, runs: int, level: float = 0.95) -> tuple[float, float]:
    tail = (1 - level) / 2
    low = 0.0 if hits == 0 else float(stats.beta.ppf(tail, hits, runs - hits + 1))
    high = 1.0 if hits == runs else float(stats.beta.ppf(1 - tail, hits + 1, runs - hits))
    return low, high


def nominal_band(runs: int, level: float = 0.95) -> tuple[float, float]:
    """Where the measured coverage of an exactly-95% interval falls with probability 95% over
    `runs` runs: the central 95% of Binomial(runs, 0.95)/runs."""
    law = stats.binom(runs, level)
    return float(law.ppf(0.025)) / runs, float(law.ppf(0.975)) / runs


# (b) The coverage data: answers on a grid of D points (a decimal's indices 0..1023), drawn
# from these laws, each bucketized exactly (probability of each grid index).
def _bucketized(cdf: np.ndarray) -> np.ndarray:
    cdf = cdf.copy()
    cdf[0], cdf[-1] = 0.0, 1.0  # the ends take the tails (top- and bottom-coding)
    return np.diff(cdf)


def datasets() -> dict[str, np.ndarray]:
    edges = np.arange(D + 1) - 0.5  # grid index i holds [i - 1/2, i + 1/2)
    income = 200_000 / (D - 1)  # 0..200,000 by ~195.5: an income question's range
    return {
        "uniform": np.full(D, 1.0 / D),
        # log-normal income, median 40,000, σ = 0.7, top-coded at 200,000 (1.1% there)
        "lognormal": _bucketized(stats.lognorm(0.7, scale=40_000).cdf(
            np.clip(edges, 0, None) * income)),
        # two groups: 40% around 250, 60% around 700 (the median on the second's shoulder)
        "bimodal": _bucketized(0.4 * stats.norm(250, 60).cdf(edges)
                               + 0.6 * stats.norm(700, 90).cdf(edges)),
        # the paper's synthetic law, where EMS's intervals measured short (median 752.7)
        "beta": _bucketized(BETA.cdf((edges + 0.5) / D)),
    }


def coverage_run(mech: SquareWave, law: np.ndarray, n: int, seed: list[int]) -> dict:
    """One survey: n answers from `law`, the mechanism's reports (numpy: a simulation, not a
    device), the quartiles with their 95% intervals as `distribution_estimate` reports them
    (entries [p, estimate, std error, low, high]; "interval" names the method)."""
    rng = np.random.default_rng(seed)
    answers = rng.choice(D, n, p=law)
    counts = np.bincount(mech.perturb_many(answers, rng), minlength=mech.m)
    cpu = time.process_time()
    fits = ems(window_channel(mech), np.vstack([counts[None, :],
                                                bootstrap_counts(counts, RESAMPLES)]))
    cells = Cells.of(mech)
    quartiles = [[p, *quantile_summary(cells, fits, p, 0.95)] for p in QUARTILES]
    return {"cpu": time.process_time() - cpu, "q": quartiles, "interval": "percentile"}


def coverage(names: list[str], epsilons: list[float], sizes: list[int], runs: int,
             out: Path, epsilons_of: dict[str, list[float]] | None = None) -> None:
    """Runs the cells round-robin (run 0 of every cell, then run 1, ...), appending one JSON
    line per run to `out` and skipping runs already there: a cut-short bench keeps every cell's
    runs so far, and a rerun resumes. Each run's generator is seeded by its cell and index."""
    laws = datasets()
    done = {(r["data"], r["epsilon"], r["n"], r["run"]) for r in read_runs(out)}
    epsilons_of = epsilons_of or {}
    cells = [(name, eps, n) for n in sizes for eps in epsilons for name in names
             if eps in epsilons_of.get(name, epsilons)]
    mechs = {eps: SquareWave(eps, range(D)) for eps in epsilons}
    with out.open("a") as sink:
        for run in range(runs):
            for name, eps, n in cells:
                if (name, eps, n, run) in done:
                    continue
                seed = [list(laws).index(name), int(eps * 1000), n, run]
                row = coverage_run(mechs[eps], laws[name], n, seed)
                row.update(data=name, epsilon=eps, n=n, run=run)
                sink.write(json.dumps(row) + "\n")
                sink.flush()


def read_runs(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def coverage_table(path: Path) -> None:
    """The coverage of each quartile's 95% interval per cell, from the runs in `path`: the
    interval each run reported (`interval_method`) and, for the older runs that stored it, the
    percentile interval of the same replicates' quartiles."""
    rows = read_runs(path)
    laws = datasets()
    methods = sorted({interval_method(r) for r in rows})
    print(f"\n(b) 95% intervals of the quartiles (as distribution_estimate reported them when "
          f"run: {' and '.join(methods)}; R = {RESAMPLES}; the last three columns: the "
          f"percentile interval of the same replicates where the run stored it), D = {D} grid "
          f"points; from {path.name}")
    print("| data | ε | n | runs | quantile | truth | covered | coverage | exact 95% CI | "
          "95% band of an exact 95% interval | bias | s.d. of estimate | mean s.e. | "
          "mean width | CPU s/run | percentile: coverage | its exact 95% CI | its mean width |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
          "---:|---:|---:|")
    keys = sorted({(r["data"], r["epsilon"], r["n"]) for r in rows},
                  key=lambda k: (k[2], k[1], list(laws).index(k[0])))
    for name, eps, n in keys:
        cell = [r for r in rows if (r["data"], r["epsilon"], r["n"]) == (name, eps, n)]
        cells = Cells.of(SquareWave(eps, range(D)))
        cpu = np.mean([r["cpu"] for r in cell])
        for i, p in enumerate(QUARTILES):
            true = float(cells.quantile(laws[name][None, :], p)[0])
            est = np.array([r["q"][i][1] for r in cell])
            se = np.array([r["q"][i][2] for r in cell])
            low = np.array([r["q"][i][3] for r in cell])
            high = np.array([r["q"][i][4] for r in cell])
            hits = int(((low <= true) & (true <= high)).sum())
            runs = len(cell)
            a, b = clopper_pearson(hits, runs)
            c, d = nominal_band(runs)
            spread = f"{est.std(ddof=1):.1f}" if runs > 1 else "n/a"
            percentile = "n/a | n/a | n/a"
            if all(len(r["q"][i]) == 7 for r in cell):  # the same replicates' percentile one
                low_pct = np.array([r["q"][i][5] for r in cell])
                high_pct = np.array([r["q"][i][6] for r in cell])
                hits_pct = int(((low_pct <= true) & (true <= high_pct)).sum())
                e, f = clopper_pearson(hits_pct, runs)
                percentile = (f"{hits_pct / runs:.3f} | [{e:.3f}, {f:.3f}] | "
                              f"{(high_pct - low_pct).mean():.1f}")
            print(f"| {name} | {eps:g} | {n:,} | {runs} | {p:g} | {true:.1f} | {hits} | "
                  f"{hits / runs:.3f} | [{a:.3f}, {b:.3f}] | [{c:.3f}, {d:.3f}] | "
                  f"{est.mean() - true:+.1f} | {spread} | {se.mean():.1f} | "
                  f"{(high - low).mean():.1f} | {cpu:.1f} | {percentile} |")
    pooled_table(rows, laws)


def interval_method(row: dict) -> str:
    """How a run's reported interval was made: "percentile" (the replicates' quartiles, since
    2026-12-07) or, for runs without the key, "test inversion" of the EMS CDF."""
    return str(row.get("interval", "test inversion"))


def pooled_table(rows: list[dict], laws: dict[str, np.ndarray]) -> None:
    """Each quartile's coverage pooled over the data sets and ε at each n (runs are independent
    across cells, so the pooled count is binomial if every cell's coverage is the same): where
    few runs per cell fitted, what the runs say on average."""
    print("\n| n | quantile | runs (all cells) | reported: covered | coverage | exact 95% CI | "
          "same replicates' percentile (older runs): covered | coverage | exact 95% CI |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in sorted({r["n"] for r in rows}):
        cell_rows = [r for r in rows if r["n"] == n]
        for i, p in enumerate(QUARTILES):
            hits, hits_pct, runs_pct = 0, 0, 0
            for r in cell_rows:
                true = float(Cells.of(SquareWave(r["epsilon"], range(D))).quantile(
                    laws[r["data"]][None, :], p)[0])
                entry = r["q"][i]
                hits += entry[3] <= true <= entry[4]
                if len(entry) == 7:  # an older run: the same replicates' percentile interval
                    runs_pct += 1
                    hits_pct += entry[5] <= true <= entry[6]
            runs = len(cell_rows)
            text = [f"{h} | {h / r:.3f} | [{a:.3f}, {b:.3f}]" if r else "n/a | n/a | n/a"
                    for h, r in ((hits, runs), (hits_pct, runs_pct))
                    for a, b in [clopper_pearson(h, r) if r else (0.0, 0.0)]]
            print(f"| {n:,} | {p:g} | {runs} | {text[0]} | {text[1]} |")


def point_estimates(names: list[str], epsilons: list[float], sizes: list[int],
                    runs: int) -> None:
    """The quartile estimates' own sampling law per cell, without intervals: `runs` surveys,
    one EMS fit each (all in one batch; a generator seeded 7 per cell), bias and standard
    deviation around the truth. Cheap (1/200 of a coverage run), so it runs the full 400: what
    a 95% interval should be as wide as, and how far off-centre the estimates sit."""
    laws = datasets()
    print(f"\n(c) Quartile estimates over {runs} runs per cell (EMS, no intervals)")
    print("| data | ε | n | quantile | truth | bias | s.d. | bias/s.d. |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in names:
        for eps in epsilons:
            mech = SquareWave(eps, range(D))
            cells = Cells.of(mech)
            channel = WindowChannel(mech.d, mech.window, float(mech.p_cell), float(mech.q_cell))
            for n in sizes:
                rng = np.random.default_rng(7)
                counts = np.array([np.bincount(mech.perturb_many(rng.choice(D, n, p=laws[name]),
                                                                 rng), minlength=mech.m)
                                   for _ in range(runs)])
                fits = ems(channel, counts)
                for p in QUARTILES:
                    true = float(cells.quantile(laws[name][None, :], p)[0])
                    est = cells.quantile(fits, p)
                    bias, sd = est.mean() - true, est.std()
                    print(f"| {name} | {eps:g} | {n:,} | {p:g} | {true:.1f} | {bias:+.1f} | "
                          f"{sd:.1f} | {bias / sd:+.2f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--wasserstein-runs", type=int, default=40)
    parser.add_argument("--coverage-runs", type=int, default=400)
    parser.add_argument("--sizes", default="2000,20000")
    parser.add_argument("--epsilons", default="0.5,1,2,4", help="(a)'s values of ε")
    parser.add_argument("--coverage-epsilons", default="1,2")
    parser.add_argument("--data", default="uniform,lognormal,bimodal,beta")
    parser.add_argument("--epsilons-of", action="append", default=["beta=1"],
                        help="NAME=E1,E2: (b)'s values of ε for one data set only "
                             "(default beta=1)")
    parser.add_argument("--runs-file", type=Path,
                        default=Path(__file__).with_name(
                            "numeric-coverage-runs-percentile.jsonl"),
                        help="(b)'s per-run results (JSON lines; appended, resumed)")
    parser.add_argument("--skip", choices=["accuracy", "coverage"], action="append", default=[],
                        help="skip (a) or (b); may be given twice")
    parser.add_argument("--point-runs", type=int, default=0,
                        help="(c): also this many point-estimate runs per coverage cell")
    parser.add_argument("--table-only", action="store_true",
                        help="print (b)'s table from --runs-file, run nothing")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if args.table_only:
        coverage_table(args.runs_file)
        return
    if "accuracy" not in args.skip:
        accuracy([float(e) for e in args.epsilons.split(",")], args.wasserstein_runs, 100_000)
    if "coverage" not in args.skip:
        epsilons_of = {name: [float(e) for e in values.split(",")]
                       for name, values in (item.split("=") for item in args.epsilons_of)}
        coverage(args.data.split(","), [float(e) for e in args.coverage_epsilons.split(",")],
                 [int(s) for s in args.sizes.split(",")], args.coverage_runs, args.runs_file,
                 epsilons_of)
        coverage_table(args.runs_file)
    if args.point_runs:
        point_estimates(args.data.split(","), [float(e) for e in args.coverage_epsilons.split(",")],
                        [int(s) for s in args.sizes.split(",")], args.point_runs)


if __name__ == "__main__":
    main()
