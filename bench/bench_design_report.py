"""`ldpsurvey report --db ... --rake margins.csv` on a large stored survey: the whole analyst
path of design-based estimates, from the database to the estimate document.

    .venv/bin/python bench/bench_design_report.py [--n 1000000] [--keep DIR] [--postgres]

A SQLite database with N stored submissions of a 10-question survey (3 disclosed covariates:
sex 2, age band 6, region 5; 7 randomized: binary_rr, grr k = 3 and 5, oue k = 8,
ordinal_exp k = 5, geometric 0..30, forced_response), each made with an invitation code that
carries its unit's design (20 strata, 2,000 PSUs, unequal weights, an fpc), copied onto the
submission as ingest does. The rows are written with SQL (setup, not timed; aggregates rebuilt
by `recompute`). Timed, wall and CPU: reading the submissions column by column
(`DbSource.respondents`: one pass of the database, numpy parsing), the same with their designs
(read off the same submission rows in the same pass: `respondents_joined`), joining and
building the design,
raking to the 3 margins, the estimate document of every question (linearized), and the whole
`ldpsurvey report --format json` command (its CPU is the child process's).
bench/bench_design.py times the library alone on arrays (goal < 3 s at 10^6); this one says
what reading the store adds.

2026-11-27, this 2-core VM with other sessions' work (load 6-11): the whole command took
22.4 s wall before the column read (15.5-18 s in designcli's runs; 14.8 s CPU), 9-17 s wall
and 7.8 s CPU after (docs/design-based.md, "At scale").

Simulation only: numpy generators draw the data here; nothing is a device's report.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import orjson

SURVEY = {
    "id": "bench-design", "title": "Design bench", "version": 1,
    "questions": [
        {"id": "sex", "text": "sex", "type": "categorical", "options": ["f", "m"],
         "disclosed": True},
        {"id": "age_band", "text": "age", "type": "categorical",
         "options": ["18-24", "25-34", "35-44", "45-54", "55-64", "65+"], "disclosed": True},
        {"id": "region", "text": "region", "type": "categorical",
         "options": ["n", "s", "e", "w", "c"], "disclosed": True},
        {"id": "smoker", "text": "q1", "type": "binary", "epsilon": 1.0,
         "mechanism": "binary_rr"},
        {"id": "mood", "text": "q2", "type": "categorical", "epsilon": 1.0,
         "options": ["a", "b", "c"], "mechanism": "grr"},
        {"id": "sport", "text": "q3", "type": "categorical", "epsilon": 1.0,
         "options": ["a", "b", "c", "d", "e"], "mechanism": "grr"},
        {"id": "media", "text": "q4", "type": "categorical", "epsilon": 1.0,
         "options": list("abcdefgh"), "mechanism": "oue"},
        {"id": "health", "text": "q5", "type": "ordinal", "epsilon": 1.0,
         "options": list("abcde"), "mechanism": "ordinal_exp"},
        {"id": "drinks", "text": "q6", "type": "integer", "epsilon": 1.0, "min": 0,
         "max": 30, "mechanism": "geometric"},
        {"id": "cannabis", "text": "q7", "type": "binary", "mechanism": "forced_response",
         "params": {"p_truth": "3/4", "forced": {"yes": "1/6", "no": "1/12"}}},
    ],
}
MARGINS = {"sex": [0.49, 0.51], "age_band": [0.12, 0.18, 0.17, 0.17, 0.16, 0.20],
           "region": [0.2, 0.25, 0.15, 0.3, 0.1]}
POPULATION = 50_000_000


def build(folder: Path, n: int, rng: np.random.Generator) -> Path:
    """The database (and margins.csv) for n submissions; returns the database path."""
    from ldpsurvey.server.aggregation import recompute
    from ldpsurvey.server.auth import create_token
    from ldpsurvey.server.store import open_store
    from ldpsurvey.server.store.packed_designs import pack_design
    from ldpsurvey.server.surveys import publish
    from ldpsurvey.shared.mechanisms import mechanism_for
    from ldpsurvey.shared.mechanisms.base import plain
    from ldpsurvey.shared.survey import Survey

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from support.server_data import manifest

    db = folder / "bench.db"
    store = open_store(db)
    create_token(store, "bench")
    record, _ = publish(store, manifest(SURVEY))
    survey = Survey.from_dict(SURVEY)
    columns = {}
    for q in survey.questions:
        m = mechanism_for(q)
        if q.id in MARGINS:
            truth = rng.choice(m.k, size=n, p=MARGINS[q.id])
        else:
            truth = rng.integers(0, min(m.k, 12), size=n)
        columns[q.id] = plain(m.perturb_many(truth, rng))
    qids = [q.id for q in survey.questions]
    strata = rng.integers(0, 20, size=n)
    psus = strata * 100 + rng.integers(0, 100, size=n)
    weights = 500.0 + 100.0 * strata + rng.random(n) * 50.0
    ids = [f"00000000-0000-4000-8000-{i:012d}" for i in range(n)]
    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO invite_surveys (survey_id, created) VALUES (?, 'bench')",
                 (SURVEY["id"],))
    compiled = record.compiled()

    def row(i: int) -> tuple:  # the JSON and the packed row, as ingest stores them
        reports = {q: columns[q][i] for q in qids}
        return (SURVEY["id"], ids[i], orjson.dumps(reports).decode(), compiled.pack(reports),
                *design(i))

    def design(i: int) -> tuple:  # a code's design, packed as add_invites packs it
        weight = float(weights[i])
        return (weight, f"s{strata[i]}", f"p{psus[i]}", 1000.0,
                pack_design(weight, 1000.0, None, int(strata[i]), int(psus[i])))

    conn.executemany(  # each with its code's design, as ingest copies it when claiming
        "INSERT INTO submissions (survey_id, version, submission_id, received_hour, reports, "
        "packed, weight, stratum, psu, fpc, design_packed) VALUES (?, 1, ?, "
        "'2026-01-01T00:00:00Z', ?, ?, ?, ?, ?, ?, ?)", (row(i) for i in range(n)))
    conn.executemany(  # the labels numbered as add_invites numbers them: code h is "sh"
        "INSERT INTO design_labels (survey_id, kind, code, label) VALUES (?, ?, ?, ?)",
        [(SURVEY["id"], "stratum", h, f"s{h}") for h in range(20)]
        + [(SURVEY["id"], "psu", p, f"p{p}") for p in range(2000)])
    conn.executemany(
        "INSERT INTO invites (code_sha256, survey_id, submission_id, weight, stratum, psu, "
        "fpc, design_packed) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        ((hashlib.sha256(ids[i].encode()).hexdigest(), SURVEY["id"], ids[i], *design(i))
         for i in range(n)))
    conn.commit()
    conn.close()
    del record
    recompute(store, SURVEY["id"], fix=True)
    store.close()
    lines = ["question,value,total"]
    for qid, shares in MARGINS.items():
        labels = next(q["options"] for q in SURVEY["questions"] if q["id"] == qid)
        lines += [f"{qid},{label},{POPULATION * s!r}" for label, s in zip(labels, shares,
                                                                           strict=True)]
    (folder / "margins.csv").write_text("\n".join(lines) + "\n")
    return db


def _cpu() -> float:
    """This process's CPU time and its finished children's (the whole command's)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def timed(label: str, work):
    wall, cpu = time.perf_counter(), _cpu()
    result = work()
    print(f"  {label:<48} {time.perf_counter() - wall:7.2f} s wall "
          f"{_cpu() - cpu:7.2f} s CPU", flush=True)
    return result


# The submissions table's columns before the designs were copied onto it (schema 6): `SELECT *`
# of today's table returns five more per row, so it costs more; both yardsticks are printed.
OLD_COLUMNS = "seq, survey_id, version, submission_id, received_hour, reports"


def bare_scan(db: Path, columns: str = "*") -> float:
    """The yardstick: every row of the submissions table through Python's sqlite3, nothing
    parsed (issue 40 compares the whole report command's CPU with it). Returns its CPU."""
    cpu = time.process_time()
    conn = sqlite3.connect(db)
    for _row in conn.execute(f"SELECT {columns} FROM submissions"):
        pass
    conn.close()
    return time.process_time() - cpu


def postgres(db: Path, command: list[str], sqlite_json: bytes) -> None:
    """The same report from PostgreSQL (its column path: the database extracts the columns):
    wall time, since most of the work is the database server's, beside SQLite's in the same
    run; the documents must be equal."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from support.postgres import PgServer

    server = PgServer()
    try:
        url = server.create_database()
        timed("setup: migrate-store into PostgreSQL (not the path)",
              lambda: subprocess.run([command[0], "migrate-store", "--from", str(db),
                                      "--to", url], capture_output=True, check=True))
        walls = {}
        for name, target in (("SQLite", str(db)), ("PostgreSQL", url)):
            wall = time.perf_counter()
            out = timed(f"report --rake --format json, {name}",
                        lambda target=target: subprocess.run(
                            [*command[:3], target, *command[4:]], capture_output=True,
                            check=True))
            walls[name] = time.perf_counter() - wall
            if name == "PostgreSQL" and out.stdout != sqlite_json:
                print("  the PostgreSQL document differs from SQLite's")
        print(f"  PostgreSQL / SQLite, wall: {walls['PostgreSQL'] / walls['SQLite']:.2f}x "
              "(issue 40's target: at most 2x)")
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--keep", type=Path, help="build (or reuse) the database here")
    parser.add_argument("--postgres", action="store_true",
                        help="also copy the database into a throwaway PostgreSQL server "
                             "(tests/support/postgres.py) and time the same command there")
    args = parser.parse_args()
    from ldpsurvey.analyst.design.data import db_source
    from ldpsurvey.analyst.design.estimates import (
        DesignOptions,
        estimate_document,
        weighted,
    )
    from ldpsurvey.analyst.margins import Calibration

    folder = args.keep or Path(tempfile.mkdtemp(prefix="ldp-bench-design-"))
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "bench.db"
    print(f"design-based report on {args.n:,} stored submissions (10 questions, 20 strata, "
          f"2,000 PSUs, raked to 3 margins)", flush=True)
    if not db.exists():
        timed("setup: writing the database (not the path)",
              lambda: build(folder, args.n, np.random.default_rng(2026)))
    print(f"  ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs: with other work running, wall "
          "exceeds CPU)", flush=True)
    scan = timed("bare SELECT * scan of the submissions (sqlite3)", lambda: bare_scan(db))
    old_scan = timed("the same, of the columns before schema 6",
                     lambda: bare_scan(db, OLD_COLUMNS))
    options = DesignOptions(calibration=Calibration("rake", folder / "margins.csv"))
    with db_source(str(db), SURVEY["id"], None) as source:
        timed("read the submissions, by columns (respondents)", source.respondents)
        timed("read them with their designs, one pass (respondents_joined)",
              source.respondents_joined)
        w = timed("read + join + Design.build + rake (weighted)",
                  lambda: weighted(source, options))
        unweighted = source.estimates(0.95)
        timed("estimate document, 10 questions, linearized",
              lambda: estimate_document(w, 0.95, unweighted))
    exe = shutil.which("ldpsurvey", path=str(Path(sys.executable).parent))
    command = [exe or sys.executable, "report", "--db", str(db), "--survey", SURVEY["id"],
               "--rake", str(folder / "margins.csv"), "--format", "json"]
    cpu = _cpu()
    out = timed("ldpsurvey report --rake --format json (whole command)",
                lambda: subprocess.run(command, capture_output=True, check=True))
    whole = _cpu() - cpu
    print(f"  whole command / bare scan, CPU: {whole / scan:.2f}x (issue 40's target: at most "
          f"2.5x); {whole / old_scan:.2f}x of the scan of the columns before schema 6")
    doc = json.loads(out.stdout)
    print(f"  ({doc['n_submissions']:,} respondents; {doc['design']['description']})")
    if args.postgres:
        postgres(db, command, out.stdout)
    if args.keep is None:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
