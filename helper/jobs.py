"""The helper's protocol: provisioning, aggregation jobs and collection (HTTP-free).

A job is idempotent: the same batch id with the same request returns the stored response (so a
leader that lost the answer can ask again), a different request under that id is refused. Its
reports, its aggregate share and its response commit in one transaction, after the replay
check is repeated inside it: each report id is aggregated at most once, whatever the leader
sends. Collection draws this server's noise once and stores it; asking again with the same
collection id returns the same numbers, any other collection of the batch is refused.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ldpsurvey.server.common.errors import Forbidden, ValidationFailed
from ldpsurvey.server.common.two_server.db import TwoServerDb
from ldpsurvey.server.common.two_server.errors import (
    BatchCollected,
    BatchConflict,
    BatchTooSmall,
    NoHpkeKey,
    NotTwoServer,
    ReportReplayed,
    TaskMismatch,
    UnknownBatch,
)
from ldpsurvey.shared.manifest import verify_manifest
from ldpsurvey.shared.survey import Survey, canonical_json
from ldpsurvey.shared.two_server import encoding, vdaf
from ldpsurvey.shared.two_server.aggregate import BatchAggregate, noisy_release
from ldpsurvey.shared.two_server.config import b64url, from_b64url
from ldpsurvey.shared.two_server.hpke import HpkeError
from ldpsurvey.shared.two_server.upload import UploadError, open_half, report_id_of

MAX_JOB_REPORTS = 100_000


@dataclass(frozen=True)
class Helper:
    db: TwoServerDb
    private_key: Any
    public_key: bytes
    trusted: frozenset[str] | None = None   # designer key fingerprints; None: any signer


@dataclass(frozen=True)
class Task:
    survey: Survey
    verify_key: bytes


def provision(helper: Helper, survey_id: str, version: int, manifest: Any,
              verify_key_text: Any) -> Task:
    """The survey version this job is for, checked and pinned on first use."""
    signed = verify_manifest(manifest)  # ManifestError -> 422
    survey = signed.survey
    if survey.id != survey_id or survey.version != version:
        raise ValidationFailed(f"the manifest is survey {survey.id!r} version "
                               f"{survey.version}, not {survey_id!r} version {version}")
    if survey.two_server is None:
        raise NotTwoServer(f"survey {survey_id!r} is not a two-server survey")
    if survey.two_server.helper_hpke_key != helper.public_key:
        raise NoHpkeKey(f"survey {survey_id!r} names another helper key: this helper cannot "
                        "open its shares")
    if helper.trusted is not None and signed.fingerprint not in helper.trusted:
        raise Forbidden(f"survey {survey_id!r} is signed by a key this helper does not trust "
                        f"({signed.fingerprint[:16]}…)")
    try:
        verify_key = from_b64url(verify_key_text)
    except ValueError:
        verify_key = b""
    sizes = {vdaf.verify_key_size(e) for e in encoding.encodings(survey).values()}
    if len(sizes) != 1 or len(verify_key) not in sizes:
        raise ValidationFailed(f"verify_key must be base64url of {sorted(sizes)} bytes")
    with helper.db.transaction() as cur:
        row = cur.execute("SELECT sha256, verify_key FROM hs_tasks WHERE survey_id = ? AND "
                          "version = ?", (survey_id, version)).fetchone()
        if row is None:
            cur.execute("INSERT INTO hs_tasks (survey_id, version, sha256, manifest, verify_key)"
                        " VALUES (?, ?, ?, ?, ?)", (survey_id, version, signed.sha256,
                                                    canonical_json(manifest).decode(),
                                                    b64url(verify_key)))
        elif row[0] != signed.sha256 or row[1] != b64url(verify_key):
            raise TaskMismatch(f"survey {survey_id!r} version {version} was provisioned with "
                               "another manifest or verify key")
    return Task(survey, verify_key)


def run_job(helper: Helper, survey_id: str, version: int, batch_id: str,
            body: Mapping[str, Any]) -> dict[str, Any]:
    """Prepare one batch's reports; the prep messages (None: rejected) per report and key."""
    task = provision(helper, survey_id, version, body.get("manifest"), body.get("verify_key"))
    reports = body.get("reports")
    if not isinstance(reports, list) or len(reports) > MAX_JOB_REPORTS:
        raise ValidationFailed(f"reports must be a list of at most {MAX_JOB_REPORTS}")
    assert task.survey.two_server is not None
    minimum = task.survey.two_server.min_batch_size
    if len(reports) < minimum:
        raise BatchTooSmall(f"a batch of {len(reports)} reports is below this survey's "
                            f"minimum of {minimum}: too few to hide one respondent",
                            {"reports": len(reports), "min_batch_size": minimum})
    request_sha = hashlib.sha256(canonical_json(body)).hexdigest()
    ids = [_report_id(r) for r in reports]
    if len(set(ids)) != len(ids):
        raise ReportReplayed("the job lists a report twice")
    stored = _stored_response(helper, survey_id, version, batch_id, request_sha)
    if stored is not None:
        return stored
    _check_replays(helper, survey_id, version, ids)
    response, aggregate = _prepare(helper, task, reports)
    response["batch_id"] = batch_id
    with helper.db.transaction() as cur:
        again = _stored_response_in(cur, survey_id, version, batch_id, request_sha)
        if again is not None:
            return again
        _check_replays_in(cur, survey_id, version, ids)
        for rid in ids:
            cur.execute("INSERT INTO hs_reports (survey_id, version, report_id, batch_id) "
                        "VALUES (?, ?, ?, ?)", (survey_id, version, rid, batch_id))
        cur.execute("INSERT INTO hs_batches (survey_id, version, batch_id, request_sha256, "
                    "response, aggregate) VALUES (?, ?, ?, ?, ?, ?)",
                    (survey_id, version, batch_id, request_sha, json.dumps(response),
                     json.dumps(aggregate.to_dict())))
    return response


def _report_id(report: Any) -> str:
    if not isinstance(report, Mapping):
        raise ValidationFailed("each report of a job is an object")
    try:
        report_id_of(report.get("submission_id"))
    except UploadError as exc:
        raise ValidationFailed(exc.message) from None
    return report["submission_id"]


def _stored_response(helper: Helper, survey_id: str, version: int, batch_id: str,
                     request_sha: str) -> dict[str, Any] | None:
    with helper.db.transaction() as cur:
        return _stored_response_in(cur, survey_id, version, batch_id, request_sha)


def _stored_response_in(cur: Any, survey_id: str, version: int, batch_id: str,
                        request_sha: str) -> dict[str, Any] | None:
    row = cur.execute("SELECT request_sha256, response FROM hs_batches WHERE survey_id = ? AND "
                      "version = ? AND batch_id = ?", (survey_id, version, batch_id)).fetchone()
    if row is None:
        return None
    if row[0] != request_sha:
        raise BatchConflict(f"batch {batch_id} was already aggregated with other reports")
    return json.loads(row[1])


def _check_replays(helper: Helper, survey_id: str, version: int, ids: list[str]) -> None:
    with helper.db.transaction() as cur:
        _check_replays_in(cur, survey_id, version, ids)


def _check_replays_in(cur: Any, survey_id: str, version: int, ids: list[str]) -> None:
    seen: list[str] = []
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        marks = ",".join("?" * len(chunk))
        seen += [r[0] for r in cur.execute(
            f"SELECT report_id FROM hs_reports WHERE survey_id = ? AND version = ? AND "  # noqa: S608
            f"report_id IN ({marks})", (survey_id, version, *chunk)).fetchall()]
    if seen:
        raise ReportReplayed(f"{len(seen)} report(s) of this job were already aggregated "
                             f"(e.g. {sorted(seen)[0]}): each report counts at most once",
                             {"replayed": sorted(seen)[:20]})


def _prepare(helper: Helper, task: Task, reports: list[Any]) -> tuple[dict[str, Any],
                                                                       BatchAggregate]:
    survey = task.survey
    encodings = encoding.encodings(survey)
    aggregate = BatchAggregate.empty(encodings)
    errors = vdaf.verify_errors()
    prep_msgs: dict[str, dict[str, str | None]] = {}
    for report in reports:
        sid = report["submission_id"]
        rid = report_id_of(sid)
        public = _b64_map(report.get("public_shares"))
        leader = _b64_map(report.get("leader_prep_shares"))
        try:
            halves = open_half(from_b64url(report.get("helper_share", "")), helper.private_key,
                               survey.id, survey.version, rid, "helper", set(public))
        except (HpkeError, UploadError, ValueError):
            halves = {}
        msgs: dict[str, str | None] = {}
        for key, public_share in public.items():
            enc = encodings.get(key)
            msg = None
            if enc is not None and key in halves and key in leader:
                ctx = encoding.ctx(survey, key)
                try:
                    state, own = vdaf.prep_init(enc, task.verify_key, ctx, vdaf.HELPER, rid,
                                                public_share, halves[key])
                    raw = vdaf.combine(enc, ctx, [leader[key], own])
                    out = vdaf.finish(enc, ctx, state, raw)
                    aggregate.keys[key].add(out, vdaf.modulus(enc))
                    msg = b64url(raw)
                except errors:
                    msg = None
            if msg is None and key in aggregate.keys:
                aggregate.keys[key].rejected += 1
            msgs[key] = msg
        prep_msgs[sid] = msgs
    return {"prep_msgs": prep_msgs}, aggregate


def _b64_map(value: Any) -> dict[str, bytes]:
    if not isinstance(value, Mapping):
        return {}
    out = {}
    for k, v in value.items():
        try:
            out[str(k)] = from_b64url(v)
        except ValueError:
            continue
    return out


def collect(helper: Helper, survey_id: str, version: int, batch_id: str,
            body: Mapping[str, Any]) -> dict[str, Any]:
    """This helper's noisy aggregate share of a batch; drawn once, refused to a second
    collector."""
    collection_id = body.get("collection_id")
    if not isinstance(collection_id, str) or not 1 <= len(collection_id) <= 100:
        raise ValidationFailed("collection_id must be a string of 1-100 characters")
    with helper.db.transaction() as cur:
        row = cur.execute("SELECT b.aggregate, b.collection_id, b.collected, t.manifest FROM "
                          "hs_batches b JOIN hs_tasks t ON t.survey_id = b.survey_id AND "
                          "t.version = b.version WHERE b.survey_id = ? AND b.version = ? AND "
                          "b.batch_id = ?", (survey_id, version, batch_id)).fetchone()
        if row is None:
            raise UnknownBatch(f"batch {batch_id} of survey {survey_id!r} version {version} "
                               "was never aggregated here")
        if row[2] is not None:
            if row[1] != collection_id:
                raise BatchCollected(f"batch {batch_id} was already collected: a batch is "
                                     "released once")
            return json.loads(row[2])
        survey = Survey.from_dict(json.loads(row[3])["survey"])
        release = noisy_release(survey, encoding.encodings(survey),
                                BatchAggregate.from_dict(json.loads(row[0])))
        result = {"batch_id": batch_id, "entries": release}
        cur.execute("UPDATE hs_batches SET collection_id = ?, collected = ? WHERE survey_id = ? "
                    "AND version = ? AND batch_id = ?", (collection_id, json.dumps(result),
                                                         survey_id, version, batch_id))
    return result
