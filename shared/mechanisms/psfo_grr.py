"""Padding and sampling with randomized response (PSFO; Wang, Li and Jha, "Locally
Differentially Private Frequent Itemset Mining", IEEE S&P 2018), for multiselect questions.

The answer S (required_min <= |S| <= m) is padded to exactly ℓ items with dummy values:
T(S) = S ∪ {⊥_0, ..., ⊥_(ℓ−|S|−1)}, over the D = k + ℓ − required_min values (the k options,
then the ℓ − required_min dummies a set of the smallest allowed size needs). One item of T is
sampled uniformly and reported with k-ary randomized response (GRR) over the D values; an
option's estimate is ℓ times the GRR estimate of its share among sampled items.

The exact channel. With GRR keeping the item w.p. p = r/(r + D − 1) (each other value
q = 1/(r + D − 1)), P[y | S] = q + (p − q)·[y in T(S)]/ℓ: two values only, so every column of
the channel holds q and q + (p − q)/ℓ and the exact worst ratio is 1 + (r − 1)/ℓ, not r:
sampling one of ℓ items hides which items the set holds. PSFO as published runs the oracle
at the full ε; here the oracle's r is the one that makes the whole channel ε:
r = 1 + ℓ(E − 1) with E <= e^ε rational, so 1 + (r − 1)/ℓ = E. Then r + D − 1 = ℓE + D − ℓ and
    P[y | S] = E/Z for y in T(S),  1/Z otherwise,   Z = ℓE + (D − ℓ),
which is what the sampler draws directly (one uniform draw below Z·den, values in index order
weighted E or 1): the same distribution as "pad, sample one, GRR" (tests compose the two
channels in fractions), with one draw instead of three. ε is proven from these two weights;
every allowed S has |T(S)| = ℓ, so Z is the same for all of them.

ℓ: no set may be truncated (ℓ >= m, else the estimate is biased), and every variance here
grows with ℓ (the noise floor q(1 − q)/(p* − q)² ≈ (ℓE + k)/(E − 1)²), so ℓ = m; `best_pad`
still ranks ℓ = m..2m by the exact variance, which a test pins. With exclusive options m is the
largest allowed set, m' = min(max_selected, k') (SetShape.largest): an exclusive option alone
pads like any set of one, and the proof above holds unchanged (every allowed S pads to ℓ
items; each value is in T(S) for some allowed S and outside T(S') for another).

Support: option j is supported when y = j: p* = E/Z, q* = 1/Z (set_base.py estimates). The mean
number selected is (Σ_j C_j/n − k·q*)/(p* − q*): one report lands on an option with
probability (|S|·E + k − |S|)/Z, a Bernoulli whose variance averaged over respondents is at most
that of the average probability (Jensen): `count_variance` is that upper bound.

Report: the value index y in [0, D) (options first, then dummies), aggregated as D counts.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from ..aggregates import Aggregate, CountAggregate
from ..exact import PrivacyLoss, rational_exp_floor
from ..randomness import RandomSource
from .base import IndexReports, JointReading
from .set_base import SetMechanism, SetShape, nth_selected, set_sizes

_CHUNK_ROWS = 1 << 16


def best_pad(cls: Any, shape: SetShape, epsilon: float) -> int:
    """ℓ in [m, 2m] with the least average variance (always m: see the module docstring)."""
    return min(range(shape.largest, 2 * shape.largest + 1),
               key=lambda pad: cls.padded_variances(shape, epsilon, pad)[1])


class PSFOGRR(IndexReports, SetMechanism):
    name = "psfo_grr"
    summary = ("Padding and sampling: the set padded to m items with dummies, one item drawn, "
               "sent by randomized response over k + m values.")
    joint_reports: ClassVar[JointReading] = JointReading.NONE

    def __init__(self, epsilon: float, labels: Any, **kwargs: Any) -> None:
        super().__init__(epsilon, labels, **kwargs)
        self.pad = best_pad(type(self), self.shape, self.epsilon)
        self.dummies = self.pad - self.required_min
        self.size = self.k + self.dummies  # D: the values a report can name
        e = rational_exp_floor(self.epsilon)
        # Integer weights: E·den for the items of T(S), den for the others.
        self.weight_in, self.weight_out = e.numerator, e.denominator
        self.total = self.pad * self.weight_in + (self.size - self.pad) * self.weight_out
        self.p_star = Fraction(self.weight_in, self.total)
        self.q_star = Fraction(self.weight_out, self.total)
        self._certify()

    @classmethod
    def padded_probabilities(cls, shape: SetShape, epsilon: float,
                             pad: int) -> tuple[Fraction, Fraction]:
        e = rational_exp_floor(epsilon)
        total = pad * e + (shape.k + pad - shape.required_min - pad)
        return e / total, 1 / total

    @classmethod
    def padded_variances(cls, shape: SetShape, epsilon: float, pad: int) -> tuple[float, float]:
        p, q = (float(x) for x in cls.padded_probabilities(shape, epsilon, pad))
        v_in, v_out = p * (1 - p), q * (1 - q)
        scale = (p - q) ** 2
        selected = shape.largest if v_in > v_out else shape.required_min
        return (max(v_in, v_out) / scale,
                (shape.k * v_out + selected * (v_in - v_out)) / (shape.k * scale))

    @classmethod
    def probabilities(cls, shape: SetShape, epsilon: float) -> tuple[Fraction, Fraction]:
        return cls.padded_probabilities(shape, epsilon, best_pad(cls, shape, epsilon))

    @classmethod
    def report_bytes(cls, k: int, epsilon: float) -> int:
        return len(str(2 * k - 1))  # the largest index, k + m - 1 with m <= k

    def params(self) -> dict[str, Any]:
        return {**super().params(), "pad": self.pad, "values": self.size}

    def privacy_loss(self) -> PrivacyLoss | None:
        # Every allowed S pads to exactly ℓ items: |S| <= m <= ℓ, and ℓ - |S| <= the dummies.
        if not (self.pad >= self.shape.largest and self.dummies == self.pad - self.required_min
                and self.size == self.k + self.dummies and self.size > self.pad):
            return None
        if self.total != self.pad * self.weight_in + (self.size - self.pad) * self.weight_out:
            return None
        if self.weight_in <= 0 or self.weight_out <= 0:
            return None
        # Every column holds weight_in/total (y in T(S)) and weight_out/total (y not in T(S')):
        # each y is in T(S) for some allowed S and outside T(S') for another.
        return PrivacyLoss(ratio=max(Fraction(self.weight_in, self.weight_out),
                                     Fraction(self.weight_out, self.weight_in)))

    def channel(self) -> list[list[Fraction]]:
        """P[y | S] for every allowed S (rows in bitmask order): small k only (tests)."""
        rows = []
        for mask in self.shape.allowed_masks():
            inside = self.padded(mask)
            rows.append([self.p_star if y in inside else self.q_star for y in range(self.size)])
        return rows

    def padded(self, mask: int) -> set[int]:
        """T(S): the selected options and the first ℓ − |S| dummies."""
        chosen = {j for j in range(self.k) if mask >> j & 1}
        return chosen | {self.k + i for i in range(self.pad - len(chosen))}

    # --- the respondent's side -------------------------------------------------------------

    def perturb_index(self, index: int, source: RandomSource) -> int:
        inside = self.padded(index)
        draw = source.randbelow(self.total)
        for y in range(self.size):
            weight = self.weight_in if y in inside else self.weight_out
            if draw < weight:
                return y
            draw -= weight
        raise AssertionError("unreachable: the draw is below the total weight")

    def perturb_many(self, answers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        sets = self.check_sets(answers)
        out = np.empty(sets.shape[0], dtype=np.int64)
        p_in = self.pad * self.weight_in / self.total  # P[y in T(S)]
        for start in range(0, sets.shape[0], _CHUNK_ROWS):
            block = sets[start:start + _CHUNK_ROWS]
            rows = block.shape[0]
            sizes = set_sizes(block)
            inside = rng.random(rows) < p_in
            # In T(S): uniform over its ℓ items (the selected options, then dummies).
            pick = rng.integers(0, self.pad, size=rows)
            real = pick < sizes
            in_value = np.where(real, nth_selected(block, np.minimum(pick, self.k - 1)),
                                self.k + pick - sizes)
            # Outside: uniform over the k - |S| other options and the unused dummies.
            other = rng.integers(0, self.size - self.pad, size=rows)
            unselected = other < self.k - sizes
            out_value = np.where(unselected,
                                 nth_selected(block, np.minimum(other, self.k - 1), False),
                                 self.k + self.pad - sizes + (other - (self.k - sizes)))
            out[start:start + rows] = np.where(inside, in_value, out_value)
        return out

    # --- the aggregator's side -------------------------------------------------------------

    @property
    def index_count(self) -> int:
        return self.size

    def support_counts(self, aggregate: Aggregate) -> np.ndarray:
        assert isinstance(aggregate, CountAggregate)
        return aggregate.counts[:self.k]

    def pseudo_values(self, reports: Any) -> np.ndarray:
        """Contract 5: (1[y = j] − q*)/(p* − q*) for each option j, unbiased for 1[j in S]."""
        y = np.asarray(reports).astype(np.int64).reshape(-1)
        p, q = float(self.p_star), float(self.q_star)
        bits = (y[:, None] == np.arange(self.k)[None, :]).astype(np.float64)
        return (bits - q) / (p - q)

    def count_variance(self, selected: float, n: int) -> float:
        p, q = float(self.p_star), float(self.q_star)
        on_option = selected * p + (self.k - selected) * q
        return on_option * (1 - on_option) / (n * (p - q) ** 2)
