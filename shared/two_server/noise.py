"""Central-DP noise each server of the two-server mode adds to its aggregate share.

Neighbouring relation: two batches are neighbours when they differ in the answers of ONE
respondent (substitution; the batch size n stays the same and is released exactly). The L1
sensitivity of what one question's aggregate releases, under substitution:
- Count (yes/no, 0/1 per report): one report moves the total by at most 1;
- Histogram (one-hot over k cells, also a declared crosstab over k1·k2 joint cells): one
  report leaves one cell and enters another, 2 in L1;
- Sum of an integer offset to [0, R]: at most R (R = max - min, or the local report range);
- MultihotCountVec (a multiselect question's 0/1 per option): at most the number of entries two
  allowed answers differ in, min(2m, k) for sets of at most m of k options (k for a local
  report's k free bits): the caller gives it, as for a Sum;
- an asked pair (a hidden integer question's local [bit, number], shared/two_server/
  pair_vdaf.py): the bit's total, scaled by s, moves by at most s and the number's by R, so
  s + R: the caller gives it;
- a fixed-point pair (a number on a grid, shared/two_server/fixed_point.py: a Histogram of its
  bin scaled by s and a Sum of its grid index j in [0, R]): 2s + R, the caller gives it.

Each server adds, to every coordinate of its aggregate share, an independent two-sided geometric
(discrete Laplace) draw Z with P[Z = z] ∝ α^|z|, α = e^-λ, where λ = ε'/Δ is an exact rational
and ε' = `rational_floor(ε)` <= ε (a short rational a hair below the declared ε, so α is a hair
above e^(-ε/Δ): never less private). For aggregates v, v' of neighbouring batches and any
released vector y, the noise's exact worst-case ratio is
    P[v + Z = y] / P[v' + Z = y] = Π_i e^(λ(|y_i - v'_i| - |y_i - v_i|)) <= e^(λ·||v - v'||_1)
                                  <= e^(λ·Δ) = e^(ε'),
so the certified log-ratio is the rational λ·Δ, checked against ε in `Fraction` arithmetic
(`shared/exact.certify`, as shared/mechanisms/geometric.py certifies the LDP geometric noise).
Reducing mod p and adding the other server's share (noisy or not, known to the adversary or
not) is post-processing, so EITHER server's noise alone gives ε-DP to anyone who does not also
hold that server's noise: the leader, the helper and the analyst each see at most the total.

Contract deviation (documented): `NoisePlan.alpha` is e^-λ as a float; the exact certified
quantity is the rational `rate` λ (the sampler works in the log domain, CKS 2020), which is the
"exact certified value" alternative the contract allows.

Per coordinate, one server's noise has variance 2α/(1 - α)^2; the released total carries both
servers' noise: twice that.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..errors import LdpSurveyError
from ..exact import PrivacyLoss, certify, rational_floor
from ..randomness import RandomSource, discrete_laplace, resolve

SERVERS = 2  # leader and helper: each adds its own noise
# Least L1 sensitivity under substitution of one respondent, per Prio3 measurement kind.
MIN_SENSITIVITY: dict[str, int] = {"count": 1, "histogram": 2, "crosstab": 2, "sum": 1,
                                   "multihot": 1, "asked_pair": 2,
                                   "histogram_sum": 3}
KINDS = tuple(MIN_SENSITIVITY)


class NoiseError(LdpSurveyError):
    """Noise cannot be planned or added as asked: an unknown kind, a sensitivity below what the
    measurement needs, or an aggregate share that is not a vector of field elements."""

    code = "invalid_noise"


@dataclass(frozen=True)
class NoisePlan:
    """The noise ONE server adds to each coordinate of one question's aggregate share.

    Built through `noise_plan`, or directly (e.g. from a stored dict): either way the exact
    privacy check runs on construction and refuses a plan whose noise is too small for ε.
    """

    kind: str            # "count" | "histogram" | "crosstab" | "sum"
    epsilon: float       # the central ε this server's noise alone gives
    sensitivity: int     # Δ: L1 sensitivity under substitution of one respondent
    rate: Fraction       # λ: P[Z = z] ∝ exp(-λ|z|); certified λ·Δ <= ε exactly

    def __post_init__(self) -> None:
        if self.kind not in MIN_SENSITIVITY:
            raise NoiseError(f"unknown measurement kind {self.kind!r}; expected one of "
                             f"{', '.join(KINDS)}")
        if isinstance(self.sensitivity, bool) or not isinstance(self.sensitivity, int):
            raise NoiseError(f"the sensitivity must be an integer, got {self.sensitivity!r}")
        least = MIN_SENSITIVITY[self.kind]
        if self.sensitivity < least:
            raise NoiseError(f"a {self.kind} changes by up to {least} in L1 when one respondent's "
                             f"answer is substituted; a sensitivity of {self.sensitivity} would "
                             f"understate it")
        _check_epsilon(self.epsilon)
        if not isinstance(self.rate, Fraction) or self.rate <= 0:
            raise NoiseError(f"the noise rate must be a positive Fraction, got {self.rate!r}")
        certify(self.privacy_loss(), self.epsilon, f"{self.kind} noise")

    def privacy_loss(self) -> PrivacyLoss:
        """The exact worst-case log-ratio λ·Δ of the noise over neighbouring aggregates."""
        return PrivacyLoss(log=self.rate * self.sensitivity)

    @property
    def alpha(self) -> float:
        """α = e^-λ: P[Z = z] = (1 - α)/(1 + α)·α^|z|."""
        return math.exp(-float(self.rate))

    @property
    def variance(self) -> float:
        """Per-coordinate variance of ONE server's noise: 2α/(1 - α)^2."""
        return noise_variance(self.rate)

    @property
    def total_variance(self) -> float:
        """Per-coordinate variance of the released total: both servers' noise."""
        return SERVERS * self.variance

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "epsilon": self.epsilon, "sensitivity": self.sensitivity,
                "rate": str(self.rate), "variance": self.variance}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> NoisePlan:
        """A stored plan, certified again (a forged or corrupted rate is refused)."""
        try:
            rate = Fraction(str(data["rate"]))
            return cls(kind=data["kind"], epsilon=data["epsilon"],
                       sensitivity=data["sensitivity"], rate=rate)
        except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
            raise NoiseError(f"not a noise plan: {exc}") from None


def noise_variance(rate: Fraction | float) -> float:
    """2α/(1 - α)^2 for α = e^-rate, computed without cancellation for small rates."""
    r = float(rate)
    am1 = -math.expm1(-r)  # 1 - α
    return 2 * math.exp(-r) / am1**2


def noise_plan(question_kind: str, central_epsilon: float,
               sensitivity: int | None = None) -> NoisePlan:
    """The certified noise for one question's aggregate at the declared central ε.

    `sensitivity` defaults to the kind's (count 1, histogram and crosstab 2); a sum needs it
    (max - min of the measurement). Raises PrivacyCheckError if the exact check refutes ε.
    """
    if question_kind not in MIN_SENSITIVITY:
        raise NoiseError(f"unknown measurement kind {question_kind!r}; expected one of "
                         f"{', '.join(KINDS)}")
    if sensitivity is None:
        if question_kind in ("sum", "multihot", "asked_pair", "histogram_sum"):
            raise NoiseError(f"a {question_kind}'s sensitivity depends on its range: give it")
        sensitivity = MIN_SENSITIVITY[question_kind]
    _check_epsilon(central_epsilon)
    if isinstance(sensitivity, bool) or not isinstance(sensitivity, int) or sensitivity < 1:
        raise NoiseError(f"the sensitivity must be an integer >= 1, got {sensitivity!r}")
    rate = rational_floor(float(central_epsilon)) / sensitivity
    return NoisePlan(kind=question_kind, epsilon=float(central_epsilon), sensitivity=sensitivity,
                     rate=rate)


def add_noise(agg_share: Sequence[int], modulus: int, plan: NoisePlan,
              source: RandomSource | None = None) -> list[int]:
    """The share with one exact discrete-Laplace draw added to each coordinate, mod p.

    Draws come from the OS CSPRNG (`shared/randomness.py`) unless a test injects `source`.
    """
    if isinstance(modulus, bool) or not isinstance(modulus, int) or modulus < 3:
        raise NoiseError(f"the field modulus must be an integer >= 3, got {modulus!r}")
    if not isinstance(plan, NoisePlan):
        raise NoiseError("add_noise needs a certified NoisePlan")
    values = list(agg_share)
    for i, x in enumerate(values):
        if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x < modulus:
            raise NoiseError(f"aggregate share coordinate {i} is not a field element in "
                             f"[0, {modulus})")
    rng = resolve(source)
    return [(x + discrete_laplace(plan.rate, rng)) % modulus for x in values]


def decode_signed(total: int, modulus: int) -> int:
    """A field element as a signed integer: values above p/2 are negative (x - p).

    The true total of a batch lies in [0, n·Δ] and the noise is O(Δ/ε), far below p/2 for the
    64- and 128-bit fields, so the signed value is the true total plus both servers' noise.
    """
    if isinstance(modulus, bool) or not isinstance(modulus, int) or modulus < 3:
        raise NoiseError(f"the field modulus must be an integer >= 3, got {modulus!r}")
    if isinstance(total, bool) or not isinstance(total, int) or not 0 <= total < modulus:
        raise NoiseError(f"{total!r} is not a field element in [0, {modulus})")
    return total - modulus if total > modulus // 2 else total


def _check_epsilon(epsilon: Any) -> None:
    if (isinstance(epsilon, bool) or not isinstance(epsilon, int | float)
            or not math.isfinite(epsilon) or epsilon <= 0):
        raise NoiseError(f"the central epsilon must be a finite number > 0, got {epsilon!r}")


__all__ = ["KINDS", "MIN_SENSITIVITY", "SERVERS", "NoiseError", "NoisePlan", "add_noise",
           "decode_signed", "noise_plan", "noise_variance"]
