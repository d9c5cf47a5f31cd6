"""XLSForm expressions (`relevant`, `constraint`) read into a small tree, and translated.

XLSForm writes conditions in XPath with `${name}` references: `${used} = 'yes'`,
`selected(${subs}, 'cannabis')`, `count-selected(${subs}) >= 2`, `not(${age} > 30)`, joined by
`and`/`or`. This module reads the subset that has a meaning in ldpsurvey and refuses the rest
by name (`ExpressionError`, whose message says what is not supported): arithmetic, paths,
and every function other than selected(), count-selected(), not(), true() and false(). The one
sum it reads is of indicators, `if(C, 1, 0) + if(D, 1, 0) + ...` (`if(C, 0, 1)`: `not C`),
which counts the conditions that hold; compared with a number it is rewritten exactly without
arithmetic where it can be (at least one holds: `or`; none; all: `and`; not all) and refused
otherwise (`>= 2`).

`translate_relevant` writes a tree in ldpsurvey's condition language (contract 3,
shared/conditions.py) with the same value on every answer, the XLSForm empty value included:
a question that was not asked or not answered is '' in XPath, and every comparison with it is
false except `!=` (true), count-selected() of it is 0; contract 3 has exactly that rule. So
`${used} = 'no'` becomes `used == false` (false when `used` was not asked), never `not used`.
A select_one compared by order with a number (`${freq} >= 3`, numeric choice names) becomes
`freq in [...]` listing the options whose names satisfy it. `range_of` and `count_bounds` read
the constraints ldpsurvey keeps: a range on an integer (`. >= 0 and . <= 30`) and a bound on the
number of options checked (`count-selected(.) <= 3`).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from ldpsurvey.shared.errors import LdpSurveyError
from ldpsurvey.shared.question_types import QuestionType, unit_for

MAX_EXPRESSION = 2000  # characters (a condition's bound in ldpsurvey)
MAX_DEPTH = 32
_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<ref>\$\{(?P<name>[^}\s]*)\})
  | (?P<str>'[^']*'|"[^"]*")
  | (?P<num>-?\d+(?:\.\d+)?|-?\.\d+)
  | (?P<op>==|!=|<=|>=|=|<|>|\(|\)|,|\.\.|\.|\+|\*|-|\||/|\[|\]|@)
  | (?P<word>[A-Za-z_][\w:.-]*)
""", re.X)
_COMPARE = {"=": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_FLIP = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
SUPPORTED = ("=, !=, <, <=, >, >=, and, or, not(), selected(), count-selected(), true(), "
             "false(), a sum of if(condition, 1, 0) compared with a number")
_ARITHMETIC = "arithmetic, paths and predicates are not supported"


class ExpressionError(LdpSurveyError):
    """An XLSForm expression that has no ldpsurvey counterpart; the message says why."""

    code = "unsupported_expression"


class FormMistake(ExpressionError):
    """An expression that is wrong in XLSForm too (it names a choice the question does not
    have, e.g. 'Yes' for the choice yes: ODK would never match it): the row needs the
    designer's fix and is never left out quietly."""

    code = "expression_mistake"


@dataclass(frozen=True)
class Node:
    """`kind`: or/and (items), not (items[0]), cmp (op, items = (left, right)), ref (name),
    self (`.`), str/num (value), call (name, items = args), bool (value), count (items: the
    conditions of a sum of indicators `if(C, 1, 0) + ...`, whose value is how many hold)."""

    kind: str
    items: tuple[Node, ...] = ()
    op: str = ""
    name: str = ""
    value: Any = None


def parse(text: str) -> Node:
    """The tree of an XLSForm expression; ExpressionError for what it cannot read."""
    if len(text) > MAX_EXPRESSION:
        raise ExpressionError(f"longer than {MAX_EXPRESSION} characters")
    tokens = _tokens(text)
    parser = _Parser(tokens)
    node = parser.or_expr(0)
    if parser.peek() is not None:
        raise ExpressionError(f"unexpected {parser.peek()[1]!r}")
    return node


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(text):
        m = _TOKEN.match(text, i)
        if m is None:
            raise ExpressionError(f"unexpected character {text[i]!r}")
        i = m.end()
        kind = m.lastgroup
        if kind == "space":
            continue
        if kind == "name":  # the inner group of ref matched last
            kind = "ref"
        value = m.group("name") if kind == "ref" else m.group(kind)
        out.append((kind, value))
    return out


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self.tokens = tokens
        self.i = 0

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        token = self.peek()
        if token is None:
            raise ExpressionError("the expression ends too early")
        self.i += 1
        return token

    def word(self, word: str) -> bool:
        token = self.peek()
        return token is not None and token[0] == "word" and token[1] == word

    def or_expr(self, depth: int) -> Node:
        if depth > MAX_DEPTH:
            raise ExpressionError(f"nested more than {MAX_DEPTH} deep")
        items = [self.and_expr(depth)]
        while self.word("or"):
            self.take()
            items.append(self.and_expr(depth))
        return items[0] if len(items) == 1 else Node("or", tuple(items))

    def and_expr(self, depth: int) -> Node:
        items = [self.comparison(depth)]
        while self.word("and"):
            self.take()
            items.append(self.comparison(depth))
        return items[0] if len(items) == 1 else Node("and", tuple(items))

    def comparison(self, depth: int) -> Node:
        left = self.sum(depth)
        token = self.peek()
        if token == ("op", "=="):
            raise FormMistake("'==' is not XPath: XLSForm compares with one '=' "
                              "(${q} = 'yes')")
        if token is not None and token[0] == "op" and token[1] in _COMPARE:
            self.take()
            right = self.sum(depth)
            after = self.peek()
            if after is not None and after[0] == "op" and after[1] in _COMPARE:
                raise ExpressionError("chained comparisons (a = b = c) are not supported")
            return Node("cmp", (left, right), op=_COMPARE[token[1]])
        return left

    def sum(self, depth: int) -> Node:
        """A primary, or a sum of indicators (XPath adds before it compares): one count node
        of all their conditions, `(if(a, 1, 0) + if(b, 1, 0)) + if(c, 1, 0)` included. Any
        other term added is arithmetic, refused."""
        terms = [self.primary(depth)]
        while self.peek() == ("op", "+"):
            self.take()
            terms.append(self.primary(depth))
        if len(terms) == 1:
            return terms[0]
        odd = next((t for t in terms if t.kind != "count"), None)
        if odd is not None:
            raise ExpressionError(f"'+' adds {_what(odd)}: {_ARITHMETIC} (only {SUPPORTED})")
        return Node("count", tuple(c for t in terms for c in t.items))

    def primary(self, depth: int) -> Node:
        kind, value = self.take()
        if kind == "ref":
            if not value:
                raise ExpressionError("an empty ${} reference")
            return Node("ref", name=value)
        if kind == "str":
            return Node("str", value=value[1:-1])
        if kind == "num":
            return Node("num", value=float(value) if "." in value else int(value))
        if kind == "op" and value == ".":
            return Node("self")
        if kind == "op" and value == "(":
            inner = self.or_expr(depth + 1)
            if self.take() != ("op", ")"):
                raise ExpressionError("a '(' is not closed")
            return inner
        if kind == "word":
            token = self.peek()
            if token == ("op", "("):
                return self.call(value, depth)
            raise ExpressionError(f"{value!r} is not something ldpsurvey can read (write "
                                  "${name} for a question)")
        if (kind == "op" and value in "+-*|/[]@") or value == "..":
            raise ExpressionError(f"{value!r}: {_ARITHMETIC} (only {SUPPORTED})")
        raise ExpressionError(f"unexpected {value!r}")

    def call(self, name: str, depth: int) -> Node:
        self.take()  # "("
        args: list[Node] = []
        if self.peek() != ("op", ")"):
            args.append(self.or_expr(depth + 1))
            while self.peek() == ("op", ","):
                self.take()
                args.append(self.or_expr(depth + 1))
        if self.take() != ("op", ")"):
            raise ExpressionError(f"{name}( is not closed")
        if name == "not":
            _arity(name, args, 1)
            return Node("not", (args[0],))
        if name in ("true", "false"):
            _arity(name, args, 0)
            return Node("bool", value=name == "true")
        if name == "if":
            return _indicator(args)
        if name == "selected":
            _arity(name, args, 2)
        elif name == "count-selected":
            _arity(name, args, 1)
        else:
            raise ExpressionError(f"{name}() is not supported (only {SUPPORTED})")
        return Node("call", tuple(args), name=name)


def _indicator(args: list[Node]) -> Node:
    """`if(C, 1, 0)` (1 where C holds) as the count node of C; `if(C, 0, 1)` of `not C`."""
    _arity("if", args, 3)
    condition, then, otherwise = args
    branches = tuple(b.value if b.kind == "num" else None for b in (then, otherwise))
    if branches not in ((1, 0), (0, 1)):
        raise ExpressionError("if() is read only as an indicator, if(condition, 1, 0) or "
                              "if(condition, 0, 1), added up and compared with a number "
                              f"(only {SUPPORTED})")
    return Node("count", (condition if branches == (1, 0) else Node("not", (condition,)),))


def _arity(name: str, args: list[Node], n: int) -> None:
    if len(args) != n:
        raise ExpressionError(f"{name}() takes {n} argument{'' if n == 1 else 's'}")


def arguments(inner: str) -> list[str] | None:
    """The comma-separated arguments of a call written out (`inner`: between its
    parentheses; commas inside parentheses or quotes belong to their argument); None when a
    parenthesis closes the call early (`if(a) or (b)`)."""
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(inner):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                return None
        elif ch == "," and depth == 0:
            parts.append(inner[start:i])
            start = i + 1
    parts.append(inner[start:])
    return parts


@dataclass(frozen=True)
class Inlined:
    """A calculate row `if(cond, a, b)` (a and b constants) that conditions read on the
    device: `${c} op x` becomes `(cond and a op x) or (not cond and b op x)`, XPath's value
    on every answer (the calculation is always computed: no relevant, in no conditional
    group, so never empty)."""

    condition: Node
    when_true: Node
    when_false: Node


def inlinable(calculation: str) -> tuple[str, Node, Node] | None:
    """(the condition's text, the two constants) of a calculation `if(cond, a, b)` whose
    branches are numbers or strings; None for any other calculation."""
    text = calculation.strip()
    if not (text.startswith("if") and text[2:].lstrip().startswith("(") and text.endswith(")")):
        return None
    parts = arguments(text[text.index("(") + 1:-1])
    if parts is None or len(parts) != 3:
        return None
    try:
        branches = [parse(part) for part in parts[1:]]
    except ExpressionError:
        return None
    if any(b.kind not in ("num", "str") for b in branches):
        return None
    return parts[0], branches[0], branches[1]


def inline(node: Node, calculations: Mapping[str, Inlined]) -> Node:
    """The tree with each comparison of an inlined calculation with a constant replaced by
    its value on each branch of the calculation's condition."""
    if node.kind == "cmp":
        left, right = node.items
        op = node.op
        if right.kind == "ref" and right.name in calculations and left.kind in ("num", "str"):
            left, right, op = right, left, _FLIP[op]
        if left.kind == "ref" and left.name in calculations and right.kind in ("num", "str"):
            calc = calculations[left.name]
            return Node("or", (
                Node("and", (calc.condition, Node("bool", value=_xpath_compare(
                    calc.when_true, op, right)))),
                Node("and", (Node("not", (calc.condition,)), Node("bool", value=_xpath_compare(
                    calc.when_false, op, right))))))
    if not node.items:
        return node
    return Node(node.kind, tuple(inline(item, calculations) for item in node.items), node.op,
                node.name, node.value)


def _xpath_compare(value: Node, op: str, other: Node) -> bool:
    """XPath's `value op other` where value is a calculation's result (a string, as ODK keeps
    a calculate's value) and other a constant: with a number, both as numbers; `=` and `!=`
    of two strings as strings; an order as numbers (NaN compares false)."""
    text = _number_text(value.value) if value.kind == "num" else str(value.value)
    if other.kind == "str" and op in ("==", "!="):
        return (text == other.value) == (op == "==")
    if not (_XPATH_NUMBER.match(text) and _XPATH_NUMBER.match(str(other.value))):
        return op == "!="  # NaN: every comparison false but !=
    a, b = float(text), float(other.value)
    return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b,
            ">=": a >= b}[op]


_XPATH_NUMBER = re.compile(r"^\s*-?(\d+(\.\d*)?|\.\d+)\s*$")  # what number() reads


def references(node: Node) -> list[str]:
    """Every ${name} an expression reads, in order of first appearance."""
    seen: list[str] = []

    def visit(n: Node) -> None:
        if n.kind == "ref" and n.name not in seen:
            seen.append(n.name)
        for item in n.items:
            visit(item)

    visit(node)
    return seen


# --- relevant -> ldpsurvey condition ---------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """What a condition needs to know of a question it reads, as ldpsurvey will hold it.

    `type`: its ldpsurvey type (its `unit` translates what reads it); `options`: XLSForm choice
    name -> ldpsurvey option label (selects); `yes`/`no`: the choice names of a binary
    question's two answers; `relevant`: its own condition (ldpsurvey text, or None for
    always), under which a required question is answered, for `${q} != ''`; `optional`: it
    may be skipped, so `${q} != ''` is answered(q)."""

    id: str
    type: str
    options: Mapping[str, str]
    yes: str = ""
    no: str = ""
    relevant: str | None = None
    optional: bool = False

    @property
    def unit(self) -> QuestionType:
        """Its type's unit, which says how a condition reads its answer."""
        return unit_for(self.type)


# A translated condition: ldpsurvey text with its precedence, or a constant.
@dataclass(frozen=True)
class _Out:
    text: str = ""
    level: int = 3  # 1: or, 2: and, 3: atomic (comparison, not ..., call)
    const: bool | None = None


_TRUE, _FALSE = _Out(const=True), _Out(const=False)


def translate_relevant(node: Node, lookup: Callable[[str], Target],
                       absent: list[str] | None = None,
                       rewritten: list[str] | None = None) -> str | None:
    """The ldpsurvey condition with the value of this XLSForm `relevant` on every answer;
    None when it always holds. ExpressionError when it cannot be written (the message says
    why); `lookup` raises ExpressionError for a reference that cannot be read.

    A term naming a choice its question does not have (`selected(${q}, 'piped_neighbor')`
    where the choice is `piped_neighbour`) is a mistake in the form, and ODK runs it: the
    choice is never the answer, so `selected()` and `=` are false and `!=` true. It is
    translated so, and said in `absent` (one line a term, with the near match) for the
    designer to check.

    A sum of indicators compared with a number (`(if(C1, 1, 0) + ... + if(Cn, 1, 0)) >= 1`) is
    written as the condition it is exactly (`C1 or ... or Cn`: `_counted`), said in
    `rewritten` (one line a sum) for the notes."""
    absent = absent if absent is not None else []
    writer = _Writer(absent)
    out = _condition(node, lookup, writer)
    if rewritten is not None:
        rewritten += writer.rewritten
    if out.const is True:
        return None
    if out.const is False and absent:  # ODK never asks it: a mistake, not a condition
        raise FormMistake("never holds, so ODK never asks it: "
                          + "; ".join(dict.fromkeys(absent)))
    if out.const is False:
        raise ExpressionError("never holds: the question would never be asked")
    return out.text


def _condition(node: Node, lookup: Callable[[str], Target], writer: _Writer) -> _Out:
    if node.kind in ("or", "and"):
        parts = [_condition(item, lookup, writer) for item in node.items]
        absorbing = node.kind == "or"  # true absorbs an or, false an and
        if any(p.const is absorbing for p in parts):
            return _Out(const=absorbing)
        parts = [p for p in parts if p.const is None]
        if not parts:
            return _Out(const=not absorbing)
        if len(parts) == 1:
            return parts[0]
        level = 1 if node.kind == "or" else 2
        return _Out(f" {node.kind} ".join(p.text if p.level >= level else f"({p.text})"
                                          for p in parts), level)
    if node.kind == "not":
        inner = _condition(node.items[0], lookup, writer)
        if inner.const is not None:
            return _Out(const=not inner.const)
        return _Out(f"not {inner.text}" if inner.level == 3 and not inner.text.startswith(
            "not ") else f"not ({inner.text})", 3)
    if node.kind == "bool":
        return _Out(const=bool(node.value))
    if node.kind == "cmp" and any(item.kind == "count" for item in node.items):
        return _condition(_counted(node, writer.rewritten), lookup, writer)
    if node.kind == "cmp":
        return _comparison(node, lookup, writer)
    if node.kind == "count":
        raise ExpressionError("a sum of if() values is a number here: compare it (e.g. "
                              "(if(C, 1, 0) + if(D, 1, 0)) >= 1)")
    if node.kind == "call" and node.name == "selected":
        return _selected(node, lookup, writer)
    if node.kind == "call":
        raise ExpressionError(f"{node.name}() is a number here: compare it (e.g. "
                              f"{node.name}(${{q}}) >= 1)")
    raise ExpressionError(_what(node) + " is not a condition: compare it (e.g. ${q} = 'yes')")


# What a sum of n indicators compared with a number says, by the counts k (0..n) for which the
# comparison holds: (the counts, the condition without arithmetic, how it is said).
def _count_forms(n: int) -> list[tuple[set[int], str, str]]:
    return [(set(range(1, n + 1)), "or", "at least one of them holds (joined by or)"),
            ({0}, "none", "none of them holds (not (... or ...))"),
            ({n}, "and", "all of them hold (joined by and)"),
            (set(range(n)), "not all", "not all of them hold (not (... and ...))")]


def _counted(node: Node, rewritten: list[str]) -> Node:
    """A comparison of a sum of indicators (a count node: how many of its conditions hold)
    with a number, as the same condition without arithmetic (XPath's value on every answer:
    each indicator is 1 exactly where its condition, which translates with XPath's value,
    holds); said in `rewritten`. ExpressionError for a comparison that only arithmetic
    writes (at least 2 of them: `>= 2`) or with anything but a number."""
    left, right = node.items
    op = node.op
    if left.kind != "count":
        left, right, op = right, left, _FLIP[op]
    n = len(left.items)
    shown = f"{'=' if op == '==' else op} {_what(right)}"
    if right.kind not in ("num", "str"):
        raise ExpressionError(f"compares a sum of if() values with {_what(right)}: the count "
                              "of conditions compared with anything but a number would need "
                              "arithmetic")
    text = _number_text(right.value) if right.kind == "num" else str(right.value)
    bound = float(text) if _XPATH_NUMBER.match(text) else float("nan")  # XPath's number()
    holds = {k for k in range(n + 1) if {
        "==": k == bound, "!=": k != bound, "<": k < bound, "<=": k <= bound,
        ">": k > bound, ">=": k >= bound}[op]}
    said = (f"it compares how many of {n} condition{'s' if n > 1 else ''} hold (a sum of "
            f"if(condition, 1, 0)) with {shown}")
    if not holds or len(holds) == n + 1:
        rewritten.append(f"{said}, which {'always' if holds else 'never'} holds: imported so")
        return Node("bool", value=bool(holds))
    conditions = left.items
    for counts, form, how in _count_forms(n):
        if holds == counts:
            rewritten.append(f"{said}: imported as the same condition without arithmetic, "
                             f"{how}")
            joined = conditions[0] if n == 1 else Node(
                "and" if form in ("and", "not all") else "or", conditions)
            return Node("not", (joined,)) if form in ("none", "not all") else joined
    raise ExpressionError(f"{said}: that count of conditions would need arithmetic, which "
                          "ldpsurvey's conditions do not have; they write only at least one "
                          f"(>= 1, > 0), none (= 0), all (= {n}) or not all (< {n})")


def _what(node: Node) -> str:
    if node.kind == "count":
        return "a sum of if() values"
    if node.kind == "bool":
        return "true()" if node.value else "false()"
    return {"ref": f"${{{node.name}}}", "self": "'.'", "str": repr(node.value),
            "num": str(node.value), "call": f"{node.name}()"}.get(node.kind, node.kind)


def _target(node: Node, lookup: Callable[[str], Target]) -> Target:
    if node.kind == "self":
        raise ExpressionError("'.' (this question's own answer) cannot be read in relevant")
    return lookup(node.name)


def _selected(node: Node, lookup: Callable[[str], Target], writer: _Writer) -> _Out:
    ref, value = node.items
    if ref.kind != "ref":
        raise ExpressionError("selected() reads a question: selected(${q}, 'choice')")
    target = _target(ref, lookup)
    if value.kind not in ("str", "num"):
        raise ExpressionError("selected()'s second argument must be a choice name in quotes")
    return target.unit.xlsform_selected(target, str(value.value), writer)


def _comparison(node: Node, lookup: Callable[[str], Target], writer: _Writer) -> _Out:
    left, right = node.items
    op = node.op
    if left.kind not in ("ref", "call", "self") and right.kind in ("ref", "call", "self"):
        left, right, op = right, left, _FLIP[op]
    if left.kind == "call" and left.name == "count-selected":
        arg = left.items[0]
        if arg.kind != "ref":
            raise ExpressionError("count-selected() reads a question: count-selected(${q})")
        target = _target(arg, lookup)
        return target.unit.xlsform_count_selected(target, op, right, writer)
    if left.kind == "self":
        _target(left, lookup)
    if left.kind != "ref":
        raise ExpressionError(f"compares {_what(left)} with {_what(right)}: a comparison "
                              "reads a question (${q} = 'choice', ${q} > 3)")
    if right.kind == "ref":
        return _two_answers(_target(left, lookup), op, _target(right, lookup))
    if right.kind in ("self", "call"):
        raise ExpressionError(f"compares ${{{left.name}}} with {_what(right)}: a comparison "
                              "reads a question against a value or another question's answer")
    target = _target(left, lookup)
    if right.kind == "bool":  # XPath makes the answer a boolean: true for any answer given
        raise FormMistake(f"compares ${{{left.name}}} with {_what(right)}, which XPath "
                          "reads as whether it was answered, not which choice: compare it "
                          f"with a choice name (${{{left.name}}} = '{target.yes or 'choice'}')")
    if right.kind == "str" and right.value == "":
        if op not in ("==", "!="):
            raise ExpressionError("compares an answer with '' by order")
        return target.unit.xlsform_answered(target, op, writer)
    return target.unit.xlsform_compare(target, op, right, writer)


class _Writer:
    """How the condition language writes what a relevant reads, for the question types'
    units to choose from (shared/question_types XLSFormConditions); `absent` collects the
    terms that name a choice their question does not have, each translated as ODK runs it."""

    def __init__(self, absent: list[str]) -> None:
        self.absent = absent
        self.rewritten: list[str] = []  # sums of indicators written without arithmetic

    def _absent(self, target: Target, op: str, name: str, known: Iterable[str],
                meant: str = "") -> _Out:
        """A term on a choice `target` does not have: XPath's value (never the answer: `=`
        and selected() false, `!=` true), said in `absent` with the near match (else
        `meant`)."""
        value = op == "!="
        known = list(known)
        self.absent.append(f"{name!r} is not a choice of {target.id} (its choices: "
                           f"{', '.join(map(repr, known))}), so ODK reads that term as "
                           f"{'true' if value else 'false'}{_near(name, known) or meant}")
        return _TRUE if value else _FALSE

    @staticmethod
    def name(value: Node) -> str:
        return _name(value)

    def option(self, target: Target, op: str, name: str) -> _Out:
        if name not in target.options:
            return self._absent(target, op, name, target.options)
        return _Out(f"{target.id} {op} {_quoted(_label(target, name))}")

    def yes_no(self, target: Target, op: str, name: str) -> _Out:
        if name not in (target.yes, target.no):
            return self._absent(target, op, name, (target.yes, target.no),
                                f": write ${{{target.id}}} = {target.yes!r} for yes, "
                                f"{target.no!r} for no")
        return _Out(f"{target.id} {op} {'true' if name == target.yes else 'false'}")

    @staticmethod
    def ordered(target: Target, op: str, value: Node) -> _Out:
        return _ordered(target, op, value)

    @staticmethod
    def number(target: Target, op: str, value: Node) -> _Out:
        return _Out(f"{target.id} {op} {_integer(value)}")

    def selected(self, target: Target, name: str) -> _Out:
        if name not in target.options:
            return self._absent(target, "==", name, target.options)
        return _Out(f"selected({target.id}, {_quoted(_label(target, name))})")

    @staticmethod
    def count(target: Target, op: str, value: Node) -> _Out:
        return _Out(f"count_selected({target.id}) {op} {_integer(value)}")

    @staticmethod
    def count_answered(target: Target, op: str) -> _Out:
        return _Out(f"count_selected({target.id}) {'>' if op == '!=' else '=='} 0")

    @staticmethod
    def answered(target: Target, op: str) -> _Out:
        return _answered(target, op)

    @staticmethod
    def not_selectable(target: Target) -> _Out:
        raise ExpressionError(f"selected() reads a select question; ${{{target.id}}} is "
                              f"{target.type}")

    @staticmethod
    def not_countable(target: Target) -> _Out:
        raise ExpressionError(f"count-selected() reads a select_multiple question; "
                              f"${{{target.id}}} is {target.type}")

    @staticmethod
    def refuse(message: str) -> _Out:
        raise ExpressionError(message)


def _answered(target: Target, op: str) -> _Out:
    """`${q} != ''` (answered) and `${q} = ''` (not): an optional question's answered(q),
    a required one's own condition (asked is answered)."""
    if target.optional:
        return _Out(f"answered({target.id})" if op == "!=" else f"not answered({target.id})")
    asked = _TRUE if target.relevant is None else _Out(target.relevant, 1)
    if op == "!=":
        return asked
    if asked.const is True:
        return _FALSE
    return _Out(f"not ({asked.text})", 3)


def _two_answers(a: Target, op: str, b: Target) -> _Out:
    """`${a} op ${b}`: two answers compared with each other, with XPath's value on every
    answer. Both are read as a condition reads each (its unit's `condition_operand`): two
    integers in any order; two select_one (or yes/no) answers for (in)equality when their
    choices are the same names with the same labels (XPath compares the choice names, a
    condition the labels). XPath's empty value: a comparison with one empty side is false but
    `!=`, as in a condition; two empty sides are equal in XPath, and not in a condition (where
    a side not asked or not answered makes `==` false and `!=` true), so `=` adds "or neither
    was answered" and `!=` "and either was answered": answered(q) for an optional question, a
    required one's own condition."""
    kind, other = a.unit.condition_operand, b.unit.condition_operand
    # One kind: the same operand, and options in order on both sides or on neither.
    same_kind = (kind, a.unit.ordered) == (other, b.unit.ordered)
    if kind not in _ANSWER_KINDS or other not in _ANSWER_KINDS:
        odd = a if kind not in _ANSWER_KINDS else b
        raise ExpressionError(f"compares two answers, and ${{{odd.id}}} is {odd.type}, whose "
                              "answer a comparison cannot read (select_multiple: "
                              "selected() or count-selected())")
    if not same_kind:
        raise ExpressionError(f"compares ${{{a.id}}} ({a.type}) with ${{{b.id}}} ({b.type}): "
                              "two answers compared must be of one kind")
    if op not in ("==", "!=") and kind != _NUMBER:
        raise ExpressionError(f"orders ${{{a.id}}} and ${{{b.id}}}, which are not numbers: "
                              "XPath would order their choice names as text")
    if (dict(a.options), a.yes, a.no) != (dict(b.options), b.yes, b.no):
        raise ExpressionError(f"compares ${{{a.id}}} with ${{{b.id}}}, whose choice lists "
                              "differ: XPath compares choice names, a condition the labels; "
                              "give both the same list")
    text = _Out(f"{a.id} {op} {b.id}")
    if op not in ("==", "!="):
        return text
    given = [_answered(a, "!="), _answered(b, "!=")]  # whether each side was answered
    if any(g.const is True for g in given):
        return text  # one side is always answered when this is read: no two empty sides
    first, second = given
    either = first if first.text == second.text else _Out(
        " or ".join(g.text if g.level >= 2 else f"({g.text})" for g in given), 1)
    said = either.text if either.level == 3 else f"({either.text})"
    if op == "!=":
        return _Out(f"{text.text} and {said}", 2)
    return _Out(f"{text.text} or not {said}", 1)


_NUMBER = "int"  # the condition operand of a number (an integer's unit's)
_ANSWER_KINDS = (_NUMBER, "bool", "text")  # operands compared as answers


def _ordered(target: Target, op: str, right: Node) -> _Out:
    """A select_one compared by order with a number: the options whose numeric names
    satisfy it (XPath compares the names as numbers)."""
    try:
        bound = float(right.value)
        numbers = {name: float(name) for name in target.options}
    except (TypeError, ValueError):
        raise ExpressionError(f"orders {target.id}'s choices, whose names are not all "
                              "numbers: list them instead (${q} = 'a' or ${q} = 'b')") from None
    test = {"<": bound.__gt__, "<=": bound.__ge__, ">": bound.__lt__, ">=": bound.__le__}[op]
    chosen = [_quoted(label) for name, label in target.options.items() if test(numbers[name])]
    if not chosen:
        return _FALSE
    return _Out(f"{target.id} in [{', '.join(chosen)}]")


def _name(node: Node) -> str:
    if node.kind == "str":
        return node.value
    if node.kind == "num":
        return _number_text(node.value)
    raise ExpressionError(f"{_what(node)} is not a choice name")


def _number_text(value: Any) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _label(target: Target, name: str) -> str:
    if name not in target.options:
        known = ", ".join(repr(n) for n in target.options)
        raise FormMistake(f"{name!r} is not a choice of {target.id} (its choices: {known})"
                          f"{_near(name, target.options)}")
    return target.options[name]


def near_match(name: str, known: Iterable[str]) -> str | None:
    """The known name `name` was most likely meant to be: the same but for case, spaces,
    '_' or '-', else the closest spelling; None when none is close."""
    known = list(known)

    def squashed(text: str) -> str:
        return re.sub(r"[\s_-]+", "", text).casefold()

    same = [k for k in known if squashed(k) == squashed(name)]
    if same:
        return same[0]
    close = difflib.get_close_matches(name.casefold(), [k.casefold() for k in known], n=1,
                                      cutoff=0.8)
    return next((k for k in known if close and k.casefold() == close[0]), None)


def _near(name: str, known: Iterable[str]) -> str:
    match = near_match(name, known)
    return f": did you mean {match!r}?" if match is not None else ""


def _integer(node: Node) -> int:
    value = node.value
    if node.kind == "str":
        try:
            value = int(value)
        except ValueError:
            raise ExpressionError(f"{node.value!r} is not a whole number") from None
    if node.kind not in ("num", "str") or (isinstance(value, float) and not value.is_integer()):
        raise ExpressionError(f"{_what(node)} is not a whole number")
    return int(value)


def _quoted(label: str) -> str:
    if "'" not in label:
        return f"'{label}'"
    if '"' not in label:
        return f'"{label}"'
    raise ExpressionError(f"the option {label!r} holds both kinds of quote, which an "
                          "ldpsurvey condition cannot write")


# --- constraints ---------------------------------------------------------------------------


def _bounds(node: Node, reads: Callable[[Node], bool]) -> tuple[int | None, int | None]:
    """(low, high) of `reads(x) op n` terms joined by `and` (inclusive integer bounds)."""
    items = node.items if node.kind == "and" else (node,)
    low: int | None = None
    high: int | None = None
    for item in items:
        if item.kind != "cmp":
            raise ExpressionError("only bounds joined by 'and' can be kept")
        left, right = item.items
        op = item.op
        if reads(right) and not reads(left):
            left, right, op = right, left, _FLIP[op]
        if not reads(left) or right.kind not in ("num", "str"):
            raise ExpressionError("only bounds on the answer can be kept")
        n = _integer(right)
        if op in (">=", ">"):
            value = n if op == ">=" else n + 1
            low = value if low is None else max(low, value)
        elif op in ("<=", "<"):
            value = n if op == "<=" else n - 1
            high = value if high is None else min(high, value)
        else:
            raise ExpressionError(f"'{op}' is not a bound")
    return low, high


def range_of(node: Node) -> tuple[int | None, int | None]:
    """An integer's range from `. >= a and . <= b` (strict bounds made inclusive)."""
    return _bounds(node, lambda n: n.kind == "self")


def number_range_of(node: Node) -> tuple[tuple[Decimal | None, Decimal | None],
                                           tuple[str, ...]]:
    """A number's exact range from `. >= a and . <= b` (decimals allowed), and the sides
    ("min", "max") whose bound is strict: a strict bound is kept as the bound itself (the
    answer is rounded to a grid that holds it)."""
    items = node.items if node.kind == "and" else (node,)
    low: Decimal | None = None
    high: Decimal | None = None
    strict: dict[str, bool] = {}
    for item in items:
        if item.kind != "cmp":
            raise ExpressionError("only bounds joined by 'and' can be kept")
        left, right = item.items
        op = item.op
        if right.kind == "self" and left.kind != "self":
            left, right, op = right, left, _FLIP[op]
        if left.kind != "self" or right.kind not in ("num", "str"):
            raise ExpressionError("only bounds on the answer can be kept")
        n = _exact(right)
        if op in (">=", ">"):
            if low is None or n > low or (n == low and op == ">"):  # the tighter bound
                low, strict["min"] = n, op == ">"
        elif op in ("<=", "<"):
            if high is None or n < high or (n == high and op == "<"):
                high, strict["max"] = n, op == "<"
        else:
            raise ExpressionError(f"'{op}' is not a bound")
    return (low, high), tuple(side for side in ("min", "max") if strict.get(side))


def _exact(node: Node) -> Decimal:
    """A number node's exact value (a float read by its shortest decimal, as written)."""
    value = node.value
    try:
        found = Decimal(repr(value) if isinstance(value, float) else str(value).strip())
    except InvalidOperation:
        found = Decimal("nan")
    if not found.is_finite():
        raise ExpressionError(f"{_what(node)} is not a number")
    return found


def count_bounds(node: Node) -> tuple[int | None, int | None]:
    """The bounds on the number checked, from `count-selected(.) <= m` and `>= 1`."""
    return _bounds(node, lambda n: n.kind == "call" and n.name == "count-selected"
                   and n.items[0].kind == "self")
