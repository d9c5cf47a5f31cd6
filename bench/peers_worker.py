"""Runs peer-library protocols inside bench/.peers-venv (their own numpy/xxhash pins).

Started by bench_peers.py as a subprocess; reads one JSON job on stdin, prints one JSON result.
Peers use `random`/numpy global randomness: seeded here for repeatability. Nothing from
ldpsurvey is imported (it would pull in the project's numpy).

Jobs:
  {"task": "versions"}
  {"task": "accuracy", "protocol": ..., "k": .., "epsilon": .., "answers": "x.npy", "runs": ..,
   "seed": ..}   -> {"estimates": [[f_1..f_k] per run]} (frequencies, not counts)
  {"task": "accuracy_many", "protocol": ..., "settings": [{k, epsilon, answers, runs, seed}]}
                 -> {"results": [{"estimates": ...} or {"error": ...} per setting]}
  {"task": "speed", "protocol": ..., "k": .., "epsilon": .., "answers": "x.npy", "seed": ..}
                 -> {"client_s": .., "server_s": .., "n": ..} for the given answers
"""

from __future__ import annotations

import json
import random
import sys
import time
from importlib import metadata

import numpy as np

PROTOCOLS = ("pureldp_grr", "pureldp_oue", "pureldp_olh", "pureldp_hr",
             "mfl_grr", "mfl_oue", "mfl_sue", "mfl_olh")


def _pure_ldp(protocol: str, k: int, epsilon: float):
    from pure_ldp.frequency_oracles import (
        DEClient,
        DEServer,
        HadamardResponseClient,
        HadamardResponseServer,
        LHClient,
        LHServer,
        UEClient,
        UEServer,
    )

    if protocol == "pureldp_grr":
        return DEClient(epsilon, k), DEServer(epsilon, k)
    if protocol == "pureldp_oue":
        return UEClient(epsilon, k, use_oue=True), UEServer(epsilon, k, use_oue=True)
    if protocol == "pureldp_olh":
        return LHClient(epsilon, k, use_olh=True), LHServer(epsilon, k, use_olh=True)
    server = HadamardResponseServer(epsilon, k)
    return HadamardResponseClient(epsilon, k, server.get_hash_funcs()), server


def run_pure_ldp(protocol: str, k: int, epsilon: float, answers: np.ndarray) -> tuple:
    """(frequencies, client seconds, server seconds) for one run. Items are 1..k."""
    client, server = _pure_ldp(protocol, k, epsilon)
    items = (answers + 1).tolist()
    t0 = time.perf_counter()
    reports = [client.privatise(x) for x in items]
    t1 = time.perf_counter()
    for r in reports:
        server.aggregate(r)
    counts = np.asarray(server.estimate_all(range(1, k + 1), suppress_warnings=True), dtype=float)
    t2 = time.perf_counter()
    return counts / len(items), t1 - t0, t2 - t1


def run_mfl(protocol: str, k: int, epsilon: float, answers: np.ndarray) -> tuple:
    from multi_freq_ldpy.pure_frequency_oracles import GRR, LH, UE

    name = protocol.split("_", 1)[1]
    optimal = name != "sue"
    if name == "grr":
        def client(x: int) -> object:
            return GRR.GRR_Client(x, k, epsilon)

        def aggregate(reports: list) -> object:
            return GRR.GRR_Aggregator_MI(reports, k, epsilon)
    elif name in ("oue", "sue"):
        def client(x: int) -> object:
            return UE.UE_Client(x, k, epsilon, optimal)

        def aggregate(reports: list) -> object:
            return UE.UE_Aggregator_MI(np.array(reports), epsilon, optimal)
    else:
        def client(x: int) -> object:
            return LH.LH_Client(x, k, epsilon, True)

        def aggregate(reports: list) -> object:
            return LH.LH_Aggregator_MI(reports, k, epsilon, True)
    t0 = time.perf_counter()
    reports = [client(int(x)) for x in answers]
    t1 = time.perf_counter()
    freqs = aggregate(reports)
    t2 = time.perf_counter()
    return np.asarray(freqs, dtype=float), t1 - t0, t2 - t1


def run(protocol: str, k: int, epsilon: float, answers: np.ndarray) -> tuple:
    if protocol.startswith("pureldp_"):
        return run_pure_ldp(protocol, k, epsilon, answers)
    return run_mfl(protocol, k, epsilon, answers)


def main() -> None:
    job = json.loads(sys.stdin.read())
    if job["task"] == "versions":
        names = ("numpy", "xxhash", "pure-ldp", "multi-freq-ldpy", "numba", "scikit-learn",
                 "statsmodels")
        out = {}
        for name in names:
            try:
                out[name] = metadata.version(name)
            except metadata.PackageNotFoundError:
                out[name] = None
        print(json.dumps({"versions": out, "python": sys.version.split()[0]}))
        return
    if job["task"] == "accuracy_many":  # one process for many settings: numba compiles once
        results = []
        for setting in job["settings"]:
            random.seed(setting["seed"])
            np.random.seed(setting["seed"] % 2**32)
            answers = np.load(setting["answers"])
            try:
                results.append({"estimates": [
                    run(job["protocol"], setting["k"], setting["epsilon"], answers)[0].tolist()
                    for _ in range(setting["runs"])]})
            except Exception as exc:  # a peer failing one setting must not lose the others
                results.append({"error": f"{type(exc).__name__}: {exc}"})
        print(json.dumps({"results": results}))
        return
    random.seed(job.get("seed", 0))
    np.random.seed(job.get("seed", 0) % 2**32)
    answers = np.load(job["answers"])
    k, epsilon = job["k"], job["epsilon"]
    if job["task"] == "accuracy":
        estimates = [run(job["protocol"], k, epsilon, answers)[0].tolist()
                     for _ in range(job["runs"])]
        print(json.dumps({"estimates": estimates}))
        return
    else:
        run(job["protocol"], k, epsilon, answers[:20])  # warm up (numba compiles on first use)
        _, client_s, server_s = run(job["protocol"], k, epsilon, answers)
        print(json.dumps({"client_s": client_s, "server_s": server_s, "n": int(answers.size)}))


if __name__ == "__main__":
    main()
