"""Strict JSON request bodies: application/json, UTF-8, one object, no NaN/Infinity, no
duplicate keys, bounded nesting. Anything else is refused before it reaches the store."""

from __future__ import annotations

import json
import math
from typing import Any

from flask import Request

from .errors import MalformedRequest, UnsupportedMediaType, ValidationFailed


class _DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(f"duplicate key {key!r}")
            seen.add(key)
    return result


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:40]} is out of range")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse_json(data: bytes) -> Any:
    """Any strict JSON value from UTF-8 bytes; MalformedRequest (400) says what is wrong."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise MalformedRequest("the body is not UTF-8") from None
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_float=_finite_float,
                          parse_constant=_no_constant)
    except RecursionError:
        raise MalformedRequest("the JSON body is nested too deeply") from None
    except _DuplicateKey as exc:
        raise MalformedRequest(f"the JSON body has a {exc}") from None
    except ValueError as exc:
        raise MalformedRequest(f"the body is not valid JSON: {str(exc)[:200]}") from None


def json_object(request: Request) -> dict[str, Any]:
    """The request's body as a JSON object, or 415 / 400 / 422."""
    if request.mimetype != "application/json":
        raise UnsupportedMediaType("send the body as Content-Type: application/json")
    charset = request.mimetype_params.get("charset")
    if charset is not None and charset.lower() not in ("utf-8", "utf8"):
        raise UnsupportedMediaType("the JSON body must be UTF-8")
    value = parse_json(request.get_data(cache=False))  # 413 over MAX_CONTENT_LENGTH
    if not isinstance(value, dict):
        raise ValidationFailed("the JSON body must be an object")
    return value
