"""Importing part of a form: the sensitive module of a large household survey
(`--group NAME`, repeatable: the rows inside those groups, nested ones too; `--marked COLUMN`:
the rows whose COLUMN cell in the survey sheet is filled with anything but no/false/0, and
every row inside a group so marked). A survey of hundreds of randomized questions spends ε no
respondent would accept, so the designer keeps the main survey in ODK or KoboToolbox and
imports only these.

Rows outside the selection are neither imported nor listed as problems (they are counted);
a condition that reads one is refused with that reason (the row goes with it: select the row
it reads too, or write the condition without it)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .cells import FALSE_CELLS, blank
from .errors import UNSUPPORTED, RowProblem, XlsFormError

TOPIC = "rows outside the selection (--group, --marked)"
_GROUPS = ("group", "repeat", "loop")  # pyxform's element types that hold rows


@dataclass(frozen=True)
class Selection:
    """Which rows to import: all (nothing given), or those of `groups` or `marked`."""

    groups: tuple[str, ...] = ()
    marked: str | None = None

    @property
    def active(self) -> bool:
        return bool(self.groups) or self.marked is not None

    def check(self, rows: Sequence[Mapping[str, Any]], filename: str) -> None:
        """XlsFormError (one line) for a group the form does not have or a column its survey
        sheet does not fill."""
        known = {str(r.get("name", "")).strip() for r in rows if begins(r)}
        for name in self.groups:
            if name not in known:
                have = ", ".join(sorted(known)) or "none"
                raise XlsFormError(f"{filename}: no group or repeat is named {name!r} (--group; "
                                   f"its groups: {have})")
        if self.marked is not None and not any(self.marked in r for r in rows):
            raise XlsFormError(f"{filename}: the survey sheet has no column {self.marked!r} "
                               "(--marked), or it is empty in every row")

    def picks(self, cells: Mapping[str, Any], name: str, holds_rows: bool) -> bool:
        """Whether this row, or a group row and so every row inside it, is selected."""
        if holds_rows and name in self.groups:
            return True
        if self.marked is None:
            return False
        value = cells.get(self.marked)
        return not blank(value) and str(value).strip().lower() not in FALSE_CELLS

    def outside(self, row: int | None, name: str, xls_type: str) -> RowProblem:
        """What a condition reading a row outside the selection is told."""
        return RowProblem(row, name, xls_type, "outside the selection (--group, --marked)",
                          "select it too", UNSUPPORTED, TOPIC)


def holds_rows(el: Mapping[str, Any]) -> bool:
    """A group or repeat (pyxform's element)."""
    return str(el.get("type", "")) in _GROUPS


def begins(cells: Mapping[str, Any]) -> bool:
    """A survey-sheet row that begins a group or repeat (begin_group, begin group, ...)."""
    return str(cells.get("type", "")).strip().lower().startswith("begin")
