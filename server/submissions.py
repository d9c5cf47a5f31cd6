"""Submissions: validate a request completely, then store it and update aggregates atomically.

A request holds one submission or a batch. Every item is checked (shape, UUID, version,
every report by its question's mechanism, required questions present) before anything is
written; one bad item rejects the request with per-item errors. The accepted rows and the
aggregate updates are one store transaction (`Store.ingest`), answered after its commit. A
`submission_id` already stored for the survey, or repeated within the request, is acknowledged
as a duplicate and not counted.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator, Mapping
from typing import Any

from ldpsurvey.shared.errors import LdpSurveyError
from ldpsurvey.shared.mechanisms.base import plain
from ldpsurvey.shared.skip_logic import presence_problems

from . import invites, surveys
from .common.errors import (
    Conflict,
    SubmissionRejected,
    SurveyChanged,
    SurveyClosed,
    ValidationFailed,
)
from .common.jsonbody import object_of
from .common.wire_ints import VERSION_RANGE, IntegerOutOfRange, in_range, wire_int
from .store import ChildPlan, IngestJob, IngestResult, PendingSubmission, Store
from .surveys import CompiledSurvey

MAX_BATCH = 10_000
MAX_ITEM_ERRORS = 100  # per-item errors listed in a 422 (the count is always complete)
MAX_MESSAGE = 300  # a report echoed in an error message is cut here
MAX_ATTEMPTS = 3  # checks of one request against its survey's versions (SurveyChanged)
_ITEM_KEYS = frozenset({"submission_id", "answers", "version", "invite"})
_CANONICAL_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def submit(store: Store, survey_id: str, body: Mapping[str, Any],
           max_batch: int = MAX_BATCH) -> IngestResult:
    """Validate and store a submission request for a survey; raises before storing anything.

    The survey's versions come from this process's cache first (no query per request); when
    the store finds them outdated inside its transaction (SurveyChanged), they are read again
    and the request is checked again."""
    raw_items = _raw_items(body, max_batch)
    for attempt in range(MAX_ATTEMPTS):
        try:
            return store.ingest(prepare(store, survey_id, raw_items, fresh=attempt > 0))
        except SurveyChanged:
            if attempt == MAX_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


def submit_body(store: Store, survey_id: str, data: bytes,
                max_batch: int = MAX_BATCH) -> IngestResult:
    """`submit` for a request body's bytes. Where the store's ingest runs in another process
    (SQLite under `ldpsurvey serve`), the bytes go there and are parsed and checked there
    (`prepare_body`), off the request threads' GIL (issue 22, measured side by side against
    the body parsed in the server: single submissions +3 to +13 % per second, server CPU per
    request -27 to -36 µs)."""
    child = store.ingest_process
    if child is not None:
        return child.ingest_body(survey_id, data, max_batch)
    return submit(store, survey_id, object_of(data), max_batch)


def prepare_body(store: Store, survey_id: str, data: bytes, max_batch: int,
                 fresh: bool) -> IngestJob:
    """A request body's bytes parsed and checked into the job `submit` would store (the
    ingest process's side of `submit_body`)."""
    return prepare(store, survey_id, _raw_items(object_of(data), max_batch), fresh)


def prepare(store: Store, survey_id: str, raw_items: list[Any], fresh: bool) -> IngestJob:
    """The request's items checked completely against the survey's stored versions, as the
    job that stores them; raises (SubmissionRejected listing each bad item) otherwise.

    With `fresh` False the versions may come from this process's cache; a request naming a
    version the cache lacks raises SurveyChanged, for the caller to prepare it again fresh."""
    stored_versions = surveys.versions(store, survey_id, fresh=fresh)
    if not stored_versions:
        surveys.get(store, survey_id)  # raises NotFound
    latest = max(stored_versions)
    errors: list[dict[str, Any]] = []
    n_bad = 0
    defaulted = False
    parsed: list[tuple[int, str, int, Mapping[str, Any], str | None]] = []
    for index, raw in enumerate(raw_items):
        problems: list[dict[str, str]] = []
        sid, version, answers = _shape(raw, latest, stored_versions, problems)
        code = invites.check_shape(raw, problems) if isinstance(raw, dict) and \
            "invite" in raw else None  # (no code: nothing to check)
        if problems:
            if not fresh and version not in stored_versions and in_range(version,
                                                                          *VERSION_RANGE):
                raise SurveyChanged("a version this process has not seen yet")  # read again
            n_bad += 1
            _note(errors, index, sid, problems)
        else:
            defaulted = defaulted or "version" not in raw
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
    valid: dict[int, dict[str, Any]] = {}
    for version in compiled:
        group = [(index, answers) for index, _, v, answers, _ in parsed if v == version]
        columns = _validate_columns(compiled[version], [answers for _, answers in group])
        if columns is not None:
            valid.update(zip([index for index, _ in group], columns, strict=True))
    items: list[PendingSubmission] = []
    # versions with a carried question (the check below finds nothing to check in the rest)
    carrying = {v for v, c in compiled.items() if any(q.carried for q in c.survey.questions)}
    for index, sid, version, answers, code in parsed:
        reports = valid.get(index)
        if reports is None:  # a version holding a bad item: validate its items one by one
            problems: list[dict[str, str]] = []
            reports = _validate_answers(compiled[version], answers, problems)
            if problems:
                n_bad += 1
                _note(errors, index, sid, problems)
                continue
        problems = invites.carried_problems(store, survey_id, compiled[version].survey,
                                            reports, code) if version in carrying else None
        if problems:
            n_bad += 1
            _note(errors, index, sid, problems)
            continue
        items.append(PendingSubmission(sid, version, reports, code))
    if n_bad:
        total = len(raw_items)
        raise SubmissionRejected(
            f"{n_bad} of {total} submission(s) invalid; nothing was stored",
            {"invalid": n_bad, "total": total,
             "items": sorted(errors, key=lambda e: e["index"])})
    return IngestJob(survey_id, items, compiled, latest if defaulted else None)


# What `ldpsurvey serve`'s SQLite ingest process checks bodies and rebuilds jobs' rules with.
CHILD_PLAN = ChildPlan(surveys.compiled_version, prepare_body, MAX_ATTEMPTS)


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
    if not isinstance(raw, dict):
        problems.append({"field": "", "message": "a submission must be an object"})
        return None, None, None
    if not raw.keys() <= _ITEM_KEYS:
        for key in sorted(str(k) for k in raw if k not in _ITEM_KEYS):
            problems.append({"field": key, "message": "unknown key"})
    sid = canonical_uuid(raw.get("submission_id"))
    if sid is None:
        problems.append({"field": "submission_id", "message": "must be a UUID string"})
    version = raw.get("version", latest)
    if type(version) is not int or version not in stored:  # (stored: in VERSION_RANGE)
        try:
            wire_int(version, "version", *VERSION_RANGE)
        except IntegerOutOfRange as exc:
            problems.append({"field": "version", "message": exc.message})
        else:
            known = ", ".join(str(v) for v in sorted(stored))
            problems.append({"field": "version", "message": f"this survey has no version "
                             f"{version} (stored: {known})"})
    answers = raw.get("answers")
    if not isinstance(answers, dict) or not answers:
        problems.append({"field": "answers",
                         "message": "must be a non-empty object of question id -> report"})
    return sid, version, answers


def canonical_uuid(value: Any) -> str | None:
    """The lowercase hyphenated form of a UUID string, or None if it is not one."""
    if not isinstance(value, str) or len(value) > 45:
        return None
    if _CANONICAL_UUID.fullmatch(value):  # what clients send: already the canonical form
        return value
    try:
        return str(uuid.UUID(value))
    except ValueError:
        return None


def _validate_columns(compiled: CompiledSurvey, answer_sets: list[Mapping[str, Any]]
                      ) -> list[dict[str, Any]] | None:
    """Every item's normalized reports, validated a question (a column of the batch) at a
    time; None when any item has a problem, so that the caller names each one."""
    mechanisms = compiled.mechanisms
    columns: dict[str, list[Any]] = {}
    for answers in answer_sets:
        if not compiled.required <= answers.keys():
            return None
        for qid, report in answers.items():
            column = columns.get(qid)
            if column is None:
                if qid not in mechanisms:
                    return None
                column = columns[qid] = []
            column.append(report)
    normalized: dict[str, Iterator[Any]] = {}
    for qid, column in columns.items():
        try:
            normalized[qid] = iter(mechanisms[qid].validate_reports(column))
        except (LdpSurveyError, TypeError, ValueError, OverflowError):
            return None
    rows = [{qid: next(normalized[qid]) for qid in answers} for answers in answer_sets]
    if compiled.skips and any(presence_problems(compiled.survey, compiled.skips, row)
                              for row in rows):
        return None
    return rows


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
            reports[qid] = plain(mechanism.validate_report(report))
        except (LdpSurveyError, TypeError, ValueError, OverflowError) as exc:
            message = exc.message if isinstance(exc, LdpSurveyError) else str(exc)
            problems.append({"field": f"answers.{qid}", "message": message[:MAX_MESSAGE]})
    for qid in sorted(compiled.required - answers.keys()):
        problems.append({"field": f"answers.{qid}", "message": "required question missing"})
    if not problems:  # skip logic on disclosed answers (shared/skip_logic.py)
        problems.extend(presence_problems(compiled.survey, compiled.skips, reports))
    return reports


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
