"""Skip-logic conditions: the `relevant = "<condition>"` expression language (contract 3).

    condition  := or_expr
    or_expr    := and_expr ("or" and_expr)*
    and_expr   := not_expr ("and" not_expr)*
    not_expr   := "not" not_expr | comparison
    comparison := operand [ cmp_op operand | ["not"] "in" list ]
    cmp_op     := "==" | "!=" | "<" | "<=" | ">" | ">="          ("=" alone is an error)
    operand    := question_id | literal | "selected(" question_id "," string ")"
                  | "count_selected(" question_id ")" | "answered(" question_id ")"
                  | "(" condition ")"
    literal    := 'single' or "double" quoted string | integer -?[0-9]+ | true | false
    list       := "[" literal ("," literal)* "]"

A small tokenizer and a recursive-descent parser that type-checks as it goes (never `eval`):
the first error in reading order is reported, with its kind ("syntax", "reference" or "type")
and the position (0-based, in code points) of the token at fault. client/web/js/conditions.js
is the same parser in JavaScript; tests/web/condition_vectors.py holds the shared vectors that
prove both give the same result, the same error kind, position and message.

Values: a binary question is true/false; categorical and ordinal questions are option labels
(ordinal ones also order with <, <=, >, >= by option position, against one of their own
labels); integer questions are integers; a multiselect question is read only through
selected(q, "option") and count_selected(q). Either side of a comparison may be a question
(two answers compared: `now != before`), with the same types as against a literal. A bare
operand is a condition only where it is yes/no (a binary question, selected(...), true/false,
a parenthesized condition).

A referenced question that was not asked or not answered (absent from the answers, or None):
every comparison, `in` and selected() is false, except `!=` and `not in`, which are true
(XLSForm's empty-value behaviour); count_selected() is 0; a bare binary question is false.
answered(q) is the one test of that itself: true when q was asked and answered (any answer,
a special value and a multiselect's empty selection included), false when it was not asked or
was skipped (an optional question left unanswered). It is yes/no and reads any earlier question
a condition can read (a multiselect one too), on the device like every condition.
A special value (a label of the question's `special`: don't know, prefer not to say) is an
answer that `==`, `!=` and `in` read by its label and that no order (<, <=, >, >=) holds for.
A bare binary question means "answered yes": false for a special value, as `used == true` is
(XLSForm's `${used} = 'yes'` is false for a dk choice); so `not used` holds for it.
References must be to earlier questions. Strings have no escapes: a label holding both kinds of
quote cannot be written in a condition.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import LdpSurveyError
from .question_types import REGISTRY

MAX_DEPTH = 32  # nested parentheses and `not`s: bounds the parser's recursion on both sides
MAX_INTEGER = 2**53 - 1  # integer literals JavaScript holds exactly
WHITESPACE = " \t\n\r"
_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_DIGITS = frozenset("0123456789")
KEYWORDS = frozenset({"and", "or", "not", "in", "true", "false"})
FUNCTIONS = ("selected", "count_selected", "answered")
COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")
ORDERING = ("<", "<=", ">", ">=")
# How a condition reads a question's answer is its type's (the unit's `condition_operand`):
# an operand kind, SET (a multiselect question: through the functions only) or None.
SET = "set"


class ConditionError(LdpSurveyError):
    """A condition that cannot be used: `kind` is "syntax", "reference" or "type";
    `position` the 0-based code-point index of the token at fault."""

    code = "invalid_condition"

    def __init__(self, kind: str, position: int, message: str) -> None:
        super().__init__(message, {"kind": kind, "position": position})
        self.kind = kind
        self.position = position


@dataclass(frozen=True)
class QuestionInfo:
    """What a condition needs to know of a question: its id, type and option labels."""

    id: str
    type: str
    options: tuple[str, ...] = ()


def info(question: Any) -> QuestionInfo:
    """A QuestionInfo of a Question, a dict (canonical question JSON) or a QuestionInfo."""
    if isinstance(question, QuestionInfo):
        return question
    if isinstance(question, Mapping):
        return QuestionInfo(str(question.get("id")), str(question.get("type")),
                            tuple(question.get("options") or ()))
    return QuestionInfo(question.id, question.type, tuple(question.options or ()))


# --- tokens --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Token:
    kind: str  # "word", "int", "str", "op", "punct", "kw", "end"
    text: str  # the source text (a string token with its quotes)
    value: Any
    position: int


def _describe(token: Token) -> str:
    return "the end of the condition" if token.kind == "end" else f'"{token.text}"'


def tokenize(text: str) -> list[Token]:
    """The tokens of a condition, ending with an "end" token; ConditionError ("syntax")."""
    tokens: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in WHITESPACE:
            i += 1
            continue
        if c in "()[],":
            tokens.append(Token("punct", c, c, i))
            i += 1
            continue
        if c in "=!<>":
            two = text[i:i + 2]
            if two in ("==", "!=", "<=", ">="):
                tokens.append(Token("op", two, two, i))
                i += 2
                continue
            if c in "<>":
                tokens.append(Token("op", c, c, i))
                i += 1
                continue
            if c == "=":
                raise ConditionError("syntax", i, 'use "==" to compare, not "="')
            raise ConditionError("syntax", i, 'unexpected "!" (write "!=" or "not")')
        if c in "'\"":
            end = text.find(c, i + 1)
            if end < 0:
                raise ConditionError("syntax", i, "this text in quotes has no closing quote")
            tokens.append(Token("str", text[i:end + 1], text[i + 1:end], i))
            i = end + 1
            continue
        if c in _WORD:
            j = i
            while j < n and text[j] in _WORD:
                j += 1
            word = text[i:j]
            tokens.append(_word_token(word, i))
            i = j
            continue
        raise ConditionError("syntax", i, f'unexpected character "{c}"')
    tokens.append(Token("end", "", None, n))
    return tokens


def _word_token(word: str, position: int) -> Token:
    digits = word[1:] if word.startswith("-") else word
    if digits and all(ch in _DIGITS for ch in digits):
        value = int(word)
        if abs(value) > MAX_INTEGER:
            raise ConditionError("syntax", position, "this number is too large (at most "
                                 "9007199254740991 either way)")
        return Token("int", word, value, position)
    if word.startswith("-"):
        raise ConditionError("syntax", position, 'a "-" must start a whole number')
    if word in KEYWORDS:
        return Token("kw", word, word, position)
    return Token("word", word, word, position)


# --- the syntax tree -------------------------------------------------------------------------
# Operand kinds: "bool", "int", "text" (an option's label or a string). An ordered operand is
# the answer of a question whose unit is `ordered` (its options in order): text that <, <=, >,
# >= also order, by option position.


@dataclass(frozen=True)
class Operand:
    """A value in a condition. `question` is set for a question's answer (ref), selected(),
    count_selected() and answered(); `literal` for literals; `inner` for a parenthesized
    condition."""

    form: str  # "ref", "literal", "selected", "count", "answered", "group"
    kind: str
    start: int
    end: int
    question: QuestionInfo | None = None
    literal: Any = None
    option: str | None = None
    inner: Node | None = None
    ordered: bool = False  # a ref to a question whose options are in order (its unit's)


@dataclass(frozen=True)
class Node:
    """A condition: "or"/"and" (items), "not" (items[0]), "compare" (op, left, right), "in"
    (left, values, negated) or "bare" (left, a yes/no operand)."""

    form: str
    items: tuple[Node, ...] = ()
    op: str = ""
    left: Operand | None = None
    right: Operand | None = None
    values: tuple[Operand, ...] = ()
    negated: bool = False


_KIND_WORDS = {"bool": "a yes/no value", "int": "a number", "text": "text"}
_ORDERED_WORDS = "an ordinal answer"


def _words(operand: Operand) -> str:
    """The operand's kind of value in an error's words."""
    return _ORDERED_WORDS if operand.ordered else _KIND_WORDS[operand.kind]


@dataclass(frozen=True)
class _Reading:
    """How a condition reads a question's answer, from its unit: `condition_operand`,
    `ordered` and `described` (None, False, None for a type no unit has)."""

    kind: str | None
    ordered: bool
    what: str | None


def _reading(question: QuestionInfo) -> _Reading:
    unit = REGISTRY.get(question.type)
    if unit is None:
        return _Reading(None, False, None)
    return _Reading(unit.condition_operand, unit.ordered, unit.described)


class _Parser:
    def __init__(self, text: str, questions: Sequence[QuestionInfo], at: int) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0
        self.earlier = {q.id: q for q in questions[:at]}
        self.own = questions[at].id if at < len(questions) else None
        self.later = {q.id for q in questions[at + 1:]}
        self.references: list[str] = []

    # tokens

    def peek(self, ahead: int = 0) -> Token:
        return self.tokens[min(self.i + ahead, len(self.tokens) - 1)]

    def advance(self) -> Token:
        token = self.peek()
        self.i += 1
        return token

    def expect(self, text: str, message: str) -> Token:
        token = self.peek()
        if token.kind != "punct" or token.text != text:
            raise ConditionError("syntax", token.position, message)
        return self.advance()

    def is_kw(self, word: str, ahead: int = 0) -> bool:
        token = self.peek(ahead)
        return token.kind == "kw" and token.text == word

    # grammar

    def condition(self) -> Node:
        node = self.or_expr(0)
        token = self.peek()
        if token.kind != "end":
            raise ConditionError("syntax", token.position, f"unexpected {_describe(token)}")
        return node

    def or_expr(self, depth: int) -> Node:
        items = [self.and_expr(depth)]
        while self.is_kw("or"):
            self.advance()
            items.append(self.and_expr(depth))
        return items[0] if len(items) == 1 else Node("or", tuple(items))

    def and_expr(self, depth: int) -> Node:
        items = [self.not_expr(depth)]
        while self.is_kw("and"):
            self.advance()
            items.append(self.not_expr(depth))
        return items[0] if len(items) == 1 else Node("and", tuple(items))

    def not_expr(self, depth: int) -> Node:
        if depth > MAX_DEPTH:
            raise ConditionError("syntax", self.peek().position,
                                 f"the condition is nested too deeply (at most {MAX_DEPTH} "
                                 f"levels of parentheses and not)")
        if self.is_kw("not"):
            self.advance()
            return Node("not", (self.not_expr(depth + 1),))
        return self.comparison(depth)

    def comparison(self, depth: int) -> Node:
        left = self.operand(depth)
        token = self.peek()
        if token.kind == "op":
            self.advance()
            right = self.operand(depth)
            _check_compare(token, left, right)
            return Node("compare", op=token.text, left=left, right=right)
        negated = self.is_kw("not") and self.is_kw("in", 1)
        if negated or self.is_kw("in"):
            if negated:
                self.advance()
            keyword = self.advance()
            values = self.values(keyword)
            for value in values:
                _check_member(left, value)
            return Node("in", left=left, values=values, negated=negated)
        if left.kind != "bool":
            raise ConditionError("type", left.start,
                                 f'"{self.text[left.start:left.end]}" is not a yes/no '
                                 f'condition: compare it with "==", "<" or "in"')
        return Node("bare", left=left)

    def values(self, keyword: Token) -> tuple[Operand, ...]:
        self.expect("[", f'expected a list in square brackets after "{keyword.text}"')
        values = [self.literal()]
        while self.peek().kind == "punct" and self.peek().text == ",":
            self.advance()
            values.append(self.literal())
        self.expect("]", 'expected "," or "]"')
        return tuple(values)

    def literal(self) -> Operand:
        token = self.peek()
        found = _literal(token)
        if found is None:
            raise ConditionError("syntax", token.position, "expected a value: a number, text "
                                 "in quotes, true or false")
        self.advance()
        return found

    def operand(self, depth: int) -> Operand:
        token = self.peek()
        found = _literal(token)
        if found is not None:
            self.advance()
            return found
        if token.kind == "punct" and token.text == "(":
            self.advance()
            inner = self.or_expr(depth + 1)
            close = self.expect(")", 'expected ")"')
            return Operand("group", "bool", token.position, close.position + 1, inner=inner)
        if token.kind == "word":
            self.advance()
            if self.peek().kind == "punct" and self.peek().text == "(":
                return self.call(token)
            question = self.resolve(token)
            reading = _reading(question)
            kind, what = reading.kind, reading.what
            if kind == SET:
                raise ConditionError("type", token.position,
                                     f'"{question.id}" is a multiselect question: read it with '
                                     f'selected({question.id}, "option") or '
                                     f"count_selected({question.id})")
            if kind is None:
                raise ConditionError("type", token.position, f'"{question.id}" is '
                                     f'{what or "a question"}, which a condition cannot read')
            return Operand("ref", kind, token.position, token.position + len(token.text),
                           question=question, ordered=reading.ordered)
        raise ConditionError("syntax", token.position, 'expected a question id, a value or '
                             f'"(", not {_describe(token)}')

    def call(self, name: Token) -> Operand:
        if name.text not in FUNCTIONS:
            raise ConditionError("syntax", name.position, f'unknown function "{name.text}" '
                                 "(the functions are selected, count_selected and answered)")
        self.advance()  # "("
        target = self.peek()
        if target.kind != "word":
            raise ConditionError("syntax", target.position, "expected a question id")
        self.advance()
        question = self.resolve(target)
        reading = _reading(question)
        kind, what = reading.kind, reading.what
        if name.text == "answered":
            if kind is None:
                raise ConditionError("type", target.position, f'"{question.id}" is '
                                     f'{what or "a question"}, which a condition cannot read')
            close = self.expect(")", 'expected ")"')
            return Operand("answered", "bool", name.position, close.position + 1,
                           question=question)
        if kind != SET:
            raise ConditionError("type", target.position,
                                 f'{name.text}() reads a multiselect question; "{question.id}" '
                                 f"is {what or 'another question'}")
        option = None
        if name.text == "selected":
            self.expect(",", 'expected ","')
            label = self.peek()
            if label.kind != "str":
                raise ConditionError("syntax", label.position, "expected an option in quotes")
            self.advance()
            if label.value not in question.options:
                raise ConditionError("type", label.position,
                                     f'"{label.value}" is not an option of "{question.id}"'
                                     + _did_you_mean(label.value, question.options))
            option = label.value
        close = self.expect(")", 'expected ")"')
        form, kind = ("selected", "bool") if name.text == "selected" else ("count", "int")
        return Operand(form, kind, name.position, close.position + 1, question=question,
                       option=option)

    def resolve(self, token: Token) -> QuestionInfo:
        qid = token.text
        found = self.earlier.get(qid)
        if found is not None:
            if qid not in self.references:
                self.references.append(qid)
            return found
        if qid == self.own:
            message = f'"{qid}" is this question itself: a condition can only read earlier ' \
                      "questions"
        elif qid in self.later:
            message = f'"{qid}" comes later in the survey: a condition can only read earlier ' \
                      "questions"
        else:
            message = f'there is no question "{qid}" in this survey'
        raise ConditionError("reference", token.position, message)


def _literal(token: Token) -> Operand | None:
    end = token.position + len(token.text)
    if token.kind == "int":
        return Operand("literal", "int", token.position, end, literal=token.value)
    if token.kind == "str":
        return Operand("literal", "text", token.position, end, literal=token.value)
    if token.kind == "kw" and token.text in ("true", "false"):
        return Operand("literal", "bool", token.position, end, literal=token.text == "true")
    return None


def _textual(operand: Operand) -> bool:
    return operand.kind == "text"


def _check_option(question_side: Operand, literal: Operand) -> None:
    """A string compared with a categorical or ordinal question must be one of its options."""
    if question_side.form == "ref" and literal.form == "literal" and literal.kind == "text":
        assert question_side.question is not None
        if literal.literal not in question_side.question.options:
            raise ConditionError("type", literal.start,
                                 f'"{literal.literal}" is not an option of '
                                 f'"{question_side.question.id}"'
                                 + _did_you_mean(literal.literal, question_side.question.options))


def _did_you_mean(value: str, options: Sequence[str]) -> str:
    """The option `value` differs from only by case, as a hint ('' when there is none)."""
    same = [o for o in options if o.lower() == value.lower()]
    return f': did you mean "{same[0]}"?' if same else ""


def _yes_no_hint(left: Operand, right: Operand) -> str:
    """For a yes/no question compared with text (`paid_sex == 'yes'`): how to write it."""
    for a, b in ((left, right), (right, left)):
        if a.form == "ref" and a.kind == "bool" and a.question is not None \
                and b.form == "literal" and b.kind == "text":
            qid = a.question.id
            return f': "{qid}" is yes/no: write {qid} (or {qid} == true) or {qid} == false'
    return ""


def _check_compare(op: Token, left: Operand, right: Operand) -> None:
    if op.text in ORDERING:
        if left.kind == "int" and right.kind == "int":
            return
        for a, b in ((left, right), (right, left)):
            if a.ordered and b.form == "literal" and b.kind == "text":
                _check_option(a, b)
                return
        if (left.ordered and right.ordered and left.question is not None
                and right.question is not None
                and left.question.options == right.question.options):
            return
        raise ConditionError("type", op.position, f'"{op.text}" orders numbers, or an ordinal '
                             "question against one of its options")
    if _textual(left) and _textual(right):
        _check_option(left, right)
        _check_option(right, left)
        return
    if left.kind != right.kind:
        raise ConditionError("type", op.position, f'"{op.text}" compares '
                             f"{_words(left)} with {_words(right)}"
                             + _yes_no_hint(left, right))


def _check_member(left: Operand, value: Operand) -> None:
    if _textual(left) and value.kind == "text":
        _check_option(left, value)
        return
    if left.kind != value.kind:
        raise ConditionError("type", value.start, f'"in" compares {_words(left)} '
                             f"with {_words(value)}")


# --- evaluation ------------------------------------------------------------------------------

_MISSING = object()


@dataclass(frozen=True)
class Condition:
    """A parsed, type-checked condition and the earlier questions it reads (in order)."""

    text: str
    tree: Node
    references: tuple[str, ...]

    def evaluate(self, answers: Mapping[str, Any]) -> bool:
        """Whether the condition holds for these answers ({question id: value}; an absent
        question or None: not asked or not answered)."""
        return _evaluate(self.tree, answers)


def parse_condition(text: str, questions: Sequence[Any], at: int) -> Condition:
    """The condition of question number `at` of `questions` (Question objects, canonical
    question dicts or QuestionInfo); ConditionError for the first problem found."""
    infos = [info(q) for q in questions]
    parser = _Parser(text, infos, at)
    tree = parser.condition()
    return Condition(text, tree, tuple(parser.references))


def _value(operand: Operand, answers: Mapping[str, Any]) -> Any:
    if operand.form == "literal":
        return operand.literal
    if operand.form == "group":
        assert operand.inner is not None
        return _evaluate(operand.inner, answers)
    assert operand.question is not None
    given = answers.get(operand.question.id)
    if operand.form == "answered":
        return given is not None
    if operand.form == "count":
        return 0 if given is None else len(given)
    if given is None:
        return _MISSING
    if operand.form == "selected":
        return operand.option in given
    return given


def _position(operand: Operand, value: Any, other: Operand) -> Any:
    """An ordinal value's place: a label's index among its (or the other side's) options;
    None for a value that is none of them (a special value: don't know, prefer not to say)."""
    question = operand.question if operand.ordered else other.question
    assert question is not None
    return question.options.index(value) if value in question.options else None


def _orders(value: Any) -> bool:
    """Whether a value takes part in an order: a number or an option's place, not a special
    value's label (an answer `in` or `==` reads like any other)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _yes(value: Any) -> bool:
    """A bare yes/no operand's truth: a yes (a true answer or condition), not a special value
    (its label: an answer, but "Don't know" is not yes, as `used == true` is false for it and
    XLSForm's `${used} = 'yes'` for a dk choice), nor a missing answer."""
    return value is not _MISSING and not isinstance(value, str) and bool(value)


def _evaluate(node: Node, answers: Mapping[str, Any]) -> bool:
    form = node.form
    if form == "or":
        return any(_evaluate(item, answers) for item in node.items)
    if form == "and":
        return all(_evaluate(item, answers) for item in node.items)
    if form == "not":
        return not _evaluate(node.items[0], answers)
    assert node.left is not None
    left = _value(node.left, answers)
    if form == "bare":
        return _yes(left)
    if form == "in":
        if left is _MISSING:
            return node.negated
        return (left in [v.literal for v in node.values]) != node.negated
    assert node.right is not None
    right = _value(node.right, answers)
    if left is _MISSING or right is _MISSING:
        return node.op == "!="
    if node.op == "==":
        return bool(left == right)
    if node.op == "!=":
        return bool(left != right)
    if node.left.ordered or node.right.ordered:
        left = _position(node.left, left, node.right)
        right = _position(node.right, right, node.left)
    if not _orders(left) or not _orders(right):
        return False  # a special value (don't know, ...) is in no order: as XPath's -999 vs NaN
    return {"<": left < right, "<=": left <= right, ">": left > right,
            ">=": left >= right}[node.op]
