"""Integers from the wire, range-checked once at the edge (issue 32).

An integer a request carries (a number in a JSON body, a path segment, a query parameter) is
checked here before any handler, library or store sees it: a body's numbers all lie in the
signed 64-bit range every store column can hold (`parse_json` refuses the rest, naming where),
and a field with a narrower meaning (a survey version) is read with `wire_int` or `param_int`
with its own bounds. Python's integers are unbounded and SQLite's and PostgreSQL's are not, so
without this a version of 2^63 reached the database and answered 500.

A body's out-of-range or wrongly typed number is `IntegerOutOfRange` (422, details name the
field); a path segment or query parameter is `InvalidParameter` (400, details name the
parameter). Both leave nothing stored.
"""

from __future__ import annotations

import re
from typing import Any

from ldpsurvey.shared.survey import MAX_VERSION

from .errors import InvalidParameter, ValidationFailed

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
VERSION_RANGE = (1, MAX_VERSION)  # fits a 32-bit INTEGER column (PostgreSQL's `version`)
_DIGITS = re.compile(r"^-?[0-9]{1,19}$")  # longer can never be in the 64-bit range


class IntegerOutOfRange(ValidationFailed):
    """A JSON body holds a number where an integer in a range is expected, outside it (or not
    an integer at all); `details["field"]` names where."""

    code = "integer_out_of_range"


def _range_text(minimum: int, maximum: int) -> str:
    if minimum == INT64_MIN and maximum == INT64_MAX:
        return "a 64-bit signed integer"
    if maximum == INT64_MAX:
        return f"an integer >= {minimum}"
    return f"an integer between {minimum} and {maximum}"


def in_range(value: Any, minimum: int = INT64_MIN, maximum: int = INT64_MAX) -> bool:
    """Whether `value` is an int (not a bool) in [minimum, maximum]."""
    return type(value) is int and minimum <= value <= maximum


def wire_int(value: Any, field: str, minimum: int = INT64_MIN,
             maximum: int = INT64_MAX) -> int:
    """A JSON body's `field` as an int in [minimum, maximum], or IntegerOutOfRange (422)."""
    if not in_range(value, minimum, maximum):
        raise IntegerOutOfRange(f"{field} must be {_range_text(minimum, maximum)}",
                                {"field": field})
    return value


def param_int(text: str | None, name: str, minimum: int = INT64_MIN,
              maximum: int = INT64_MAX) -> int:
    """A path segment's or query parameter's decimal digits as an int in [minimum, maximum],
    or InvalidParameter (400) naming it."""
    value = int(text) if isinstance(text, str) and _DIGITS.match(text) else None
    if value is None or not minimum <= value <= maximum:
        raise InvalidParameter(f"{name} must be {_range_text(minimum, maximum)}",
                               {"parameter": name})
    return value


def check_body_integers(value: Any) -> None:
    """Refuse (IntegerOutOfRange) the first integer of a parsed JSON body outside the signed
    64-bit range, naming its place (`a.b[2]`)."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, where = stack.pop()
        kind = type(item)
        if kind is dict:
            stack.extend((v, f"{where}.{k}" if where else str(k)) for k, v in item.items())
        elif kind is list:
            stack.extend((v, f"{where}[{i}]") for i, v in enumerate(item))
        elif kind is int and not INT64_MIN <= item <= INT64_MAX:
            raise IntegerOutOfRange(f"{where or 'the body'} is beyond the 64-bit integer "
                                    "range", {"field": where or None})
