"""Cross-vectors for the page's two-server upload (client/web/js/twoserver/upload.js).

Each case is a two-server survey (its canonical JSON, as a signed manifest carries it), the
respondent's answers, the tape of (n, value) draws the REAL Python client
(`ldpsurvey.client.two_server.build_upload`) requested, the Prio3 shares it made per key, the
fixed HPKE ephemeral keys, and the upload body it built. JS must request the same draws in the
same order and produce the same body, byte for byte.

How the Python client is made deterministic (tests only, never a report): `os.urandom(n)` in
client/two_server.py and shared/two_server/vdaf.py becomes ONE draw randbelow(2^(8n)) from a
seeded recording source, big-endian (the page draws bytes the same way); the local mechanisms'
default source (`shared.randomness.SECURE`) becomes that source too; `hpke.seal` becomes
`reference_seal` below with the case's fixed ephemeral key, because cryptography's HPKE draws
its own. `reference_seal` (tests/support/hpke_reference.py) is RFC 9180 base mode written from
the RFC with cryptography's primitives; tests/web/test_two_server_vectors.py checks it against
RFC 9180 A.1.1 and checks that shared/two_server/hpke.py opens what it seals.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from unittest import mock

from ldpsurvey.analyst.demo import sample_survey
from ldpsurvey.analyst.demo.two_server import two_server_version
from ldpsurvey.shared.skip_logic import NOT_ASKED, applies, asked_values
from ldpsurvey.shared.survey import Survey
from support.hpke_reference import public_key, reference_seal
from support.sources import RecordingSource
from support.two_server import two_server_survey

# Fixed TEST keys (never a server's): the servers' key pairs and the ephemeral keys per role.
LEADER_SK = bytes(range(1, 33))
HELPER_SK = bytes(range(33, 65))
EPHEMERAL = {"leader": bytes(range(65, 97)), "helper": bytes(range(97, 129))}
HELPER_URL = "https://helper.example"


# --- the cases ---------------------------------------------------------------------------------

def surveys() -> Iterator[tuple[str, Survey]]:
    leader, helper = public_key(LEADER_SK), public_key(HELPER_SK)
    yield "sample", two_server_version(sample_survey(), HELPER_URL, helper, leader, 100)
    yield "pulse", Survey.from_dict(two_server_survey(HELPER_URL, helper, leader))
    yield "pulse-local", Survey.from_dict(two_server_survey(HELPER_URL, helper, leader,
                                                            local=True))
    # An integer answered through a local geometric mechanism: its report is clipped to
    # encoding.clip_bounds before it is summed (the page must clip the same way).
    hours_local = two_server_survey(HELPER_URL, helper, leader, survey_id="hours-local")
    hours_local["questions"][2].update(local_epsilon=2.0, mechanism="geometric")
    yield "hours-local", Survey.from_dict(hours_local)
    # Multiselect with a local ε0: psfo_grr's index (a Histogram) and option_rr's bits (a
    # MultihotCountVec of any weight); the sample above has one without (its own bits).
    checks = two_server_survey(HELPER_URL, helper, leader, survey_id="checks")
    options = ["cannabis", "cocaine", "ecstasy", "opioids", "sedatives"]
    checks["questions"] = [
        {"id": "used", "text": "Used?", "type": "multiselect", "options": options,
         "max_selected": 3, "required_min": 1, "central_epsilon": 1.0, "local_epsilon": 2.0,
         "mechanism": "psfo_grr"},
        {"id": "bits", "text": "Tried?", "type": "multiselect", "options": options,
         "max_selected": 2, "central_epsilon": 1.0, "local_epsilon": 2.0,
         "mechanism": "option_rr", "optional": True}]
    checks.pop("crosstabs", None)
    yield "checks-local", Survey.from_dict(checks)
    # Skip logic: check-all-that-apply follow-ups of a yes/no gate, measured with a last "not
    # asked" entry (MultihotCountVec(k + 1, m)), and with local psfo_grr / option_rr over k + 1;
    # an integer follow-up's local pair (Prio3Count + Prio3Sum under one key).
    hidden = two_server_survey(HELPER_URL, helper, leader, survey_id="hidden-sets")
    follow = {"type": "multiselect", "options": options, "max_selected": 2,
              "central_epsilon": 1.0, "relevant": "used"}
    hidden["questions"] = [
        {"id": "used", "text": "Used?", "type": "binary", "central_epsilon": 1.0},
        {**follow, "id": "which", "text": "Which?"},
        {**follow, "id": "padded", "text": "Padded?", "local_epsilon": 2.0,
         "mechanism": "psfo_grr", "required_min": 1},
        {**follow, "id": "bits", "text": "Bits?", "local_epsilon": 2.0,
         "mechanism": "option_rr"},
        # an integer follow-up with ε0: asked_geometric's [bit, number] as Count + Sum
        {"id": "days", "text": "Days?", "type": "integer", "min": 0, "max": 30,
         "central_epsilon": 1.0, "local_epsilon": 2.0, "relevant": "used"}]
    hidden.pop("crosstabs", None)
    yield "hidden-sets", Survey.from_dict(hidden)


def answer_sets(survey: Survey) -> Iterator[dict[str, Any]]:
    """Every option of every question at least once, integer ends, optional ones left out."""
    rounds = max(q.k if q.type != "integer" else 3 for q in survey.questions)
    for i in range(rounds):
        answers: dict[str, Any] = {}
        for q in survey.questions:
            if q.type == "binary":
                answers[q.id] = i % 2 == 1
            elif q.type == "integer":
                assert q.min is not None and q.max is not None
                values = [q.min, q.max, (q.min + q.max) // 2]
                if q.optional and i == 1:
                    continue
                answers[q.id] = values[i % 3]
            elif q.type == "multiselect":  # sets of every allowed size, listed out of order
                shape = q.multiselect
                size = max(shape.required_min, i % (shape.max_selected + 1))
                answers[q.id] = [q.options[(i + j) % shape.k] for j in range(size)][::-1]
            else:
                answers[q.id] = q.options[i % len(q.options)]
            if q.not_asked and not applies(q, asked_values(answers)):
                answers[q.id] = NOT_ASKED  # what the page's skip logic hands the upload
        yield answers


def build_case(name: str, survey: Survey, answers: dict[str, Any], seed: int) -> dict[str, Any]:
    from ldpsurvey.client import two_server as client
    from ldpsurvey.shared import randomness
    from ldpsurvey.shared.two_server import hpke, vdaf

    source = RecordingSource(seed)
    shim = SimpleNamespace(urandom=lambda n: source.randbelow(1 << (8 * n)).to_bytes(n, "big"))
    keys = {"leader": public_key(LEADER_SK), "helper": public_key(HELPER_SK)}
    shards: dict[str, dict[str, str]] = {}
    real_shard = vdaf.shard

    def fixed_seal(pk: bytes, plaintext: bytes, info: bytes) -> bytes:
        role = info.rsplit(b"|", 1)[1].decode()
        assert pk == keys[role]
        return reference_seal(pk, plaintext, info, EPHEMERAL[role])

    def recording_shard(encoding: Any, ctx: bytes, measurement: int, nonce: bytes) -> Any:
        out = real_shard(encoding, ctx, measurement, nonce)
        shards[encoding.key or ctx.rsplit(b"|", 1)[1].decode()] = {
            "measurement": measurement, "public_share": out.public_share.hex(),
            "leader_input_share": out.input_shares[0].hex(),
            "helper_input_share": out.input_shares[1].hex()}
        return out

    with ExitStack() as stack:
        stack.enter_context(mock.patch.object(client, "os", shim))
        stack.enter_context(mock.patch.object(vdaf, "os", shim))
        stack.enter_context(mock.patch.object(randomness, "SECURE", source))
        stack.enter_context(mock.patch.object(hpke, "seal", fixed_seal))
        stack.enter_context(mock.patch.object(vdaf, "shard", recording_shard))
        submission = client.build_upload(survey, answers)
    return {"name": name, "survey": survey.to_dict(), "answers": answers,
            "tape": [[hex(n), hex(v)] for n, v in source.tape],
            "ephemeral_keys": {k: v.hex() for k, v in EPHEMERAL.items()},
            "shards": shards, "body": submission.wire()}


def cases() -> list[dict[str, Any]]:
    out = []
    seed = 0
    for name, survey in surveys():
        for answers in answer_sets(survey):
            seed += 1
            out.append(build_case(name, survey, answers, seed))
    return out


def write_two_server_vectors(path: Path) -> dict[str, Any]:
    vectors = {"leader_private_key": LEADER_SK.hex(), "helper_private_key": HELPER_SK.hex(),
               "cases": cases()}
    path.write_text(json.dumps(vectors, indent=1) + "\n")
    return vectors
