"""The worked examples of docs/two-server.md's upload wire format, built by the real client.

Fixed inputs (TEST keys and randomness, never a server's or a report's): a three-question
two-server survey, one respondent's answers, the 16-byte report id, each key's Prio3 `rand`
and each role's HPKE ephemeral key. `build_example()` runs the client's own encoding, sharding
and sealing (client/two_server.py `seal_upload`) with that randomness, so the document's bytes
are what the client sends; tests/two_server/test_upload_wire_doc.py recomputes them from the
document's rules independently and compares. `build_example(skip=True)` is the second example:
skip logic's measurements (a multiselect question's "not asked" entry, an integer follow-up's
local [bit, number] pair, its local report drawn from a seeded source).

    .venv/bin/python -m support.upload_example [skip]  # (from tests/) prints it as JSON
"""

from __future__ import annotations

import hashlib
import json
from typing import Any
from unittest import mock

from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.two_server import encoding, hpke, vdaf
from ldpsurvey.shared.two_server.config import b64url

from support.hpke_reference import public_key, reference_seal

LEADER_SK = bytes.fromhex("0a" * 32)   # TEST keys: printed in a public document
HELPER_SK = bytes.fromhex("0b" * 32)
EPHEMERAL = {"leader": bytes.fromhex("1a" * 32), "helper": bytes.fromhex("1b" * 32)}
REPORT_ID = bytes.fromhex("00112233445566778899aabbccddeeff")
ANSWERS = {"smoker": True, "mood": "high", "hours": 7}


def example_survey() -> dict[str, Any]:
    return {
        "id": "example", "title": "Example", "version": 3, "collection": "two-server",
        "two_server": {"helper_url": "https://helper.example",
                       "helper_hpke_key": b64url(public_key(HELPER_SK)),
                       "leader_hpke_key": b64url(public_key(LEADER_SK)),
                       "min_batch_size": 100},
        "questions": [
            {"id": "smoker", "text": "Do you smoke?", "type": "binary", "central_epsilon": 1.0},
            {"id": "mood", "text": "Mood?", "type": "categorical", "central_epsilon": 1.0,
             "options": ["low", "mid", "high"]},
            {"id": "hours", "text": "Hours slept?", "type": "integer", "min": 0, "max": 12,
             "central_epsilon": 1.0},
        ],
    }


SKIP_ANSWERS = {"used": True, "which": ["cocaine", "ecstasy"], "days": 12}
LOCAL_SEED = 2026  # the seeded source of the example's local report (a real device: the CSPRNG)


def skip_example_survey() -> dict[str, Any]:
    data = example_survey()
    data.update(id="example-skip", version=1)
    follow = {"relevant": "used", "central_epsilon": 1.0}
    data["questions"] = [
        {"id": "used", "text": "Used any?", "type": "binary", "central_epsilon": 1.0},
        {"id": "which", "text": "Which?", "type": "multiselect",
         "options": ["cannabis", "cocaine", "ecstasy"], "max_selected": 2, **follow},
        {"id": "days", "text": "On how many days?", "type": "integer", "min": 0, "max": 30,
         "local_epsilon": 2.0, **follow}]
    return data


def rand_for(key: str, size: int) -> bytes:
    """A key's fixed Prio3 `rand` (SHA-256 counter blocks of the key; a real client draws it
    from the OS CSPRNG)."""
    out = b""
    counter = 0
    while len(out) < size:
        out += hashlib.sha256(f"example rand {key} {counter}".encode()).digest()
        counter += 1
    return out[:size]


def _measured(survey: Survey, answers: dict[str, Any]) -> tuple[dict[str, Any],
                                                                  dict[str, Any]]:
    """Per question its measurement, and the local reports drawn (seeded: TEST only)."""
    from ldpsurvey.shared.mechanisms import mechanism_for

    from support.sources import SeededSource

    indices, reports = {}, {}
    for q in survey.questions:
        if q.local_epsilon is None:
            indices[q.id] = encoding.question_index(q, answers[q.id])
            continue
        mechanism = mechanism_for(q)
        reports[q.id] = mechanism.validate_report(
            mechanism.perturb(answers[q.id], SeededSource(LOCAL_SEED)))
        indices[q.id] = encoding.report_measurement(q, reports[q.id])
    return indices, reports


def _vdaf_fields(enc: Any, prio3: Any) -> dict[str, Any]:
    if enc.kind == "asked_pair":
        return {"vdaf": prio3.name, "vdaf_id": [f"{prio3.bit.ID:#010x}",
                                                f"{prio3.number.ID:#010x}"],
                "max_measurement": enc.max_measurement, "offset": enc.offset}
    out: dict[str, Any] = {"vdaf": prio3.name, "vdaf_id": f"{prio3.ID:#010x}"}
    if enc.kind in ("histogram", "multihot"):
        out.update(length=enc.length, chunk_length=prio3.flp.valid.chunk_length)
    if enc.kind == "multihot":
        out["max_weight"] = enc.max_measurement
    if enc.kind == "sum":
        out["max_measurement"] = enc.max_measurement
    return out


def build_example(skip: bool = False) -> dict[str, Any]:
    from ldpsurvey.client.two_server import seal_upload

    survey = Survey.from_dict(skip_example_survey() if skip else example_survey())
    answers = SKIP_ANSWERS if skip else ANSWERS
    encs = encoding.encodings(survey)
    indices, reports = _measured(survey, answers)
    keys: dict[str, Any] = {}
    shards = {}
    for key, measurement in encoding.measurements(survey, indices).items():
        enc = encs[key]
        prio3 = vdaf.instance(enc)
        rand = rand_for(key, prio3.RAND_SIZE)
        with mock.patch.object(vdaf.os, "urandom", lambda n, rand=rand: rand):
            shards[key] = vdaf.shard(enc, encoding.ctx(survey, key), measurement, REPORT_ID)
        keys[key] = {**_vdaf_fields(enc, prio3),
                     **({"local_report": reports[key]} if key in reports else {}),
                     "ctx": encoding.ctx(survey, key).decode(), "measurement": measurement,
                     "rand": rand.hex(), "public_share": shards[key].public_share.hex(),
                     "leader_input_share": shards[key].input_shares[0].hex(),
                     "helper_input_share": shards[key].input_shares[1].hex()}
    plaintexts: dict[str, str] = {}

    def fixed_seal(pk: bytes, plaintext: bytes, info: bytes) -> bytes:
        role = info.rsplit(b"|", 1)[1].decode()
        plaintexts[role] = plaintext.decode()
        return reference_seal(pk, plaintext, info, EPHEMERAL[role])

    with mock.patch.object(hpke, "seal", fixed_seal):
        body = seal_upload(survey, REPORT_ID, shards)
    return {
        "note": "TEST keys and randomness: never use them for a real survey or report",
        "survey": survey.to_dict(), "answers": answers, "report_id": REPORT_ID.hex(),
        "leader_private_key": LEADER_SK.hex(), "helper_private_key": HELPER_SK.hex(),
        "ephemeral_private_keys": {role: key.hex() for role, key in EPHEMERAL.items()},
        "keys": keys,
        "info": {role: hpke.info(survey.id, survey.version, REPORT_ID, role).hex()
                 for role in hpke.ROLES},
        "sealed_plaintext": plaintexts, "body": body}


if __name__ == "__main__":
    import sys

    print(json.dumps(build_example(skip=sys.argv[1:] == ["skip"]), indent=1))
