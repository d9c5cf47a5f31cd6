"""`ldpsurvey demo --two-server` (command.py): both collection modes side by side on this machine.

A helper (`ldpsurvey helper serve`) and a leader (`ldpsurvey serve --hpke-key`) run as
subprocesses on loopback, each with its own temporary SQLite database and HPKE key pair. The
bundled sample survey is published twice on the leader, signed: as today's local-DP survey,
and as a two-server survey whose central ε per question equals the LDP survey's ε. N
simulated devices answer both with the same true answers (a seeded numpy Generator draws the
truth; the client's OS CSPRNG randomizes and shards), the leader aggregates with the helper,
the batch is collected, and the estimates of both modes are printed next to the truth.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import click
import numpy as np
from ldpsurvey.server.common.two_server.helper_token import generate as generate_helper_token
from ldpsurvey.shared.estimand import MEAN
from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.two_server.config import b64url
from ldpsurvey.shared.two_server.hpke import generate_keypair

from ..progress import terminal_progress
from ..remote import request_json
from . import (
    DEFAULT_WORKERS,
    create_token,
    draw_answers,
    publish,
    run_respondents,
    running_server,
    sample_survey,
)

MAX_BATCH_MIN = 100
AGGREGATE_TIMEOUT = 3600.0  # one request prepares every report with the helper


def two_server_version(survey: Survey, helper_url: str, helper_key: bytes,
                       leader_key: bytes, min_batch: int) -> Survey:
    """The sample survey as a two-server survey: central ε = the LDP ε, no local ε0."""
    data = survey.to_dict()
    data.pop("crosstabs", None)
    data.update(id=f"{survey.id}-2s", title=f"{survey.title} (two servers)",
                collection="two-server",
                two_server={"helper_url": helper_url, "helper_hpke_key": b64url(helper_key),
                            "leader_hpke_key": b64url(leader_key),
                            "min_batch_size": min_batch})
    for q in data["questions"]:
        q["central_epsilon"] = q.pop("epsilon")
        for key in ("mechanism", "mechanism_choice", "params"):
            q.pop(key, None)
    return Survey.from_dict(data)


def run_two_server_demo(n: int, seed: int | None, workers: int = DEFAULT_WORKERS,
                        echo: Any = click.echo) -> str:
    """Everything `demo --two-server` does; returns the printed table."""
    tmp = Path(tempfile.mkdtemp(prefix="ldpsurvey-demo2-"))
    try:
        (hpaths, helper_key) = generate_keypair(tmp / "keys", "helper")
        (lpaths, leader_key) = generate_keypair(tmp / "keys", "leader")
        helper_token = generate_helper_token(tmp / "keys" / "helper-token.txt")
        ldp = sample_survey()
        rng = np.random.default_rng(seed)
        answers = draw_answers(ldp, n, rng)
        started = time.perf_counter()
        with running_server(tmp / "helper.db", 2, command=("helper", "serve"),
                            extra_args=("--hpke-key", str(hpaths.private),
                                        "--leader-token", str(helper_token))) as helper_url, \
                running_server(tmp / "leader.db", workers,
                               extra_args=("--hpke-key", str(lpaths.private),
                                           "--helper-token", str(helper_token))) as leader_url:
            echo(f"leader: {leader_url}   helper: {helper_url}  (each its own database)")
            token = create_token(tmp / "leader.db")
            two = two_server_version(ldp, helper_url, helper_key, leader_key,
                                     min(MAX_BATCH_MIN, n))
            results = {}
            for survey, label in ((ldp, "local DP"), (two, "two-server")):
                fingerprint = publish(leader_url, survey, token,
                                      tmp / f"keys-{survey.id}").fingerprint
                echo(f"{label}: {n:,} respondents answer {survey.id}…")
                with terminal_progress(n, label, show_pos=True) as update:
                    run_respondents(leader_url, survey, fingerprint, answers,
                                    tmp / f"devices-{survey.id}", workers, update)
            results["ldp"] = {q["question"]: q for q in request_json(
                f"{leader_url}/api/surveys/{ldp.id}/estimates", token=token)[1]["questions"]}
            results["two"] = collect_all(leader_url, two.id, token)
        seconds = time.perf_counter() - started
        table = render(ldp, answers, results)
        echo(f"\nBoth modes at n = {n:,}, the same ε per question, in {seconds:.1f} s "
             "(± is the 95% interval's half-width):\n")
        echo(table)
        echo("Two-server: each server adds its own geometric noise to its share; the noise is "
             "O(1/ε) counts for the whole batch instead of O(√n/ε). If the two servers "
             "collude, these answers are exposed (no local ε0 was set): see docs/two-server.md.")
        return table
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def collect_all(url: str, survey_id: str, token: str) -> dict[str, Any]:
    """Aggregate with the helper, collect the (single) batch: estimates per question."""
    request_json(f"{url}/api/surveys/{survey_id}/two-server/aggregate", body=b"{}", token=token,
                 timeout=AGGREGATE_TIMEOUT)
    listing = request_json(f"{url}/api/surveys/{survey_id}/two-server/batches", token=token)[1]
    out: dict[str, Any] = {}
    for batch in listing["batches"]:
        collected = request_json(
            f"{url}/api/surveys/{survey_id}/two-server/batches/{batch['batch_id']}/collect",
            body=b"{}", token=token, timeout=AGGREGATE_TIMEOUT)[1]
        document = collected.get("estimates") or {}
        out.update({q["question"]: q for q in document.get("questions", ())})
    return out


def _cell(est: dict[str, Any] | None) -> str:
    if not est or est.get("estimate") is None:
        return "-"
    half = 1.959964 * (est.get("std_error") or 0.0)
    return f"{est['estimate']:.3f} ± {half:.3f}"


def render(survey: Survey, answers: dict[str, np.ndarray], results: dict[str, Any]) -> str:
    rows = [("question", "value", "true", "local DP", "two-server")]
    for q in survey.questions:
        truth = answers[q.id]
        ldp, two = results["ldp"].get(q.id, {}), results["two"].get(q.id, {})
        unit = q.unit
        if unit.mean_label == MEAN:  # a number: its estimate is the mean (truth: min + index)
            assert q.min is not None
            rows.append((q.id, MEAN, f"{q.min + truth.mean():.3f}", _cell(ldp.get("mean")),
                         _cell(two.get("mean"))))
            continue
        by_value = {json.dumps(c["value"]): c for c in ldp.get("categories") or []}
        two_by = {json.dumps(c["value"]): c for c in two.get("categories") or []}
        sets = unit.overlapping  # truth: a row of 0/1 per respondent, options overlap
        for i, value in enumerate(q.labels):
            key = json.dumps(value)
            share = truth[:, i].mean() if sets else (truth == i).mean()
            rows.append((q.id if i == 0 else "", str(value), f"{share:.3f}",
                         _cell(by_value.get(key)), _cell(two_by.get(key))))
        if sets:
            rows.append(("", str(unit.mean_label), f"{truth.sum(axis=1).mean():.3f}",
                         _cell(ldp.get("mean")), _cell(two.get("mean"))))
    widths = [max(len(r[c]) for r in rows) for c in range(5)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
             for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)

