"""Student's t and χ² distributions without scipy (a test-only dependency), the one home of
these functions at run time. The design's degrees of freedom (R's `degf`) make a design-based
interval estimate ± t_df · s.e., as R's `confint(..., df = degf(design))` and Stata's `svy`
give it, and the χ²_df distribution of a design variance estimate gives the interval of the
design effect's sampling part (design/estimators.py, docs/design-based.md §6); a
delete-a-group jackknife over G random groups takes t with G − 1 (two_server/design.py); the
privacy audit's exact binomial bounds invert the incomplete beta (analyst/audit.py);
regressions' t tests take their p-values from the incomplete beta (regression.py).

Both are inverted from the regularized incomplete beta and gamma functions (continued
fractions and series, Numerical Recipes §6.2 and §6.4) by bisection to double precision.
"""

from __future__ import annotations

import math
from functools import lru_cache

from .errors import EstimateError
from .estimates import z_value

_EPS = 1e-16
_TINY = 1e-300


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return h


def incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


def incomplete_gamma(a: float, x: float) -> float:
    """The regularized lower incomplete gamma function P(a, x)."""
    if x <= 0.0:
        return 0.0
    log_front = -x + a * math.log(x) - math.lgamma(a)
    if x < a + 1.0:  # the series
        term = total = 1.0 / a
        ap = a
        for _ in range(100_000):
            ap += 1.0
            term *= x / ap
            total += term
            if abs(term) < abs(total) * _EPS:
                break
        return total * math.exp(log_front)
    b = x + 1.0 - a  # the continued fraction of Q(a, x)
    c, d = 1.0 / _TINY, 1.0 / b
    h = d
    for i in range(1, 100_000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = b + an / c
        c = c if abs(c) > _TINY else _TINY
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return 1.0 - math.exp(log_front) * h


def _bisect(cdf, p: float, low: float, high: float) -> float:
    """x with cdf(x) = p on [low, high] (cdf increasing), to double precision."""
    while cdf(high) < p:
        low, high = high, high * 2.0
    for _ in range(400):
        mid = 0.5 * (low + high)
        if mid in (low, high):
            break
        if cdf(mid) < p:
            low = mid
        else:
            high = mid
    return 0.5 * (low + high)


def t_cdf(x: float, df: float) -> float:
    """P(T ≤ x) for Student's t with `df` degrees of freedom."""
    tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + x * x))
    return 1.0 - tail if x > 0 else tail


@lru_cache(maxsize=256)
def t_value(confidence: float, df: float | None) -> float:
    """The two-sided quantile of Student's t with `df` degrees of freedom for a confidence
    level (t_{df, (1 + confidence)/2}); `df` None or infinite: the normal quantile."""
    z = z_value(confidence)
    if df is None or math.isinf(df):
        return z
    if not df > 0:
        raise EstimateError(f"an interval needs degrees of freedom above 0, got {df:g}")
    tail = (1.0 - confidence) / 2  # solved on the upper tail: no cancellation near 1
    return _bisect(lambda x: -0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + x * x)), -tail,
                   0.0, max(2.0 * z, 1.0))


def chi2_cdf(x: float, df: float) -> float:
    """P(X ≤ x) for χ² with `df` degrees of freedom."""
    return incomplete_gamma(df / 2.0, x / 2.0)


@lru_cache(maxsize=256)
def chi2_value(p: float, df: float) -> float:
    """The p-quantile of χ² with `df` degrees of freedom."""
    if not (0.0 < p < 1.0 and df > 0):
        raise EstimateError(f"χ² quantile needs 0 < p < 1 and df > 0, got p={p}, df={df}")
    return _bisect(lambda x: chi2_cdf(x, df), p, 0.0, max(2.0 * df, 4.0))
