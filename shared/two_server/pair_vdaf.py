"""Two Prio3 reports under one key: a pair of standard Prio3 instances measured together.

Two measurements of one answer are sent under the question's one key, each with the proof that
fits it (`Prio3Pair`):

- a hidden integer question (skip logic) whose device runs asked_geometric at ε0 sends [b, y],
  an asked bit and a noisy number (shared/mechanisms/asked_geometric.py): Prio3Count of b (the
  proof checks b is 0 or 1), then Prio3Sum of y clipped to [lo, lo + R] and offset to [0, R]
  (the proof checks the range), R and lo as for a local geometric report
  (encoding.clip_bounds) (`AskedPairPrio3`);
- a number on a grid whose distribution and mean are both asked (a decimal's
  `["mean", "distribution"]`, or a hidden one's mean: shared/two_server/fixed_point.py) sends
  [bin, j]: Prio3Histogram of its bin index (the proof checks one-hot), then Prio3SumVec of
  length 1 of its grid index j (the proof checks j in [0, k - 1]) (`HistogramSumPrio3`); both
  over Field128, so the output share is one vector mod one prime.

On the wire each part is Prio3 as draft-irtf-cfrg-vdaf-20 specifies it, with the same nonce
(the report id) and the same application context (the key's): the public share, each input
share, each prep share and the prep message are the first's bytes followed by the second's
(all have fixed lengths; Count and Sum use no joint randomness, so their public shares and prep
messages are empty); `rand` is the first's bytes followed by the second's. The two circuits
have different VDAF ids, so their XOF derivations are separated although nonce and context are
shared.

Each server's output share is [scale·first's share, second's share]: the servers multiply the
first measurement's shares by the integer `scale` before aggregating, so that one noise rate λ
on every coordinate (the key's one NoisePlan, sensitivity scale·Δ1 + Δ2) is the noise at
λ·scale on the first and λ on the second: the central ε split between the two measurements
(shared/two_server/asked_pair.py and fixed_point.py choose it).
"""

from __future__ import annotations

from typing import Any

from ..prio3 import best_chunk_length, prio3_count, prio3_histogram, prio3_sum, prio3_sumvec
from ..prio3.errors import DecodeError, MeasurementError


def _public_len(prio3: Any) -> int:
    return prio3.xof.SEED_SIZE * prio3.SHARES if prio3.flp.JOINT_RAND_LEN else 0


def _blind_len(prio3: Any) -> int:
    return prio3.xof.SEED_SIZE if prio3.flp.JOINT_RAND_LEN else 0


def _input_len(prio3: Any, agg_id: int) -> int:
    if agg_id == 0:
        elements = prio3.flp.MEAS_LEN + prio3.flp.PROOF_LEN * prio3.PROOFS
        return elements * prio3.field.ENCODED_SIZE + _blind_len(prio3)
    return prio3.xof.SEED_SIZE + _blind_len(prio3)


def _prep_share_len(prio3: Any) -> int:
    return prio3.flp.VERIFIER_LEN * prio3.PROOFS * prio3.field.ENCODED_SIZE + _blind_len(prio3)


def _split(encoded: bytes, first: int, total: int, what: str) -> tuple[bytes, bytes]:
    if len(encoded) != total:
        raise DecodeError(f"{what} has {total} bytes")
    return encoded[:first], encoded[first:]


class Prio3Pair:
    """Two Prio3 instances over one field as one key's VDAF (the interface
    shared/two_server/vdaf.py calls; module docstring): `first` scaled by `scale`, then
    `second`."""

    NONCE_SIZE = 16

    def __init__(self, first: Any, second: Any, scale: int, name: str) -> None:
        if not isinstance(scale, int) or scale < 1:
            raise ValueError("the first measurement's scale must be a positive integer")
        assert first.field.MODULUS == second.field.MODULUS  # one output vector mod one prime
        assert first.VERIFY_KEY_SIZE == second.VERIFY_KEY_SIZE
        self.first, self.second = first, second
        self.field = first.field
        self.scale = scale
        self.name = name
        self.VERIFY_KEY_SIZE = first.VERIFY_KEY_SIZE
        self.RAND_SIZE = first.RAND_SIZE + second.RAND_SIZE

    # --- the client -----------------------------------------------------------------------------

    def shard(self, ctx: bytes, measurement: Any, nonce: bytes, rand: bytes) -> Any:
        if not isinstance(measurement, list | tuple) or len(measurement) != 2:
            raise MeasurementError(f"a {self.name} measurement is a pair [first, second]")
        cut = self.first.RAND_SIZE
        public_a, shares_a = self.first.shard(ctx, measurement[0], nonce, rand[:cut])
        public_b, shares_b = self.second.shard(ctx, measurement[1], nonce, rand[cut:])
        return (public_a, public_b), [(shares_a[i], shares_b[i]) for i in range(2)]

    def encode_public_share(self, public: Any) -> bytes:
        return (self.first.encode_public_share(public[0])
                + self.second.encode_public_share(public[1]))

    def encode_input_share(self, agg_id: int, share: Any) -> bytes:
        return (self.first.encode_input_share(agg_id, share[0])
                + self.second.encode_input_share(agg_id, share[1]))

    # --- the servers ----------------------------------------------------------------------------

    def decode_public_share(self, encoded: bytes) -> Any:
        cut = _public_len(self.first)
        a, b = _split(encoded, cut, cut + _public_len(self.second), "a public share")
        return self.first.decode_public_share(a), self.second.decode_public_share(b)

    def decode_input_share(self, agg_id: int, encoded: bytes) -> Any:
        cut = _input_len(self.first, agg_id)
        a, b = _split(encoded, cut, cut + _input_len(self.second, agg_id), "an input share")
        return (self.first.decode_input_share(agg_id, a),
                self.second.decode_input_share(agg_id, b))

    def prep_init(self, verify_key: bytes, ctx: bytes, agg_id: int, agg_param: None,
                  nonce: bytes, public: Any, share: Any) -> tuple[Any, Any]:
        state_a, prep_a = self.first.prep_init(verify_key, ctx, agg_id, agg_param, nonce,
                                               public[0], share[0])
        state_b, prep_b = self.second.prep_init(verify_key, ctx, agg_id, agg_param, nonce,
                                                public[1], share[1])
        return (state_a, state_b), (prep_a, prep_b)

    def encode_prep_share(self, prep_share: Any) -> bytes:
        return (self.first.encode_prep_share(prep_share[0])
                + self.second.encode_prep_share(prep_share[1]))

    def decode_prep_share(self, encoded: bytes) -> Any:
        cut = _prep_share_len(self.first)
        a, b = _split(encoded, cut, cut + _prep_share_len(self.second), "a prep share")
        return self.first.decode_prep_share(a), self.second.decode_prep_share(b)

    def prep_shares_to_prep(self, ctx: bytes, agg_param: None, prep_shares: list[Any]) -> Any:
        return (self.first.prep_shares_to_prep(ctx, agg_param, [s[0] for s in prep_shares]),
                self.second.prep_shares_to_prep(ctx, agg_param, [s[1] for s in prep_shares]))

    def encode_prep_msg(self, prep_msg: Any) -> bytes:
        return self.first.encode_prep_msg(prep_msg[0]) + self.second.encode_prep_msg(prep_msg[1])

    def decode_prep_msg(self, encoded: bytes) -> Any:
        cut = _blind_len(self.first)
        a, b = _split(encoded, cut, cut + _blind_len(self.second), "a prep message")
        return self.first.decode_prep_msg(a), self.second.decode_prep_msg(b)

    def prep_next(self, ctx: bytes, state: Any, prep_msg: Any) -> list[int]:
        """[scale · this server's share of the first, its share of the second]."""
        first = self.first.prep_next(ctx, state[0], prep_msg[0])
        second = self.second.prep_next(ctx, state[1], prep_msg[1])
        return [x * self.scale % self.field.MODULUS for x in first] + list(second)


class AskedPairPrio3(Prio3Pair):
    """Prio3Count of the asked bit and Prio3Sum(max_measurement) of the clipped number
    (`bit`, `number`)."""

    def __init__(self, max_measurement: int, scale: int) -> None:
        super().__init__(prio3_count(), prio3_sum(max_measurement), scale, "Prio3Count+Prio3Sum")
        self.bit, self.number = self.first, self.second


class HistogramSumPrio3(Prio3Pair):
    """Prio3Histogram(cells) of a bin index and Prio3SumVec(length 1, max_measurement) of a
    grid index (`histogram`, `sum`), both with the chunk length of the shortest proof."""

    def __init__(self, cells: int, max_measurement: int, scale: int) -> None:
        histogram = prio3_histogram(cells, best_chunk_length(cells))
        total = prio3_sumvec(1, None, best_chunk_length(max_measurement.bit_length()),
                             max_measurement=max_measurement)
        super().__init__(histogram, total, scale, "Prio3Histogram+Prio3SumVec")
        self.histogram, self.sum = self.first, self.second
