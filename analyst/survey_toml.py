"""A survey table written as TOML a person can read and edit (`ldpsurvey import xlsform`).

Top-level keys first, then each question as a `[[questions]]` table in the form's order (keys
in a fixed, readable order, a comment above each saying where it came from), then the
`[two_server]` table, then the translations grouped by language and question. Only the shapes
a survey table holds are written: strings, integers, floats, booleans, lists of strings and
tables of those. `tomllib.loads(to_toml(d)) == d` (tests/analyst/test_xlsform_import.py).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_SURVEY_ORDER = ("id", "title", "version", "description", "language", "series", "collection",
                 "report_size_limit")
_QUESTION_ORDER = ("id", "type", "text", "hint", "options", "min", "max", "max_selected",
                   "required_min", "optional", "disclosed", "epsilon", "central_epsilon",
                   "local_epsilon", "mechanism", "relevant")


def to_toml(data: Mapping[str, Any], header: Sequence[str] = (),
            question_comments: Mapping[str, Sequence[str]] | None = None) -> str:
    """The survey table as TOML; `header` lines and per-question comment lines (by id) are
    written as `#` comments."""
    comments = question_comments or {}
    lines = [_comment(line) for line in header]
    if lines:
        lines.append("")
    lines += _pairs(data, _SURVEY_ORDER, skip={"questions", "two_server", "translations",
                                               "crosstabs"})
    for q in data.get("questions", []):
        lines.append("")
        lines += [_comment(line) for line in comments.get(q["id"], ())]
        lines.append("[[questions]]")
        lines += _pairs(q, _QUESTION_ORDER)
    if data.get("two_server"):
        lines += ["", "[two_server]", *_pairs(data["two_server"], ())]
    for tag, translation in (data.get("translations") or {}).items():
        lines += ["", f"[translations.{_key(tag)}]"]
        lines += _pairs(translation, ("title", "description"), skip={"questions"})
        for qid, entry in (translation.get("questions") or {}).items():
            lines += ["", f"[translations.{_key(tag)}.questions.{_key(qid)}]"]
            lines += _pairs(entry, ("text", "hint"), skip={"options"})
            if entry.get("options"):
                lines += [f"[translations.{_key(tag)}.questions.{_key(qid)}.options]"]
                lines += [f"{_key(label)} = {_value(shown)}"
                          for label, shown in entry["options"].items()]
    return "\n".join(lines).rstrip("\n") + "\n"


def _pairs(table: Mapping[str, Any], order: Sequence[str], skip: set[str] | None = None
           ) -> list[str]:
    keys = [k for k in order if k in table] + [k for k in table if k not in order]
    return [f"{_key(k)} = {_value(table[k])}" for k in keys if k not in (skip or set())]


def _comment(line: str) -> str:
    return "# " + " ".join(str(line).split()) if line else "#"


def _key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _string(key)


def _string(text: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's, except that TOML also escapes DEL."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("a survey holds finite numbers only")
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")
