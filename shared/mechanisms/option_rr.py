"""Per-option randomized response for multiselect questions: each option's bit of the answer
(1: selected) is sent through its own independent randomized response.

Bit j of the report is 1 with probability p when j is in the answer S and q when it is not, all
k bits drawn independently (`SetBits`, shared with set_ue.py). Here p = r/(r + 1), q = 1 − p:
every bit is kept with probability p and flipped otherwise, with r <= e^(ε/Δ) rational.

Exact privacy (neighbouring relation: any two allowed answer sets). The channel is a product
over bits, so for S, S' the ratio of one report is a product over the options they differ in:
Π_{j in S\\S'} P_p(y_j)/P_q(y_j) · Π_{j in S'\\S} P_q(y_j)/P_p(y_j), at most α^a·β^b with
α = p/q, β = (1 − q)/(1 − p), a = |S \\ S'|, b = |S' \\ S|, and reached by the report that
keeps S on those options. The worst over allowed pairs (a, b) (`SetShape.pairs`) is computed
exactly in `privacy_loss`. For option_rr α = β = r, so the loss is r^Δ with Δ the most options
two allowed sets differ in. Δ = min(2m, k) for sets of required_min..m of k >= 2 options: two
disjoint sets of size m differ in 2m when 2m <= k; otherwise S of size m and S' = the other
k − m options (1 <= k − m <= m when m < k; with m = k, S' of size 1 and S its complement)
differ in all k, and no two sets differ in more than min(|S| + |S'|, k). The empty set being
allowed or not changes nothing (tests enumerate every pair of sets for small k).
With exclusive options (set_base.py) Δ = max(min(2m', k'), m' + 1), m' = min(m, k') of the
k' options that may be selected together: an exclusive option alone against a set of m'
others differs in m' + 1 (tests/shared/test_multiselect_exclusive.py enumerates both).

Sampling: with D the common denominator of p and q, bit j is [u_j < p·D] when j is in S and
[u_j < q·D] otherwise, u_0..u_(k−1) independent uniform draws in [0, D) in option order
(`randbelow_many`); each bit is exactly Bernoulli(p) or Bernoulli(q), independently.

Wire format: the k bits as ceil(k/32) 32-bit words (unary.BitmapReports).
Estimation: f̂_j = (C_j/n − q)/(p − q) (set_base.py); the bits of one report are independent,
so the mean number selected, Σ_j f̂_j, has variance Σ_j Var f̂_j exactly.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from ..exact import PrivacyLoss
from ..randomness import RandomSource, randbelow_many
from .set_base import SetMechanism, SetShape, exp_floor
from .unary import BitmapReports

_CHUNK_ROWS = 4096


class SetBits(BitmapReports, SetMechanism):
    """k independent bits, P[1 | selected] = p, P[1 | not selected] = q (option_rr, set_ue)."""

    def __init__(self, epsilon: float, labels: Any, **kwargs: Any) -> None:
        super().__init__(epsilon, labels, **kwargs)
        self.p_star, self.q_star = self.probabilities(self.shape, self.epsilon)
        self.words = self.word_count(self.k)
        self._bit_thresholds()
        self._certify()

    @classmethod
    def report_bytes(cls, k: int, epsilon: float) -> int:
        return cls.bitmap_bytes(k)

    def params(self) -> dict[str, Any]:
        return {**super().params(), "encoding": "bitmap-u32-le"}

    def privacy_loss(self) -> PrivacyLoss | None:
        p, q = self.p_star, self.q_star
        if not (0 < q < p < 1):
            return None
        alpha, beta = p / q, (1 - q) / (1 - p)
        return PrivacyLoss(ratio=max(alpha**a * beta**b for a, b in self.shape.pairs()))

    # --- the respondent's side -------------------------------------------------------------

    def perturb_index(self, index: int, source: RandomSource) -> list[int]:
        draws = randbelow_many(source, self.denominator, self.k)
        selected = np.array([index >> j & 1 for j in range(self.k)], dtype=bool)
        # Compared with each threshold as a Python int: at large ε the denominator passes 2^64.
        bits = np.where(selected, draws < self.p_threshold, draws < self.q_threshold)
        return self._encode_bits(np.asarray(bits, dtype=bool))

    def perturb_many(self, answers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        sets = self.check_sets(answers)
        out = np.empty((sets.shape[0], self.words), dtype=np.uint32)
        p, q = float(self.p_star), float(self.q_star)
        for start in range(0, sets.shape[0], _CHUNK_ROWS):
            block = sets[start:start + _CHUNK_ROWS]
            bits = rng.random(block.shape) < np.where(block, p, q)
            out[start:start + block.shape[0]] = self._pack(bits)
        return out

    # --- the aggregator's side -------------------------------------------------------------

    def count_variance(self, selected: float, n: int) -> float:
        p, q = float(self.p_star), float(self.q_star)
        return (selected * p * (1 - p) + (self.k - selected) * q * (1 - q)) / (n * (p - q) ** 2)


class OptionRR(SetBits):
    name = "option_rr"
    summary = ("Per-option randomized response: each option's yes/no bit kept w.p. "
               "e^(ε/Δ)/(e^(ε/Δ)+1), Δ = min(2m, k).")

    @classmethod
    def probabilities(cls, shape: SetShape, epsilon: float) -> tuple[Fraction, Fraction]:
        r = exp_floor(Fraction(epsilon) / shape.max_difference())
        return r / (r + 1), 1 / (r + 1)
