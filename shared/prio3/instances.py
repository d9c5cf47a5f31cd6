"""The Prio3 instances of draft-irtf-cfrg-vdaf-20 with their codepoints."""

from __future__ import annotations

from ldpsurvey.shared.prio3.circuits import Count, Histogram, MultihotCountVec, Sum, SumVec
from ldpsurvey.shared.prio3.errors import ParameterError
from ldpsurvey.shared.prio3.field import Field, Field64, Field128
from ldpsurvey.shared.prio3.vdaf import Prio3

PRIO3_COUNT_ID = 0x00000001
PRIO3_SUM_ID = 0x00000002
PRIO3_SUMVEC_ID = 0x00000003
PRIO3_HISTOGRAM_ID = 0x00000004
PRIO3_MULTIHOT_COUNTVEC_ID = 0x00000005
# The draft's test-only codepoint for SumVec over a chosen field with several proofs.
PRIO3_SUMVEC_MULTIPROOF_ID = 0xFFFFFFFF


def prio3_count(*, shares: int = 2) -> Prio3:
    """Prio3Count: a 0/1 measurement, Field64."""
    return Prio3(PRIO3_COUNT_ID, Count(Field64), shares=shares, name="Prio3Count")


def prio3_sum(max_measurement: int, *, shares: int = 2) -> Prio3:
    """Prio3Sum: an integer in [0, max_measurement], Field64."""
    return Prio3(PRIO3_SUM_ID, Sum(Field64, max_measurement), shares=shares, name="Prio3Sum")


def prio3_histogram(length: int, chunk_length: int, *, shares: int = 2) -> Prio3:
    """Prio3Histogram: a bucket index in [0, length), Field128."""
    return Prio3(PRIO3_HISTOGRAM_ID, Histogram(Field128, length, chunk_length), shares=shares,
                 name="Prio3Histogram")


def prio3_sumvec(length: int, bits: int | None, chunk_length: int, *,
                 max_measurement: int | None = None, shares: int = 2) -> Prio3:
    """Prio3SumVec: `length` integers, each in [0, 2**bits) or [0, max_measurement], Field128.

    Draft-20 parameterizes SumVec by max_measurement; `bits` (the contract's parameter) is
    the special case max_measurement = 2**bits - 1. Give exactly one of them.
    """
    return Prio3(PRIO3_SUMVEC_ID,
                 SumVec(Field128, length, _max_of(bits, max_measurement), chunk_length),
                 shares=shares, name="Prio3SumVec")


def prio3_sumvec_multiproof(field: type[Field], proofs: int, length: int, max_measurement: int,
                            chunk_length: int, *, shares: int = 2) -> Prio3:
    """The draft's Prio3SumVecWithMultiproof (test codepoint 0xFFFFFFFF)."""
    return Prio3(PRIO3_SUMVEC_MULTIPROOF_ID,
                 SumVec(field, length, max_measurement, chunk_length),
                 shares=shares, proofs=proofs, name="Prio3SumVecWithMultiproof")


def prio3_multihot_countvec(length: int, max_weight: int, chunk_length: int, *,
                            shares: int = 2) -> Prio3:
    """Prio3MultihotCountVec: `length` booleans with at most max_weight set, Field128."""
    return Prio3(PRIO3_MULTIHOT_COUNTVEC_ID,
                 MultihotCountVec(Field128, length, max_weight, chunk_length),
                 shares=shares, name="Prio3MultihotCountVec")


def _max_of(bits: int | None, max_measurement: int | None) -> int:
    if (bits is None) == (max_measurement is None):
        raise ParameterError("give exactly one of bits and max_measurement")
    if bits is not None:
        if bits < 1:
            raise ParameterError("bits must be at least 1")
        return 2**bits - 1
    assert max_measurement is not None
    return max_measurement


def best_chunk_length(meas_len: int) -> int:
    """The ParallelSum chunk length giving the shortest proof for `meas_len` range checks.

    Proof length is 2 * chunk (wire seeds) + 2 * (p - 1) + 1 (gadget polynomial) with
    p = next power of two >= 1 + ceil(meas_len / chunk); ties go to the smaller chunk. The draft
    recommends a value near sqrt(meas_len) and says the best one is found by trial, as here.
    """
    if meas_len < 1:
        raise ParameterError("meas_len must be at least 1")

    def proof_len(chunk: int) -> int:
        calls = -(-meas_len // chunk)
        p = 1 << calls.bit_length()  # next power of two >= 1 + calls
        return 2 * chunk + 2 * (p - 1) + 1

    return min(range(1, meas_len + 1), key=lambda c: (proof_len(c), c))
