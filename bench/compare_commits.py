"""Run benches on two checkouts alternately, and compare their numbers line by line.

    python bench/compare_commits.py run --old CHECKOUT --new CHECKOUT --out DIR \\
        [--rounds 2] [--first-round 1] [--only NAME,...] COMMANDS_FILE
    python bench/compare_commits.py compare --out DIR [--only NAME,...]

Each checkout has its own virtual environment in .venv (the package installed editable from
it). COMMANDS_FILE holds one bench a line, `name: script.py args...` (`#` starts a comment);
`{out}` in the arguments becomes a path under DIR unique to the run (for benches that write a
file). Every bench runs old, new, old, new, ... (`--rounds` runs each side), one after the
other, with `OPENBLAS_NUM_THREADS=1 nice -n -15` (needs root; without it, plain priority) so
the rest of a shared machine disturbs the runs less. Each run's stdout and stderr are kept
in DIR/NAME.SIDE.ROUND.{out,err}, and DIR/runs.jsonl records the command, the wall seconds,
the exit code and the 1-minute load average before and after.

`compare` lines up the two sides' outputs: lines whose text is the same once their numbers
are masked are the same measurement; each number on such a line is shown as the median over
the rounds of the old side, of the new side, and their ratio (new / old); `--all` shows every
round's number too (on a shared machine a median of two is not enough to judge 10%). Lines
that differ between the commits are listed apart. Which numbers matter (a throughput, a time,
a size, an accuracy) and in which direction is for the reader: this prints, it judges
nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

NUMBER = re.compile(r"(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?")


def read_commands(path: Path) -> dict[str, list[str]]:
    commands = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, rest = line.partition(":")
            commands[name.strip()] = shlex.split(rest)
    return commands


def run(args: argparse.Namespace) -> None:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    commands = read_commands(Path(args.commands))
    only = set(args.only.split(",")) if args.only else None
    prefix = ["nice", "-n", "-15"] if os.geteuid() == 0 else []
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    for name, argv in commands.items():
        if only and name not in only:
            continue
        for round_ in range(args.first_round, args.first_round + args.rounds):
            for side, checkout in (("old", args.old), ("new", args.new)):
                stem = out / f"{name}.{side}.{round_}"
                full = [a.replace("{out}", str(stem) + ".file") for a in argv]
                cmd = [*prefix, str(Path(checkout) / ".venv/bin/python"), *full]
                load_before = os.getloadavg()[0]
                start = time.perf_counter()
                with open(f"{stem}.out", "wb") as so, open(f"{stem}.err", "wb") as se:
                    try:
                        rc = subprocess.run(cmd, cwd=checkout, env=env, stdout=so, stderr=se,
                                            timeout=args.timeout).returncode
                    except subprocess.TimeoutExpired:
                        rc = "timeout"
                wall = time.perf_counter() - start
                record = {"name": name, "side": side, "round": round_, "checkout": checkout,
                          "cmd": cmd, "rc": rc, "wall_s": round(wall, 1),
                          "load_before": round(load_before, 2),
                          "load_after": round(os.getloadavg()[0], 2),
                          "started": time.strftime("%H:%M:%S", time.gmtime(time.time() - wall))}
                with open(out / "runs.jsonl", "a") as log:
                    log.write(json.dumps(record) + "\n")
                print(json.dumps(record), flush=True)


def masked(line: str) -> str:
    """The line's text with its numbers as # and its runs of spaces as one (column widths
    follow the numbers)."""
    return re.sub(r"\s+", " ", NUMBER.sub("#", line.strip()))


def numbers(line: str) -> list[float]:
    return [float(m.group().replace(",", "")) for m in NUMBER.finditer(line)]


def lines_by_key(path: Path) -> dict[str, list[float]]:
    """Each line's numbers, keyed by its masked text (repeated texts numbered apart)."""
    result: dict[str, list[float]] = {}
    for line in path.read_text(errors="replace").splitlines():
        key = masked(line)
        if not key.strip():
            continue
        seen = sum(1 for k in result if k.split("\x00")[0] == key)
        result[f"{key}\x00{seen}" if seen else key] = numbers(line)
    return result


def fmt(x: float) -> str:
    return f"{x:.4g}"


def compare(args: argparse.Namespace) -> None:
    out = Path(args.out)
    only = set(args.only.split(",")) if args.only else None
    names = sorted({p.name.split(".")[0] for p in out.glob("*.old.*.out")})
    for name in names:
        if only and name not in only:
            continue
        sides = {side: [lines_by_key(p) for p in sorted(out.glob(f"{name}.{side}.*.out"))]
                 for side in ("old", "new")}
        print(f"=== {name} (rounds: old {len(sides['old'])}, new {len(sides['new'])})")
        old_keys = [k for k in sides["old"][0]] if sides["old"] else []
        new_keys = set(sides["new"][0]) if sides["new"] else set()
        for key in old_keys:
            if key not in new_keys:
                continue
            per_side, every = {}, {}
            for side, runs in sides.items():
                rows = [r[key] for r in runs if key in r]
                width = min(len(r) for r in rows)
                per_side[side] = [statistics.median(r[i] for r in rows) for i in range(width)]
                every[side] = [[r[i] for r in rows] for i in range(width)]
            width = min(len(per_side["old"]), len(per_side["new"]))
            if width == 0:
                continue
            cells = []
            for i in range(width):
                o, n = per_side["old"][i], per_side["new"][i]
                ratio = f"{n / o:.3f}" if o else ("=" if n == o else "inf")
                if args.all and o != n:
                    runs = "/".join(map(fmt, every["old"][i])), "/".join(map(fmt, every["new"][i]))
                    cells.append(f"[{runs[0]}]->[{runs[1]}] ({ratio})")
                else:
                    cells.append(f"{fmt(o)}->{fmt(n)} ({ratio})" if o != n else fmt(o))
            print(f"  {key.split(chr(0))[0].strip()[:90]}")
            print(f"      {'  '.join(cells)}")
        only_old = [k.split("\x00")[0] for k in old_keys if k not in new_keys]
        only_new = [k.split("\x00")[0] for k in (sides["new"][0] if sides["new"] else {})
                    if k not in set(old_keys)]
        for label, keys in (("old only", only_old), ("new only", only_new)):
            for key in keys:
                print(f"  [{label}] {key.strip()[:110]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    r = sub.add_parser("run")
    r.add_argument("--old", required=True)
    r.add_argument("--new", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--rounds", type=int, default=2)
    r.add_argument("--only")
    r.add_argument("--first-round", type=int, default=1, help="number the rounds from here "
                   "(more rounds of a bench already run)")
    r.add_argument("--timeout", type=float, default=900)
    r.add_argument("commands")
    c = sub.add_parser("compare")
    c.add_argument("--out", required=True)
    c.add_argument("--only")
    c.add_argument("--all", action="store_true", help="every round's number, not only medians")
    args = parser.parse_args()
    (run if args.what == "run" else compare)(args)


if __name__ == "__main__":
    sys.exit(main())
