"""XLSForm -> ldpsurvey survey (`ldpsurvey import xlsform`, docs/xlsform.md).

pyxform, the ODK project's own parser, reads and checks the workbook (.xlsx, .xls, .csv, .md):
its workbook layer gives the sheets' rows (for row numbers and the extra `ldp_*` columns), and
its XLSForm-to-JSON layer the form as ODK understands it (types resolved, choices attached,
translations grouped by language, groups nested). This module maps that form onto ldpsurvey's
question types, skip logic (contract 3) and translations (contract 4), and refuses, by row and
name with the reason and the nearest supported alternative, everything that cannot be
collected privately. The result is checked by `Survey.from_dict` (its errors are mapped back to
rows) and written as readable TOML (analyst/survey_toml.py).

Two kinds of row problems: "unsupported" (a type or feature ldpsurvey has no private
counterpart for: free text, dates, repeats, ...), which `skip_unsupported` leaves out and lists,
and "invalid" (a mapped question whose settings are wrong: no ε, an ε its mechanism cannot
take, an optional follow-up of a randomized answer, ...), which always stops the import.
Display-only rows (notes, group labels) never stop it: notes before the first question become
the survey's description (the designer's introduction), and what happened to every other one is
listed in `ImportResult.notes`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..shared.errors import LdpSurveyError, SurveyError
from ..shared.survey import MAX_LABEL, MAX_VERSION, QUESTION_ID, SLUG, Survey
from ..shared.translations import DEFAULT_LANGUAGE, canonical_tag
from . import xlsform_expressions as xp

SUFFIXES = (".xlsx", ".xlsm", ".xls", ".csv", ".md")
UNSUPPORTED, INVALID = "unsupported", "invalid"
MAX_PROBLEMS = 50  # row problems listed before the rest are summarized
MAX_QUOTED = 80  # characters of a cell quoted in a message (a long one is cut, said with ...)

# ldpsurvey's columns on the survey sheet (docs/xlsform.md).
LDP_COLUMNS = ("ldp_epsilon", "ldp_mechanism", "ldp_disclosed", "ldp_local_epsilon",
               "ldp_central_epsilon", "ldp_type")
LDP_TYPES = ("binary", "categorical", "ordinal")
# Settings ldpsurvey reads: XLSForm's own, then ldpsurvey's (the [two_server] table's keys).
TWO_SERVER_SETTINGS = ("helper_url", "helper_hpke_key", "leader_hpke_key", "leader_url",
                       "min_batch_size", "delta")
READ_SETTINGS = ("form_title", "form_id", "version", "default_language", "collection",
                 *TWO_SERVER_SETTINGS)
# Survey-sheet columns that decide what is collected: a row that fills one is refused.
COLLECTING_COLUMNS = {
    "calculation": ("computes a value from the answers", "drop the calculation; compute what "
                    "you need from the estimates"),
    "calculate": ("computes a value from the answers", "drop the calculation; compute what "
                  "you need from the estimates"),
    "trigger": ("is recomputed when another answer changes", "drop the trigger"),
    "choice_filter": ("filters its options by earlier answers (the options shown would reveal "
                      "them)", "list every option and drop choice_filter; use relevant for "
                      "follow-up questions"),
    "repeat_count": ("repeats questions", "ask a fixed set of questions"),
    "read_only": ("is read-only (filled by the form, not the respondent)", "drop the row"),
    "readonly": ("is read-only (filled by the form, not the respondent)", "drop the row"),
    "save_to": ("saves to an ODK entity", "drop save_to"),
}
# Survey-sheet columns that only change what is shown: not imported, said once.
DISPLAY_COLUMNS = ("constraint_message", "required_message", "guidance_hint", "image",
                   "big-image", "audio", "video", "media", "autoplay", "default",
                   "instance", "body")
MAPPED_COLUMNS = ("type", "name", "label", "hint", "required", "relevant", "constraint",
                  "appearance", "parameters", *LDP_COLUMNS)
# XLSForm types by what ldpsurvey says of them: (reason, nearest supported alternative).
_METADATA = ("device metadata (when, where or on which device a response was made) that "
             "would identify the respondent; ldpsurvey never sends it", "delete the row (the "
             "server keeps no time, place or device of a response)")
REFUSED_TYPES: dict[str, tuple[str, str]] = {
    "text": ("free text cannot be randomized", "offer a select_one list"),
    "barcode": ("a scanned code is free text, which cannot be randomized",
                "offer a select_one list"),
    "decimal": ("a decimal number has no private mechanism here",
                "an integer with a range (in whole units, e.g. . >= 0 and . <= 300), or a "
                "select_one of bands"),
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
_GEO = ("geopoint", "geotrace", "geoshape")
_DATES = ("date", "time", "dateTime")
_YES = ("yes", "y", "true", "1", "si", "sí", "oui", "ja")
_NO = ("no", "n", "false", "0", "non", "nein")
_TRUE_CELLS = ("yes", "true", "true()", "1")
_FALSE_CELLS = ("no", "false", "false()", "0")
_LANGUAGE = re.compile(r"^(?P<name>.*?)\s*\((?P<tag>[^()]*)\)\s*$")
_PIPED = re.compile(r"\$\{[^}]*\}")


class XlsFormError(LdpSurveyError):
    """The form as a whole cannot be imported: unreadable, refused by pyxform, or settings
    that do not map (the message says which and what to do)."""

    code = "invalid_xlsform"


@dataclass(frozen=True)
class RowProblem:
    """One survey-sheet row that cannot be imported as it is."""

    row: int | None  # survey sheet row, the header being row 1 (None: a generated row)
    name: str
    type: str  # the row's XLSForm type as written
    reason: str
    alternative: str
    kind: str = UNSUPPORTED  # or INVALID

    def __str__(self) -> str:
        where = f"row {self.row}" if self.row is not None else "a row pyxform added"
        name = f"{self.name}, " if self.name else ""
        return f"{where} ({name}{self.type}): {self.reason}; {self.alternative}"


class ImportRefused(LdpSurveyError):
    """Rows of the form that cannot be imported (`problems`, each with its row)."""

    code = "xlsform_refused"

    def __init__(self, problems: Sequence[RowProblem], more: int = 0) -> None:
        unsupported = sum(p.kind == UNSUPPORTED for p in problems)
        invalid = len(problems) - unsupported
        what = []
        if unsupported:
            what.append(f"{unsupported} row(s) cannot be collected privately")
        if invalid:
            what.append(f"{invalid} row(s) need fixing")
        fix = (" (--skip-unsupported imports the rest, leaving out the rows that cannot be "
               "collected privately)" if unsupported and not invalid else "")
        super().__init__(" and ".join(what) + fix + ": " + "; ".join(map(str, problems))
                         + (f"; and {more} more" if more else ""),
                         [p.__dict__ for p in problems])
        self.problems = tuple(problems)
        self.more = more


@dataclass(frozen=True)
class ImportOptions:
    """What the designer adds on the command line."""

    epsilon: float | None = None  # ε of rows without one (the central ε in two-server mode)
    skip_unsupported: bool = False
    survey_id: str | None = None  # instead of settings form_id
    version: int | None = None  # instead of settings version


@dataclass(frozen=True)
class ImportResult:
    """The imported survey, its table, its TOML, the rows left out and what else happened."""

    survey: Survey
    data: dict[str, Any]
    toml: str
    left_out: tuple[RowProblem, ...]
    notes: tuple[str, ...]


def import_xlsform(path: str | Path, options: ImportOptions | None = None) -> ImportResult:
    """Read an XLSForm and map it onto a survey; XlsFormError for a form that cannot be
    read, ImportRefused for rows that cannot be imported."""
    form = _read(Path(path))
    return _Importer(form, options or ImportOptions(), Path(path).name).run()


# --- reading with pyxform ----------------------------------------------------------------------


@dataclass
class _Form:
    json: dict[str, Any]
    survey_rows: list[dict[str, Any]]
    survey_columns: list[str]
    choice_columns: list[str]
    settings: dict[str, Any]
    sheets: list[str]
    warnings: list[str]


def _read(path: Path) -> _Form:
    if path.suffix.lower() not in SUFFIXES:
        raise XlsFormError(f"{path.name}: an XLSForm is a {', '.join(SUFFIXES)} file")
    if not path.is_file():
        raise XlsFormError(f"{path}: no such file")
    from pyxform.xls2json import workbook_to_json
    from pyxform.xls2json_backends import get_xlsform

    warnings: list[str] = []
    try:  # pyxform reads hostile files too: whatever it raises is a form it cannot read
        book = get_xlsform(str(path))
        form = workbook_to_json(workbook_dict=book, form_name=None,
                                fallback_form_name=book.fallback_form_name,
                                default_language=None, warnings=warnings)
    except Exception as exc:
        message = " ".join(str(exc).split()) or type(exc).__name__
        raise XlsFormError(f"{path.name}: pyxform cannot read this XLSForm: {message}") from None

    def columns(header: Any) -> list[str]:
        return [str(k) for k in header[0]] if header else []

    return _Form(json=form, survey_rows=list(book.survey or []),
                 survey_columns=columns(book.survey_header),
                 choice_columns=columns(book.choices_header),
                 settings=dict((book.settings or [{}])[0]) if book.settings else {},
                 sheets=[str(s).lower() for s in book.sheet_names or []], warnings=warnings)


# --- the mapping -------------------------------------------------------------------------------


@dataclass
class _Question:
    """A mapped question and what the rest of the import needs to know of it."""

    data: dict[str, Any]
    row: int | None
    name: str
    xls_type: str
    target: xp.Target
    reads: tuple[str, ...]  # ids its relevant reads
    texts: dict[str, dict[str, Any]] = field(default_factory=dict)  # tag -> translation
    comments: list[str] = field(default_factory=list)


class _Importer:
    def __init__(self, form: _Form, options: ImportOptions, filename: str) -> None:
        self.form = form
        self.options = options
        self.filename = filename
        self.problems: list[RowProblem] = []
        self.notes: list[str] = [f"pyxform: {' '.join(w.split())}" for w in form.warnings]
        self.questions: list[_Question] = []
        self.by_name: dict[str, _Question] = {}
        self.left_names: dict[str, RowProblem] = {}  # rows not imported, by name
        self.intro: list[tuple[int | None, Any]] = []  # notes before the first question
        self.rows = _RowIndex(form.survey_rows)
        self.two_server = str(form.settings.get("collection", "ldp")).strip() == "two-server"
        self.base_name, self.tags = self._languages()
        self.seen_question = False

    # --- languages ---------------------------------------------------------------------------

    def _languages(self) -> tuple[str, dict[str, str]]:
        """(pyxform's name of the base language, {pyxform language name: BCP 47 tag})."""
        names: list[str] = []

        def collect(value: Any) -> None:
            if isinstance(value, Mapping):
                names.extend(k for k in value if k not in names)

        def walk(elements: Sequence[Mapping[str, Any]]) -> None:
            for el in elements:
                collect(el.get("label"))
                collect(el.get("hint"))
                for choice in el.get("choices") or ():
                    collect(choice.get("label"))
                walk(el.get("children") or ())

        walk(self.form.json.get("children") or ())
        title = self.form.json.get("title")  # untranslated form_title is the base title
        if isinstance(title, Mapping):
            collect({k: v for k, v in title.items() if k != "default"})
        setting = self.form.settings.get("default_language")
        tags: dict[str, str] = {}
        for name in names:
            if name == "default":
                continue
            tag = _language_tag(name)
            if tag is None:
                raise XlsFormError(f"{self.filename}: the language {name!r} has no BCP 47 code "
                                   f"in parentheses: write the columns as "
                                   f"'label::{name} (xx)', e.g. 'label::Español (es)'")
            tags[name] = tag
        setting = None if setting is None or not str(setting).strip() else str(setting).strip()
        if setting is not None and setting in tags:
            base = setting
            if "default" in names:
                raise XlsFormError(f"{self.filename}: untranslated label or hint columns next "
                                   f"to the language columns of {setting!r}: tag them, e.g. "
                                   f"'label::{setting}'")
        elif setting is not None:
            if tags and "default" not in names:
                raise XlsFormError(f"{self.filename}: settings default_language {_quoted(setting)} "
                                   f"is none of the form's languages ({', '.join(tags)})")
            tag = _language_tag(setting)
            if tag is None:
                raise XlsFormError(f"{self.filename}: settings default_language {_quoted(setting)} "
                                   "has no BCP 47 code in parentheses, e.g. 'English (en)'")
            base = "default"  # pyxform's name for the untranslated columns' language
            tags["default"] = tag
        elif "default" in names or not tags:
            base = "default"
            if tags:
                self.notes.append("the untranslated label/hint columns are the base text, "
                                  "taken as English (en): set settings default_language, e.g. "
                                  "'English (en)', to say otherwise")
        else:
            base = next(iter(tags))
            self.notes.append(f"settings has no default_language: {base}, the first language "
                              "of the form, is the base text")
        if base == "default":
            tags["default"] = tags.get("default", DEFAULT_LANGUAGE)
        seen: dict[str, str] = {}
        for name, tag in tags.items():
            if tag in seen:
                raise XlsFormError(f"{self.filename}: the languages {seen[tag]!r} and {name!r} "
                                   f"both have the code {tag!r}")
            seen[tag] = name
        return base, tags

    @property
    def base_tag(self) -> str:
        return self.tags[self.base_name]

    def _text(self, value: Any) -> tuple[str | None, dict[str, str]]:
        """(base-language text, {other tag: text}) of a label or hint cell group."""
        if value is None:
            return None, {}
        if isinstance(value, str):
            return (value if self.base_name == "default" else None), {}
        base = value.get(self.base_name)
        others = {self.tags[n]: str(t) for n, t in value.items()
                  if n != self.base_name and n in self.tags and str(t).strip()}
        return (str(base) if base is not None and str(base).strip() else None), others

    # --- the walk ------------------------------------------------------------------------------

    def run(self) -> ImportResult:
        self._check_sheets_and_columns()
        self.settings = self._settings()  # form-level problems first
        self._walk(self.form.json.get("children") or (), relevant=None, inside=None)
        problems = self.problems
        if len(problems) > MAX_PROBLEMS:
            raise ImportRefused(problems[:MAX_PROBLEMS], len(problems) - MAX_PROBLEMS)
        invalid = [p for p in problems if p.kind == INVALID]
        if invalid or (problems and not self.options.skip_unsupported):
            raise ImportRefused(problems)
        left_out = list(problems)
        survey, data, more = self._validated()
        left_out += more
        toml = self._toml(data, left_out)
        return ImportResult(survey=survey, data=data, toml=toml, left_out=tuple(left_out),
                            notes=tuple(self.notes))

    def _check_sheets_and_columns(self) -> None:
        if "entities" in self.form.sheets:
            raise XlsFormError(f"{self.filename}: the entities sheet (ODK entities, data kept "
                               "between forms) is not supported: remove it")
        unknown = [c for c in self.form.survey_columns
                   if c.startswith("ldp_") and c not in LDP_COLUMNS]
        if unknown:
            raise XlsFormError(f"{self.filename}: the survey sheet's column {unknown[0]!r} is "
                               f"not an ldpsurvey column (they are: {', '.join(LDP_COLUMNS)})")
        shown, other = [], []
        for column in self.form.survey_columns:
            base = column.split("::", 1)[0].strip()
            if base in MAPPED_COLUMNS or base in COLLECTING_COLUMNS:
                continue
            if base in DISPLAY_COLUMNS or base.startswith(("media", "body::", "instance::")):
                shown.append(column)
            elif not base.startswith("bind::"):
                other.append(column)
        if shown:
            self.notes.append(f"columns shown by ODK but not imported (display only): "
                              f"{', '.join(shown)}")
        if other:
            self.notes.append(f"columns ldpsurvey does not read: {', '.join(other)}")
        unread = [k for k in self.form.settings
                  if k.split("::", 1)[0] not in READ_SETTINGS]
        if unread:
            self.notes.append(f"settings ldpsurvey does not use: {', '.join(unread)}")

    def _walk(self, elements: Sequence[Mapping[str, Any]], relevant: _Condition | None,
              inside: RowProblem | None) -> None:
        for el in elements:
            name = str(el.get("name", ""))
            raw = self.rows.take(name)
            if raw is None:  # added by pyxform (meta/instanceID, or_other's text): not a row
                continue
            row, raw_cells = raw
            xls_type = str(raw_cells.get("type", el.get("type", "")))
            bind, control = el.get("bind") or {}, el.get("control") or {}
            cells = {**raw_cells, **{key: value for key, value in (
                ("relevant", bind.get("relevant")), ("constraint", bind.get("constraint")),
                ("required", bind.get("required")), ("appearance", control.get("appearance")))
                if value is not None}}
            if inside is not None:
                self._refuse(row, name, xls_type, f"inside the refused {inside.type} "
                             f"{inside.name!r} (row {inside.row})", "it is left out with it")
                self._walk(el.get("children") or (), None, inside)
                continue
            kind = el.get("type")
            if kind == "group":
                self._group(el, row, name, xls_type, cells, relevant)
            elif kind in ("repeat", "loop"):
                reason, alternative = REFUSED_TYPES["repeat"]
                problem = self._refuse(row, name, xls_type, reason, alternative)
                self._walk(el.get("children") or (), None, problem)
            elif kind == "note":
                self._note(el, row, name, cells, relevant)
            else:
                self._question(el, row, name, xls_type, cells, relevant)

    def _group(self, el: Mapping[str, Any], row: int | None, name: str, xls_type: str,
               cells: Mapping[str, Any], outer: _Condition | None) -> None:
        bad = _collecting_cell(cells)
        if bad is not None:
            problem = self._refuse(row, name, xls_type, f"the group {bad[0]}", bad[1])
            self._walk(el.get("children") or (), None, problem)
            return
        condition = outer
        text = cells.get("relevant")
        if text:
            try:
                own = self._relevant(str(text))
            except xp.ExpressionError as exc:
                problem = self._refuse(row, name, xls_type,
                                       f"relevant {_quoted(text)}: {exc.message}",
                                       "write it with " + xp.SUPPORTED)
                self._walk(el.get("children") or (), None, problem)
                return
            condition = _Condition.both(outer, own)
        label, _ = self._text(el.get("label"))
        said = f"its label {label!r} is not shown (ldpsurvey has no sections); " if label else ""
        added = "its relevant is added to each question inside; " if text else ""
        self.notes.append(f"row {row} ({name}, {xls_type}): a display group: {said}{added}"
                          "its questions are imported")
        self._walk(el.get("children") or (), condition, None)

    def _note(self, el: Mapping[str, Any], row: int | None, name: str,
              cells: Mapping[str, Any], relevant: _Condition | None) -> None:
        base, _ = self._text(el.get("label"))
        shown = f"{base!r}" if base else "(no text)"
        if not self.seen_question and relevant is None and not cells.get("relevant") and base:
            self.intro.append((row, el.get("label")))
            self.notes.append(f"row {row} ({name}, note): before the first question, it "
                              "becomes the survey's introduction (description)")
            return
        why = ("shown only under a condition" if relevant is not None or cells.get("relevant")
               else "between questions")
        self.notes.append(f"row {row} ({name}, note): a note {why} is not shown (ldpsurvey has "
                          f"no display-only text between questions; put it in a question's "
                          f"hint): {shown}")
        self.left_names[name] = RowProblem(row, name, "note", "a note", "not imported")

    # --- questions -----------------------------------------------------------------------------

    def _question(self, el: Mapping[str, Any], row: int | None, name: str, xls_type: str,
                  cells: Mapping[str, Any], outer: _Condition | None) -> None:
        self.seen_question = True
        category = _category(el, xls_type)
        if category in REFUSED_TYPES:
            reason, alternative = REFUSED_TYPES[category]
            self._refuse(row, name, xls_type, reason, alternative)
            return
        if category not in ("select_one", "select_multiple", "integer", "range"):
            self._refuse(row, name, xls_type, f"the XLSForm type {el.get('type')!r} has no "
                         "private counterpart in ldpsurvey", "use select_one, select_multiple "
                         "or integer with a range")
            return
        try:
            question = self._mapped(el, row, name, xls_type, cells, category, outer)
        except _Refusal as refusal:
            self._refuse(row, name, xls_type, refusal.reason, refusal.alternative, refusal.kind)
            return
        self.questions.append(question)
        self.by_name[name] = question

    def _mapped(self, el: Mapping[str, Any], row: int | None, name: str, xls_type: str,
                cells: Mapping[str, Any], category: str, outer: _Condition | None
                ) -> _Question:
        if not QUESTION_ID.fullmatch(name):
            raise _Refusal(INVALID, f"the name {name!r} is not an ldpsurvey question id",
                           "rename it: 1-63 letters, digits, '_', '.' or '-'")
        bad = _collecting_cell(cells)
        if bad is not None:
            raise _Refusal(UNSUPPORTED, f"it {bad[0]}", bad[1])
        text, text_tr = self._text(el.get("label"))
        if text is None:
            column = "label" if self.base_name == "default" else f"label::{self.base_name}"
            raise _Refusal(INVALID, f"it has no label in the base language ({self.base_tag})",
                           f"fill its {column} cell")
        hint, hint_tr = self._text(el.get("hint"))
        for shown in (text, hint, *text_tr.values(), *hint_tr.values()):
            if shown and _PIPED.search(shown):
                raise _Refusal(UNSUPPORTED, "its text shows an earlier answer (${...} in a "
                               "label or hint)", "write the text without ${...}")
        required = _required(cells.get("required"))
        data: dict[str, Any] = {"id": name}
        comments = [f"row {row}: {xls_type} {name!r}" if row is not None else name]
        options: dict[str, str] = {}
        if category in ("select_one", "select_multiple"):
            options, option_tr, extra = self._options(el, cells, xls_type)
            comments += extra
        target_type = self._type(category, cells, options)
        data["type"] = target_type
        data["text"] = text
        if hint is not None:
            data["hint"] = hint
        yes = no = ""
        if target_type == "binary":
            yes, no = _yes_no(options)
            comments = [c for c in comments if not c.startswith("XLSForm choice names")]
            comments.append(f"the yes/no list {el.get('list_name')!r}: {yes!r} is true, "
                            f"{no!r} is false")
        elif target_type in ("categorical", "ordinal", "multiselect"):
            data["options"] = list(options.values())
        if category in ("integer", "range"):
            data["min"], data["max"] = _integer_range(el, cells, category)
        if target_type == "multiselect":
            data.update(_multiselect_bounds(cells, required, len(options)))
        elif cells.get("constraint") and category not in ("integer", "range"):
            raise _Refusal(UNSUPPORTED, f"its constraint {_quoted(cells['constraint'])} is not a "
                           "range", "drop the constraint (every option is an answer), or "
                           "drop the options it excludes")
        if target_type != "multiselect" and not required:
            data["optional"] = True
        self._privacy(cells, data)
        condition = outer
        if cells.get("relevant"):
            try:
                condition = _Condition.both(outer, self._relevant(str(cells["relevant"])))
            except xp.ExpressionError as exc:
                raise _Refusal(UNSUPPORTED, f"its relevant {_quoted(cells['relevant'])}: "
                               f"{exc.message}", f"write it with {xp.SUPPORTED} on earlier "
                               "questions") from None
        if condition is not None and condition.text is not None:
            data["relevant"] = condition.text
        texts = self._translations(text_tr, hint_tr, option_tr if options else {}, options,
                                   target_type)
        target = xp.Target(id=name, type=target_type,
                           options=options if target_type != "binary" else {},
                           yes=yes, no=no, relevant=data.get("relevant"),
                           optional=bool(data.get("optional")))
        return _Question(data=data, row=row, name=name, xls_type=xls_type, target=target,
                         reads=condition.reads if condition is not None else (), texts=texts,
                         comments=comments)

    def _options(self, el: Mapping[str, Any], cells: Mapping[str, Any], xls_type: str
                 ) -> tuple[dict[str, str], dict[str, dict[str, str]], list[str]]:
        """({choice name: option label}, {tag: {option label: text}}, comments)."""
        if "or_other" in xls_type.split():
            raise _Refusal(UNSUPPORTED, "'or_other' adds a free-text 'specify' answer",
                           "drop or_other (an 'other' choice without text is fine)")
        choices = el.get("choices")
        if not choices:
            reason, alternative = REFUSED_TYPES["external"]
            raise _Refusal(UNSUPPORTED, reason, alternative)
        options: dict[str, str] = {}
        translated: dict[str, dict[str, str]] = {}
        unlabelled: list[str] = []
        for choice in choices:
            cname = str(choice.get("name"))
            label, others = self._text(choice.get("label"))
            if label is None:
                label = cname
                unlabelled.append(cname)
            if _PIPED.search(label):
                raise _Refusal(UNSUPPORTED, f"the choice {cname!r} shows an earlier answer "
                               "(${...})", "write the text without ${...}")
            if len(label) > MAX_LABEL:
                raise _Refusal(INVALID, f"the choice {cname!r}'s label is longer than "
                               f"{MAX_LABEL} characters", "shorten it")
            if label in options.values():
                raise _Refusal(INVALID, f"two choices of list {el.get('list_name')!r} read "
                               f"{label!r} (ldpsurvey's options are their text)",
                               "give each choice its own label")
            options[cname] = label
            for tag, shown in others.items():
                translated.setdefault(tag, {})[label] = shown
        comments = []
        if any(name != label for name, label in options.items()):
            comments.append("XLSForm choice names: " + ", ".join(
                f"{name} = {label!r}" for name, label in options.items()))
        if unlabelled:
            self.notes.append(f"list {el.get('list_name')!r}: choices without a label in "
                              f"{self.base_name} are shown by their name: "
                              f"{', '.join(unlabelled)}")
        if (el.get("parameters") or {}).get("randomize"):
            self.notes.append(f"{el.get('name')}: parameters randomize is not kept (options are "
                              "shown in the form's order)")
        return options, translated, comments

    def _type(self, category: str, cells: Mapping[str, Any], options: Mapping[str, str]
              ) -> str:
        if category == "select_multiple":
            if cells.get("ldp_type"):
                raise _Refusal(INVALID, "ldp_type applies to select_one rows",
                               "clear ldp_type on this select_multiple row")
            return "multiselect"
        if category in ("integer", "range"):
            if cells.get("ldp_type"):
                raise _Refusal(INVALID, "ldp_type applies to select_one rows",
                               "clear ldp_type on this integer row")
            return "integer"
        chosen = str(cells.get("ldp_type") or "").strip().lower()
        if chosen:
            if chosen not in LDP_TYPES:
                raise _Refusal(INVALID, f"ldp_type {_quoted(chosen)} is not one of "
                               f"{', '.join(LDP_TYPES)}", "write binary, categorical or ordinal")
            if chosen == "binary" and _yes_no(options, strict=False) is None:
                raise _Refusal(INVALID, "ldp_type binary needs a yes/no list (two choices "
                               "named yes and no)", "use categorical, or a yes/no list")
            return chosen
        if "likert" in str(cells.get("appearance", "")).split():
            return "ordinal"
        return "binary" if _yes_no(options, strict=False) is not None else "categorical"

    def _privacy(self, cells: Mapping[str, Any], data: dict[str, Any]) -> None:
        """ε, mechanism and disclosure from the ldp_* columns (or --epsilon)."""
        disclosed = _flag(cells.get("ldp_disclosed"), "ldp_disclosed")
        eps = _positive(cells.get("ldp_epsilon"), "ldp_epsilon")
        local = _positive(cells.get("ldp_local_epsilon"), "ldp_local_epsilon")
        central = _positive(cells.get("ldp_central_epsilon"), "ldp_central_epsilon")
        mechanism = str(cells.get("ldp_mechanism") or "").strip() or None
        if disclosed:
            for key, value in (("ldp_epsilon", eps), ("ldp_mechanism", mechanism),
                               ("ldp_local_epsilon", local), ("ldp_central_epsilon", central)):
                if value is not None:
                    raise _Refusal(INVALID, f"a disclosed row has no {key}: its answer is sent "
                                   "as given", f"clear {key} or ldp_disclosed")
            data["disclosed"] = True
            return
        if self.two_server:
            if eps is not None:
                raise _Refusal(INVALID, "a two-server form states ε as ldp_central_epsilon "
                               "(each server's noise) and ldp_local_epsilon (ε0 on the "
                               "device), not ldp_epsilon", "move the value to "
                               "ldp_central_epsilon")
            central = central if central is not None else self.options.epsilon
            if central is None:
                raise _Refusal(INVALID, "no ε: a two-server row needs ldp_central_epsilon",
                               "fill ldp_central_epsilon, or pass --epsilon for every row "
                               "without one")
            data["central_epsilon"] = central
            if local is not None:
                data["local_epsilon"] = local
            if mechanism is not None:
                data["mechanism"] = mechanism
            return
        for key, value in (("ldp_local_epsilon", local), ("ldp_central_epsilon", central)):
            if value is not None:
                raise _Refusal(INVALID, f"{key} is for two-server forms", "clear it, or set "
                               "collection = two-server in settings")
        eps = eps if eps is not None else self.options.epsilon
        if eps is None:
            raise _Refusal(INVALID, "no ε: the row has no ldp_epsilon", "fill ldp_epsilon, or "
                           "pass --epsilon for every row without one")
        data["epsilon"] = eps
        data["mechanism"] = mechanism or "auto"

    def _translations(self, text: Mapping[str, str], hint: Mapping[str, str],
                      options: Mapping[str, Mapping[str, str]], labels: Mapping[str, str],
                      qtype: str) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for tag, shown in text.items():
            out.setdefault(tag, {})["text"] = shown
        for tag, shown in hint.items():
            out.setdefault(tag, {})["hint"] = shown
        if qtype in ("categorical", "ordinal", "multiselect"):
            for tag, shown in options.items():
                out.setdefault(tag, {})["options"] = {label: shown[label]
                                                      for label in labels.values()
                                                      if label in shown}
        return out

    # --- relevant ------------------------------------------------------------------------------

    def _relevant(self, text: str) -> _Condition:
        tree = xp.parse(text)
        reads: list[str] = []

        def lookup(name: str) -> xp.Target:
            question = self.by_name.get(name)
            if question is None:
                raise xp.ExpressionError(self._unreadable(name))
            reads.append(question.data["id"])
            return question.target

        condition = xp.translate_relevant(tree, lookup)
        return _Condition(condition, tuple(dict.fromkeys(reads)))

    def _unreadable(self, name: str) -> str:
        if name in self.left_names:
            left = self.left_names[name]
            return f"it reads ${{{name}}} (row {left.row}, {left.type}), which is not imported"
        if self.rows.later(name):
            return (f"it reads ${{{name}}}, which comes later in the form: ldpsurvey conditions "
                    "read earlier questions only")
        return f"${{{name}}} is not a question of this form"

    def _refuse(self, row: int | None, name: str, xls_type: str, reason: str,
                alternative: str, kind: str = UNSUPPORTED) -> RowProblem:
        problem = RowProblem(row, name, xls_type, reason, alternative, kind)
        self.problems.append(problem)
        if name:
            self.left_names[name] = problem
        return problem

    # --- the survey ----------------------------------------------------------------------------

    def _settings(self) -> dict[str, Any]:
        form, settings = self.form.json, self.form.settings
        survey_id = self.options.survey_id or _survey_id(str(form.get("id_string") or ""),
                                                          self.notes, self.filename)
        if not SLUG.fullmatch(survey_id):
            raise XlsFormError(f"--id {survey_id!r}: must be a slug: 1-64 lowercase letters, "
                               "digits, '-' or '_'")
        version = self.options.version
        if version is None:
            version = _version(settings.get("version"), self.notes, self.filename)
        title_value = form.get("title")
        if isinstance(title_value, Mapping):
            title, title_tr = self._text({self.base_name: title_value.get("default"),
                                          **title_value})
        else:
            title, title_tr = str(title_value or ""), {}
        if not settings.get("form_title") or not title:
            title = title or survey_id
            if not settings.get("form_title"):
                self.notes.append(f"settings has no form_title: the title is {title!r}")
        data: dict[str, Any] = {"id": survey_id, "title": title, "version": version}
        if self.tags and (self.base_tag != DEFAULT_LANGUAGE or len(self.tags) > 1):
            data["language"] = self.base_tag
        collection = str(settings.get("collection", "ldp")).strip()
        if collection not in ("ldp", "two-server"):
            raise XlsFormError(f"{self.filename}: settings collection {_quoted(collection)} is "
                               "neither 'ldp' nor 'two-server'")
        if collection == "two-server":
            data["collection"] = collection
            data["two_server"] = _two_server(settings, self.filename)
        self._survey_texts = {tag: {"title": text} for tag, text in title_tr.items()}
        return data

    def _introduction(self) -> tuple[str, dict[str, str]]:
        """The notes before the first question, joined: the base text and its translations
        (a note without a translation keeps its base text there)."""
        parts = [self._text(label) for _, label in self.intro]
        base = "\n\n".join(text for text, _ in parts if text)
        tags = {tag for _, others in parts for tag in others}
        translated = {tag: "\n\n".join(others.get(tag, text or "") for text, others in parts
                                       if text or tag in others) for tag in sorted(tags)}
        return base, translated

    def _assemble(self, questions: Sequence[_Question], settings: Mapping[str, Any]
                  ) -> dict[str, Any]:
        data = dict(settings)
        data["questions"] = [q.data for q in questions]
        translations: dict[str, dict[str, Any]] = {}
        for tag in self.tags.values():
            if tag == self.base_tag:
                continue
            entry = dict(self._survey_texts.get(tag, {}))
            per_question = {q.data["id"]: q.texts[tag] for q in questions if q.texts.get(tag)}
            if per_question:
                entry["questions"] = per_question
            if entry:
                translations[tag] = entry
        if translations:
            data["translations"] = translations
        return data

    def _validated(self) -> tuple[Survey, dict[str, Any], list[RowProblem]]:
        """The survey, its table and the rows left out because they read a left-out one;
        ImportRefused for the rows Survey.from_dict refuses (all of them, one at a time)."""
        import tomllib

        settings = dict(self.settings)
        description, description_tr = self._introduction()
        if description:
            settings = {**{k: v for k, v in settings.items() if k in ("id", "title",
                                                                      "version")},
                        "description": description,
                        **{k: v for k, v in settings.items() if k not in ("id", "title",
                                                                          "version")}}
        for tag, text in description_tr.items():
            self._survey_texts.setdefault(tag, {})["description"] = text
        questions = list(self.questions)
        invalid: list[RowProblem] = []
        if not questions:
            raise XlsFormError(f"{self.filename}: no question of the form can be imported"
                               + (" (see the rows left out)" if self.problems else ""))
        while True:
            data = self._assemble(questions, settings)
            try:
                survey = Survey.from_dict(tomllib.loads(self._toml(data, ())))
                break
            except SurveyError as exc:
                failed = _question_of(exc.field, questions)
                if failed is None:
                    raise XlsFormError(f"{self.filename}: {_survey_field(exc.field)}: "
                                       f"{exc.problem}") from None
                invalid.append(RowProblem(failed.row, failed.name, failed.xls_type,
                                          _reason(exc, failed), _remedy(exc, failed), INVALID))
                gone = {failed.data["id"]}
                for q in questions:  # and what reads it, which cannot be checked without it
                    if gone & set(q.reads):
                        gone.add(q.data["id"])
                questions = [q for q in questions if q.data["id"] not in gone]
                if not questions or len(invalid) >= MAX_PROBLEMS:
                    raise ImportRefused(invalid) from None
        if invalid:
            raise ImportRefused(invalid)
        return survey, data, []

    def _toml(self, data: Mapping[str, Any], left_out: Sequence[RowProblem]) -> str:
        from .survey_toml import to_toml

        header = [f"Imported from the XLSForm {self.filename} by `ldpsurvey import xlsform`.",
                  "Edit freely: `ldpsurvey plan` on this file checks it and plans the sample."]
        if left_out:
            header.append("Rows left out (--skip-unsupported):")
            header += [f"  {p}" for p in left_out]
        comments = {q.data["id"]: q.comments for q in self.questions}
        return to_toml(data, header, comments)


@dataclass(frozen=True)
class _Condition:
    """A translated relevant (None: always) and the question ids it reads."""

    text: str | None
    reads: tuple[str, ...] = ()

    @staticmethod
    def both(outer: _Condition | None, inner: _Condition) -> _Condition:
        if outer is None or outer.text is None:
            return inner if outer is None else _Condition(inner.text,
                                                          outer.reads + inner.reads)
        if inner.text is None:
            return _Condition(outer.text, outer.reads + inner.reads)
        return _Condition(f"({outer.text}) and ({inner.text})",
                          tuple(dict.fromkeys(outer.reads + inner.reads)))


class _Refusal(Exception):
    def __init__(self, kind: str, reason: str, alternative: str) -> None:
        super().__init__(reason)
        self.kind, self.reason, self.alternative = kind, reason, alternative


class _RowIndex:
    """The survey sheet's rows by name, in order (row numbers count the header as row 1)."""

    def __init__(self, rows: Sequence[Mapping[str, Any]]) -> None:
        self.rows = [(i + 2, dict(r)) for i, r in enumerate(rows)]
        self.by_name: dict[str, list[int]] = {}
        for i, (_, r) in enumerate(self.rows):
            if r.get("name") is not None:
                self.by_name.setdefault(str(r["name"]).strip(), []).append(i)
        self.taken: set[int] = set()
        self.last = -1

    def take(self, name: str) -> tuple[int, dict[str, Any]] | None:
        for i in self.by_name.get(name, ()):
            if i not in self.taken:
                self.taken.add(i)
                self.last = max(self.last, i)
                return self.rows[i]
        return None

    def later(self, name: str) -> bool:
        return any(i not in self.taken for i in self.by_name.get(name, ()))


# --- cells -----------------------------------------------------------------------------------


def _category(el: Mapping[str, Any], xls_type: str) -> str:
    """What an element is, for the mapping: select_one, select_multiple, integer, range, or a
    key of REFUSED_TYPES."""
    from pyxform.question_type_dictionary import QUESTION_TYPE_DICT

    kind = str(el.get("type", ""))
    if kind == "select one":
        return "select_one" if el.get("list_name") else "external"
    if kind == "select all that apply":
        return "select_multiple" if el.get("list_name") else "external"
    if kind == "select one external":
        return "external"
    if kind == "rank":
        return "rank"
    if kind == "range":
        return "range"
    spec = QUESTION_TYPE_DICT.get(kind, {})
    bind = spec.get("bind", {})
    tag = spec.get("control", {}).get("tag")
    if "jr:preload" in bind or tag == "action" or kind in ("audit", "background-geopoint"):
        return "metadata"
    if bind.get("type") == "int":
        return "integer"
    if bind.get("type") == "decimal":
        return "decimal"
    if bind.get("type") in _GEO:
        return "geo"
    if bind.get("type") in _DATES:
        return "date"
    if tag == "upload" or bind.get("type") == "binary":
        return "media"
    if bind.get("type") == "barcode":
        return "barcode"
    if tag == "trigger":
        return "acknowledge"
    if kind in ("calculate", "hidden") or (bind and tag is None and "type" in bind):
        return "calculate"
    if kind in ("xml-external", "csv-external"):
        return "external"
    if tag == "input" and bind.get("type") == "string":
        return "text"
    return kind


def _collecting_cell(cells: Mapping[str, Any]) -> tuple[str, str] | None:
    for column, value in cells.items():
        base = str(column).split("::", 1)[0].strip()
        if value in (None, ""):
            continue
        if base in ("read_only", "readonly") and str(value).strip().lower() in _FALSE_CELLS:
            continue
        if base in COLLECTING_COLUMNS:
            reason, alternative = COLLECTING_COLUMNS[base]
            return f"{reason} ({column})", alternative
        if base.startswith("bind::"):
            return (f"sets an ODK bind attribute ({column})", "drop the column")
    return None


def _quoted(value: Any) -> str:
    """A cell's text quoted for a message: its repr, cut at MAX_QUOTED characters (a
    15,000-character condition is named by its start, not printed whole)."""
    text = str(value)
    return repr(text) if len(text) <= MAX_QUOTED else repr(text[:MAX_QUOTED - 3]) + "..."


def _required(value: Any) -> bool:
    if value is None or str(value).strip() == "":
        return False
    text = str(value).strip().lower()
    if text in _TRUE_CELLS:
        return True
    if text in _FALSE_CELLS:
        return False
    raise _Refusal(UNSUPPORTED, f"required {_quoted(value)} is a condition (required only "
                   "sometimes)", "write yes or no")


def _flag(value: Any, column: str) -> bool:
    if value is None or str(value).strip() == "":
        return False
    text = str(value).strip().lower()
    if text in _TRUE_CELLS:
        return True
    if text in _FALSE_CELLS:
        return False
    raise _Refusal(INVALID, f"{column} {_quoted(value)} is not yes or no", "write yes or no")


def _positive(value: Any, column: str) -> float | None:
    if value is None or str(value).strip() == "":
        return None
    try:
        number = float(str(value).strip())
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or number <= 0:
        raise _Refusal(INVALID, f"{column} {_quoted(value)} is not a number > 0",
                       f"write {column} as a number such as 1.0")
    return number


def _yes_no(options: Mapping[str, str], strict: bool = True) -> Any:
    """(yes name, no name) of a yes/no list (two choices named yes and no, y/n, true/false or
    1/0, in any case), else None (strict: the caller knows it is one)."""
    names = list(options)
    if len(names) == 2:
        lowered = [n.strip().lower() for n in names]
        for yes_words, no_words in ((("yes", "y", "true", "1"), ("no", "n", "false", "0")),):
            for a, b in ((0, 1), (1, 0)):
                if lowered[a] in yes_words and lowered[b] in no_words and (
                        yes_words.index(lowered[a]) == no_words.index(lowered[b])):
                    return names[a], names[b]
    if strict:
        raise AssertionError("not a yes/no list")
    return None


def _integer_range(el: Mapping[str, Any], cells: Mapping[str, Any], category: str
                   ) -> tuple[int, int]:
    constraint = str(cells.get("constraint") or "").strip()
    if category == "range":
        if constraint:
            raise _Refusal(UNSUPPORTED, "a constraint on a range question",
                           "drop the constraint: the range's start and end bound it")
        params = el.get("parameters") or {}
        try:
            start, end = int(str(params.get("start", "1"))), int(str(params.get("end", "10")))
            step = int(str(params.get("step", "1")))
        except ValueError:
            raise _Refusal(UNSUPPORTED, "a range with decimal start, end or step",
                           "whole-number start and end with step=1") from None
        if step != 1 or start >= end:
            raise _Refusal(UNSUPPORTED, f"a range from {start} to {end} in steps of {step}",
                           "start < end with step=1 (or an integer with a range constraint)")
        return start, end
    if not constraint:
        raise _Refusal(INVALID, "an integer needs a range", "add a constraint such as "
                       ". >= 0 and . <= 30")
    try:
        low, high = xp.range_of(xp.parse(constraint))
    except xp.ExpressionError as exc:
        raise _Refusal(UNSUPPORTED, f"its constraint {_quoted(constraint)} is not a range "
                       f"({exc.message})", "write it as . >= a and . <= b") from None
    if low is None or high is None:
        raise _Refusal(INVALID, f"its constraint {_quoted(constraint)} bounds only one side",
                       "give both: . >= a and . <= b")
    if low >= high:
        raise _Refusal(INVALID, f"its constraint {_quoted(constraint)} leaves fewer than two "
                       "values", "widen the range")
    return low, high


def _multiselect_bounds(cells: Mapping[str, Any], required: bool, k: int) -> dict[str, int]:
    constraint = str(cells.get("constraint") or "").strip()
    low, high = None, None
    if constraint:
        try:
            low, high = xp.count_bounds(xp.parse(constraint))
        except xp.ExpressionError as exc:
            raise _Refusal(UNSUPPORTED, f"its constraint {_quoted(constraint)} is not a bound on "
                           f"how many are checked ({exc.message})", "drop it, or write "
                           "count-selected(.) <= m") from None
    minimum = max(low or 0, 1 if required else 0)
    if minimum > 1:
        raise _Refusal(UNSUPPORTED, f"at least {minimum} options must be checked",
                       "at least 0 or 1 (count-selected(.) >= 1, or required)")
    out: dict[str, int] = {}
    if high is not None and high < k:
        out["max_selected"] = high
    if minimum:
        out["required_min"] = minimum
    return out


def _language_tag(name: str) -> str | None:
    m = _LANGUAGE.fullmatch(name.strip())
    if m is not None:
        return canonical_tag(m["tag"])
    return canonical_tag(name) if "-" in name or len(name.strip()) <= 3 else None


def _survey_id(form_id: str, notes: list[str], filename: str) -> str:
    slug = re.sub(r"[^a-z0-9_-]+", "-", form_id.strip().lower()).strip("-_")[:64].strip("-_")
    if not slug or not SLUG.fullmatch(slug):
        raise XlsFormError(f"{filename}: the form id {_quoted(form_id)} has no slug form: pass "
                           "--id, e.g. --id drug-use-2025")
    if slug != form_id:
        notes.append(f"the form id {form_id!r} becomes the survey id {slug!r} (ldpsurvey ids "
                     "are lowercase slugs; --id to choose another)")
    return slug


def _whole(text: str) -> bool:
    """Digits 0-9 only: str.isdigit() also takes '²' and other digits int() refuses."""
    return text.isascii() and text.isdigit()


def _version(value: Any, notes: list[str], filename: str) -> int:
    if value is None or str(value).strip() == "":
        notes.append("settings has no version: the survey is version 1 (--survey-version to "
                     "choose)")
        return 1
    text = str(value).strip()
    if not _whole(text) or not 1 <= int(text) <= MAX_VERSION:
        raise XlsFormError(f"{filename}: settings version {_quoted(text)} is not an integer "
                           f"from 1 to {MAX_VERSION} (ldpsurvey versions are): pass "
                           "--survey-version N, or write such a version in settings")
    return int(text)


def _two_server(settings: Mapping[str, Any], filename: str) -> dict[str, Any]:
    missing = [k for k in ("helper_url", "helper_hpke_key", "leader_hpke_key",
                           "min_batch_size") if not settings.get(k)]
    if missing:
        raise XlsFormError(f"{filename}: collection = two-server needs the settings "
                           f"{', '.join(missing)} (the [two_server] table: `ldpsurvey helper "
                           "keys generate` and `ldpsurvey leader keys generate` write the keys)")
    out: dict[str, Any] = {}
    for key in TWO_SERVER_SETTINGS:
        value = settings.get(key)
        if value is None or str(value).strip() == "":
            continue
        text = str(value).strip()
        if key == "min_batch_size":
            if not _whole(text):
                raise XlsFormError(f"{filename}: settings min_batch_size {_quoted(text)} is not a "
                                   "whole number")
            out[key] = int(text)
        elif key == "delta":
            try:
                out[key] = float(text)
            except ValueError:
                raise XlsFormError(f"{filename}: settings delta {_quoted(text)} is not a "
                                   "number") from None
        else:
            out[key] = text
    return out


def _question_of(field_name: str, questions: Sequence[_Question]) -> _Question | None:
    """The question a SurveyError names (questions.<id>... or translations.<tag>.questions.
    <id>...), None for a survey-level field."""
    for q in sorted(questions, key=lambda q: -len(q.data["id"])):
        qid = q.data["id"]
        if field_name == f"questions.{qid}" or field_name.startswith(f"questions.{qid}."):
            return q
        m = re.match(r"^translations\.[^.]+\.questions\.(.*)$", field_name)
        if m and (m[1] == qid or m[1].startswith(qid + ".")):
            return q
    return None


def _survey_field(name: str) -> str:
    return {"id": "settings form_id", "title": "settings form_title",
            "version": "settings version"}.get(name, name)


def _reason(exc: SurveyError, q: _Question) -> str:
    prefix = f"questions.{q.data['id']}"
    rest = exc.field[len(prefix) + 1:] if exc.field.startswith(prefix + ".") else ""
    field_name = _COLUMN_OF.get(rest, rest)
    return f"{field_name + ': ' if field_name else ''}{exc.problem}"


_COLUMN_OF = {"epsilon": "ldp_epsilon", "mechanism": "ldp_mechanism",
              "local_epsilon": "ldp_local_epsilon", "central_epsilon": "ldp_central_epsilon",
              "disclosed": "ldp_disclosed", "text": "label", "min": "constraint",
              "max": "constraint", "max_selected": "constraint", "required_min": "required",
              "options": "choices"}


def _remedy(exc: SurveyError, q: _Question) -> str:
    problem = exc.problem
    if problem.startswith("an optional question cannot depend"):
        return "set required = yes on this row (a follow-up of a randomized answer is sent " \
               "by everyone, as 'not asked' when it does not apply)"
    if exc.field.endswith(".epsilon") or exc.field.endswith("_epsilon"):
        return "change its ε"
    if exc.field.endswith(".mechanism"):
        return "change ldp_mechanism (or leave it empty for auto)"
    if exc.field.endswith(".relevant"):
        return "change its relevant"
    return "change the row"


