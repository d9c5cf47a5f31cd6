"""Regression through the channel: speed over stored submissions, and the price of privacy.

    .venv/bin/python bench/bench_regress.py [--sizes 100000,1000000] [--trials 200]

1. `server.regression.regression` (what `ldpsurvey regress --db` and GET .../regression run)
   with 5 disclosed covariates (sex: 3 options, region: 4, age: integer, urban: yes/no,
   degree: yes/no; 9 columns with the intercept) on a yes/no outcome randomized with binary_rr
   at ε = 1, over 10^5 and 10^6 submissions stored in SQLite (inserted directly, outside the
   HTTP path). Targets: < 2 s and < 20 s. Wall and CPU seconds; the machine is shared.
2. At n = 5,000, ε = 1: the standard error of the odds ratio's log for a binary disclosed
   covariate through the channel, next to the same fit on the true answers (the price of
   privacy), averaged over `--trials` simulated surveys, with the empirical spread of the
   estimates to show the standard errors are honest.
3. A randomized 3-option covariate (grr, ε = 2) next to the 5 disclosed ones: linear regression
   (corrected moments) and logistic regression (latent cells) fit times at the first size, and
   the linear slope's standard error at n = 5,000 next to least squares on the true answers.

Simulation only: numpy generators draw the data here; nothing is a device's report.
"""

from __future__ import annotations

import argparse
import json
import math
import sqlite3
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.server import surveys
from ldpsurvey.server.regression import Spec, regression
from ldpsurvey.server.store import open_store
from ldpsurvey.shared.manifest import sign_survey
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.mechanisms.geometric import Geometric
from ldpsurvey.shared.mechanisms.grr import GRR
from ldpsurvey.shared.regression import LatentCovariate, expit, fit_logistic
from ldpsurvey.shared.regression_linear import fit_linear
from ldpsurvey.shared.survey import Survey

COVARIATES = ("sex", "region", "age", "urban", "degree")
BETA = {"(intercept)": -1.0, "sex=m": 0.5, "sex=x": 0.2, "region=n": 0.1, "region=e": -0.3,
        "region=w": 0.3, "age": -0.01, "urban=yes": 0.4, "degree=yes": -0.5}


def survey_dict() -> dict:
    return {"id": "bench", "title": "Regression bench", "version": 1, "questions": [
        {"id": "sex", "text": "Sex", "type": "categorical", "options": ["f", "m", "x"],
         "disclosed": True},
        {"id": "region", "text": "Region", "type": "categorical",
         "options": ["s", "n", "e", "w"], "disclosed": True},
        {"id": "age", "text": "Age", "type": "integer", "min": 18, "max": 90, "disclosed": True},
        {"id": "urban", "text": "Urban?", "type": "binary", "disclosed": True},
        {"id": "degree", "text": "Degree?", "type": "binary", "disclosed": True},
        {"id": "smoker", "text": "Smoke?", "type": "binary", "epsilon": 1.0,
         "mechanism": "binary_rr"}]}


def simulate(n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    cols = {"sex": rng.choice(3, n, p=[0.5, 0.45, 0.05]), "region": rng.integers(0, 4, n),
            "age": rng.integers(18, 91, n), "urban": rng.random(n) < 0.6,
            "degree": rng.random(n) < 0.35}
    eta = (BETA["(intercept)"] + np.array([0, BETA["sex=m"], BETA["sex=x"]])[cols["sex"]]
           + np.array([0, BETA["region=n"], BETA["region=e"], BETA["region=w"]])[cols["region"]]
           + BETA["age"] * cols["age"] + BETA["urban=yes"] * cols["urban"]
           + BETA["degree=yes"] * cols["degree"])
    cols["truth"] = (rng.random(n) < expit(eta)).astype(np.int64)
    return cols


def bench_speed(n: int, rng: np.random.Generator) -> None:
    parsed = Survey.from_dict(survey_dict())
    mech = mechanism_for(parsed.question("smoker"))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.db"
        store = open_store(path)
        signed = sign_survey(parsed, Ed25519PrivateKey.generate()).to_dict()
        signed.pop("sha256")
        surveys.publish(store, signed)
        cols = simulate(n, rng)
        smoker = mech.perturb_many(cols["truth"], rng)
        start = time.perf_counter()
        rows = ((("bench", 1, str(uuid.UUID(int=i)), "2026-01-01T00", json.dumps(
            {"sex": int(cols["sex"][i]), "region": int(cols["region"][i]),
             "age": int(cols["age"][i]), "urban": bool(cols["urban"][i]),
             "degree": bool(cols["degree"][i]), "smoker": bool(smoker[i])},
            separators=(",", ":")))) for i in range(n))
        conn = sqlite3.connect(path)
        with conn:
            conn.executemany("INSERT INTO submissions (survey_id, version, submission_id, "
                             "received_hour, reports) VALUES (?, ?, ?, ?, ?)", rows)
        conn.close()
        print(f"stored {n:,} submissions in {time.perf_counter() - start:.1f} s", flush=True)
        wall, cpu = time.perf_counter(), time.process_time()
        doc = regression(store, "bench", 1, Spec("smoker", COVARIATES))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        store.close()
    worst = max(abs(c["estimate"] - BETA[c["name"]]) / c["std_error"]
                for c in doc["coefficients"])
    print(f"regress, 5 covariates (9 columns), n = {n:,}: {wall:.2f} s wall, {cpu:.2f} s cpu; "
          f"converged={doc['converged']} in {doc['iterations']} iterations; largest "
          f"|estimate - truth| = {worst:.2f} s.e.", flush=True)


def bench_price(trials: int, rng: np.random.Generator, n: int = 5000) -> None:
    p = math.e / (math.e + 1)
    channel = np.array([[p, 1 - p], [1 - p, p]])
    identity = np.eye(2)
    names = list(BETA)
    se_priv, se_true, est_priv, est_true = [], [], [], []
    for _ in range(trials):
        cols = simulate(n, rng)
        x = np.column_stack([np.ones(n), cols["sex"] == 1, cols["sex"] == 2,
                             cols["region"] == 1, cols["region"] == 2, cols["region"] == 3,
                             cols["age"], cols["urban"], cols["degree"]]).astype(float)
        reports = np.where(rng.random(n) < p, cols["truth"], 1 - cols["truth"])
        fit = fit_logistic(x, names, reports, channel, outcome="smoker", outcome_level="yes")
        ref = fit_logistic(x, names, cols["truth"], identity, outcome="smoker",
                           outcome_level="yes")
        j = names.index("degree=yes")
        se_priv.append(fit.coefficients[j].std_error)
        se_true.append(ref.coefficients[j].std_error)
        est_priv.append(fit.coefficients[j].estimate)
        est_true.append(ref.coefficients[j].estimate)
    print(f"n = {n:,}, epsilon = 1 (binary_rr), binary disclosed covariate 'degree' "
          f"(true log odds ratio {BETA['degree=yes']}, odds ratio "
          f"{math.exp(BETA['degree=yes']):.3f}), {trials} simulated surveys:")
    print(f"  s.e. of log odds ratio through the channel: mean {np.mean(se_priv):.3f} "
          f"(empirical sd of the estimates {np.std(est_priv, ddof=1):.3f}; mean estimate "
          f"{np.mean(est_priv):.3f})")
    print(f"  same fit on the true answers:               mean {np.mean(se_true):.3f} "
          f"(empirical sd {np.std(est_true, ddof=1):.3f}; mean estimate "
          f"{np.mean(est_true):.3f})")
    print(f"  price of privacy: s.e. x{np.mean(se_priv) / np.mean(se_true):.2f}, i.e. "
          f"{(np.mean(se_priv) / np.mean(se_true)) ** 2:.1f}x the respondents for the same "
          "precision")


def bench_randomized_covariate(n: int, trials: int, rng: np.random.Generator) -> None:
    """Linear regression of a geometric outcome (0..30 at ε = 6) on the 5 disclosed covariates
    and a randomized 3-option covariate (grr at ε = 2), by corrected moments: fit time at n, and
    the price of privacy of the randomized covariate's slope at n = 5,000 next to least squares
    on the true answers; then the logistic fit of `smoker` with the same randomized covariate
    (latent cells), its time at n."""
    drug = GRR(2.0, ["none", "cannabis", "other"])
    outcome = Geometric(6.0, range(0, 31))
    noise = Geometric.noise_variance(31, 6.0)
    effects = np.array([0.0, 3.0, -2.0])

    def survey(size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        cols = simulate(size, rng)
        x = np.column_stack([np.ones(size), cols["sex"] == 1, cols["sex"] == 2,
                             cols["region"] == 1, cols["region"] == 2, cols["region"] == 3,
                             cols["age"], cols["urban"], cols["degree"]]).astype(float)
        v = rng.choice(3, size, p=[0.6, 0.3, 0.1])
        y = np.clip(8 + 2 * x[:, 1] + 0.05 * x[:, 6] + effects[v] + rng.integers(-3, 4, size),
                    0, 30)
        return x, v, y, outcome.perturb_many(y, rng), cols["truth"]

    def latent(v: np.ndarray) -> LatentCovariate:
        return LatentCovariate("drug", list(drug.labels), drug.perturb_many(v, rng),
                               *drug.index_channel())

    names, drug_names = list(BETA), ["drug=cannabis", "drug=other"]
    x, v, y, reports, truth = survey(n)
    cov = latent(v)
    wall, cpu = time.perf_counter(), time.process_time()
    fit_linear(x, names, reports, noise, outcome="drinks", outcome_range=30.0, latent=[cov],
               latent_names=drug_names)
    print(f"linear, 5 disclosed covariates + 1 randomized (3 options), n = {n:,} (fit only): "
          f"{time.perf_counter() - wall:.2f} s wall, {time.process_time() - cpu:.2f} s cpu",
          flush=True)
    smoker = mechanism_for(Survey.from_dict(survey_dict()).question("smoker"))
    channel, _ = smoker.index_channel()
    wall, cpu = time.perf_counter(), time.process_time()
    fit = fit_logistic(x, names, smoker.perturb_many(truth, rng), channel, outcome="smoker",
                       outcome_level="yes", latent=[cov], latent_names=drug_names)
    print(f"logistic, the same covariates (latent cells: 20 more parameters), n = {n:,} (fit "
          f"only): {time.perf_counter() - wall:.2f} s wall, {time.process_time() - cpu:.2f} s "
          f"cpu; converged={fit.converged} in {fit.iterations} iterations", flush=True)
    se, spread, ref_spread, inflation = [], [], [], []
    for _ in range(trials):
        x, v, y, reports, _ = survey(5000)
        fit = fit_linear(x, names, reports, noise, outcome="drinks", outcome_range=30.0,
                         latent=[latent(v)], latent_names=drug_names)
        c = fit.coefficients[len(names)]  # drug=cannabis
        se.append(c.std_error)
        spread.append(c.estimate)
        inflation.append(c.se_inflation or math.nan)
        design = np.column_stack([x, v == 1, v == 2]).astype(float)
        ref_spread.append(np.linalg.lstsq(design, y, rcond=None)[0][len(names)])
    print(f"n = 5,000, linear slope of randomized drug=cannabis (grr ε = 2; outcome geometric "
          f"ε = 6 on 0..30; truth {effects[1]}), {trials} simulated surveys:")
    print(f"  s.e. by corrected moments: mean {np.mean(se):.3f} (empirical sd "
          f"{np.std(spread, ddof=1):.3f}; mean estimate {np.mean(spread):.3f})")
    print(f"  least squares on the true answers: empirical sd {np.std(ref_spread, ddof=1):.3f}; "
          f"reported se x privacy {np.nanmean(inflation):.2f}, empirical ratio "
          f"{np.std(spread, ddof=1) / np.std(ref_spread, ddof=1):.2f}", flush=True)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--trials", type=int, default=200)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(2026)
    bench_price(args.trials, rng)
    bench_randomized_covariate(int(args.sizes.split(",")[0]), args.trials, rng)
    for n in (int(s) for s in args.sizes.split(",")):
        bench_speed(n, rng)


if __name__ == "__main__":
    main(sys.argv[1:])
