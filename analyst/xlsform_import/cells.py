"""Cell parsers: yes/no cells, ε cells, yes/no choice lists, and the constraints ldpsurvey
keeps (an integer's range, how many options a check-all-that-apply question takes). Each
returns the value or raises Refusal with the reason and what to write instead."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from ldpsurvey.shared.question_types.base import XLSFormRange

from . import expressions as xp
from .errors import FIX, UNSUPPORTED, Refusal, quoted
from .exclusivity import split

TRUE_CELLS = ("yes", "true", "true()", "1")
FALSE_CELLS = ("no", "false", "false()", "0")
# The spellings of a yes/no choice list's two names (any case), each yes with its own no.
_YES_NO = (("yes", "no"), ("y", "n"), ("true", "false"), ("1", "0"))
_RANGES = "integers without a range"
# `a <= . <= b` (or `b >= . >= a`, strict or not): the range the designer wrote, though XPath
# reads it as `(a <= .) <= b`, a true/false compared with b, so ODK enforces nothing there.
_CHAINED = re.compile(r"^\s*(-?\d+)\s*(<=?|>=?)\s*\.\s*(<=?|>=?)\s*(-?\d+)\s*$")
# The same with decimals (`0 <= . <= 99.5`), for a decimal's range.
_CHAINED_NUMBERS = re.compile(r"^\s*(-?\d+(?:\.\d*)?)\s*(<=?|>=?)\s*\.\s*(<=?|>=?)\s*"
                              r"(-?\d+(?:\.\d*)?)\s*$")
# A number written in a cell, with the digits after its point.
_WRITTEN = re.compile(r"(?<![\w.])-?\d+(?:\.(\d*))?(?![\w.])")
_NUMBERS = "numbers without a range"
_RANGE_DEFAULTS = {"start": "1", "end": "10", "step": "1"}  # XLSForm's, for an empty cell


def chained_range(constraint: str) -> tuple[int, int] | None:
    """(min, max) of a chained range constraint `a <= . <= b` (`<` made inclusive; `>` the
    other way round), None for any other constraint."""
    m = _CHAINED.match(constraint)
    if m is None or m[2][0] != m[3][0]:
        return None
    first, second = int(m[1]), int(m[4])
    if m[2][0] == ">":  # b >= . >= a
        return second + (m[3] == ">"), first - (m[2] == ">")
    return first + (m[2] == "<"), second - (m[3] == "<")


@dataclass(frozen=True)
class ConditionalRange:
    """`if(cond, range, range)`: a constraint whose range follows an earlier answer (the
    MSNA's `hh_size`: `if(${resp_hoh_yn}='no', . >= 2 and . <= 30, . >= 1 and . <= 30)`).
    Imported as the smallest range holding both (`low` to `high`): a randomized answer's
    domain cannot follow another answer (the range itself would tell that answer), and every
    answer ODK accepts stays in it. `branches` are the two ranges as written."""

    low: int
    high: int
    branches: tuple[tuple[int, int], tuple[int, int]]


def conditional_range(constraint: str) -> ConditionalRange | None:
    """The two ranges of `if(cond, . >= a and . <= b, . >= c and . <= d)` (either branch
    chained, `a <= . <= b`), None for any other constraint; ExpressionError for an if() whose
    branches are not two-sided ranges, or whose ranges neither overlap nor touch (their
    smallest common range would admit answers neither allows)."""
    text = constraint.strip()
    if not (text.startswith("if") and text[2:].lstrip().startswith("(") and text.endswith(")")):
        return None
    parts = xp.arguments(text[text.index("(") + 1:-1])
    if parts is None:
        return None
    if len(parts) != 3:
        raise xp.ExpressionError("if() takes 3 arguments: if(condition, range, range)")
    xp.parse(parts[0])  # the condition is not kept, but must read as one
    branches = []
    for part in parts[1:]:
        low, high = chained_range(part) or xp.range_of(xp.parse(part))
        if low is None or high is None:
            raise xp.ExpressionError(f"its branch {part.strip()!r} bounds only one side")
        branches.append((low, high))
    (a, b), (c, d) = branches
    if max(a, c) > min(b, d) + 1:
        raise xp.ExpressionError("its two ranges neither overlap nor touch, so no one range "
                                 "holds both and only what they allow")
    return ConditionalRange(min(a, c), max(b, d), (branches[0], branches[1]))


def blank(value: Any) -> bool:
    """An empty cell (missing, or only spaces)."""
    return value is None or str(value).strip() == ""


def _yes_or_no(value: Any) -> bool | None:
    """True or False for a yes/no cell, None for anything else."""
    text = str(value).strip().lower()
    if text in TRUE_CELLS:
        return True
    if text in FALSE_CELLS:
        return False
    return None


def required(value: Any) -> bool:
    """The `required` cell: yes or no (empty: no); a condition is refused."""
    if blank(value):
        return False
    answer = _yes_or_no(value)
    if answer is None:
        raise Refusal(UNSUPPORTED, f"required {quoted(value)} is a condition (required only "
                      "sometimes)", "write yes or no", "required as a condition")
    return answer


def flag(value: Any, column: str) -> bool:
    """A yes/no `ldp_*` cell (empty: no)."""
    if blank(value):
        return False
    answer = _yes_or_no(value)
    if answer is None:
        raise Refusal(FIX, f"{column} {quoted(value)} is not yes or no", "write yes or no",
                      "ldp_* cells")
    return answer


def positive(value: Any, column: str) -> float | None:
    """A number > 0 (an ε), None for an empty cell."""
    if blank(value):
        return None
    try:
        number = float(str(value).strip())
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or number <= 0:
        raise Refusal(FIX, f"{column} {quoted(value)} is not a number > 0",
                      f"write {column} as a number such as 1.0", "ldp_* cells")
    return number


def yes_no(options: Mapping[str, str]) -> tuple[str, str] | None:
    """(yes name, no name) of a yes/no list (two choices named yes and no, y/n, true/false or
    1/0, in any case), else None."""
    names = list(options)
    if len(names) != 2:
        return None
    lowered = tuple(n.strip().lower() for n in names)
    if lowered in _YES_NO:
        return names[0], names[1]
    if lowered[::-1] in _YES_NO:
        return names[1], names[0]
    return None


@dataclass(frozen=True)
class ChosenBounds:
    """The bounds the researcher gives an integer the form leaves open on a side (an
    unbounded count, `. >= 0`), without editing the form: the row's `ldp_min` / `ldp_max`
    cells, and `--integer-max N` for every integer bounded below only. Never a default: a
    side nobody bounds leaves the row out, as before."""

    low: int | None = None  # ldp_min
    high: int | None = None  # ldp_max
    integer_max: int | None = None  # --integer-max: the max of an integer bounded below only


def chosen_bounds(cells: Mapping[str, Any], integer_max: int | None = None) -> ChosenBounds:
    """The row's ldp_min and ldp_max (whole numbers; Refusal to fix otherwise) and
    `integer_max`."""
    found: dict[str, int | None] = {}
    for column in ("ldp_min", "ldp_max"):
        value = cells.get(column)
        if blank(value):
            found[column] = None
            continue
        text = str(value).strip()
        if isinstance(value, float) and value.is_integer():
            text = str(int(value))
        try:
            found[column] = int(text)
        except ValueError:
            raise Refusal(FIX, f"{column} {quoted(value)} is not a whole number",
                          f"write {column} as a whole number such as 50", "ldp_* cells") from None
    return ChosenBounds(found["ldp_min"], found["ldp_max"], integer_max)


def integer_range(el: Mapping[str, Any], cells: Mapping[str, Any], category: str,
                  chosen: ChosenBounds = ChosenBounds()) -> tuple[int, int, list[str]]:
    """(min, max) of an integer question, and what is said of a bound the researcher chose:
    a range row's start and end, or an integer row's range constraint, a side it leaves open
    bounded by `chosen`."""
    constraint = str(cells.get("constraint") or "").strip()
    if category == "range":
        if constraint:
            raise Refusal(UNSUPPORTED, "a constraint on a range question",
                          "drop the constraint: the range's start and end bound it",
                          "constraints that cannot be kept")
        if chosen.low is not None or chosen.high is not None:
            raise Refusal(FIX, "ldp_min and ldp_max bound an integer row; a range row's "
                          "start and end bound it", "clear ldp_min and ldp_max on this row",
                          "ldp_* cells")
        low, high = _range_parameters(el.get("parameters") or {})
        return low, high, []
    return _range_constraint(constraint, chosen)


def _range_parameters(params: Mapping[str, Any]) -> tuple[int, int]:
    try:
        start, end = int(str(params.get("start", "1"))), int(str(params.get("end", "10")))
        step = int(str(params.get("step", "1")))
    except ValueError:
        raise Refusal(UNSUPPORTED, "a range with decimal start, end or step",
                      "whole-number start and end with step=1", _RANGES) from None
    if step != 1 or start >= end:
        raise Refusal(UNSUPPORTED, f"a range from {start} to {end} in steps of {step}",
                      "start < end with step=1 (or an integer with a range constraint)",
                      _RANGES)
    return start, end


@dataclass(frozen=True)
class NumberRange:
    """A decimal's range as written (XLSFormRange), with how the constraint said it: chained
    (`a <= . <= b`) and which sides were strict (`. < b`), which the import notes."""

    range: XLSFormRange
    chained: bool = False
    strict: tuple[str, ...] = ()


def range_parameters(el: Mapping[str, Any]) -> dict[str, str]:
    """A range row's start, end and step as written, XLSForm's defaults for empty cells."""
    params = el.get("parameters") or {}
    return {key: str(params.get(key) or default).strip()
            for key, default in _RANGE_DEFAULTS.items()}


def places(text: str) -> int:
    """The most digits after the decimal point among the numbers written in `text`."""
    return max((len(m[1] or "") for m in _WRITTEN.finditer(text)), default=0)


def number_range(el: Mapping[str, Any], cells: Mapping[str, Any], category: str
                 ) -> NumberRange:
    """The exact range of a number: a range row's start, end and step, or a row's two-sided
    range constraint (a strict bound read as inclusive: the answer is rounded to the grid,
    which holds the bound)."""
    constraint = str(cells.get("constraint") or "").strip()
    if category == "range":
        if constraint:
            raise Refusal(UNSUPPORTED, "a constraint on a range question",
                          "drop the constraint: the range's start and end bound it",
                          "constraints that cannot be kept")
        written = range_parameters(el)
        try:
            start, end, step = (Decimal(written[k]) for k in ("start", "end", "step"))
        except InvalidOperation:
            raise Refusal(FIX, f"a range whose start, end or step is not a number "
                          f"({written['start']}, {written['end']}, {written['step']})",
                          "write numbers such as start=0 end=10 step=0.5", _NUMBERS) from None
        if not (start.is_finite() and end.is_finite() and step.is_finite()) \
                or step <= 0 or start >= end:
            raise Refusal(UNSUPPORTED, f"a range from {start} to {end} in steps of {step}",
                          "start < end with a step > 0", _NUMBERS)
        return NumberRange(XLSFormRange(start, end, step, places(" ".join(written.values()))))
    if not constraint:
        raise Refusal(UNSUPPORTED, "a number without a range cannot be randomized",
                      "add a constraint such as . >= 0 and . <= 5000", _NUMBERS)
    m = _CHAINED_NUMBERS.match(constraint)
    if m is not None and m[2][0] == m[3][0]:
        ascending = m[2][0] == "<"  # a <= . <= b, else b >= . >= a
        low, high = (Decimal(m[1]), Decimal(m[4])) if ascending else \
            (Decimal(m[4]), Decimal(m[1]))
        ops = (m[2], m[3]) if ascending else (m[3], m[2])  # the low side's, the high side's
        strict = tuple(side for side, op in zip(("min", "max"), ops, strict=True)
                       if len(op) == 1)
        found = NumberRange(XLSFormRange(low, high, None, places(constraint)), True, strict)
    else:
        try:
            (low, high), strict = xp.number_range_of(xp.parse(constraint))
        except xp.ExpressionError as exc:
            raise Refusal(UNSUPPORTED, f"its constraint {quoted(constraint)} is not a range "
                          f"({exc.message})", "write it as . >= a and . <= b",
                          _NUMBERS) from None
        if low is None or high is None:
            raise Refusal(UNSUPPORTED, f"its constraint {quoted(constraint)} bounds only one "
                          "side (a number without a range cannot be randomized)",
                          "give both: . >= a and . <= b", _NUMBERS)
        found = NumberRange(XLSFormRange(low, high, None, places(constraint)), False, strict)
    if found.range.low >= found.range.high:
        raise Refusal(FIX, f"its constraint {quoted(constraint)} leaves no range",
                      "widen the range", "ranges that leave one value")
    return found


_CHOOSE = ("give both: . >= a and . <= b, or, without editing the form, ldp_min and ldp_max "
           "(--integer-max N bounds every integer bounded below only)")


def _range_constraint(constraint: str, chosen: ChosenBounds) -> tuple[int, int, list[str]]:
    low: int | None = None
    high: int | None = None
    if constraint:
        try:
            conditional = conditional_range(constraint)
            low, high = ((conditional.low, conditional.high) if conditional is not None else
                         chained_range(constraint) or xp.range_of(xp.parse(constraint)))
        except xp.ExpressionError as exc:
            raise Refusal(UNSUPPORTED, f"its constraint {quoted(constraint)} is not a range "
                          f"({exc.message})", "write it as . >= a and . <= b",
                          _RANGES) from None
    written = (low, high)
    said: list[str] = []
    for side, own, column in (("min", chosen.low, "ldp_min"), ("max", chosen.high, "ldp_max")):
        bound = low if side == "min" else high
        if own is None:
            continue
        if bound is not None and bound != own:
            raise Refusal(FIX, f"{column} {own} differs from its constraint's {side} {bound} "
                          f"({quoted(constraint)})", f"clear {column} (the constraint bounds "
                          f"that side), or change the constraint", "ldp_* cells")
        if bound is None:
            said.append(f"its {side} {own} is the row's {column}")
        low, high = (own, high) if side == "min" else (low, own)
    if low is not None and high is None and chosen.integer_max is not None \
            and written[1] is None:
        high = chosen.integer_max
        said.append(f"its max {high} is --integer-max (its constraint bounds it below only)")
    if low is None or high is None:
        if not constraint and low is None and high is None:  # like a decimal: no mechanism
            raise Refusal(UNSUPPORTED, "an integer without a range cannot be randomized",
                          "add a constraint such as . >= 0 and . <= 30, or ldp_min and "
                          "ldp_max", _RANGES)
        what = (f"its constraint {quoted(constraint)} bounds only one side" if constraint
                else "only one side is bounded")
        raise Refusal(UNSUPPORTED, f"{what} (an integer without a range cannot be "
                      "randomized)", _CHOOSE, _RANGES)
    if low >= high:
        if said:
            raise Refusal(FIX, f"its range {low} to {high} ({'; '.join(said)}) leaves fewer "
                          "than two values", "widen the range", "ranges that leave one value")
        raise Refusal(FIX, f"its constraint {quoted(constraint)} leaves fewer than two "
                      "values", "widen the range", "ranges that leave one value")
    return low, high, said


def multiselect_bounds(cells: Mapping[str, Any], is_required: bool, k: int) -> dict[str, int]:
    """`max_selected` and `required_min` of a check-all-that-apply question of k options,
    from its count-selected constraint and `required` (only what differs from the
    defaults)."""
    constraint = str(cells.get("constraint") or "").strip()
    low, high = None, None
    if constraint:  # an exclusivity (exclusivity.py) and bounds on how many are checked
        exclusive = split(constraint, str(cells.get("name") or ""))
        try:
            tree = xp.parse(constraint) if exclusive is None else exclusive.rest
            if tree is not None:
                low, high = xp.count_bounds(tree)
        except xp.ExpressionError as exc:
            raise Refusal(UNSUPPORTED, f"its constraint {quoted(constraint)} is not a bound on "
                          f"how many are checked ({exc.message})", "drop it, or write "
                          "count-selected(.) <= m", "constraints that cannot be kept") from None
    minimum = max(low or 0, 1 if is_required else 0)
    if minimum > 1:
        raise Refusal(UNSUPPORTED, f"at least {minimum} options must be checked",
                      "at least 0 or 1 (count-selected(.) >= 1, or required)",
                      "constraints that cannot be kept")
    out: dict[str, int] = {}
    if high is not None and high < k:
        out["max_selected"] = high
    if minimum:
        out["required_min"] = minimum
    return out


def whole(text: str) -> bool:
    """Digits 0-9 only: str.isdigit() also takes '²' and other digits int() refuses."""
    return text.isascii() and text.isdigit()
