"""The store's compact JSON text is the standard library's compact text, whichever encoder
writes it (orjson on the fast path, the standard encoder for what orjson refuses)."""

import json

import pytest
from ldpsurvey.server.store.base import compact


def stdlib(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@pytest.mark.parametrize("value", [
    {"smoker": True, "color": 3, "age": -27},
    {"bits": [0, 4294967295, 17], "olh": [123456789, 3]},
    {"kind": "counts", "n": 2**62, "counts": [1, 2, 3]},
    {"q.é-1": "naïve \u2028 \n \x01 \" \\ 🙂"},
    {"big": 2**70, "neg": -(2**80)},      # beyond 64 bits: the standard encoder writes it
    {"nested": {"a": [None, False, {"b": []}]}},
])
def test_compact_text_equals_the_standard_compact_text(value):
    assert compact(value) == stdlib(value)
    assert json.loads(compact(value)) == value
