"""Two-server estimates of a question with extra values (special values: docs/special-values.md;
a "not asked" value: docs/skip-logic.md): each special value's share and the share not asked,
of everyone, and each option's share (an ordinal's mean score, an integer's mean) among those
who gave an answer.

The question is measured as a Histogram over its k answers and then its s extra values (the
special values in order, then "not asked"), so f̂ = (shares of everyone) comes from the
released noisy totals as for any question. A share among those who answered is
R = w·f[:k] / (1 − Σ_e f_e) (w: an option, a group, the scores 1..k of an ordinal question or
the values of an integer one; e over the extra cells), and to first order

    R̂ − R ≈ (w, R, ..., R)·(f̂ − f) / (1 − Σ_e f_e)

(the weights w on the answers and R on each extra cell): a linear functional of f̂, whose
variance (`Functional.variance`: sampling, the local randomization when ε0 is set, and both
servers' noise) over (1 − Σ_e f_e)² is the delta-method variance, numerator and denominator
covariance included. Plug-in at the consistent (Norm-Sub) distribution, as every two-server
share is.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..among_asked import special_note
from ..estimates import AmongAsked, GroupEstimate, MeanEstimate, ValueEstimate, norm_sub
from ..question_types.base import extra_values, special_labels

NOTE = ("'not asked' is a value of this question: every device sends it whether or not the "
        "question applied; 'among those asked' divides by the estimated share asked "
        "(delta-method standard errors)")


def add_among_asked(question: Any, design: Any, counts: np.ndarray, n: int,
                    f_hat: np.ndarray, consistent: np.ndarray, noise_variance: float,
                    z: float, result: Any) -> None:
    """Fill `result.special`, `result.not_asked` and `result.among_asked` (module
    docstring)."""
    extras = len(extra_values(question))
    special = special_labels(question)
    k = design.k - extras  # the answers' cells; k.. are the extra values'
    rows = result.categories or []
    if question.not_asked:
        result.notes.append(NOTE)
    if special:
        result.notes.append(special_note(special))
    result.mean = None
    if rows:
        result.not_asked = rows[-1] if question.not_asked else None
        result.special = list(rows[k:k + len(special)]) if special else None
    value_rows = question.unit.two_server_value_rows  # where its values' rows go
    if value_rows != "categories":  # a number's values: a distribution, NA said apart
        setattr(result, value_rows, rows[:k])
        result.categories = None
    asked = 1.0 - float(f_hat[k:].sum())
    functionals = [(what, name, np.asarray(w, dtype=float))
                   for what, name, w in question.unit.two_server_asked_functionals(question)]
    labels = design.labels
    options: list[ValueEstimate] = []
    groups: list[GroupEstimate] = []
    mean = None
    clipped = norm_sub(f_hat[:k] / asked) if asked > 0 else np.full(k, math.nan)
    for what, name, w in functionals:
        if asked <= 0:
            value = se = math.nan
        else:
            value = float(w @ f_hat[:k]) / asked
            fn = design.functional(np.append(w, np.full(extras, value)))
            se = math.sqrt(fn.variance(fn.per_report(consistent), n, noise_variance)) / asked
        low, high = value - z * se, value + z * se
        if what == "option":
            options.append(ValueEstimate(name, value, se, None, low, high,
                                         float(w @ clipped)))
        elif what == "group":
            members = [labels[i] for i in np.flatnonzero(w)]
            groups.append(GroupEstimate(name, members, value, se, None, low, high,
                                        float(w @ clipped)))
        else:
            mean = MeanEstimate(value, se, None, low, high)
    if asked <= 0:
        result.notes.append("the estimated share asked is not positive: too few respondents "
                            "to estimate among those asked")
    result.among_asked = AmongAsked(categories=options or None, groups=groups, mean=mean)
