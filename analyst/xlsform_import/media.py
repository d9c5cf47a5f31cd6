"""The form's attached media (`--media`): the files a `select_one_from_file NAME.csv` or
`select_multiple_from_file NAME.csv` row takes its choices from, as ODK Central and
KoboToolbox attach them to the form.

ODK reads such a row's choices from the file when the form is filled in; ldpsurvey cannot (a
signed survey holds its options, and nothing is fetched at answer time), so the file is read
at import, as ODK reads it, and its choices become the row's options in the survey: the row is
then imported as if they were on the choices sheet (choices.py; choice_filter.py for a
`choice_filter` over the file's other columns).

- `.csv`: the header names the columns; `name` is each choice's value, `label` its label and
  `label::Language (xx)` its translations (the `parameters` cell's `value=col label=col`
  names other columns, as pyxform writes them into the form); every other column can be read
  by a `choice_filter`.
- `.xml`: ODK's flat itemset, `<root><item><name>..</name><label>..</label>...</item></root>`.
- `.geojson`: a FeatureCollection; a feature's `id` (its own, or its `id` property) is the
  choice's value and its `title` property the label (ODK's defaults); its other properties
  can be filtered on. The geometry is not read: ldpsurvey shows the list, not a map.

Without the file (no `--media`, or not among its files) the row is left out as before, the
reason naming the file and the option. A file given that cannot be read as choices (unreadable,
empty, no name column, a name twice or empty) leaves the row out as one to fix, with the
reason; the form as a whole is refused only for a `--media` path that does not exist or two
files of one name.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

from .errors import FIX, UNSUPPORTED, Refusal, XlsFormError
from .refusals import TOPICS

SUFFIXES = (".csv", ".xml", ".geojson")  # pyxform's EXTERNAL_INSTANCE_EXTENSIONS
# An attached file is refused by size before it is read whole (as the form: reading.py).
MAX_MEDIA_BYTES = 10_000_000
TOPIC = "attached files that cannot be read as choices"
_FIX_IT = "correct the attached file and import again"
_SELECTS = ("select one", "select all that apply")
# The columns ODK reads a choice's value and label from, by file type, unless the row's
# parameters name others (pyxform's itemset refs).
_DEFAULT_REFS = {".csv": ("name", "label"), ".xml": ("name", "label"),
                 ".geojson": ("id", "title")}


@dataclass(frozen=True)
class Attachment:
    """A file's choices as pyxform gives a choices sheet's (name, label: a text or {language
    name: text}, and the other columns), and what is said of it."""

    choices: list[dict[str, Any]]
    sha256: str
    languages: tuple[str, ...]  # the language names of its label columns


@dataclass
class Media:
    """The attached files by name (`--media` paths: folders, whose files are all attached, or
    files), each read once."""

    files: dict[str, Path] = field(default_factory=dict)
    given: tuple[Path, ...] = ()
    _read: dict[tuple[str, str, str], Attachment | Refusal] = field(default_factory=dict)

    def attachment(self, el: Mapping[str, Any]) -> tuple[Path, Attachment]:
        """The file a from-file select row names, read as its choices; Refusal (UNSUPPORTED)
        without the file, (FIX) for one that cannot be read as choices."""
        file = str(el.get("itemset"))
        path = self.files.get(file)
        if path is None:
            where = (f"is not among the --media files ({', '.join(map(str, self.given))})"
                     if self.given else "the import was not given (no --media)")
            raise Refusal(UNSUPPORTED, f"its options are in the file {file!r}, which {where}: a "
                          "signed survey holds its options", f"pass --media DIR with the "
                          f"form's attached {file}, or list the options on the choices sheet",
                          TOPICS["external"])
        params = el.get("parameters") or {}
        value, label = _DEFAULT_REFS[path.suffix.lower()]
        value, label = str(params.get("value", value)), str(params.get("label", label))
        key = (file, value, label)
        if key not in self._read:
            try:
                self._read[key] = _attachment(path, value, label, "label" in params)
            except Refusal as refusal:
                self._read[key] = refusal
        found = self._read[key]
        if isinstance(found, Refusal):
            raise found
        return path, found


def media(paths: Sequence[Path]) -> Media:
    """The attached files of the `--media` paths; XlsFormError for a path that does not
    exist, or two files of one name (which one the form means cannot be told)."""
    files: dict[str, Path] = {}
    for given in paths:
        if given.is_dir():
            found = sorted(p for p in given.iterdir() if p.is_file())
        elif given.is_file():
            found = [given]
        else:
            raise XlsFormError(f"--media {given}: no such file or folder")
        for path in found:
            earlier = files.get(path.name)
            if earlier is not None and earlier.resolve() != path.resolve():
                raise XlsFormError(f"--media: two files named {path.name!r} ({earlier} and "
                                   f"{path}): give the folder of the form's attachments once")
            files[path.name] = path
    return Media(files, tuple(paths))


def from_file(el: Mapping[str, Any]) -> bool:
    """Whether pyxform's element is a select whose choices are in an attached file."""
    return (el.get("type") in _SELECTS and not el.get("list_name")
            and Path(str(el.get("itemset") or "")).suffix.lower() in SUFFIXES)


def _attachment(path: Path, value: str, label: str, named: bool) -> Attachment:
    """The file's choices (value and label from these columns, the label's `named` by the
    row's parameters); Refusal (FIX) for a file that cannot be read as choices. Without a
    label column ODK shows each choice by its value, and so does the import (choices.py says
    so in the notes), unless the row's parameters name a label column the file lacks."""
    name = path.name
    try:
        size = path.stat().st_size
        if size > MAX_MEDIA_BYTES:
            raise _wrong(f"{size / 1e6:.1f} MB is more than an attached list holds here (at "
                         f"most {MAX_MEDIA_BYTES / 1e6:g} MB)", name)
        data = path.read_bytes()
    except OSError as exc:
        raise _wrong(f"it cannot be read ({exc.strerror or exc})", name) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        how = "CSV UTF-8" if path.suffix.lower() == ".csv" else "UTF-8"
        raise _wrong(f"it is not UTF-8 text (save it as {how})", name) from None
    reader = {".csv": _csv_rows, ".xml": _xml_rows, ".geojson": _geojson_rows}
    columns, rows = reader[path.suffix.lower()](text, name)
    if not rows:
        raise _wrong("it has no choices (ODK would show an empty list)", name)
    if value not in columns:
        raise _wrong(f"it has no {value!r} column, the choices' values (its columns: "
                     f"{', '.join(map(repr, columns)) or 'none'})", name)
    labels = [c for c in columns
              if c == label or ("::" in c and c.split("::", 1)[0].strip() == label)]
    if named and not labels:
        raise _wrong(f"it has no {label!r} column, which the row's parameters name as the "
                     "choices' labels", name)
    choices: list[dict[str, Any]] = []
    seen: dict[str, str] = {}
    for where, row in rows:
        choice_name = row.get(value, "")
        if not choice_name:
            raise _wrong(f"{where} has no {value} (ODK would offer a choice without a value)",
                         name)
        if choice_name in seen:
            raise _wrong(f"the {value} {choice_name!r} is on {seen[choice_name]} and {where} "
                         "(two choices of one value cannot be told apart)", name)
        seen[choice_name] = where
        choice = {c: v for c, v in row.items() if c not in labels and c != value}
        choice["name"] = choice_name
        shown = _label(row, labels, label)
        if shown is not None:
            choice["label"] = shown
        choices.append(choice)
    langs = tuple(c.split("::", 1)[1].strip() for c in labels if "::" in c)
    return Attachment(choices, hashlib.sha256(data).hexdigest(), langs)


def _label(row: Mapping[str, str], columns: Sequence[str], plain: str) -> Any:
    """The label of a choice as pyxform gives it: a text (one label column), {language name:
    text} (`label::Language (xx)` columns; the plain one is pyxform's 'default'), or None."""
    if columns == [plain]:
        return row.get(plain) or None
    texts = {("default" if c == plain else c.split("::", 1)[1].strip()): row.get(c, "")
             for c in columns}
    texts = {lang: text for lang, text in texts.items() if text}
    return texts or None


def _wrong(reason: str, name: str) -> Refusal:
    return Refusal(FIX, f"its options are in the attached file {name!r}, but {reason}",
                   _FIX_IT, TOPIC)


Rows = tuple[list[str], list[tuple[str, dict[str, str]]]]  # columns, (where, {column: cell})


def _csv_rows(text: str, name: str) -> Rows:
    """A CSV's columns and rows (each with its line), cells stripped."""
    try:
        lines = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise _wrong(f"it is not a CSV file ODK reads ({exc})", name) from None
    if not lines or not any(cell.strip() for cell in lines[0]):
        raise _wrong("it is empty (no header row naming its columns)", name)
    columns = [cell.strip() for cell in lines[0]]
    repeated = sorted({c for c in columns if c and columns.count(c) > 1})
    if repeated:
        raise _wrong(f"its header names {', '.join(map(repr, repeated))} twice", name)
    rows = []
    for number, cells in enumerate(lines[1:], start=2):
        if not any(cell.strip() for cell in cells):  # a blank line (a trailing one)
            continue
        rows.append((f"line {number}", {c: cell.strip() for c, cell in zip(columns, cells,
                                                                             strict=False)
                                        if c}))
    return [c for c in columns if c], rows


def _xml_rows(text: str, name: str) -> Rows:
    """An XML itemset's columns and items: the root's <item> elements, each child element a
    column (ODK's `instance('file')/root/item`)."""
    try:  # defusedxml (pyxform's own dependency): no DTD, entity or external reference
        root = fromstring(text, forbid_dtd=True)
    except DefusedXmlException:
        raise _wrong("it declares a DOCTYPE or entities, which are not read here",
                     name) from None
    except ParseError as exc:
        raise _wrong(f"it is not well-formed XML ({exc})", name) from None
    columns: list[str] = []
    rows = []
    for number, item in enumerate((e for e in root if e.tag == "item"), start=1):
        row = {}
        for child in item:
            if len(child) or child.attrib:
                raise _wrong(f"item {number}'s <{child.tag}> is not a plain value: ODK's "
                             "itemset is a flat list (<root><item><name>..</name><label>.."
                             "</label></item></root>)", name)
            row[child.tag] = (child.text or "").strip()
            if child.tag not in columns:
                columns.append(child.tag)
        rows.append((f"item {number}", row))
    return columns, rows


def _geojson_rows(text: str, name: str) -> Rows:
    """A GeoJSON FeatureCollection's features as ODK reads them: `id` (the feature's own, or
    its id property) and the properties (scalars only); the geometry is not read."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _wrong(f"it is not JSON ({exc.msg}, line {exc.lineno})", name) from None
    features = data.get("features") if isinstance(data, dict) else None
    if not isinstance(data, dict) or data.get("type") != "FeatureCollection" \
            or not isinstance(features, list):
        raise _wrong("it is not a GeoJSON FeatureCollection (ODK reads its features)", name)
    columns: list[str] = ["id"]
    rows = []
    for number, feature in enumerate(features, start=1):
        properties = feature.get("properties") if isinstance(feature, dict) else None
        if not isinstance(properties, dict):
            properties = {}
        row = {k: _scalar(v) for k, v in properties.items()
               if isinstance(v, (str, int, float)) and not isinstance(v, bool)}
        own = feature.get("id") if isinstance(feature, dict) else None
        if own is not None and isinstance(own, (str, int, float)):
            row["id"] = _scalar(own)
        columns += [k for k in row if k not in columns]
        rows.append((f"feature {number}", row))
    return columns, rows


def _scalar(value: str | int | float) -> str:
    """A JSON value as the text ODK compares (a whole number without '.0')."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip()
