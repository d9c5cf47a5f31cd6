"""Accuracy and speed of our frequency mechanisms against pure-ldp and multi-freq-ldpy.

    .venv/bin/python bench/bench_peers.py [--quick] [--no-peers] [--only accuracy|speed]

Peers run in their own virtual environment (bench/.peers-venv, created on first use from
bench/peers-requirements.txt: they break on the project's numpy/xxhash) through
bench/peers_worker.py in a subprocess. Prints tables, writes bench/peers_results.json. Asserts
nothing: the numbers are for bench/RESULTS.md.

Accuracy: Zipf(1.1) answers over k values, one fixed population of n respondents per k,
re-randomized `runs` times; MSE = mean over the k options of (f̂_v - f_v)^2, averaged over
runs; theory = mean over options of the fixed-population variance formula at the true f
(ours: `set_variance`; peers: the same formula for the same protocol where it applies).
Speed: k = 1024, ε = 1: client (vectorized simulation path; plus the secure CSPRNG path per
report), aggregation, estimation, and estimate from a stored (JSON round-tripped) aggregate.
Peer OLH decoding is O(n·k) in Python: it is measured on a subsample and extrapolated.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from ldpsurvey.shared.mechanisms import MECHANISMS, choose_mechanism
from ldpsurvey.shared.mechanisms.pure import PureProtocol

HERE = Path(__file__).resolve().parent
VENV = HERE / ".peers-venv"
OURS = ("grr", "oue", "sue", "olh", "hr", "ss")
PEERS = ("pureldp_grr", "pureldp_oue", "pureldp_olh", "pureldp_hr", "mfl_grr", "mfl_oue",
         "mfl_sue", "mfl_olh")
# Our mechanism whose variance formula describes the peer protocol (None: no formula applies,
# e.g. pure-ldp's block-design HR for ε > 1; multi-freq-ldpy clips, so its ratio is shown
# against the unbiased formula only to make the clipping visible).
PEER_THEORY = {"pureldp_grr": "grr", "pureldp_oue": "oue", "pureldp_olh": "olh",
               "pureldp_hr": "hr", "mfl_grr": "grr", "mfl_oue": "oue", "mfl_sue": "sue",
               "mfl_olh": "olh"}


# --- peers ---------------------------------------------------------------------------------


def ensure_peers_venv() -> Path:
    python = VENV / "bin" / "python"
    if not python.exists():
        print(f"creating {VENV} (peer libraries with their own numpy/xxhash pins)...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "-r",
                        str(HERE / "peers-requirements.txt")], check=True)
    return python


def peer_job(python: Path, job: dict[str, Any], timeout: float = 3600) -> dict[str, Any]:
    out = subprocess.run([str(python), str(HERE / "peers_worker.py")], input=json.dumps(job),
                         capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr else "failed"}
    return json.loads(out.stdout)


# --- data ----------------------------------------------------------------------------------


def zipf_population(k: int, n: int, seed: int) -> np.ndarray:
    """n answers drawn once from Zipf(1.1) truncated to k values (a fixed population)."""
    weights = 1.0 / np.arange(1, k + 1) ** 1.1
    rng = np.random.default_rng(seed)
    return rng.choice(k, size=n, p=weights / weights.sum())


def labels(k: int) -> tuple[str, ...]:
    return tuple(f"v{i}" for i in range(k))


def theory(name: str, k: int, epsilon: float, truth: np.ndarray, n: int) -> float | None:
    cls = MECHANISMS[name]
    mech = cls(epsilon, labels(k))
    if not isinstance(mech, PureProtocol):
        return None
    return float(np.mean(mech.set_variance(truth, 1, n)))


# --- accuracy --------------------------------------------------------------------------------


def accuracy(ks: list[int], epsilons: list[float], n: int, runs: int, peer_runs: int,
             python: Path | None, olh_peer_max_k: int) -> list[dict[str, Any]]:
    rows = []
    tmpdir = Path(tempfile.mkdtemp())
    truths, paths = {}, {}
    for k in ks:
        answers = zipf_population(k, n, seed=k)
        truths[k] = np.bincount(answers, minlength=k) / n
        paths[k] = str(tmpdir / f"zipf-{k}.npy")
        np.save(paths[k], answers)
        for epsilon in epsilons:
            q = type("Q", (), {"id": "q", "type": "categorical", "k": k, "epsilon": epsilon})
            auto, _ = choose_mechanism(q)
            for name in OURS:
                mech = MECHANISMS[name](epsilon, labels(k))
                rng = np.random.default_rng([k, int(epsilon * 10), len(name)])
                errors, consistent = [], []
                # The MSE averages k options: small k needs more runs for the same precision.
                for _ in range(max(runs, -(-400 // k))):
                    est = mech.estimate(mech.aggregate_many(mech.perturb_many(answers, rng)))
                    f_hat = np.array([c.estimate for c in est.categories])
                    errors.append(float(np.mean((f_hat - truths[k]) ** 2)))
                    f_cons = np.array([c.consistent for c in est.categories])
                    consistent.append(float(np.mean((f_cons - truths[k]) ** 2)))
                rows.append(_row("ours", name, k, epsilon, errors,
                                 theory(name, k, epsilon, truths[k], n), auto=name == auto))
                rows[-1]["mse_consistent"] = float(np.mean(consistent))
                print(_fmt(rows[-1]), flush=True)
    if python is None:
        return rows
    for peer in PEERS:  # one worker per peer for all settings (numba compiles once)
        settings = [{"k": k, "epsilon": epsilon, "answers": paths[k],
                     "runs": peer_runs * (3 if k <= 16 else 1),
                     "seed": k * 100 + int(epsilon * 10)}
                    for k in ks for epsilon in epsilons
                    if not (peer.endswith("olh") and k > olh_peer_max_k)]
        res = peer_job(python, {"task": "accuracy_many", "protocol": peer,
                                "settings": settings})
        if "error" in res:
            print(f"  {peer}: {res['error']}", flush=True)
            continue
        for setting, out in zip(settings, res["results"], strict=True):
            k, epsilon = setting["k"], setting["epsilon"]
            if "error" in out:
                print(f"  {peer} k={k} eps={epsilon}: {out['error']}", flush=True)
                continue
            errors = [float(np.mean((np.array(e) - truths[k]) ** 2)) for e in out["estimates"]]
            formula = None
            if not (peer == "pureldp_hr" and epsilon > 1):
                formula = theory(PEER_THEORY[peer], k, epsilon, truths[k], n)
            rows.append(_row("peer", peer, k, epsilon, errors, formula))
            print(_fmt(rows[-1]), flush=True)
    return rows


def _row(side: str, name: str, k: int, epsilon: float, errors: list[float],
         formula: float | None, auto: bool = False) -> dict[str, Any]:
    mse = float(np.mean(errors))
    return {"side": side, "protocol": name, "k": k, "epsilon": epsilon, "runs": len(errors),
            "mse": mse, "mse_se": float(np.std(errors, ddof=1) / np.sqrt(len(errors)))
            if len(errors) > 1 else None, "theory": formula,
            "ratio": mse / formula if formula else None, "auto": auto}


def _fmt(r: dict[str, Any]) -> str:
    ratio = f"{r['ratio']:.3f}" if r["ratio"] else "  -  "
    theory_s = f"{r['theory']:.3e}" if r["theory"] else "    -    "
    return (f"  {r['side']:4} {r['protocol']:12} k={r['k']:<5} eps={r['epsilon']:<4} "
            f"mse={r['mse']:.3e} theory={theory_s} ratio={ratio} runs={r['runs']}"
            + (" <- auto" if r["auto"] else ""))


# --- speed ---------------------------------------------------------------------------------------


def speed(n: int, python: Path | None, peer_n: int, olh_peer_n: int,
          skip: tuple[str, ...]) -> list[dict[str, Any]]:
    k, epsilon = 1024, 1.0
    answers = zipf_population(k, n, seed=7)
    rows = []
    for name in OURS:
        if name in skip:
            continue
        mech = MECHANISMS[name](epsilon, labels(k))
        rng = np.random.default_rng(1)
        t0 = time.perf_counter()
        reports = mech.perturb_many(answers, rng)
        t1 = time.perf_counter()
        agg = mech.aggregate_many(reports)
        t2 = time.perf_counter()
        mech.estimate(agg)
        t3 = time.perf_counter()
        stored = json.dumps(agg.to_dict())
        t4 = time.perf_counter()
        mech.estimate(mech.aggregate_from_dict(json.loads(stored)))
        t5 = time.perf_counter()
        # The secure path (what a device runs) and incremental server updates, per report.
        secure_n = 300 if name in ("oue", "sue") else 2000
        ts = time.perf_counter()
        wire = [mech.perturb(mech.labels[int(a)]) for a in answers[:secure_n]]
        te = time.perf_counter()
        inc = mech.new_aggregate()
        ti = time.perf_counter()
        for r in wire:
            inc.add(mech.validate_report(r))
        tj = time.perf_counter()
        row = {"side": "ours", "protocol": name, "n": n, "client_vectorized_s": t1 - t0,
               "client_secure_per_report_us": (te - ts) / secure_n * 1e6,
               "aggregate_s": t2 - t1, "estimate_s": t3 - t2,
               "stored_estimate_ms": (t5 - t4) * 1e3,
               "incremental_add_per_report_us": (tj - ti) / secure_n * 1e6}
        rows.append(row)
        print(f"  ours {name:4} n={n}: client(vectorized) {row['client_vectorized_s']:.2f}s, "
              f"client(secure) {row['client_secure_per_report_us']:.0f}us/report, aggregate "
              f"{row['aggregate_s']:.2f}s, estimate {row['estimate_s'] * 1e3:.1f}ms, from "
              f"stored aggregate {row['stored_estimate_ms']:.1f}ms, incremental add "
              f"{row['incremental_add_per_report_us']:.0f}us/report", flush=True)
    if python is None:
        return rows
    for peer in ("pureldp_grr", "pureldp_oue", "pureldp_olh", "pureldp_hr", "mfl_grr",
                 "mfl_olh"):
        sub = olh_peer_n if peer.endswith("olh") else peer_n
        sub = min(sub, n)
        with tempfile.NamedTemporaryFile(suffix=".npy", delete=False) as tmp:
            np.save(tmp, answers[:sub])
            path = tmp.name
        res = peer_job(python, {"task": "speed", "protocol": peer, "k": k, "epsilon": epsilon,
                                "answers": path, "seed": 3})
        Path(path).unlink()
        if "error" in res:
            print(f"  peer {peer}: {res['error']}", flush=True)
            continue
        scale = n / res["n"]
        row = {"side": "peer", "protocol": peer, "n": n, "measured_n": res["n"],
               "client_s": res["client_s"] * scale, "server_s": res["server_s"] * scale,
               "extrapolated": res["n"] < n}
        rows.append(row)
        print(f"  peer {peer:12} n={n} (measured on {res['n']}, scaled x{scale:g}): client "
              f"{row['client_s']:.1f}s, aggregate+estimate {row['server_s']:.1f}s", flush=True)
    return rows


def mean_variance_choice(k: int, epsilon: float) -> str:
    """The pure protocol with the lowest *mean over options* of the per-option variance,
    (V_in + (k-1)·V_out)/(k (p*-q*)^2), which does not depend on the truth: the alternative
    criterion this benchmark argues for (auto currently uses the max over options and truth)."""
    best = None
    for name in OURS:
        cls = MECHANISMS[name]
        assert issubclass(cls, PureProtocol)
        p, q = cls.support_probabilities(k, epsilon)
        v_in, v_out = cls.set_support_variances(p, q, k, 1)
        value = (v_in + (k - 1) * v_out) / (k * (p - q) ** 2)
        if cls.report_bytes(k, epsilon) <= 1024 and (best is None or value < best[0]):
            best = (value, name)
    assert best is not None
    return best[1]


def render(speed_path: Path, accuracy_path: Path) -> str:
    """Markdown tables from the JSON results (for bench/RESULTS.md)."""
    out = []
    if speed_path.exists():
        data = json.loads(speed_path.read_text())
        out += [f"### Speed (k = 1024, ε = 1, n = {data['settings']['speed_n']:,}; "
                f"run {data['date']})", "",
                "| protocol | client (s) | client secure (µs/report) | aggregation (s) | "
                "estimation (ms) | estimate from stored aggregate (ms) | "
                "incremental add (µs/report) |", "|---|---|---|---|---|---|---|"]
        for r in data["speed"]:
            if r["side"] == "ours":
                out.append(f"| ours {r['protocol']} | {r['client_vectorized_s']:.2f} "
                           f"(vectorized sim.) | {r['client_secure_per_report_us']:.0f} | "
                           f"{r['aggregate_s']:.3f} | {r['estimate_s'] * 1e3:.1f} | "
                           f"{r['stored_estimate_ms']:.1f} | "
                           f"{r['incremental_add_per_report_us']:.0f} |")
            else:
                note = (f" (measured on {r['measured_n']:,}, scaled)" if r["extrapolated"]
                        else "")
                out.append(f"| {r['protocol']}{note} | {r['client_s']:.1f} | - | "
                           f"{r['server_s']:.2f} (aggregation + estimation) | - | - | - |")
        out.append("")
    if accuracy_path.exists():
        data = json.loads(accuracy_path.read_text())
        out += [f"### Accuracy (Zipf(1.1), n = {data['settings']['accuracy_n']:,}; "
                f"run {data['date']})", "",
                "MSE = mean over options of (f̂ - f)², averaged over runs; theory = the "
                "fixed-population variance formula averaged over options; * = auto's choice.",
                "MSE (consistent): ours' Norm-Sub view (non-negative, sums to 1, biased); "
                "multi-freq-ldpy's only output is of that kind (clipped and renormalized).",
                "", "| k | ε | protocol | runs | MSE | theory | MSE/theory | MSE (consistent) |",
                "|---|---|---|---|---|---|---|---|"]
        rows = sorted(data["accuracy"], key=lambda r: (r["k"], r["epsilon"], r["side"] != "ours",
                                                        r["protocol"]))
        for r in rows:
            theory_s = f"{r['theory']:.3e}" if r["theory"] else "-"
            ratio = f"{r['ratio']:.3f}" if r["ratio"] else "-"
            star = "*" if r["auto"] else ""
            cons = f"{r['mse_consistent']:.3e}" if r.get("mse_consistent") else "-"
            out.append(f"| {r['k']} | {r['epsilon']:g} | {r['side']} {r['protocol']}{star} | "
                       f"{r['runs']} | {r['mse']:.3e} | {theory_s} | {ratio} | {cons} |")
        out += ["", "Auto against the best peer (MSE ratio; < 1 means auto is better):", "",
                "| k | ε | auto | best peer | auto MSE / best peer MSE | "
                "auto consistent-view MSE / best peer MSE | mean-variance choice | "
                "its MSE / best peer MSE |", "|---|---|---|---|---|---|---|---|"]
        for (k, eps) in sorted({(r["k"], r["epsilon"]) for r in rows}):
            auto = [r for r in rows if (r["k"], r["epsilon"]) == (k, eps) and r["auto"]]
            peers = [r for r in rows if (r["k"], r["epsilon"]) == (k, eps) and r["side"] == "peer"]
            if auto and peers:
                best = min(peers, key=lambda r: r["mse"])
                cons = auto[0].get("mse_consistent")
                cons_s = f"{cons / best['mse']:.3f}" if cons else "-"
                alt = mean_variance_choice(k, eps)
                alt_row = [r for r in rows if (r["k"], r["epsilon"], r["side"], r["protocol"])
                           == (k, eps, "ours", alt)]
                alt_s = f"{alt_row[0]['mse'] / best['mse']:.3f}" if alt_row else "-"
                out.append(f"| {k} | {eps:g} | {auto[0]['protocol']} | {best['protocol']} | "
                           f"{auto[0]['mse'] / best['mse']:.3f} | {cons_s} | {alt} | {alt_s} |")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (minutes, not hours)")
    parser.add_argument("--no-peers", action="store_true")
    parser.add_argument("--only", choices=["accuracy", "speed"])
    parser.add_argument("--out", default=str(HERE / "peers_results.json"))
    parser.add_argument("--merge-peers-from", help="accuracy: reuse peer rows from this JSON")
    parser.add_argument("--render", action="store_true",
                        help="print Markdown tables from bench/peers_speed.json and "
                             "bench/peers_accuracy.json, run nothing")
    args = parser.parse_args()
    if args.render:
        print(render(HERE / "peers_speed.json", HERE / "peers_accuracy.json"))
        return
    if args.quick:
        ks, epsilons, n, runs, peer_runs = [2, 16, 128, 1024], [0.5, 1.0, 2.0, 4.0], 100_000, 3, 2
        speed_n, peer_n, olh_peer_n, olh_peer_max_k = 100_000, 20_000, 1000, 16
    else:
        ks, epsilons, n, runs, peer_runs = [2, 16, 128, 1024], [0.5, 1.0, 2.0, 4.0], 100_000, 10, 5
        speed_n, peer_n, olh_peer_n, olh_peer_max_k = 1_000_000, 100_000, 2000, 128
    python = None if args.no_peers else ensure_peers_venv()
    result: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"platform": platform.platform(), "processor": platform.processor(),
                    "python": platform.python_version(), "numpy": np.__version__},
        "settings": {"quick": args.quick, "accuracy_n": n, "runs": runs, "peer_runs": peer_runs,
                     "speed_n": speed_n, "peer_speed_n": peer_n, "olh_peer_speed_n": olh_peer_n,
                     "olh_peer_accuracy_max_k": olh_peer_max_k},
    }
    if python is not None:
        result["peer_versions"] = peer_job(python, {"task": "versions"})
        print("peers:", result["peer_versions"], flush=True)
    if args.only in (None, "speed"):
        print(f"speed, k=1024, eps=1, n={speed_n}:", flush=True)
        result["speed"] = speed(speed_n, python, peer_n, olh_peer_n, skip=())
    if args.only in (None, "accuracy"):
        print(f"accuracy, Zipf(1.1), n={n}:", flush=True)
        result["accuracy"] = accuracy(ks, epsilons, n, runs, peer_runs, python, olh_peer_max_k)
        if args.merge_peers_from:
            old = json.loads(Path(args.merge_peers_from).read_text())
            result["accuracy"] += [r for r in old["accuracy"] if r["side"] == "peer"]
            result["peer_versions"] = old.get("peer_versions")
            result["settings"]["peer_rows_from"] = old["date"]
    Path(args.out).write_text(json.dumps(result, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
