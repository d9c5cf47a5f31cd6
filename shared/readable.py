"""Numbers written for people: no exponent notation, thousands separated, a few digits.

`plan` once printed a one-report variance as `7.263e+06` and `2e+08`: a designer reads
7,263,000 and 200,000,000. ε values have their own rule (rounded *up*, a bound stays a bound:
shared/wording.py `epsilon_text`); this is for everything else a table or a sentence shows.
"""

from __future__ import annotations

import math

import numpy as np


def readable_number(x: float, digits: int = 4) -> str:
    """`x` with `digits` significant digits, positional: 0.9207, 799.8, 1.962, 200,000,000.

    At 10^digits and above the whole number with thousands separators; below 10^-digits in
    magnitude, "< 0.0001" (a value that small reads as zero at this precision)."""
    if math.isnan(x):
        return "n/a"
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    if x == 0:
        return "0"
    if abs(x) >= 10 ** digits:
        return f"{round(x):,}"
    floor = 10.0 ** -digits
    if abs(x) < floor:
        return f"< {floor:.{digits}f}" if x > 0 else f"> -{floor:.{digits}f}"
    text = np.format_float_positional(x, precision=digits, unique=False, fractional=False,
                                      trim="-")
    whole, dot, fraction = text.partition(".")
    return f"{int(whole):,}{dot}{fraction}" if abs(x) >= 1000 else text
