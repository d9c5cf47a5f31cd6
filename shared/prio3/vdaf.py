"""Prio3 (draft-irtf-cfrg-vdaf-20): sharding, verification, aggregation, unsharding, encodings.

Verification is named as in the team contract (prep_init, prep_shares_to_prep, prep_next);
the draft-20 names (verify_init, verifier_shares_to_message, verify_next) are aliases.
Messages in memory:
  public_share   None | list[bytes]                 (joint randomness parts, one per aggregator)
  input_share    leader: (meas_share, proofs_share, blind | None); helper: (seed, blind | None)
  prep_state     (out_share, corrected_joint_rand_seed | None)
  prep_share     (verifiers_share, joint_rand_part | None)
  prep_msg       None | bytes                       (the joint randomness seed)
  out/agg share  list[int] of field elements
"""

from __future__ import annotations

import os
from typing import Any

from ldpsurvey.shared.prio3.circuits import Valid
from ldpsurvey.shared.prio3.errors import DecodeError, ParameterError, VerifyError
from ldpsurvey.shared.prio3.field import Field
from ldpsurvey.shared.prio3.flp import FlpBBCGGI19
from ldpsurvey.shared.prio3.xof import XofTurboShake128, format_dst

USAGE_MEAS_SHARE = 1
USAGE_PROOF_SHARE = 2
USAGE_JOINT_RANDOMNESS = 3
USAGE_PROVE_RANDOMNESS = 4
USAGE_QUERY_RANDOMNESS = 5
USAGE_JOINT_RAND_SEED = 6
USAGE_JOINT_RAND_PART = 7

PublicShare = list[bytes] | None
InputShare = tuple[Any, ...]
PrepState = tuple[list[int], bytes | None]
PrepShare = tuple[list[int], bytes | None]
PrepMessage = bytes | None


class Prio3:
    """One Prio3 instance: an FLP over a validity circuit, an id, a share count, proof count."""

    NONCE_SIZE = 16
    ROUNDS = 1

    def __init__(self, vdaf_id: int, valid: Valid, *, shares: int = 2, proofs: int = 1,
                 name: str = "Prio3") -> None:
        if not 2 <= shares < 256 or not 1 <= proofs < 256:
            raise ParameterError("Prio3: shares in [2, 256) and proofs in [1, 256)")
        self.ID = vdaf_id
        self.name = name
        self.flp = FlpBBCGGI19(valid)
        self.field: type[Field] = valid.field
        self.xof = XofTurboShake128
        self.SHARES = shares
        self.PROOFS = proofs
        seed = self.xof.SEED_SIZE
        self.VERIFY_KEY_SIZE = seed
        self.RAND_SIZE = seed * shares * (2 if self.flp.JOINT_RAND_LEN else 1)
        self._dst_prefix = {u: format_dst(0, vdaf_id, u) for u in range(1, 8)}

    def __repr__(self) -> str:
        return f"<{self.name} id={self.ID:#010x} shares={self.SHARES} proofs={self.PROOFS}>"

    # --- sharding ------------------------------------------------------------------------

    def shard(self, ctx: bytes, measurement: Any, nonce: bytes,
              rand: bytes) -> tuple[PublicShare, list[InputShare]]:
        """Encode (refusing an invalid measurement), share, prove, share the proofs."""
        return self.shard_encoded(ctx, self.flp.encode(measurement), nonce, rand)

    def shard_random(self, ctx: bytes, measurement: Any,
                     nonce: bytes | None = None) -> tuple[bytes, PublicShare, list[InputShare]]:
        """shard() with nonce (unless given) and rand from os.urandom: (nonce, public, shares)."""
        nonce = os.urandom(self.NONCE_SIZE) if nonce is None else nonce
        public_share, input_shares = self.shard(ctx, measurement, nonce,
                                                os.urandom(self.RAND_SIZE))
        return nonce, public_share, input_shares

    def shard_encoded(self, ctx: bytes, meas: list[int], nonce: bytes,
                      rand: bytes) -> tuple[PublicShare, list[InputShare]]:
        """Shard an already encoded vector WITHOUT checking it: what a hostile client can do.

        Honest callers use shard(); this exists so tests can model a client that bypasses
        the encoder and must then be rejected by preparation.
        """
        if len(nonce) != self.NONCE_SIZE:
            raise ParameterError(f"nonce must have {self.NONCE_SIZE} bytes")
        if len(rand) != self.RAND_SIZE:
            raise ParameterError(f"rand must have {self.RAND_SIZE} bytes")
        if len(meas) != self.flp.MEAS_LEN:
            raise ParameterError(f"an encoded measurement has {self.flp.MEAS_LEN} elements")
        p = self.field.MODULUS
        meas = [x % p for x in meas]
        s = self.xof.SEED_SIZE
        seeds = [rand[i:i + s] for i in range(0, self.RAND_SIZE, s)]
        use_jr = self.flp.JOINT_RAND_LEN > 0
        helpers = self.SHARES - 1
        if use_jr:
            helper_shares = seeds[0:2 * helpers:2]
            helper_blinds: list[bytes | None] = list(seeds[1:2 * helpers:2])
            leader_blind, prove_seed = seeds[2 * helpers], seeds[2 * helpers + 1]
        else:
            helper_shares = seeds[:helpers]
            helper_blinds = [None] * helpers
            leader_blind, prove_seed = None, seeds[helpers]

        leader_meas = list(meas)
        parts: list[bytes] = []
        for j in range(helpers):
            share = self._helper_meas_share(ctx, j + 1, helper_shares[j])
            leader_meas = [(a - b) % p for a, b in zip(leader_meas, share, strict=True)]
            if use_jr:
                blind = helper_blinds[j]
                assert blind is not None
                parts.append(self._joint_rand_part(ctx, j + 1, blind, share, nonce))
        public_share: PublicShare = None
        joint_rands: list[int] = []
        if use_jr:
            assert leader_blind is not None
            parts.insert(0, self._joint_rand_part(ctx, 0, leader_blind, leader_meas, nonce))
            public_share = parts
            joint_rands = self._joint_rands(ctx, self._joint_rand_seed(ctx, parts))

        prove_rands = self._prove_rands(ctx, prove_seed)
        prl, jrl = self.flp.PROVE_RAND_LEN, self.flp.JOINT_RAND_LEN
        proofs: list[int] = []
        for i in range(self.PROOFS):
            proofs += self.flp.prove(meas, prove_rands[i * prl:(i + 1) * prl],
                                     joint_rands[i * jrl:(i + 1) * jrl])
        for j in range(helpers):
            share = self._helper_proofs_share(ctx, j + 1, helper_shares[j])
            proofs = [(a - b) % p for a, b in zip(proofs, share, strict=True)]
        input_shares: list[InputShare] = [(leader_meas, proofs, leader_blind)]
        input_shares += [(helper_shares[j], helper_blinds[j]) for j in range(helpers)]
        return public_share, input_shares

    # --- verification --------------------------------------------------------------------

    def prep_init(self, verify_key: bytes, ctx: bytes, agg_id: int, agg_param: None,
                  nonce: bytes, public_share: PublicShare,
                  input_share: InputShare) -> tuple[PrepState, PrepShare]:
        """An aggregator's first step: its output share (kept) and verifier share (sent)."""
        if len(verify_key) != self.VERIFY_KEY_SIZE:
            raise ParameterError(f"verify_key must have {self.VERIFY_KEY_SIZE} bytes")
        if len(nonce) != self.NONCE_SIZE:
            raise ParameterError(f"nonce must have {self.NONCE_SIZE} bytes")
        self._check_agg_id(agg_id)
        meas_share, proofs_share, blind = self._expand_input_share(ctx, agg_id, input_share)
        out_share = self.flp.truncate(meas_share)

        joint_rands: list[int] = []
        corrected_seed = part = None
        if self.flp.JOINT_RAND_LEN > 0:
            if blind is None or public_share is None or len(public_share) != self.SHARES:
                raise ParameterError("this instance needs a blind and joint randomness parts")
            part = self._joint_rand_part(ctx, agg_id, blind, meas_share, nonce)
            parts = list(public_share)
            parts[agg_id] = part
            corrected_seed = self._joint_rand_seed(ctx, parts)
            joint_rands = self._joint_rands(ctx, corrected_seed)

        query_rands = self._query_rands(verify_key, ctx, nonce)
        pl, ql, jl = self.flp.PROOF_LEN, self.flp.QUERY_RAND_LEN, self.flp.JOINT_RAND_LEN
        verifiers: list[int] = []
        for i in range(self.PROOFS):
            verifiers += self.flp.query(meas_share, proofs_share[i * pl:(i + 1) * pl],
                                        query_rands[i * ql:(i + 1) * ql],
                                        joint_rands[i * jl:(i + 1) * jl], self.SHARES)
        return (out_share, corrected_seed), (verifiers, part)

    def prep_shares_to_prep(self, ctx: bytes, agg_param: None,
                            prep_shares: list[PrepShare]) -> PrepMessage:
        """Combine verifier shares and decide; raises VerifyError if a proof is rejected."""
        if len(prep_shares) != self.SHARES:
            raise ParameterError(f"expected {self.SHARES} verifier shares")
        p = self.field.MODULUS
        vlen = self.flp.VERIFIER_LEN
        total = [0] * (vlen * self.PROOFS)
        parts: list[bytes] = []
        for verifiers, part in prep_shares:
            if len(verifiers) != len(total):
                raise ParameterError("a verifier share has the wrong length")
            total = [a + b for a, b in zip(total, verifiers, strict=True)]
            if self.flp.JOINT_RAND_LEN > 0:
                if part is None:
                    raise ParameterError("a verifier share lacks its joint randomness part")
                parts.append(part)
        total = [x % p for x in total]
        for i in range(self.PROOFS):
            if not self.flp.decide(total[i * vlen:(i + 1) * vlen]):
                raise VerifyError("proof verifier check failed: the report is invalid")
        if self.flp.JOINT_RAND_LEN > 0:
            return self._joint_rand_seed(ctx, parts)
        return None

    def prep_next(self, ctx: bytes, prep_state: PrepState, prep_msg: PrepMessage) -> list[int]:
        """Release the output share once the joint randomness seed matches the client's."""
        out_share, corrected_seed = prep_state
        if prep_msg != corrected_seed:
            raise VerifyError("joint randomness check failed: the report is invalid")
        return out_share

    verify_init = prep_init
    verifier_shares_to_message = prep_shares_to_prep
    verify_next = prep_next

    def is_valid(self, agg_param: None, previous_agg_params: list[None]) -> bool:
        """A report is aggregated at most once."""
        return len(previous_agg_params) == 0

    # --- aggregation ---------------------------------------------------------------------

    def agg_init(self, agg_param: None) -> list[int]:
        return [0] * self.flp.OUTPUT_LEN

    def agg_update(self, agg_param: None, agg_share: list[int],
                   out_share: list[int]) -> list[int]:
        p = self.field.MODULUS
        return [(a + b) % p for a, b in zip(agg_share, out_share, strict=True)]

    def merge(self, agg_param: None, agg_shares: list[list[int]]) -> list[int]:
        agg = self.agg_init(agg_param)
        for share in agg_shares:
            agg = self.agg_update(agg_param, agg, share)
        return agg

    def unshard(self, agg_param: None, agg_shares: list[list[int]],
                num_measurements: int) -> Any:
        return self.flp.decode(self.merge(agg_param, agg_shares), num_measurements)

    # --- encodings -----------------------------------------------------------------------

    def encode_public_share(self, public_share: PublicShare) -> bytes:
        return b"" if public_share is None else b"".join(public_share)

    def decode_public_share(self, encoded: bytes) -> PublicShare:
        if self.flp.JOINT_RAND_LEN == 0:
            if encoded:
                raise DecodeError("this instance's public share is empty")
            return None
        s = self.xof.SEED_SIZE
        if len(encoded) != s * self.SHARES:
            raise DecodeError(f"a public share has {s * self.SHARES} bytes")
        return [encoded[i:i + s] for i in range(0, len(encoded), s)]

    def encode_input_share(self, agg_id: int, input_share: InputShare) -> bytes:
        self._check_agg_id(agg_id)
        if agg_id == 0:
            meas, proofs, blind = input_share
            out = self.field.encode_vec(meas) + self.field.encode_vec(proofs)
        else:
            seed, blind = input_share
            out = bytes(seed)
        return out + (blind or b"")

    def decode_input_share(self, agg_id: int, encoded: bytes) -> InputShare:
        self._check_agg_id(agg_id)
        s, size = self.xof.SEED_SIZE, self.field.ENCODED_SIZE
        blind_len = s if self.flp.JOINT_RAND_LEN > 0 else 0
        if agg_id == 0:
            n_meas, n_proof = self.flp.MEAS_LEN, self.flp.PROOF_LEN * self.PROOFS
            want = (n_meas + n_proof) * size + blind_len
            if len(encoded) != want:
                raise DecodeError(f"the leader's input share has {want} bytes")
            vec = self.field.decode_vec(encoded[:(n_meas + n_proof) * size])
            return vec[:n_meas], vec[n_meas:], (encoded[-s:] if blind_len else None)
        if len(encoded) != s + blind_len:
            raise DecodeError(f"a helper's input share has {s + blind_len} bytes")
        return encoded[:s], (encoded[s:] if blind_len else None)

    def encode_prep_share(self, prep_share: PrepShare) -> bytes:
        verifiers, part = prep_share
        return self.field.encode_vec(verifiers) + (part or b"")

    def decode_prep_share(self, encoded: bytes) -> PrepShare:
        size = self.field.ENCODED_SIZE
        n = self.flp.VERIFIER_LEN * self.PROOFS * size
        part_len = self.xof.SEED_SIZE if self.flp.JOINT_RAND_LEN > 0 else 0
        if len(encoded) != n + part_len:
            raise DecodeError(f"a verifier share has {n + part_len} bytes")
        return self.field.decode_vec(encoded[:n]), (encoded[n:] if part_len else None)

    def encode_prep_msg(self, prep_msg: PrepMessage) -> bytes:
        return prep_msg or b""

    def decode_prep_msg(self, encoded: bytes) -> PrepMessage:
        want = self.xof.SEED_SIZE if self.flp.JOINT_RAND_LEN > 0 else 0
        if len(encoded) != want:
            raise DecodeError(f"a verifier message has {want} bytes")
        return encoded if want else None

    def encode_prep_state(self, prep_state: PrepState) -> bytes:
        """Storage form of a preparation state: output share then the corrected seed."""
        out_share, seed = prep_state
        return self.field.encode_vec(out_share) + (seed or b"")

    def decode_prep_state(self, encoded: bytes) -> PrepState:
        n = self.flp.OUTPUT_LEN * self.field.ENCODED_SIZE
        seed_len = self.xof.SEED_SIZE if self.flp.JOINT_RAND_LEN > 0 else 0
        if len(encoded) != n + seed_len:
            raise DecodeError(f"a preparation state has {n + seed_len} bytes")
        return self.field.decode_vec(encoded[:n]), (encoded[n:] if seed_len else None)

    def encode_agg_share(self, agg_share: list[int]) -> bytes:
        return self.field.encode_vec(agg_share)

    def decode_agg_share(self, encoded: bytes) -> list[int]:
        if len(encoded) != self.flp.OUTPUT_LEN * self.field.ENCODED_SIZE:
            raise DecodeError(f"an aggregate share has {self.flp.OUTPUT_LEN} elements")
        return self.field.decode_vec(encoded)

    encode_out_share = encode_agg_share
    decode_out_share = decode_agg_share

    # --- auxiliary functions (the draft's names) -----------------------------------------

    def _dst(self, usage: int, ctx: bytes) -> bytes:
        return self._dst_prefix[usage] + ctx

    def _check_agg_id(self, agg_id: int) -> None:
        if not 0 <= agg_id < self.SHARES:
            raise ParameterError(f"aggregator id must be in [0, {self.SHARES})")

    def _helper_meas_share(self, ctx: bytes, agg_id: int, seed: bytes) -> list[int]:
        return self.xof.expand_into_vec(self.field, seed, self._dst(USAGE_MEAS_SHARE, ctx),
                                        bytes([agg_id]), self.flp.MEAS_LEN)

    def _helper_proofs_share(self, ctx: bytes, agg_id: int, seed: bytes) -> list[int]:
        return self.xof.expand_into_vec(self.field, seed, self._dst(USAGE_PROOF_SHARE, ctx),
                                        bytes([self.PROOFS, agg_id]),
                                        self.flp.PROOF_LEN * self.PROOFS)

    def _expand_input_share(self, ctx: bytes, agg_id: int, input_share: InputShare):
        if agg_id > 0:
            if len(input_share) != 2:
                raise ParameterError("a helper's input share is (seed, blind)")
            seed, blind = input_share
            if len(seed) != self.xof.SEED_SIZE:
                raise ParameterError("a helper's seed has the wrong length")
            return (self._helper_meas_share(ctx, agg_id, seed),
                    self._helper_proofs_share(ctx, agg_id, seed), blind)
        if len(input_share) != 3:
            raise ParameterError("the leader's input share is (meas, proofs, blind)")
        meas, proofs, blind = input_share
        if len(meas) != self.flp.MEAS_LEN or len(proofs) != self.flp.PROOF_LEN * self.PROOFS:
            raise ParameterError("the leader's input share has the wrong length")
        return list(meas), list(proofs), blind

    def _prove_rands(self, ctx: bytes, seed: bytes) -> list[int]:
        return self.xof.expand_into_vec(self.field, seed,
                                        self._dst(USAGE_PROVE_RANDOMNESS, ctx),
                                        bytes([self.PROOFS]),
                                        self.flp.PROVE_RAND_LEN * self.PROOFS)

    def _query_rands(self, verify_key: bytes, ctx: bytes, nonce: bytes) -> list[int]:
        return self.xof.expand_into_vec(self.field, verify_key,
                                        self._dst(USAGE_QUERY_RANDOMNESS, ctx),
                                        bytes([self.PROOFS]) + nonce,
                                        self.flp.QUERY_RAND_LEN * self.PROOFS)

    def _joint_rand_part(self, ctx: bytes, agg_id: int, blind: bytes, meas_share: list[int],
                         nonce: bytes) -> bytes:
        return self.xof.derive_seed(blind, self._dst(USAGE_JOINT_RAND_PART, ctx),
                                    bytes([agg_id]) + nonce + self.field.encode_vec(meas_share))

    def _joint_rand_seed(self, ctx: bytes, parts: list[bytes]) -> bytes:
        return self.xof.derive_seed(bytes(self.xof.SEED_SIZE),
                                    self._dst(USAGE_JOINT_RAND_SEED, ctx), b"".join(parts))

    def _joint_rands(self, ctx: bytes, seed: bytes) -> list[int]:
        return self.xof.expand_into_vec(self.field, seed, self._dst(USAGE_JOINT_RANDOMNESS, ctx),
                                        bytes([self.PROOFS]),
                                        self.flp.JOINT_RAND_LEN * self.PROOFS)
