"""Strict JSON request bodies: application/json, UTF-8, one object, no NaN/Infinity, no
duplicate keys, bounded nesting. Anything else is refused before it reaches the store."""

from __future__ import annotations

import json
import math
from itertools import chain
from typing import Any

import orjson
from flask import Request

from .errors import MalformedRequest, UnsupportedMediaType, ValidationFailed
from .wire_ints import INT64_MAX, INT64_MIN, check_body_integers


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
    """Any strict JSON value from UTF-8 bytes; MalformedRequest (400) says what is wrong,
    IntegerOutOfRange (422) names an integer beyond the signed 64-bit range (server/wire_ints).

    orjson parses first (issue 22's profile: the standard parser with its duplicate-key hook
    took 1.1-2.2 ms of the GIL per batch of 1,000 submissions, the largest Python cost of a
    batch; orjson with the check below takes 0.56 ms). Its value is kept only when it is
    certainly what the strict parser gives: no float anywhere (orjson turns integers beyond
    64 bits into floats), no integer beyond the signed 64-bit range (the strict parser names
    it) and as many object members as the body has colons (a colon inside a string only sends
    the body to the strict parser; a duplicate key leaves fewer members than colons). Anything
    else, errors included, goes to the strict parser, which decides."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    else:
        if _members_unless_float(value) == data.count(b":"):
            return value
    return _strict(data)


_NUMBERS = frozenset((int, bool))


def _members_unless_float(value: Any) -> int:
    """How many members the objects in `value` hold, or -1 if it holds a float or an integer
    beyond the signed 64-bit range (orjson reads up to 2^64 - 1).

    Walked a nesting level at a time, each level's values sorted by type and counted in C
    (`map`, `chain`, `min`/`max`) instead of one Python step per value (issue 40: the step
    per value took ~1 µs of a batched submission's ~14 µs of ingest CPU)."""
    members = 0
    level = [value]
    while level:
        kinds = set(map(type, level))
        if float in kinds:
            return -1
        if int in kinds:  # (a bool is 0 or 1: in range)
            ints = level if kinds <= _NUMBERS else [v for v in level if type(v) is int]
            if min(ints) < INT64_MIN or max(ints) > INT64_MAX:
                return -1
        objects = (level if len(kinds) == 1 else [v for v in level if type(v) is dict]) \
            if dict in kinds else []
        members += sum(map(len, objects))
        level = list(chain(chain.from_iterable(map(dict.values, objects)),
                           chain.from_iterable(v for v in level if type(v) is list)
                           if list in kinds else ()))
    return members


def _strict(data: bytes) -> Any:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise MalformedRequest("the body is not UTF-8") from None
    try:
        value = json.loads(text, object_pairs_hook=_no_duplicates, parse_float=_finite_float,
                           parse_constant=_no_constant)
    except RecursionError:
        raise MalformedRequest("the JSON body is nested too deeply") from None
    except _DuplicateKey as exc:
        raise MalformedRequest(f"the JSON body has a {exc}") from None
    except ValueError as exc:
        raise MalformedRequest(f"the body is not valid JSON: {str(exc)[:200]}") from None
    check_body_integers(value)
    return value


def json_object(request: Request) -> dict[str, Any]:
    """The request's body as a JSON object, or 415 / 400 / 422."""
    if request.mimetype != "application/json":
        raise UnsupportedMediaType("send the body as Content-Type: application/json")
    charset = request.mimetype_params.get("charset")
    if charset is not None and charset.lower() not in ("utf-8", "utf8"):
        raise UnsupportedMediaType("the JSON body must be UTF-8")
    return object_of(request.get_data(cache=False))  # 413 over MAX_CONTENT_LENGTH


def object_of(data: bytes) -> dict[str, Any]:
    """A strict JSON object from a body's bytes, or 400 / 422."""
    value = parse_json(data)
    if not isinstance(value, dict):
        raise ValidationFailed("the JSON body must be an object")
    return value
