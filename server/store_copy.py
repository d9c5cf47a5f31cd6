"""`ldpsurvey migrate-store`: copy everything from one store into an empty one, then verify.

Everything is copied (survey manifests, reports, tokens' hashes, invitation codes' hashes and
their bindings) in one transaction on the target; the source is only read. The aggregates are
copied as stored (shards merged), and afterwards the target must hold the same surveys,
counters, tokens and codes, the same number of reports, the same aggregates, and aggregates
equal to a recompute from the copied reports.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from .aggregation import merged_aggregates, recompute
from .common.errors import StoreError
from .store import Replacement, Store, compact_json
from .surveys import SurveyRecord

PROGRESS_EVERY = 50_000


@dataclass(frozen=True)
class CopySummary:
    surveys: int
    reports: int
    tokens: int
    invites: int


def _aggregates_of(store: Store, record: SurveyRecord) -> Replacement:
    stored = store.aggregates(record.id, record.version)
    merged = merged_aggregates(record.compiled(), stored)
    return Replacement({k: compact_json(a.to_dict()) for k, a in merged.items()},
                       stored.n_submissions, stored.last_submission_hour)


def copy_store(source: Store, target: Store,
               progress: Callable[[int], None] | None = None) -> CopySummary:
    """Copy `source` into the empty `target` and verify it; StoreError on any difference."""
    if not target.is_empty():
        raise StoreError(f"the target {target.describe()} is not empty; refusing to overwrite "
                         "it (migrate-store copies into a new, empty database)")
    dump = source.dump()
    records = [SurveyRecord.from_row(r) for r in dump.surveys]
    aggregates = {(r.id, r.version): _aggregates_of(source, r) for r in records}
    copied = [0]
    compiled = {(r.id, r.version): r.compiled() for r in records}

    def counted(rows: Iterable[tuple[Any, ...]]) -> Iterator[tuple]:
        for row in rows:
            copied[0] += 1
            if progress is not None and copied[0] % PROGRESS_EVERY == 0:
                progress(copied[0])
            packed = row[5]
            if packed is None:  # stored before schema 7: packed as ingest packs it now
                survey = compiled.get((row[0], row[1]))
                packed = None if survey is None else survey.pack(json.loads(row[4]))
            yield (*row[:5], None if packed is None else bytes(packed))

    target.load(dump, counted(source.all_reports()), aggregates)
    if progress is not None:
        progress(copied[0])
    _verify(source, target, records, aggregates, copied[0])
    return CopySummary(len(records), copied[0], len(dump.tokens), len(dump.invites))


def _verify(source: Store, target: Store, records: list[SurveyRecord],
            aggregates: dict[tuple[str, int], Replacement], n_reports: int) -> None:
    problems: list[str] = []
    if target.dump() != source.dump():
        problems.append("surveys, counters, tokens or invitation codes differ")
    expected_reports = sum(r.n_submissions for r in records)
    if n_reports != expected_reports:
        problems.append(f"copied {n_reports} reports but the source counts {expected_reports}")
    for record in records:
        copied = _aggregates_of(target, record).texts
        expected = aggregates[(record.id, record.version)].texts
        if {k: json.loads(t) for k, t in copied.items()} != \
                {k: json.loads(t) for k, t in expected.items()}:
            problems.append(f"aggregates of {record.id} v{record.version} differ")
    mismatches = recompute(target, fix=False)
    for m in mismatches[:5]:
        problems.append(f"{m.survey_id} v{m.version} {m.question_id}: the copied aggregate is "
                        "not a recompute of the copied reports (check the source with "
                        "`ldpsurvey recompute --check`)")
    if problems:
        raise StoreError("migrate-store verification failed: " + "; ".join(problems))
