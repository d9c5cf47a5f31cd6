"""docs/two-server.md specifies the two-server upload byte for byte (issue 32): its worked
example is recomputed here from the document's rules, written out in this file (labels,
separators, encodings, the chunk-length rule, canonical JSON, HPKE with the RFC 9180
reference in tests/support), and compared with the example file, the document's inline bytes
and what the real client builds; the leader accepts the example body and both servers'
halves open and prepare to the documented measurements."""

from __future__ import annotations

import base64
import json
import math
import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from ldpsurvey.server.app import create_app
from ldpsurvey.server.auth import create_token
from ldpsurvey.server.store import open_store
from ldpsurvey.shared.prio3 import best_chunk_length, prio3_count, prio3_histogram, prio3_sum
from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.two_server import encoding, upload, vdaf
from support.clients import signed
from support.hpke_reference import public_key, reference_seal
from support.upload_example import build_example

DOCS = Path(__file__).parents[2] / "docs"
DOC = (DOCS / "two-server.md").read_text()
EXAMPLE = json.loads((DOCS / "two-server-upload-example.json").read_text())
CTX_LABEL = "ldpsurvey two-server v1"
INFO_LABEL = "ldpsurvey two-server input share v1"


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def joined(*parts: str) -> bytes:
    """The document's `a | b | c`: UTF-8 parts joined by the byte 0x7C."""
    return b"\x7c".join(part.encode("utf-8") for part in parts)


def chunk_length(length: int) -> int:
    """The document's rule: the c in 1..L with the shortest proof 2c + 2(P - 1) + 1, P the
    smallest power of two greater than ceil(L/c); ties to the smaller c."""
    def proof(c: int) -> int:
        calls = -(-length // c)
        power = 1
        while power <= calls:
            power *= 2
        return 2 * c + 2 * (power - 1) + 1

    return min(range(1, length + 1), key=lambda c: (proof(c), c))


def measured(question: dict[str, Any], answer: Any) -> tuple[Any, int]:
    """(Prio3 instance, measurement) of a question without local ε, by the document's table."""
    if question["type"] == "binary":
        return prio3_count(), int(answer)
    if question["type"] == "integer":
        return prio3_sum(question["max"] - question["min"]), answer - question["min"]
    k = len(question["options"])
    return prio3_histogram(k, chunk_length(k)), question["options"].index(answer)


def canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False).encode("utf-8")


def test_the_example_file_is_what_the_client_builds() -> None:
    assert build_example() == EXAMPLE


def test_the_example_recomputes_from_the_documented_rules() -> None:
    survey, answers = EXAMPLE["survey"], EXAMPLE["answers"]
    sid, version = survey["id"], str(survey["version"])
    report_id = bytes.fromhex(EXAMPLE["report_id"])
    halves: dict[str, dict[str, str]] = {"leader": {}, "helper": {}}
    public: dict[str, str] = {}
    for question in survey["questions"]:
        key = question["id"]
        listed = EXAMPLE["keys"][key]
        prio3, measurement = measured(question, answers[key])
        ctx = joined(CTX_LABEL, sid, version, key)
        assert (prio3.name, f"{prio3.ID:#010x}", measurement, ctx.decode()) == (
            listed["vdaf"], listed["vdaf_id"], listed["measurement"], listed["ctx"])
        public_share, shares = prio3.shard(ctx, measurement, report_id,
                                           bytes.fromhex(listed["rand"]))
        encoded = [prio3.encode_input_share(i, share) for i, share in enumerate(shares)]
        assert prio3.encode_public_share(public_share).hex() == listed["public_share"]
        assert [e.hex() for e in encoded] == [listed["leader_input_share"],
                                              listed["helper_input_share"]]
        public[key] = b64url(prio3.encode_public_share(public_share))
        halves["leader"][key], halves["helper"][key] = (b64url(e) for e in encoded)
    sealed = {}
    for role in ("leader", "helper"):
        plaintext = canonical(halves[role])
        assert plaintext.decode() == EXAMPLE["sealed_plaintext"][role]
        info = joined(INFO_LABEL, sid, version, report_id.hex(), role)
        assert info.hex() == EXAMPLE["info"][role]
        recipient = public_key(bytes.fromhex(EXAMPLE[f"{role}_private_key"]))
        assert b64url(recipient) == survey["two_server"][f"{role}_hpke_key"]
        sealed[role] = b64url(reference_seal(
            recipient, plaintext, info, bytes.fromhex(EXAMPLE["ephemeral_private_keys"][role])))
    assert EXAMPLE["body"] == {"submission_id": str(uuid.UUID(bytes=report_id)),
                               "version": survey["version"], "public_shares": public,
                               "leader_share": sealed["leader"],
                               "helper_share": sealed["helper"]}


def test_the_documents_inline_bytes_are_the_examples() -> None:
    section = DOC[DOC.index("### Worked example"):]
    section = section[:section.index("\n## ")]
    lines = {line.strip() for line in section.splitlines()}
    mood_ctx = EXAMPLE["keys"]["mood"]["ctx"]
    helper_info = bytes.fromhex(EXAMPLE["info"]["helper"])
    assert {mood_ctx, helper_info.decode(), helper_info.hex(),
            EXAMPLE["sealed_plaintext"]["helper"]} <= lines
    body = re.search(r"```json\n(.*?)\n```", section, re.S)
    assert body is not None and json.loads(body.group(1)) == EXAMPLE["body"]
    assert EXAMPLE["report_id"] in section
    # the labels and separators the rules state
    assert f'"{CTX_LABEL}" | survey id | version | key' in DOC
    assert f'"{INFO_LABEL}" | survey id | version | report id | role' in DOC


def test_the_documented_chunk_lengths_follow_the_rule() -> None:
    listed = re.search(r"For L = 2\.\.20: ([0-9, ]+); for L = 50: (\d+); L = 100: (\d+); "
                       r"L = 1000: (\d+)\.", " ".join(DOC.split()))
    assert listed is not None
    small = [int(x) for x in listed.group(1).split(",")]
    assert small == [chunk_length(n) for n in range(2, 21)]
    assert [int(listed.group(i)) for i in (2, 3, 4)] == [chunk_length(n)
                                                         for n in (50, 100, 1000)]
    assert all(chunk_length(n) == best_chunk_length(n) for n in range(1, 400))


@pytest.fixture
def leader(tmp_path: Path) -> Any:
    key_file = tmp_path / "leader-hpke.key"
    key_file.write_text(b64url(bytes.fromhex(EXAMPLE["leader_private_key"])) + "\n")
    app = create_app({"DATABASE": str(tmp_path / "leader.db"), "HPKE_KEY": str(key_file),
                      "TESTING": True})
    db = open_store(tmp_path / "leader.db")
    try:
        token = create_token(db, "doc")[1]
    finally:
        db.close()
    client = app.test_client()
    body = signed(EXAMPLE["survey"], Ed25519PrivateKey.generate())
    body.pop("status")
    assert client.post("/api/surveys", json=body,
                       headers={"Authorization": f"Bearer {token}"}).status_code == 201
    return client


def prepared_totals(example: dict[str, Any], survey: Survey) -> dict[str, tuple[Any, list[int]]]:
    """Per key of a documented upload: (its encoding, the sum of the two servers' output
    shares), after each half is opened with its documented private key and both prepare."""
    encs = encoding.encodings(survey)
    parsed = upload.parse_upload(example["body"], set(encs))
    opened = [upload.open_half(
        parsed.leader_share if role == "leader" else parsed.helper_share,
        X25519PrivateKey.from_private_bytes(bytes.fromhex(example[f"{role}_private_key"])),
        survey.id, survey.version, parsed.report_id, role, set(parsed.public_shares))
        for role in ("leader", "helper")]
    totals = {}
    for key, enc in encs.items():
        ctx = encoding.ctx(survey, key)
        states, shares = zip(*(vdaf.prep_init(enc, bytes(32), ctx, agg, parsed.report_id,
                                              parsed.public_shares[key], opened[agg][key])
                               for agg in (vdaf.LEADER, vdaf.HELPER)), strict=True)
        message = vdaf.combine(enc, ctx, list(shares))
        outputs = [vdaf.finish(enc, ctx, state, message) for state in states]
        totals[key] = (enc, [(a + b) % vdaf.modulus(enc) for a, b in zip(*outputs, strict=True)])
    return totals


def test_the_leader_accepts_the_example_and_both_halves_prepare(leader: Any) -> None:
    response = leader.post("/api/surveys/example/two-server/uploads", json=EXAMPLE["body"])
    assert response.status_code == 201, response.get_json()
    assert response.get_json() == {"submission_id": EXAMPLE["body"]["submission_id"],
                                   "duplicate": False}
    survey = Survey.from_dict(EXAMPLE["survey"])
    for key, (enc, total) in prepared_totals(EXAMPLE, survey).items():
        expected = EXAMPLE["keys"][key]["measurement"]
        assert total == ([1 if i == expected else 0 for i in range(enc.length)]
                         if enc.kind == "histogram" else [expected])


def test_the_openapi_schema_is_the_documented_body() -> None:
    import jsonschema_rs  # schemathesis's validator (a test dependency through it)
    from ldpsurvey.server.openapi import openapi_document

    document = openapi_document()
    operation = document["paths"]["/api/surveys/{survey_id}/two-server/uploads"]["post"]
    schema = {**operation["requestBody"]["content"]["application/json"]["schema"],
              "components": document["components"]}
    validator = jsonschema_rs.Draft202012Validator(schema)
    assert validator.is_valid(EXAMPLE["body"])
    for change in ({"version": 0}, {"version": 2 ** 31}, {"submission_id": "X"},
                   {"public_shares": {}}, {"public_shares": {"smoker": "%%%"}},
                   {"public_shares": {"a:b": ""}}, {"leader_share": "%%%"}, {"extra": 1}):
        assert not validator.is_valid({**EXAMPLE["body"], **change}), change
    body = dict(EXAMPLE["body"])
    del body["helper_share"]
    assert not validator.is_valid(body)


# --- the second example: skip logic's measurements ----------------------------------------------

SKIP_EXAMPLE = json.loads((DOCS / "two-server-upload-example-skip.json").read_text())


def test_the_skip_example_file_is_what_the_client_builds() -> None:
    assert build_example(skip=True) == SKIP_EXAMPLE


def test_the_skip_examples_pair_recomputes_from_the_documented_rules() -> None:
    """An integer follow-up with ε0 (asked_geometric's [b, y]): Prio3Count of b then
    Prio3Sum(R) of y clipped to [lo, lo + R] minus lo, the same nonce and context, `rand` the
    Count's 64 bytes then the Sum's, the shares the Count's bytes followed by the Sum's; and
    the multiselect follow-up's last "not asked" entry is 0 (it applied)."""
    from ldpsurvey.shared.mechanisms import mechanism_for

    survey = Survey.from_dict(SKIP_EXAMPLE["survey"])
    sid, version = survey.id, str(survey.version)
    report_id = bytes.fromhex(SKIP_EXAMPLE["report_id"])
    listed = SKIP_EXAMPLE["keys"]["days"]
    mechanism = mechanism_for(survey.question("days"))
    alpha = math.exp(-float(mechanism.rate))
    c = next(c for c in range(10**6) if alpha ** (c + 1) / (1 + alpha) <= 1e-6)
    lo, hi = int(mechanism.low) - c, int(mechanism.high) + c
    b, y = listed["local_report"]
    measurement = [b, min(max(y, lo), hi) - lo]
    assert (listed["offset"], listed["max_measurement"], listed["measurement"]) == (
        lo, hi - lo, measurement)
    count, total = prio3_count(), prio3_sum(hi - lo)
    assert (listed["vdaf_id"], listed["vdaf"]) == (
        [f"{count.ID:#010x}", f"{total.ID:#010x}"], f"{count.name}+{total.name}")
    ctx = joined(CTX_LABEL, sid, version, "days")
    rand = bytes.fromhex(listed["rand"])
    assert len(rand) == 64 + 64 and ctx.decode() == listed["ctx"]
    parts = [prio3.shard(ctx, m, report_id, r)
             for prio3, m, r in ((count, b, rand[:64]), (total, measurement[1], rand[64:]))]
    public = b"".join(p.encode_public_share(pub) for p, (pub, _) in zip((count, total), parts,
                                                                       strict=True))
    shares = [b"".join(p.encode_input_share(i, sh[i]) for p, (_, sh) in zip(
        (count, total), parts, strict=True)) for i in range(2)]
    assert public.hex() == listed["public_share"]
    assert [s.hex() for s in shares] == [listed["leader_input_share"],
                                         listed["helper_input_share"]]
    assert json.loads(SKIP_EXAMPLE["sealed_plaintext"]["leader"])["days"] == b64url(shares[0])
    assert SKIP_EXAMPLE["keys"]["which"]["measurement"] == [0, 1, 1, 0]  # + "not asked" = 0


def test_the_leader_accepts_the_skip_example_and_the_pair_prepares(tmp_path: Path) -> None:
    key_file = tmp_path / "leader-hpke.key"
    key_file.write_text(b64url(bytes.fromhex(SKIP_EXAMPLE["leader_private_key"])) + "\n")
    app = create_app({"DATABASE": str(tmp_path / "leader.db"), "HPKE_KEY": str(key_file),
                      "TESTING": True})
    db = open_store(tmp_path / "leader.db")
    try:
        token = create_token(db, "doc")[1]
    finally:
        db.close()
    client = app.test_client()
    body = signed(SKIP_EXAMPLE["survey"], Ed25519PrivateKey.generate())
    body.pop("status")
    auth = {"Authorization": f"Bearer {token}"}
    assert client.post("/api/surveys", json=body, headers=auth).status_code == 201
    survey = Survey.from_dict(SKIP_EXAMPLE["survey"])
    response = client.post(f"/api/surveys/{survey.id}/two-server/uploads",
                           json=SKIP_EXAMPLE["body"])
    assert response.status_code == 201, response.get_json()
    for key, (enc, total) in prepared_totals(SKIP_EXAMPLE, survey).items():
        expected = SKIP_EXAMPLE["keys"][key]["measurement"]
        if enc.kind == "asked_pair":  # the servers scale the bit's share (noise split)
            expected = [enc.scale * expected[0], expected[1]]
        assert total == (expected if isinstance(expected, list) else [expected]), key
