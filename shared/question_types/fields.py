"""The checks every definition field shares: texts, integers, ε, option lists and groups.

The schema (shared/survey.py), the units' `parse` and the translations (shared/translations.py)
check their fields with these, so that an error names `questions.<id>.<field>` in the same
words everywhere. A leaf module: it imports only the errors (and, when an option list is
checked, the largest domain any mechanism takes).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..errors import SurveyError

MAX_LABEL = 500  # an option, group, region or special value's text (MAX_TEXT: a question's)
MAX_TEXT = 2000


def text(data: Mapping, key: str, where: str, required: bool = True,
         empty_ok: bool = False) -> str | None:
    """A string field of at most MAX_TEXT characters (None when absent and not `required`)."""
    value = data.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (not empty_ok and not value.strip()):
        raise SurveyError(where, "must be a non-empty string")
    if len(value) > MAX_TEXT:
        raise SurveyError(where, f"at most {MAX_TEXT} characters")
    check_utf8(value, where)
    return value


def check_utf8(value: str, where: str) -> None:
    """Refuse strings that have no UTF-8 form (lone surrogates): they cannot be signed."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise SurveyError(where, "contains characters that are not valid Unicode text "
                          "(a lone surrogate)") from None


def integer(data: Mapping, key: str, where: str) -> int:
    """An integer field (a boolean is not one)."""
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise SurveyError(where, "must be an integer")
    return value


def epsilon(value: Any, where: str) -> float:
    """A finite number > 0; its range is the mechanism's (checked once it is known)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SurveyError(where, "must be a number > 0")
    try:
        eps = float(value)
    except OverflowError:  # an integer beyond any float
        eps = math.inf
    if not math.isfinite(eps) or eps <= 0:
        raise SurveyError(where, "must be a finite number > 0")
    return eps


def mechanism_and_choice(data: Mapping, where: str) -> tuple[str, str | None]:
    """A randomized question's `mechanism` (a name, "auto" when absent) and
    `mechanism_choice` (auto's written reason, only beside a concrete mechanism)."""
    requested = data.get("mechanism", "auto")
    if not isinstance(requested, str):
        raise SurveyError(f"{where}.mechanism", "must be a mechanism name")
    choice = data.get("mechanism_choice")
    if choice is not None and (not isinstance(choice, str) or requested == "auto"):
        raise SurveyError(f"{where}.mechanism_choice",
                          "is written by auto selection next to a concrete mechanism")
    return requested, choice


def mechanism_request(data: Mapping, where: str) -> tuple[str, str | None, dict | None]:
    """A randomized question's `mechanism` (a name, "auto" when absent), `mechanism_choice`
    (auto's written reason, only beside a concrete mechanism) and `params` (a table, or None
    when absent), each checked for its shape; which names and parameters fit is the unit's."""
    requested, choice = mechanism_and_choice(data, where)
    params = data.get("params")
    if params is not None and not isinstance(params, dict):
        raise SurveyError(f"{where}.params", "must be a table (an object of parameters)")
    return requested, choice, params


def asks_directly(data: Mapping) -> bool:
    """Whether a question's table asks it directly (`disclosed`, a property every unit
    handles): the key given as anything but false. A value other than true is refused where
    the question is parsed (shared/question_types/single.py)."""
    return data.get("disclosed", False) is not False


def optional(data: Mapping, where: str) -> bool:
    """A question's `optional` (false when absent)."""
    value = data.get("optional", False)
    if not isinstance(value, bool):
        raise SurveyError(f"{where}.optional", "must be true or false")
    return value


def options(value: Any, where: str) -> tuple[str, ...]:
    """A list of 2 or more distinct non-empty labels, at most the largest domain any
    mechanism takes."""
    from ..mechanisms.base import MAX_OPTIONS

    if not isinstance(value, list):
        raise SurveyError(where, "must be a list of labels")
    if len(value) < 2:
        raise SurveyError(where, "needs at least 2 options")
    if len(value) > MAX_OPTIONS:
        raise SurveyError(where, f"at most {MAX_OPTIONS} options")
    seen: set[str] = set()
    for i, label in enumerate(value):
        if not isinstance(label, str) or not label.strip():
            raise SurveyError(f"{where}[{i}]", "must be a non-empty string")
        if len(label) > MAX_LABEL:
            raise SurveyError(f"{where}[{i}]", f"at most {MAX_LABEL} characters")
        check_utf8(label, f"{where}[{i}]")
        if label in seen:
            raise SurveyError(f"{where}[{i}]", f"duplicate label {label!r}")
        seen.add(label)
    return tuple(value)


def groups(value: Any, options: tuple[str, ...], where: str) -> dict[str, tuple[str, ...]]:
    """A table of group name = [option labels]."""
    if not isinstance(value, Mapping):
        raise SurveyError(where, "must be a table of name = [labels]")
    known = set(options)
    found: dict[str, tuple[str, ...]] = {}
    for name, members in value.items():
        at = f"{where}.{name}"
        if not isinstance(name, str) or not name.strip() or len(name) > MAX_LABEL:
            raise SurveyError(at, "group name must be a non-empty string")
        check_utf8(name, at)
        if not isinstance(members, list) or not members:
            raise SurveyError(at, "must be a non-empty list of option labels")
        if len(set(map(str, members))) != len(members):
            raise SurveyError(at, "lists an option twice")
        for label in members:
            if not isinstance(label, str) or label not in known:
                raise SurveyError(at, f"{label!r} is not one of the options")
        found[name] = tuple(members)
    return found


# A special value's name: what a designer and an imported form call it (dont_know, refused).
SPECIAL_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")
MAX_SPECIAL = 4  # special values a question may offer ("don't know", "prefer not to say", ...)


def special(value: Any, where: str) -> dict[str, str]:
    """`special`: a table of name = label (`{dont_know = "Don't know", refused = "Prefer not to
    say"}`), the extra values a respondent may choose instead of an answer; {} when absent. A
    name is lowercase letters, digits and '_'; a label is a non-empty string (the value the
    domain holds, as an option's label is)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not value:
        raise SurveyError(where, 'must be a table of name = "label" (e.g. dont_know = '
                          '"Don\'t know"), with at least one entry')
    if len(value) > MAX_SPECIAL:
        raise SurveyError(where, f"at most {MAX_SPECIAL} special values")
    labels: set[str] = set()
    for name, label in value.items():
        at = f"{where}.{name}"
        if (not isinstance(name, str) or not name or len(name) > 63
                or not set(name) <= SPECIAL_NAME_CHARS):
            raise SurveyError(at, "a special value's name is 1-63 lowercase letters, digits "
                              "or '_'")
        if not isinstance(label, str) or not label.strip():
            raise SurveyError(at, "must be a non-empty label")
        if len(label) > MAX_LABEL:
            raise SurveyError(at, f"at most {MAX_LABEL} characters")
        check_utf8(label, at)
        if label in labels:
            raise SurveyError(at, f"duplicate label {label!r}")
        labels.add(label)
    return dict(value)
