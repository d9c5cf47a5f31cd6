"""The NTT-friendly prime fields Field64 and Field128 of draft-irtf-cfrg-vdaf.

Elements are plain Python ints in [0, MODULUS): no per-element objects, exact arithmetic.
Each field class also carries the roots of unity and the number theoretic transform (NTT)
that the FLP uses to move polynomials between the Lagrange and the monomial basis.
"""

from __future__ import annotations

from itertools import repeat
from typing import ClassVar

from ldpsurvey.shared.prio3.errors import DecodeError


class Field:
    """A prime field: class constants and class methods only (elements are ints)."""

    MODULUS: ClassVar[int]
    ENCODED_SIZE: ClassVar[int]
    GEN_ORDER: ClassVar[int]
    GENERATOR: ClassVar[int]
    # next_power_of_2(MODULUS) - 1: the mask applied to XOF output before rejection sampling.
    SAMPLE_MASK: ClassVar[int]
    _roots: ClassVar[dict[int, list[int]]]

    @classmethod
    def encode_vec(cls, vec: list[int]) -> bytes:
        """Little-endian, ENCODED_SIZE bytes per element."""
        n = len(vec)
        return b"".join(map(int.to_bytes, vec, repeat(cls.ENCODED_SIZE, n), repeat("little", n)))

    @classmethod
    def decode_vec(cls, encoded: bytes) -> list[int]:
        """Parse a vector; refuse a ragged length or a value >= MODULUS (non-canonical)."""
        size = cls.ENCODED_SIZE
        if len(encoded) % size:
            raise DecodeError(
                f"{cls.__name__}: {len(encoded)} bytes is not a multiple of {size}"
            )
        p = cls.MODULUS
        vec = [int.from_bytes(encoded[i:i + size], "little") for i in range(0, len(encoded), size)]
        for x in vec:
            if x >= p:
                raise DecodeError(f"{cls.__name__}: encoded value is not below the modulus")
        return vec

    @classmethod
    def inv(cls, x: int) -> int:
        """Multiplicative inverse (x must be non-zero)."""
        return pow(x, -1, cls.MODULUS)

    @classmethod
    def nth_root(cls, n: int) -> int:
        """The principal n-th root of unity gen ** (GEN_ORDER // n), n a power of two."""
        if n < 1 or n & (n - 1) or n > cls.GEN_ORDER:
            raise ValueError(f"{n} is not a power of two up to the generator's order")
        return pow(cls.GENERATOR, cls.GEN_ORDER // n, cls.MODULUS)

    @classmethod
    def nth_root_powers(cls, n: int) -> list[int]:
        """[W_n ** i for i in range(n)], cached per n (read-only by convention)."""
        cached = cls._roots.get(n)
        if cached is None:
            w, p = cls.nth_root(n), cls.MODULUS
            cached = [1] * n
            for i in range(1, n):
                cached[i] = cached[i - 1] * w % p
            cls._roots[n] = cached
        return cached

    @classmethod
    def ntt(cls, coeffs: list[int], n: int, set_s: bool = False) -> list[int]:
        """Evaluations of the polynomial `coeffs` at W_n ** i (or s * W_n ** i, s = W_2n)."""
        p = cls.MODULUS
        a = list(coeffs) + [0] * (n - len(coeffs))
        if set_s:
            s_powers = cls.nth_root_powers(2 * n)
            a = [a[j] * s_powers[j] % p for j in range(n)]
        return _transform(a, cls.nth_root_powers(n), p, inverse=False)

    @classmethod
    def inv_ntt(cls, values: list[int], n: int) -> list[int]:
        """Coefficients of the polynomial whose values at W_n ** i are `values`."""
        p = cls.MODULUS
        out = _transform(list(values), cls.nth_root_powers(n), p, inverse=True)
        n_inv = pow(n, -1, p)
        return [x * n_inv % p for x in out]


def _transform(a: list[int], roots: list[int], p: int, inverse: bool) -> list[int]:
    """Iterative radix-2 NTT of len(a) == len(roots) (inverse: with W ** -1, unscaled)."""
    n = len(a)
    if n == 1:
        return a
    # Bit-reversal permutation.
    j = 0
    for i in range(1, n):
        bit = n >> 1
        while j & bit:
            j ^= bit
            bit >>= 1
        j |= bit
        if i < j:
            a[i], a[j] = a[j], a[i]
    length = 2
    while length <= n:
        half = length >> 1
        step = n // length
        if inverse:
            ws = [roots[(n - k * step) % n] for k in range(half)]
        else:
            ws = [roots[k * step] for k in range(half)]
        for start in range(0, n, length):
            for k in range(half):
                u = a[start + k]
                v = a[start + k + half] * ws[k] % p
                a[start + k] = (u + v) % p
                a[start + k + half] = (u - v) % p
        length <<= 1
    return a


class Field64(Field):
    """p = 2**32 * 4294967295 + 1, generator 7**4294967295 of order 2**32."""

    MODULUS = 2**32 * 4294967295 + 1
    ENCODED_SIZE = 8
    GEN_ORDER = 2**32
    GENERATOR = pow(7, 4294967295, MODULUS)
    SAMPLE_MASK = 2**64 - 1
    _roots: ClassVar[dict[int, list[int]]] = {}


class Field128(Field):
    """p = 2**66 * 4611686018427387897 + 1, generator 7**4611686018427387897 of order 2**66."""

    MODULUS = 2**66 * 4611686018427387897 + 1
    ENCODED_SIZE = 16
    GEN_ORDER = 2**66
    GENERATOR = pow(7, 4611686018427387897, MODULUS)
    SAMPLE_MASK = 2**128 - 1
    _roots: ClassVar[dict[int, list[int]]] = {}
