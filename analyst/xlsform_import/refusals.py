"""What an XLSForm row's type becomes: the question types that import it
(UNITS_BY_XLSFORM_TYPE, each unit's `xlsform_types`), or what ldpsurvey cannot collect
privately, with the reason and the nearest supported alternative: XLSForm question types
(REFUSED_TYPES, by what `category` makes of pyxform's type) and survey-sheet columns that
decide what is collected (COLLECTING_COLUMNS)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ldpsurvey.shared.question_types import QuestionType, units

from .cells import FALSE_CELLS

# Survey-sheet columns that decide what is collected: a row that fills one is refused.
COLLECTING_COLUMNS = {
    "calculation": ("computes a value from the answers", "drop the calculation; compute what "
                    "you need from the estimates"),
    "calculate": ("computes a value from the answers", "drop the calculation; compute what "
                  "you need from the estimates"),
    "trigger": ("is recomputed when another answer changes", "drop the trigger"),
    "repeat_count": ("repeats questions", "ask a fixed set of questions"),
    "read_only": ("is read-only (filled by the form, not the respondent)", "drop the row"),
    "readonly": ("is read-only (filled by the form, not the respondent)", "drop the row"),
    "save_to": ("saves to an ODK entity", "drop save_to"),
}
# XLSForm types by what ldpsurvey says of them: (reason, nearest supported alternative).
_METADATA = ("device metadata (when, where or on which device a response was made) that "
             "would identify the respondent; ldpsurvey never sends it", "delete the row (the "
             "server keeps no time, place or device of a response)")
REFUSED_TYPES: dict[str, tuple[str, str]] = {
    "text": ("free text cannot be randomized", "offer a select_one list"),
    "barcode": ("a scanned code is free text, which cannot be randomized",
                "offer a select_one list"),
    "geo": ("an exact position cannot be sent privately",
            "a location question (a grid of cells, docs/location.md), added to the TOML by "
            "hand"),
    "date": ("a date or time cannot be randomized here",
             "a select_one of periods ('this week', 'this month', ...) or an integer with a "
             "range (e.g. days ago, . >= 0 and . <= 365)"),
    "media": ("a photo, recording or file cannot be randomized", "drop the row"),
    "calculate": ("a calculation on the true answers would be sent as it is, not randomized",
                  "drop the row; compute what you need from the estimates"),
    "acknowledge": ("an acknowledgement records only that it was seen",
                    "put its text in a note at the start (the survey's introduction), or ask "
                    "a yes/no select_one"),
    "rank": ("a ranking of every option has no private mechanism here",
             "a select_one of the first choice, or one ordinal select_one per option"),
    "external": ("its options come from a file or an external list, not the signed survey",
                 "list the options on the choices sheet"),
    "metadata": _METADATA,
    "repeat": ("a repeat asks its questions an unknown number of times (the count would be "
               "visible, and each repetition spends ε again)",
               "ask a fixed set of questions, or an integer with a range for the count"),
}
# What each refused type is, in the counts of the rows left out.
TOPICS = {"text": "free text", "barcode": "free text", "geo": "positions",
          "date": "dates and times", "media": "media",
          "calculate": "calculations", "acknowledge": "acknowledgements", "rank": "rankings",
          "external": "options from outside the form", "metadata": "device metadata",
          "repeat": "repeats"}


def _units_by_xlsform_type() -> dict[str, tuple[QuestionType, ...]]:
    """XLSForm type -> the units that import its rows, in the registry's order."""
    found: dict[str, tuple[QuestionType, ...]] = {}
    for unit in units():
        for xls_type in unit.xlsform_types:
            found[xls_type] = (*found.get(xls_type, ()), unit)
    return found


# select_one: binary, categorical, ordinal; integer: integer; range: integer or decimal;
# decimal: decimal; select_multiple: multiselect. A new question type whose unit declares an
# XLSForm type refused today has its rows imported: the mapping is asked before REFUSED_TYPES.
UNITS_BY_XLSFORM_TYPE = _units_by_xlsform_type()
_GEO = ("geopoint", "geotrace", "geoshape")
_DATES = ("date", "time", "dateTime")
# ODK's bind types -> the category of a row bound so (ODK's names: its "binary" is a file).
_BY_BIND_TYPE = {"int": "integer", "decimal": "decimal", **dict.fromkeys(_GEO, "geo"),
                 **dict.fromkeys(_DATES, "date"), "binary": "media"}
# pyxform's names of the select types, and what each is without a choice list.
_SELECTS = {"select one": "select_one", "select all that apply": "select_multiple"}


def category(el: Mapping[str, Any]) -> str:
    """What an element is, for the mapping: a key of UNITS_BY_XLSFORM_TYPE, a key of
    REFUSED_TYPES, or (another type) pyxform's name of its type."""
    kind = str(el.get("type", ""))
    if kind in _SELECTS:
        return _SELECTS[kind] if el.get("list_name") else "external"
    if kind == "select one external":
        return "external"
    if kind in ("rank", "range"):
        return kind
    from pyxform.question_type_dictionary import QUESTION_TYPE_DICT

    spec = QUESTION_TYPE_DICT.get(kind, {})
    return _by_binding(kind, spec.get("bind", {}), spec.get("control", {}).get("tag"))


def _by_binding(kind: str, bind: Mapping[str, Any], tag: str | None) -> str:
    """The category of a pyxform type by how ODK binds and shows it."""
    if "jr:preload" in bind or tag == "action" or kind in ("audit", "background-geopoint"):
        return "metadata"
    value = bind.get("type")
    if value in _BY_BIND_TYPE:
        return _BY_BIND_TYPE[value]
    if tag == "upload":
        return "media"
    if value == "barcode":
        return "barcode"
    if tag == "trigger":
        return "acknowledge"
    if kind in ("calculate", "hidden") or (bind and tag is None and "type" in bind):
        return "calculate"
    if kind in ("xml-external", "csv-external"):
        return "external"
    if tag == "input" and value == "string":
        return "text"
    return kind


def collecting_cell(cells: Mapping[str, Any]) -> tuple[str, str] | None:
    """(reason, alternative) for the first filled cell of a column that decides what is
    collected (COLLECTING_COLUMNS, or an ODK bind:: attribute), None when there is none."""
    for column, value in cells.items():
        base = str(column).split("::", 1)[0].strip()
        if value in (None, ""):
            continue
        if base in ("read_only", "readonly") and str(value).strip().lower() in FALSE_CELLS:
            continue
        if base in COLLECTING_COLUMNS:
            reason, alternative = COLLECTING_COLUMNS[base]
            return f"{reason} ({column})", alternative
        if base.startswith("bind::"):
            return (f"sets an ODK bind attribute ({column})", "drop the column")
    return None
