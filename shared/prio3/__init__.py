"""Prio3 from the CFRG VDAF specification, draft-irtf-cfrg-vdaf-20.

Implemented from the draft's text (cfrg/draft-irtf-cfrg-vdaf, tag draft-irtf-cfrg-vdaf-20,
commit 5203892540a95e564dfa978345d16b40baf3c65d; the document's VERSION constant is 18) and
proven by its published test vectors, kept under tests/data/vdaf/draft-20/.

Pieces: `field` (Field64, Field128: elements are ints in [0, p)), `xof` (XofTurboShake128 over
pycryptodome's TurboSHAKE128), `gadgets`/`poly`/`flp` (FlpBBCGGI19 with Lagrange-basis
polynomials), `circuits` (Count, Sum, SumVec, Histogram, MultihotCountVec) and `vdaf` (Prio3).

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
    "prio3_count",
    "prio3_histogram",
    "prio3_multihot_countvec",
    "prio3_sum",
    "prio3_sumvec",
    "prio3_sumvec_multiproof",
]
