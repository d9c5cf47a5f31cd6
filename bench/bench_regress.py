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
from ldpsurvey.shared.regression import expit, fit_logistic
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


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--trials", type=int, default=200)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(2026)
    bench_price(args.trials, rng)
    for n in (int(s) for s in args.sizes.split(",")):
        bench_speed(n, rng)


if __name__ == "__main__":
    main(sys.argv[1:])
