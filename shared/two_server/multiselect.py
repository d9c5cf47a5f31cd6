"""Multiselect questions in the two-server mode: the measurement, and the estimates from the
released noisy totals.

What the device measures (one Prio3 report per question):
- no local ε0: the answer's k bits, as Prio3MultihotCountVec(length = k, max weight = m): the
  servers' proof checks every entry is 0/1 and at most m are set. Substituting one respondent
  moves the totals by at most Δ = min(2m, k) in L1 (the most options two allowed sets differ
  in, `SetShape.max_difference`), the sensitivity each server's noise is sized for.
- local ε0 with psfo_grr: the device's report, one index among the D = k + m − required_min
  values, as Prio3Histogram(D) (Δ = 2);
- local ε0 with option_rr or set_ue: the report's k bits, any number of them set, as
  Prio3MultihotCountVec(k, max weight k) (Δ = k).
psfo_olh's report ([seed, bucket]) is not one vector of counts: it cannot run before an upload.

A question that depends on randomized answers (skip logic) has a "not asked" value: the
(k + 1)-th entry of the measured vector (`measured_shape`), set alone when the question did
not apply, so every device uploads the same measurement whatever it answered. Without ε0 that
is MultihotCountVec(k + 1, max weight m) with Δ = max(min(2m, k), m + 1) (`not_asked_delta`:
two answers differ in at most min(2m, k) options, and "not asked" against a set of s <= m
options in s + 1 entries); with ε0 the mechanism runs over the k + 1 pseudo-options as in the
LDP mode (shared/multiselect_not_asked.py), its report measured as above over k + 1. Its
estimates among those asked: shared/two_server/multiselect_not_asked.py.

Estimates. Option j's released total counts the reports that support j, plus both servers'
noise. With P[support j | j selected] = p and | not selected] = q (1 and 0 without a local
mechanism; the mechanism's p*, q* with one), each respondent's term c_j = (s_j − q)/(p − q) is
unbiased for 1[j selected], so f̂_j = (C̃_j/n − q)/(p − q) is unbiased for the share selecting
j. Over a random respondent (sampling and local randomization together)
    Var c_j = (P_j(1 − 2q) + q²)/(p − q)² − f_j²,   P_j = q + (p − q)f_j,
and the noise adds 2σ²/(n²(p − q)²) (σ² one server's per-coordinate variance). The mean number
selected is Σ_j f̂_j; its respondent term has variance E[Var(N | S)]/(p − q)² + Var|S|, N the
number of options a report supports: for psfo_grr N is one Bernoulli, so the total is exact
(P̄(1 − P̄)/(p − q)², P̄ = μp + (k − μ)q); without a local mechanism, or with independent bits,
the spread of |S| is not released (no squares, no pairs of options), so the most the options'
shares allow stands in for it (shared/set_spread.py, at most the Bhatia–Davis bound
(m − μ)(μ − rmin)): a conservative interval, as for an integer question's mean. The noise adds
k·2σ²/(n²(p − q)²). Worst-case bounds maximize these over the truth.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import EstimateError
from ..estimand import CLIP, SHARES_NOTE
from ..estimates import MeanEstimate, empty_value_estimates, value_estimates, z_value
from ..mechanisms.set_base import SetShape
from ..question_types.multiselect import MultiselectType
from ..set_spread import size_variance_bound
from .encoding import question_encoding
from .entry import (
    SAMPLING_NOTE,
    TwoServerEstimate,
    check_kind,
    entry_n,
    entry_plan,
    mechanism_label,
    noise_variance,
    too_noisy_notes,
)
from .multiselect_not_asked import add_set_among_asked
from .noise import SERVERS

# The local mechanisms whose report is one vector of counts, and Δ of the answer's bits with a
# "not asked" entry: the multiselect unit's (shared/question_types/multiselect.py).
LOCAL_SET_MECHANISMS = MultiselectType.two_server_local_mechanisms
not_asked_delta = MultiselectType.two_server_not_asked_delta
BITS_NOTE = ("mean number selected: the servers add up each option's count but not how many "
             "each respondent selected, so that spread is taken at the widest the options' "
             "shares allow: the interval may be wider than needed, never narrower")


def measured_shape(question: Any) -> SetShape:
    """The options measured: the question's, and a last "not asked" pseudo-option when the
    question depends on randomized answers (module docstring)."""
    shape: SetShape = question.multiselect
    if getattr(question, "not_asked", False):
        return SetShape(shape.k + 1, shape.max_selected, shape.required_min)
    return shape


def support_probabilities(question: Any) -> tuple[float, float, str]:
    """(p, q, what N is) of the released counts: 'none', 'bits' or 'index'."""
    if question.local_epsilon is None:
        return 1.0, 0.0, "none"
    from ..mechanisms import mechanism_for

    mechanism = mechanism_for(question)
    if question.mechanism not in LOCAL_SET_MECHANISMS:
        raise EstimateError(f"{question.id}: local mechanism {question.mechanism!r} cannot "
                            "run before a two-server upload")
    kind = "index" if question.mechanism == "psfo_grr" else "bits"
    return float(mechanism.p_star), float(mechanism.q_star), kind


def option_variance(f: Any, p: float, q: float) -> Any:
    """One random respondent's term of an option's share: sampling and local randomization."""
    f = np.asarray(f, dtype=float)
    chance = q + (p - q) * f
    return np.maximum((chance * (1 - 2 * q) + q * q) / (p - q) ** 2 - f * f, 0.0)


def option_worst(p: float, q: float) -> float:
    """The largest `option_variance` over f in [0, 1] (a concave parabola in f)."""
    slope = (1 - 2 * q) / (p - q)
    f = min(max(slope / 2, 0.0), 1.0)
    return float(option_variance(f, p, q))


def count_variance(mean: float, shape: SetShape, p: float, q: float, kind: str,
                   shares: Any = None) -> float:
    """One random respondent's term of the mean number selected (module docstring); the
    spread of |S| is the most `shares` (the options' shares) allow, Bhatia-Davis without."""
    low, high = shape.required_min, shape.max_selected
    mu = min(max(mean, low), high)
    spread = (size_variance_bound(shares, low, high) if shares is not None
              else (high - mu) * (mu - low))
    if kind == "index":
        chance = mu * p + (shape.k - mu) * q
        return chance * (1 - chance) / (p - q) ** 2
    if kind == "bits":
        return (mu * p * (1 - p) + (shape.k - mu) * q * (1 - q)) / (p - q) ** 2 + spread
    return spread


def count_worst(shape: SetShape, p: float, q: float, kind: str) -> float:
    grid = np.linspace(shape.required_min, shape.max_selected, 129)
    return float(max(count_variance(float(x), shape, p, q, kind) for x in grid))


def estimate_set_two_server(question: Any, entry: Any, confidence: float = 0.95) -> Any:
    """Each option's share (of respondents who selected it) and the mean number selected from
    one batch entry, with sampling + local + noise standard errors."""
    z = z_value(confidence)
    n = entry_n(entry)
    plan = entry_plan(entry)
    local = question.local_epsilon
    encoding = question_encoding(question)
    result = TwoServerEstimate(
        question=question.id, mechanism=mechanism_label(question), epsilon=plan.epsilon, n=n,
        confidence=confidence, consistent_method=CLIP,
        central_epsilon=plan.epsilon, local_epsilon=local,
        local_mechanism=question.mechanism if local is not None else None,
        rejected=int(getattr(entry, "rejected", 0) or 0), noise=plan)
    result.notes += [SHARES_NOTE, SAMPLING_NOTE.format(
        local=f" and the local {question.mechanism} randomization at ε0 = {local:g}"
        if local is not None else "")]
    check_kind(question.id, entry, encoding.kind)
    shape: SetShape = question.multiselect
    measured = measured_shape(question).k  # k, or k + 1 with "not asked"
    p, q, kind = support_probabilities(question)
    if kind != "index":
        result.notes.append(BITS_NOTE)
    if n == 0:
        result.categories = empty_value_estimates(question.labels)
        result.mean = MeanEstimate(None, None, None, None, None)
        if measured > shape.k:
            add_set_among_asked(question, None, n, p, q, kind, 0.0, z, result)
        return result
    sums = np.asarray([int(s) for s in entry.noisy_sums], dtype=float)
    if sums.size != encoding.length:
        raise EstimateError(f"{question.id}: the batch holds {sums.size} totals where this "
                            f"question's {encoding.kind} has {encoding.length}")
    counts = sums[:measured]  # psfo_grr: the blanks' counts follow the options'
    f_hat = (counts / n - q) / (p - q)
    consistent = np.clip(f_hat, 0.0, 1.0)
    noise = SERVERS * noise_variance(entry) / (n * n * (p - q) ** 2)
    variance = option_variance(consistent, p, q) / n + noise
    bound = np.full(measured, option_worst(p, q) / n + noise)
    result.categories = value_estimates(question.labels, f_hat, variance, bound, consistent, z)
    result.notes += too_noisy_notes(math.sqrt(noise), 1.0, n, z, confidence, "of a share",
                                    "100 percentage points (every share there is)")
    if measured > shape.k:  # skip logic: "not asked" and the shares among those asked
        add_set_among_asked(question, f_hat, n, p, q, kind, noise, z, result)
        return result
    total = float(f_hat.sum())
    count_noise = shape.k * noise
    se = math.sqrt(count_variance(total, shape, p, q, kind, consistent) / n + count_noise)
    result.mean = MeanEstimate(total, se, count_worst(shape, p, q, kind) / n + count_noise,
                               total - z * se, total + z * se)
    return result
