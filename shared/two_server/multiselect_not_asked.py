"""Two-server estimates of a multiselect question with a "not asked" value (skip logic): the
share not asked, each option's share among those asked, and the mean number selected among
those asked.

The measurement ends with the "not asked" entry (shared/two_server/multiselect.py), so the
released totals give f̂ over the k options and "not asked" as for any multiselect question,
each entry unbiased through its term c_a = (s_a − q)/(p − q) (p = 1, q = 0 without a local
mechanism). A quantity among those asked is a ratio R = w·f[:k] / (1 − f_na) (w: one option,
or all of them for the mean number selected), and to first order

    R̂ − R ≈ v·(f̂ − f) / (1 − f_na),   v = (w, R)

(the weights w on the options and R on "not asked"): a linear functional of f̂. Its variance
over a random respondent, plugged in at the clipped shares, counts every source:

- sampling: Var(w·x + R·x_na) for the true indicators x. "Not asked" is never in a set with an
  option, so given the share asked it is (1 − f_na)·Var(w·x | asked) + (1 − f_na)·f_na·
  (E[w·x | asked] − R)²; Var(w·x | asked) is g(1 − g) for one option (g its share among those
  asked), and for the number selected the spread of set sizes, which no release holds: the
  most the options' shares among those asked allow (shared/set_spread.py);
- the local randomization: with independent bits (option_rr, set_ue) Σ_a v_a²·E[Var(c_a | S)]
  (p(1 − p) or q(1 − q) over (p − q)², as the option is in the set or not); with psfo_grr's one
  index y (P[y = a] = q + (p − q)f_a) the variance of v_y·1[y < k + 1]/(p − q) is exact, and
  already holds the sampling: no spread is needed for it;
- both servers' noise: 2σ²·‖v‖²/(n²(p − q)²), every entry carrying its own draws.

Divided by (1 − f̂_na)², this is the delta-method variance with the covariance of numerator and
denominator counted (shared/among_asked.py does the same from the LDP aggregate).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..estimates import AmongAsked, MeanEstimate, ValueEstimate
from ..question_types.base import NOT_ASKED
from ..set_spread import size_variance_bound
from .among_asked import NOTE


def functional_variance(v: np.ndarray, f: np.ndarray, p: float, q: float, kind: str,
                        spread: float | None) -> float:
    """One random respondent's variance of v·c (v over the options and "not asked", f their
    clipped shares): sampling and the local randomization (module docstring). `spread`:
    Var(w·x | asked) of the options' part, for the bit kinds ("none", "bits")."""
    gap2 = (p - q) ** 2
    if kind == "index":  # one index per report: exact
        chance = q + (p - q) * f
        return max(float(chance @ (v * v)) - float(chance @ v) ** 2, 0.0) / gap2
    assert spread is not None
    asked = 1.0 - float(f[-1])
    inside = float(v[:-1] @ f[:-1]) / asked if asked > 0 else 0.0  # E[w·x | asked]
    sampling = asked * spread + asked * float(f[-1]) * (inside - float(v[-1])) ** 2
    randomized = float((v * v) @ (f * p * (1 - p) + (1 - f) * q * (1 - q))) / gap2
    return max(sampling, 0.0) + randomized


def add_set_among_asked(question: Any, f_hat: np.ndarray | None, n: int, p: float, q: float,
                        kind: str, noise: float, z: float, result: Any) -> None:
    """Fill `result.not_asked` and `result.among_asked` of a multiselect question with a "not
    asked" value (categories: the options, then "not asked"); `noise` is both servers' noise
    variance of one entry's share, 2σ²/(n²(p − q)²)."""
    labels = list(question.options)
    k = len(labels)
    shape = question.multiselect
    result.mean = None  # the mean number selected would count "not asked" as an option
    result.notes.append(NOTE)
    rows = result.categories or []
    empty = ValueEstimate(NOT_ASKED, None, None, None, None, None, None)
    result.not_asked = rows[-1] if rows else empty
    blank = [ValueEstimate(v, None, None, None, None, None, None) for v in labels]
    if f_hat is None or n == 0:
        result.among_asked = AmongAsked(categories=blank,
                                        mean=MeanEstimate(None, None, None, None, None))
        return
    asked = 1.0 - float(f_hat[k])
    if asked <= 0:
        result.notes.append("the estimated share asked is not positive: too few respondents to "
                            "estimate shares among those asked")
        result.among_asked = AmongAsked(categories=blank,
                                        mean=MeanEstimate(None, None, None, None, None))
        return
    f = np.clip(f_hat, 0.0, 1.0)
    among = np.clip(f[:k] / max(1.0 - f[k], 1e-300), 0.0, 1.0)  # shares among those asked
    ratios = f_hat[:k] / asked
    options = []
    for j in range(k):
        v = np.zeros(k + 1)
        v[j], v[k] = 1.0, ratios[j]
        spread = float(among[j] * (1 - among[j]))
        var = (functional_variance(v, f, p, q, kind, spread) / n + noise * float(v @ v))
        se = math.sqrt(var) / asked
        value = float(ratios[j])
        options.append(ValueEstimate(labels[j], value, se, None, value - z * se, value + z * se,
                                     float(min(max(value, 0.0), 1.0))))
    count = float(f_hat[:k].sum()) / asked
    v = np.append(np.ones(k), count)
    spread = size_variance_bound(among, shape.required_min, shape.max_selected)
    var = functional_variance(v, f, p, q, kind, spread) / n + noise * float(v @ v)
    se = math.sqrt(var) / asked
    result.among_asked = AmongAsked(categories=options,  # consistent: clipped, as everywhere
                                    mean=MeanEstimate(count, se, None, count - z * se,
                                                      count + z * se))
