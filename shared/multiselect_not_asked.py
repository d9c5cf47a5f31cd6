"""A multiselect question with a "not asked" value (skip logic, docs/skip-logic.md).

A check-all-that-apply question whose condition reads a randomized answer is sent by everyone.
Its true answer is then a set of its k options (required_min..m of them) or NOT ASKED, which is
the set holding only an extra (k + 1)-th pseudo-option. The question's set mechanism runs over
the k + 1 options with the same m and required_min: it is proven ε-LDP for ANY two sets of the
k + 1 options of allowed size (set_base.py), a superset of the sets this question can send, so
the proof covers "not asked" against every answer (Δ = min(2m, k + 1) for option_rr: one more
than the exact max(min(2m, k), m + 1) only when k/2 < m < k). With exclusive options "not asked"
is one more exclusive option (`SetShape.with_not_asked`): the family is then exact, and
m' = min(m, k') and the padding are the question's own. The share of the pseudo-option is
the share not asked; psfo_olh (its report is no vector of counts) is not offered.

Estimates among those asked, R_j = f_j / (1 − f_na):
- option_rr, set_ue (independent bits given the set): per respondent
  u = (z_j − R(1 − z_na)) / (1 − f_na) with z the unbiased bit terms; over a random respondent
  Var z_j = f_j·E[z²|in] + (1 − f_j)·E[z²|out] − f_j² and Cov(z_j, z_na) = −f_j·f_na exactly (an
  option and "not asked" are never in one set), plugged in at the clipped estimates;
- psfo_grr (one index per report): the empirical variance of u over the report counts
  (shared/among_asked.py's rule for index reports).
The mean number selected among those asked, M = Σ_j f_j / (1 − f_na): its respondent term adds
the spread of |S| among those asked, which the per-option counts do not hold: the most the
options' shares among those asked allow stands in for it (shared/set_spread.py, at most the
Bhatia–Davis bound (m − M)(M − required_min); an interval that may be wider than needed, never
narrower).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np

from .aggregates import Aggregate, CountAggregate
from .errors import AnswerError, SurveyError
from .estimates import AmongAsked, Estimate, MeanEstimate, ValueEstimate, z_value
from .question_types.base import NOT_ASKED
from .set_spread import size_variance_bound

NOT_ASKED_SET_MECHANISMS = ("option_rr", "set_ue", "psfo_grr")


class SetNotAsked:
    """Mixin for a set mechanism over the k options + the "not asked" pseudo-option."""

    k: int

    def encode(self, answer: Any) -> int:
        if isinstance(answer, str) and answer == NOT_ASKED:
            return 1 << (self.k - 1)
        if isinstance(answer, list | tuple | set | frozenset) and NOT_ASKED in answer:
            raise AnswerError(f"{NOT_ASKED!r} is not an option: it is what a device sends for "
                              "a question that does not apply")
        return super().encode(answer)  # type: ignore[misc]

    def estimate(self, aggregate: Aggregate, confidence: float = 0.95) -> Estimate:
        result = super().estimate(aggregate, confidence)  # type: ignore[misc]
        return add_set_among_asked(self, result, aggregate, confidence)


@lru_cache(maxsize=8)
def with_not_asked_set(cls: type) -> type:
    return type(cls.__name__ + "NotAsked", (SetNotAsked, cls), {})


def not_asked_set_mechanism(question: Any) -> Any:
    """The mechanism of a multiselect question with a "not asked" value."""
    from .mechanisms.set_choice import SET_MECHANISMS

    cls = SET_MECHANISMS[question.mechanism]
    shape = question.multiselect.with_not_asked()
    return with_not_asked_set(cls)(question.epsilon, question.labels, question_id=question.id,
                                   max_selected=shape.max_selected,
                                   required_min=shape.required_min,
                                   exclusive=[question.labels[j] for j in shape.exclusive])


def check_set_mechanism(name: str, k: int, where: str) -> None:
    """A multiselect question with a "not asked" value: a mechanism that can carry it."""
    from .mechanisms.set_base import MAX_SET_OPTIONS

    if k + 1 > MAX_SET_OPTIONS:
        raise SurveyError(f"{where}.options", f"a multiselect question that depends on "
                          f"randomized answers takes at most {MAX_SET_OPTIONS - 1} options")
    if name not in NOT_ASKED_SET_MECHANISMS:
        raise SurveyError(f"{where}.mechanism", f"{name!r} cannot carry the 'not asked' value "
                          f"this question has (it depends on randomized answers); use auto or "
                          f"one of: {', '.join(NOT_ASKED_SET_MECHANISMS)}")


def add_set_among_asked(mechanism: Any, result: Estimate, aggregate: Aggregate,
                        confidence: float) -> Estimate:
    """`result` (over the k options + "not asked") with `not_asked` and `among_asked`."""
    from .among_asked import NOTE

    labels = list(mechanism.labels)
    k = len(labels) - 1
    rows = result.categories or []
    result.mean = None  # the mean number selected would count "not asked" as an option
    result.notes.append(NOTE)
    n = aggregate.n
    if rows:
        result.not_asked = rows[-1]
    if n == 0 or not rows or rows[0].estimate is None:
        result.not_asked = ValueEstimate(NOT_ASKED, None, None, None, None, None, None)
        result.among_asked = AmongAsked(
            categories=[ValueEstimate(v, None, None, None, None, None, None)
                        for v in labels[:k]], mean=MeanEstimate(None, None, None, None, None))
        return result
    z = z_value(confidence)
    f_hat = np.array([r.estimate for r in rows], dtype=float)
    asked = 1.0 - f_hat[k]
    if asked <= 0:
        result.notes.append("the estimated share asked is not positive: too few respondents to "
                            "estimate shares among those asked")
        result.among_asked = AmongAsked(categories=[
            ValueEstimate(v, None, None, None, None, None, None) for v in labels[:k]])
        return result
    ratios = f_hat[:k] / asked
    count = float(f_hat[:k].sum()) / asked
    if isinstance(aggregate, CountAggregate):  # psfo_grr: one index per report
        option_var, count_var = _index_variances(mechanism, aggregate, ratios, count, asked)
    else:
        option_var, count_var = _bits_variances(mechanism, f_hat, ratios, count, asked, n)
    se = np.sqrt(np.maximum(option_var, 0.0))
    clipped = np.clip(ratios, 0.0, 1.0)
    options = [ValueEstimate(labels[j], float(ratios[j]), float(se[j]), None,
                             float(ratios[j] - z * se[j]), float(ratios[j] + z * se[j]),
                             float(clipped[j])) for j in range(k)]
    count_se = math.sqrt(max(count_var, 0.0))
    mean = MeanEstimate(count, count_se, None, count - z * count_se, count + z * count_se)
    result.among_asked = AmongAsked(categories=options, mean=mean)  # consistent: clipped
    return result


def _bits_variances(mechanism: Any, f_hat: np.ndarray, ratios: np.ndarray, count: float,
                    asked: float, n: int) -> tuple[np.ndarray, float]:
    """option_rr / set_ue: independent bits given the set (module docstring)."""
    p, q = float(mechanism.p_star), float(mechanism.q_star)
    d2 = (p - q) ** 2
    inside = (p * (1 - q) ** 2 + (1 - p) * q * q) / d2  # E[z² | selected]
    outside = q * (1 - q) / d2  # E[z² | not selected]
    f = np.clip(f_hat, 0.0, 1.0)
    k = f.size - 1
    var_z = f * inside + (1 - f) * outside - f * f
    option_var = (var_z[:k] + ratios**2 * var_z[k] - 2 * ratios * f[:k] * f[k]) / asked**2
    noise = f * (inside - 1) + (1 - f) * outside  # the bits' own randomization
    spread = size_variance_bound(f[:k] / asked, mechanism.required_min,
                                 mechanism.shape.largest)
    count_var = (float(noise[:k].sum()) + count**2 * float(noise[k])
                 + asked * spread) / asked**2
    return option_var / n, count_var / n


def _index_variances(mechanism: Any, aggregate: CountAggregate, ratios: np.ndarray,
                     count: float, asked: float) -> tuple[np.ndarray, float]:
    """psfo_grr: the empirical variance of the linearized ratio over the report counts."""
    p, q = float(mechanism.p_star), float(mechanism.q_star)
    counts = aggregate.counts.astype(float)
    n = aggregate.n
    k = ratios.size
    m = (np.eye(k + 1, counts.size) - q) / (p - q)  # unbiased terms of options + NA
    weights = np.vstack([np.eye(k), np.ones((1, k))])
    targets = np.append(ratios, count)
    per_report = (weights @ m[:k] - targets[:, None] * (1.0 - m[k])[None, :]) / asked
    var = (per_report**2) @ counts / (n * max(n - 1, 1))
    return var[:k], float(var[k])
