"""An integer follow-up with a local ε0 in a two-server survey: its report pair measured, the
central noise split between the pair's two measurements, and the mean among those asked.

The device runs asked_geometric at ε0 (shared/mechanisms/asked_geometric.py): an asked bit b
(randomized response, p = P[b = 1 | asked], q = 1 − p) and y = v + Z, v the answer, or the
middle d of the range when the question did not apply. Both are measured under the question's
key (shared/two_server/pair_vdaf.py): Prio3Count of b and Prio3Sum of y clipped to
[lo, lo + R] minus lo (lo, R: `encoding.clip_bounds`, as for a local geometric report, whose
clip bias is at most CLIP_TAIL/(1 − α) per report).

The central noise per measurement. Each server's noise has one rate λ per coordinate, and the
servers scale the bit's total by an integer s before adding it (the key's output is
[s·Σb, Σy′]): changing one respondent moves it by at most s + R in L1, so λ = ε'/(s + R)
certifies the central ε exactly (a NoisePlan of kind "asked_pair", sensitivity s + R), and the
noise is λ·s per unit of b and λ per unit of y: ε split as s : R between the two measurements.
The estimate of the mean among those asked, μ̂ = d + (ȳ − d)/π̂ with π̂ the share asked, takes
from the noise the variance 2σ²(1 + (μ − d)²/(s(p − q))²)/(nπ)², σ² ∝ (s + R)² (small λ):
(s + R)²(1 + B/s²) with B = (h/(p − q))² at the worst |μ − d| = h (the half range farther
from d). Its derivative has the sign of s³ − RB, so the best s is next to the cube root of RB
(`pair_scale`, decided exactly in rationals so that both servers agree).

Estimates from the released [s·Σb + N₁, Σy′ + N₂] (N: both servers' noise, variance 2σ² per
coordinate): Z = (b − q)/(p − q) is unbiased for "asked", π̂ = (Σb/n − q)/(p − q); ȳ = lo +
Σy′/n; the share not asked 1 − π̂, with the variance of Z over a random respondent,
π(1 − π) + pq/(p − q)², plus 2σ²/(s(p − q)n)². The mean among those asked linearizes to the
mean of u = (y − d) − (μ − d)Z over π, whose variance per respondent is
    Var u = π·σ_x² + σ_Z² + (μ − d)²·pq/(p − q)²
(σ_x² the answers' spread among those asked, σ_Z² the local noise's; the bit's and the
number's noise are independent given whether asked, so their covariance cancels the rest),
with σ_x² at the Bhatia–Davis bound (max − μ)(μ − min): the servers release no squares, so the
interval may be wider than needed, never narrower (the same as an integer question's mean).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from ..errors import EstimateError
from ..estimates import AmongAsked, MeanEstimate, ValueEstimate, z_value
from ..question_types.base import NOT_ASKED
from .entry import check_kind, noise_variance
from .noise import SERVERS

NOTE = ("an asked bit and a noisy number are sent for every respondent (randomized on the "
        "device at ε0) and added up by the two servers, each measurement with its part of the "
        "central ε; the mean among those asked is a ratio of estimates (delta-method standard "
        "error with the answers' spread at its widest: the servers add up the numbers, not "
        "their squares, so the interval may be wider than needed, never narrower)")


def icbrt(n: int) -> int:
    """The largest integer c >= 0 with c³ <= n."""
    if n <= 0:
        return 0
    c = 1 << ((n.bit_length() + 2) // 3)
    while True:  # Newton from above: decreasing to the floor
        nxt = (2 * c + n // (c * c)) // 3
        if nxt >= c:
            break
        c = nxt
    while c * c * c > n:
        c -= 1
    while (c + 1) ** 3 <= n:
        c += 1
    return c


def pair_scale(mechanism: Any, width: int) -> int:
    """s, the bit's scale (module docstring): the integer s >= 1 minimizing
    (s + R)²(1 + B/s²), B = (h/(p − q))², R = `width`, decided in rationals."""
    gap = Fraction(mechanism.p_star) - Fraction(mechanism.q_star)
    if gap <= 0:
        return 1
    b = Fraction(mechanism.half) ** 2 / gap**2
    root = icbrt(math.floor(width * b))

    def cost(s: int) -> Fraction:
        return (s + width) ** 2 * (s * s + b) / (s * s)

    return min({max(root, 1), root + 1}, key=lambda s: (cost(s), s))


def estimate_pair(question: Any, entry: Any, result: Any, confidence: float,
                  encoding: Any) -> Any:
    """`result` (a TwoServerEstimate) with the share not asked and the mean among those asked
    from the released pair (module docstring); `encoding` the question's (kind "asked_pair",
    shared/two_server/encoding.Measure.asked_pair)."""
    z = z_value(confidence)
    n = int(result.n)
    mechanism = _mechanism(question)
    check_kind(question.id, entry, "asked_pair")
    if int(getattr(entry, "offset", encoding.offset)) != encoding.offset:
        raise EstimateError(f"{question.id}: the batch measured numbers from {entry.offset}, "
                            f"the question's encoding from {encoding.offset}")
    result.notes.append(NOTE)
    result.among_asked = AmongAsked(mean=MeanEstimate(None, None, None, None, None))
    if n == 0:
        result.not_asked = ValueEstimate(NOT_ASKED, None, None, None, None, None, None)
        return result
    sums = [int(v) for v in entry.noisy_sums]
    if len(sums) != 2:
        raise EstimateError(f"{question.id}: an asked pair releases 2 totals, got {len(sums)}")
    p, q = float(mechanism.p_star), float(mechanism.q_star)
    gap, d, s = p - q, float(mechanism.default), encoding.scale
    sigma2 = SERVERS * noise_variance(entry)  # both servers' noise per released total
    pi_hat = (sums[0] / s / n - q) / gap
    bit_noise = sigma2 / (s * gap * n) ** 2
    pi = min(max(pi_hat, 0.0), 1.0)
    randomized = p * q / gap**2
    var_na = (pi * (1 - pi) + randomized) / n + bit_noise
    se_na = math.sqrt(var_na)
    bound = (0.25 + randomized) / n + bit_noise
    share = 1.0 - pi_hat
    result.not_asked = ValueEstimate(NOT_ASKED, share, se_na, bound, share - z * se_na,
                                     share + z * se_na, min(max(share, 0.0), 1.0))
    if pi_hat <= 0:
        result.notes.append("the estimated share asked is not positive: too few respondents "
                            "to estimate the mean among those asked")
        return result
    mean_y = encoding.offset + sums[1] / n
    mean = d + (mean_y - d) / pi_hat
    low, high = float(question.min), float(question.max)
    mu = min(max(mean, low), high)
    spread = (high - mu) * (mu - low)  # Bhatia-Davis: no squares are released
    local = mechanism.noise_variance(mechanism.k, mechanism.epsilon)
    per_report = pi * spread + local + (mu - d) ** 2 * randomized
    noise = sigma2 * (1 + (mu - d) ** 2 / (s * gap) ** 2) / n**2
    se = math.sqrt(per_report / n + noise) / pi_hat
    result.among_asked = AmongAsked(mean=MeanEstimate(mean, se, None, mean - z * se,
                                                      mean + z * se))
    return result


def _mechanism(question: Any) -> Any:
    from ..mechanisms import mechanism_for

    return mechanism_for(question)
