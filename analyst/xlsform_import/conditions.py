"""`relevant` cells as skip logic (contract 3): a translated condition with the question ids
it reads (a question is left out with any it reads), a group's condition joined to each
question's inside it, and what is said of a reference to a question that cannot be read."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .. import xlsform_expressions as xp
from .errors import RowProblem


@dataclass(frozen=True)
class Condition:
    """A translated relevant (None: always) and the question ids it reads."""

    text: str | None
    reads: tuple[str, ...] = ()

    @staticmethod
    def both(outer: Condition | None, inner: Condition) -> Condition:
        """`outer and inner` (a group's condition and a question's inside it)."""
        if outer is None or outer.text is None:
            return inner if outer is None else Condition(inner.text, outer.reads + inner.reads)
        if inner.text is None:
            return Condition(outer.text, outer.reads + inner.reads)
        return Condition(f"({outer.text}) and ({inner.text})",
                         tuple(dict.fromkeys(outer.reads + inner.reads)))


def translate(text: str, targets: Mapping[str, xp.Target], left_out: Mapping[str, RowProblem],
              later: Callable[[str], bool]) -> Condition:
    """An XLSForm relevant on the questions imported so far (`targets`, by name);
    xp.ExpressionError saying why it cannot be translated, naming a reference to a row left
    out or `later` in the form."""
    tree = xp.parse(text)
    reads: list[str] = []

    def lookup(name: str) -> xp.Target:
        target = targets.get(name)
        if target is None:
            raise xp.ExpressionError(_unreadable(name, left_out, later))
        reads.append(target.id)
        return target

    condition = xp.translate_relevant(tree, lookup)
    return Condition(condition, tuple(dict.fromkeys(reads)))


def _unreadable(name: str, left_out: Mapping[str, RowProblem], later: Callable[[str], bool]
                ) -> str:
    if name in left_out:
        left = left_out[name]
        return f"it reads ${{{name}}} (row {left.row}, {left.type}), which is not imported"
    if later(name):
        return (f"it reads ${{{name}}}, which comes later in the form: ldpsurvey conditions "
                "read earlier questions only")
    return f"${{{name}}} is not a question of this form"
