"""Prio3 from the CFRG VDAF specification, draft-irtf-cfrg-vdaf-20.

Implemented from the draft's text (cfrg/draft-irtf-cfrg-vdaf, tag draft-irtf-cfrg-vdaf-20,
commit 5203892540a95e564dfa978345d16b40baf3c65d; the document's VERSION constant is 18) and
proven by its published test vectors, kept under tests/data/vdaf/draft-20/.

Pieces: `field` (Field64, Field128: elements are ints in [0, p)), `xof` (XofTurboShake128 over
pycryptodome's TurboSHAKE128), `gadgets`/`poly`/`flp` (FlpBBCGGI19 with Lagrange-basis
polynomials), `circuits` (Count, Sum, SumVec, Histogram, MultihotCountVec) and `vdaf` (Prio3).

One report, both aggregators (each line runs where its comment says)::

    vdaf = prio3_histogram(5, best_chunk_length(5))
    nonce, public, shares = vdaf.shard_random(ctx, 3)                       # client
    state0, ps0 = vdaf.prep_init(key, ctx, 0, None, nonce, public, shares[0])  # leader
    state1, ps1 = vdaf.prep_init(key, ctx, 1, None, nonce, public, shares[1])  # helper
    msg = vdaf.prep_shares_to_prep(ctx, None, [ps0, ps1])   # VerifyError: invalid report
    agg0 = vdaf.agg_update(None, vdaf.agg_init(None), vdaf.prep_next(ctx, state0, msg))
    agg1 = vdaf.agg_update(None, vdaf.agg_init(None), vdaf.prep_next(ctx, state1, msg))
    vdaf.unshard(None, [agg0, agg1], 1)                                     # [0, 0, 0, 1, 0]

Every message has encode_*/decode_* methods for the wire (decode raises DecodeError).
prep_init can raise ParameterError (wrong key/nonce size, aggregator id) and, with negligible
probability, VerifyError; prep_shares_to_prep and prep_next raise VerifyError for an invalid
report. Catch Prio3Error to treat all of these as "report rejected".

Deviations from the team contract (TWO_SERVER_CONTRACT.md), all additive:
- Draft-20 renamed preparation to verification; the contract's names prep_init,
  prep_shares_to_prep and prep_next are the methods, and verify_init,
  verifier_shares_to_message and verify_next are aliases.
- Draft-20's SumVec takes max_measurement, not bits: prio3_sumvec(length, bits, chunk_length)
  works as agreed (max_measurement = 2**bits - 1) and also accepts
  prio3_sumvec(length, None, chunk_length, max_measurement=m).
- shard_random returns (nonce, public_share, input_shares) so the caller knows the nonce.
- Every constructor takes shares= (default 2; the vectors also use 3 and 4), and
  encode/decode_prep_state give a storage form of the preparation state.
"""

from ldpsurvey.shared.prio3.errors import (
    DecodeError,
    MeasurementError,
    ParameterError,
    Prio3Error,
    VerifyError,
)
from ldpsurvey.shared.prio3.field import Field, Field64, Field128
from ldpsurvey.shared.prio3.instances import (
    best_chunk_length,
    prio3_count,
    prio3_histogram,
    prio3_multihot_countvec,
    prio3_sum,
    prio3_sumvec,
    prio3_sumvec_multiproof,
)
from ldpsurvey.shared.prio3.vdaf import Prio3
from ldpsurvey.shared.prio3.xof import XofTurboShake128

__all__ = [
    "DecodeError",
    "Field",
    "Field64",
    "Field128",
    "MeasurementError",
    "ParameterError",
    "Prio3",
    "Prio3Error",
    "VerifyError",
    "XofTurboShake128",
    "best_chunk_length",
    "prio3_count",
    "prio3_histogram",
    "prio3_multihot_countvec",
    "prio3_sum",
    "prio3_sumvec",
    "prio3_sumvec_multiproof",
]
