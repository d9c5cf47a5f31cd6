"""Golden files that hold floats: numbers compared to a stated tolerance, everything else exactly.

A golden file (tests/data/srs_reports/) is what the code wrote once on one machine. Its text,
keys, labels, quoting, order and layout are the code's choices and must come out the same
byte for byte. Its decimal numbers are results of floating-point arithmetic whose last bits
depend on the CPU: numpy and BLAS pick SIMD kernels (and so the order of additions) by the
processor they run on, and libm's functions differ in their last ulp between implementations,
so `18.336242050042102` on one machine is `18.3362420500421` on another of the same kind
(issue 39). A verdict that depends on the CPU is not deterministic, so a decimal number
matches when it is within RELATIVE of the expected one (ABSOLUTE for a number whose true value
is zero, which such noise can leave at 1e-17): about a million times the rounding noise of
these computations, and a million times smaller than any change of a reported digit.

One rule for every format (JSON, CSV, text tables): the text is cut into number tokens and
what lies between them. A token with a decimal point or an exponent is a float; a whole
number (a count, a version, a year, a digit of an id) is compared exactly, as is everything
between tokens. A number glued to letters (a hash's `1e5`, `v2`) is not a token: it is part
of the text.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

# BLAS/libm kernels differ by CPU in a float's last bits (rounding noise ~1e-16 relative):
# 1e-9 relative tolerates that and nothing a reader of the report could see.
RELATIVE = 1e-9
ABSOLUTE = 1e-12  # for a true zero that came out as rounding noise (~1e-17 in these reports)

# A number standing on its own: not preceded by a letter, digit, '_' or '.', not followed by
# a letter, digit or '_' (nor by '.' and a digit: then it is part of a longer number).
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w]|\.\d)")


@dataclass(frozen=True)
class Mismatch:
    """Where a text first departs from its golden file: the line (1-based), and why."""

    line: int
    why: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.why}"


def _pieces(text: str) -> list[tuple[str, int]]:
    """The text as alternating text and number tokens, each with the line it starts on:
    [text, number, text, number, ..., text] (a text piece may be empty)."""
    pieces: list[tuple[str, int]] = []
    at = 0
    line = 1
    for match in _NUMBER.finditer(text):
        between = text[at:match.start()]
        pieces.append((between, line))
        line += between.count("\n")
        pieces.append((match.group(), line))
        at = match.end()
    pieces.append((text[at:], line))
    return pieces


def _is_float(token: str) -> bool:
    return any(c in token for c in ".eE")


def _close(got: str, expected: str, relative: float, absolute: float) -> bool:
    if not (_is_float(got) and _is_float(expected)):
        return got == expected  # whole numbers exactly (and a float never matches an int)
    a, b = float(got), float(expected)
    if not (math.isfinite(a) and math.isfinite(b)):
        return got == expected
    return math.isclose(a, b, rel_tol=relative, abs_tol=absolute)


def mismatch(got: str, expected: str, relative: float = RELATIVE,
             absolute: float = ABSOLUTE) -> Mismatch | None:
    """The first place `got` departs from `expected` (None: it matches): a float token more
    than the tolerance away, or any other character different."""
    ours, theirs = _pieces(got), _pieces(expected)
    for index, ((mine, line), (want, _)) in enumerate(zip(ours, theirs, strict=False)):
        if index % 2 == 0:  # text between numbers
            if mine != want:
                at = next((i for i, (a, b) in enumerate(zip(mine, want, strict=False))
                           if a != b), min(len(mine), len(want)))
                return Mismatch(line + mine[:at].count("\n"),
                                f"text {mine[at:at + 40]!r} where the golden file has "
                                f"{want[at:at + 40]!r}")
        elif not _close(mine, want, relative, absolute):
            return Mismatch(line, f"number {mine} where the golden file has {want} "
                                  f"(tolerance: {relative:g} relative, {absolute:g} absolute)")
    if len(ours) != len(theirs):
        return Mismatch(ours[min(len(ours), len(theirs)) - 1][1],
                        f"{len(ours) // 2} numbers where the golden file has "
                        f"{len(theirs) // 2}")
    return None


def assert_matches_golden(got: str, expected: str, name: str = "output") -> None:
    """Fail with where and why `got` departs from the golden text `expected`."""
    found = mismatch(got, expected)
    assert found is None, f"{name} differs from its golden file at {found}"
