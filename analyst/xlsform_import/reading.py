"""Reading an XLSForm with pyxform, the ODK project's own parser (.xlsx, .xlsm, .xls, .csv,
.md): its workbook layer gives the sheets' rows (for row numbers and the extra `ldp_*`
columns), its XLSForm-to-JSON layer the form as ODK understands it (types resolved, choices
attached, translations grouped by language, groups nested)."""

from __future__ import annotations

import warnings as python_warnings
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import XlsFormError

SUFFIXES = (".xlsx", ".xlsm", ".xls", ".csv", ".md")
# A form is refused by size before it is read whole: the largest real form we know (a 710-row
# two-language MSNA) is 0.3 MB on disk and 2.5 MB unzipped; a 0.2 MB .xlsx can unzip to
# 200 MB, which openpyxl would read for a minute in a gigabyte of memory.
MAX_FILE_BYTES = 10_000_000  # on disk, any format
MAX_UNZIPPED_BYTES = 50_000_000  # an .xlsx/.xlsm's parts, as its zip directory states them
_ZIPPED = (".xlsx", ".xlsm")


@dataclass
class Form:
    """An XLSForm as pyxform reads it."""

    json: dict[str, Any]  # the form as ODK understands it
    survey_rows: list[dict[str, Any]]  # the survey sheet's rows as written
    survey_columns: list[str]
    choice_columns: list[str]
    settings: dict[str, Any]  # the settings sheet's (first) row
    sheets: list[str]  # lowercase
    warnings: list[str]  # pyxform's
    notes: list[str]  # what reading changed or what the spreadsheet library warned about


def read(path: Path) -> Form:
    """The form at `path`; XlsFormError for a file that is not an XLSForm pyxform reads."""
    if path.suffix.lower() not in SUFFIXES:
        raise XlsFormError(f"{path.name}: an XLSForm is a {', '.join(SUFFIXES)} file")
    if not path.is_file():
        raise XlsFormError(f"{path}: no such file")
    _check_size(path)
    from pyxform.xls2json import workbook_to_json
    from pyxform.xls2json_backends import get_xlsform

    warnings: list[str] = []
    with python_warnings.catch_warnings(record=True) as caught:  # said as notes, not leaked
        python_warnings.simplefilter("always")
        try:  # pyxform reads hostile files too: whatever it raises is a form it cannot read
            book = get_xlsform(str(path))
            form = workbook_to_json(workbook_dict=book, form_name=None,
                                    fallback_form_name=book.fallback_form_name,
                                    default_language=None, warnings=warnings)
        except Exception as exc:
            message = " ".join(str(exc).split()) or type(exc).__name__
            raise XlsFormError(f"{path.name}: pyxform cannot read this XLSForm: "
                               f"{message}") from None
    notes = [f"reading the workbook: {w.message}" for w in caught] + _smart_quotes(book)
    return Form(json=form, survey_rows=list(book.survey or []),
                survey_columns=_columns(book.survey_header),
                choice_columns=_columns(book.choices_header),
                settings=dict((book.settings or [{}])[0]) if book.settings else {},
                sheets=[str(s).lower() for s in book.sheet_names or []], warnings=warnings,
                notes=notes)


_SMART_QUOTES = "\u2018\u2019\u201c\u201d"


def _smart_quotes(book: Any) -> list[str]:
    """What pyxform (as ODK) does to typographic quotes: ’ and ‘ become ', “ and ” become ",
    in every label, hint and choice; the import takes the text as ODK shows it, and since an
    option's text is also its answer value, it is said."""
    changed = sorted({str(row.get("name", "")) for sheet in (book.survey, book.choices)
                      for row in sheet or () for column, value in row.items()
                      if str(column).split("::", 1)[0].strip() in ("label", "hint")
                      and isinstance(value, str) and any(q in value for q in _SMART_QUOTES)})
    if not changed:
        return []
    return [f"typographic quotes (\u2019 \u2018 \u201c \u201d) are written as ' and \" in the "
            f"texts of {len(changed)} row(s) or choice(s) ({', '.join(changed[:10])}"
            f"{' ...' if len(changed) > 10 else ''}), as ODK shows them: an option's text is "
            "also its answer value"]


def _check_size(path: Path) -> None:
    """XlsFormError for a file too large to read, or an .xlsx/.xlsm that is not a whole
    workbook (a truncated file, a zip without a workbook), before any of it is read whole."""
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise XlsFormError(f"{path.name}: {size / 1e6:.1f} MB is more than an XLSForm holds "
                           f"(at most {MAX_FILE_BYTES / 1e6:g} MB)")
    if path.suffix.lower() not in _ZIPPED:
        return
    try:
        with zipfile.ZipFile(path) as z:
            parts = z.infolist()
    except (zipfile.BadZipFile, OSError):
        raise XlsFormError(f"{path.name}: not a readable {path.suffix.lower()} workbook (the "
                           "file is truncated or damaged, or not an Excel workbook): save it "
                           "again from the spreadsheet program") from None
    if not any(p.filename.lower() == "xl/workbook.xml" for p in parts):
        raise XlsFormError(f"{path.name}: a zip file without an Excel workbook in it (no "
                           "xl/workbook.xml): save the form as .xlsx from the spreadsheet "
                           "program")
    # Python's zipfile (which openpyxl reads through) never yields more than a part's stated
    # size (a part that unzips to more fails its check), so the stated sizes bound the reading.
    unzipped = sum(p.file_size for p in parts)
    if unzipped > MAX_UNZIPPED_BYTES:
        raise XlsFormError(f"{path.name}: its parts unzip to {unzipped / 1e6:.0f} MB, more "
                           f"than an XLSForm holds (at most {MAX_UNZIPPED_BYTES / 1e6:g} MB)")


def _columns(header: Any) -> list[str]:
    return [str(k) for k in header[0]] if header else []


class RowIndex:
    """The survey sheet's rows by name, in order (row numbers count the header as row 1)."""

    def __init__(self, rows: Sequence[Mapping[str, Any]]) -> None:
        self.rows = [(i + 2, dict(r)) for i, r in enumerate(rows)]
        self.by_name: dict[str, list[int]] = {}
        for i, (_, r) in enumerate(self.rows):
            if r.get("name") is not None:
                self.by_name.setdefault(str(r["name"]).strip(), []).append(i)
        self.taken: set[int] = set()

    def take(self, name: str) -> tuple[int, dict[str, Any]] | None:
        """The first row named `name` not taken yet (its number and cells), now taken."""
        for i in self.by_name.get(name, ()):
            if i not in self.taken:
                self.taken.add(i)
                return self.rows[i]
        return None

    def later(self, name: str) -> bool:
        """Whether a row named `name` is still to come."""
        return any(i not in self.taken for i in self.by_name.get(name, ()))
