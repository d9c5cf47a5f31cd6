"""Two Prio3 reports under one key: the report pair of an integer follow-up with a local ε0.

A hidden integer question (skip logic) whose device runs asked_geometric at ε0 sends a pair
[b, y]: an asked bit and a noisy number (shared/mechanisms/asked_geometric.py). Both are
measured, each with the proof that fits it, under the question's one key:

- Prio3Count of the bit b (the servers' proof checks b is 0 or 1), then
- Prio3Sum of the number clipped to [lo, lo + R] and offset to [0, R] (the proof checks the
  range), R and lo as for a local geometric report (encoding.clip_bounds).

On the wire each part is Prio3 as draft-irtf-cfrg-vdaf-20 specifies it, with the same nonce
(the report id) and the same application context (the key's): the public share, each input
share, each prep share and the prep message are the Count's bytes followed by the Sum's (both
have fixed lengths; neither uses joint randomness, so public shares and prep messages are
empty); `rand` is the Count's bytes followed by the Sum's. The two circuits have different
VDAF ids, so their XOF derivations are separated although nonce and context are shared.

Each server's output share is [scale·b-share, y-share]: the servers multiply the bit's share by
the integer `scale` before aggregating, so that one noise rate λ on both coordinates (the key's
one NoisePlan, sensitivity scale + R) is the noise at λ·scale on the bit and λ on the number:
the central ε split between the two measurements (shared/two_server/asked_pair.py chooses it).
"""

from __future__ import annotations

from typing import Any

from ..prio3 import prio3_count, prio3_sum
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


class AskedPairPrio3:
    """Prio3Count of the asked bit and Prio3Sum(max_measurement) of the clipped number, as one
    key's VDAF (the interface shared/two_server/vdaf.py calls; module docstring)."""

    NONCE_SIZE = 16

    def __init__(self, max_measurement: int, scale: int) -> None:
        if not isinstance(scale, int) or scale < 1:
            raise ValueError("the bit's scale must be a positive integer")
        self.bit, self.number = prio3_count(), prio3_sum(max_measurement)
        assert self.bit.field.MODULUS == self.number.field.MODULUS  # both Field64
        assert self.bit.VERIFY_KEY_SIZE == self.number.VERIFY_KEY_SIZE
        self.field = self.bit.field
        self.scale = scale
        self.name = "Prio3Count+Prio3Sum"
        self.VERIFY_KEY_SIZE = self.bit.VERIFY_KEY_SIZE
        self.RAND_SIZE = self.bit.RAND_SIZE + self.number.RAND_SIZE

    # --- the client -----------------------------------------------------------------------------

    def shard(self, ctx: bytes, measurement: Any, nonce: bytes, rand: bytes) -> Any:
        if not isinstance(measurement, list | tuple) or len(measurement) != 2:
            raise MeasurementError("an asked pair is [bit, clipped number - its low end]")
        cut = self.bit.RAND_SIZE
        public_b, shares_b = self.bit.shard(ctx, measurement[0], nonce, rand[:cut])
        public_y, shares_y = self.number.shard(ctx, measurement[1], nonce, rand[cut:])
        return (public_b, public_y), [(shares_b[i], shares_y[i]) for i in range(2)]

    def encode_public_share(self, public: Any) -> bytes:
        return (self.bit.encode_public_share(public[0])
                + self.number.encode_public_share(public[1]))

    def encode_input_share(self, agg_id: int, share: Any) -> bytes:
        return (self.bit.encode_input_share(agg_id, share[0])
                + self.number.encode_input_share(agg_id, share[1]))

    # --- the servers ----------------------------------------------------------------------------

    def decode_public_share(self, encoded: bytes) -> Any:
        first = _public_len(self.bit)
        a, b = _split(encoded, first, first + _public_len(self.number), "a public share")
        return self.bit.decode_public_share(a), self.number.decode_public_share(b)

    def decode_input_share(self, agg_id: int, encoded: bytes) -> Any:
        first = _input_len(self.bit, agg_id)
        a, b = _split(encoded, first, first + _input_len(self.number, agg_id),
                      "an input share")
        return (self.bit.decode_input_share(agg_id, a),
                self.number.decode_input_share(agg_id, b))

    def prep_init(self, verify_key: bytes, ctx: bytes, agg_id: int, agg_param: None,
                  nonce: bytes, public: Any, share: Any) -> tuple[Any, Any]:
        state_b, prep_b = self.bit.prep_init(verify_key, ctx, agg_id, agg_param, nonce,
                                             public[0], share[0])
        state_y, prep_y = self.number.prep_init(verify_key, ctx, agg_id, agg_param, nonce,
                                                public[1], share[1])
        return (state_b, state_y), (prep_b, prep_y)

    def encode_prep_share(self, prep_share: Any) -> bytes:
        return (self.bit.encode_prep_share(prep_share[0])
                + self.number.encode_prep_share(prep_share[1]))

    def decode_prep_share(self, encoded: bytes) -> Any:
        first = _prep_share_len(self.bit)
        a, b = _split(encoded, first, first + _prep_share_len(self.number), "a prep share")
        return self.bit.decode_prep_share(a), self.number.decode_prep_share(b)

    def prep_shares_to_prep(self, ctx: bytes, agg_param: None, prep_shares: list[Any]) -> Any:
        return (self.bit.prep_shares_to_prep(ctx, agg_param, [s[0] for s in prep_shares]),
                self.number.prep_shares_to_prep(ctx, agg_param, [s[1] for s in prep_shares]))

    def encode_prep_msg(self, prep_msg: Any) -> bytes:
        return self.bit.encode_prep_msg(prep_msg[0]) + self.number.encode_prep_msg(prep_msg[1])

    def decode_prep_msg(self, encoded: bytes) -> Any:
        first = _blind_len(self.bit)
        a, b = _split(encoded, first, first + _blind_len(self.number), "a prep message")
        return self.bit.decode_prep_msg(a), self.number.decode_prep_msg(b)

    def prep_next(self, ctx: bytes, state: Any, prep_msg: Any) -> list[int]:
        """[scale · this server's share of the bit, its share of the number]."""
        (bit,) = self.bit.prep_next(ctx, state[0], prep_msg[0])
        (number,) = self.number.prep_next(ctx, state[1], prep_msg[1])
        return [bit * self.scale % self.field.MODULUS, number]
