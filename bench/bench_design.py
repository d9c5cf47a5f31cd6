"""Design-based estimation: speed at 10^6 submissions, and the design effect split at n = 5,000.

    .venv/bin/python bench/bench_design.py [--n 1000000] [--replicates 80] [--skip-r]

1. 10^6 submissions of a 10-question survey (binary_rr, grr k = 3 and 5, oue k = 8, olh k = 10,
   hr k = 6, ss k = 12, ordinal_exp k = 5, geometric 0..30, forced_response), 20 strata,
   2,000 PSUs, unequal weights and an fpc, raked to 3 disclosed margins (sex 2, age band 6,
   region 5 categories). Timed, wall and CPU: the pseudo-values of the reports, the design
   (Design.build from the frame columns), the raking, the weighted estimates of all 10
   questions with linearized standard errors (goal < 3 s, raking included) and with 80
   bootstrap replicate weights, each recalibrated (goal < 10 s).
2. A stratified cluster sample of n = 5,000 (10 strata, 10 PSUs each, 50 respondents per PSU)
   from a finite population with cluster effects, a yes/no and a 3-option question
   randomized at ε = 1 (binary_rr, grr): ldpsurvey's deff sampling, deff privacy and effective
   n from the randomized answers (mean and sd over 200 randomizations of the same respondents'
   answers: one survey's figure is as noisy as the sd says), next to R's deff
   (svymean(deff = TRUE)) on the TRUE answers of the same respondents (the sampling part
   ldpsurvey estimates without seeing them).

Simulation only: numpy generators draw the data here; nothing is a device's report.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from ldpsurvey.shared.design import (
    Design,
    Margin,
    build_replicates,
    estimate,
    mean,
    pseudo_values,
    rake,
)
from ldpsurvey.shared.mechanisms import mechanism_class
from ldpsurvey.shared.mechanisms.rr_designs import ForcedResponse
from ldpsurvey.shared.survey import Question

GOAL_LINEARIZED = 3.0
GOAL_REPLICATES = 10.0
RANDOMIZATIONS = 200


def questions() -> list[tuple[Question, object]]:
    """(question, mechanism) of the 10-question survey."""
    found = []

    def add(qid: str, qtype: str, mechanism: str, k: int, epsilon: float = 1.0) -> None:
        if qtype == "integer":
            q = Question(id=qid, text=qid, type=qtype, epsilon=epsilon, mechanism=mechanism,
                         min=0, max=k - 1)
        elif qtype == "binary":
            q = Question(id=qid, text=qid, type=qtype, epsilon=epsilon, mechanism=mechanism)
        else:
            q = Question(id=qid, text=qid, type=qtype, epsilon=epsilon, mechanism=mechanism,
                         options=tuple(f"o{j}" for j in range(k)))
        found.append((q, mechanism_class(mechanism).from_question(q)))

    add("smoke", "binary", "binary_rr", 2)
    add("drink", "categorical", "grr", 3)
    add("mood", "categorical", "grr", 5)
    add("sport", "categorical", "oue", 8)
    add("brand", "categorical", "olh", 10, 2.0)
    add("diet", "categorical", "hr", 6)
    add("media", "categorical", "ss", 12, 2.0)
    add("trust", "ordinal", "ordinal_exp", 5)
    add("visits", "integer", "geometric", 31, 2.0)
    q = Question(id="cheat", text="cheat", type="binary", epsilon=2.0,
                 mechanism="forced_response", params={"p_truth": "3/4"})
    found.append((q, ForcedResponse(None, (False, True), question_id="cheat",
                                    params={"p_truth": "3/4"})))
    return found


def timed(what: str, work, results: dict) -> object:
    wall, cpu = time.perf_counter(), time.process_time()
    value = work()
    results[what] = {"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu}
    print(f"  {what:<44} {results[what]['wall_s']:7.2f} s wall  "
          f"{results[what]['cpu_s']:7.2f} s CPU", flush=True)
    return value


def speed(n: int, replicates: int) -> dict:
    rng = np.random.default_rng(35)
    strata, psus_per = 20, 100
    psu = rng.integers(0, strata * psus_per, n)
    stratum = psu // psus_per
    weight = np.exp(rng.normal(3.0, 0.4, n)) * (1 + stratum / 10)
    fpc = np.full(n, 5.0 * psus_per)
    sex, age, region = rng.integers(0, 2, n), rng.integers(0, 6, n), rng.integers(0, 5, n)
    survey = questions()
    reports = []
    for q, m in survey:
        k = m.k
        truth = (rng.integers(0, k, n) if q.type != "integer"
                 else np.minimum(rng.poisson(4, n), k - 1))
        reports.append(m.perturb_many(truth, rng))
    print(f"{n:,} submissions, 10 questions, {strata} strata, {strata * psus_per:,} PSUs, "
          f"3 raking margins, {replicates} bootstrap replicates")
    results: dict = {}
    pseudo = timed("pseudo-values of 10 questions", lambda: [
        pseudo_values(q, m, r) for (q, m), r in zip(survey, reports, strict=True)], results)
    design = timed("Design.build (weights, strata, PSUs, fpc)",
                   lambda: Design.build(weight, stratum, psu, fpc), results)
    total = float(weight.sum()) * 1.1
    margins = [Margin("sex", sex, {0: total * 0.49, 1: total * 0.51}),
               Margin("age", age, {j: total / 6 for j in range(6)}),
               Margin("region", region, {j: total * w for j, w in
                                         enumerate((0.3, 0.25, 0.2, 0.15, 0.1))})]
    raked = timed("rake to 3 margins", lambda: rake(design, margins), results)
    timed("estimates, linearized (10 questions)",
          lambda: estimate(raked, pseudo), results)
    linearized = results["rake to 3 margins"]["wall_s"] + results[
        "estimates, linearized (10 questions)"]["wall_s"]
    boot = timed(f"bootstrap factors ({replicates})",
                 lambda: build_replicates(design, "bootstrap", replicates=replicates), results)
    timed(f"estimates, {replicates} replicates (raked each)",
          lambda: estimate(raked, pseudo, variance=boot), results)
    replicated = results["rake to 3 margins"]["wall_s"] + results[
        f"estimates, {replicates} replicates (raked each)"]["wall_s"]
    print(f"  raking + linearized estimates: {linearized:.2f} s (goal < {GOAL_LINEARIZED} s); "
          f"raking + replicate estimates: {replicated:.2f} s (goal < {GOAL_REPLICATES} s)")
    results["linearized_total_s"] = linearized
    results["replicates_total_s"] = replicated
    return results


# --- design effects at n = 5,000 -------------------------------------------------------------


R_DEFF = r"""
suppressPackageStartupMessages(library(survey))
d <- read.csv("truth.csv")
des <- svydesign(ids = ~psu, strata = ~stratum, weights = ~weight, fpc = ~fpc, data = d,
                 nest = TRUE)
a <- svymean(~factor(yes), des, deff = TRUE)
b <- svymean(~factor(kind), des, deff = TRUE)
cat(sprintf("%.17g", c(deff(a), deff(b))), "\n")
"""


def deff_table(skip_r: bool) -> dict:
    rng = np.random.default_rng(5000)
    strata, psus, per = 10, 10, 50
    population_psus = 200
    rows = []
    for h in range(strata):
        chosen = rng.choice(population_psus, psus, replace=False)
        for j in chosen:
            effect = rng.normal(0, 0.8)
            base = np.exp(rng.normal(0, 0.3))
            for _ in range(per):
                rows.append((h, j, base * (1 + h), effect))
    stratum = np.array([r[0] for r in rows])
    psu = np.array([r[1] for r in rows])
    weight = np.array([r[2] for r in rows]) * 40
    effect = np.array([r[3] for r in rows])
    n = stratum.size
    yes = (rng.random(n) < 1 / (1 + np.exp(-(-0.8 + effect)))).astype(int)
    logits = np.column_stack([np.zeros(n), 0.3 + effect, -0.5 - effect])
    probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    kind = (rng.random(n)[:, None] > np.cumsum(probs, axis=1)).sum(axis=1)
    design = Design.build(weight, stratum, psu, np.full(n, float(population_psus)))
    binary = Question(id="yes", text="yes", type="binary", epsilon=1.0, mechanism="binary_rr")
    three = Question(id="kind", text="kind", type="categorical", epsilon=1.0, mechanism="grr",
                     options=("a", "b", "c"))
    out: dict = {"n": n, "randomizations": RANDOMIZATIONS}
    ours: dict[str, list] = {}
    for q, truth in ((binary, yes), (three, kind)):
        m = mechanism_class(q.mechanism).from_question(q)
        for _ in range(RANDOMIZATIONS):  # the same respondents, their answers randomized anew
            result = mean(design, pseudo_values(q, m, m.perturb_many(truth, rng)))
            for label, e in zip(result.labels, result.effects(), strict=True):
                ours.setdefault(f"{q.id}={label}", []).append(e)
    r_deff = None
    if not skip_r and shutil.which("Rscript"):
        with tempfile.TemporaryDirectory() as tmp:
            table = Path(tmp) / "truth.csv"
            lines = ["stratum,psu,weight,fpc,yes,kind"] + [
                f"{s},{p},{float(w)!r},{population_psus},{y},{k}"
                for s, p, w, y, k in zip(stratum, psu, weight, yes, kind, strict=True)]
            table.write_text("\n".join(lines) + "\n")
            (Path(tmp) / "deff.R").write_text(R_DEFF)
            done = subprocess.run(["Rscript", "--vanilla", "deff.R"], cwd=tmp,
                                  capture_output=True, text=True, check=False)
            if done.returncode == 0:
                r_deff = [float(v) for v in done.stdout.split()]
            else:
                print(done.stderr[-500:], file=sys.stderr)
    print(f"\nstratified cluster sample, n = {n:,}, ε = 1 (binary_rr; grr k = 3); ldpsurvey's "
          f"figures from the randomized answers: mean (sd) over {RANDOMIZATIONS} "
          "randomizations of the same respondents' answers")
    print(f"  {'estimate':<10} {'deff sampling':>16} {'R deff (true)':>14} "
          f"{'deff privacy':>14} {'deff':>14} {'effective n':>14}")
    rows_out = []

    def stat(values: list) -> tuple[float, float, int]:
        found = [v for v in values if v is not None]
        return (float(np.mean(found)), float(np.std(found)), len(found)) if found else (
            float("nan"), float("nan"), 0)

    for j, (label, effects) in enumerate(ours.items()):
        r_value = r_deff[j] if r_deff else None
        columns = {name: stat([getattr(e, name) for e in effects])
                   for name in ("sampling", "privacy", "total", "effective_n")}

        shown = {name: f"{c[0]:.{0 if name == 'effective_n' else 2}f} "
                       f"({c[1]:.{0 if name == 'effective_n' else 2}f})"
                 for name, c in columns.items()}
        r_text = f"{r_value:.2f}" if r_value is not None else "n/a"
        print(f"  {label:<10} {shown['sampling']:>16} {r_text:>14} {shown['privacy']:>14} "
              f"{shown['total']:>14} {shown['effective_n']:>14}")
        rows_out.append({"estimate": label, "r_deff_true": r_value,
                         **{f"{name}_mean": c[0] for name, c in columns.items()},
                         **{f"{name}_sd": c[1] for name, c in columns.items()},
                         "sampling_estimable": columns["sampling"][2]})
    out["rows"] = rows_out
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--replicates", type=int, default=80)
    parser.add_argument("--skip-r", action="store_true", help="leave out R's figures")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args()
    figures = {"speed": speed(args.n, args.replicates), "deff": deff_table(args.skip_r)}
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
