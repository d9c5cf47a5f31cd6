"""Prio3 end to end with OS randomness: honest reports aggregate exactly; hostile ones are refused.

Hostile clients are modelled with Prio3.shard_encoded, which shards an encoded vector without
the encoder's checks (what a modified client can send). Soundness error of each check is below
2**-100 for Field128 instances and about 2**-60 for Field64 ones, so "rejected" is asserted
outright (a false acceptance would be a bug or a one-in-2**60 event).
"""

from __future__ import annotations

import os
import secrets

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ldpsurvey.shared.prio3 import (
    DecodeError,
    Field64,
    Field128,
    MeasurementError,
    ParameterError,
    Prio3,
    Prio3Error,
    VerifyError,
    prio3_count,
    prio3_histogram,
    prio3_multihot_countvec,
    prio3_sum,
    prio3_sumvec,
)

CTX = b"ldpsurvey test survey v1"


def _prepare(vdaf: Prio3, public, shares, nonce, *, ctx=CTX, keys=None, ctxs=None, nonces=None):
    """Both aggregators' full preparation through the byte encodings; returns out shares."""
    key = os.urandom(vdaf.VERIFY_KEY_SIZE)
    keys = keys or [key] * vdaf.SHARES
    ctxs = ctxs or [ctx] * vdaf.SHARES
    nonces = nonces or [nonce] * vdaf.SHARES
    states, prep_shares = [], []
    for j in range(vdaf.SHARES):
        pub = vdaf.decode_public_share(vdaf.encode_public_share(public))
        inp = vdaf.decode_input_share(j, vdaf.encode_input_share(j, shares[j]))
        state, prep_share = vdaf.prep_init(keys[j], ctxs[j], j, None, nonces[j], pub, inp)
        states.append(vdaf.decode_prep_state(vdaf.encode_prep_state(state)))
        prep_shares.append(vdaf.decode_prep_share(vdaf.encode_prep_share(prep_share)))
    msg = vdaf.prep_shares_to_prep(ctxs[0], None, prep_shares)
    msg = vdaf.decode_prep_msg(vdaf.encode_prep_msg(msg))
    return [vdaf.prep_next(ctxs[j], states[j], msg) for j in range(vdaf.SHARES)]


def _run(vdaf: Prio3, measurements):
    aggs = [vdaf.agg_init(None) for _ in range(vdaf.SHARES)]
    for m in measurements:
        nonce, public, shares = vdaf.shard_random(CTX, m)
        outs = _prepare(vdaf, public, shares, nonce)
        aggs = [vdaf.agg_update(None, a, o) for a, o in zip(aggs, outs, strict=True)]
    aggs = [vdaf.decode_agg_share(vdaf.encode_agg_share(a)) for a in aggs]
    return vdaf.unshard(None, aggs, len(measurements))


def _rand_below(n: int) -> int:
    return secrets.randbelow(n)


def test_count_roundtrip():
    ms = [_rand_below(2) for _ in range(20)] + [True, False]
    assert _run(prio3_count(), ms) == sum(int(m) for m in ms)


@pytest.mark.parametrize("max_measurement", [1, 30, 255, 1337])
def test_sum_roundtrip(max_measurement):
    ms = [_rand_below(max_measurement + 1) for _ in range(10)] + [0, max_measurement]
    assert _run(prio3_sum(max_measurement), ms) == sum(ms)


@pytest.mark.parametrize(("length", "chunk"), [(1, 1), (2, 1), (5, 2), (16, 4), (33, 6)])
def test_histogram_roundtrip(length, chunk):
    ms = [_rand_below(length) for _ in range(12)]
    expected = [ms.count(i) for i in range(length)]
    assert _run(prio3_histogram(length, chunk), ms) == expected


def test_sumvec_roundtrip_bits_and_max():
    vdaf = prio3_sumvec(4, 3, 2)
    ms = [[_rand_below(8) for _ in range(4)] for _ in range(8)]
    assert _run(vdaf, ms) == [sum(col) for col in zip(*ms, strict=True)]
    vdaf = prio3_sumvec(3, None, 3, max_measurement=100)
    ms = [[_rand_below(101) for _ in range(3)] for _ in range(8)] + [[100, 100, 100]]
    assert _run(vdaf, ms) == [sum(col) for col in zip(*ms, strict=True)]


def test_multihot_roundtrip():
    vdaf = prio3_multihot_countvec(6, 3, 2)
    ms = [[True, False, True, False, False, True], [False] * 6, [0, 1, 0, 0, 0, 0]]
    assert _run(vdaf, ms) == [1, 1, 1, 0, 0, 1]


def test_three_shares_roundtrip():
    vdaf = prio3_histogram(5, 2, shares=3)
    assert _run(vdaf, [4, 4, 0]) == [1, 0, 0, 0, 2]


def test_shares_hold_only_field_ints():
    vdaf = prio3_histogram(5, 2)
    _, public, shares = vdaf.shard_random(CTX, 3)
    meas, proofs, blind = shares[0]
    for x in meas + proofs:
        assert type(x) is int and 0 <= x < Field128.MODULUS
    assert isinstance(blind, bytes) and all(isinstance(p, bytes) for p in public)


# --- the encoder refuses bad measurements on the device ----------------------------------

@pytest.mark.parametrize(
    ("vdaf", "bad"),
    [
        (prio3_count(), 2), (prio3_count(), -1), (prio3_count(), "1"), (prio3_count(), 1.0),
        (prio3_sum(30), 31), (prio3_sum(30), -1), (prio3_sum(30), True), (prio3_sum(30), 2.0),
        (prio3_histogram(5, 2), 5), (prio3_histogram(5, 2), -1), (prio3_histogram(5, 2), None),
        (prio3_sumvec(3, 2, 2), [0, 4, 0]), (prio3_sumvec(3, 2, 2), [0, 1]),
        (prio3_multihot_countvec(4, 2, 2), [1, 1, 1, 0]),
        (prio3_multihot_countvec(4, 2, 2), [0.5, 0, 0, 0]),
    ],
)
def test_encoder_refuses(vdaf, bad):
    with pytest.raises(MeasurementError):
        vdaf.shard_random(CTX, bad)


# --- hostile clients: bypass the encoder, preparation must refuse ------------------------

def _hostile(vdaf: Prio3, encoded: list[int]):
    nonce = os.urandom(vdaf.NONCE_SIZE)
    public, shares = vdaf.shard_encoded(CTX, encoded, nonce, os.urandom(vdaf.RAND_SIZE))
    with pytest.raises(VerifyError):
        _prepare(vdaf, public, shares, nonce)


@pytest.mark.parametrize("value", [2, 3, Field64.MODULUS - 1, 10**6])
def test_hostile_count(value):
    _hostile(prio3_count(), [value])


@pytest.mark.parametrize(
    "encoded",
    [
        [0] * 16,                       # no bucket
        [1, 1] + [0] * 14,              # two buckets
        [2] + [0] * 15,                 # a bucket of 2
        [1000000] + [0] * 15,           # a million "yes" votes
        [Field128.MODULUS - 1, 1, 1] + [0] * 13,   # sums to one, not one-hot
        [3, Field128.MODULUS - 2] + [0] * 14,      # sums to one, not one-hot
    ],
)
def test_hostile_histogram(encoded):
    _hostile(prio3_histogram(16, 4), encoded)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=3), min_size=7, max_size=7).filter(
    lambda v: sorted(v) != [0, 0, 0, 0, 0, 0, 1]))
def test_hostile_histogram_any_non_one_hot(encoded):
    _hostile(prio3_histogram(7, 3), encoded)


@pytest.mark.parametrize(
    "encoded",
    [
        [2, 0, 0, 0, 0],                # a "bit" of 2
        [0, 0, 0, 0, 3],                # 45 via the last weight
        [Field64.MODULUS - 1, 0, 0, 0, 0],   # -1
        [1, 1, 1, 1, 2],                # 45 > 30
    ],
)
def test_hostile_sum_out_of_range(encoded):
    _hostile(prio3_sum(30), encoded)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=5), min_size=5, max_size=5).filter(
    lambda v: max(v) >= 2))
def test_hostile_sum_any_non_bit_encoding(encoded):
    _hostile(prio3_sum(30), encoded)


def test_numpy_integers_are_measurements():
    assert _run(prio3_histogram(3, 2), [np.int64(2)]) == [0, 0, 1]
    assert _run(prio3_sum(30), [np.int32(30)]) == 30


def test_hostile_sumvec_and_multihot():
    _hostile(prio3_sumvec(3, 2, 2), [0, 1, 2, 0, 1, 1])
    vdaf = prio3_multihot_countvec(4, 2, 2)
    _hostile(vdaf, [1, 1, 1, 0, 0, 1])      # weight 3 claimed as 2
    _hostile(vdaf, [1, 1, 1, 1, 1, 1])      # weight 4 claimed as 3 > max_weight 2


def test_valid_encoded_vector_is_accepted_through_shard_encoded():
    vdaf = prio3_histogram(16, 4)
    nonce = os.urandom(16)
    public, shares = vdaf.shard_encoded(CTX, [0] * 15 + [1], nonce, os.urandom(vdaf.RAND_SIZE))
    outs = _prepare(vdaf, public, shares, nonce)
    assert vdaf.unshard(None, outs, 1) == [0] * 15 + [1]


# --- tampering in transit or disagreement between the aggregators ------------------------

def _honest(vdaf: Prio3, m):
    return vdaf.shard_random(CTX, m)


def test_tampered_leader_share_rejected():
    vdaf = prio3_histogram(5, 2)
    nonce, public, shares = _honest(vdaf, 1)
    meas, proofs, blind = shares[0]
    meas = [meas[0] + 1, *meas[1:]]
    with pytest.raises(VerifyError):
        _prepare(vdaf, public, [(meas, proofs, blind), shares[1]], nonce)


def test_tampered_proof_rejected():
    vdaf = prio3_count()
    nonce, public, shares = _honest(vdaf, 1)
    meas, proofs, blind = shares[0]
    for i in range(len(proofs)):
        bad = list(proofs)
        bad[i] = (bad[i] + 1) % Field64.MODULUS
        with pytest.raises(VerifyError):
            _prepare(vdaf, public, [(meas, bad, blind), shares[1]], nonce)


def test_tampered_public_share_rejected():
    vdaf = prio3_histogram(5, 2)
    nonce, public, shares = _honest(vdaf, 2)
    with pytest.raises(VerifyError):
        _prepare(vdaf, [os.urandom(32), public[1]], shares, nonce)


@pytest.mark.parametrize("what", ["key", "ctx", "nonce"])
def test_aggregators_disagreeing_reject(what):
    """A share for another survey (ctx), another report (nonce) or another key is refused."""
    vdaf = prio3_histogram(5, 2)
    nonce, public, shares = _honest(vdaf, 2)
    kw = {
        "key": {"keys": [os.urandom(32), os.urandom(32)]},
        "ctx": {"ctxs": [CTX, b"another survey"]},
        "nonce": {"nonces": [nonce, os.urandom(16)]},
    }[what]
    with pytest.raises(VerifyError):
        _prepare(vdaf, public, shares, nonce, **kw)


def test_client_ctx_differs_from_servers_rejected():
    vdaf = prio3_sum(30)
    nonce, public, shares = vdaf.shard_random(b"survey A", 7)
    with pytest.raises(VerifyError):
        _prepare(vdaf, public, shares, nonce, ctx=b"survey B")


def test_wrong_joint_rand_message_rejected():
    vdaf = prio3_histogram(5, 2)
    nonce, public, shares = _honest(vdaf, 2)
    key = os.urandom(32)
    state, _ = vdaf.prep_init(key, CTX, 0, None, nonce, public, shares[0])
    with pytest.raises(VerifyError):
        vdaf.prep_next(CTX, state, os.urandom(32))


# --- encodings and parameters -----------------------------------------------------------

def test_decode_refuses_non_canonical_and_bad_lengths():
    with pytest.raises(DecodeError):
        Field64.decode_vec(Field64.MODULUS.to_bytes(8, "little"))
    with pytest.raises(DecodeError):
        Field128.decode_vec((2**128 - 1).to_bytes(16, "little"))
    with pytest.raises(DecodeError):
        Field128.decode_vec(b"\x00" * 15)
    assert Field64.decode_vec((Field64.MODULUS - 1).to_bytes(8, "little")) == [Field64.MODULUS - 1]
    vdaf = prio3_histogram(5, 2)
    _nonce, _public, shares = _honest(vdaf, 0)
    leader = vdaf.encode_input_share(0, shares[0])
    for bad in (leader[:-1], leader + b"\x00", b""):
        with pytest.raises(DecodeError):
            vdaf.decode_input_share(0, bad)
    with pytest.raises(DecodeError):
        vdaf.decode_input_share(1, b"\x00" * 33)
    with pytest.raises(DecodeError):
        vdaf.decode_public_share(b"\x00" * 63)
    with pytest.raises(DecodeError):
        vdaf.decode_prep_share(b"\x00" * 3)
    with pytest.raises(DecodeError):
        vdaf.decode_prep_msg(b"")
    with pytest.raises(DecodeError):
        vdaf.decode_agg_share(b"\x00" * 16)
    with pytest.raises(DecodeError):
        prio3_count().decode_public_share(b"\x00")
    # A leader share whose first element is >= p is refused, not reduced.
    with pytest.raises(DecodeError):
        vdaf.decode_input_share(0, b"\xff" * 16 + leader[16:])


def test_bad_parameters_are_typed():
    vdaf = prio3_count()
    with pytest.raises(ParameterError):
        vdaf.shard(CTX, 1, b"short", os.urandom(vdaf.RAND_SIZE))
    with pytest.raises(ParameterError):
        vdaf.shard(CTX, 1, os.urandom(16), b"")
    nonce, public, shares = vdaf.shard_random(CTX, 1)
    with pytest.raises(ParameterError):
        vdaf.prep_init(b"k", CTX, 0, None, nonce, public, shares[0])
    with pytest.raises(ParameterError):
        vdaf.prep_init(os.urandom(32), CTX, 2, None, nonce, public, shares[0])
    with pytest.raises(ParameterError):
        prio3_sumvec(3, 2, 2, max_measurement=3)
    with pytest.raises(ParameterError):
        prio3_histogram(4, 0)
    assert issubclass(ParameterError, Prio3Error)


def test_contract_constants():
    vdaf = prio3_histogram(5, 2)
    assert (vdaf.SHARES, vdaf.NONCE_SIZE, vdaf.VERIFY_KEY_SIZE, vdaf.ID) == (2, 16, 32, 4)
    assert vdaf.RAND_SIZE == 4 * 32 and prio3_count().RAND_SIZE == 2 * 32
    assert vdaf.field is Field128 and prio3_sum(3).field is Field64
    assert vdaf.verify_init == vdaf.prep_init
