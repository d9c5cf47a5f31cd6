"""Estimates from the stored aggregates (O(k), never touching reports), and recomputation of
the aggregates from the stored reports, which checks that the incremental path stayed exact."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ldpsurvey.shared.aggregates import Aggregate
from ldpsurvey.shared.errors import LdpSurveyError
from ldpsurvey.shared.estimand import plain_estimate

from . import joint_aggregates, surveys
from .common.errors import StoreError
from .store import Replacement, Store, StoredAggregates, compact_json
from .surveys import CompiledSurvey


def merged_aggregates(compiled: CompiledSurvey, stored: StoredAggregates) -> dict[str, Aggregate]:
    """key -> the stored aggregate, its partial rows (shards) merged; empty where none."""
    merged: dict[str, Aggregate] = {}
    for key in compiled.aggregate_keys():
        aggregate = compiled.empty_aggregate(key)
        for text in stored.texts.get(key, ()):
            aggregate.merge(compiled.parse_aggregate(key, json.loads(text)))
        merged[key] = aggregate
    return merged


def estimates(store: Store, survey_id: str, version: int | None,
              confidence: float) -> dict[str, Any]:
    """The estimate document for one survey version (latest by default)."""
    record = surveys.get(store, survey_id, version)
    compiled = surveys.randomized_reports(record)
    stored = store.aggregates(record.id, record.version)
    aggregates = merged_aggregates(compiled, stored)
    questions = [plain_estimate(q, compiled.mechanisms[q.id], aggregates[q.id],
                                confidence).to_dict() for q in compiled.survey.questions]
    return {"survey": record.id, "version": record.version, "sha256": record.sha256,
            "confidence": confidence, "n_submissions": stored.n_submissions,
            "last_submission_hour": stored.last_submission_hour, "questions": questions}


@dataclass(frozen=True)
class Mismatch:
    """One aggregate (or counter) whose stored value differed from the recomputed one."""

    survey_id: str
    version: int
    question_id: str  # the aggregate key
    stored: Any
    recomputed: Any


def recompute(store: Store, survey_id: str | None = None, fix: bool = True,
              progress: Callable[[str, int, int], None] | None = None) -> list[Mismatch]:
    """Rebuild every aggregate of the chosen survey(s) from stored reports; list mismatches.

    Each survey version is recomputed with its submissions held back meanwhile (never half
    counted). With `fix`, a mismatching version's aggregates and counters are rewritten."""
    records = [r for r in surveys.list_all(store) if survey_id is None or r.id == survey_id]
    if survey_id is not None and not records:
        raise StoreError(f"survey {survey_id!r} does not exist in this database")
    mismatches: list[Mismatch] = []
    for record in records:
        compiled = record.compiled()
        found = store.rebuild(record.id, record.version,
                              lambda rows, stored, c=compiled: _compare(c, rows, stored, fix))
        mismatches.extend(found)
        if progress is not None:
            progress(record.id, record.version, len(found))
    return mismatches


def fresh_aggregates(compiled: CompiledSurvey, rows: Iterable[tuple[int, str, str, str]]
                     ) -> tuple[dict[str, Aggregate], int, str | None]:
    """Aggregates, count and last receive hour recomputed from stored report rows."""
    reports: list[Mapping[str, Any]] = []
    last_hour = None
    pairs = joint_aggregates.PairCollector(compiled)  # declared crosstabs, from the raw reports
    for _version, _sid, hour, text in rows:
        last_hour = hour if last_hour is None or hour > last_hour else last_hour
        answers = {qid: compiled.mechanisms[qid].validate_report(report)
                   for qid, report in json.loads(text).items()}
        reports.append(answers)
        pairs.add(answers)
    deltas = compiled.marginal_deltas(reports) if reports else {}
    deltas.update(pairs.aggregates())  # not the ingest path's features: an independent check
    fresh = {key: deltas.get(key) or compiled.empty_aggregate(key)
             for key in compiled.aggregate_keys()}
    return fresh, len(reports), last_hour


def _compare(compiled: CompiledSurvey, rows: Iterable[tuple[int, str, str, str]],
             stored: StoredAggregates, fix: bool) -> tuple[list[Mismatch], Replacement | None]:
    sid, version = compiled.id, compiled.version
    fresh, n, last_hour = fresh_aggregates(compiled, rows)
    found: list[Mismatch] = []
    for key, aggregate in fresh.items():
        texts = stored.texts.get(key, ())
        try:
            old = merged_aggregates(compiled, StoredAggregates({key: texts}, 0, None))[key]
            old_dict: Any = old.to_dict()
        except (LdpSurveyError, ValueError):  # a corrupt row: a mismatch to report and fix
            old_dict = [json.loads(t) for t in texts]
        if old_dict != aggregate.to_dict():
            found.append(Mismatch(sid, version, key, old_dict, aggregate.to_dict()))
    extra = sorted(set(stored.texts) - set(fresh))
    for key in extra:
        found.append(Mismatch(sid, version, key, list(stored.texts[key]), None))
    counters = [stored.n_submissions, stored.last_submission_hour]
    if counters != [n, last_hour]:
        found.append(Mismatch(sid, version, "(n_submissions, last_submission_hour)",
                              counters, [n, last_hour]))
    if not (fix and found):
        return found, None
    return found, Replacement({k: compact_json(a.to_dict()) for k, a in fresh.items()},
                              n, last_hour)
