"""The survey sheet's columns: ldpsurvey's own (`ldp_*`, docs/xlsform.md), the ones the
mapping reads, and what is said of the others (display-only, or not read at all)."""

from __future__ import annotations

from .errors import XlsFormError
from .reading import Form
from .refusals import COLLECTING_COLUMNS

# ldpsurvey's columns on the survey sheet (docs/xlsform.md).
LDP_COLUMNS = ("ldp_epsilon", "ldp_mechanism", "ldp_disclosed", "ldp_local_epsilon",
               "ldp_central_epsilon", "ldp_type", "ldp_min", "ldp_max")
# Survey-sheet columns that only change what is shown: not imported, said once.
DISPLAY_COLUMNS = ("constraint_message", "required_message", "guidance_hint", "image",
                   "big-image", "audio", "video", "media", "autoplay", "default",
                   "instance", "body")
MAPPED_COLUMNS = ("type", "name", "label", "hint", "required", "relevant", "constraint",
                  "appearance", "parameters", "choice_filter", *LDP_COLUMNS)


def check_sheets_and_columns(form: Form, filename: str) -> list[str]:
    """XlsFormError for an entities sheet or a misspelt `ldp_*` column; else the notes on the
    columns that are not imported."""
    if "entities" in form.sheets:
        raise XlsFormError(f"{filename}: the entities sheet (ODK entities, data kept "
                           "between forms) is not supported: remove it")
    unknown = [c for c in form.survey_columns if c.startswith("ldp_") and c not in LDP_COLUMNS]
    if unknown:
        raise XlsFormError(f"{filename}: the survey sheet's column {unknown[0]!r} is "
                           f"not an ldpsurvey column (they are: {', '.join(LDP_COLUMNS)})")
    return _column_notes(form.survey_columns)


def _column_notes(columns: list[str]) -> list[str]:
    shown, other = [], []
    for column in columns:
        base = column.split("::", 1)[0].strip()
        if base in MAPPED_COLUMNS or base in COLLECTING_COLUMNS:
            continue
        if base in DISPLAY_COLUMNS or base.startswith(("media", "body::", "instance::")):
            shown.append(column)
        elif not base.startswith("bind::"):
            other.append(column)
    notes = []
    if shown:
        notes.append(f"columns shown by ODK but not imported (display only): {', '.join(shown)}")
    if other:
        notes.append(f"columns ldpsurvey does not read: {', '.join(other)}")
    return notes
