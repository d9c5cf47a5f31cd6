"""Numbers in a respondent's words, the same strings on the page and in the CLI: `pct` is
client/web/js/mechanisms.js `pct`, `to_precision` is JavaScript's `Number.prototype.toPrecision`,
`js_number` is JavaScript's `String(number)`. Rounding follows JavaScript (a tie rounds up, on
the exact value of the float), so the page and `respond` never differ in a digit."""

from __future__ import annotations

import math
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


def _decimal_text(units: int, exponent: int) -> str:
    """Digits `units` times 10^exponent, written out without trailing zeros (the page's
    decimalText, client/web/js/odds.js)."""
    digits = str(units)
    if exponent >= 0:
        return digits + "0" * exponent
    padded = digits.rjust(1 - exponent, "0")
    whole, fraction = padded[:exponent], padded[exponent:].rstrip("0")
    return f"{whole}.{fraction}" if fraction else whole


def _settle(x: float) -> float:
    """x with float noise below 1e-9 removed, so a ceiling does not step up on it."""
    return round(x, 9)


def epsilon_text(epsilon: float) -> str:
    """ε for people: three significant digits, rounded *up* so that a bound stays a bound
    (3.13585 -> "3.14", 1 -> "1", 0.25 -> "0.25"; the page's epsilonText, the same strings)."""
    if not epsilon > 0:
        return "0"
    exponent = math.floor(math.log10(epsilon)) - 2
    return _decimal_text(math.ceil(_settle(epsilon / 10.0 ** exponent)), exponent)


def odds_factor(epsilon: float) -> str:
    """e^ε rounded *up* (so "at most N times" stays true): one decimal below 10, whole numbers
    below 1000, three significant digits above."""
    n = math.exp(epsilon)
    if n < 10:
        return f"{math.ceil(round(n * 10, 9)) / 10:g}"
    if n < 1000:
        return f"{math.ceil(round(n, 9)):d}"
    unit = 10 ** (math.floor(math.log10(n)) - 2)
    return f"{math.ceil(n / unit) * unit:,d}"


MAX_PERCENT_DECIMALS = 4


def percent_sure(epsilon: float) -> str | None:
    """How sure, at most, someone who thought something 50/50 can become after seeing a report
    of this ε: e^ε/(1 + e^ε) as a percentage rounded *up*, whole below 99%, with as many
    decimals as it takes to stay below 100%; None when even four decimals would say 100% (the
    page's percentSure, the same strings)."""
    percent = 100 / (1 + math.exp(-epsilon))
    for decimals in range(MAX_PERCENT_DECIMALS + 1):
        units = math.ceil(_settle(percent * 10.0 ** decimals))
        if units < 100 * 10 ** decimals:
            return f"{_decimal_text(units, -decimals)}%"
    return None
