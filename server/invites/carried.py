"""Disclosed covariates carried by invitation codes: a sensitive module beside a main survey.

Most researchers keep their household survey in ODK Central or KoboToolbox and field only the
sensitive questions through ldpsurvey (docs/sensitive-module.md). `ldpsurvey invites create
--from-export MAIN.csv --key KEY --carry region,age_band` makes one code per interview of the
main survey's export and stores, with each code's hash, the values of the named columns for
that interview (never the key, never the rest of the row). The server links every submission
made with the code to those values, so analysts can cut the randomized answers by them
(`report --by region`, `regress --covariates region`): that is a disclosure of those values,
which the page shows the respondent before they answer (GET of the carried values below).

Limits keep the carried values covariates and not identifiers: at most MAX_CARRIED named
columns, values of at most MAX_VALUE_LENGTH characters, at most MAX_DISTINCT distinct values
per column; a bad export is refused whole (ExportError, one line; nothing stored).
"""

from __future__ import annotations

import csv
import io
import json
import re
import secrets
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ldpsurvey.shared.errors import LdpSurveyError
from ldpsurvey.shared.invite_codes import PREFIX
from ldpsurvey.shared.survey import Question

from ..common.errors import NotFound, ValidationFailed
from .claims import digest

if TYPE_CHECKING:
    from ..store import Store, StoredDesigns

MAX_CARRIED = 8  # columns a code may carry
MAX_VALUE_LENGTH = 100  # characters of one carried value
MAX_DISTINCT = 200  # distinct values of one carried column (more: an identifier, not a group)
MAX_KEY_LENGTH = 200  # characters of an interview key (ODK's "uuid:..." is 41)
MAX_ROWS = 1_000_000  # interviews of one export (server/invites MAX_COUNT)
MAX_FILE_BYTES = 512 * 1024 * 1024
SMALL_CELL = 5  # fewer interviews than this share a combination of carried values: a warning
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.:/-]{0,63}")  # ODK "grp-q", Kobo "grp/q", "_uuid"


class ExportError(LdpSurveyError):
    """An export (or a --key/--carry choice) that cannot be used; the message names the file,
    the line and the problem."""

    code = "invalid_export"
    status = 422


@dataclass(frozen=True)
class Export:
    """The interviews of a main survey's export: each one's key and the values of the carried
    columns, in file order."""

    source: str
    key: str
    names: tuple[str, ...]
    rows: list[tuple[str, tuple[str, ...]]]

    def small_cells(self) -> list[tuple[tuple[str, ...], int]]:
        """The combinations of carried values fewer than SMALL_CELL interviews share (a
        respondent in one of them is nearly identified by the values that travel)."""
        counts = Counter(values for _, values in self.rows)
        return sorted((values, n) for values, n in counts.items() if n < SMALL_CELL)


def parse_carry(text: str) -> tuple[str, ...]:
    """'region,age_band' -> ('region', 'age_band'), checked: names, no repeats, the limit."""
    return parse_carry_columns(text)[0]


def parse_carry_columns(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The carried names and the export column each is read from: 'region,n=grp-n' ->
    (('region', 'n'), ('region', 'grp-n')). NAME=COLUMN carries a column under another name:
    a carried question's id, where the export writes the row under its group path (ODK
    Central's `consented-demographics-ind_f_n`, KoboToolbox's `consented/demographics/...`)."""
    parts = tuple(part.strip() for part in text.split(","))
    if not text.strip() or any(not part for part in parts):
        raise ExportError("--carry: give column names separated by commas, e.g. region,age_band")
    pairs = [tuple(p.strip() for p in part.split("=", 1)) if "=" in part else (part, part)
             for part in parts]
    for pair in pairs:
        for name in pair:
            if not NAME.fullmatch(name):
                raise ExportError(f"--carry: {name!r} is not a column name ldpsurvey can carry "
                                  "(a letter or _, then letters, digits, _ . : / -; at most "
                                  "64; NAME=COLUMN carries COLUMN as NAME)")
    names = tuple(name for name, _ in pairs)
    columns = tuple(column for _, column in pairs)
    if len(set(names)) != len(names) or len(set(columns)) != len(columns):
        raise ExportError("--carry names a column twice")
    if len(names) > MAX_CARRIED:
        raise ExportError(f"--carry: at most {MAX_CARRIED} columns travel with a code")
    return names, columns


def read_export(path: str | Path, key: str, names: Sequence[str],
                columns: Sequence[str] | None = None) -> Export:
    """The export CSV as ODK Central or KoboToolbox write it (a header row, one row per
    interview; comma or semicolon separated; UTF-8 with or without a BOM), reduced to the key
    and the named columns (each read from its `columns` entry, default the name itself).
    ExportError for anything wrong, naming the line."""
    source = Path(path).name
    if key in names or key in (columns or ()):
        raise ExportError(f"--carry names the key column {key!r}: the key identifies the "
                          "interview and never travels with a code")
    try:
        if Path(path).stat().st_size > MAX_FILE_BYTES:
            raise ExportError(f"{source}: larger than {MAX_FILE_BYTES // 2**20} MiB")
        text = Path(path).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise ExportError(f"{source}: not UTF-8 text (export the CSV as UTF-8)") from None
    except OSError as exc:
        raise ExportError(f"cannot read export {source}: {exc.strerror or exc}") from None
    return parse_export(text, source, key, names, columns)


def parse_export(text: str, source: str, key: str, names: Sequence[str],
                 columns: Sequence[str] | None = None) -> Export:
    """`read_export` of text already read."""
    columns = tuple(names if columns is None else columns)
    first = text.split("\n", 1)[0]
    delimiter = ";" if first.count(";") > first.count(",") else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    try:
        header = next(reader, None)
        if header is None:
            raise ExportError(f"{source}: empty file (no header row)")
        header = [h.strip() for h in header]
        if len(set(header)) != len(header):
            twice = sorted({h for h in header if header.count(h) > 1})
            raise ExportError(f"{source}: the header names {', '.join(map(repr, twice))} twice")
        missing = [c for c in (key, *columns) if c not in header]
        if missing:
            raise ExportError(f"{source}: no column {missing[0]!r} (columns: "
                              f"{', '.join(header[:12])}{', ...' if len(header) > 12 else ''})")
        key_at, at = header.index(key), [header.index(c) for c in columns]
        rows: list[tuple[str, tuple[str, ...]]] = []
        seen: dict[str, int] = {}
        for row in reader:
            line = reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                raise ExportError(f"{source}, line {line}: {len(row)} fields, the header has "
                                  f"{len(header)}")
            unit = row[key_at].strip()
            if not unit:
                raise ExportError(f"{source}, line {line}: empty {key!r}")
            if len(unit) > MAX_KEY_LENGTH:
                raise ExportError(f"{source}, line {line}: {key!r} longer than "
                                  f"{MAX_KEY_LENGTH} characters")
            if unit in seen:
                raise ExportError(f"{source}, line {line}: {key!r} {unit!r} again (line "
                                  f"{seen[unit]}): one code per interview")
            seen[unit] = line
            values = tuple(row[j].strip() for j in at)
            for name, value in zip(names, values, strict=True):
                if not value:
                    raise ExportError(f"{source}, line {line}: empty {name!r} (every carried "
                                      "value is shown to the respondent and reported by; fill "
                                      "it in the export or carry another column)")
                if len(value) > MAX_VALUE_LENGTH:
                    raise ExportError(f"{source}, line {line}: {name!r} is longer than "
                                      f"{MAX_VALUE_LENGTH} characters: carry a covariate, "
                                      "not free text")
            rows.append((unit, values))
            if len(rows) > MAX_ROWS:
                raise ExportError(f"{source}: more than {MAX_ROWS:,} interviews")
    except csv.Error as exc:
        raise ExportError(f"{source}, line {reader.line_num}: not CSV ({exc})") from None
    if not rows:
        raise ExportError(f"{source}: no interview rows under the header")
    for j, name in enumerate(names):
        distinct = len({values[j] for _, values in rows})
        if distinct > MAX_DISTINCT:
            raise ExportError(f"{source}: {name!r} has {distinct:,} different values (at most "
                              f"{MAX_DISTINCT}): that identifies people rather than groups "
                              "them; carry a coarser column (a band, a region)")
    return Export(source, key, tuple(names), rows)


def encode(names: Sequence[str], values: Sequence[str]) -> str:
    """The JSON object stored with a code: {name: value} in the --carry order."""
    return json.dumps(dict(zip(names, values, strict=True)), ensure_ascii=False,
                      separators=(",", ":"))


def create_carried(store: Store, survey_id: str, export: Export,
                   questions: Iterable[Mapping[str, Any]] = ()) -> list[tuple[str, str]]:
    """One new code per interview of the export, each stored (as its hash) with the carried
    values of its interview; returns (key, code) pairs once, in file order. The keys are not
    stored. `questions` are the survey's (its manifest's dicts): a carried name must be a
    carried question (`carried = true`, its values then checked against the question's range)
    or no question at all, and every carried question must be carried. Refused (ExportError,
    nothing stored) otherwise, or when the survey's codes made before carry other names, a
    design, or nothing."""
    export = carried_answers(export, list(questions), survey_id)
    codes = [PREFIX + secrets.token_urlsafe(16) for _ in export.rows]

    def check(stored: StoredDesigns) -> None:
        if stored.designed:
            raise ExportError(f"survey {survey_id!r} has invitation codes with a design "
                              "(--design); carried covariates go with codes of their own "
                              "survey")
        if stored.plain and stored.carried != export.names:
            had = (f"carry {', '.join(stored.carried)}" if stored.carried
                   else "carry no values")
            raise ExportError(f"survey {survey_id!r} has {stored.plain:,} invitation code(s) "
                              f"that {had}; every code of a survey carries the same columns "
                              f"(--carry {','.join(stored.carried) or '...'})")

    values = [encode(export.names, v) for _, v in export.rows]
    if not store.add_invites(survey_id, [digest(c) for c in codes], None, check,
                             (export.names, values)):
        raise NotFound(f"survey {survey_id!r} does not exist", {"id": survey_id})
    return [(unit, code) for (unit, _), code in zip(export.rows, codes, strict=True)]


def carried_answers(export: Export, questions: Sequence[Mapping[str, Any]],
                    survey_id: str) -> Export:
    """The export with the values of the survey's carried questions checked and written as
    the device sends them (an integer in the question's range: "3.0" -> "3"); ExportError
    when a carried question is not carried, a carried name is a question that is not carried,
    or a value is not an integer in the question's range (naming the line)."""
    by_id = {q["id"]: q for q in questions if isinstance(q, Mapping) and "id" in q}
    clash = sorted(n for n in export.names if n in by_id and by_id[n].get("carried") is not True)
    if clash:
        raise ExportError(f"--carry {clash[0]!r} is a question of survey {survey_id!r}: "
                          "rename the column (report --by would not know which one you mean; "
                          "a question whose value the invitation carries says carried = true)")
    wanted = [q for q in by_id.values() if q.get("carried") is True]
    missing = [q["id"] for q in wanted if q["id"] not in export.names]
    if missing:
        raise ExportError(f"the survey's question(s) {', '.join(map(repr, missing))} take "
                          "their value from the invitation (carried = true): carry them from "
                          f"the export, --carry {','.join(missing)} (NAME=COLUMN where the "
                          "export names the column otherwise)")
    if not wanted:
        return export
    rows = []
    for unit, values in export.rows:
        out = list(values)
        for q in wanted:
            j = export.names.index(q["id"])
            out[j] = _carried_integer(out[j], q, f"{export.source}, interview {unit!r}")
        rows.append((unit, tuple(out)))
    return Export(export.source, export.key, export.names, rows)


def _carried_integer(text: str, question: Mapping[str, Any], where: str) -> str:
    """A carried integer question's value as the device sends it, checked in its range."""
    try:
        number = float(text)
        value = int(number)
    except (ValueError, OverflowError):
        value, number = None, None
    low, high = question.get("min"), question.get("max")
    if value is None or value != number or not low <= value <= high:
        raise ExportError(f"{where}: {question['id']!r} is {text!r}, not a whole number from "
                          f"{low} to {high} (the range of the carried question)")
    return str(value)


def requested_code(body: Mapping[str, Any]) -> str:
    """The code of a POST .../invitation body {"invite": CODE}; ValidationFailed (422)
    otherwise."""
    from . import check_shape

    problems: list[dict[str, str]] = []
    code = check_shape(body, problems)
    if set(body) != {"invite"} or code is None:
        raise ValidationFailed("send {\"invite\": CODE}, the invitation code alone",
                               {"problems": problems})
    return code


def carried_values(store: Store, survey_id: str, code: str) -> dict[str, str]:
    """What a code carries ({} for none): what the page shows before the respondent answers.
    NotFound for a code the survey does not have."""
    found, text = store.invite_carried(survey_id, digest(code))
    if not found:
        raise NotFound("unknown invitation code", {"reason": "unknown"})
    return json.loads(text) if text else {}


def submission_values(store: Store, survey_id: str, version: int, name: str
                      ) -> dict[str, str]:
    """submission id -> the value of carried covariate `name` its code carried, for every
    stored submission of the version made with a code carrying values."""
    return {sid: json.loads(text)[name]
            for sid, text in store.submission_carried(survey_id, version)}


def carried_question(name: str, values: Iterable[str]) -> Question:
    """A carried covariate seen as a disclosed categorical question (its options the values
    seen, sorted), so that subgroups and regressions treat it as they treat a disclosed
    question: its values are known exactly, one per respondent."""
    return Question(id=name, text=name, type="categorical", epsilon=0.0,
                    mechanism="disclosed", options=tuple(sorted(set(values))), disclosed=True)
