"""One survey-sheet row as an ldpsurvey question: its type (select_one -> binary, categorical
or ordinal; select_multiple -> multiselect; integer or range -> integer), text and hint,
options, bounds, privacy, skip logic and translations, or Refusal saying why it cannot be
one."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ldpsurvey.shared.survey import QUESTION_ID

from . import expressions as xp
from .cells import integer_range, multiselect_bounds, required, yes_no
from .choices import PIPED, Options, options
from .conditions import Condition, refusal_of
from .errors import FIX, UNSUPPORTED, Refusal, quoted
from .languages import UNTRANSLATED, Languages
from .privacy import privacy
from .refusals import collecting_cell

LDP_TYPES = ("binary", "categorical", "ordinal")  # what ldp_type may force a select_one to
_SELECTS = ("select_one", "select_multiple")
_WITH_OPTIONS = ("categorical", "ordinal", "multiselect")


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
    texts: dict[str, dict[str, Any]] = field(default_factory=dict)  # tag -> translation
    comments: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Context:
    """What the mapping of a row needs from the rest of the form."""

    languages: Languages
    two_server: bool
    default_epsilon: float | None  # --epsilon
    notes: list[str]  # the import's notes, appended to
    relevant: Callable[[str], Condition]  # a relevant cell on the questions so far


@dataclass(frozen=True)
class _Texts:
    text: str
    hint: str | None
    text_tr: dict[str, str]  # tag -> text
    hint_tr: dict[str, str]


def question(r: Row, category: str, outer: Condition | None, ctx: Context) -> Question:
    """The question of a row of a mapped category (refusals.MAPPED_CATEGORIES) inside the
    groups whose condition is `outer`; Refusal for what it cannot be."""
    _check_row(r)
    texts = _texts(r.el, ctx.languages)
    is_required = required(r.cells.get("required"))
    comments = [f"row {r.row}: {r.xls_type} {r.name!r}" if r.row is not None else r.name]
    opts = Options()
    if category in _SELECTS:
        opts = options(r.el, r.xls_type, ctx.languages, ctx.notes)
        comments += opts.comments
    target_type = question_type(category, r.cells, opts.labels)
    data: dict[str, Any] = {"id": r.name, "type": target_type, "text": texts.text}
    if texts.hint is not None:
        data["hint"] = texts.hint
    yes = no = ""
    if target_type == "binary":
        yes, no = _yes_no_names(opts.labels)
        comments = [c for c in comments if not c.startswith("XLSForm choice names")]
        comments.append(f"the yes/no list {r.el.get('list_name')!r}: {yes!r} is true, "
                        f"{no!r} is false")
    elif target_type in _WITH_OPTIONS:
        data["options"] = list(opts.labels.values())
    data.update(_bounds(r, category, target_type, is_required, len(opts.labels)))
    if target_type != "multiselect" and not is_required:
        data["optional"] = True
    data.update(privacy(r.cells, ctx.two_server, ctx.default_epsilon))
    condition = _condition(r.cells, outer, ctx.relevant)
    if condition is not None and condition.text is not None:
        data["relevant"] = condition.text
    target = xp.Target(id=r.name, type=target_type,
                       options=opts.labels if target_type != "binary" else {},
                       yes=yes, no=no, relevant=data.get("relevant"),
                       optional=bool(data.get("optional")))
    return Question(data=data, row=r.row, name=r.name, xls_type=r.xls_type, target=target,
                    reads=condition.reads if condition is not None else (),
                    texts=_translations(texts, opts, target_type), comments=comments)


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


def _texts(el: Mapping[str, Any], languages: Languages) -> _Texts:
    """The label (required in the base language) and hint, with their translations; Refusal
    for a text that shows an earlier answer."""
    text, text_tr = languages.text(el.get("label"))
    if text is None:
        column = "label" if languages.base == UNTRANSLATED else f"label::{languages.base}"
        raise Refusal(FIX, f"it has no label in the base language ({languages.base_tag})",
                      f"fill its {column} cell", "rows without a label")
    hint, hint_tr = languages.text(el.get("hint"))
    for shown in (text, hint, *text_tr.values(), *hint_tr.values()):
        if shown and PIPED.search(shown):
            raise Refusal(UNSUPPORTED, "its text shows an earlier answer (${...} in a "
                          "label or hint)", "write the text without ${...}",
                          "texts that show an earlier answer")
    return _Texts(text, hint, text_tr, hint_tr)


def question_type(category: str, cells: Mapping[str, Any], labels: Mapping[str, str]) -> str:
    """The ldpsurvey type of a row: ldp_type (select_one only), else appearance likert
    (ordinal), else binary for a yes/no list and categorical for any other."""
    if category == "select_multiple":
        if cells.get("ldp_type"):
            raise Refusal(FIX, "ldp_type applies to select_one rows",
                          "clear ldp_type on this select_multiple row", "ldp_type cells")
        return "multiselect"
    if category in ("integer", "range"):
        if cells.get("ldp_type"):
            raise Refusal(FIX, "ldp_type applies to select_one rows",
                          "clear ldp_type on this integer row", "ldp_type cells")
        return "integer"
    chosen = str(cells.get("ldp_type") or "").strip().lower()
    if chosen:
        if chosen not in LDP_TYPES:
            raise Refusal(FIX, f"ldp_type {quoted(chosen)} is not one of "
                          f"{', '.join(LDP_TYPES)}", "write binary, categorical or ordinal",
                          "ldp_type cells")
        if chosen == "binary" and yes_no(labels) is None:
            raise Refusal(FIX, "ldp_type binary needs a yes/no list (two choices "
                          "named yes and no)", "use categorical, or a yes/no list",
                          "ldp_type cells")
        return chosen
    if "likert" in str(cells.get("appearance", "")).split():
        return "ordinal"
    return "binary" if yes_no(labels) is not None else "categorical"


def _yes_no_names(labels: Mapping[str, str]) -> tuple[str, str]:
    """(yes, no) choice names of a question typed binary (question_type made sure it has
    them)."""
    names = yes_no(labels)
    assert names is not None, "a binary question without a yes/no list"
    return names


def _bounds(r: Row, category: str, target_type: str, is_required: bool, k: int
            ) -> dict[str, int]:
    """min/max of an integer, max_selected/required_min of a multiselect; Refusal for a
    constraint on any other question."""
    if category in ("integer", "range"):
        low, high = integer_range(r.el, r.cells, category)
        return {"min": low, "max": high}
    if target_type == "multiselect":
        return multiselect_bounds(r.cells, is_required, k)
    if r.cells.get("constraint"):
        raise Refusal(UNSUPPORTED, f"its constraint {quoted(r.cells['constraint'])} is not a "
                      "range", "drop the constraint (every option is an answer), or "
                      "drop the options it excludes", "constraints that cannot be kept")
    return {}


def _condition(cells: Mapping[str, Any], outer: Condition | None,
               relevant: Callable[[str], Condition]) -> Condition | None:
    """The row's relevant joined to its groups' (None: always asked)."""
    if not cells.get("relevant"):
        return outer
    try:
        return Condition.both(outer, relevant(str(cells["relevant"])))
    except xp.ExpressionError as exc:
        mistake, topic, alternative = refusal_of(exc)
        raise Refusal(FIX if mistake else UNSUPPORTED,
                      f"its relevant {quoted(cells['relevant'])}: {exc.message}",
                      alternative, topic) from None


def _translations(texts: _Texts, opts: Options, qtype: str) -> dict[str, dict[str, Any]]:
    """{tag: {text, hint, options}} of a question (contract 4)."""
    out: dict[str, dict[str, Any]] = {}
    for tag, shown in texts.text_tr.items():
        out.setdefault(tag, {})["text"] = shown
    for tag, shown in texts.hint_tr.items():
        out.setdefault(tag, {})["hint"] = shown
    if qtype in _WITH_OPTIONS:
        for tag, shown_of in opts.translated.items():
            out.setdefault(tag, {})["options"] = {label: shown_of[label]
                                                  for label in opts.labels.values()
                                                  if label in shown_of}
    return out
