"""An invite-only two-server survey whose invitation codes carry a design, with a real leader
and a real helper (two processes, SQLite or PostgreSQL): each upload carries its code, the
leader batches every cell (the code's stratum) and random group apart, both servers add their
own noise to each batch, and `report --batch all` post-stratifies, weights the cells or runs
the delete-a-group jackknife over the groups.

Exactness: central ε = 400, so each server's noise is nonzero with probability below 1e-14
per coordinate (tests/two_server/test_protocol.py): the reported estimates equal the direct
computation from the true answers.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.client.respondent import Respondent
from ldpsurvey.server.invites.claims import digest
from support.clients import http_json
from support.postgres import shared_server
from support.two_server import start_pair
from two_server.test_protocol import api, publish, status_of

SURVEY = "designed"
# 2 strata x 6 PSUs x 2 units; weights constant within each stratum
UNITS = [(f"u{s}{p}{k}", s, f"p{p}", 10.0 if s == "north" else 30.0)
         for s in ("north", "south") for p in range(6) for k in range(2)]
TOTALS = {"north": 5000.0, "south": 15000.0}


def answers_of(i: int) -> dict[str, Any]:
    return {"smoker": i % 3 == 0, "mood": ["low", "mid", "high", "great"][i % 4],
            **({"hours": i % 13} if i % 5 else {})}


def run(*args: Any) -> Any:
    return CliRunner().invoke(cli, [str(a) for a in args])


def rows(target: str, sql: str) -> list[tuple[Any, ...]]:
    if target.startswith("postgresql"):
        import psycopg

        with psycopg.connect(target) as conn:
            return [tuple(r) for r in conn.execute(sql).fetchall()]
    with sqlite3.connect(target) as conn:
        return conn.execute(sql).fetchall()


def count(target: str, sql: str) -> int:
    return int(rows(target, sql)[0][0])


def designed_survey_flow(pair: Any, tmp_path: Path, leader_db: str, helper_db: str) -> None:
    publish(pair, SURVEY, min_batch=2)
    frame = tmp_path / "frame.csv"
    frame.write_text("id,weight,stratum,psu\n" + "".join(
        f"{uid},{w},{s},{p}\n" for uid, s, p, w in UNITS))
    created = run("invites", "create", "--db", leader_db, "--survey", SURVEY, "--design", frame,
                  "--groups", "2")
    assert created.exit_code == 0, created.output
    codes = dict(line.split(",") for line in created.stdout.strip().splitlines()[1:])
    stratum_of = {uid: s for uid, s, _, _ in UNITS}

    # one upload per invited unit, each with its code (the first through `respond`)
    answers_path = tmp_path / "a0.json"
    answers_path.write_text(json.dumps(answers_of(0)))
    first = run("respond", "--server", pair.leader.url, "--survey", SURVEY, "--answers",
                answers_path, "--state", tmp_path / "s0", "--max-epsilon", "10000",
                "--invite", codes[UNITS[0][0]], "--yes")
    assert first.exit_code == 0, first.output
    respondents = []
    for i, (uid, *_rest) in enumerate(UNITS[1:], start=1):
        r = Respondent(pair.leader.url, state_dir=str(tmp_path / f"s{i}"), warn=lambda m: None,
                       max_epsilon=1e4)
        delivery = r.submit(r.answer(r.fetch_survey(SURVEY), answers_of(i), invite=codes[uid]))
        assert delivery.status == "sent", delivery.message
        respondents.append(r)
    assert count(leader_db, "SELECT count(*) FROM ts_uploads") == len(UNITS)
    # the code is bound to the upload by its hash; the stored upload does not carry it
    assert count(leader_db, "SELECT count(*) FROM invites WHERE submission_id IS NOT NULL") \
        == len(UNITS)
    assert count(leader_db, "SELECT count(*) FROM ts_uploads WHERE body LIKE '%invite%'") == 0

    # a resend with its code is a duplicate (the device's receipt no longer holds the code);
    # no code, an unknown one or a used one: 403, nothing stored
    [receipt] = respondents[0].outbox.all_receipts()
    assert receipt["invited"] is True and "invite" not in receipt["body"]
    url = pair.leader.url + f"/api/surveys/{SURVEY}/two-server/uploads"
    resent = {**receipt["body"], "invite": codes[UNITS[1][0]]}
    assert http_json("POST", url, resent)["duplicate"] is True
    fresh = Respondent(pair.leader.url, state_dir=str(tmp_path / "x"), warn=lambda m: None,
                       max_epsilon=1e4)
    # the unverified survey: the device would refuse an invite-only one without a code
    body = fresh.answer(fresh.fetch_survey(SURVEY).survey, answers_of(1)).wire()
    for code, words, reason in ((None, "invite-only", "missing"),
                                ("inv_nope", "unknown", "unknown"),
                                (codes[UNITS[1][0]], "already used", "used")):
        sent = dict(body) if code is None else {**body, "invite": code}
        status, error = status_of(lambda sent=sent: http_json("POST", url, sent))
        assert status == 403 and error["code"] == "invite_refused"
        assert words in json.dumps(error)
        assert [item["reason"] for item in error["details"]["items"]] == [reason]
    assert count(leader_db, "SELECT count(*) FROM ts_uploads") == len(UNITS)

    # batches per (cell, group): each aggregated by the helper, noised by both servers
    listed = run("batches", "--server", pair.leader.url, "--survey", SURVEY, "--token",
                 pair.token, "--aggregate")
    assert listed.exit_code == 0, listed.output
    listing = api(pair, "GET", f"/api/surveys/{SURVEY}/two-server/batches")
    parts = sorted((b["cell"], b["group"]) for b in listing["batches"])
    assert parts == [("north", 1), ("north", 2), ("south", 1), ("south", 2)]
    assert sum(b["reports"] for b in listing["batches"]) == len(UNITS)
    assert "cell north" in listed.stdout and "group 2" in listed.stdout
    if not helper_db.startswith("postgresql"):
        assert count(helper_db, "SELECT count(*) FROM hs_batches") == 4

    # what each respondent answered, by cell and random group (the code's, on the leader)
    group_of = {h: g for h, g in rows(leader_db, "SELECT code_sha256, random_group FROM "
                                                 "invites")}
    members = [(stratum_of[uid], group_of[digest(codes[uid])], answers_of(i))
               for i, (uid, *_rest) in enumerate(UNITS)]
    by_cell: dict[str, list[dict[str, Any]]] = {}
    for cell, _group, answers in members:
        by_cell.setdefault(cell, []).append(answers)

    def share(cell: str, qid: str, value: Any, without: int | None = None) -> float:
        kept = [a for c, g, a in members if c == cell and g != without and qid in a]
        return sum(a[qid] == value for a in kept) / len(kept)

    cells = tmp_path / "cells.csv"
    cells.write_text("stratum,total\n" + "".join(f"{c},{t:g}\n" for c, t in TOTALS.items()))
    base = ("report", "--server", pair.leader.url, "--survey", SURVEY, "--token", pair.token,
            "--batch", "all")
    post = run(*base, "--poststratify", cells, "--variance", "groups", "--format", "json")
    assert post.exit_code == 0, post.output
    doc = json.loads(post.stdout)
    smoker = next(q for q in doc["questions"] if q["question"] == "smoker")
    yes = next(r for r in smoker["categories"] if r["value"] is True)
    n_all = sum(TOTALS.values())
    truth = sum(t / n_all * share(c, "smoker", True) for c, t in TOTALS.items())
    assert yes["estimate"] == pytest.approx(truth, abs=1e-9)
    # two groups: v = ½ Σ_g (θ_(g) − θ̄)², so the s.e. is half the replicates' difference
    replicates = [sum(t / n_all * share(c, "smoker", True, without=g)
                      for c, t in TOTALS.items()) for g in (1, 2)]
    assert yes["std_error"] == pytest.approx(abs(replicates[0] - replicates[1]) / 2, abs=1e-9)
    assert doc["design"]["degrees_of_freedom"] == 1
    assert [c["cell"] for c in doc["design"]["cells"]] == ["north", "south"]
    weighted = json.loads(run(*base, "--weighted", "--variance", "groups", "--format",
                              "json").stdout)
    smoker = next(q for q in weighted["questions"] if q["question"] == "smoker")
    w = {"north": 10.0 * len(by_cell["north"]), "south": 30.0 * len(by_cell["south"])}
    truth = sum(w[c] * share(c, "smoker", True) for c in w) / sum(w.values())
    assert next(r for r in smoker["categories"] if r["value"] is True)["estimate"] == \
        pytest.approx(truth, abs=1e-9)
    for fmt, words in (("table", "delete-a-group jackknife over 2 random groups"),
                       ("md", "Privacy accounting per respondent and per cell"),
                       ("html", "What the batching"), ("csv", "degrees_of_freedom")):
        text = run(*base, "--poststratify", cells, "--variance", "groups", "--format", fmt)
        assert text.exit_code == 0 and words in text.stdout, text.output

    # refused in one line, with the reason
    for extra, words in (((), "clusters (PSUs)"),
                         (("--variance", "jkn"), "use --variance groups"),
                         (("--rake", cells), "post-stratify"),
                         (("--lonely-psu", "remove"), "--lonely-psu")):
        refused = run(*base, *extra)
        assert refused.exit_code == 1 and words in refused.output, refused.output
        assert len(refused.output.strip().splitlines()) == 1
    ldp = run("report", "--server", pair.leader.url, "--survey", SURVEY, "--token", pair.token,
              "--weighted")
    assert ldp.exit_code == 1 and "--batch all" in ldp.output


def test_an_invite_only_designed_two_server_survey_on_sqlite(tmp_path: Path) -> None:
    leader_db, helper_db = str(tmp_path / "leader.db"), str(tmp_path / "helper.db")
    pair = start_pair(tmp_path, leader_db=leader_db, helper_db=helper_db)
    try:
        designed_survey_flow(pair, tmp_path, leader_db, helper_db)
    finally:
        pair.stop()


def test_an_invite_only_designed_two_server_survey_on_postgresql(tmp_path: Path) -> None:
    pg = shared_server()
    leader_db, helper_db = pg.create_database(), pg.create_database()
    pair = start_pair(tmp_path, leader_db=leader_db, helper_db=helper_db)
    try:
        designed_survey_flow(pair, tmp_path, leader_db, helper_db)
    finally:
        pair.stop()
        pg.drop_database(leader_db)
        pg.drop_database(helper_db)


def test_an_old_leader_database_gets_the_batch_part_column(tmp_path: Path) -> None:
    """A leader database made before batches had parts gets the column on open."""
    from ldpsurvey.server.common.two_server.db import TwoServerDb

    path = tmp_path / "old.db"
    with sqlite3.connect(path) as conn:
        conn.execute("""CREATE TABLE ts_batches (survey_id TEXT NOT NULL, version INTEGER NOT NULL,
           batch_id TEXT NOT NULL, state TEXT NOT NULL, n_reports INTEGER NOT NULL,
           created TEXT NOT NULL, result TEXT, leader_noisy TEXT, collected TEXT,
           PRIMARY KEY (survey_id, version, batch_id))""")
        conn.execute("INSERT INTO ts_batches VALUES ('s', 1, 'b', 'pending', 5, 't', NULL, NULL, "
                     "NULL)")
    TwoServerDb(path)
    TwoServerDb(path)  # twice: the column is added once
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT part FROM ts_batches").fetchall() == [(None,)]


def test_an_upload_with_a_malformed_code_is_refused(tmp_path: Path) -> None:
    from ldpsurvey.server.two_server.leader import accept_upload
    from ldpsurvey.shared.two_server.upload import UploadError

    with pytest.raises(UploadError, match="invite must be an invitation code string"):
        accept_upload(None, "s", {"invite": 12})  # type: ignore[arg-type]
