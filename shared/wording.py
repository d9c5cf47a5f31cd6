"""Numbers in a respondent's words, the same strings on the page and in the CLI: `pct` is
client/web/js/mechanisms.js `pct`, `to_precision` is JavaScript's `Number.prototype.toPrecision`,
`js_number` is JavaScript's `String(number)`. Rounding follows JavaScript (a tie rounds up, on
the exact value of the float), so the page and `respond` never differ in a digit."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import Any


def to_fixed(x: float, digits: int) -> str:
    """JavaScript's `x.toFixed(digits)` for a finite x below 1e21."""
    return str(Decimal(x).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def to_precision(x: float, digits: int) -> str:
    """JavaScript's `x.toPrecision(digits)` for a finite positive x: fixed notation unless the
    exponent is below -6 or at least `digits`, trailing zeros kept."""
    exact = Decimal(x)
    exponent = exact.adjusted()
    rounded = exact.quantize(Decimal(1).scaleb(exponent - digits + 1), rounding=ROUND_HALF_UP)
    if rounded.adjusted() != exponent:  # 9.995 -> 10.0: one more digit before the point
        exponent = rounded.adjusted()
        rounded = exact.quantize(Decimal(1).scaleb(exponent - digits + 1), rounding=ROUND_HALF_UP)
    if exponent < -6 or exponent >= digits:
        mantissa = rounded.scaleb(-exponent)
        return f"{mantissa}e{'+' if exponent >= 0 else '-'}{abs(exponent)}"
    return f"{rounded:f}"


def pct(p: Any) -> str:
    """A probability as a percentage, one decimal (more for the very small or large)."""
    v = 100 * float(p)
    if v in (0.0, 100.0):
        return f"{v:g}%"
    if v < 0.05:
        return f"{to_precision(v, 2)}%"
    if v > 99.95:
        return to_fixed(v, 4).rstrip("0") + "%"
    return f"{to_fixed(v, 1)}%"


def js_number(x: float) -> str:
    """A number as JavaScript's String() writes it in the usual range (1, 0.5, 2.25)."""
    text = repr(float(x))
    return text[:-2] if text.endswith(".0") else text
