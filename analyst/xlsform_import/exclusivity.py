"""Exclusivity constraints of a select_multiple: `not(selected(., 'none') and
count-selected(.) > 1)` ("None of these" cannot be ticked with anything else), with several
options (`not((selected(., 'dnk') or selected(., 'pnta')) and count-selected(.) > 1)`, or one
`not(...)` per option joined by `and`), `.` or the question's own `${name}`, and beside
count bounds (`count-selected(.) <= 3`). 101 rows of the IMPACT MSNA form carry one.

`split` recognises them and gives the options made exclusive and the rest of the constraint
(the count bounds, read by cells.multiselect_bounds as before). A constraint that looks like
one but, as written, forbids an option outright (`not(selected(., 'a') or selected(., 'b')
and count-selected(.) > 1)`: `and` binds before `or`, so ODK never lets anyone tick 'a') is
a mistake in the form, which ODK runs as written: `forbidden` names such options, and the
import keeps ODK's meaning (the option is not offered, 'b' is exclusive) and lists the row
to check (docs/xlsform.md, "Imported as ODK runs them")."""

from __future__ import annotations

from dataclasses import dataclass

from . import expressions as xp

TOPIC = "exclusivity constraints written wrongly"
# What the import says of such a constraint: how to write the exclusivity that was meant.
PARENTHESES = ("add parentheses if 'a' was meant to be ticked alone: not((selected(., 'a') or "
               "selected(., 'b')) and count-selected(.) > 1)")


@dataclass(frozen=True)
class Split:
    """An exclusivity constraint's options (choice names, in the order written), the options
    it forbids outright (written without parentheses: never allowed in ODK), and the rest of
    the constraint (None: nothing else)."""

    exclusive: tuple[str, ...]
    rest: xp.Node | None
    forbidden: tuple[str, ...] = ()


def _conjuncts(node: xp.Node) -> list[xp.Node]:
    if node.kind == "and":
        return [item for sub in node.items for item in _conjuncts(sub)]
    return [node]


def _disjuncts(node: xp.Node) -> list[xp.Node]:
    if node.kind == "or":
        return [item for sub in node.items for item in _disjuncts(sub)]
    return [node]


def _itself(node: xp.Node, name: str) -> bool:
    """`.`, or a reference to the question's own name."""
    return node.kind == "self" or (node.kind == "ref" and node.name == name)


def _ticked(node: xp.Node, name: str) -> str | None:
    """The option of `selected(., 'x')` on the question itself, None for anything else."""
    if node.kind == "call" and node.name == "selected" and len(node.items) == 2:
        target, option = node.items
        if _itself(target, name) and option.kind == "str":
            return str(option.value)
    return None


def _more_than_one(node: xp.Node, name: str) -> bool:
    """`count-selected(.) > 1` (or `>= 2`, either way round)."""
    if node.kind != "cmp":
        return False
    left, right, op = node.items[0], node.items[1], node.op
    if left.kind == "num":
        left, right = right, left
        op = {">": "<", "<": ">", ">=": "<=", "<=": ">="}.get(op, op)
    counts = (left.kind == "call" and left.name == "count-selected" and len(left.items) == 1
              and _itself(left.items[0], name))
    return counts and right.kind == "num" and (op, right.value) in ((">", 1), (">=", 2))


def _options(node: xp.Node, name: str) -> tuple[str, ...] | None:
    """The options of one `not(ticked and count > 1)` conjunct, None if it is not one."""
    if node.kind != "not":
        return None
    inner = _conjuncts(node.items[0])
    if len(inner) != 2:
        return None
    for count, ticked in ((inner[0], inner[1]), (inner[1], inner[0])):
        if _more_than_one(count, name):
            names = [_ticked(d, name) for d in _disjuncts(ticked)]
            if names and all(n is not None for n in names):
                return tuple(n for n in names if n is not None)
    return None


def _forbidden(node: xp.Node, name: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """(the options forbidden outright, the options made exclusive) of a
    `not(selected(., 'a') or ... selected(., 'b') and count > 1)` ('and' binds before 'or':
    not(a or (b and count > 1)) forbids 'a' and makes 'b' exclusive), None for anything
    else."""
    if node.kind != "not" or node.items[0].kind != "or":
        return None
    parts = _disjuncts(node.items[0])
    exclusive = [found for p in parts if p.kind == "and"
                 and (found := _options(xp.Node("not", (p,)), name)) is not None]
    if not exclusive or len(exclusive) != sum(p.kind == "and" for p in parts):
        return None
    bare = [_ticked(p, name) for p in parts if p.kind != "and"]
    if not bare or any(b is None for b in bare):
        return None
    return (tuple(dict.fromkeys(b for b in bare if b is not None)),
            tuple(dict.fromkeys(o for options in exclusive for o in options)))


def split(constraint: str, name: str) -> Split | None:
    """The exclusivity part of a select_multiple's constraint, None if it has none (or
    cannot be read: the caller says why); the options one written without parentheses
    forbids outright are in `forbidden`, as ODK runs it."""
    try:
        tree = xp.parse(constraint)
    except xp.ExpressionError:
        return None
    exclusive: list[str] = []
    forbidden: list[str] = []
    rest: list[xp.Node] = []
    for conjunct in _conjuncts(tree):
        options = _options(conjunct, name)
        if options is not None:
            exclusive += [o for o in options if o not in exclusive]
            continue
        wrongly = _forbidden(conjunct, name)
        if wrongly is not None:
            forbidden += [o for o in wrongly[0] if o not in forbidden]
            exclusive += [o for o in wrongly[1] if o not in exclusive]
            continue
        rest.append(conjunct)
    if not exclusive and not forbidden:
        return None
    exclusive = [o for o in exclusive if o not in forbidden]  # never ticked, alone or not
    left = None if not rest else rest[0] if len(rest) == 1 else xp.Node("and", tuple(rest))
    return Split(tuple(exclusive), left, tuple(forbidden))


def holds_for_one_answer(constraint: str, name: str) -> bool:
    """Whether a constraint holds for every answer of a single-choice question: each of its
    `and`-joined parts is `not(... and count-selected(.) > 1 and ...)`, which a question that
    takes one choice never breaks (an exclusivity constraint kept on a select_one, as in a
    template written for a select_multiple)."""
    try:
        tree = xp.parse(constraint)
    except xp.ExpressionError:
        return False
    return all(part.kind == "not" and any(_more_than_one(item, name)
                                          for item in _conjuncts(part.items[0]))
               for part in _conjuncts(tree))
