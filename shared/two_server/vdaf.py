"""The one place that calls `ldpsurvey.shared.prio3` (the prio3 engineer's library).

Every Prio3 message crosses HTTP as bytes; this module turns them into the library's objects
and back, so the client, the leader and the helper share one adapter (and one place to change
if the library's names move). One round of preparation (Prio3 has one): each server runs
`prep_init` on its input share, the helper combines both prep shares into the prep message
(a failed proof raises VerifyError: the report is rejected), both run `prep_next` to get the
output share they add to their aggregate share.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import Any

from .encoding import Encoding

LEADER, HELPER = 0, 1


@dataclass(frozen=True)
class Shards:
    public_share: bytes
    input_shares: tuple[bytes, bytes]


def instance(encoding: Encoding) -> Any:
    """The Prio3 instance of an encoding (built once per encoding: circuits are not free)."""
    return _instance(encoding.kind, encoding.length, encoding.max_measurement, encoding.scale)


@functools.lru_cache(maxsize=1024)
def _instance(kind: str, length: int, max_measurement: int, scale: int = 1) -> Any:
    return Encoding("", kind, length, max_measurement, scale=scale).vdaf()


def shard(encoding: Encoding, ctx: bytes, measurement: int, nonce: bytes) -> Shards:
    """Split a measurement into two input shares with its proof; randomness from os.urandom."""
    vdaf = instance(encoding)
    public, shares = vdaf.shard(ctx, measurement, nonce, os.urandom(vdaf.RAND_SIZE))
    return Shards(vdaf.encode_public_share(public),
                  (vdaf.encode_input_share(LEADER, shares[0]),
                   vdaf.encode_input_share(HELPER, shares[1])))


def prep_init(encoding: Encoding, verify_key: bytes, ctx: bytes, agg_id: int, nonce: bytes,
              public_share: bytes, input_share: bytes) -> tuple[Any, bytes]:
    """(prep state, encoded prep share); DecodeError on a malformed share."""
    vdaf = instance(encoding)
    public = vdaf.decode_public_share(public_share)
    share = vdaf.decode_input_share(agg_id, input_share)
    state, prep_share = vdaf.prep_init(verify_key, ctx, agg_id, None, nonce, public, share)
    return state, vdaf.encode_prep_share(prep_share)


def combine(encoding: Encoding, ctx: bytes, prep_shares: list[bytes]) -> bytes:
    """The encoded prep message; VerifyError if the proof or joint randomness fails."""
    vdaf = instance(encoding)
    decoded = [vdaf.decode_prep_share(s) for s in prep_shares]
    return vdaf.encode_prep_msg(vdaf.prep_shares_to_prep(ctx, None, decoded))


def finish(encoding: Encoding, ctx: bytes, state: Any, prep_msg: bytes) -> list[int]:
    """The output share (field elements); VerifyError on a joint-randomness mismatch."""
    vdaf = instance(encoding)
    return list(vdaf.prep_next(ctx, state, vdaf.decode_prep_msg(prep_msg)))


def modulus(encoding: Encoding) -> int:
    return instance(encoding).field.MODULUS


def verify_key_size(encoding: Encoding) -> int:
    return instance(encoding).VERIFY_KEY_SIZE


def verify_errors() -> tuple[type[Exception], ...]:
    """The errors that mean "this report is invalid" (proof, encoding, or a share too malformed
    for the library's decoders: a hostile report must never become a server error)."""
    from ..prio3 import Prio3Error

    return (Prio3Error, ValueError, IndexError, TypeError)
