"""The leader: takes uploads, forms batches, drives aggregation jobs, collects batches.

- Upload: the survey must be an open two-server survey naming this leader's HPKE key; the
  leader's sealed half must open (else 422, nothing stored); the upload is stored durably and
  answered 2xx only after the commit. Re-sending the same upload is a duplicate (200); another
  upload under the same submission id is refused.
- Invitations: a survey made invite-only (`ldpsurvey invites create`) takes an upload only with
  an unused invitation code (`invite`), claimed in the transaction that stores the upload, as
  the LDP mode does; the code is not kept with the upload (only its hash, bound to the upload's
  submission id, in the invitations table).
- Batching: once at least `min_batch_size` uploads of a version wait, they become one batch
  (a batch id and the reports' membership commit together). When the invitation codes carry a
  design, uploads are batched per part of the sample: per the code's stratum (a
  post-stratification cell) and random group, so each batch is one cell's (one group's)
  aggregate and every respondent is in exactly one batch (docs/weights.md, "Two-server
  surveys"). The part comes from the operator's code, never from an answer.
- Aggregation: for each batch not yet aggregated the leader runs Prio3 `prep_init` on its
  shares, sends one job to the helper, finishes preparation with the helper's prep messages and
  stores its aggregate share, marking the batch aggregated. If the helper is down the batch
  stays pending; the same request is sent again later (the helper answers a repeated job from
  its store), so nothing is lost or counted twice.
- Collection: the leader draws its noise once and stores it, then asks the helper for its
  noisy share (collection id = batch id, so a retry gets the same numbers), sums both: the
  analyst gets the `CollectedBatch`. A collected batch is served again unchanged, never
  re-noised; a batch never overlaps another (a report belongs to one batch).
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ldpsurvey.shared.errors import LdpSurveyError
from ldpsurvey.shared.survey import Survey, canonical_json
from ldpsurvey.shared.two_server import encoding, vdaf
from ldpsurvey.shared.two_server.aggregate import BatchAggregate, noisy_release
from ldpsurvey.shared.two_server.config import b64url, from_b64url
from ldpsurvey.shared.two_server.plans import key_epsilon
from ldpsurvey.shared.two_server.results import BatchEntry, CollectedBatch
from ldpsurvey.shared.two_server.upload import Upload, UploadError, open_half, parse_upload

from .. import invites, surveys
from ..common.errors import SurveyClosed, ValidationFailed
from ..common.two_server.db import TwoServerDb
from ..common.two_server.errors import (
    BatchNotReady,
    HelperRefused,
    HelperUnavailable,
    NoHpkeKey,
    NotTwoServer,
    UnknownBatch,
)
from ..common.wire_ints import VERSION_RANGE, wire_int
from ..invites.claims import digest, plan_claims
from ..store import Store
from . import helper_client

_surveys: dict[str, Survey] = {}
_surveys_lock = threading.Lock()


@dataclass(frozen=True)
class Leader:
    db: TwoServerDb
    store: Store
    private_key: Any | None
    public_key: bytes | None
    # presented to the helper (server/common/two_server/helper_token.py)
    helper_token: str | None = None


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def survey_of(record: surveys.SurveyRecord) -> Survey:
    with _surveys_lock:
        found = _surveys.get(record.sha256)
    if found is None:
        found = Survey.from_dict(record.manifest["survey"])
        with _surveys_lock:
            _surveys[record.sha256] = found
    return found


def _two_server(leader: Leader, record: surveys.SurveyRecord) -> Survey:
    survey = survey_of(record)
    if survey.two_server is None:
        raise NotTwoServer(f"survey {record.id!r} is not a two-server survey: devices submit "
                           f"randomized reports to /api/surveys/{record.id}/submissions")
    if leader.public_key is None or leader.public_key != survey.two_server.leader_hpke_key:
        raise NoHpkeKey(f"survey {record.id!r} names a leader HPKE key this server does not "
                        "hold (start it with `serve --hpke-key` and the key the survey names)")
    return survey


# --- uploads ---------------------------------------------------------------------------------


def accept_upload(leader: Leader, survey_id: str, body: Any) -> tuple[dict[str, Any], bool]:
    """Store one upload; ({submission_id, duplicate}, created?). Raises before storing."""
    if not isinstance(body, Mapping):
        raise UploadError("an upload is a JSON object")
    body = dict(body)
    code = body.pop("invite", None)
    if code is not None:
        problems: list[dict[str, str]] = []
        if invites.check_shape({"invite": code}, problems) is None:
            raise UploadError("invite must be an invitation code string", {"field": "invite"})
    version = wire_int(body.get("version"), "version", *VERSION_RANGE)
    record = surveys.get(leader.store, survey_id, version)
    survey = _two_server(leader, record)
    if record.status != "open":
        raise SurveyClosed(f"survey {survey_id!r} is closed and takes no more uploads")
    keys = set(encoding.encodings(survey))
    upload = parse_upload(body, keys)
    missing = sorted(q.id for q in survey.questions
                     if not q.optional and q.id not in upload.public_shares)
    if missing:
        raise UploadError(f"question {missing[0]!r} is required", {"field": missing[0]})
    for spec in survey.crosstabs:  # a crosstab cell exactly when both its questions answered
        both = spec.rows in upload.public_shares and spec.cols in upload.public_shares
        if both != (spec.key in upload.public_shares):
            raise UploadError(f"{spec.key} must be sent exactly when {spec.rows!r} and "
                              f"{spec.cols!r} are both answered", {"field": spec.key})
    halves = open_half(upload.leader_share, leader.private_key, survey.id, version,
                       upload.report_id, "leader", set(upload.public_shares))
    del halves  # opening proves the upload was sealed for this survey, version and report
    text = canonical_json(dict(body)).decode()
    with leader.db.transaction() as cur:
        _still_open(cur, survey_id, version)
        row = cur.execute("SELECT body FROM ts_uploads WHERE survey_id = ? AND report_id = ?",
                          (survey_id, upload.submission_id)).fetchone()
        if row is not None and row[0] != text:
            raise ValidationFailed(f"submission {upload.submission_id} was already "
                                   "uploaded with other content")
        _claim_invite(cur, survey_id, upload.submission_id, code, new=row is None)
        if row is not None:
            return {"submission_id": upload.submission_id, "duplicate": True}, False
        cur.execute("INSERT INTO ts_uploads (survey_id, report_id, version, body) VALUES "
                    "(?, ?, ?, ?)", (survey_id, upload.submission_id, version, text))
    return {"submission_id": upload.submission_id, "duplicate": False}, True


def _still_open(cur: Any, survey_id: str, version: int) -> None:
    """The version's status read again in the storing transaction, under a lock that a close
    and `invites create` wait for (PostgreSQL: FOR KEY SHARE against their FOR UPDATE; SQLite:
    BEGIN IMMEDIATE holds every other writer back), so that nothing is stored after either
    returned (issue 39): the status read before the transaction may be outdated by then, and
    `_claim_invite` reads the invite-only flag after this lock, in a statement of its own."""
    lock = " FOR KEY SHARE" if cur.postgres else ""
    row = cur.execute(f"SELECT status FROM surveys WHERE id = ? AND version = ?{lock}",  # noqa: S608
                      (survey_id, version)).fetchone()
    if row is None or row[0] != "open":
        raise SurveyClosed(f"survey {survey_id!r} is closed and takes no more uploads")


def _claim_invite(cur: Any, survey_id: str, submission_id: str, code: str | None,
                  new: bool) -> None:
    """In an invite-only survey, bind the upload's code to it (a new upload needs an unused
    code; a resend, the code already bound to it), or InviteRefused: nothing is stored. The
    invitations are the store's table in the same database (server/invites/)."""
    if cur.execute("SELECT 1 FROM invite_surveys WHERE survey_id = ?",
                   (survey_id,)).fetchone() is None:
        return  # not invite-only: a code is not needed, and not kept
    bound: dict[str, str | None] = {}
    if code is not None:
        key = digest(code)
        lock = " FOR UPDATE" if cur.postgres else ""  # SQLite: BEGIN IMMEDIATE holds it
        row = cur.execute("SELECT submission_id FROM invites WHERE survey_id = ? AND "  # noqa: S608
                          f"code_sha256 = ?{lock}", (survey_id, key)).fetchone()
        if row is not None:
            bound[key] = row[0]
    claims = plan_claims([(submission_id, code)], {submission_id} if new else set(),
                         bound)
    for key, sid in claims.items():
        cur.execute("UPDATE invites SET submission_id = ? WHERE survey_id = ? AND "
                    "code_sha256 = ?", (sid, survey_id, key))


# --- batching and aggregation --------------------------------------------------------------


@dataclass(frozen=True)
class Part:
    """The part of the sample a batch holds: the invitation codes' stratum (a
    post-stratification cell) and random group; None where the codes carry none."""

    cell: str | None = None
    group: int | None = None

    def to_text(self) -> str | None:
        if self.cell is None and self.group is None:
            return None
        return json.dumps({"cell": self.cell, "group": self.group}, sort_keys=True)

    @classmethod
    def from_text(cls, text: str | None) -> Part:
        if text is None:
            return cls()
        data = json.loads(text)
        group = data.get("group")
        return cls(data.get("cell"), None if group is None else int(group))

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in (("cell", self.cell), ("group", self.group)) if v is not None}


def waiting_parts(cur: Any, survey_id: str, version: int) -> dict[Part, list[str]]:
    """The waiting uploads of a version by part of the sample (the design of the invitation
    code each was claimed with; Part() for an upload without one)."""
    parts: dict[Part, list[str]] = {}
    for report_id, stratum, group in cur.execute(
            "SELECT u.report_id, i.stratum, i.random_group FROM ts_uploads u LEFT JOIN "
            "invites i ON i.survey_id = u.survey_id AND i.submission_id = u.report_id WHERE "
            "u.survey_id = ? AND u.version = ? AND u.batch_id IS NULL ORDER BY u.report_id",
            (survey_id, version)).fetchall():
        part = Part(stratum, None if group is None else int(group))
        parts.setdefault(part, []).append(report_id)
    return parts


def form_batches(leader: Leader, survey: Survey) -> list[str]:
    """Put the waiting uploads of a version into a new batch once there are enough: one batch
    per part of the sample (`Part`) that has `min_batch_size` uploads waiting."""
    assert survey.two_server is not None
    formed = []
    with leader.db.transaction() as cur:
        for part, waiting in sorted(waiting_parts(cur, survey.id, survey.version).items(),
                                    key=lambda item: item[0].to_text() or ""):
            if len(waiting) < survey.two_server.min_batch_size:
                continue
            batch_id = str(uuid.uuid4())
            for start in range(0, len(waiting), 500):
                chunk = waiting[start:start + 500]
                marks = ",".join("?" * len(chunk))
                cur.execute(f"UPDATE ts_uploads SET batch_id = ? WHERE survey_id = ? AND "  # noqa: S608
                            f"batch_id IS NULL AND report_id IN ({marks})",
                            (batch_id, survey.id, *chunk))
            cur.execute("INSERT INTO ts_batches (survey_id, version, batch_id, state, "
                        "n_reports, created, part) VALUES (?, ?, ?, 'pending', ?, ?, ?)",
                        (survey.id, survey.version, batch_id, len(waiting), _now(),
                         part.to_text()))
            formed.append(batch_id)
    return formed


def verify_key(leader: Leader, survey: Survey) -> bytes:
    """This survey version's Prio3 verify key, drawn once from the OS CSPRNG and kept."""
    import os

    size = vdaf.verify_key_size(next(iter(encoding.encodings(survey).values())))
    with leader.db.transaction() as cur:
        row = cur.execute("SELECT verify_key FROM ts_keys WHERE survey_id = ? AND version = ?",
                          (survey.id, survey.version)).fetchone()
        if row is not None:
            return from_b64url(row[0])
        key = os.urandom(size)
        cur.execute("INSERT INTO ts_keys (survey_id, version, verify_key) VALUES (?, ?, ?)",
                    (survey.id, survey.version, b64url(key)))
    return key


def aggregate(leader: Leader, survey_id: str) -> dict[str, Any]:
    """Form batches and run every pending aggregation job of a survey (all versions).

    HelperUnavailable propagates (503): the batches stay pending and the next run resumes."""
    surveys.get(leader.store, survey_id)  # NotFound
    summary = {"batches_formed": 0, "batches_aggregated": 0}
    for version in sorted(surveys.versions(leader.store, survey_id)):
        record = surveys.get(leader.store, survey_id, version)
        survey = _two_server(leader, record)
        summary["batches_formed"] += len(form_batches(leader, survey))
        with leader.db.transaction() as cur:
            pending = [r[0] for r in cur.execute(
                "SELECT batch_id FROM ts_batches WHERE survey_id = ? AND version = ? AND "
                "state = 'pending' ORDER BY created, batch_id", (survey_id, version)).fetchall()]
        for batch_id in pending:
            run_job(leader, record, survey, batch_id)
            summary["batches_aggregated"] += 1
    return summary


def run_job(leader: Leader, record: surveys.SurveyRecord, survey: Survey, batch_id: str) -> None:
    """One aggregation job with the helper for one batch; stores the leader's aggregate."""
    assert survey.two_server is not None
    key = verify_key(leader, survey)
    with leader.db.transaction() as cur:
        bodies = [json.loads(r[0]) for r in cur.execute(
            "SELECT body FROM ts_uploads WHERE survey_id = ? AND version = ? AND batch_id = ? "
            "ORDER BY report_id", (survey.id, survey.version, batch_id)).fetchall()]
    encodings = encoding.encodings(survey)
    states: dict[tuple[str, str], Any] = {}
    reports = []
    for body in bodies:
        upload = parse_upload(body, set(encodings))
        prep_shares = _leader_prep(leader, survey, key, upload, encodings, states)
        reports.append({"submission_id": upload.submission_id,
                        "public_shares": body["public_shares"],
                        "helper_share": body["helper_share"],
                        "leader_prep_shares": prep_shares})
    request = {"manifest": {k: record.manifest[k] for k in ("survey", "signature",
                                                            "public_key")},
               "verify_key": b64url(key), "reports": reports}
    response = helper_client.post(survey.two_server.helper_url,
                                  helper_client.job_path(survey.id, survey.version, batch_id),
                                  request, leader.helper_token)
    result = _finish(survey, encodings, states, reports, response)
    with leader.db.transaction() as cur:
        cur.execute("UPDATE ts_batches SET state = 'aggregated', result = ? WHERE survey_id = ? "
                    "AND version = ? AND batch_id = ? AND state = 'pending'",
                    (json.dumps(result.to_dict()), survey.id, survey.version, batch_id))


def _leader_prep(leader: Leader, survey: Survey, key: bytes, upload: Upload,
                 encodings: Mapping[str, Any], states: dict[tuple[str, str], Any]
                 ) -> dict[str, str]:
    try:
        halves = open_half(upload.leader_share, leader.private_key, survey.id, survey.version,
                           upload.report_id, "leader", set(upload.public_shares))
    except LdpSurveyError:  # checked at upload; a key rotated since: reject it
        return {}
    out = {}
    for k, public in upload.public_shares.items():
        try:
            state, share = vdaf.prep_init(encodings[k], key, encoding.ctx(survey, k),
                                          vdaf.LEADER, upload.report_id, public, halves[k])
        except vdaf.verify_errors():
            continue
        states[(upload.submission_id, k)] = state
        out[k] = b64url(share)
    return out


def _finish(survey: Survey, encodings: Mapping[str, Any], states: Mapping[tuple[str, str], Any],
            reports: list[dict[str, Any]], response: Any) -> BatchAggregate:
    msgs = response.get("prep_msgs") if isinstance(response, Mapping) else None
    if not isinstance(msgs, Mapping):
        raise HelperRefused("the helper's job response has no prep_msgs")
    aggregate = BatchAggregate.empty(encodings)
    for report in reports:
        sid = report["submission_id"]
        per_key = msgs.get(sid) or {}
        for k in report["public_shares"]:
            msg, state = per_key.get(k), states.get((sid, k))
            out = None
            if msg is not None and state is not None:
                try:
                    out = vdaf.finish(encodings[k], encoding.ctx(survey, k), state,
                                      from_b64url(msg))
                except (ValueError, *vdaf.verify_errors()):
                    out = None
            if out is None:
                aggregate.keys[k].rejected += 1
            else:
                aggregate.keys[k].add(out, vdaf.modulus(encodings[k]))
    return aggregate


# --- batches and collection ------------------------------------------------------------------


def list_batches(leader: Leader, survey_id: str) -> list[dict[str, Any]]:
    surveys.get(leader.store, survey_id)  # NotFound
    with leader.db.transaction() as cur:
        rows = cur.execute("SELECT version, batch_id, state, n_reports, created, collected IS "
                           "NOT NULL, part FROM ts_batches WHERE survey_id = ? ORDER BY "
                           "created, batch_id", (survey_id,)).fetchall()
        waiting = cur.execute("SELECT COUNT(*) FROM ts_uploads WHERE survey_id = ? AND "
                              "batch_id IS NULL", (survey_id,)).fetchone()[0]
    batches = [{"version": v, "batch_id": b, "state": "collected" if c else s,
                "reports": n, "created": t, **Part.from_text(p).to_dict()}
               for v, b, s, n, t, c, p in rows]
    return [{"waiting_uploads": int(waiting)}, *batches]


def collect(leader: Leader, survey_id: str, batch_id: str) -> CollectedBatch:
    """The batch's noisy sums (both servers' noise); computed once, then served unchanged."""
    with leader.db.transaction() as cur:
        row = cur.execute("SELECT version, state, result, leader_noisy, collected, part FROM "
                          "ts_batches WHERE survey_id = ? AND batch_id = ?",
                          (survey_id, batch_id)).fetchone()
    if row is None:
        raise UnknownBatch(f"survey {survey_id!r} has no batch {batch_id}")
    version, state, result, noisy, collected, part = row
    if collected is not None:
        return CollectedBatch.from_dict(json.loads(collected))
    if state != "aggregated":
        raise BatchNotReady(f"batch {batch_id} is not aggregated yet (is the helper up?): run "
                            "the aggregation first")
    record = surveys.get(leader.store, survey_id, version)
    survey = _two_server(leader, record)
    assert survey.two_server is not None
    encodings = encoding.encodings(survey)
    if noisy is None:
        drawn = noisy_release(survey, encodings, BatchAggregate.from_dict(json.loads(result)))
        with leader.db.transaction() as cur:
            cur.execute("UPDATE ts_batches SET leader_noisy = ? WHERE survey_id = ? AND "
                        "batch_id = ? AND leader_noisy IS NULL",
                        (json.dumps(drawn), survey_id, batch_id))
            noisy = cur.execute("SELECT leader_noisy FROM ts_batches WHERE survey_id = ? AND "
                                "batch_id = ?", (survey_id, batch_id)).fetchone()[0]
    own = json.loads(noisy)
    theirs = helper_client.post(survey.two_server.helper_url,
                                helper_client.collect_path(survey_id, version, batch_id),
                                {"collection_id": batch_id},
                                leader.helper_token).get("entries", {})
    batch = _combine(survey, encodings, batch_id, own, theirs, Part.from_text(part))
    with leader.db.transaction() as cur:
        cur.execute("UPDATE ts_batches SET collected = ? WHERE survey_id = ? AND batch_id = ? "
                    "AND collected IS NULL", (json.dumps(batch.to_dict()), survey_id, batch_id))
    return batch


def _combine(survey: Survey, encodings: Mapping[str, Any], batch_id: str,
             own: Mapping[str, Any], theirs: Mapping[str, Any],
             part: Part | None = None) -> CollectedBatch:
    from ldpsurvey.shared.two_server.noise import decode_signed

    entries = {}
    for key, enc in encodings.items():
        mine, other = own[key], theirs.get(key)
        if not isinstance(other, Mapping) or other.get("n") != mine["n"] or (
                len(other.get("share", ())) != len(mine["share"])):
            raise HelperRefused(f"the helper's aggregate of {key!r} does not match the "
                                f"leader's (report counts differ): the batch is not released")
        p = vdaf.modulus(enc)
        sums = tuple(decode_signed((int(a) + int(b)) % p, p)
                     for a, b in zip(mine["share"], other["share"], strict=True))
        entries[key] = BatchEntry(key=key, kind=enc.kind, noisy_sums=sums, n=mine["n"],
                                  rejected=mine["rejected"],
                                  central_epsilon=key_epsilon(survey, key),
                                  sensitivity=enc.sensitivity, offset=enc.offset)
    part = part or Part()
    return CollectedBatch(survey.id, survey.version, batch_id, entries, part.cell, part.group)


__all__ = ["HelperUnavailable", "Leader", "accept_upload", "aggregate", "collect",
           "list_batches"]
