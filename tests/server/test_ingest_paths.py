"""Ingest's shortcuts keep its promises.

- A request is checked against the survey's versions as this process last read them; what
  another process stored since (a newer version, a close) is still honoured, because the store
  checks inside its write transaction and the request is checked again.
- The SQLite ingest process, which checks request bodies itself, checks a body again when its
  transaction finds the versions it was checked against outdated.
- SQLite's fast path (one insert that skips stored ids) gives way to the careful path whenever
  a group holds an id stored before: every job still learns exactly which of its ids were new,
  and the aggregates equal a recompute.
"""

from __future__ import annotations

import json
import socket
import uuid

import pytest
from ldpsurvey.server import submissions, surveys
from ldpsurvey.server.aggregation import recompute
from ldpsurvey.server.common.errors import SurveyChanged, SurveyClosed, ValidationFailed
from ldpsurvey.server.store import (
    IngestJob,
    PendingSubmission,
    ingest_process,
    ingest_wire,
    open_store,
)
from ldpsurvey.server.submissions import CHILD_PLAN
from support.server_data import manifest, sql, submission, survey_dict

BACKENDS = ("sqlite", "sqlite-process", "postgresql")
SUBMIT = "/api/surveys/health/submissions"


def through_a_channel(frame: bytes) -> bytes | None:
    """The payload of `frame` as the other end of a channel reads it."""
    ours, theirs = socket.socketpair()
    with ours, theirs:
        ours.sendall(frame)
        return ingest_wire.read_frame(theirs)


def stored_version(db_path, sid: str) -> int:
    placeholder = "%s" if str(db_path).startswith("postgresql://") else "?"
    rows = sql(db_path, f"SELECT version FROM submissions WHERE submission_id = {placeholder}",
               (sid,))
    return rows[0][0]


def test_a_version_stored_by_another_process_is_seen(client, published, db_path):
    first = submission()
    assert client.post(SUBMIT, json=first).status_code == 200  # this process read version 1
    other = open_store(db_path)  # another process (its own store, its own cache)
    try:
        surveys.publish(other, manifest(survey_dict(version=2)))
    finally:
        other.close()
    implicit = submission()  # no version: the newest, which this process has not read yet
    assert client.post(SUBMIT, json=implicit).status_code == 200
    explicit = submission(version=2)
    assert client.post(SUBMIT, json=explicit).status_code == 200
    old = submission(version=1)
    assert client.post(SUBMIT, json=old).status_code == 200
    assert stored_version(db_path, first["submission_id"]) == 1
    assert stored_version(db_path, implicit["submission_id"]) == 2
    assert stored_version(db_path, explicit["submission_id"]) == 2
    assert stored_version(db_path, old["submission_id"]) == 1
    assert client.post(SUBMIT, json=submission(version=3)).status_code == 422


def test_a_close_by_another_process_is_honoured(client, published, db_path):
    assert client.post(SUBMIT, json=submission()).status_code == 200
    other = open_store(db_path)
    try:
        surveys.close(other, "health")
    finally:
        other.close()
    response = client.post(SUBMIT, json=submission())
    assert response.status_code == 409
    assert response.get_json()["error"]["code"] == "survey_closed"


def _job(store, items, latest=None) -> IngestJob:
    compiled = surveys.compiled_version(store, "health", 1, store.survey_versions("health")[1][0])
    return IngestJob("health", items, {1: compiled}, latest)


def _item(sid: str | None = None) -> PendingSubmission:
    raw = submission(sid=sid)
    return PendingSubmission(raw["submission_id"], 1,
                             {"smoker": bool(raw["answers"]["smoker"]),
                              "color": int(raw["answers"]["color"])})


def test_the_store_refuses_a_job_checked_against_an_older_newest_version(published, db_path,
                                                                         backend):
    process = CHILD_PLAN if backend == "sqlite-process" else None
    store = open_store(db_path, ingest_process=process)
    try:
        surveys.publish(store, manifest(survey_dict(version=2)))
        with pytest.raises(SurveyChanged):
            store.ingest(_job(store, [_item()], latest=1))
        assert sql(db_path, "SELECT count(*) FROM submissions") == [(0,)]
        surveys.close(store, "health")
        with pytest.raises(SurveyClosed):
            store.ingest(_job(store, [_item()], latest=2))
    finally:
        store.close()


@pytest.mark.backends("sqlite")
def test_a_group_with_an_id_stored_before_takes_the_careful_path(published, db_path):
    """Three jobs in one transaction: fresh ids; an id stored before, one repeated from the
    first job and a fresh one; all fresh again. Outcomes per job, counts and aggregates."""
    store = open_store(db_path)
    try:
        stored = _item()
        store.ingest(_job(store, [stored]))
        a, b, c, d = (_item() for _ in range(4))
        outcomes = store._ingest_group([  # what the group committer runs
            _job(store, [a, b]),
            _job(store, [_item(stored.submission_id), _item(a.submission_id), c]),
            _job(store, [d]),
        ])
        assert [o.to_dict() for o in outcomes] == [
            {"accepted": [a.submission_id, b.submission_id], "duplicates": []},
            {"accepted": [c.submission_id],
             "duplicates": [stored.submission_id, a.submission_id]},
            {"accepted": [d.submission_id], "duplicates": []},
        ]
        assert sql(db_path, "SELECT count(*) FROM submissions") == [(5,)]
        assert sql(db_path, "SELECT n_submissions FROM surveys") == [(5,)]
        assert recompute(store, fix=False) == []
    finally:
        store.close()


@pytest.mark.backends("sqlite")
def test_a_fresh_group_takes_the_fast_path(published, db_path, monkeypatch):
    """No id stored before: one transaction, no lookup of stored ids."""
    from ldpsurvey.server.store import sqlite as sqlite_store

    def no_lookup(*args):
        raise AssertionError("the fast path looked up stored ids")

    monkeypatch.setattr(sqlite_store, "_existing_ids", no_lookup)
    store = open_store(db_path)
    try:
        ids = [str(uuid.uuid4()) for _ in range(6)]
        outcomes = store._ingest_group([_job(store, [_item(i) for i in ids[:3]]),
                                        _job(store, [_item(i) for i in ids[3:]])])
        assert [o.accepted for o in outcomes] == [ids[:3], ids[3:]]
        assert recompute(store, fix=False) == []
    finally:
        store.close()


@pytest.mark.backends("sqlite")
def test_an_ingest_process_group_of_jobs_and_bodies_answers_each(published, db_path):
    """What the ingest process runs for one group (here in the test's process, on a store that
    read version 1 before another process stored version 2): a job checked against version 1
    comes back refused (its server checks it again), a body defaulting to the newest version is
    checked again here and stored as version 2, a body naming version 2 is stored, and a body
    that is not an object is refused alone."""
    store = open_store(db_path)
    try:
        stale = submissions.prepare(store, "health", [submission()], fresh=False)
        other = open_store(db_path)
        try:
            surveys.publish(other, manifest(survey_dict(version=2)))
        finally:
            other.close()
        implicit, explicit = submission(), submission(version=2)
        frames = [ingest_wire.job_frame(stale),
                  *(ingest_wire.body_frame("health", json.dumps(body).encode(), 10)
                    for body in (implicit, explicit)),
                  ingest_wire.body_frame("health", b"[1]", 10)]
        entries = [ingest_wire.entry_of(through_a_channel(frame)) for frame in frames]
        outcomes = [ingest_wire.answer_of(through_a_channel(ingest_wire.answer_frame(outcome)))
                    for outcome in ingest_process._run(store, entries, CHILD_PLAN)]
        assert isinstance(outcomes[0], SurveyChanged)
        assert [o.accepted for o in outcomes[1:3]] == [[implicit["submission_id"]],
                                                        [explicit["submission_id"]]]
        assert isinstance(outcomes[3], ValidationFailed)
        assert stored_version(db_path, implicit["submission_id"]) == 2
        assert stored_version(db_path, explicit["submission_id"]) == 2
        assert sql(db_path, "SELECT count(*) FROM submissions") == [(2,)]
        assert recompute(store, fix=False) == []
    finally:
        store.close()
