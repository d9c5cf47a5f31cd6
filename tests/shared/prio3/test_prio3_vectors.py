"""Prio3 against every published draft-irtf-cfrg-vdaf-20 test vector of the instances we ship.

Each vector's `operations` list is executed in order; an operation marked success=false must
raise the typed error (VerifyError) and end that report's verification.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ldpsurvey.shared.prio3 import (
    Field64,
    Field128,
    Prio3Error,
    VerifyError,
    XofTurboShake128,
    prio3_count,
    prio3_histogram,
    prio3_multihot_countvec,
    prio3_sum,
    prio3_sumvec,
    prio3_sumvec_multiproof,
)

VECTORS = Path(__file__).parents[2] / "data" / "vdaf" / "draft-20"


def _instance(name: str, v: dict):
    kind = name.split("_")[0]
    shares = v["shares"]
    if kind == "Prio3Count":
        return prio3_count(shares=shares)
    if kind == "Prio3Sum":
        return prio3_sum(v["max_measurement"], shares=shares)
    if kind == "Prio3Histogram":
        return prio3_histogram(v["length"], v["chunk_length"], shares=shares)
    if kind == "Prio3SumVec":
        return prio3_sumvec(v["length"], None, v["chunk_length"],
                            max_measurement=v["max_measurement"], shares=shares)
    if kind == "Prio3SumVecWithMultiproof":
        return prio3_sumvec_multiproof(Field64, 3, v["length"], v["max_measurement"],
                                       v["chunk_length"], shares=shares)
    if kind == "Prio3MultihotCountVec":
        return prio3_multihot_countvec(v["length"], v["max_weight"], v["chunk_length"],
                                       shares=shares)
    raise AssertionError(name)


VECTOR_FILES = sorted(p for p in VECTORS.glob("Prio3*.json"))


def test_all_vectors_present():
    names = {p.stem for p in VECTOR_FILES}
    assert len(names) == 24
    assert {"Prio3Count_bad_gadget_poly", "Prio3Count_bad_helper_seed",
            "Prio3Count_bad_meas_share", "Prio3Count_bad_wire_seed",
            "Prio3Histogram_bad_helper_jr_blind", "Prio3Histogram_bad_leader_jr_blind",
            "Prio3Histogram_bad_public_share", "Prio3Histogram_bad_verifier_message"} <= names


@pytest.mark.parametrize("path", VECTOR_FILES, ids=lambda p: p.stem)
def test_vector(path: Path):
    v = json.loads(path.read_text())
    vdaf = _instance(path.stem, v)
    ctx = bytes.fromhex(v["ctx"])
    verify_key = bytes.fromhex(v["verify_key"])
    reports = v["reports"]
    states: dict[tuple[int, int], object] = {}
    prep_shares: dict[tuple[int, int], object] = {}
    prep_msgs: dict[int, object] = {}
    out_shares: dict[tuple[int, int], list[int]] = {}
    agg: dict[int, list[int]] = {}
    executed = 0

    def expect_failure(op, fn):
        with pytest.raises(VerifyError):
            fn()

    for op in v["operations"]:
        kind = op["operation"]
        r = reports[op["report_index"]] if "report_index" in op else None
        ok = op["success"]
        if kind == "shard":
            nonce = bytes.fromhex(r["nonce"])
            public, shares = vdaf.shard(ctx, r["measurement"], nonce, bytes.fromhex(r["rand"]))
            assert vdaf.encode_public_share(public).hex() == r["public_share"]
            for j, share in enumerate(shares):
                assert vdaf.encode_input_share(j, share).hex() == r["input_shares"][j]
        elif kind == "verify_init":
            j, i = op["aggregator_id"], op["report_index"]
            public = vdaf.decode_public_share(bytes.fromhex(r["public_share"]))
            share = vdaf.decode_input_share(j, bytes.fromhex(r["input_shares"][j]))
            state, prep_share = vdaf.prep_init(verify_key, ctx, j, None,
                                               bytes.fromhex(r["nonce"]), public, share)
            assert ok
            assert vdaf.encode_prep_share(prep_share).hex() == r["verifier_shares"][0][j]
            states[(i, j)] = state
            prep_shares[(i, j)] = vdaf.decode_prep_share(bytes.fromhex(r["verifier_shares"][0][j]))
        elif kind == "verifier_shares_to_message":
            i = op["report_index"]
            shares = [prep_shares[(i, j)] for j in range(vdaf.SHARES)]
            if not ok:
                expect_failure(op, lambda s=shares: vdaf.prep_shares_to_prep(ctx, None, s))
                executed += 1
                continue
            msg = vdaf.prep_shares_to_prep(ctx, None, shares)
            assert vdaf.encode_prep_msg(msg).hex() == r["verifier_messages"][0]
            prep_msgs[i] = msg
        elif kind == "verify_next":
            j, i = op["aggregator_id"], op["report_index"]
            msg = prep_msgs.get(i)
            if msg is None and r["verifier_messages"]:
                msg = vdaf.decode_prep_msg(bytes.fromhex(r["verifier_messages"][0]))
            if not ok:
                expect_failure(op, lambda s=states[(i, j)], m=msg: vdaf.prep_next(ctx, s, m))
                executed += 1
                continue
            out = vdaf.prep_next(ctx, states[(i, j)], msg)
            assert vdaf.encode_out_share(out).hex() == r["out_shares"][j]
            out_shares[(i, j)] = out
        elif kind == "aggregate":
            j = op["aggregator_id"]
            share = vdaf.agg_init(None)
            for i in range(len(reports)):
                share = vdaf.agg_update(None, share, out_shares[(i, j)])
            assert vdaf.encode_agg_share(share).hex() == v["agg_shares"][j]
            agg[j] = share
        elif kind == "unshard":
            shares = [vdaf.decode_agg_share(bytes.fromhex(h)) for h in v["agg_shares"]]
            assert vdaf.unshard(None, shares, len(reports)) == v["agg_result"]
        else:
            raise AssertionError(kind)
        executed += 1
    assert executed == len(v["operations"])


def test_xof_turboshake128_vector():
    v = json.loads((VECTORS / "XofTurboShake128.json").read_text())
    seed, dst, binder = (bytes.fromhex(v[k]) for k in ("seed", "dst", "binder"))
    assert XofTurboShake128.derive_seed(seed, dst, binder).hex() == v["derived_seed"]
    vec = XofTurboShake128.expand_into_vec(Field128, seed, dst, binder, v["length"])
    assert Field128.encode_vec(vec).hex() == v["expanded_vec_field128"]


def test_verify_error_is_typed():
    assert issubclass(VerifyError, Prio3Error)
