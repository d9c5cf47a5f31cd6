"""XofTurboShake128 of draft-irtf-cfrg-vdaf over pycryptodome's TurboSHAKE128 (RFC 9861).

`cryptography` has no TurboSHAKE, hence the pycryptodome dependency. The absorb-then-squeeze
API of pycryptodome gives the XOF's stream directly (no re-hashing per `next`).
"""

from __future__ import annotations

from Crypto.Hash import TurboSHAKE128
from ldpsurvey.shared.prio3.errors import ParameterError
from ldpsurvey.shared.prio3.field import Field

VERSION = 18  # the draft's VERSION constant, written into every domain separation tag


def format_dst(algo_class: int, algo: int, usage: int) -> bytes:
    """The draft's domain separation tag prefix: version, class, algorithm id, usage."""
    return (
        VERSION.to_bytes(1, "big")
        + algo_class.to_bytes(1, "big")
        + algo.to_bytes(4, "big")
        + usage.to_bytes(2, "big")
    )


class XofTurboShake128:
    """TurboSHAKE128 with domain byte 1 over len(dst) || dst || len(seed) || seed || binder."""

    SEED_SIZE = 32

    def __init__(self, seed: bytes, dst: bytes, binder: bytes) -> None:
        if len(seed) > 255:
            raise ParameterError("XofTurboShake128: a seed has at most 255 bytes")
        if len(dst) > 65535:
            raise ParameterError("XofTurboShake128: a dst has at most 65535 bytes")
        self._h = TurboSHAKE128.new(domain=1)
        self._h.update(len(dst).to_bytes(2, "little") + dst + bytes([len(seed)]) + seed + binder)

    def next(self, length: int) -> bytes:
        """The next `length` bytes of the output stream."""
        return self._h.read(length)

    def next_vec(self, field: type[Field], length: int) -> list[int]:
        """The next `length` field elements by masking and rejection sampling."""
        size, mask, p = field.ENCODED_SIZE, field.SAMPLE_MASK, field.MODULUS
        out: list[int] = []
        need = length
        while need > 0:
            buf = self._h.read(need * size)
            vals = [int.from_bytes(buf[i:i + size], "little") & mask
                    for i in range(0, len(buf), size)]
            out.extend(x for x in vals if x < p)
            need = length - len(out)
        return out

    @classmethod
    def derive_seed(cls, seed: bytes, dst: bytes, binder: bytes) -> bytes:
        """A fresh SEED_SIZE-byte seed."""
        return cls(seed, dst, binder).next(cls.SEED_SIZE)

    @classmethod
    def expand_into_vec(
        cls, field: type[Field], seed: bytes, dst: bytes, binder: bytes, length: int
    ) -> list[int]:
        """`length` field elements expanded from `seed`."""
        return cls(seed, dst, binder).next_vec(field, length)
