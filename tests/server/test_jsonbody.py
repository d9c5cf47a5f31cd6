"""parse_json's orjson shortcut answers exactly what the strict parser answers.

The shortcut keeps orjson's value only when it cannot differ from the strict parser's (no
float, no duplicate key); everything else goes to the strict parser. Checked against the strict
parser itself on generated JSON texts: values of every kind, any spacing, colons inside
strings, duplicate keys, integers beyond 64 bits, non-finite and malformed numbers. Both
refuse an integer beyond the signed 64-bit range (server/common/wire_ints.py), naming where it is.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ldpsurvey.server.common.errors import ServerError
from ldpsurvey.server.common.jsonbody import _strict, parse_json
from ldpsurvey.server.common.wire_ints import IntegerOutOfRange

SCALARS = (st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=20)


def outcome(parse, data: bytes):
    try:
        return ("value", parse(data))
    except ServerError as exc:  # malformed (400) or an integer out of range (422)
        return ("refused", exc.message)


def same(a, b) -> bool:
    """Equal outcomes, types included (1 and 1.0 and True are all == in Python)."""
    if a[0] != b[0]:
        return False
    return a[0] == "refused" or (json.dumps(a[1]) == json.dumps(b[1]) and _types(a[1]) == \
        _types(b[1]))


def _types(value):
    if isinstance(value, dict):
        return {k: _types(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_types(v) for v in value]
    return type(value).__name__


@settings(max_examples=400)
@given(VALUES, st.sampled_from([(",", ":"), (", ", ": "), (",", " : ")]))
def test_any_json_text_parses_as_the_strict_parser_says(value, separators):
    data = json.dumps(value, separators=separators).encode()
    assert same(outcome(parse_json, data), outcome(_strict, data))


@settings(max_examples=200)
@given(st.dictionaries(st.text(max_size=4), SCALARS, min_size=1, max_size=4), st.data())
def test_a_duplicate_key_is_refused_like_the_strict_parser_does(value, data):
    key = data.draw(st.sampled_from(sorted(value)))
    text = json.dumps(value, separators=(",", ":"))
    duplicated = (text[:-1] + "," + json.dumps(key) + ":" + json.dumps(value[key]) + "}")
    result = outcome(parse_json, duplicated.encode())
    assert result[0] == "refused" and "duplicate key" in result[1]


@pytest.mark.parametrize("data", [
    b'{"a":123456789012345678901234567890}',  # beyond 64 bits: orjson would give a float
    b'{"a":1e400}', b'{"a":-1e400}', b'{"a":NaN}', b'{"a":Infinity}',
    b'{"a:b":1}', b'{"a":"x:y"}',  # colons inside strings
    b'{"a":1,"a":1}', b'{"s":{"a":1,"a":2}}',
    b'\xef\xbb\xbf{}', b'{"a":"\\ud800"}', b'{"a":"\x01"}', b'"\xff"', b'[1,]', b'{} x',
    b'[' * 5000 + b']' * 5000,
])
def test_edge_texts_parse_as_the_strict_parser_says(data):
    assert same(outcome(parse_json, data), outcome(_strict, data))


def test_integers_beyond_64_bits_are_refused_naming_where():
    for data, where in ((b'{"a":123456789012345678901234567890}', "a"),
                        (b'{"a":[0,{"b":9223372036854775808}]}', "a[1].b"),
                        (b'{"a":-9223372036854775809}', "a"), (b'18446744073709551615', None)):
        with pytest.raises(IntegerOutOfRange) as refused:
            parse_json(data)
        assert refused.value.details == {"field": where}
    edges = b'{"a":9223372036854775807,"b":-9223372036854775808}'
    assert parse_json(edges) == {"a": 2**63 - 1, "b": -(2**63)}
