"""Validity circuits of draft-irtf-cfrg-vdaf: Count, Sum, SumVec, Histogram, MultihotCountVec.

A circuit evaluates on a measurement (or a share of one) and calls its gadgets through the
`gadgets` callables the FLP passes in (the prover records wires and evaluates; the verifier
records wires and reads the gadget polynomial), so the same code serves both sides.
Measurements are checked here (MeasurementError) before anything is sharded.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from ldpsurvey.shared.prio3.errors import MeasurementError, ParameterError
from ldpsurvey.shared.prio3.field import Field
from ldpsurvey.shared.prio3.gadgets import Gadget, Mul, ParallelSum, PolyEval

GadgetCall = Callable[[list[int]], int]


def _plain_int(value: Any, what: str) -> int:
    """An exact integer (numpy integers too); bools, floats and strings are refused."""
    if isinstance(value, bool):
        raise MeasurementError(f"{what} must be an integer, got a bool")
    try:
        return operator.index(value)
    except TypeError:
        raise MeasurementError(
            f"{what} must be an integer, got {type(value).__name__}"
        ) from None


class Valid:
    """Interface of a validity circuit (see the draft's `Valid`)."""

    field: type[Field]
    GADGETS: list[Gadget]
    GADGET_CALLS: list[int]
    MEAS_LEN: int
    JOINT_RAND_LEN: int
    EVAL_OUTPUT_LEN: int
    OUTPUT_LEN: int

    def encode(self, measurement: Any) -> list[int]:
        raise NotImplementedError

    def eval(self, meas: list[int], joint_rand: list[int], num_shares: int,
             gadgets: list[GadgetCall]) -> list[int]:
        raise NotImplementedError

    def truncate(self, meas: list[int]) -> list[int]:
        return meas

    def decode(self, output: list[int], num_measurements: int) -> Any:
        return list(output)

    def prove_rand_len(self) -> int:
        return sum(g.ARITY for g in self.GADGETS)

    def query_rand_len(self) -> int:
        n = len(self.GADGETS)
        return n + self.EVAL_OUTPUT_LEN if self.EVAL_OUTPUT_LEN > 1 else n


# --- range-checked integers (the draft's modified bit decomposition) -----------------------

def range_weights(max_measurement: int) -> list[int]:
    """Weights 1, 2, 4, ..., and a last one so that all weights sum to max_measurement."""
    bits = max_measurement.bit_length()
    rest = 2 ** (bits - 1) - 1
    return [1 << i for i in range(bits - 1)] + [max_measurement - rest]


def encode_range_checked_int(value: int, max_measurement: int) -> list[int]:
    """0/1 vector whose weighted sum (range_weights) is value, for 0 <= value <= max."""
    if not 0 <= value <= max_measurement:
        raise MeasurementError(f"measurement {value} is outside [0, {max_measurement}]")
    bits = max_measurement.bit_length()
    rest_all_ones = 2 ** (bits - 1) - 1
    if value <= rest_all_ones:
        rest, last = value, 0
    else:
        rest, last = value - (max_measurement - rest_all_ones), 1
    return [(rest >> i) & 1 for i in range(bits - 1)] + [last]


def decode_range_checked_int(p: int, encoded: list[int], weights: list[int]) -> int:
    """Weighted sum of a (share of an) encoding; linear, so it also maps shares to shares."""
    return sum(map(int.__mul__, encoded, weights)) % p


# --- circuits ------------------------------------------------------------------------------

class Count(Valid):
    """0 or 1: Mul(x, x) - x == 0."""

    MEAS_LEN = 1
    JOINT_RAND_LEN = 0
    EVAL_OUTPUT_LEN = 1
    OUTPUT_LEN = 1

    def __init__(self, field: type[Field]) -> None:
        self.field = field
        self.GADGETS = [Mul()]
        self.GADGET_CALLS = [1]

    def encode(self, measurement: Any) -> list[int]:
        value = int(measurement) if isinstance(measurement, bool) else _plain_int(measurement,
                                                                                  "a count")
        if value not in (0, 1):
            raise MeasurementError(f"a count is 0 or 1 (or a bool), got {measurement!r}")
        return [value]

    def eval(self, meas, joint_rand, num_shares, gadgets):
        return [(gadgets[0]([meas[0], meas[0]]) - meas[0]) % self.field.MODULUS]

    def decode(self, output: list[int], num_measurements: int) -> int:
        return output[0]


class Sum(Valid):
    """An integer in [0, max_measurement], bit-decomposed; PolyEval(x**2 - x) on each bit."""

    JOINT_RAND_LEN = 0
    OUTPUT_LEN = 1

    def __init__(self, field: type[Field], max_measurement: int) -> None:
        if not 0 < max_measurement < field.MODULUS:
            raise ParameterError("Sum: max_measurement must be in [1, MODULUS)")
        self.field = field
        self.max_measurement = max_measurement
        self.bits = max_measurement.bit_length()
        self.weights = range_weights(max_measurement)
        self.GADGETS = [PolyEval([0, -1, 1], self.bits)]
        self.GADGET_CALLS = [self.bits]
        self.MEAS_LEN = self.bits
        self.EVAL_OUTPUT_LEN = self.bits

    def encode(self, measurement: Any) -> list[int]:
        return encode_range_checked_int(_plain_int(measurement, "a sum"), self.max_measurement)

    def eval(self, meas, joint_rand, num_shares, gadgets):
        g = gadgets[0]
        return [g([b]) for b in meas]

    def truncate(self, meas: list[int]) -> list[int]:
        return [decode_range_checked_int(self.field.MODULUS, meas, self.weights)]

    def decode(self, output: list[int], num_measurements: int) -> int:
        return output[0]


def _chunked_range_check(
    field: type[Field], chunk_length: int, calls: int, meas: list[int],
    joint_rand: list[int], shares_inv: int, gadget: GadgetCall,
) -> int:
    """sum over chunks of ParallelSum(Mul): r**j * x_j * (x_j - 1/shares), x padded with 0."""
    p = field.MODULUS
    total = 0
    padded = list(meas) + [0] * (calls * chunk_length - len(meas))
    inputs = [0] * (2 * chunk_length)
    for i in range(calls):
        r = joint_rand[i]
        powers = [r] * chunk_length
        for j in range(1, chunk_length):
            powers[j] = powers[j - 1] * r % p
        chunk = padded[i * chunk_length:(i + 1) * chunk_length]
        inputs[0::2] = [rp * x % p for rp, x in zip(powers, chunk, strict=True)]
        inputs[1::2] = [(x - shares_inv) % p for x in chunk]
        total += gadget(inputs)
    return total % p


class _ChunkedCircuit(Valid):
    """Shared set-up of the circuits that range-check with ParallelSum(Mul, chunk_length)."""

    def _setup(self, field: type[Field], meas_len: int, chunk_length: int) -> None:
        if chunk_length < 1:
            raise ParameterError("chunk_length must be at least 1")
        self.field = field
        self.chunk_length = chunk_length
        self.GADGETS = [ParallelSum(Mul(), chunk_length)]
        self.GADGET_CALLS = [(meas_len + chunk_length - 1) // chunk_length]
        self.MEAS_LEN = meas_len
        self.JOINT_RAND_LEN = self.GADGET_CALLS[0]

    def _range_check(self, meas, joint_rand, num_shares, gadgets) -> tuple[int, int]:
        shares_inv = self.field.inv(num_shares)
        return _chunked_range_check(self.field, self.chunk_length, self.GADGET_CALLS[0], meas,
                                    joint_rand, shares_inv, gadgets[0]), shares_inv


class SumVec(_ChunkedCircuit):
    """`length` integers each in [0, max_measurement], bit-decomposed and range-checked."""

    EVAL_OUTPUT_LEN = 1

    def __init__(self, field: type[Field], length: int, max_measurement: int,
                 chunk_length: int) -> None:
        if length < 1 or not 0 < max_measurement < field.MODULUS:
            raise ParameterError("SumVec: length >= 1 and max_measurement in [1, MODULUS)")
        self.length = length
        self.max_measurement = max_measurement
        self.bits = max_measurement.bit_length()
        self.weights = range_weights(max_measurement)
        self.OUTPUT_LEN = length
        self._setup(field, length * self.bits, chunk_length)

    def encode(self, measurement: Any) -> list[int]:
        if not isinstance(measurement, list | tuple) or len(measurement) != self.length:
            raise MeasurementError(f"a sum vector is a list of {self.length} integers")
        out: list[int] = []
        for v in measurement:
            out += encode_range_checked_int(_plain_int(v, "a sum vector entry"),
                                            self.max_measurement)
        return out

    def eval(self, meas, joint_rand, num_shares, gadgets):
        return [self._range_check(meas, joint_rand, num_shares, gadgets)[0]]

    def truncate(self, meas: list[int]) -> list[int]:
        b, p = self.bits, self.field.MODULUS
        return [decode_range_checked_int(p, meas[i * b:(i + 1) * b], self.weights)
                for i in range(self.length)]


class Histogram(_ChunkedCircuit):
    """One-hot vector of `length` buckets: each entry 0/1 and the entries sum to 1."""

    EVAL_OUTPUT_LEN = 2

    def __init__(self, field: type[Field], length: int, chunk_length: int) -> None:
        if length < 1:
            raise ParameterError("Histogram: length must be at least 1")
        self.length = length
        self.OUTPUT_LEN = length
        self._setup(field, length, chunk_length)

    def encode(self, measurement: Any) -> list[int]:
        index = _plain_int(measurement, "a histogram bucket")
        if not 0 <= index < self.length:
            raise MeasurementError(f"bucket {index} is outside [0, {self.length})")
        out = [0] * self.length
        out[index] = 1
        return out

    def eval(self, meas, joint_rand, num_shares, gadgets):
        range_check, shares_inv = self._range_check(meas, joint_rand, num_shares, gadgets)
        return [range_check, (sum(meas) - shares_inv) % self.field.MODULUS]


class MultihotCountVec(_ChunkedCircuit):
    """0/1 vector of `length` entries with at most `max_weight` ones (weight bit-encoded)."""

    EVAL_OUTPUT_LEN = 2

    def __init__(self, field: type[Field], length: int, max_weight: int,
                 chunk_length: int) -> None:
        if length < 1 or not 0 < max_weight <= length or length >= field.MODULUS:
            raise ParameterError("MultihotCountVec: need 0 < max_weight <= length")
        self.length = length
        self.max_weight = max_weight
        self.weights = range_weights(max_weight)
        self.OUTPUT_LEN = length
        self._setup(field, length + max_weight.bit_length(), chunk_length)

    def encode(self, measurement: Any) -> list[int]:
        if not isinstance(measurement, list | tuple) or len(measurement) != self.length:
            raise MeasurementError(f"a multi-hot vector is a list of {self.length} booleans")
        counts = [int(v) if isinstance(v, bool) else _plain_int(v, "a multi-hot entry")
                  for v in measurement]
        if any(v not in (0, 1) for v in counts):
            raise MeasurementError("a multi-hot vector holds only 0/1 (or booleans)")
        return counts + encode_range_checked_int(sum(counts), self.max_weight)

    def eval(self, meas, joint_rand, num_shares, gadgets):
        range_check, _ = self._range_check(meas, joint_rand, num_shares, gadgets)
        p = self.field.MODULUS
        weight = sum(meas[:self.length])
        reported = decode_range_checked_int(p, meas[self.length:], self.weights)
        return [range_check, (weight - reported) % p]

    def truncate(self, meas: list[int]) -> list[int]:
        return meas[:self.length]
