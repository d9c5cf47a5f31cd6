"""Writes health_safety_2025.xls, the legacy-Excel (BIFF8) copy of health_safety_2025.xlsx
(README.md), for the test that an .xls imports to the same survey as the .xlsx.

It copies the .xlsx sheet by sheet, cell by cell (strings as strings, numbers as numbers,
empty cells left empty), so the two workbooks hold the same form. Run from this directory with
openpyxl and xlwt installed (neither is a dependency of ldpsurvey; a throwaway venv will do):

    python -m venv /tmp/xls && /tmp/xls/bin/pip install openpyxl xlwt
    /tmp/xls/bin/python make_health_safety_xls.py
"""

from __future__ import annotations

from pathlib import Path

import xlwt
from openpyxl import load_workbook

HERE = Path(__file__).parent


def main() -> None:
    source = load_workbook(HERE / "health_safety_2025.xlsx", read_only=True)
    book = xlwt.Workbook(encoding="utf-8")
    for sheet in source.worksheets:
        out = book.add_sheet(sheet.title)
        for r, row in enumerate(sheet.iter_rows(values_only=True)):
            for c, value in enumerate(row):
                if value is None:
                    continue
                if not isinstance(value, str | int | float) or isinstance(value, bool):
                    raise SystemExit(f"{sheet.title}!{r + 1},{c + 1}: {value!r} is not text "
                                     "or a number; this script copies only those")
                out.write(r, c, value)
    book.save(str(HERE / "health_safety_2025.xls"))


if __name__ == "__main__":
    main()
