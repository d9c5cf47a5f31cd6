"""The walk over pyxform's form, row by row in the form's order: display groups (their
condition added to each question inside), repeats and refused groups (refused with every row
inside), notes (the introduction before the first question, else said to be left out), and
questions (mapped, or refused by row with the reason and the alternative)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from . import choice_filter
from . import expressions as xp
from .cells import blank
from .conditions import Condition, piped_refusal, refusal_of, translate
from .errors import CHECK, FIX, UNSUPPORTED, Refusal, RowProblem, quoted
from .exclusivity import split
from .languages import Languages
from .media import Attachment, Media, from_file
from .questions import Context, Question, Row, question
from .reading import RowIndex
from .refusals import (
    REFUSED_TYPES,
    TOPICS,
    UNITS_BY_XLSFORM_TYPE,
    category,
    collecting_cell,
)
from .selection import Selection, begins, holds_rows
from .special import read_choices

_REFERENCE = re.compile(r"\$\{([^}\s]+)\}")  # a ${name} in a calculation
_SUM = re.compile(r"sum\(\s*\$\{([^}\s]+)\}\s*\)")
# The largest roster a carried count may hold when the form bounds the repeat's count
# nowhere: the MSNA's own bound on a household (hh_size, 1 to 30).
DEFAULT_ROSTER_MAX = 30


def carried_count(calculation: str, calculations: Mapping[str, str]) -> str | None:
    """The row a calculation counts when it is `sum(${x})` and `x` is `if(cond, 1, 0)` (a
    count of a repeat's entries where `cond` holds); None for any other calculation."""
    found = _SUM.fullmatch(calculation.strip())
    if found is None:
        return None
    summed = xp.inlinable(calculations.get(found.group(1), ""))
    if summed is None or (summed[1].kind, summed[2].kind) != ("num", "num") \
            or (float(summed[1].value), float(summed[2].value)) != (1.0, 0.0):
        return None
    return found.group(1)


@dataclass
class Walk:
    """What the walk has found so far."""

    rows: RowIndex
    languages: Languages
    two_server: bool
    default_epsilon: float | None
    notes: list[str]  # the import's notes, appended to
    skip_unsupported: bool = False  # problem rows are left out, not just listed
    problems: list[RowProblem] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    intro: list[Any] = field(default_factory=list)  # label cells of the notes before any question
    targets: dict[str, xp.Target] = field(default_factory=dict)  # questions so far, by name
    left_out: dict[str, RowProblem] = field(default_factory=dict)  # rows not imported, by name
    seen_question: bool = False
    selection: Selection = field(default_factory=Selection)  # --group, --marked
    integer_max: int | None = None  # --integer-max (cells.ChosenBounds)
    media: Media = field(default_factory=Media)  # --media: the form's attached files
    outside: list[int | None] = field(default_factory=list)  # rows outside the selection
    exclusive: list[str] = field(default_factory=list)  # names of those with exclusive options
    exclusive_pending: list[str] = field(default_factory=list)  # recognised, not kept (yet)
    piped: list[str] = field(default_factory=list)  # names of those whose texts pipe answers
    hidden_notes: int = 0  # notes not shown
    checks: list[RowProblem] = field(default_factory=list)  # groups imported as ODK runs them
    in_repeat: dict[str, str] = field(default_factory=dict)  # row name -> its repeat's name
    over_repeat: dict[str, str] = field(default_factory=dict)  # calculations reading one
    calculations: dict[str, xp.Inlined] = field(default_factory=dict)  # read on the device
    repeat_counts: dict[str, str] = field(default_factory=dict)  # repeat -> its repeat_count
    carried: list[str] = field(default_factory=list)  # calculations carried by invitations
    _picked: bool = False  # inside a selected group: every row is selected
    _picked_names: frozenset[str] | None = None
    _read_choices: frozenset[tuple[str, str]] | None = None

    def walk(self, elements: Sequence[Mapping[str, Any]], relevant: Condition | None,
             inside: RowProblem | None) -> None:
        """Each element under the groups' condition `relevant`, or refused with the group or
        repeat `inside`."""
        for el in elements:
            r = self._row(el)
            if r is None:  # added by pyxform (meta/instanceID, or_other's text): not a row
                continue
            if not self._selected(el, r):
                self._leave_outside(el, r)
                continue
            picked = self._picked
            self._picked = picked or self.selection.picks(r.cells, r.name, holds_rows(el))
            self._element(el, r, relevant, inside)
            self._picked = picked

    def _element(self, el: Mapping[str, Any], r: Row, relevant: Condition | None,
                 inside: RowProblem | None) -> None:
        """One selected element (and the rows inside it)."""
        if inside is not None:  # left out with it: back once a group to fix is fixed
            fix = inside.kind == FIX
            self.refuse(r, f"inside the refused {inside.type} {inside.name!r} (row "
                        f"{inside.row}){', which needs fixing' if fix else ''}",
                        "fix that row first" if fix else "it is left out with it",
                        inside.kind, "rows inside a group that needs fixing" if fix
                        else "rows inside a group or repeat left out")
            self.walk(el.get("children") or (), None, inside)
            return
        kind = el.get("type")
        if kind == "group":
            self._group(r, relevant)
        elif kind in ("repeat", "loop"):
            self._remember_repeat(el.get("children") or (), r.name)
            self.repeat_counts[r.name] = " ".join(str(r.cells.get("repeat_count") or "").split())
            problem = self.refuse(r, *REFUSED_TYPES["repeat"], topic=TOPICS["repeat"])
            self.walk(el.get("children") or (), None, problem)
        elif kind == "note":
            self._note(r, relevant)
        else:
            self._question(r, relevant)

    def _remember_repeat(self, elements: Sequence[Mapping[str, Any]], repeat: str) -> None:
        """The names of the rows inside a repeat (nested ones included), for a calculation
        that reads them."""
        for el in elements:
            if el.get("name"):
                self.in_repeat.setdefault(str(el["name"]), repeat)
            self._remember_repeat(el.get("children") or (), repeat)

    def _calculation(self, r: Row, outer: Condition | None) -> None:
        """A calculate row, left out (its value would leave the device as it is); one that
        reads a repeat's rows (a count of the household roster's members, `sum(${ind_f})`)
        says so: the repeat's answers are not collected, so neither the value nor a condition
        on it can be evaluated on the device, and the rows asked under such a condition go
        with it (ODK asks them only where it holds; asking everyone would change who is
        asked)."""
        calculation = " ".join(str(r.cells.get("calculation") or "").split())
        over = next((self.in_repeat[name] for name in _REFERENCE.findall(calculation)
                     if name in self.in_repeat), None)
        if over is None:
            over = next((self.over_repeat[name] for name in _REFERENCE.findall(calculation)
                         if name in self.over_repeat), None)
        if over is None:
            inlined = self._inlined(r, calculation, outer)
            reason, alternative = REFUSED_TYPES["calculate"]
            if inlined:
                reason = (f"{inlined}; it is not sent: where a condition compares it with a "
                          "value, the condition reads its value on the device")
            self.refuse(r, reason, alternative, topic=TOPICS["calculate"])
            return
        self.over_repeat[r.name] = over
        if self._carried(r, calculation, over):
            return
        self.refuse(r, f"a calculation over the repeat {over!r} ({quoted(calculation)}), "
                    "whose answers are not collected: it cannot be computed on the device, so "
                    "no condition on it can be evaluated (the rows ODK asks only where it "
                    "holds are left out with it: asking them of everyone would change who is "
                    "asked)", "ask what the condition needs as a question of its own (an "
                    "integer with a range for the count), or drop the condition",
                    topic=TOPICS["calculate"])

    def _carried(self, r: Row, calculation: str, over: str) -> bool:
        """A count over a repeat that a condition of the form reads (`sum(${x})`, `x` an
        `if(cond, 1, 0)` of the repeat: the MSNA's `ind_age_5_17_n`), imported as a
        disclosed integer whose value each invitation carries from the main survey's export
        (`carried = true`, docs/sensitive-module.md): ODK exports the calculation, so the
        device reads ODK's own value and the conditions on it ask whom ODK asks. Its range is
        0 to the largest roster (the max of the integer its repeat_count reads; else
        --integer-max; else DEFAULT_ROSTER_MAX, said). False (left out as before) for any
        other calculation, one no condition reads, and in a two-server survey (no disclosed
        questions there)."""
        counted = carried_count(calculation, self._calculation_cells())
        if counted is None or self.two_server or r.name not in self._read_by_conditions():
            return False
        high, source = self._roster_max(over)
        data = {"id": r.name, "text": f"{r.name} (from your interview in the main survey)",
                "type": "integer", "min": 0, "max": high, "disclosed": True, "carried": True}
        column = self._export_column(r.name)
        note = (f"a count over the repeat {over!r} ({quoted(calculation)}) that conditions "
                f"read: imported as a disclosed integer from 0 to {high} ({source}) whose "
                f"value each invitation carries from the main survey's export (carried = "
                f"true); make the codes with invites create --from-export MAIN.csv --carry "
                f"{r.name}={column} (ODK Central's column; KoboToolbox's is "
                f"{column.replace('-', '/')}, or {r.name} without group names)")
        self.notes.append(f"row {r.row} ({r.name}, {r.xls_type}): {note}")
        mapped = Question(data, r.row, r.name, r.xls_type,
                          xp.Target(r.name, "integer", {}), (),
                          comments=[f"row {r.row}: {r.xls_type} {r.name!r}: {note}"])
        self.questions.append(mapped)
        self.targets[r.name] = mapped.target
        self.carried.append(r.name)
        return True

    def _calculation_cells(self) -> dict[str, str]:
        """Each calculate row's calculation, by name (the rows inside repeats included)."""
        return {str(cells.get("name", "")).strip(): " ".join(str(cells.get("calculation")
                                                                  or "").split())
                for _, cells in self.rows.rows if cells.get("calculation")}

    def _read_by_conditions(self) -> frozenset[str]:
        """The names the relevant cells of the form's rows outside repeats read (`${name}`):
        a condition inside a repeat goes with its repeat."""
        names: set[str] = set()
        depth = 0
        for _, cells in self.rows.rows:
            kind = str(cells.get("type", "")).strip().lower().replace(" ", "_")
            if kind == "begin_repeat":
                depth += 1
            elif kind == "end_repeat":
                depth = max(0, depth - 1)
            if kind == "begin_repeat" or depth == 0:  # a repeat's own relevant: outside it
                names.update(_REFERENCE.findall(str(cells.get("relevant") or "")))
        return frozenset(names)

    def _roster_max(self, repeat: str) -> tuple[int, str]:
        """The largest count of a repeat's entries, and where it comes from."""
        counted = _REFERENCE.fullmatch(self.repeat_counts.get(repeat, ""))
        target = self.targets.get(counted.group(1)) if counted else None
        for q in self.questions:
            if target is not None and q.data.get("id") == target.id \
                    and isinstance(q.data.get("max"), int):
                return q.data["max"], (f"{repeat!r} repeats {target.id} times, an integer "
                                       f"of at most {q.data['max']}")
        if self.integer_max is not None:
            return self.integer_max, "--integer-max: the repeat's count has no range"
        return DEFAULT_ROSTER_MAX, ("a default: the repeat's count has no range; give its "
                                    "repeat_count integer a constraint, or --integer-max")

    def _export_column(self, name: str) -> str:
        """The column ODK Central's export gives the row: its groups' names and its own,
        joined by '-'."""
        path: list[str] = []
        for _, cells in self.rows.rows:
            kind = str(cells.get("type", "")).strip().lower().replace(" ", "_")
            row_name = str(cells.get("name", "")).strip()
            if kind in ("begin_group", "begin_repeat"):
                path.append(row_name)
            elif kind in ("end_group", "end_repeat") and path:
                path.pop()
            elif row_name == name:
                break
        return "-".join([*path, name])

    def _inlined(self, r: Row, calculation: str, outer: Condition | None) -> str:
        """A calculation `if(cond, a, b)` (a and b constants) whose condition translates on
        the questions imported so far, always computed (no relevant, in no conditional
        group): kept for the conditions that compare it with a value (xp.inline), and what is
        said of it; '' for any other."""
        found = xp.inlinable(calculation)
        if found is None or r.cells.get("relevant") or (outer is not None
                                                         and outer.text is not None):
            return ""
        text, when_true, when_false = found
        try:
            tree = xp.inline(xp.parse(text), self.calculations)
            translate(text, self.targets, self.left_out, self.rows.later, self.calculations)
        except xp.ExpressionError:
            return ""
        self.calculations[r.name] = xp.Inlined(tree, when_true, when_false)
        return f"its if() reads only questions imported before it ({quoted(text)})"

    def _selected(self, el: Mapping[str, Any], r: Row) -> bool:
        """Whether the row is imported: no selection, inside a selected group, selected
        itself, or a group with a selected row somewhere inside."""
        if not self.selection.active or self._picked:
            return True
        if self.selection.picks(r.cells, r.name, holds_rows(el)):
            return True
        return holds_rows(el) and self._holds_picked(el.get("children") or ())

    def _holds_picked(self, elements: Sequence[Mapping[str, Any]]) -> bool:
        """Whether a row among these elements (or inside them) is selected (by name: the
        rows' cells are read when the walk takes them)."""
        if self._picked_names is None:
            self._picked_names = frozenset(
                str(cells.get("name", "")).strip() for _, cells in self.rows.rows
                if self.selection.picks(cells, str(cells.get("name", "")).strip(), begins(cells)))
        return any(str(el.get("name", "")) in self._picked_names
                   or self._holds_picked(el.get("children") or ()) for el in elements)

    def _leave_outside(self, el: Mapping[str, Any], r: Row) -> None:
        """The row, and every row inside it, outside the selection: counted, and left out for
        the conditions that read it."""
        self.outside.append(r.row)
        if r.name:
            self.left_out[r.name] = self.selection.outside(r.row, r.name, r.xls_type)
        for child in el.get("children") or ():
            inner = self._row(child)
            if inner is not None:
                self._leave_outside(child, inner)

    def _row(self, el: Mapping[str, Any]) -> Row | None:
        """The element's survey-sheet row, with pyxform's reading of its relevant,
        constraint, required and appearance; None for an element pyxform added."""
        name = str(el.get("name", ""))
        taken = self.rows.take(name)
        if taken is None:
            return None
        row, raw_cells = taken
        bind, control = el.get("bind") or {}, el.get("control") or {}
        cells = {**raw_cells, **{key: value for key, value in (
            ("relevant", bind.get("relevant")), ("constraint", bind.get("constraint")),
            ("required", bind.get("required")), ("appearance", control.get("appearance")))
            if value is not None}}
        return Row(el, row, name, str(raw_cells.get("type", el.get("type", ""))), cells)

    def _group(self, r: Row, outer: Condition | None) -> None:
        """A display group's questions, under its condition; a group that collects, or whose
        condition cannot be translated, is refused with every row inside."""
        children = r.el.get("children") or ()
        counted = [column for column, value in r.cells.items() if not blank(value)
                   and str(column).split("::", 1)[0].strip() == "repeat_count"]
        if counted:  # pyxform keeps a begin_group a group: ODK repeats only a repeat
            self.notes.append(f"row {r.row} ({r.name}, {r.xls_type}): its repeat_count is "
                              "ignored, as ODK ignores it: a begin_group with repeat_count is "
                              "a plain group (pyxform writes no repeat; jr:count counts a "
                              "repeat's entries only)")
        bad = collecting_cell({k: v for k, v in r.cells.items() if k not in counted})
        if bad is not None:
            self.walk(children, None, self.refuse(r, f"the group {bad[0]}", bad[1],
                                                  topic="groups that compute or repeat"))
            return
        expression = _choice_filter_cell(r)
        if expression:  # pyxform drops it: ODK shows every choice of the selects inside
            reason, alternative, topic = choice_filter.ignored(expression, r.xls_type, True)
            self.checks.append(RowProblem(r.row, r.name, r.xls_type, reason, alternative,
                                          CHECK, topic))
        condition = outer
        text = r.cells.get("relevant")
        if text:
            try:
                own = self.relevant(str(text))
                condition = Condition.both(outer, own)
            except xp.ExpressionError as exc:
                mistake, topic, alternative = refusal_of(exc)
                problem = self.refuse(r, f"relevant {quoted(text)}: {exc.message}",
                                      alternative, FIX if mistake else UNSUPPORTED, topic)
                if mistake and not self.skip_unsupported:  # the import stops on it: check
                    self.walk(children, outer, None)  # the rows inside for their own
                else:  # problems, so all are said at once; else they go with the group
                    self.walk(children, None, problem)
                return
            if own.absent:
                self.checks.append(RowProblem(
                    r.row, r.name, r.xls_type, f"its relevant {quoted(text)} names a choice "
                    f"its question does not have: {'; '.join(own.absent)}; imported so (for "
                    "every question inside)", "correct the condition and import again",
                    CHECK, "conditions that name what the form does not have"))
        label, _ = self.languages.text(r.el.get("label"))
        said = f"its label {label!r} is not shown (ldpsurvey has no sections); " if label else ""
        added = "its relevant is added to each question inside; " if text else ""
        if text:
            added += "".join(f"its relevant {quoted(text)}: {said}; " for said in own.rewritten)
        self.notes.append(f"row {r.row} ({r.name}, {r.xls_type}): a display group: {said}"
                          f"{added}its questions are imported")
        self.walk(children, condition, None)

    def _note(self, r: Row, relevant: Condition | None) -> None:
        """A note before the first question (always shown, with text) joins the
        introduction; any other is said to be left out."""
        base, _ = self.languages.text(r.el.get("label"))
        shown = f"{base!r}" if base else "(no text)"
        conditional = relevant is not None or bool(r.cells.get("relevant"))
        if not self.seen_question and not conditional and base:
            self.intro.append(r.el.get("label"))
            self.notes.append(f"row {r.row} ({r.name}, note): before the first question, it "
                              "becomes the survey's introduction (description)")
            return
        why = "shown only under a condition" if conditional else "between questions"
        self.notes.append(f"row {r.row} ({r.name}, note): a note {why} is not shown (ldpsurvey "
                          f"has no display-only text between questions; put it in a question's "
                          f"hint): {shown}")
        self.left_out[r.name] = RowProblem(r.row, r.name, "note", "a note", "not imported")
        self.hidden_notes += 1

    def _question(self, r: Row, outer: Condition | None) -> None:
        """A question row, mapped or refused."""
        self.seen_question = True
        said: list[str] = []
        if from_file(r.el):  # its choices from an attached file (media.py), or refused
            try:
                path, found = self.media.attachment(r.el)
            except Refusal as refusal:
                self.refuse(r, refusal.reason, refusal.alternative, refusal.kind,
                            refusal.topic)
                return
            r = replace(r, el={**r.el, "list_name": path.name, "choices": found.choices})
            said = self._attached(path, found)
        kind = category(r.el)
        if kind in UNITS_BY_XLSFORM_TYPE:  # a question type imports it (xlsform_types)
            self._mapped(r, kind, outer, said)
        elif kind == "calculate":
            self._calculation(r, outer)
        elif kind in REFUSED_TYPES:
            self.refuse(r, *REFUSED_TYPES[kind], topic=TOPICS[kind])
        else:
            self.refuse(r, f"the XLSForm type {r.el.get('type')!r} has no private counterpart "
                        "in ldpsurvey", "use select_one, select_multiple or integer with a "
                        "range", topic="other types")

    def _attached(self, path: Path, found: Attachment) -> list[str]:
        """What is said of a row whose choices are read from an attached file, once it is
        imported: in its TOML comment and the notes."""
        said = [f"its {len(found.choices)} choice(s) are read from the attached file "
                f"{path.name} (sha256 {found.sha256}) and signed with the survey: nothing is "
                "fetched when it is answered"]
        if path.suffix.lower() == ".geojson":
            said[0] += "; the features' geometry is not read (a list is shown, not a map)"
        unknown = [lang for lang in found.languages if lang not in self.languages.tags]
        if unknown:
            said.append(f"{path.name}'s label columns in {', '.join(map(repr, unknown))}, a "
                        "language the form does not have, are not read")
        return said

    def _mapped(self, r: Row, kind: str, outer: Condition | None,
                said: Sequence[str] = ()) -> None:
        """A row of an XLSForm type a question type imports: its question (`said` in its
        comments and the notes once it is kept), or refused."""
        if self._read_choices is None:  # the choices the form's conditions read (special.py)
            self._read_choices = read_choices(cells.get("relevant")
                                              for _, cells in self.rows.rows)
        context = Context(self.languages, self.two_server, self.default_epsilon, self.notes,
                          self.relevant, self.shows, self._read_choices, self.integer_max)
        try:
            mapped = question(r, kind, outer, context)
        except Refusal as refusal:
            self.refuse(r, refusal.reason, refusal.alternative, refusal.kind, refusal.topic)
            return
        if not self._choice_filter(r, mapped):
            return
        constraint = str(r.cells.get("constraint") or "")
        if constraint and mapped.target.unit.overlapping:  # a select_multiple's (exclusivity.py)
            exclusive = split(constraint, r.name)
            if exclusive is not None and not self._exclusive(r, mapped, exclusive.exclusive):
                return
        mapped.comments += said
        self.notes += [f"row {r.row} ({r.name}, {r.xls_type}): {line}" for line in said]
        self.questions.append(mapped)
        self.targets[r.name] = mapped.target
        if mapped.pipes:
            self.piped.append(r.name)

    def _exclusive(self, r: Row, mapped: Question, names: tuple[str, ...]) -> bool:
        """A mapped question's exclusivity constraint (so a select_multiple: exclusivity.py)
        as its `exclusive` options (their labels); a choice it names that the question does
        not have is dropped (ODK reads it as never ticked), the row listed to check; left
        out, said and counted, in a two-server survey, which has no exclusive options (yet).
        A question of one answer (its options do not overlap) has none to exclude: its unit
        dropped the constraint, saying so (questions.py)."""
        if not mapped.target.unit.overlapping or not names:
            return True
        labels = mapped.target.options
        missing = [n for n in names if n not in labels]
        if missing:  # ODK reads selected(., 'x') as false: the rest stay exclusive
            near = [f"{n!r} (did you mean {m!r}?)" if (m := xp.near_match(n, labels)) else
                    repr(n) for n in missing]
            names = tuple(n for n in names if n in labels)
            kept = (f"{', '.join(map(repr, names))} ticked alone" if names else
                    "no option is exclusive")
            reason = (f"its exclusivity constraint names {', '.join(near)}, not a choice of "
                      f"this question (its choices: {', '.join(map(repr, labels))}); ODK reads "
                      f"selected(., 'x') of a choice it lacks as false, so imported as ODK runs "
                      f"it: {kept}")
            mapped.checks.append((reason, "correct the constraint and import again",
                                  "constraints that name what the form does not have"))
            mapped.comments.append(f"CHECK: {reason}")
            if not names:
                return True
        if self.two_server:
            self.exclusive_pending.append(r.name)
            self.notes.append(f"row {r.row} ({r.name}, {r.xls_type}): its constraint makes "
                              f"{', '.join(map(repr, names))} exclusive (ticked alone); a "
                              "two-server survey has no exclusive options yet, so the question "
                              "is imported without it")
            return True
        mapped.data["exclusive"] = [labels[n] for n in names]
        self.exclusive.append(r.name)
        return True

    def _choice_filter(self, r: Row, mapped: Question) -> bool:
        """A mapped question's choice_filter as its `filter` (choice_filter.py: the options
        shown follow an earlier answer); refused (False) when it cannot be one."""
        expression = _choice_filter_cell(r)
        if not expression:
            return True
        if not r.el.get("list_name"):  # no choices to filter: pyxform drops it, ODK too
            reason, alternative, topic = choice_filter.ignored(expression, r.xls_type, False)
            mapped.checks.append((reason, alternative, topic))
            mapped.comments.append(f"CHECK: {reason}")
            return True
        try:
            by = self.targets[self.shows(choice_filter.reads(expression))]
            mapped.data["filter"] = choice_filter.option_filter(
                expression, mapped.target, r.el.get("choices") or (), by)
        except Refusal as refusal:
            self.refuse(r, refusal.reason, refusal.alternative, refusal.kind, refusal.topic)
            return False
        mapped.comments.append(f"choice_filter {quoted(expression)}: the options shown "
                               f"follow the answer to {by.id!r}; randomized over all of them")
        return True

    def relevant(self, text: str) -> Condition:
        """A relevant cell on the questions imported so far."""
        return translate(text, self.targets, self.left_out, self.rows.later, self.calculations)

    def shows(self, name: str) -> str:
        """The question id a piped text's `${name}` shows (a question imported before the
        row); Refusal saying why otherwise (conditions.piped_refusal)."""
        target = self.targets.get(name)
        if target is not None:
            return target.id
        mistake, reason, alternative, topic = piped_refusal(name, self.left_out,
                                                            self.rows.later)
        raise Refusal(FIX if mistake else UNSUPPORTED, reason, alternative, topic)

    def refuse(self, r: Row, reason: str, alternative: str, kind: str = UNSUPPORTED,
               topic: str = "") -> RowProblem:
        """The row refused: listed, and left out for the conditions that read it."""
        problem = RowProblem(r.row, r.name, r.xls_type, reason, alternative, kind, topic)
        self.problems.append(problem)
        if r.name:
            self.left_out[r.name] = problem
        return problem


def _choice_filter_cell(r: Row) -> str:
    """The row's choice_filter, its spaces and line breaks made single spaces ("": none)."""
    return " ".join(str(r.cells.get("choice_filter") or "").split())
