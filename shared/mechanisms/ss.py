"""Subset selection (Ye & Barg 2018): report a set of d of the k options, d about k/(e^ε + 1).

A set Z of size d is drawn with P[Z | x] = r/D when x is in Z and 1/D otherwise, where
D = C(k-1, d-1)·r + C(k-1, d) and r <= e^ε rational. Equivalently: put x in Z with probability
p* = d·r/(d·r + k - d), then fill Z with uniform others. The exact worst ratio is r (every
column of the channel holds only r/D and 1/D, both present when 1 <= d <= k - 1). d is the
floor or ceiling of k/(e^ε + 1), whichever has the lower worst-case variance.

Support: v is supported when v is in Z; q* = p*·(d-1)/(k-1) + (1 - p*)·d/(k-1).
Wire format: the set as a k-bit bitmap of 32-bit words, exactly d bits set
(see `unary.BitmapReports`).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from ..exact import PrivacyLoss, rational_exp_floor
from ..randomness import RandomSource, bernoulli, randbelow_each
from .pure import PureProtocol
from .unary import BitmapReports

_CHUNK_ROWS = 2048


def _hypergeometric(population: int, successes: int, draws: int) -> tuple[float, float]:
    """(mean, variance) of the number of successes in `draws` draws without replacement."""
    if population <= 0 or draws <= 0:
        return 0.0, 0.0
    share = successes / population
    mean = draws * share
    if population == 1:
        return mean, 0.0
    return mean, draws * share * (1 - share) * (population - draws) / (population - 1)


def _mixture_variance(p: float, a: tuple[float, float], b: tuple[float, float]) -> float:
    """Variance of A with probability p, B otherwise, from their (mean, variance)."""
    mean = p * a[0] + (1 - p) * b[0]
    second = p * (a[1] + a[0] ** 2) + (1 - p) * (b[1] + b[0] ** 2)
    return second - mean**2


class SubsetSelection(BitmapReports, PureProtocol):
    name = "ss"
    question_types = frozenset({"categorical", "ordinal"})
    summary = "Subset selection: report d ~ k/(e^ε+1) options, likelier to include the true one."

    def __init__(self, epsilon: float, labels: Any, **kwargs: Any) -> None:
        super().__init__(epsilon, labels, **kwargs)
        self.words = self.word_count(self.k)
        self.subset_size = self.set_bits = self.best_size(self.k, self.epsilon)
        self.p_star, self.q_star = self._probabilities(self.k, self.subset_size, self.epsilon)
        self._certify()

    @staticmethod
    def _probabilities(k: int, d: int, epsilon: float) -> tuple[Fraction, Fraction]:
        r = rational_exp_floor(epsilon)
        p = d * r / (d * r + k - d)
        return p, (p * (d - 1) + (1 - p) * d) / (k - 1)

    @classmethod
    def best_size(cls, k: int, epsilon: float) -> int:
        """d in {floor, ceil} of k/(e^ε + 1), within [1, k - 1], with the lower variance."""
        target = k / (math.exp(min(epsilon, 700.0)) + 1)
        sizes = {min(max(s, 1), k - 1) for s in (math.floor(target), math.ceil(target))}
        return min(sorted(sizes), key=lambda d: cls._worst(k, d, epsilon))

    @classmethod
    def _worst(cls, k: int, d: int, epsilon: float) -> float:
        p, q = (float(x) for x in cls._probabilities(k, d, epsilon))
        return float(max(cls.variance_at(p, q, k, 0.0, 1, 1), cls.variance_at(p, q, k, 1.0, 1, 1)))

    @classmethod
    def support_probabilities(cls, k: int, epsilon: float) -> tuple[float, float]:
        p, q = cls._probabilities(k, cls.best_size(k, epsilon), epsilon)
        return float(p), float(q)

    @classmethod
    def set_support_variances(cls, p: float, q: float, k: int, g: int) -> tuple[float, float]:
        # d = q*(k-1) + p* exactly (from the formula for q*). Given the answer x, Z \ {x} is a
        # uniform (d-1)-subset (x in Z, prob p*) or d-subset (x not in Z) of the k-1 others,
        # so |Z ∩ G| is a mixture of hypergeometrics: with x outside G, HG(k-1, g, d-1) or
        # HG(k-1, g, d); with x inside G, 1 + HG(k-1, g-1, d-1) or HG(k-1, g-1, d).
        if g == 1:  # one value: a Bernoulli either way (same arithmetic as every protocol)
            return p * (1 - p), q * (1 - q)
        d = round(q * (k - 1) + p)
        m_out_a, v_out_a = _hypergeometric(k - 1, g, d - 1)
        v_out = _mixture_variance(p, (m_out_a, v_out_a), _hypergeometric(k - 1, g, d))
        m_in_a, v_in_a = _hypergeometric(k - 1, g - 1, d - 1)
        v_in = _mixture_variance(p, (1 + m_in_a, v_in_a), _hypergeometric(k - 1, g - 1, d))
        return v_in, v_out

    @classmethod
    def report_bytes(cls, k: int, epsilon: float) -> int:
        return cls.bitmap_bytes(k)

    def params(self) -> dict[str, Any]:
        return {**super().params(), "subset_size": self.subset_size, "encoding": "bitmap-u32-le"}

    def privacy_loss(self) -> PrivacyLoss | None:
        d, k = self.subset_size, self.k
        if not 1 <= d <= k - 1:
            return None
        r = rational_exp_floor(self.epsilon)
        # C(k-1, d-1) sets contain x (r/D each), C(k-1, d) do not (1/D each): the sampler's
        # P[x in Z] = p* must be exactly their share, or it samples some other channel. The
        # share is C(k-1, d-1)·r/(C(k-1, d-1)·r + C(k-1, d)); dividing by C(k-1, d-1) (exact,
        # C(k-1, d)/C(k-1, d-1) = (k-d)/d) keeps the check O(1) where the binomials would
        # have ~k/3 digits.
        if r / (r + Fraction(k - d, d)) != self.p_star:
            return None
        return PrivacyLoss(ratio=max(r, 1 / r))

    # --- the respondent's side -------------------------------------------------------------

    def perturb_index(self, index: int, source: RandomSource) -> list[int]:
        inside = bernoulli(self.p_star, source)
        others = self.subset_size - 1 if inside else self.subset_size
        # Floyd's algorithm: a uniform `others`-subset of the k - 1 values other than `index`,
        # from the draws randbelow(j + 1) for j = k-1-others .. k-2, read in one bulk call.
        first = self.k - 1 - others
        draws = randbelow_each(source, np.arange(first + 1, self.k, dtype=np.uint64)).tolist()
        chosen = bytearray(self.k - 1)  # chosen[c]: the c-th of the other values is in Z
        for j, t in enumerate(draws, start=first):
            if chosen[t]:
                chosen[j] = 1
            else:
                chosen[t] = 1
        others_bits = np.frombuffer(chosen, dtype=np.uint8).astype(bool)
        return self._encode_bits(np.insert(others_bits, index, inside))

    def perturb_many(self, answers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        answers = np.asarray(answers, dtype=np.int64)
        out = np.empty((answers.size, self.words), dtype=np.uint32)
        d, p = self.subset_size, float(self.p_star)
        for start in range(0, answers.size, _CHUNK_ROWS):
            block = answers[start:start + _CHUNK_ROWS]
            rows = np.arange(block.size)
            inside = rng.random(block.size) < p
            # Random keys; the true value's key is pushed last, so the d smallest keys are a
            # uniform d-subset of the others; rows with x inside swap their largest for x.
            keys = rng.random((block.size, self.k))
            keys[rows, block] = 2.0
            order = np.argpartition(keys, d - 1, axis=1)[:, :d]
            picked = np.take_along_axis(keys, order, axis=1)
            order[rows[inside], np.argmax(picked[inside], axis=1)] = block[inside]
            bits = np.zeros((block.size, self.k), dtype=bool)
            bits[rows[:, None], order] = True
            out[start:start + block.size] = self._pack(bits)
        return out
