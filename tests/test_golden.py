"""support/golden.py, the comparison of every golden file that holds floats (issue 39): a float's
last digits may move (another CPU's kernels), nothing else may: a digit that a reader could
see, a word, a key, a count, the layout."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from support.golden import RELATIVE, assert_matches_golden, mismatch

GOLDEN = Path(__file__).resolve().parent / "data" / "srs_reports"
FILES = sorted(p.name for p in GOLDEN.iterdir())
FLOAT = re.compile(r"(?<![\w.])-?\d+\.\d+(?:[eE][-+]?\d+)?(?![\w]|\.\d)")


def another_cpu(text: str, ulps: int = 4) -> str:
    """Every float of `text` moved by a few units in its last place and written back as
    Python writes it (`18.336242050042102` becomes `18.33624205004211`, say): what another
    machine's kernels give."""
    def move(match: re.Match[str]) -> str:
        x = float(match.group())
        for _ in range(ulps):
            x = math.nextafter(x, math.inf)
        return repr(x)
    return FLOAT.sub(move, text)


def test_the_issues_example_matches() -> None:
    assert mismatch('"std_error": 18.3362420500421,', '"std_error": 18.336242050042102,') is None
    assert mismatch("se,18.3362420500421\n", "se,18.336242050042102\n") is None
    assert mismatch("0.0", "1e-17") is None  # a true zero left as rounding noise


@pytest.mark.parametrize("name", FILES)
def test_every_golden_file_matches_itself_from_another_cpu(name: str) -> None:
    text = (GOLDEN / name).read_text(encoding="utf-8")
    moved = another_cpu(text)
    assert moved != text  # every golden file here holds floats
    assert_matches_golden(moved, text, name)


@pytest.mark.parametrize("name", FILES)
def test_a_digit_changed_at_one_in_a_million_fails(name: str) -> None:
    text = (GOLDEN / name).read_text(encoding="utf-8")
    last = [m for m in FLOAT.finditer(text) if float(m.group()) != 0][-1]
    changed = repr(float(last.group()) * (1 + 1e-6))
    wrong = text[:last.start()] + changed + text[last.end():]
    found = mismatch(wrong, text)
    assert found is not None and f"number {changed}" in found.why
    assert found.line == text[:last.start()].count("\n") + 1
    with pytest.raises(AssertionError, match=f"{name} differs from its golden file at line"):
        assert_matches_golden(wrong, text, name)


@pytest.mark.parametrize(("got", "expected", "why"), [
    ('{"value": "north", "n": 300}', '{"value": "south", "n": 300}', "text 'nor"),  # a word
    ('{"value": "north", "n": 301}', '{"value": "north", "n": 300}', "number 301"),  # a count
    ('{"estimate": 0.25}', '{"estimate": 0.2500001}', "number 0.25"),  # 4e-7 relative
    ('{"estimate": 2}', '{"estimate": 2.0}', "number 2 "),  # an int where a float was
    ('{"estimate": 0.25}', '{"estimates": 0.25}', "text '\": '"),  # a key
    ("a,b\n1.5,x\n", "a,b\n1.5,y\n", "text 'x"),  # a CSV label
    ("a,b\n1.5,x\n", "a;b\n1.5;x\n", "text ',b"),  # the separator
    ("n  0.50\n", "n 0.50\n", "text ' '"),  # a table's layout
    ("x 1.5 2.5\n", "x 1.5\n", "text ' '"),  # a number more
    ("wave-2026", "wave-2025", "number 2026"),  # a whole number exactly
    ("sha ab1e5cd", "sha ab1e4cd", "text '5cd'"),  # a number glued to letters is text
])
def test_any_other_difference_fails(got: str, expected: str, why: str) -> None:
    found = mismatch(got, expected)
    assert found is not None and found.why.startswith(why), found


def test_the_tolerance_is_the_stated_one() -> None:
    assert RELATIVE == 1e-9
    assert mismatch("1.0000000009", "1.0") is None
    assert mismatch("1.000000002", "1.0") is not None
