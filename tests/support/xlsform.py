"""XLSForms written by the tests with openpyxl: rows as dicts, columns in first-seen order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from openpyxl import Workbook

YES_NO = [{"list_name": "yn", "name": "yes", "label": "Yes"},
          {"list_name": "yn", "name": "no", "label": "No"}]


def write_sheet(book: Workbook, title: str, rows: Sequence[Mapping[str, Any]],
                first: bool = False) -> None:
    sheet = book.active if first else book.create_sheet(title)
    sheet.title = title
    columns: list[str] = []
    for row in rows:
        columns += [k for k in row if k not in columns]
    sheet.append(columns)
    for row in rows:
        sheet.append([row.get(c) for c in columns])


def xlsform(path: Path, survey: Sequence[Mapping[str, Any]],
            choices: Sequence[Mapping[str, Any]] = (),
            settings: Mapping[str, Any] | None = None) -> Path:
    """Write an .xlsx XLSForm with these survey, choices and settings rows."""
    book = Workbook()
    write_sheet(book, "survey", survey, first=True)
    if choices:
        write_sheet(book, "choices", choices)
    if settings:
        write_sheet(book, "settings", [settings])
    book.save(path)
    return path
