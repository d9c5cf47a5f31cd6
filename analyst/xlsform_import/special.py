"""Special values in an XLSForm: "don't know" and "prefer not to say" as a form writes them,
mapped onto a question's `special` values (docs/survey-definition.md), which are randomized
with the answers and estimated apart ("among those who gave an answer").

- A select_one's choices named like dk / dnk / dont_know (don't know) or refuse / refused /
  pnta / prefer_not (prefer not to say) leave its options and become its special values
  (their label as the form gives it, translations kept), when at least two options remain.
  A select_multiple keeps them as options: its `exclusive` options are its special values.
- An integer's constraint that admits codes beside its range, `. = -999 or (. >= 0 and . <= 20)`,
  keeps the range and makes each code a special value: -999, -99 and -9 read "Don't know",
  -888, -88 and -8 "Prefer not to say" (the usual conventions; the TOML comment says so, for
  a designer whose codes mean something else), any other code keeps its number as its label.
A two-server survey takes no special values yet: there the choices stay options and the codes
are refused with the constraint. A choice that a condition of the form reads
(`selected(${q}, 'dnk')`) stays an option too: ldpsurvey's conditions compare options (a
condition on a special value is not in its language yet), so the follow-up keeps its condition.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from . import expressions as xp

DONT_KNOW = "dont_know"
REFUSED = "refused"
_DONT_KNOW_NAMES = frozenset({"dk", "dnk", "dont_know", "do_not_know", "dontknow", "don_t_know",
                              "idk", "not_know", "unknown_dk"})
_REFUSED_NAMES = frozenset({"refuse", "refused", "refusal", "pnta", "prefer_not",
                            "prefer_not_to_say", "prefer_not_answer", "prefer_not_to_answer",
                            "prefer_no_answer", "no_answer", "decline", "declined",
                            "decline_to_answer", "rta"})
_CODES = {-999: (DONT_KNOW, "Don't know"), -99: (DONT_KNOW, "Don't know"),
          -9: (DONT_KNOW, "Don't know"), -888: (REFUSED, "Prefer not to say"),
          -88: (REFUSED, "Prefer not to say"), -8: (REFUSED, "Prefer not to say")}
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")


def special_choice(name: str) -> str | None:
    """The special value a choice name says (DONT_KNOW, REFUSED), or None."""
    key = name.strip().lower().replace("-", "_").replace("'", "_")
    if key in _DONT_KNOW_NAMES:
        return DONT_KNOW
    if key in _REFUSED_NAMES:
        return REFUSED
    return None


_READS = (re.compile(r"selected\(\s*\$\{([^}]+)\}\s*,\s*['\"]([^'\"]*)['\"]\s*\)"),
          re.compile(r"\$\{([^}]+)\}\s*!?=\s*['\"]([^'\"]*)['\"]"))


def read_choices(relevants: Iterable[Any]) -> frozenset[tuple[str, str]]:
    """(question name, choice name) of every choice the form's conditions read."""
    found: set[tuple[str, str]] = set()
    for text in relevants:
        for pattern in _READS:
            found.update((q.strip(), c.strip()) for q, c in pattern.findall(str(text or "")))
    return frozenset(found)


def split_choices(labels: Mapping[str, str], read: Collection[str] = ()
                  ) -> tuple[dict[str, str], dict[str, str]]:
    """(the options' choices, the special values {name: label}) of a select_one's list: the
    choice's own name where it is a special value's name, else DONT_KNOW or REFUSED; nothing
    split when fewer than two options would remain or two choices say the same; a choice a
    condition reads (`read`) stays an option."""
    kept: dict[str, str] = {}
    special: dict[str, str] = {}
    for name, label in labels.items():
        kind = special_choice(name)
        key = name if set(name) <= _NAME_CHARS and name else kind
        if kind is None or key in special or name in read:
            kept[name] = label
        else:
            special[str(key)] = label
    if len(kept) < 2 or not special:
        return dict(labels), {}
    return kept, special


def split_codes(constraint: str) -> tuple[str, dict[str, str], list[int]]:
    """(the constraint without its codes, the special values, the codes) of an integer's
    constraint `range or . = c or ...`; the constraint unchanged and no special values when it
    has no such codes or cannot be read (the range's own refusal then says why)."""
    if not constraint:
        return constraint, {}, []
    try:
        tree = xp.parse(constraint)
    except xp.ExpressionError:
        return constraint, {}, []
    if tree.kind != "or":
        return constraint, {}, []
    codes: list[int] = []
    rest: list[xp.Node] = []
    for item in tree.items:
        code = _code(item)
        if code is None:
            rest.append(item)
        else:
            codes.append(code)
    if not codes or len(rest) != 1:
        return constraint, {}, []
    special: dict[str, str] = {}
    for code in codes:
        name, label = _CODES.get(code, (f"code_{abs(code)}", str(code)))
        if name in special:
            name, label = f"code_{abs(code)}", str(code)
        special[name] = label
    return _text(rest[0]), special, codes


def _code(node: xp.Node) -> int | None:
    """c of `. = c` (either side), else None."""
    if node.kind != "cmp" or node.op != "==":
        return None
    left, right = node.items
    if right.kind == "self":
        left, right = right, left
    if left.kind != "self" or right.kind != "num":
        return None
    value: Any = right.value
    if isinstance(value, float) and not value.is_integer():
        return None
    return int(value)


def _text(node: xp.Node) -> str:
    """A range's bounds written back (`. >= a and . <= b`), for the range's own reading."""
    items = node.items if node.kind == "and" else (node,)
    parts = []
    for item in items:
        if item.kind != "cmp":
            return "(unreadable)"
        left, right = item.items
        side = lambda n: "." if n.kind == "self" else str(n.value)  # noqa: E731
        parts.append(f"{side(left)} {item.op} {side(right)}")
    return " and ".join(parts)
