"""Columns of stored reports for the one-pass analyses (ad-hoc crosstabs, subgroups,
regression): the database extracts just the needed questions' reports of each submission
(`Store.question_reports`) and numpy parses the joined text in C, so no Python object is made
per report and the rest of each stored submission is never parsed."""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np
from ldpsurvey.shared.question_types.packed import INTEGER_TYPES, PackedReports

from .common.errors import StoreError
from .store import Store
from .store.base import DesignPage


def parse_table(text: str, width: int) -> np.ndarray:
    """The (n, width) int64 table of joined JSON arrays of integers and booleans (lists inside
    flattened): '[1,[0,1]],[0,[1,1]]' with width 3 -> [[1, 0, 1], [0, 1, 1]]."""
    if not text:
        return np.zeros((0, width), dtype=np.int64)
    plain = (text.replace("[", "").replace("]", "").replace("true", "1")
             .replace("false", "0"))
    return np.fromstring(plain, dtype=np.int64, sep=",").reshape(-1, width)


def report_pages(store: Store, survey_id: str, version: int, qids: Sequence[str],
                 widths: Sequence[int], page: int) -> Iterator[tuple[list[np.ndarray], int]]:
    """Per page of stored submissions: each question's reports (an (n,) array for a report of
    width 1, else (n, width)) of the submissions that answered every question, and how many
    submissions the page scanned."""
    bounds = np.cumsum([0, *widths])
    for text, scanned in store.question_reports(survey_id, version, qids, page):
        table = parse_table(text, int(bounds[-1]))
        yield [table[:, bounds[j]] if widths[j] == 1 else table[:, bounds[j]:bounds[j + 1]]
               for j in range(len(qids))], scanned


def report_columns(store: Store, survey_id: str, version: int, qids: Sequence[str],
                   widths: Sequence[int], page: int) -> tuple[list[np.ndarray], int]:
    """Every page of `report_pages` joined: the columns, and how many submissions were left out
    for missing one of the questions."""
    parts: list[list[np.ndarray]] = [[] for _ in qids]
    scanned_total = 0
    for columns, scanned in report_pages(store, survey_id, version, qids, widths, page):
        scanned_total += scanned
        for j, column in enumerate(columns):
            parts[j].append(column)
    if not scanned_total:
        return [parse_table("", w)[:, 0] if w == 1 else parse_table("", w) for w in widths], 0
    columns = [np.concatenate(p) for p in parts]
    return columns, scanned_total - len(columns[0])


# --- every submission of a version, for design-based analysis ---------------------------------

MISSING = -(2**63) + 1  # stands for a missing report while parsing; no report is this integer
_SEPARATOR = "\x1f"


def _numbers(text: str, count: int, width: int) -> np.ndarray | None:
    """The (count, width) int64 table of the joined JSON arrays, null as MISSING; None when
    the text holds anything but integers, booleans and nulls (a report of another kind)."""
    import warnings

    plain = (text.replace("[", "").replace("]", "").replace("true", "1")
             .replace("false", "0").replace("null", str(MISSING)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # a short read: None below
        values = np.fromstring(plain, dtype=np.int64, sep=",")
    return values.reshape(count, width) if values.size == count * width else None


class StoredIds(Sequence[str]):
    """The submission ids of a version's first `n` stored submissions, in arrival order, read
    from the database the first time one is asked for: a design-based report names a
    submission only in an error message (or joins through the invitation codes when a row
    lacks its design), so the usual report never reads them (10^6 ids: 0.5 s of CPU)."""

    def __init__(self, store: Store, survey_id: str, version: int, n: int,
                 page: int = 200_000) -> None:
        self._where = (store, survey_id, version, page)
        self._n = n
        self._ids: list[str] | None = None

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i: Any) -> Any:
        return self._read()[i]

    def __iter__(self) -> Iterator[str]:
        return iter(self._read())

    def _read(self) -> list[str]:
        if self._ids is None:
            store, survey_id, version, page = self._where
            ids: list[str] = []
            for id_text, _, count in store.submission_table(survey_id, version, [], [], page):
                page_ids = id_text.split(_SEPARATOR)
                if len(page_ids) != count:
                    raise StoreError("a stored submission id holds the unit separator (\\x1f)")
                ids += page_ids
                if len(ids) >= self._n:  # later submissions were stored after the reports read
                    break
            if len(ids) < self._n:
                raise StoreError(f"{self._n - len(ids):,} submission(s) of {survey_id!r} "
                                 "were removed while it was being read: read it again")
            self._ids = ids[:self._n]
        return self._ids


def submission_columns(store: Store, survey_id: str, version: int, qids: Sequence[str],
                       widths: Sequence[int], page: int = 200_000
                       ) -> tuple[Sequence[str], dict[str, tuple[np.ndarray, np.ndarray]]] | None:
    """Every stored submission of a version in arrival order: (submission ids, read when
    first asked for: `StoredIds`; per question (answered (n,) bool, the answered rows'
    reports: (a,) or (a, width) int64, yes/no reports as bool)). Read in one pass of the
    database (`submission_table`), parsed by numpy. None when a report is not made of
    integers: then read the rows (`export_rows`)."""
    narrow = [j for j, w in enumerate(widths) if w == 1]
    order = narrow + [j for j, w in enumerate(widths) if w > 1]  # as the store lays them out
    total = sum(widths)
    pages = []
    for _, text, count in store.submission_table(survey_id, version, qids, widths, page,
                                                 ids=False):
        table = _numbers(text, count, total) if qids else np.zeros((count, 0), np.int64)
        if table is None:
            return None
        pages.append(table)
    table = np.concatenate(pages) if pages else np.zeros((0, total), dtype=np.int64)
    types = store.report_types(survey_id, version, qids) if qids else {}
    columns: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    start = 0
    for j in order:
        block = table[:, start:start + widths[j]]
        start += widths[j]
        missing = block == MISSING
        present = ~missing[:, 0]
        if (missing.any(axis=1) != ~present).any():
            return None  # a report partly missing: not this kind of report
        reports = block[present]
        reports = reports[:, 0] if widths[j] == 1 else reports
        if types.get(qids[j]) in ("true", "false"):
            reports = reports.astype(bool)
        columns[qids[j]] = (present, reports)
    return StoredIds(store, survey_id, version, len(table), page), columns


def submission_designs(store: Store, survey_id: str, version: int, page: int = 200_000
                       ) -> dict[str, Any] | None:
    """Each stored submission's design (copied from its invitation code), aligned with
    `submission_columns`, read alone (`Store.packed_pages` without the reports: for a version
    whose reports are read from the JSON); `designs_of` says what it holds."""
    return designs_of(store, survey_id, (
        p.designs for p in store.packed_pages(survey_id, version, page, reports=False)))


def designs_of(store: Store, survey_id: str, pages: Iterable[DesignPage | None]
               ) -> dict[str, Any] | None:
    """The designs of a version's pages of stored submissions (`Store.packed_pages`) joined:
    weight and fpc (float, nan where the code carries no design), stratum and psu
    (`NumberedLabels`: the codes stored with the numbers and the survey's labels, read once;
    or, when a page was stored without them, text: object arrays of str), group (int); None
    for a column no code carries. None when a column cannot be read (a label holding the
    separator, or a code without its label: then join in Python, analyst/design/data.py)."""
    from ldpsurvey.shared.design import NumberedLabels

    names = ("weight", "fpc", "stratum", "psu", "group")
    parts: dict[str, list[Any]] = {k: [] for k in names}
    n = 0
    for found in pages:
        assert found is not None  # pages read with their designs
        n += found.weight.size
        for name in names:
            value = getattr(found, name)
            if value is None or (isinstance(value, str) and not value):
                parts[name].append(None)
            elif isinstance(value, str):
                parts[name].append(value.split(_SEPARATOR))
            else:
                parts[name].append(value)
    labels: dict[str, list[str]] | None = None
    out: dict[str, Any] = {}
    for name in names:
        chunks = parts[name]
        if not chunks or any(c is None for c in chunks):
            if name == "weight":
                return None
            out[name] = None
            continue
        if name in ("stratum", "psu"):
            if labels is None and any(isinstance(c, np.ndarray) for c in chunks):
                labels = store.design_labels(survey_id)
            numbered = _numbered(chunks, labels.get(name, []) if labels else [])
            if numbered is None:
                return None  # a code without its label: join in Python
            if all(isinstance(c, np.ndarray) for c in chunks):
                codes = np.concatenate(chunks) if len(chunks) > 1 else chunks[0]
                if codes.size != n:
                    return None
                out[name] = NumberedLabels(codes, numbered)
                continue
            # some pages as text (stored before their codes): text throughout, as
            # Design.build numbers it (shared/design/sample.py `_text_labels`)
            texts = [x for chunk in chunks for x in (
                NumberedLabels(chunk, numbered).texts().tolist()
                if isinstance(chunk, np.ndarray) else chunk)]
            values = np.array(texts, dtype=object) if len(texts) == n else None
        else:
            values = np.concatenate(chunks)
        if values is None or values.size != n:
            return None  # a label holding the separator: join in Python
        out[name] = values
    return out


def _numbered(chunks: Sequence[Any], labels: list[str]) -> list[str] | None:
    """The labels, or None when a page holds a code beyond them (the labels are read after
    the pages, and codes are only ever added, so only a store changed by hand has one)."""
    for chunk in chunks:
        if isinstance(chunk, np.ndarray) and chunk.size and int(chunk.max()) >= len(labels):
            return None
    return labels


# --- every submission of a version from its packed rows (no JSON) -----------------------------

_ABSENT = object()
_SCALAR = (0,)
_UNSIGNED = {1: "B", 2: "H", 4: "I", 8: "Q"}


class PackedLayout:
    """A survey version's packed row (the `packed` column of a stored submission, written with
    its JSON in the same transaction at ingest): a 4-byte fingerprint of this layout, the
    presence bits of the packed questions (bit j: the j-th answered), then each packed
    question's integers as its unit packs them (`QuestionType.packed_reports`), little-endian
    and unpadded, so numpy reads a page of rows as one record array. The fingerprint changes
    whenever a unit packs differently, so rows packed by another layout are read from the JSON
    instead of misread."""

    def __init__(self, fields: Sequence[tuple[str, PackedReports]]) -> None:
        self.fields = tuple(fields)
        self.index = {qid: j for j, (qid, _) in enumerate(self.fields)}
        self._presence = (len(self.fields) + 7) // 8
        described = ";".join(f"{q}:{c.dtype}:{c.width}" for q, c in self.fields)
        digest = hashlib.sha256(f"ldpsurvey packed 1;{described}".encode()).digest()
        self.fingerprint = int.from_bytes(digest[:4], "little")
        # the presence bytes as one little-endian integer where they are 1, 2, 4 or 8 (the
        # same bytes, packed without making them first), else as bytes
        self._presence_int = self._presence in _UNSIGNED
        self._struct = struct.Struct(
            f"<I{_UNSIGNED.get(self._presence, f'{self._presence}s')}"
            + "".join(c.struct_format for _, c in self.fields))
        # per field: its presence bit, id, packing and the zeros of an absent report (_SCALAR,
        # the one zero, for a report of one integer: `pack` takes that one as it is)
        self._plan = [(1 << j, qid, c, _SCALAR if c.width == 1 else (0,) * c.width)
                      for j, (qid, c) in enumerate(self.fields)]
        self.dtype = np.dtype([("fingerprint", "<u4"), ("present", "u1", (self._presence,)),
                               *((f"q{j}", c.dtype, (c.width,)) if c.width > 1
                                 else (f"q{j}", c.dtype) for j, (_, c) in
                                 enumerate(self.fields))])
        assert self.dtype.itemsize == self._struct.size

    @classmethod
    def of(cls, survey: Any, mechanisms: Mapping[str, Any]) -> PackedLayout | None:
        """The layout of a compiled survey version: each question whose unit packs its reports,
        in the survey's order; None when none does."""
        fields = []
        for question in survey.questions:
            mechanism = mechanisms.get(question.id)
            if mechanism is None:
                continue
            code = question.unit.packed_reports(question, mechanism)
            if code is not None:
                fields.append((question.id, code))
        return cls(fields) if fields else None

    def pack(self, reports: Mapping[str, Any]) -> bytes | None:
        """One submission's packed row; None when a report does not pack (its row then keeps
        the JSON only, and its version is read from the JSON). On ingest's path: a plain
        integer report goes to `struct` as it is (struct refuses what does not fit), a list
        through its `PackedReports.encode`."""
        present = 0
        values: list[Any] = []
        append = values.append
        get = reports.get
        try:
            for bit, qid, code, zeros in self._plan:
                report = get(qid, _ABSENT)
                if report is _ABSENT:
                    values += zeros
                    continue
                present |= bit
                if zeros is _SCALAR and type(report) is not list:
                    append(report)
                else:
                    values += code.encode(report)
            return self._struct.pack(self.fingerprint, present if self._presence_int
                                     else present.to_bytes(self._presence, "little"), *values)
        except (struct.error, ValueError, TypeError, OverflowError):
            return None

    def pack_many(self, rows: Sequence[Mapping[str, Any]]) -> list[bytes | None]:
        """`pack` of each row, the same bytes, made for the rows at once where every report
        is a plain integer (a list of `width` of them for a wider question) that fits its
        dtype: each question's column goes to numpy in C and the rows are cut from one
        record array (issue 40: ingest's CPU per submission, `pack` per row took ~0.8 µs of
        bench_ingest's ~14). Anything else (a report that does not pack, a float, a nested
        list, more than 64 questions) packs row by row, so that such a row is None as
        `pack` makes it."""
        n = len(rows)
        if n < 2 or self._presence > 8:
            return [self.pack(r) for r in rows]
        table = np.zeros(n, dtype=self.dtype)  # an unanswered question's integers: zeros
        table["fingerprint"] = self.fingerprint
        present = np.zeros(n, dtype="<u8")
        try:
            for j, (bit, qid, code, zeros) in enumerate(self._plan):
                column = [r.get(qid, _ABSENT) for r in rows]
                answered = None
                if _ABSENT in column:  # identity first: no report equals the marker
                    answered = np.fromiter((v is not _ABSENT for v in column), bool, n)
                    column = [v for v in column if v is not _ABSENT]
                    if not column:
                        continue
                kinds = set(map(type, column))
                if zeros is _SCALAR:
                    if kinds == {list} and set(map(len, column)) == {1}:  # a list of one
                        column = [v[0] for v in column]
                        kinds = set(map(type, column))
                    if not kinds <= INTEGER_TYPES:
                        return [self.pack(r) for r in rows]
                elif not (kinds == {list} and set(map(len, column)) == {code.width}
                          and INTEGER_TYPES.issuperset(map(type, chain.from_iterable(column)))):
                    return [self.pack(r) for r in rows]
                values = np.array(column, dtype=code.dtype)  # OverflowError: too big
                if answered is None:
                    table[f"q{j}"] = values
                    present |= bit
                else:
                    table[f"q{j}"][answered] = values
                    present[answered] |= bit
        except (OverflowError, ValueError, TypeError):
            return [self.pack(r) for r in rows]
        table["present"] = present.view("u1").reshape(n, 8)[:, :self._presence]
        data = table.tobytes()
        size = self.dtype.itemsize
        return [data[i:i + size] for i in range(0, n * size, size)]


@dataclass(frozen=True, eq=False)
class PackedRead:
    """A version's stored submissions read from their packed rows in one pass
    (`packed_columns`): the ids (read when first asked for: `StoredIds`), per question
    (answered (n,) bool, the answered rows' reports) as `submission_columns` gives them, and
    the designs as `designs_of` gives them (None: not asked for, or not readable so)."""

    ids: Sequence[str]
    columns: dict[str, tuple[np.ndarray, np.ndarray]]
    designs: dict[str, Any] | None


def packed_columns(store: Store, layout: PackedLayout | None, survey_id: str, version: int,
                   qids: Sequence[str], page: int = 200_000,
                   designs: bool = False) -> PackedRead | None:
    """As `submission_columns`, from the packed rows (`Store.packed_pages`), with the rows'
    designs read in the same pass when asked for (a design-based report: one pass over the
    rows instead of two): no JSON is read but one report per question for its JSON type
    (`report_types`: yes/no reports are bool). None when the version cannot be read this
    way: a question its layout does not pack, or a row stored without its packed row (before
    schema 7, or a report that does not pack) or with another layout's; then read the JSON
    (`submission_columns`, and the designs alone: `submission_designs`)."""
    if layout is None or not qids or any(q not in layout.index for q in qids):
        return None
    chunks: list[bytes] = []
    design_pages: list[DesignPage | None] = []
    n = 0
    for found in store.packed_pages(survey_id, version, page, designs=designs):
        if found.reports is None:
            return None
        chunks.append(found.reports)
        design_pages.append(found.designs)
        n += found.count
    if not n:  # nothing stored: the JSON path says so as it always has
        return None
    data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    if len(data) != n * layout.dtype.itemsize:
        return None
    table = np.frombuffer(data, dtype=layout.dtype)
    if (table["fingerprint"] != layout.fingerprint).any():
        return None
    presence = np.unpackbits(table["present"], axis=1, bitorder="little")
    types = store.report_types(survey_id, version, qids)
    columns: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for qid in qids:
        j = layout.index[qid]
        present = presence[:, j].astype(bool)
        reports = layout.fields[j][1].decode(table[f"q{j}"][present])
        if types.get(qid) in ("true", "false"):
            reports = reports.astype(bool)
        columns[qid] = (present, reports)
    return PackedRead(StoredIds(store, survey_id, version, n, page), columns,
                      designs_of(store, survey_id, design_pages) if designs else None)
