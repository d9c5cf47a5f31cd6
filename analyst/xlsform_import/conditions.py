"""`relevant` cells as skip logic (contract 3): a translated condition with the question ids
it reads (a question is left out with any it reads), a group's condition joined to each
question's inside it, and what is said of a reference to a question that cannot be read."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from . import expressions as xp
from .errors import FIX, RowProblem
from .selection import TOPIC as OUTSIDE

# What the import says of a relevant it cannot otherwise translate: (topic, alternative).
_UNTRANSLATABLE = ("conditions that cannot be translated", "write it with " + xp.SUPPORTED)


class ReadsLeftOut(xp.ExpressionError):
    """A condition reading a row that is not imported (a note, a row left out): the row
    with the condition goes with it."""


class WaitsOnFix(xp.FormMistake):
    """A condition reading a row that needs fixing: it is read once that row is fixed."""


def refusal_of(exc: xp.ExpressionError) -> tuple[bool, str, str]:
    """(needs the designer's fix, topic, alternative) of a condition the import cannot
    translate: a mistake (a choice that does not exist, a row that needs fixing) is fixed by
    the designer; a reference to a row left out goes with it; anything else is rewritten."""
    if isinstance(exc, WaitsOnFix):
        return True, "conditions on rows that need fixing", "fix that row first; this " \
            "condition is then read"
    if isinstance(exc, xp.FormMistake):
        return True, "conditions that name what the form does not have", "correct the condition"
    if isinstance(exc, ReadsLeftOut):
        return False, "conditions on rows left out", "it is left out with that row (import " \
            "that row, or write the condition without it)"
    return (False, *_UNTRANSLATABLE)


@dataclass(frozen=True)
class Condition:
    """A translated relevant (None: always), the question ids it reads, what it reads as
    ODK runs it though the form is wrong there (`absent`: a term naming a choice its question
    does not have, read as XPath reads it; said for the designer to check), and its sums of
    `if(C, 1, 0)` written without arithmetic (`rewritten`: said in the notes)."""

    text: str | None
    reads: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()
    rewritten: tuple[str, ...] = ()

    @staticmethod
    def both(outer: Condition | None, inner: Condition) -> Condition:
        """`outer and inner` (a group's condition and a question's inside it); what the
        outer one reads as ODK runs it, or rewrote, was said of the group, so only the
        inner's is kept."""
        said = {"absent": inner.absent, "rewritten": inner.rewritten}
        if outer is None or outer.text is None:
            return inner if outer is None else Condition(inner.text, outer.reads + inner.reads,
                                                         **said)
        if inner.text is None:
            return Condition(outer.text, outer.reads + inner.reads, **said)
        return Condition(f"({outer.text}) and ({inner.text})",
                         tuple(dict.fromkeys(outer.reads + inner.reads)), **said)


def translate(text: str, targets: Mapping[str, xp.Target], left_out: Mapping[str, RowProblem],
              later: Callable[[str], bool],
              calculations: Mapping[str, xp.Inlined] | None = None) -> Condition:
    """An XLSForm relevant on the questions imported so far (`targets`, by name), a
    comparison of a calculation in `calculations` with a constant read as its value on the
    device (xp.inline); xp.ExpressionError saying why it cannot be translated, naming a
    reference to a row left out or `later` in the form."""
    tree = xp.inline(xp.parse(text), calculations or {})
    reads: list[str] = []

    def lookup(name: str) -> xp.Target:
        target = targets.get(name)
        if target is None:
            raise _unreadable(name, left_out, later)
        reads.append(target.id)
        return target

    absent: list[str] = []
    rewritten: list[str] = []
    condition = xp.translate_relevant(tree, lookup, absent, rewritten)
    return Condition(condition, tuple(dict.fromkeys(reads)), tuple(dict.fromkeys(absent)),
                     tuple(dict.fromkeys(rewritten)))


def piped_refusal(name: str, left_out: Mapping[str, RowProblem], later: Callable[[str], bool]
                  ) -> tuple[bool, str, str, str]:
    """(needs the designer's fix, reason, alternative, topic) of a `${name}` in a label, hint
    or choice label (a piped text, shared/piping.py) that is no question imported before it."""
    shows = f"its text shows ${{{name}}}"
    if name in left_out:
        left = left_out[name]
        where = f"{shows} (row {left.row}, {left.type}), which"
        if left.topic == OUTSIDE:
            return (False, f"{where} is outside the selection (--group, --marked)",
                    f"select that row too, or write the text without ${{{name}}}",
                    "texts that show a row left out")
        if left.kind == FIX:
            return (True, f"{where} needs fixing", "fix that row first; this text then shows "
                    "its answer", "texts that show a row that needs fixing")
        return (False, f"{where} is not imported (a piped text shows an earlier question's "
                "answer)", f"it is left out with that row (import that row, or write the "
                f"text without ${{{name}}})", "texts that show a row left out")
    if later(name):
        return (False, f"{shows}, which comes later in the form: a piped text shows an "
                "earlier answer only", f"move ${{{name}}} before this row, or write the text "
                "without it", "texts that show a later answer")
    return (True, f"{shows}, which is not a question of this form", "correct the name",
            "texts that name what the form does not have")


def _unreadable(name: str, left_out: Mapping[str, RowProblem], later: Callable[[str], bool]
                ) -> xp.ExpressionError:
    if name in left_out:
        left = left_out[name]
        if left.topic == OUTSIDE:
            return ReadsLeftOut(f"it reads ${{{name}}} (row {left.row}, {left.type}), which is "
                                "outside the selection (--group, --marked)")
        if left.kind == FIX:
            return WaitsOnFix(f"it reads ${{{name}}} (row {left.row}, {left.type}), which "
                              "needs fixing")
        return ReadsLeftOut(f"it reads ${{{name}}} (row {left.row}, {left.type}), which is "
                            f"not imported ({left.reason})")
    if later(name):
        return xp.ExpressionError(f"it reads ${{{name}}}, which comes later in the form: "
                                  "ldpsurvey conditions read earlier questions only")
    return xp.FormMistake(f"${{{name}}} is not a question of this form")
