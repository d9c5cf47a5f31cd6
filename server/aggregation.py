"""Estimates from the stored aggregates (O(k), never touching reports), and recomputation of
the aggregates from the stored reports, which checks that the incremental path stayed exact."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import sqlite_utils

from . import crosstabs, surveys
from .compiled import CompiledSurvey
from .db import transaction
from .errors import StoreError


def estimates(db: sqlite_utils.Database, survey_id: str, version: int | None,
              confidence: float) -> dict[str, Any]:
    """The estimate document for one survey version (latest by default)."""
    record = surveys.get(db, survey_id, version)
    compiled = record.compiled()
    rows = dict(db.execute("SELECT question_id, aggregate FROM aggregates "
                           "WHERE survey_id = ? AND version = ?",
                           (record.id, record.version)).fetchall())
    questions = []
    for question in compiled.survey.questions:
        mechanism = compiled.mechanisms[question.id]
        text = rows.get(question.id)
        aggregate = (mechanism.new_aggregate() if text is None
                     else mechanism.aggregate_from_dict(json.loads(text)))
        questions.append(mechanism.estimate(aggregate, confidence).to_dict())
    return {"survey": record.id, "version": record.version, "sha256": record.sha256,
            "confidence": confidence, "n_submissions": record.n_submissions,
            "last_submission_hour": record.last_submission_hour, "questions": questions}


@dataclass(frozen=True)
class Mismatch:
    """One aggregate (or counter) whose stored value differed from the recomputed one."""

    survey_id: str
    version: int
    question_id: str
    stored: Any
    recomputed: Any


def recompute(db: sqlite_utils.Database, survey_id: str | None = None, fix: bool = True,
              progress: Callable[[str, int, int], None] | None = None) -> list[Mismatch]:
    """Rebuild every aggregate of the chosen survey(s) from stored reports; list mismatches.

    Each survey version is recomputed inside one write transaction, so submissions arriving
    meanwhile wait and are never half counted. With `fix`, mismatching rows are rewritten.
    """
    records = [r for r in surveys.list_all(db) if survey_id is None or r.id == survey_id]
    if survey_id is not None and not records:
        raise StoreError(f"survey {survey_id!r} does not exist in this database")
    mismatches: list[Mismatch] = []
    for record in records:
        compiled = record.compiled()
        with transaction(db) as conn:
            found = _recompute_version(conn, compiled, fix)
        mismatches.extend(found)
        if progress is not None:
            progress(record.id, record.version, len(found))
    return mismatches


def _recompute_version(conn: Any, compiled: CompiledSurvey, fix: bool) -> list[Mismatch]:
    sid, version = compiled.id, compiled.version
    reports: dict[str, list[Any]] = {qid: [] for qid in compiled.mechanisms}
    n = 0
    last_hour = None
    rows = conn.execute("SELECT reports, received_hour FROM submissions "
                        "WHERE survey_id = ? AND version = ? ORDER BY seq", (sid, version))
    pairs = crosstabs.PairCollector(compiled)  # declared crosstabs' paired reports
    for text, hour in rows:
        n += 1
        last_hour = hour if last_hour is None or hour > last_hour else last_hour
        answers = json.loads(text)
        for qid, report in answers.items():
            answers[qid] = value = compiled.mechanisms[qid].validate_report(report)
            reports[qid].append(value)
        pairs.add(answers)
    stored = dict(conn.execute("SELECT question_id, aggregate FROM aggregates "
                               "WHERE survey_id = ? AND version = ?", (sid, version)).fetchall())
    found: list[Mismatch] = []
    fresh_rows = {qid: (mechanism.aggregate_many(np.asarray(reports[qid])) if reports[qid]
                        else mechanism.new_aggregate()).to_dict()
                  for qid, mechanism in compiled.mechanisms.items()}
    fresh_rows.update(pairs.aggregates())
    for qid, fresh in fresh_rows.items():
        text = stored.get(qid)
        old = json.loads(text) if text is not None else None
        if old != fresh:
            found.append(Mismatch(sid, version, qid, old, fresh))
            if fix:
                conn.execute("INSERT OR REPLACE INTO aggregates (survey_id, version, "
                             "question_id, aggregate) VALUES (?, ?, ?, ?)",
                             (sid, version, qid, json.dumps(fresh, separators=(",", ":"))))
    counters = conn.execute("SELECT n_submissions, last_submission_hour FROM surveys "
                            "WHERE id = ? AND version = ?", (sid, version)).fetchone()
    if tuple(counters) != (n, last_hour):
        found.append(Mismatch(sid, version, "(n_submissions, last_submission_hour)",
                              list(counters), [n, last_hour]))
        if fix:
            conn.execute("UPDATE surveys SET n_submissions = ?, last_submission_hour = ? "
                         "WHERE id = ? AND version = ?", (n, last_hour, sid, version))
    return found
