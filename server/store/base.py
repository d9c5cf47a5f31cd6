"""What every store backend offers (`Store`) and the records it reads and writes.

The store is the only code that speaks SQL. Everything it needs to know about mechanisms comes
through `AggregateRules` (one per survey version): which aggregate a set of reports adds to
which key, and how to parse a stored aggregate. A key is an opaque string: today a question id,
later also joint (crosstab) keys; the store never assumes which.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from typing import Any, NamedTuple, Protocol

import orjson
from ldpsurvey.shared.aggregates import Aggregate

from ..common.errors import SurveyChanged, SurveyClosed
from .packed_designs import LabelNumbers


def current_hour(now: datetime | None = None) -> str:
    """The current UTC time rounded down to the hour, ISO 8601 (e.g. 2026-01-31T14:00:00Z).

    Receive times are kept only to the hour: enough to date a survey wave, too coarse to link.
    """
    now = now or datetime.now(UTC)
    return now.astimezone(UTC).strftime("%Y-%m-%dT%H:00:00Z")


def now_second() -> str:
    """The current UTC time to the second (token creation and revocation times)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def compact(data: Any) -> str:
    """Compact JSON text (no spaces, UTF-8 as is): what the store keeps for reports and
    aggregates. orjson writes the same text as the standard library's compact encoder, about
    5x faster, which matters on the ingest path (one text per stored submission); it refuses
    integers beyond 64 bits, which the standard encoder then writes."""
    try:
        return orjson.dumps(data).decode()
    except orjson.JSONEncodeError:
        return _COMPACT.encode(data)


# --- records --------------------------------------------------------------------------------


@dataclass(frozen=True)
class SurveyRow:
    """One stored survey version with its submission counters (manifest as stored text)."""

    id: str
    version: int
    manifest: str
    sha256: str
    status: str
    created_hour: str
    n_submissions: int
    last_submission_hour: str | None


@dataclass(frozen=True)
class TokenRow:
    """What `token list` shows: never the token itself."""

    id: int
    name: str
    created: str
    revoked: str | None


@dataclass(frozen=True)
class InviteCounts:
    survey_id: str
    invite_only: bool
    issued: int
    used: int


class InviteDesign(NamedTuple):
    """The design of the sampled unit an invitation code was made for (`invites create
    --design`): operator knowledge kept with the code's hash, never sent by a device, joined to
    the submission made with the code at analysis. None: the frame had no such column. (A
    named tuple: a survey reads one per respondent, 10^6 of them in a second.)"""

    weight: float
    stratum: str | None = None
    psu: str | None = None
    fpc: float | None = None
    group: int | None = None  # the random group (two-server variance by random groups)


@dataclass(frozen=True, eq=False)
class DesignPage:
    """The designs of a page of stored submissions, in arrival order (`Store.packed_pages`):
    weight and fpc as float arrays (nan where the submission has no design), stratum and PSU
    labels as int arrays of their codes (`Store.design_labels`; -1 where none) or, for a page
    with a row stored without its packed design, as the labels joined by \\x1f ('' where
    none), the random group as an int array (0 where none); None for a column that no
    invitation code of the survey carries."""

    weight: Any  # np.ndarray (float64)
    fpc: Any | None
    stratum: Any | None  # np.ndarray (int64 codes) or str
    psu: Any | None
    group: Any | None  # np.ndarray (int64)


@dataclass(frozen=True, eq=False)
class PackedPage:
    """A page of stored submissions read in one pass (`Store.packed_pages`): how many it
    holds, their packed reports joined (None: not asked for, or a row of the page has none)
    and their designs (None: not asked for)."""

    count: int
    reports: bytes | None
    designs: DesignPage | None


@dataclass(frozen=True)
class StoredDesigns:
    """What a survey's stored codes carry, read inside the transaction that adds more: how many
    codes have no design, and the designed ones as (stratum, PSU, fpc, number of codes)."""

    plain: int
    designed: list[tuple[str | None, str | None, float | None, int]]
    grouped: bool = False  # whether the designed codes carry random groups
    # the names the survey's codes carry (`invites create --from-export`); () for none
    carried: tuple[str, ...] = ()


@dataclass(frozen=True)
class PendingSubmission:
    """One validated submission waiting to be stored: reports already normalized."""

    submission_id: str
    version: int
    reports: Mapping[str, Any]
    invite: str | None = None


class AggregateRules(Protocol):
    """What the store needs to maintain the aggregates of one survey version."""

    # The version's manifest hash: the SQLite writer process rebuilds the rules from it.
    sha256: str

    def aggregate_keys(self) -> Sequence[str]:
        """Every key this version keeps an aggregate under."""
        ...

    def deltas(self, reports: Sequence[Mapping[str, Any]]) -> dict[str, Aggregate]:
        """key -> what these (normalized) submissions add; keys they do not touch are absent."""
        ...

    def parse_aggregate(self, key: str, data: Mapping[str, Any]) -> Aggregate:
        """A stored aggregate of this key, checked against its mechanism."""
        ...

    def empty_aggregate(self, key: str) -> Aggregate:
        ...

    def pack(self, reports: Mapping[str, Any]) -> bytes | None:
        """A submission's packed row (server/report_columns.PackedLayout), stored with its
        JSON in the same transaction; None: it has none (its version is read from the JSON)."""
        ...

    def pack_many(self, reports: Sequence[Mapping[str, Any]]) -> list[bytes | None]:
        """`pack` of each submission, the same bytes, made for them at once."""
        ...


@dataclass(frozen=True)
class IngestJob:
    """One validated request: its submissions and the aggregate rules of each version in it."""

    survey_id: str
    items: Sequence[PendingSubmission]
    rules: Mapping[int, AggregateRules]
    # The survey's newest version when the request was checked, if any item took it by default:
    # the store refuses the job (SurveyChanged) when a newer version has been stored since.
    latest: int | None = None


@dataclass
class IngestResult:
    """Submission ids stored by this request, and those already stored (or repeated in it)."""

    accepted: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"accepted": self.accepted, "duplicates": self.duplicates}


@dataclass(frozen=True)
class StoredAggregates:
    """The aggregates of one survey version as stored: key -> its partial texts (one per shard;
    SQLite keeps one), plus the submission counters."""

    texts: Mapping[str, Sequence[str]]
    n_submissions: int
    last_submission_hour: str | None


@dataclass(frozen=True)
class Replacement:
    """Recomputed aggregates and counters that replace a survey version's stored ones."""

    texts: Mapping[str, str]
    n_submissions: int
    last_submission_hour: str | None


# (version, submission id, receive hour, reports JSON text), in arrival order.
ReportRow = tuple[int, str, str, str]
Rebuild = Callable[[Iterable[ReportRow], StoredAggregates], tuple[Any, Replacement | None]]


@dataclass(frozen=True)
class Dump:
    """Everything a store holds, table by table, for `migrate-store` (rows as tuples)."""

    surveys: list[SurveyRow]
    tokens: list[tuple[int, str, str, str, str | None]]  # id, name, sha256, created, revoked
    invite_surveys: list[tuple[str, str, str | None]]  # survey_id, created, carried names
    # code_sha256, survey_id, submission_id, weight, stratum, psu, fpc, random_group, carried
    invites: list[tuple[Any, ...]]
    # survey_id, kind, code, label: the numbered design labels (the copy keeps their codes)
    labels: list[tuple[str, str, int, str]] = field(default_factory=list)

    def with_designs(self, reports: Iterable[tuple[str, int, str, str, str]]
                     ) -> Iterator[tuple[Any, ...]]:
        """Each stored submission's row followed by the design of the code it was made with
        (weight, stratum, PSU, fpc, random group; NULLs without one) and its numbers and label
        codes packed (server/store/packed_designs.py), as ingest stores it: a loaded store
        writes the copy with the row instead of updating every row after. The labels are
        numbered anew (`design_labels`), as `packed_invites` packs the codes."""
        packed, _ = self._packed_designs
        designs = {(code[1], code[2]): (*code[3:8], bytes_)
                   for code, bytes_ in zip(self.invites, packed, strict=True)
                   if code[2] is not None}
        none = (None,) * 6
        for row in reports:
            yield (*row, *designs.get((row[0], row[2]), none))

    def packed_invites(self) -> Iterator[tuple[Any, ...]]:
        """Each code's row followed by its design's numbers and label codes packed (None: no
        design), as `add_invites` stores it now."""
        packed, _ = self._packed_designs
        for code, bytes_ in zip(self.invites, packed, strict=True):
            yield (*code, bytes_)

    def design_labels(self) -> list[tuple[str, str, int, str]]:
        """The `design_labels` rows (survey_id, kind, code, label) the packed codes refer to:
        the source's, and any label it had not numbered."""
        return [*self.labels, *self._packed_designs[1]]

    @cached_property
    def _packed_designs(self) -> tuple[list[bytes | None], list[tuple[str, str, int, str]]]:
        """Every code's packed design (None: none), its labels coded as the source numbered
        them (`labels`); and the labels numbered here (none the source has not)."""
        known: dict[str, list[tuple[str, int, str]]] = {}
        for sid, kind, code, label in self.labels:
            known.setdefault(sid, []).append((kind, code, label))
        numbers: dict[str, LabelNumbers] = {}
        packed: list[bytes | None] = []
        for code in self.invites:
            if code[3] is None:
                packed.append(None)
                continue
            if code[1] not in numbers:
                numbers[code[1]] = LabelNumbers(known.get(code[1], ()))
            packed.append(numbers[code[1]].pack(
                InviteDesign(code[3], code[4], code[5], code[6], code[7])))
        return packed, [(sid, *label) for sid, n in numbers.items() for label in n.new]


class BodyIngest(Protocol):
    """Ingest that runs in another process and takes request bodies there as they came."""

    def ingest_body(self, survey_id: str, data: bytes, max_batch: int) -> IngestResult:
        """What `submissions.submit` answers for the body: its result, or its refusal."""
        ...


class Store(Protocol):
    """The persistence of the aggregator. Writes are acknowledged only after their commit."""

    backend: str  # "sqlite" or "postgresql"
    # where ingest runs in another process that parses and checks bodies itself, else None
    ingest_process: BodyIngest | None

    def describe(self) -> str:
        """Where the data lives, safe to print (no password)."""
        ...

    def close(self) -> None: ...

    def ping(self) -> None: ...

    # surveys
    def put_survey(self, survey_id: str, version: int, manifest: str, sha256: str,
                   hour: str) -> tuple[SurveyRow, bool]:
        """Store a new version (True), or return the stored one unchanged (False)."""
        ...

    def get_survey(self, survey_id: str, version: int | None = None) -> SurveyRow | None: ...

    def list_surveys(self) -> list[SurveyRow]: ...

    def survey_versions(self, survey_id: str) -> dict[int, tuple[str, str]]:
        """version -> (sha256, status)."""
        ...

    def close_survey(self, survey_id: str) -> int:
        """Close every stored version; the number of versions (0: no such survey)."""
        ...

    # tokens
    def add_token(self, name: str, token_sha256: str, created: str) -> int: ...

    def list_tokens(self) -> list[TokenRow]: ...

    def revoke_token(self, token_id: int, when: str) -> TokenRow | None: ...

    def token_state(self, token_sha256: str) -> str | None:
        """'active', 'revoked', or None for an unknown token."""
        ...

    # invitations
    def add_invites(self, survey_id: str, code_hashes: Sequence[str],
                    designs: Sequence[InviteDesign] | None = None,
                    check: Callable[[StoredDesigns], None] | None = None,
                    carried: tuple[tuple[str, ...], Sequence[str]] | None = None) -> bool:
        """Make a survey invite-only and store code hashes (with `designs`, one per code;
        with `carried`, the carried names and one JSON object of values per code); False if
        the survey is unknown. `check` runs inside the transaction on what the survey's codes
        carry already; whatever it raises stores nothing."""
        ...

    def invite_carried_names(self, survey_id: str) -> tuple[str, ...]:
        """The names of the disclosed covariates the survey's codes carry; () for none (one
        lookup of the invite_surveys row)."""
        ...

    def invite_carried(self, survey_id: str, code_sha256: str) -> tuple[bool, str | None]:
        """(whether the survey has this code, the JSON object of values it carries or None)."""
        ...

    def submission_carried(self, survey_id: str, version: int) -> list[tuple[str, str]]:
        """(submission id, JSON object of carried values) of every stored submission of the
        version made with a code that carries values."""
        ...

    def invite_designs(self, survey_id: str) -> list[tuple[str | None, InviteDesign]]:
        """(submission id, design) of every code of the survey that carries a design; the id
        is None for a code not used yet (a unit that has not responded)."""
        ...

    def invite_counts(self, survey_id: str) -> InviteCounts: ...

    def invite_only(self, survey_id: str) -> bool:
        """Whether the survey takes only submissions with an invitation code (one indexed
        lookup: the public survey document says it, so a page can ask for the code)."""
        ...

    # submissions and aggregates
    def ingest(self, job: IngestJob) -> IngestResult:
        """Insert the job's new submissions and apply their aggregate deltas in one
        transaction (invitation codes claimed in it too); returns after commit."""
        ...

    def aggregates(self, survey_id: str, version: int) -> StoredAggregates: ...

    def rebuild(self, survey_id: str, version: int, rebuild: Rebuild) -> Any:
        """Run `rebuild` over every stored report of a version with no submission of it
        committing meanwhile; a Replacement it returns is written in the same transaction."""
        ...

    def export_rows(self, survey_id: str, version: int | None, after: int,
                    limit: int) -> list[tuple[int, int, str, str, str]]:
        """(seq, version, submission id, hour, reports text) with seq > after, by seq."""
        ...

    def question_reports(self, survey_id: str, version: int, qids: Sequence[str],
                         page: int) -> Iterator[tuple[str, int]]:
        """The reports of `qids` of every submission that answered them all, in one pass over
        the version's stored submissions, `page` submissions at a time: per page the JSON
        arrays [report of qids[0], report of qids[1], ...] joined by ',' (extracted by the
        database, so callers parse only these columns, e.g. numpy in C) and how many
        submissions the page scanned (complete or not: the rest were missing an answer).
        Question ids are validated ids of the survey (letters, digits, '_', '.', '-')."""
        ...

    def submission_table(self, survey_id: str, version: int, qids: Sequence[str],
                         widths: Sequence[int], page: int,
                         ids: bool = True) -> Iterator[tuple[str, str, int]]:
        """Every stored submission of a version, `page` at a time, in arrival order: per page
        the submission ids joined by the unit separator (\\x1f; '' without `ids`: a caller
        that needs them only to name a row reads them when it does), the rows' reports of
        `qids` as JSON arrays joined by ',' (width-1 reports first, then each wider one; a
        missing question: null, or an array of `width` nulls), and the page's size. The
        database extracts the columns, so the caller parses only numbers
        (server/report_columns.submission_columns)."""
        ...

    def report_types(self, survey_id: str, version: int,
                     qids: Sequence[str]) -> dict[str, str | None]:
        """The JSON type of each question's stored reports ('true' for a yes/no report,
        'integer', 'array'; None: no submission answered it)."""
        ...

    def packed_pages(self, survey_id: str, version: int, page: int, reports: bool = True,
                     designs: bool = True) -> Iterator[PackedPage]:
        """Every stored submission of a version, `page` at a time, in arrival order, each page
        read in one pass over its rows: its size, its rows' packed reports joined (`reports`;
        server/report_columns.py `packed_columns`) and its rows' designs (`designs`: each
        invitation code's, copied onto the submission row when the code was claimed), so a
        design-based report reads the rows once for both."""
        ...

    def designed_invites(self, survey_id: str) -> int:
        """How many of the survey's invitation codes carry a design."""
        ...

    def design_labels(self, survey_id: str) -> dict[str, list[str]]:
        """The survey's stratum and PSU labels by their codes (kind -> labels, the code is the
        index; server/store/packed_designs.py): what a page's codes stand for."""
        ...

    # moving data
    def is_empty(self) -> bool: ...

    def dump(self) -> Dump: ...

    def load(self, dump: Dump, reports: Iterable[tuple[str, int, str, str, str]],
             texts: Mapping[tuple[str, int], Replacement]) -> None:
        """Fill an empty store: rows of `dump`, reports (survey id, version, submission id,
        hour, text), and each version's aggregates and counters."""
        ...

    def all_reports(self) -> Iterable[tuple[str, int, str, str, str]]: ...


# --- shared by both backends ------------------------------------------------------------------


class ParsedCache:
    """Parsed stored aggregates, reused while the stored text is unchanged.

    An entry counts only if the stored text still equals its text, so a write by another process
    (or a rolled-back transaction) just means parsing again. An entry is taken out while its
    aggregate is being changed, so no thread ever sees a half-merged object."""

    MAX = 4096

    def __init__(self) -> None:
        self._entries: dict[tuple[Any, ...], tuple[str, Aggregate]] = {}
        self._lock = threading.Lock()

    def merged_text(self, key: tuple[Any, ...], stored: str | None, delta: Aggregate,
                    parse: Callable[[Mapping[str, Any]], Aggregate]) -> str:
        """The stored aggregate (None: none yet) plus `delta`, as the text to store."""
        with self._lock:
            entry = self._entries.pop(key, None)
        if stored is None:
            aggregate = delta
        else:
            aggregate = (entry[1] if entry is not None and entry[0] == stored
                         else parse(json.loads(stored)))
            aggregate.merge(delta)
        text = compact(aggregate.to_dict())
        with self._lock:
            if len(self._entries) >= self.MAX:
                self._entries.pop(next(iter(self._entries)))
            self._entries[key] = (text, aggregate)
        return text


def split_fresh(job: IngestJob, stored: set[str]) -> tuple[IngestResult,
                                                           list[PendingSubmission]]:
    """Accepted and duplicate ids (stored before, or repeated within the request) in order."""
    result = IngestResult()
    fresh: list[PendingSubmission] = []
    seen = set(stored)
    for item in job.items:
        if item.submission_id in seen:
            result.duplicates.append(item.submission_id)
            continue
        seen.add(item.submission_id)
        result.accepted.append(item.submission_id)
        fresh.append(item)
    return result, fresh


def refusal(job: IngestJob, statuses: Mapping[int, str]) -> Exception | None:
    """Why a validated job cannot be stored now, from its survey's version -> status read in
    the write transaction: a newer version it did not see (SurveyChanged: checked again), or
    a version closed meanwhile (SurveyClosed)."""
    sid = job.survey_id
    if job.latest is not None and statuses and max(statuses) != job.latest:
        return SurveyChanged(f"survey {sid!r} has a version newer than {job.latest}",
                             {"id": sid, "latest": max(statuses)})
    closed = sorted({it.version for it in job.items if statuses.get(it.version) != "open"})
    if closed:
        return SurveyClosed(f"survey {sid!r} is closed and takes no more submissions",
                            {"id": sid, "closed_versions": closed})
    return None


def packed_rows(job: IngestJob, items: Sequence[PendingSubmission]) -> list[bytes | None]:
    """Each item's packed row (`AggregateRules.pack`), in order, packed a version at a time
    (`pack_many`: the same bytes, fewer Python steps per submission)."""
    out: list[bytes | None] = [None] * len(items)
    positions: dict[int, list[int]] = {}
    for i, it in enumerate(items):
        positions.setdefault(it.version, []).append(i)
    for version, where in positions.items():
        packed = job.rules[version].pack_many([items[i].reports for i in where])
        for i, row in zip(where, packed, strict=True):
            out[i] = row
    return out


def by_version(items: Iterable[PendingSubmission]) -> dict[int, list[PendingSubmission]]:
    grouped: dict[int, list[PendingSubmission]] = {}
    for item in items:
        grouped.setdefault(item.version, []).append(item)
    return grouped
