"""XLSForm -> ldpsurvey survey (`ldpsurvey import xlsform`, docs/xlsform.md).

pyxform, the ODK project's own parser, reads and checks the workbook (reading.py). The import
maps that form onto ldpsurvey's question types (questions.py, choices.py, cells.py,
privacy.py), skip logic (contract 3: conditions.py, with analyst/xlsform_import/expressions.py) and
translations (contract 4: languages.py), and refuses, by row and name with the reason and the
nearest supported alternative (refusals.py, errors.py), everything that cannot be collected
privately; walk.py goes through the form in its order. The result is checked by
`Survey.from_dict` (validation.py: its errors are mapped back to rows) and written as readable
TOML (assembly.py, analyst/survey_toml.py); settings.py holds the survey's id, version, title
and two-server settings, columns.py what is said of the survey sheet's columns, media.py the
form's attached files (`--media`: the choices of its select_one_from_file rows).

Every row problem is kept and said (ImportRefused, ImportResult.left_out), the rows that
need the designer's fix first; none is cut off at a count (errors.py). With
`skip_unsupported` every problem row is left out, those that need the designer's fix too
(`ImportResult.to_fix`: listed apart, never quietly). Rows wrong in a way ODK runs without
complaint (a condition or an exclusivity naming a choice the list lacks, an exclusivity whose
`and` binds before its `or`, a choice_filter pyxform drops) are imported as ODK runs them and
listed to check (`ImportResult.to_check`).

Display-only rows (notes, group labels) never stop the import: notes before the first question
become the survey's description (the designer's introduction), and what happened to every
other one is listed in `ImportResult.notes`. selection.py picks the rows of `--group` /
`--marked` (a sensitive module of a large form); counts.py counts the rows kept by type and
left out by kind; exclusivity.py reads a select_multiple's "ticked alone" constraint.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ldpsurvey.shared.survey import Survey

from .assembly import toml, with_introduction
from .columns import check_sheets_and_columns
from .counts import RowCounts, row_counts
from .errors import (
    CHECK,
    FIX,
    UNSUPPORTED,
    ImportRefused,
    RowProblem,
    XlsFormError,
    needs_fixing_first,
    refuse_rows,
    topics,
)
from .languages import Languages, languages
from .media import media
from .privacy import NO_EPSILON
from .reading import SUFFIXES, Form, RowIndex, read
from .selection import Selection
from .settings import SurveySettings, is_two_server, survey_settings, unread_settings
from .validation import validated
from .walk import Walk

__all__ = ["CHECK", "FIX", "NO_EPSILON", "SUFFIXES", "UNSUPPORTED",
           "ImportOptions", "ImportRefused", "ImportResult", "RowCounts", "RowProblem",
           "Selection", "XlsFormError", "import_xlsform", "topics"]


@dataclass(frozen=True)
class ImportOptions:
    """What the designer adds on the command line."""

    epsilon: float | None = None  # ε of rows without one (the central ε in two-server mode)
    skip_unsupported: bool = False
    survey_id: str | None = None  # instead of settings form_id
    version: int | None = None  # instead of settings version
    # --group, --marked: import only these rows (selection.py)
    selection: Selection = field(default_factory=Selection)
    # --integer-max: the max of every integer row bounded below only (`. >= 0`), chosen by
    # the researcher (a row's ldp_max wins); None: such rows are left out, as without a range
    integer_max: int | None = None
    # --media: the form's attached files (folders or files), the choices of its
    # select_one_from_file / select_multiple_from_file rows (media.py)
    media: tuple[Path, ...] = ()


@dataclass(frozen=True)
class ImportResult:
    """The imported survey, its table, its TOML, the rows left out and what else happened."""

    survey: Survey
    data: dict[str, Any]
    toml: str
    left_out: tuple[RowProblem, ...]  # every row left out, those that need fixing first
    notes: tuple[str, ...]
    counts: RowCounts  # rows kept by type, left out by kind (counts.py)
    # rows imported as ODK runs them though the form is wrong there (kind CHECK), in the
    # form's order: listed for the designer to check
    to_check: tuple[RowProblem, ...] = ()

    @property
    def to_fix(self) -> tuple[RowProblem, ...]:
        """The rows left out that need the designer's fix (wrong as written)."""
        return tuple(p for p in self.left_out if p.kind == FIX)


def import_xlsform(path: str | Path, options: ImportOptions | None = None) -> ImportResult:
    """Read an XLSForm and map it onto a survey; XlsFormError for a form that cannot be
    read, ImportRefused for rows that cannot be imported."""
    options = options or ImportOptions()
    filename = Path(path).name
    form = read(Path(path))
    notes = [f"pyxform: {' '.join(w.split())}" for w in form.warnings] + form.notes
    langs = languages(form.json, form.settings, filename, notes)
    notes += check_sheets_and_columns(form, filename)
    notes += unread_settings(form.settings)
    settings = survey_settings(form.json, form.settings, langs, options.survey_id,
                               options.version, filename, notes)  # form-level problems first
    children = form.json.get("children") or ()
    options.selection.check(form.survey_rows, filename)
    walk = Walk(RowIndex(form.survey_rows), langs, is_two_server(form.settings),
                options.epsilon, notes, options.skip_unsupported, selection=options.selection,
                integer_max=options.integer_max, media=media(options.media))
    walk.walk(children, relevant=None, inside=None)
    try:
        return _result(walk, form, settings, langs, notes, filename, options)
    except (ImportRefused, XlsFormError) as exc:  # said with the rows to check found so far
        exc.checks = _to_check(walk, None)
        raise


def _result(walk: Walk, form: Form, settings: SurveySettings, langs: Languages,
            notes: list[str], filename: str, options: ImportOptions) -> ImportResult:
    """The import of the rows the walk mapped; ImportRefused or XlsFormError when it cannot
    be imported."""
    if options.selection.active and not (walk.questions or walk.problems or walk.intro
                                         or walk.hidden_notes):
        raise XlsFormError(f"{filename}: the selection (--group, --marked) keeps no row")
    refuse_rows(walk.problems, options.skip_unsupported)
    if not walk.questions:
        if walk.problems:
            raise ImportRefused(walk.problems, nothing_left=True)
        raise XlsFormError(f"{filename}: no question of the form can be imported")
    try:
        survey, data, refused, imported = validated(
            walk.questions, with_introduction(settings, walk.intro, langs), langs, filename,
            options.skip_unsupported, notes)
    except ImportRefused as exc:  # said with the rows the walk refused, every row at once
        raise ImportRefused([*exc.problems, *walk.problems], exc.nothing_left) from None
    left_out = needs_fixing_first([*walk.problems, *refused])
    ids = {q.id for q in survey.questions}
    to_check = _to_check(walk, ids)
    counts = row_counts(len(form.survey_rows), [q.xls_type for q in walk.questions
                                                 if q.name in ids],
                        left_out, walk.hidden_notes, len(walk.intro), len(walk.outside),
                        sum(name in ids for name in walk.exclusive),
                        sum(name in ids for name in walk.exclusive_pending),
                        sum(name in ids for name in walk.piped),
                        len({p.row for p in to_check}),
                        sum(name in ids for name in walk.carried))
    return ImportResult(survey=survey, data=data,
                        toml=toml(data, filename, imported, left_out, to_check),
                        left_out=left_out, notes=tuple(notes), counts=counts,
                        to_check=to_check)


def _to_check(walk: Walk, ids: set[str] | None) -> tuple[RowProblem, ...]:
    """The rows imported as ODK runs them (kind CHECK), in the form's order: the walk's own
    (groups) and those of its questions (of the survey's, `ids`; None: every one mapped)."""
    return tuple(sorted(
        [*walk.checks, *(RowProblem(q.row, q.name, q.xls_type, reason, alternative, CHECK,
                                    topic)
                         for q in walk.questions if ids is None or q.name in ids
                         for reason, alternative, topic in q.checks)],
        key=lambda p: (p.row is None, p.row or 0)))
