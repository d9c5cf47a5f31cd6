"""Submissions: validate a request completely, then store it and update aggregates atomically.

A request holds one submission or a batch. Every item is checked (shape, UUID, version,
every report by its question's mechanism, required questions present) before anything is
written; one bad item rejects the request with per-item errors. The accepted rows and the
aggregate updates are one store transaction (`Store.ingest`), answered after its commit. A
`submission_id` already stored for the survey, or repeated within the request, is acknowledged
as a duplicate and not counted.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from ..shared.errors import LdpSurveyError
from . import invites, surveys
from .errors import Conflict, SubmissionRejected, SurveyClosed, ValidationFailed
from .store import IngestJob, IngestResult, PendingSubmission, Store
from .surveys import CompiledSurvey

MAX_BATCH = 10_000
MAX_ITEM_ERRORS = 100  # per-item errors listed in a 422 (the count is always complete)
MAX_MESSAGE = 300  # a report echoed in an error message is cut here
_ITEM_KEYS = frozenset({"submission_id", "answers", "version", "invite"})


def submit(store: Store, survey_id: str, body: Mapping[str, Any],
           max_batch: int = MAX_BATCH) -> IngestResult:
    """Validate and store a submission request for a survey; raises before storing anything."""
    raw_items = _raw_items(body, max_batch)
    stored_versions = surveys.versions(store, survey_id)
    if not stored_versions:
        surveys.get(store, survey_id)  # raises NotFound
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
    compiled = {v: surveys.compiled_version(store, survey_id, v, stored_versions[v][0])
                for v in {v for _, _, v, _, _ in parsed}}
    if any(c.survey.two_server is not None for c in compiled.values()):
        raise Conflict(f"survey {survey_id!r} is collected by two servers: a device uploads "
                       f"Prio3 shares to /api/surveys/{survey_id}/two-server/uploads",
                       {"id": survey_id, "collection": "two-server"})
    items: list[PendingSubmission] = []
    for index, sid, version, answers, code in parsed:
        problems = []
        reports = _validate_answers(compiled[version], answers, problems)
        if problems:
            n_bad += 1
            _note(errors, index, sid, problems)
        else:
            items.append(PendingSubmission(sid, version, reports, code))
    if n_bad:
        total = len(raw_items)
        raise SubmissionRejected(
            f"{n_bad} of {total} submission(s) invalid; nothing was stored",
            {"invalid": n_bad, "total": total,
             "items": sorted(errors, key=lambda e: e["index"])})
    return store.ingest(IngestJob(survey_id, items, compiled))


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


def export_lines(store: Store, survey_id: str, version: int | None = None,
                 page: int = 1000) -> Iterator[str]:
    """JSON lines of stored submissions in arrival order, read page by page (each page on
    whatever connection the store hands out, so the stream outlives the request)."""
    last = 0
    while True:
        rows = store.export_rows(survey_id, version, last, page)
        if not rows:
            return
        for seq, ver, sid, hour, reports in rows:
            last = seq
            yield (f'{{"submission_id":"{sid}","version":{ver},'
                   f'"received_hour":"{hour}","answers":{reports}}}\n')
