"""Submissions: validate a request completely, then store it and update aggregates atomically.

A request holds one submission or a batch. Every item is checked (shape, UUID, version,
every report by its question's mechanism, required questions present) before anything is
written; one bad item rejects the request with per-item errors. The accepted rows and the
aggregate updates are one BEGIN IMMEDIATE transaction. A `submission_id` already stored for
the survey, or repeated within the request, is acknowledged as a duplicate and not counted.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sqlite_utils

from ..shared.aggregates import Aggregate
from ..shared.errors import LdpSurveyError
from . import crosstabs, invites, surveys
from .compiled import CompiledSurvey
from .db import connect, transaction
from .errors import SubmissionRejected, SurveyClosed, ValidationFailed
from .group_commit import committer_for
from .hours import current_hour

MAX_BATCH = 10_000
MAX_ITEM_ERRORS = 100  # per-item errors listed in a 422 (the count is always complete)
MAX_MESSAGE = 300  # a report echoed in an error message is cut here
_ITEM_KEYS = frozenset({"submission_id", "answers", "version", "invite"})
_IN_CHUNK = 500


@dataclass
class Item:
    """One valid submission, normalized: canonical UUID text and normalized reports."""

    submission_id: str
    version: int
    reports: dict[str, Any]
    invite: str | None = None  # invitation code (invite-only surveys; see invites.py)


@dataclass
class StoreResult:
    accepted: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"accepted": self.accepted, "duplicates": self.duplicates}


def submit(db: sqlite_utils.Database, survey_id: str, body: Mapping[str, Any],
           max_batch: int = MAX_BATCH) -> StoreResult:
    """Validate and store a submission request for a survey; raises before storing anything."""
    raw_items = _raw_items(body, max_batch)
    stored_versions = surveys.versions(db, survey_id)
    if not stored_versions:
        surveys.get(db, survey_id)  # raises NotFound
    latest = max(stored_versions)
    errors: list[dict[str, Any]] = []
    n_bad = 0
    parsed: list[tuple[int, str, int, Mapping[str, Any], str | None]] = []
    for index, raw in enumerate(raw_items):
        problems: list[dict[str, str]] = []
        sid, version, answers = _shape(raw, latest, stored_versions, problems)
        code = invites.check_shape(raw, problems) if isinstance(raw, Mapping) else None
        if problems:
            n_bad += 1
            _note(errors, index, sid, problems)
        else:
            parsed.append((index, sid, version, answers, code))
    closed = sorted({v for _, _, v, _, _ in parsed if stored_versions[v][1] != "open"})
    if closed:
        raise SurveyClosed(f"survey {survey_id!r} is closed and takes no more submissions",
                           {"id": survey_id, "closed_versions": closed})
    compiled = {v: surveys.compiled_version(db, survey_id, v, stored_versions[v][0])
                for v in {v for _, _, v, _, _ in parsed}}
    items: list[Item] = []
    for index, sid, version, answers, code in parsed:
        problems = []
        reports = _validate_answers(compiled[version], answers, problems)
        if problems:
            n_bad += 1
            _note(errors, index, sid, problems)
        else:
            items.append(Item(sid, version, reports, code))
    if n_bad:
        total = len(raw_items)
        raise SubmissionRejected(
            f"{n_bad} of {total} submission(s) invalid; nothing was stored",
            {"invalid": n_bad, "total": total,
             "items": sorted(errors, key=lambda e: e["index"])})
    return _store(db, Job(survey_id, items, compiled))


def _raw_items(body: Mapping[str, Any], max_batch: int) -> list[Any]:
    if "submissions" in body:
        extra = sorted(str(k) for k in body if k != "submissions")
        if extra:
            raise ValidationFailed(f"a batch holds only 'submissions'; unknown key {extra[0]!r}",
                                   {"field": extra[0]})
        batch = body["submissions"]
        if not isinstance(batch, list) or not batch:
            raise ValidationFailed("'submissions' must be a non-empty list",
                                   {"field": "submissions"})
        if len(batch) > max_batch:
            raise ValidationFailed(f"a batch holds at most {max_batch} submissions "
                                   f"(got {len(batch)})",
                                   {"field": "submissions", "max": max_batch})
        return batch
    return [body]


def _note(errors: list[dict[str, Any]], index: int, sid: str | None,
          problems: list[dict[str, str]]) -> None:
    if len(errors) < MAX_ITEM_ERRORS:
        errors.append({"index": index, "submission_id": sid, "errors": problems})


def _shape(raw: Any, latest: int, stored: Mapping[int, tuple[str, str]],
           problems: list[dict[str, str]]) -> tuple[Any, Any, Any]:
    if not isinstance(raw, Mapping):
        problems.append({"field": "", "message": "a submission must be an object"})
        return None, None, None
    for key in sorted(str(k) for k in raw if k not in _ITEM_KEYS):
        problems.append({"field": key, "message": "unknown key"})
    sid = canonical_uuid(raw.get("submission_id"))
    if sid is None:
        problems.append({"field": "submission_id", "message": "must be a UUID string"})
    version = raw.get("version", latest)
    if isinstance(version, bool) or not isinstance(version, int):
        problems.append({"field": "version", "message": "must be an integer"})
    elif version not in stored:
        known = ", ".join(str(v) for v in sorted(stored))
        problems.append({"field": "version",
                         "message": f"this survey has no version {version} (stored: {known})"})
    answers = raw.get("answers")
    if not isinstance(answers, Mapping) or not answers:
        problems.append({"field": "answers",
                         "message": "must be a non-empty object of question id -> report"})
    return sid, version, answers


def canonical_uuid(value: Any) -> str | None:
    """The lowercase hyphenated form of a UUID string, or None if it is not one."""
    if not isinstance(value, str) or len(value) > 45:
        return None
    try:
        return str(uuid.UUID(value))
    except ValueError:
        return None


def _validate_answers(compiled: CompiledSurvey, answers: Mapping[str, Any],
                      problems: list[dict[str, str]]) -> dict[str, Any]:
    reports: dict[str, Any] = {}
    mechanisms = compiled.mechanisms
    for qid, report in answers.items():
        mechanism = mechanisms.get(qid)
        if mechanism is None:
            problems.append({"field": f"answers.{qid}", "message": "unknown question id"})
            continue
        try:
            reports[qid] = _plain(mechanism.validate_report(report))
        except (LdpSurveyError, TypeError, ValueError, OverflowError) as exc:
            message = exc.message if isinstance(exc, LdpSurveyError) else str(exc)
            problems.append({"field": f"answers.{qid}", "message": message[:MAX_MESSAGE]})
    for qid in sorted(compiled.required - answers.keys()):
        problems.append({"field": f"answers.{qid}", "message": "required question missing"})
    return reports


def _plain(value: Any) -> Any:
    """A JSON-safe copy of a normalized report (numpy scalars/arrays become Python values)."""
    if isinstance(value, np.generic | np.ndarray):
        return value.tolist()
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


@dataclass(frozen=True)
class Job:
    """One validated request waiting to be stored."""

    survey_id: str
    items: list[Item]
    compiled: Mapping[int, CompiledSurvey]


def _store(db: sqlite_utils.Database, job: Job) -> StoreResult:
    """Store a validated request; concurrent requests share one transaction (group commit)."""
    path = db.execute("PRAGMA database_list").fetchone()[2]
    key = path or f"memory:{id(db)}"
    return committer_for(key).run(job, lambda jobs: _store_jobs(db, key, jobs))


def _store_jobs(db: sqlite_utils.Database, db_key: str, jobs: Sequence[Job]) -> list[Any]:
    """One transaction for several requests, in order: a StoreResult or an error per job.

    Later jobs see earlier ones' ids as duplicates; aggregates are read once per survey
    version, merged in memory and written once."""
    outcomes: list[Any] = []
    hour = current_hour()
    with transaction(db) as conn:
        known: dict[str, set[str]] = {}
        status: dict[tuple[str, int], str] = {}
        rows: list[tuple] = []
        added: dict[tuple[str, int], list[Item]] = {}
        for job in jobs:
            sid = job.survey_id
            for version in {it.version for it in job.items}:
                if (sid, version) not in status:
                    row = conn.execute("SELECT status FROM surveys WHERE id = ? AND version = ?",
                                       (sid, version)).fetchone()
                    status[(sid, version)] = row[0] if row else "missing"
            closed = sorted({it.version for it in job.items if status[(sid, it.version)] != "open"})
            if closed:  # closed between validation and now
                outcomes.append(SurveyClosed(f"survey {sid!r} is closed and takes no more "
                                             "submissions", {"id": sid, "closed_versions": closed}))
                continue
            seen = known.setdefault(sid, set())
            seen |= _existing_ids(conn, sid, [it.submission_id for it in job.items
                                              if it.submission_id not in seen])
            result = StoreResult()
            fresh: list[Item] = []
            new_ids: set[str] = set()
            for it in job.items:
                if it.submission_id in seen or it.submission_id in new_ids:
                    result.duplicates.append(it.submission_id)
                    continue
                new_ids.add(it.submission_id)
                result.accepted.append(it.submission_id)
                fresh.append(it)
            if invites.invite_only(conn, sid):
                try:  # claims the codes, or refuses the whole request claiming none
                    invites.claim(conn, sid, [(it.submission_id, it.invite) for it in job.items],
                                  new_ids)
                except invites.InviteRefused as exc:
                    outcomes.append(exc)
                    continue
            seen |= new_ids
            for it in fresh:
                rows.append((sid, it.version, it.submission_id, hour,
                             json.dumps(it.reports, separators=(",", ":"), ensure_ascii=False)))
                added.setdefault((sid, it.version), []).append(it)
            outcomes.append(result)
        if rows:
            conn.executemany(
                "INSERT INTO submissions (survey_id, version, submission_id, received_hour, "
                "reports) VALUES (?, ?, ?, ?, ?)", rows)
        compiled = {(job.survey_id, v): c for job in jobs for v, c in job.compiled.items()}
        for (sid, version), items in added.items():
            _add_to_aggregates(conn, db_key, sid, version, compiled[(sid, version)], items)
            conn.execute("UPDATE surveys SET n_submissions = n_submissions + ?, "
                         "last_submission_hour = ? WHERE id = ? AND version = ?",
                         (len(items), hour, sid, version))
    return outcomes


def _existing_ids(conn: Any, survey_id: str, ids: list[str]) -> set[str]:
    found: set[str] = set()
    unique = list(dict.fromkeys(ids))
    for start in range(0, len(unique), _IN_CHUNK):
        chunk = unique[start:start + _IN_CHUNK]
        marks = ",".join("?" * len(chunk))
        rows = conn.execute(f"SELECT submission_id FROM submissions WHERE survey_id = ? "  # noqa: S608
                            f"AND submission_id IN ({marks})", (survey_id, *chunk))
        found.update(r[0] for r in rows)
    return found


# (database, survey, version, question) -> (stored JSON text, the aggregate it parses to).
# Only the group-commit leader of a database touches its entries. An entry is used only when
# the stored text still equals its text, so another process's write (or a rolled-back
# transaction) simply means parsing again.
_parsed: dict[tuple[str, str, int, str], tuple[str, Aggregate]] = {}


def _add_to_aggregates(conn: Any, db_key: str, survey_id: str, version: int,
                       compiled: CompiledSurvey, items: list[Item]) -> None:
    """Add the reports to the stored aggregates: read once, merge in memory, write once."""
    rows = conn.execute("SELECT question_id, aggregate FROM aggregates "
                        "WHERE survey_id = ? AND version = ?", (survey_id, version)).fetchall()
    updates = []
    batch = crosstabs.Batch([it.reports for it in items], compiled.required)  # shared features
    for qid, text in rows:
        if crosstabs.is_crosstab_key(qid):  # a declared crosstab's joint aggregate
            new = crosstabs.updated(qid, compiled, text, batch)
            if new is not None:
                updates.append((new, survey_id, version, qid))
            continue
        reports = [it.reports[qid] for it in items if qid in it.reports]
        if not reports:
            continue
        mechanism = compiled.mechanisms[qid]
        key = (db_key, survey_id, version, qid)
        cached = _parsed.get(key)
        if cached is not None and cached[0] == text:
            aggregate = cached[1]
        else:
            aggregate = mechanism.aggregate_from_dict(json.loads(text))
        aggregate.merge(mechanism.aggregate_many(np.asarray(reports)))
        new_text = json.dumps(aggregate.to_dict(), separators=(",", ":"))
        _parsed[key] = (new_text, aggregate)
        updates.append((new_text, survey_id, version, qid))
    conn.executemany("UPDATE aggregates SET aggregate = ? "
                     "WHERE survey_id = ? AND version = ? AND question_id = ?", updates)


def export_lines(path: str, survey_id: str, version: int | None = None,
                 page: int = 1000) -> Iterator[str]:
    """JSON lines of stored submissions in arrival order, read page by page on its own
    connection (the export streams after the request's connection is gone)."""
    db = connect(path)
    try:
        last = 0
        where = "survey_id = ?" + ("" if version is None else " AND version = ?")
        params: tuple[Any, ...] = (survey_id,) if version is None else (survey_id, version)
        while True:
            rows = db.execute(
                f"SELECT seq, version, submission_id, received_hour, reports FROM submissions "  # noqa: S608
                f"WHERE {where} AND seq > ? ORDER BY seq LIMIT ?", (*params, last, page)
            ).fetchall()
            if not rows:
                return
            for seq, ver, sid, hour, reports in rows:
                last = seq
                yield (f'{{"submission_id":"{sid}","version":{ver},'
                       f'"received_hour":"{hour}","answers":{reports}}}\n')
    finally:
        db.conn.close()
