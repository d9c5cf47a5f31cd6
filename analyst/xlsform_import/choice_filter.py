"""A select_one row's `choice_filter` as its question's `filter` (shared/option_filter.py):
the options the device shows follow an earlier answer, while the question is randomized over
its whole list (docs/xlsform.md, "Cascading selects").

Two forms of the expression are read, each naming an earlier question `${q}` and a column of
the choices sheet (`name`: the choice's own name):

    col=${q}   (spaces allowed, either side of =)    the choices whose col is q's answer
    selected(${q}, col)                               the choices whose col q's answer holds

Anything else (and, or, other functions, a constant, several questions) is refused by row with
its reason. The row must become a categorical question and `${q}` an earlier imported
categorical, ordinal or multiselect question; each choice's column must name one of q's
choices (ODK would never show a choice whose value is none of them, or empty).

A choice_filter where XLSForm has no choices to filter (a group's row, an integer or decimal
row) is ignored by pyxform, so ODK shows every choice of the questions inside a group and
nothing changes for a number: the row is imported as ODK runs it and listed to check
(`ignored`), never quietly.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ldpsurvey.shared.option_filter import filter_reading

from . import expressions as xp
from .errors import UNSUPPORTED, Refusal, quoted

TOPIC = "choice filters that cannot be kept"
IGNORED_TOPIC = "choice filters ODK does not apply"
_NAME = r"[A-Za-z_][A-Za-z0-9_.-]*"
_EQUALS = re.compile(rf"^\s*({_NAME})\s*=\s*\$\{{({_NAME})\}}\s*$")
_SELECTED = re.compile(rf"^\s*selected\s*\(\s*\$\{{({_NAME})\}}\s*,\s*({_NAME})\s*\)\s*$")
_ALTERNATIVE = ("write it as col=${question} or selected(${question}, col), or drop "
                "choice_filter and list every option")


def parse(expression: str) -> tuple[str, str]:
    """(column, question name) of a choice_filter of a form read; Refusal otherwise."""
    found = _EQUALS.fullmatch(expression)
    if found is not None:
        return found.group(1), found.group(2)
    found = _SELECTED.fullmatch(expression)
    if found is not None:
        return found.group(2), found.group(1)
    raise Refusal(UNSUPPORTED, f"its choice_filter {quoted(expression)} is not a filter "
                  "ldpsurvey reads (col=${question} or selected(${question}, col): one "
                  "earlier answer, one column of the choices sheet)", _ALTERNATIVE, TOPIC)


def ignored(expression: str, xls_type: str, group: bool) -> tuple[str, str, str]:
    """(reason, alternative, topic) of the check line for a choice_filter on a row that has no
    choices to filter (a group's, an integer's: pyxform drops it, so ODK ignores it)."""
    inside = " (the questions inside show every choice)" if group else ""
    return (f"its choice_filter {quoted(expression)} is not applied: XLSForm filters the "
            f"choices of a select row only, so pyxform drops it on this {xls_type} row and ODK "
            f"runs the form without it{inside}; imported so",
            "move it to the select_one it was meant for, or drop it", IGNORED_TOPIC)


def option_filter(expression: str, own: xp.Target, choices: Sequence[Mapping[str, Any]],
                  by: xp.Target) -> dict[str, Any]:
    """The question `own`'s `filter` from its row's choice_filter, its choices (pyxform's,
    with the choices sheet's extra columns) and the earlier question `by` that `${q}`
    names; Refusal for what cannot be one."""
    column, _ = parse(expression)
    if "filter" not in own.unit.keys:
        raise Refusal(UNSUPPORTED, f"its choice_filter needs an unordered select_one (a "
                      f"categorical question); this row becomes {own.unit.described}",
                      "write ldp_type categorical, or drop choice_filter", TOPIC)
    if not by.unit.filter_reads:
        raise Refusal(UNSUPPORTED, f"its choice_filter reads {by.id!r}, {by.unit.described}: "
                      f"the options can follow only an answer that is options "
                      f"({', '.join(filter_reading())})", _ALTERNATIVE, TOPIC)
    cells = {str(choice.get("name")): _cell(choice.get(column) if column != "name"
                                            else str(choice.get("name")))
             for choice in choices if str(choice.get("name")) in own.options}
    if cells and None not in cells.values() and not any(c in by.options for c in cells.values()):
        written = sorted({str(cell) for cell in cells.values()})
        raise Refusal(UNSUPPORTED, f"ODK never shows any of its {len(cells)} choices: its "
                      f"choice_filter reads the column {column!r}, whose values "
                      f"({', '.join(map(repr, written))}) are none of them a "
                      f"choice of {by.id!r}, so the question is never answered in ODK; left "
                      "out, nothing is collected either (ldpsurvey would show every option "
                      "where none goes with the answer)", f"fill the list, each choice's "
                      f"{column} naming a choice of {by.id!r}", TOPIC)
    values: dict[str, list[str]] = {}
    for choice in choices:
        name = str(choice.get("name"))
        if name not in own.options:  # a special value ("Don't know"): always shown
            continue
        cell = cells[name]
        if cell is None:
            raise Refusal(UNSUPPORTED, f"its choice_filter reads the column {column!r}, which "
                          f"is empty for the choice {name!r} (ODK would never show it)",
                          f"fill {column} for every choice of the list", TOPIC)
        if cell not in by.options:
            raise Refusal(UNSUPPORTED, f"its choice_filter reads the column {column!r}, whose "
                          f"value {cell!r} for the choice {name!r} is not a choice of "
                          f"{by.id!r} (ODK would never show it)",
                          f"correct {column} of the choice, or drop the choice", TOPIC)
        values[own.options[name]] = [by.options[cell]]
    return {"by": by.id, "values": values}


def _cell(value: Any) -> str | None:
    """A choices-sheet cell as a choice name (None: empty); a whole number read as a float
    (1.0) is the name it was typed as (1)."""
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value).strip()
    return text or None


def reads(expression: str) -> str:
    """The question name a choice_filter reads; Refusal when its form is not read."""
    return parse(expression)[1]
