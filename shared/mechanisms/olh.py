"""Optimized local hashing (Wang et al. 2017): hash the answer into g = round(e^ε) + 1 buckets
with a freshly drawn hash function, then apply k-ary randomized response to the bucket.

Hash family: a seed s in [0, P^3), P = 2^17 - 1 (prime), names the polynomial
a0 + a1·v + a2·v^2 over GF(P) (a0, a1, a2 the base-P digits of s), and
h_s(v) = ((a0 + a1·v + a2·v^2) mod P) mod g. For any three distinct values (all k <= 65536 < P)
the polynomial's values are independent and uniform on GF(P) (Vandermonde), so the buckets are
independent with the distribution π_j = #{z < P : z mod g = j}/P, within 2^-17 of 1/g. Nothing
here is approximated: the estimator uses the exact collision probability c = Σ π_j^2, so
P[report supports v | answer u != v] = q* = c·p' + (1 - c)·q' holds exactly for every pair, and
the group variances below use the exact third moment.

Exact privacy: the seed is drawn independently of the answer, and given the seed the bucket goes
through GRR over g values with p' = r/(r + g - 1), q' = 1/(r + g - 1), r <= e^ε rational. The
worst ratio P[(s, y)|x] / P[(s, y)|x'] is p'/q' = r.

Report: [seed, bucket] (JSON list of two integers, seed < P^3 < 2^53). The aggregate keeps the
support counts C_v = #{reports with h_s(v) = y}: each report updates them in O(k) numpy work, a
bulk recompute is O(n·k) vectorized, and estimating reads only the k counts.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from fractions import Fraction
from functools import cache
from typing import Any

import numpy as np

from ..errors import ReportError
from ..exact import PrivacyLoss, rational_exp_floor
from ..randomness import RandomSource, bernoulli, choice_except
from .base import MAX_OPTIONS, JointReading, reject_bool
from .pure import PureProtocol, SupportCounted

PRIME = 2**17 - 1  # a Mersenne prime above the largest allowed domain (65536 options)
SEEDS = PRIME**3
MAX_BUCKETS = 2**16  # beyond this, more buckets only add report size (g > k gains nothing)
_BLOCK = 1 << 16  # hash evaluations per vectorized block: small enough to stay in cache


def buckets(epsilon: float) -> int:
    """g = round(e^ε) + 1 (Wang et al.'s optimum), capped at 2^16."""
    if epsilon >= math.log(MAX_BUCKETS):
        return MAX_BUCKETS
    return min(round(math.exp(epsilon)) + 1, MAX_BUCKETS)


@cache
def bucket_moments(g: int) -> tuple[Fraction, Fraction]:
    """(Σ π_j^2, Σ π_j^3) for the bucket distribution of a uniform element of GF(P) mod g."""
    base, extra = divmod(PRIME, g)  # `extra` buckets hold base + 1 residues, the rest base
    sizes = ((base + 1, extra), (base, g - extra))
    c2 = Fraction(sum(m * s**2 for s, m in sizes), PRIME**2)
    c3 = Fraction(sum(m * s**3 for s, m in sizes), PRIME**3)
    return c2, c3


def hash_values(seeds: np.ndarray, values: np.ndarray, g: int) -> np.ndarray:
    """h_s(v) for every seed (rows) and value (columns), as an int64 array."""
    seeds = np.asarray(seeds, dtype=np.int64)[:, None]
    values = np.asarray(values, dtype=np.int64)[None, :]
    a0, a1, a2 = seeds % PRIME, (seeds // PRIME) % PRIME, seeds // PRIME**2
    # a2·(v^2 mod P) + a1·v + a0 < 2^35: no overflow in int64.
    return ((a2 * (values * values % PRIME) + a1 * values + a0) % PRIME) % g


def bucket_hits(reports: np.ndarray, values: np.ndarray, squares: np.ndarray, g: int,
                out: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """[h_s(v) == y] for a block of (seed, y) rows and all values, in float64 (the bulk
    decoder; `hash_values` is the integer reference).

    Exact: a0 + a1·v + a2·(v² mod P) < 2^35 is an integer float64 holds exactly. Adding 1/2
    puts X/P at least 1/(2P) from any integer, while float rounding moves it by < 2^-33, so
    floor((X + 1/2)/P) is the exact quotient; the same holds for the division by g. Floats
    because numpy's int64 division is several times slower than float multiply/floor.
    """
    rows = reports.shape[0]
    seeds = reports[:, 0]
    a0 = (seeds % PRIME).astype(np.float64)[:, None] + 0.5
    a1 = ((seeds // PRIME) % PRIME).astype(np.float64)[:, None]
    a2 = (seeds // PRIME**2).astype(np.float64)[:, None]
    x, t = out[:rows], scratch[:rows]
    np.multiply(a2, squares, out=x)
    np.multiply(a1, values, out=t)
    x += t
    x += a0  # X + 1/2
    np.multiply(x, 1.0 / PRIME, out=t)
    np.floor(t, out=t)
    t *= PRIME
    x -= t  # (X mod P) + 1/2
    np.multiply(x, 1.0 / g, out=t)
    np.floor(t, out=t)
    t *= g
    x -= t  # h + 1/2
    return x == reports[:, 1:2].astype(np.float64) + 0.5


def hash_one(seed: int, value: int, g: int) -> int:
    a0, a1, a2 = seed % PRIME, (seed // PRIME) % PRIME, seed // PRIME**2
    return ((a0 + a1 * value + a2 * value * value) % PRIME) % g


class LocalHashReports:
    """The [seed, bucket] report of local hashing, shared by OLH and PSFO-OLH (psfo_olh.py):
    an item hashed with a fresh seed into one of g buckets, the bucket kept with probability
    p_bucket; the aggregator's validation and support decoding. Needs `k`, `g`, `p_bucket`
    and `_values` (the k values whose support is counted) on the mechanism."""

    k: int
    g: int
    p_bucket: Fraction
    _values: np.ndarray

    def _hash_report(self, item: int, source: RandomSource) -> list[int]:
        seed = source.randbelow(SEEDS)
        bucket = hash_one(seed, item, self.g)
        if not bernoulli(self.p_bucket, source):
            bucket = choice_except(self.g, bucket, source)
        return [seed, bucket]

    def _hash_reports_many(self, items: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Simulation only (numpy generator): reports of many items at once."""
        items = np.asarray(items, dtype=np.int64)
        seeds = rng.integers(0, SEEDS, size=items.size, dtype=np.int64)
        a0, a1, a2 = seeds % PRIME, (seeds // PRIME) % PRIME, seeds // PRIME**2
        true_bucket = ((a0 + a1 * items + a2 * (items * items % PRIME)) % PRIME) % self.g
        keep = rng.random(items.size) < float(self.p_bucket)
        other = rng.integers(0, self.g - 1, size=items.size)
        other = other + (other >= true_bucket)
        return np.stack([seeds, np.where(keep, true_bucket, other)], axis=1)

    # --- the aggregator's side -------------------------------------------------------------

    def validate_report(self, report: Any) -> tuple[int, int]:
        if not isinstance(report, list | tuple) or len(report) != 2:
            raise ReportError("a local-hashing report is a list [seed, bucket]")
        seed, bucket = report
        for name, value, limit in (("seed", seed, SEEDS), ("bucket", bucket, self.g)):
            reject_bool(value, name)
            if not isinstance(value, int | np.integer):
                raise ReportError(f"{name} must be an integer, got {type(value).__name__}")
            if not 0 <= int(value) < limit:
                raise ReportError(f"{name} {int(value)} is outside [0, {limit})")
        return int(seed), int(bucket)

    def _supports(self, report: Any) -> np.ndarray:
        seed, bucket = report
        return np.flatnonzero(hash_values(np.array([seed]), self._values, self.g)[0] == bucket)

    def _supports_many(self, reports: Any) -> tuple[np.ndarray, int]:
        reports = np.asarray(reports, dtype=np.int64).reshape(-1, 2)
        counts = np.zeros(self.k, dtype=np.int64)
        for _, hits in self._hit_blocks(reports):
            counts += hits.sum(axis=0, dtype=np.int64)
        return counts, reports.shape[0]

    def _hit_blocks(self, reports: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
        """(first row, its block's (rows, k) 0/1 support matrix), block by block: the exact
        float64 decoder on a bounded scratch (the block is reused: copy what you keep)."""
        rows = max(1, _BLOCK // self.k)
        values = self._values.astype(np.float64)
        squares = (self._values * self._values % PRIME).astype(np.float64)
        out, scratch = np.empty((rows, self.k)), np.empty((rows, self.k))
        for start in range(0, reports.shape[0], rows):
            yield start, bucket_hits(reports[start:start + rows], values, squares, self.g, out,
                                     scratch)

    @property
    def report_width(self) -> int:
        return 2  # seed, bucket

    def support_bits(self, reports: Any) -> np.ndarray:
        """The (n, k) 0/1 float matrix of which values each report supports."""
        reports = np.asarray(reports, dtype=np.int64).reshape(-1, 2)
        bits = np.empty((reports.shape[0], self.k))
        for start, hits in self._hit_blocks(reports):
            bits[start:start + hits.shape[0]] = hits
        return bits


class OLH(LocalHashReports, SupportCounted, PureProtocol):
    name = "olh"
    question_types = frozenset({"categorical", "ordinal"})
    summary = "Optimized local hashing: a random hash of the answer into ~e^ε+1 buckets, then GRR."
    # The hash family needs the values to be distinct elements of GF(PRIME).
    max_options = min(MAX_OPTIONS, PRIME)
    joint_reports = JointReading.SUPPORT_BITS

    def __init__(self, epsilon: float, labels: Any, **kwargs: Any) -> None:
        super().__init__(epsilon, labels, **kwargs)
        self.g = buckets(self.epsilon)
        self.p_bucket, self.q_bucket = self._bucket_probabilities(self.epsilon, self.g)
        self.p_star, self.q_star = self._support(self.p_bucket, self.q_bucket, self.g)
        self._values = np.arange(self.k, dtype=np.int64)
        self._certify()

    @staticmethod
    def _bucket_probabilities(epsilon: float, g: int) -> tuple[Fraction, Fraction]:
        r = rational_exp_floor(epsilon)
        return r / (r + g - 1), 1 / (r + g - 1)

    @staticmethod
    def _support(p: Fraction, q: Fraction, g: int) -> tuple[Fraction, Fraction]:
        c2, _ = bucket_moments(g)
        return p, c2 * p + (1 - c2) * q

    @classmethod
    def support_probabilities(cls, k: int, epsilon: float) -> tuple[float, float]:
        g = buckets(epsilon)
        p, q = cls._support(*cls._bucket_probabilities(epsilon, g), g)
        return float(p), float(q)

    @classmethod
    def set_support_variances(cls, p: float, q: float, k: int, g: int) -> tuple[float, float]:
        # Let S_v = [h(v) = y], N = Σ_{v in G} S_v, hash range b (q* is within 2^-17 of 1/b, so
        # b = round(1/q*)). Buckets of distinct values are independent with distribution π.
        #   P[S_u S_v] for u, v != x:  t = Σ_j π_j^2 P[y = j] = p'·Σπ^3 + q'·(Σπ^2 - Σπ^3)
        #   P[S_x S_v] for v != x:     p'·Σπ^2  (y = h(x), then h(v) must hit the same bucket)
        # Var N = Σ Var S_v + Σ_{u != v} Cov: with the answer outside G all g supports have
        # P = q* and pairwise P[S_u S_v] = t; inside, S_x has P = p* = p' and g - 1 others.
        b = round(1 / q)
        c2, c3 = (float(x) for x in bucket_moments(b))
        q_bucket = (1 - p) / (b - 1)
        t = p * c3 + q_bucket * (c2 - c3)
        cov_out = t - q * q
        cov_x = p * c2 - p * q
        v_out = g * q * (1 - q) + g * (g - 1) * cov_out
        v_in = (p * (1 - p) + (g - 1) * q * (1 - q) + (g - 1) * (g - 2) * cov_out
                + 2 * (g - 1) * cov_x)
        return v_in, v_out

    @classmethod
    def report_bytes(cls, k: int, epsilon: float) -> int:
        return len(str(SEEDS - 1)) + len(str(buckets(epsilon) - 1)) + 3  # [seed,bucket]

    def params(self) -> dict[str, Any]:
        return {**super().params(), "buckets": self.g, "prime": PRIME,
                "hash": "((a0 + a1*v + a2*v^2) mod prime) mod buckets, seed = a0 + a1*prime "
                        "+ a2*prime^2"}

    def privacy_loss(self) -> PrivacyLoss | None:
        # Given the seed (independent of the answer), the bucket goes through GRR over g values.
        if self.p_bucket + (self.g - 1) * self.q_bucket != 1 or self.q_bucket <= 0:
            return None
        return PrivacyLoss(ratio=max(self.p_bucket / self.q_bucket,
                                     self.q_bucket / self.p_bucket))

    # --- the respondent's side -------------------------------------------------------------

    def perturb_index(self, index: int, source: RandomSource) -> list[int]:
        return self._hash_report(index, source)

    def perturb_many(self, answers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self._hash_reports_many(answers, rng)
