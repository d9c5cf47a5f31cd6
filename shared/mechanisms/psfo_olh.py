"""Padding and sampling with optimized local hashing (PSFO over OLH; Wang, Li and Jha, IEEE S&P
2018), for multiselect questions: padded and sampled as in psfo_grr.py (ℓ = m items over
D = k + m − required_min values; m the largest allowed set, min(max_selected, k') with
exclusive options), the sampled item then reported with OLH (olh.py) over the D
values: a fresh hash seed s, the bucket h_s(x) of the item x among g = round(e^ε) + 1, sent
through g-ary randomized response (p' = r/(r + g − 1), q' = 1/(r + g − 1), r <= e^ε).

Exact privacy (neighbouring relation: any two allowed answer sets). The seed is drawn
independently of the answer; given it, P[bucket y | s, S] = q' + (p' − q')·#{x in T(S):
h_s(x) = y}/ℓ lies in [q', p'], so every ratio is at most p'/q' = r: the certified bound (a seed
that hashes all of T(S) to y and none of T(S') reaches it). Unlike psfo_grr, sampling buys no
amplification in the worst case.

Support: option j is supported by [seed, y] when h_s(j) = y. With olh.py's exact
q* = c·p' + (1 − c)·q' (c the bucket collision probability), P[j supported | S] =
q* + (p' − q*)·[j in S]/ℓ, so p* = q* + (p' − q*)/ℓ and the estimate scales by ℓ. The number
of options a report supports, N, has (with w = |S|/ℓ, the chance a real option was sampled)
Var N = w·V_in + (1 − w)·V_out + w(1 − w)(p' − q*)², V_in/V_out the variances of olh.py's
`set_support_variances` for the group of all k options; it is concave in w, so the variance at
the average w bounds the average (`count_variance`, an upper bound).

Report: [seed, bucket] (olh.py's wire format; the hash domain is the D values).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from ..aggregates import Aggregate
from ..exact import PrivacyLoss
from ..randomness import RandomSource
from .base import JointReading
from .olh import OLH, PRIME, LocalHashReports, buckets
from .pure import SupportCounted
from .set_base import SetMechanism, SetShape, nth_selected, set_sizes


class PSFOOLH(LocalHashReports, SupportCounted, SetMechanism):
    name = "psfo_olh"
    summary = ("Padding and sampling: the set padded to m items with dummies, one item drawn, "
               "sent by optimized local hashing.")
    joint_reports: ClassVar[JointReading] = JointReading.NONE

    def __init__(self, epsilon: float, labels: Any, **kwargs: Any) -> None:
        super().__init__(epsilon, labels, **kwargs)
        self.pad = self.shape.largest
        self.size = self.k + self.pad - self.required_min
        self.g = buckets(self.epsilon)
        self.p_bucket, self.q_bucket = OLH._bucket_probabilities(self.epsilon, self.g)
        self.p_star, self.q_star = self.probabilities(self.shape, self.epsilon)
        self._values = np.arange(self.k, dtype=np.int64)
        self._certify()

    @classmethod
    def probabilities(cls, shape: SetShape, epsilon: float) -> tuple[Fraction, Fraction]:
        g = buckets(epsilon)
        p_item, q = OLH._support(*OLH._bucket_probabilities(epsilon, g), g)
        return q + (p_item - q) / shape.largest, q

    @classmethod
    def report_bytes(cls, k: int, epsilon: float) -> int:
        return OLH.report_bytes(k, epsilon)

    def params(self) -> dict[str, Any]:
        return {**super().params(), "pad": self.pad, "values": self.size, "buckets": self.g,
                "prime": PRIME,
                "hash": "((a0 + a1*v + a2*v^2) mod prime) mod buckets, seed = a0 + a1*prime "
                        "+ a2*prime^2"}

    def privacy_loss(self) -> PrivacyLoss | None:
        if self.p_bucket + (self.g - 1) * self.q_bucket != 1 or self.q_bucket <= 0:
            return None
        if self.size > PRIME or self.pad < self.shape.largest:
            return None
        return PrivacyLoss(ratio=max(self.p_bucket / self.q_bucket,
                                     self.q_bucket / self.p_bucket))

    def padded(self, mask: int) -> list[int]:
        """T(S) in order: the selected options ascending, then the first ℓ − |S| dummies."""
        chosen = [j for j in range(self.k) if mask >> j & 1]
        return chosen + [self.k + i for i in range(self.pad - len(chosen))]

    # --- the respondent's side -------------------------------------------------------------

    def perturb_index(self, index: int, source: RandomSource) -> list[int]:
        return self._hash_report(self.padded(index)[source.randbelow(self.pad)], source)

    def perturb_many(self, answers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        sets = self.check_sets(answers)
        sizes = set_sizes(sets)
        pick = rng.integers(0, self.pad, size=sets.shape[0])
        item = np.where(pick < sizes, nth_selected(sets, np.minimum(pick, self.k - 1)),
                        self.k + pick - sizes)
        return self._hash_reports_many(item, rng)

    # --- the aggregator's side -------------------------------------------------------------

    def support_counts(self, aggregate: Aggregate) -> np.ndarray:
        return SupportCounted.support_counts(self, aggregate)

    def pseudo_values(self, reports: Any) -> np.ndarray:
        """Contract 5: (1[y supports j] − q*)/(p* − q*) per option j, unbiased for 1[j in S]."""
        bits = self.support_bits(reports)
        p, q = float(self.p_star), float(self.q_star)
        bits -= q
        bits /= p - q
        return bits

    def count_variance(self, selected: float, n: int) -> float:
        p_item = float(self.p_bucket)
        q = float(self.q_star)
        v_in, v_out = OLH.set_support_variances(p_item, q, self.size, self.k)
        w = selected / self.pad
        per_report = w * v_in + (1 - w) * v_out + w * (1 - w) * (p_item - q) ** 2
        return self.pad**2 * per_report / (n * (p_item - q) ** 2)
