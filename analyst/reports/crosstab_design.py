"""What a design-based crosstab adds to its report formats: the design effect of every joint
share and every share within a row or a column, split as deff = sampling × privacy
(analyst/design/crosstab.py; a conditional share's is R's `svyratio(deff = TRUE)`), as tables
in the text formats and HTML, and as columns in the CSV."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .design_view import deff_text

GRIDS = (("joint", "Design effect of each joint share (deff = sampling × privacy)"),
         ("col_given_row", "Design effect of {cols} among each {rows} (deff = sampling × "
                           "privacy)"),
         ("row_given_col", "Design effect of {rows} among each {cols} (deff = sampling × "
                           "privacy)"))
CSV_COLUMNS = ("deff", "deff_sampling", "deff_privacy", "effective_n", "deff_sampling_low",
               "deff_sampling_high", "deff_split_supported", "df", "interval_quantile")


def designed(document: Mapping[str, Any]) -> bool:
    return bool(document.get("design"))


def deff_tables(report: Any, table: Any) -> list[Any]:
    """The deff tables of a design-based crosstab (`table` is crosstab_view.Table)."""
    if not designed(report.document):
        return []
    rows, cols = report.shown_rows, report.shown_cols
    out = []
    for kind, title in GRIDS:
        grid = report.grid(kind)
        out.append(table(title, [f"{report.rows_question} \\ {report.cols_question}", *cols],
                         [[r, *(deff_text(grid[i][j].get("deff")) for j in range(len(cols)))]
                          for i, r in enumerate(rows)]))
    return out


def csv_values(document: Mapping[str, Any], cell: Mapping[str, Any]) -> list[str]:
    """The deff columns of one CSV line ([] unless the crosstab is design-based)."""
    if not designed(document):
        return []
    deff = cell.get("deff") or {}
    design = document["design"]
    supported = deff.get("split_supported")
    return ["" if deff.get(k) is None else repr(deff[k])
            for k in ("total", "sampling", "privacy", "effective_n", "sampling_low",
                      "sampling_high")] + [
        "" if supported is None else str(bool(supported)).lower(),
        "" if design.get("df") is None else str(design["df"]),
        str(design.get("interval_quantile") or "")]
