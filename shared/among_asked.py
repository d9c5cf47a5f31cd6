"""Mechanisms of questions with extra values ("not asked", special values), and their
estimates among those who gave an answer.

A question that depends on randomized answers (shared/skip_logic.py) runs its mechanism over
its options plus NOT_ASKED (the last index); a question with special values ("Don't know",
"Prefer not to say": `special`) over its options plus those values (then NOT_ASKED, where it has
it). Its ordinary estimate gives every value's share of all respondents, the extra values
included. What an analyst reads next is each option's share AMONG THOSE WHO GAVE AN ANSWER
(among those asked, without special values): the ratio R_a = f_a / (1 - Σ_e f_e) of two
estimates, e over the extra values.

Every mechanism such a question may use reports one index (GRR, Hadamard response, the ordinal
exponential mechanism, GRR's two layers in a series): `index_channel()` gives the matrix M
whose entry M[a, y] is a per-report unbiased estimator of the indicator [answer = a] for
report y, so f̂ = M·c/n for the report counts c. The linearized ratio per report is

    u_a(y) = (w·M[:k, y] - R̂ (1 - Σ_e M[e, y])) / (1 - Σ_e f̂_e)    (w: an option, a group,
                                                                     or the scores 1..k)

whose mean is exactly 0 at R̂, so Var R̂ = Σ_y c_y u_a(y)² / (n(n - 1)): the delta-method
variance with the covariance of numerator and denominator counted, read from the aggregate
alone (no stored report is touched).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np

from .aggregates import Aggregate, CountAggregate
from .estimates import (
    AmongAsked,
    Estimate,
    GroupEstimate,
    MeanEstimate,
    ValueEstimate,
    empty_value_estimates,
    norm_sub,
    z_value,
)
from .question_types.base import NOT_ASKED

NOTE = ("'not asked' is a value of this question: the device sends a randomized report whether "
        "or not the question applied; 'among those asked' divides by the estimated share asked "
        "(delta-method standard errors; no worst-case bound)")
SPECIAL_NOTE = ("special values {values}: randomized with the answers (the server cannot tell "
                "them from an answer); each one's share is of everyone, and the rows among "
                "those who gave an answer divide by the estimated share who did (delta-method "
                "standard errors; no worst-case bound)")


def special_note(labels: Any) -> str:
    """The note of a question with special values `labels`."""
    return SPECIAL_NOTE.format(values=", ".join(repr(str(v)) for v in labels))


class NotAskedEstimates:
    """Mixin for an index mechanism over options + extra values (special values, NOT_ASKED):
    its estimate gains `special`, `not_asked` and `among_asked` (module docstring). `scored`:
    an ordinal question (the mean score among those asked, options scored 1..k); `extra`: the
    extra values, the last labels (question_types/base.extra_values)."""

    scored: bool = False
    extra: tuple[Any, ...] = (NOT_ASKED,)

    def estimate(self, aggregate: Aggregate, confidence: float = 0.95) -> Estimate:
        result = super().estimate(aggregate, confidence)  # type: ignore[misc]
        return add_among_asked(self, result, aggregate, confidence)


@lru_cache(maxsize=64)
def with_not_asked(cls: type) -> type:
    """`cls` with NotAskedEstimates mixed in (one class per mechanism class)."""
    return type(cls.__name__ + "NotAsked", (NotAskedEstimates, cls), {})


def special_shares(labels: list[Any], rows: np.ndarray, f_extra: np.ndarray,
                   counts: np.ndarray, n: int, z: float,
                   plain: list[ValueEstimate]) -> list[ValueEstimate]:
    """Each special value's share of everyone: f̂_e = mean of the per-report unbiased
    indicator M[e, y], its variance the sample variance of that indicator over n (sampling and
    randomization together, as the ratios among those who answered take it; `rows`: M's rows
    of the special values). The consistent column is the plain estimate's (Norm-Sub over the
    whole domain)."""
    out = []
    for j, label in enumerate(labels):
        f = float(f_extra[j])
        var = float(((rows[j] - f) ** 2) @ counts) / (n * max(n - 1, 1))
        se = math.sqrt(max(var, 0.0))
        bound = plain[j].variance_bound if j < len(plain) else None
        consistent = plain[j].consistent if j < len(plain) else None
        out.append(ValueEstimate(label, f, se, bound, f - z * se, f + z * se, consistent))
    return out


def add_among_asked(mechanism: Any, result: Estimate, aggregate: Aggregate,
                    confidence: float) -> Estimate:
    """`result` (over options + extra values) with `special`, `not_asked` and `among_asked`
    filled in."""
    labels = list(mechanism.labels)
    extra = tuple(getattr(mechanism, "extra", (NOT_ASKED,)))
    hidden = NOT_ASKED in extra
    special = [label for label in extra if label != NOT_ASKED]
    k = len(labels) - len(extra)  # options; indices k.. are the extra values
    groups = dict(mechanism.groups)
    result.mean = None  # a mean score over options + extra values means nothing
    if hidden:
        result.notes.append(NOTE)
    if special:
        result.notes.append(special_note(special))
    if result.categories:
        result.not_asked = result.categories[-1] if hidden else None
        result.special = list(result.categories[k:k + len(special)]) if special else None
    n = aggregate.n
    if n == 0:
        result.not_asked = (ValueEstimate(NOT_ASKED, None, None, None, None, None, None)
                            if hidden else None)
        result.special = empty_value_estimates(special) if special else None
        result.among_asked = AmongAsked(
            categories=empty_value_estimates(labels[:k]),
            groups=[GroupEstimate(name, [labels[i] for i in members], None, None, None, None,
                                  None, None) for name, members in groups.items()],
            mean=MeanEstimate(None, None, None, None, None) if mechanism.scored else None)
        return result
    assert isinstance(aggregate, CountAggregate)
    _, inverse = mechanism.index_channel()  # (k + 1, K)
    counts = aggregate.counts.astype(float)
    f_hat = inverse @ counts / n
    asked = 1.0 - float(f_hat[k:].sum())  # the share who gave an answer
    # The functionals: each option, each group, and (ordinal) the scores 1..k.
    weights = [np.eye(k)]
    for members in groups.values():
        row = np.zeros((1, k))
        row[0, list(members)] = 1.0
        weights.append(row)
    if mechanism.scored:
        weights.append(np.arange(1, k + 1, dtype=float)[None, :])
    w = np.vstack(weights)
    z = z_value(confidence)
    if asked <= 0:
        result.notes.append("the estimated share asked is not positive: too few respondents to "
                            "estimate shares among those asked")
        ratios = np.full(w.shape[0], math.nan)
        se = np.full(w.shape[0], math.nan)
    else:
        numerators = w @ f_hat[:k]
        ratios = numerators / asked
        answered = 1.0 - inverse[k:].sum(axis=0)  # per report: unbiased for "gave an answer"
        per_report = (w @ inverse[:k] - ratios[:, None] * answered[None, :]) / asked
        se = np.sqrt(np.maximum((per_report**2) @ counts, 0.0) / (n * max(n - 1, 1)))
    if special:  # each special value's share of everyone, with its sampling variance too
        result.special = special_shares(special, inverse[k:k + len(special)], f_hat[k:],
                                        counts, n, z, result.categories[k:])
        result.categories[k:k + len(special)] = result.special
    consistent = norm_sub(ratios[:k]) if asked > 0 else np.full(k, math.nan)
    rows = [ValueEstimate(labels[a], float(ratios[a]), float(se[a]), None,
                          float(ratios[a] - z * se[a]), float(ratios[a] + z * se[a]),
                          float(consistent[a])) for a in range(k)]
    group_rows = []
    for i, (name, members) in enumerate(groups.items(), start=k):
        group_rows.append(GroupEstimate(
            name, [labels[j] for j in members], float(ratios[i]), float(se[i]), None,
            float(ratios[i] - z * se[i]), float(ratios[i] + z * se[i]),
            float(consistent[list(members)].sum())))
    mean = None
    if mechanism.scored:
        r, s = float(ratios[-1]), float(se[-1])
        mean = MeanEstimate(r, s, None, r - z * s, r + z * s)
    result.among_asked = AmongAsked(categories=rows, groups=group_rows, mean=mean)
    return result
