"""One survey-sheet row as an ldpsurvey question: its type (the units that import the row's
XLSForm type, `QuestionType.xlsform_types`: select_one -> binary, categorical or ordinal;
select_multiple -> multiselect; integer -> integer; decimal -> decimal; range -> integer or
decimal), text and hint, the type's keys
(options, bounds: `QuestionType.from_xlsform`), privacy, skip logic and translations, or
Refusal saying why it cannot be one."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, NoReturn

from ldpsurvey.shared.piping import references
from ldpsurvey.shared.question_types import QuestionType
from ldpsurvey.shared.question_types.base import XLSFormRange
from ldpsurvey.shared.survey import QUESTION_ID

from . import expressions as xp
from .cells import (
    blank,
    chained_range,
    chosen_bounds,
    conditional_range,
    integer_range,
    multiselect_bounds,
    number_range,
    range_parameters,
    required,
    yes_no,
)
from .choices import Options, options
from .conditions import Condition, refusal_of
from .errors import FIX, UNSUPPORTED, Refusal, quoted
from .exclusivity import PARENTHESES, TOPIC, holds_for_one_answer, split
from .languages import UNTRANSLATED, Languages
from .privacy import privacy
from .refusals import UNITS_BY_XLSFORM_TYPE, collecting_cell
from .special import split_choices, split_codes

_SELECTS = ("select_one", "select_multiple")  # the XLSForm types with a choice list
_SIDE = {"min": "low", "max": "high"}  # a range's side, as XLSFormRange names its bound
_BOUND_COLUMNS = ("ldp_min", "ldp_max")  # an integer's range, chosen by the researcher
# The XLSForm types several units import: ldp_type chooses among them.
_CHOSEN = " and ".join(t for t, found in UNITS_BY_XLSFORM_TYPE.items() if len(found) > 1)


@dataclass(frozen=True)
class Row:
    """A survey-sheet row as the mapping sees it: pyxform's element and the row's cells
    (as written, with pyxform's reading of relevant, constraint, required and appearance)."""

    el: Mapping[str, Any]
    row: int | None  # the header being row 1
    name: str
    xls_type: str  # as written
    cells: Mapping[str, Any]


@dataclass
class Question:
    """A mapped question and what the rest of the import needs to know of it."""

    data: dict[str, Any]
    row: int | None
    name: str
    xls_type: str
    target: xp.Target
    reads: tuple[str, ...]  # ids its relevant reads
    pipes: tuple[str, ...] = ()  # ids its texts show (`${name}`: piped texts)
    texts: dict[str, dict[str, Any]] = field(default_factory=dict)  # tag -> translation
    comments: list[str] = field(default_factory=list)
    # imported as ODK runs it though the form is wrong there: (reason, alternative, topic),
    # listed for the designer to check (errors.CHECK)
    checks: list[tuple[str, str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class Context:
    """What the mapping of a row needs from the rest of the form."""

    languages: Languages
    two_server: bool
    default_epsilon: float | None  # --epsilon
    notes: list[str]  # the import's notes, appended to
    relevant: Callable[[str], Condition]  # a relevant cell on the questions so far
    # the id a piped `${name}` shows (a question so far); Refusal otherwise (Walk.shows)
    shows: Callable[[str], str] = lambda name: name
    # (question, choice) names the form's conditions read: such a choice stays an option
    read_choices: frozenset[tuple[str, str]] = frozenset()
    integer_max: int | None = None  # --integer-max: the max of integers bounded below only


@dataclass(frozen=True)
class _Texts:
    text: str
    hint: str | None
    text_tr: dict[str, str]  # tag -> text
    hint_tr: dict[str, str]


def question(r: Row, category: str, outer: Condition | None, ctx: Context) -> Question:
    """The question of a row of a mapped category (refusals.UNITS_BY_XLSFORM_TYPE) inside the
    groups whose condition is `outer`; Refusal for what it cannot be."""
    _check_row(r)
    texts = _texts(r.el, ctx.languages)
    is_required = required(r.cells.get("required"))
    comments = [f"row {r.row}: {r.xls_type} {r.name!r}" if r.row is not None else r.name]
    opts = Options()
    checks: list[tuple[str, str, str]] = []
    if category in _SELECTS:
        opts = options(r.el, r.xls_type, ctx.languages, ctx.notes)
        if category == "select_multiple":
            opts = _without_forbidden(r, opts, checks)
        comments += opts.comments
    asked_directly = bool(privacy(r.cells, ctx.two_server, ctx.default_epsilon).get("disclosed"))
    read = frozenset(c for q, c in ctx.read_choices if q == r.name)
    opts, cells, special = _special(r, category, opts, comments,
                                    ctx.two_server or asked_directly, read)
    read = _Read(cells, opts.labels, r.el.get("list_name"), comments, r, category,
                 is_required, ctx.notes, ctx.integer_max)
    unit = question_unit(read)
    data: dict[str, Any] = {"id": r.name, "type": unit.name, "text": texts.text}
    if texts.hint is not None:
        data["hint"] = texts.hint
    keys = unit.from_xlsform(read)
    if not read.bounds_read and any(not blank(r.cells.get(c)) for c in _BOUND_COLUMNS):
        raise Refusal(FIX, "ldp_min and ldp_max bound an integer row's range",
                      f"clear them on this {r.xls_type} row", "ldp_* cells")
    data.update(keys.keys)
    if special:  # don't know / prefer not to say (special.py)
        data["special"] = special
    if unit.xlsform_optional(is_required):
        data["optional"] = True
    data.update(privacy(r.cells, ctx.two_server, ctx.default_epsilon))
    condition = _condition(r.cells, outer, ctx.relevant)
    if condition is not None and condition.text is not None:
        data["relevant"] = condition.text
    for said in condition.rewritten if condition is not None else ():
        read.note(f"its relevant {quoted(r.cells['relevant'])}: {said}")
    if condition is not None and condition.absent:
        checks.append((f"its relevant {quoted(r.cells['relevant'])} names a choice its "
                       f"question does not have: {'; '.join(condition.absent)}; imported so",
                       "correct the condition and import again",
                       "conditions that name what the form does not have"))
    target = xp.Target(id=r.name, type=unit.name, options=keys.choices, yes=keys.yes,
                       no=keys.no, relevant=data.get("relevant"),
                       optional=bool(data.get("optional")))
    shown = [texts.text, texts.hint, *texts.text_tr.values(), *texts.hint_tr.values(),
             *opts.labels.values(), *(t for tr in opts.translated.values() for t in tr.values())]
    pipes = tuple(dict.fromkeys(_shows(name, r.name, ctx) for text in shown if text
                                for name in references(text)))
    return Question(data=data, row=r.row, name=r.name, xls_type=r.xls_type, target=target,
                    reads=condition.reads if condition is not None else (), pipes=pipes,
                    texts=_translations(texts, opts, "options" in data,
                                        tuple(special.values())),
                    comments=read.comments + [f"CHECK: {reason}" for reason, _, _ in checks],
                    checks=checks)


def _without_forbidden(r: Row, opts: Options, checks: list[tuple[str, str, str]]) -> Options:
    """A select_multiple's options without those its exclusivity constraint, written without
    parentheses, forbids outright (exclusivity.py: ODK never lets them be ticked, so they are
    not offered), said in `checks`."""
    found = split(str(r.cells.get("constraint") or ""), r.name)
    if found is None or not found.forbidden:
        return opts
    gone = [n for n in found.forbidden if n in opts.labels]
    named = ", ".join(map(repr, found.forbidden))
    kept = {n: label for n, label in opts.labels.items() if n not in gone}
    how = [f"{', '.join(map(repr, gone))} not offered"] if gone else []
    if len(gone) < len(found.forbidden):
        how.append(", ".join(repr(n) for n in found.forbidden if n not in gone)
                   + " not a choice of its list anyway")
    if found.exclusive:
        how.append(f"{', '.join(map(repr, found.exclusive))} ticked alone")
    checks.append((f"its constraint {quoted(r.cells.get('constraint'))} forbids ticking "
                   f"{named} at all ('and' binds before 'or': not(selected(., 'a') or "
                   "selected(., 'b') and count-selected(.) > 1) never allows 'a'); imported as "
                   f"ODK runs it: {'; '.join(how)}", PARENTHESES, TOPIC))
    if not gone:
        return opts
    labels = {opts.labels[n] for n in gone}
    translated = {tag: {label: shown for label, shown in entry.items() if label not in labels}
                  for tag, entry in opts.translated.items()}
    return Options(kept, translated, opts.comments)


@dataclass
class _Read:
    """A row as a question type's unit reads it (shared/question_types XLSFormRow)."""

    cells: Mapping[str, Any]
    labels: Mapping[str, str]
    list_name: Any
    comments: list[str]
    row: Row
    category: str
    required: bool
    notes: list[str] = field(default_factory=list)  # the import's notes, appended to
    integer_max: int | None = None  # --integer-max (cells.ChosenBounds)
    bounds_read: bool = False  # whether the unit read an integer's range (ldp_min, ldp_max)

    def yes_no(self) -> tuple[str, str] | None:
        return yes_no(self.labels)

    def integer_range(self) -> tuple[int, int]:
        self.bounds_read = True
        low, high, chosen = integer_range(self.row.el, self.cells, self.category,
                                          chosen_bounds(self.cells, self.integer_max))
        if chosen:  # the researcher's bound: shown to the respondent as the question's range
            self.note(f"imported as an integer from {low} to {high}: {'; '.join(chosen)} "
                      "(the page shows the range; answers beyond it cannot be given)")
        constraint = str(self.cells.get("constraint") or "").strip()
        if self.category != "range" and chained_range(constraint) is not None:
            said = (f"its constraint {quoted(constraint)} is imported as the range {low} to "
                    f"{high} it writes (XPath reads a chained comparison as a true/false "
                    "compared with the last number, always true: ODK itself enforces nothing "
                    "there)")
            self.comments.append(said)
            self.notes.append(f"row {self.row.row} ({self.row.name}, {self.row.xls_type}): "
                              f"{said}")
        conditional = conditional_range(constraint) if self.category != "range" else None
        if conditional is not None:
            (a, b), (c, d) = conditional.branches
            self.note(f"its constraint {quoted(constraint)} allows {a} to {b} or {c} to {d} "
                      f"by an earlier answer; imported as the range {low} to {high}, which "
                      "holds both: a randomized answer's range cannot follow another answer "
                      "(it would tell that answer), so the narrower range of one branch is "
                      "not enforced")
        return low, high

    def count_bounds(self) -> dict[str, int]:
        return multiselect_bounds(self.cells, self.required, len(self.labels))

    def range_parameters(self) -> dict[str, str]:
        return range_parameters(self.row.el) if self.category == "range" else {}

    def number_range(self) -> XLSFormRange:
        found = number_range(self.row.el, self.cells, self.category)
        constraint = str(self.cells.get("constraint") or "").strip()
        said = []
        if found.chained:
            said.append(f"its constraint {quoted(constraint)} is imported as the range "
                        f"{found.range.low} to {found.range.high} it writes (XPath reads a "
                        "chained comparison as a true/false compared with the last number, "
                        "always true: ODK itself enforces nothing there)")
        if found.strict:
            said.append(f"its constraint {quoted(constraint)} excludes "
                        + " and ".join(f"its {side} ({getattr(found.range, _SIDE[side])})"
                                       for side in found.strict)
                        + ", which is kept as the range's end: the answer is rounded to "
                        "the grid on the device")
        for line in said:
            self.note(line)
        return found.range

    def refuse(self, reason: str, alternative: str, topic: str) -> NoReturn:
        raise Refusal(UNSUPPORTED, reason, alternative, topic)

    def note(self, said: str) -> None:
        """A line above the question in the TOML and in the import's notes."""
        self.comments.append(said)
        self.notes.append(f"row {self.row.row} ({self.row.name}, {self.row.xls_type}): {said}")

    def no_constraint(self) -> dict[str, Any]:
        constraint = str(self.cells.get("constraint") or "").strip()
        if constraint and holds_for_one_answer(constraint, self.row.name):
            said = (f"its constraint {quoted(constraint)} is dropped: it forbids ticking more "
                    "than one choice with some, which one answer never does")
            self.comments.append(said)
            self.notes.append(f"row {self.row.row} ({self.row.name}, {self.row.xls_type}): "
                              f"{said}")
            return {}
        if self.cells.get("constraint"):
            raise Refusal(UNSUPPORTED, f"its constraint {quoted(self.cells['constraint'])} is "
                          "not a range", "drop the constraint (every option is an answer), or "
                          "drop the options it excludes", "constraints that cannot be kept")
        return {}


def _check_row(r: Row) -> None:
    """Refusal for a name that is not a question id, or a cell that decides what is
    collected."""
    if not QUESTION_ID.fullmatch(r.name):
        raise Refusal(FIX, f"the name {r.name!r} is not an ldpsurvey question id",
                      "rename it: 1-63 letters, digits, '_', '.' or '-'",
                      "names that are not question ids")
    bad = collecting_cell(r.cells)
    if bad is not None:
        raise Refusal(UNSUPPORTED, f"it {bad[0]}", bad[1], "cells that change what is collected")


def _shows(name: str, own: str, ctx: Context) -> str:
    """The question id a piped `${name}` in the row `own`'s texts shows; Refusal for its own
    answer (not given yet when it is shown: ODK shows it as it is typed) or what
    `ctx.shows` refuses."""
    if name == own:
        raise Refusal(UNSUPPORTED, f"its text shows its own answer (${{{name}}}), which is not "
                      "given yet: a piped text shows an earlier answer only",
                      f"write the text without ${{{name}}}", "texts that show a later answer")
    return ctx.shows(name)


def _texts(el: Mapping[str, Any], languages: Languages) -> _Texts:
    """The label (required in the base language) and hint, with their translations (a
    `${name}` in them is a piped text: `question` checks that it shows an earlier question)."""
    text, text_tr = languages.text(el.get("label"))
    if text is None:
        column = "label" if languages.base == UNTRANSLATED else f"label::{languages.base}"
        raise Refusal(FIX, f"it has no label in the base language ({languages.base_tag})",
                      f"fill its {column} cell", "rows without a label")
    hint, hint_tr = languages.text(el.get("hint"))
    return _Texts(text, hint, text_tr, hint_tr)


def question_unit(row: _Read) -> QuestionType:
    """The unit of a row's type: the one that imports its XLSForm type; among several
    (select_one), the one its ldp_type cell names, else the one that takes it most
    specifically (appearance likert: ordinal; a yes/no list: binary; else categorical)."""
    found = UNITS_BY_XLSFORM_TYPE[row.category]
    if len(found) == 1:
        if row.cells.get("ldp_type"):
            raise Refusal(FIX, f"ldp_type applies to {_CHOSEN} rows",
                          f"clear ldp_type on this {found[0].xlsform_types[0]} row",
                          "ldp_type cells")
        return found[0]
    chosen = str(row.cells.get("ldp_type") or "").strip().lower()
    if chosen:
        names = [unit.name for unit in found]
        if chosen not in names:
            raise Refusal(FIX, f"ldp_type {quoted(chosen)} is not one of {', '.join(names)}",
                          f"write {', '.join(names[:-1])} or {names[-1]}", "ldp_type cells")
        unit = found[names.index(chosen)]
        misfit = unit.xlsform_misfit(row)
        if misfit is not None:
            raise Refusal(FIX, *misfit, "ldp_type cells")
        return unit
    ranked = [(rank, i) for i, unit in enumerate(found)
              if (rank := unit.xlsform_rank(row)) is not None]
    return found[min(ranked)[1]]


def _condition(cells: Mapping[str, Any], outer: Condition | None,
               relevant: Callable[[str], Condition]) -> Condition | None:
    """The row's relevant joined to its groups' (None: always asked); what the groups'
    read as ODK runs them is said of the group rows, not here."""
    if not cells.get("relevant"):
        return outer if outer is None or not (outer.absent or outer.rewritten) else replace(
            outer, absent=(), rewritten=())
    try:
        return Condition.both(outer, relevant(str(cells["relevant"])))
    except xp.ExpressionError as exc:
        mistake, topic, alternative = refusal_of(exc)
        raise Refusal(FIX if mistake else UNSUPPORTED,
                      f"its relevant {quoted(cells['relevant'])}: {exc.message}",
                      alternative, topic) from None


def _special(r: Row, category: str, opts: Options, comments: list[str], refused: bool,
             read: frozenset[str] = frozenset()
             ) -> tuple[Options, Mapping[str, Any], dict[str, str]]:
    """The row's options and cells without its special values, and those values
    (special.py): a select_one's don't-know / prefer-not choices, an integer's codes beside
    its range; none where they are `refused` (a two-server survey, a disclosed question: they
    take none yet)."""
    if refused:
        return opts, r.cells, {}
    if category == "select_one":
        kept, special = split_choices(opts.labels, read)
        if special:
            comments.append("special values (randomized with the answers, estimated apart): "
                            + ", ".join(f"choice {name} = {label!r}"
                                        for name, label in special.items()))
            return replace(opts, labels=kept), r.cells, special
        return opts, r.cells, {}
    if category in _SELECTS:  # select_multiple: its exclusive options are its special values
        return opts, r.cells, {}
    rest, special, codes = split_codes(str(r.cells.get("constraint") or "").strip())
    if not special:
        return opts, r.cells, {}
    comments.append("special values (randomized with the answers, estimated apart): "
                    + ", ".join(f"XLSForm code {code} = {label!r}"
                                for code, label in zip(codes, special.values(), strict=True))
                    + " (-999 reads don't know and -888 prefer not to say by convention: "
                    "rename a label that means something else)")
    return opts, {**r.cells, "constraint": rest}, special


def _translations(texts: _Texts, opts: Options, with_options: bool,
                  special: tuple[str, ...] = ()) -> dict[str, dict[str, Any]]:
    """{tag: {text, hint, options}} of a question (contract 4; options for a type that
    has them, and the special values' labels, which a translation names as options)."""
    out: dict[str, dict[str, Any]] = {}
    for tag, shown in texts.text_tr.items():
        out.setdefault(tag, {})["text"] = shown
    for tag, shown in texts.hint_tr.items():
        out.setdefault(tag, {})["hint"] = shown
    if with_options or special:
        labels = (*opts.labels.values(), *special) if with_options else special
        for tag, shown_of in opts.translated.items():
            shown = {label: shown_of[label] for label in labels if label in shown_of}
            if shown or with_options:
                out.setdefault(tag, {})["options"] = shown
    return out
