"""Unary encoding: the answer becomes k bits, one per option, each flipped independently.

Bit v of the report is 1 with probability p if v is the true answer and q otherwise, every bit
drawn on its own (Wang et al. 2017). The true bit is kept with probability exactly p whatever
the other bits came out as: no draw is shared or re-used between bits (the bug class in which
the true bit is forced, or OR-ed after the q draws, breaks exactly this).

Two instances:
- `sue` (symmetric, one-time basic RAPPOR): p = r/(r + 1), q = 1/(r + 1), r <= e^(ε/2).
- `oue` (optimized): p = 1/2, q = 1/(r + 1), r <= e^ε; the lowest variance of the family.

Exact privacy: the channel is a product over bits, so for answers x != x' the likelihood ratio of
a report only involves bits x and x': max over y of P[y|x]/P[y|x'] =
max_b P_p(b)/P_q(b) · max_b P_q(b)/P_p(b) with P_p(1) = p, P_p(0) = 1 - p (same for q). That
is p(1 - q)/(q(1 - p)): r for OUE, r^2 for SUE, computed in Fractions.

Sampling: with D the common denominator of p and q, bit v is [u_v < p·D] for the true answer
and [u_v < q·D] for the others, u_0..u_(k-1) independent uniform draws in [0, D) in option
order (`randbelow_many`: one bulk read of the OS CSPRNG). Each bit is then exactly Bernoulli(p)
or Bernoulli(q), independently.

Wire format: the k bits as a list of ceil(k/32) 32-bit words (see `BitmapReports`).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from ..errors import ReportError
from ..exact import PrivacyLoss, rational_exp_floor
from ..randomness import RandomSource, randbelow_many
from .base import JointReading, Mechanism, reject_bool
from .pure import PureProtocol, SupportCounted

_CHUNK_ROWS = 4096  # rows per vectorized block: bounded memory at any n
# Options up to which a one-word report's pseudo-values are a lookup (2^k rows: 32 kB at 12).
LOOKUP_BITS = 12


class BitmapReports(SupportCounted):
    """The k-bit wire format shared by unary encoding and subset selection.

    A report is a JSON list of ceil(k/32) integers in [0, 2^32): value v is bit v % 32 of word
    v // 32, unused high bits of the last word are 0. Every element is a plain integer, so JSON
    carries it exactly; `perturb_many` returns the same words as a (n, words) uint32 array.
    `set_bits`, if set, is the exact number of 1 bits every report carries.
    """

    k: int
    words: int
    set_bits: int | None = None
    p_star: Fraction
    q_star: Fraction

    @staticmethod
    def word_count(k: int) -> int:
        return (k + 31) // 32

    @classmethod
    def bitmap_bytes(cls, k: int) -> int:
        """Longest JSON form: each word up to 10 digits, commas, brackets."""
        return 11 * cls.word_count(k) + 1

    def _bit_thresholds(self) -> None:
        """One denominator D for every bit's draw of independent-bit encodings (p_star for a
        set bit, q_star for an unset one): bit = [draw < threshold], draw uniform in [0, D)."""
        p, q = self.p_star, self.q_star
        self.denominator = math.lcm(p.denominator, q.denominator)
        self.p_threshold = p.numerator * (self.denominator // p.denominator)
        self.q_threshold = q.numerator * (self.denominator // q.denominator)

    def validate_report(self, report: Any) -> list[int]:
        if not isinstance(report, list | tuple):
            raise ReportError(f"a bitmap report is a list of {self.words} integers, got "
                              f"{type(report).__name__}")
        if len(report) != self.words:
            raise ReportError(f"a bitmap report has {self.words} words, got {len(report)}")
        words = []
        for i, word in enumerate(report):
            reject_bool(word, f"word {i}")
            if not isinstance(word, int | np.integer):
                raise ReportError(f"word {i} must be an integer, got {type(word).__name__}")
            if not 0 <= int(word) < 2**32:
                raise ReportError(f"word {i} is outside [0, 2^32)")
            words.append(int(word))
        if words[-1] >> (self.k - 32 * (self.words - 1)):
            raise ReportError(f"bits past the {self.k} options must be 0")
        if self.set_bits is not None:
            ones = sum(w.bit_count() for w in words)
            if ones != self.set_bits:
                raise ReportError(f"a report sets exactly {self.set_bits} bits, got {ones}")
        return words

    joint_reports = JointReading.SUPPORT_BITS

    @property
    def report_width(self) -> int:
        return self.words

    def support_bits(self, reports: np.ndarray) -> np.ndarray:
        words = np.asarray(reports, dtype=np.int64).astype("<u4").reshape(-1, self.words)
        return self._bits(words).astype(np.float64)

    def pseudo_value_rows(self, reports: Any) -> tuple[np.ndarray, np.ndarray] | None:
        """A one-word report of at most LOOKUP_BITS options is its own code: the table holds
        the pseudo-values of every possible word (2^k rows), made by `pseudo_values`."""
        if self.words != 1 or self.k > LOOKUP_BITS or type(self).pseudo_values is not \
                Mechanism.pseudo_values:
            return None
        table = self.pseudo_values(np.arange(2**self.k, dtype=np.int64))
        return table, np.asarray(reports).astype(np.int64, copy=False).reshape(-1)

    def _bits(self, words: np.ndarray) -> np.ndarray:
        """(rows, k) 0/1 array from (rows, words) uint32 words."""
        raw = np.ascontiguousarray(words, dtype="<u4").view(np.uint8)
        return np.unpackbits(raw, axis=-1, bitorder="little")[..., :self.k]

    def _pack(self, bits: np.ndarray) -> np.ndarray:
        """(rows, words) uint32 words from a (rows, k) boolean array."""
        packed = np.packbits(bits, axis=1, bitorder="little")
        padded = np.zeros((bits.shape[0], 4 * self.words), dtype=np.uint8)
        padded[:, :packed.shape[1]] = packed
        return padded.view("<u4")

    def _encode(self, members: Any) -> list[int]:
        """The wire form of a set of value indices."""
        words = [0] * self.words
        for v in members:
            words[v // 32] |= 1 << (v % 32)
        return words

    def _encode_bits(self, bits: np.ndarray) -> list[int]:
        """The wire form of a k-long boolean array (bit v set: value v supported)."""
        return [int(w) for w in self._pack(bits[None, :])[0]]

    def _supports(self, report: Any) -> np.ndarray:
        return np.flatnonzero(self._bits(np.asarray([report], dtype=np.int64))[0])

    def _supports_many(self, reports: Any) -> tuple[np.ndarray, int]:
        reports = np.asarray(reports, dtype=np.int64).astype("<u4").reshape(-1, self.words)
        counts = np.zeros(self.k, dtype=np.int64)
        for start in range(0, reports.shape[0], _CHUNK_ROWS):
            counts += self._bits(reports[start:start + _CHUNK_ROWS]).sum(axis=0, dtype=np.int64)
        return counts, reports.shape[0]


class UnaryEncoding(BitmapReports, PureProtocol):
    """Shared body of OUE and SUE; subclasses choose (p, q) in `_probabilities`."""

    question_types: ClassVar[frozenset[str]] = frozenset({"categorical", "ordinal"})

    def __init__(self, epsilon: float, labels: Any, **kwargs: Any) -> None:
        super().__init__(epsilon, labels, **kwargs)
        self.p_star, self.q_star = self._probabilities(self.epsilon)
        self.words = self.word_count(self.k)
        self._bit_thresholds()
        self._certify()

    @classmethod
    def _probabilities(cls, epsilon: float) -> tuple[Fraction, Fraction]:
        raise NotImplementedError

    @classmethod
    def support_probabilities(cls, k: int, epsilon: float) -> tuple[float, float]:
        p, q = cls._probabilities(epsilon)
        return float(p), float(q)

    @classmethod
    def set_support_variances(cls, p: float, q: float, k: int, g: int) -> tuple[float, float]:
        # Bits are independent: the count in G is a sum of independent Bernoullis, one with
        # P = p when the answer is in G, and g (or g - 1) with P = q.
        return p * (1 - p) + (g - 1) * q * (1 - q), g * q * (1 - q)

    @classmethod
    def report_bytes(cls, k: int, epsilon: float) -> int:
        return cls.bitmap_bytes(k)

    def params(self) -> dict[str, Any]:
        return {**super().params(), "encoding": "bitmap-u32-le"}

    def privacy_loss(self) -> PrivacyLoss | None:
        p, q = self.p_star, self.q_star
        if not (0 < p < 1 and 0 < q < 1):
            return None
        ratio = max(p / q, (1 - p) / (1 - q)) * max(q / p, (1 - q) / (1 - p))
        return PrivacyLoss(ratio=ratio)

    # --- the respondent's side -------------------------------------------------------------

    def perturb_index(self, index: int, source: RandomSource) -> list[int]:
        # One independent draw per bit: the true bit's draw uses p and nothing else.
        draws = randbelow_many(source, self.denominator, self.k)
        bits = draws < self.q_threshold
        bits[index] = draws[index] < self.p_threshold
        return self._encode_bits(np.asarray(bits, dtype=bool))

    def perturb_many(self, answers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        answers = np.asarray(answers, dtype=np.int64)
        out = np.empty((answers.size, self.words), dtype=np.uint32)
        p, q = float(self.p_star), float(self.q_star)
        for start in range(0, answers.size, _CHUNK_ROWS):
            block = answers[start:start + _CHUNK_ROWS]
            bits = rng.random((block.size, self.k)) < q
            # Overwrite the true position with its own fresh draw (independent of the rest).
            bits[np.arange(block.size), block] = rng.random(block.size) < p
            out[start:start + block.size] = self._pack(bits)
        return out


class OUE(UnaryEncoding):
    name = "oue"
    summary = "Optimized unary encoding: k bits, the true one kept w.p. 1/2, others 1/(e^ε+1)."

    @classmethod
    def _probabilities(cls, epsilon: float) -> tuple[Fraction, Fraction]:
        r = rational_exp_floor(epsilon)
        return Fraction(1, 2), 1 / (r + 1)


class SUE(UnaryEncoding):
    name = "sue"
    summary = "Symmetric unary encoding (one-time basic RAPPOR): each of k bits flipped alike."

    @classmethod
    def _probabilities(cls, epsilon: float) -> tuple[Fraction, Fraction]:
        # ε/2 is exact in binary floating point, so r <= e^(ε/2) and r^2 <= e^ε.
        r = rational_exp_floor(epsilon / 2)
        return r / (r + 1), 1 / (r + 1)
