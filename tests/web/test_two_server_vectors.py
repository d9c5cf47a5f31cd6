"""The page builds two-server uploads exactly as the Python client: cross-vectors in Chromium.

tests/web/two_server_vectors.py records the real Python client (`build_upload`) on the sample
survey in two-server mode and on a survey with a crosstab, an optional integer and local ε0
randomization; the page's upload.js must request the same draws in the same order and produce
the same body (public shares, sealed halves with the fixed test ephemeral keys, submission id).
With the page's default randomness (crypto.getRandomValues, fresh ephemeral keys) the Python
leader/helper side opens both halves and Prio3 preparation accepts every key's proof and
recovers the answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.two_server import encoding, hpke, upload, vdaf
from support.hpke_reference import public_key, reference_context, reference_seal
from two_server_vectors import (
    EPHEMERAL,
    HELPER_SK,
    LEADER_SK,
    surveys,
    write_two_server_vectors,
)

VECTORS_FILE = Path(__file__).with_name("two_server_vectors.json")
RFC = Path(__file__).parents[1] / "data" / "hpke" / "rfc9180-base-x25519-sha256-aes128gcm.json"

REPLAY = """async ([root, cases]) => {
  const U = await import(root + "js/twoserver/upload.js");
  const R = await import(root + "js/tapes.js");
  const { canonicalJson } = await import(root + "js/mechanisms.js");
  const bytes = (h) => Uint8Array.from(h.match(/../g) || [], (x) => parseInt(x, 16));
  const failures = [];
  for (const [i, c] of cases.entries()) {
    try {
      const tape = R.tapeSource(c.tape);
      const eph = c.ephemeral_keys;
      const keys = { leader: bytes(eph.leader), helper: bytes(eph.helper) };
      const up = await U.buildUpload(c.survey, c.answers, { source: tape, ephemeralKeys: keys });
      if (tape.remaining) throw new Error(`${tape.remaining} recorded draws left unused`);
      for (const [key, s] of Object.entries(c.shards)) {
        if (up.body.public_shares[key] === undefined) throw new Error(`no public share for ${key}`);
      }
      const [js, py] = [up.body, c.body].map(canonicalJson);
      if (js !== py) throw new Error(`body ${js.slice(0, 300)}\\nPython: ${py.slice(0, 300)}`);
    } catch (e) {
      failures.push(`case ${i} (${c.name}, ${JSON.stringify(c.answers)}): ${e.message}`);
    }
  }
  return failures;
}"""


@pytest.fixture(scope="module")
def vectors() -> dict[str, Any]:
    return write_two_server_vectors(VECTORS_FILE)


def test_reference_seal_is_rfc9180() -> None:
    (v,) = json.loads(RFC.read_text())
    pk_r, info = bytes.fromhex(v["pkRm"]), bytes.fromhex(v["info"])
    enc, key, base_nonce = reference_context(pk_r, info, bytes.fromhex(v["skEm"]))
    assert (enc.hex(), key.hex(), base_nonce.hex()) == (v["enc"], v["key"], v["base_nonce"])
    for e in v["encryptions"]:
        sealed = reference_seal(pk_r, bytes.fromhex(e["pt"]), info, bytes.fromhex(v["skEm"]),
                                bytes.fromhex(e["aad"]), e["sequence_number"])
        assert sealed[32:].hex() == e["ct"]


def test_reference_seal_opens_with_the_servers_hpke() -> None:
    key = X25519PrivateKey.from_private_bytes(HELPER_SK)
    info = hpke.info("s", 1, bytes(16), "helper")
    sealed = reference_seal(public_key(HELPER_SK), b"half", info, EPHEMERAL["helper"])
    assert hpke.open_sealed(key, sealed, info) == b"half"


def test_vectors_cover_every_encoding(vectors: dict[str, Any]) -> None:
    cases = vectors["cases"]
    kinds = set()
    for c in cases:
        survey = Survey.from_dict(c["survey"])
        kinds |= {e.kind for k, e in encoding.encodings(survey).items() if k in c["shards"]}
    assert kinds == {"count", "histogram", "sum", "multihot", "asked_pair"}
    assert any(k.startswith("crosstab:") for c in cases for k in c["shards"])
    assert any(q.get("local_epsilon") for c in cases for q in c["survey"]["questions"])
    assert any(q.get("local_epsilon") and q["type"] == "integer"  # a clipped local report
               for c in cases for q in c["survey"]["questions"])
    assert any("hours" not in c["answers"] for c in cases)  # an optional question skipped
    assert {c["name"] for c in cases} == {"sample", "pulse", "pulse-local", "hours-local",
                                          "checks-local", "hidden-sets"}
    hidden = [c for c in cases if c["name"] == "hidden-sets"]  # skip logic: both branches
    assert {c["answers"]["which"] == "(not asked)" for c in hidden} == {True, False}


def test_chunk_lengths_are_pythons(js_page: Any, web_root_url: str) -> None:
    from ldpsurvey.shared.prio3 import best_chunk_length

    js = js_page.evaluate("""async (root) => {
      const U = await import(root + "js/twoserver/upload.js");
      return Array.from({ length: 300 }, (_, i) => U.bestChunkLength(i + 1));
    }""", web_root_url)
    assert js == [best_chunk_length(n) for n in range(1, 301)]


def test_js_reproduces_every_python_upload(vectors: dict[str, Any], js_page: Any,
                                           web_root_url: str) -> None:
    assert js_page.evaluate(REPLAY, [web_root_url, vectors["cases"]]) == []


PAGE_UPLOADS = {
    "sample": ({"rx_misuse": True, "cannabis_frequency": "weekly", "drinks_last_week": 30,
                "substances": ["stimulants", "cocaine"]},
               {"rx_misuse": [1], "cannabis_frequency": [0, 0, 0, 1, 0],
                "drinks_last_week": [30], "substances": [1, 0, 0, 0, 1]}),
    # skip logic: "not asked" as the last entry; the local reports are random (proofs only)
    "hidden-sets": ({"used": False, "which": "(not asked)", "padded": "(not asked)",
                     "bits": "(not asked)", "days": "(not asked)"},
                    {"used": [0], "which": [0, 0, 0, 0, 0, 1]}),
}


@pytest.mark.parametrize("name", PAGE_UPLOADS)
def test_a_page_upload_with_os_randomness_verifies_on_the_servers(js_page: Any,
                                                                  web_root_url: str,
                                                                  name: str) -> None:
    survey = dict(surveys())[name]
    answers, expected = PAGE_UPLOADS[name]
    body = js_page.evaluate("""async ([root, survey, answers]) => {
      const U = await import(root + "js/twoserver/upload.js");
      return (await U.buildUpload(survey, answers)).body;
    }""", [web_root_url, survey.to_dict(), answers])
    encs = encoding.encodings(survey)
    parsed = upload.parse_upload(body, set(encs))
    halves = [upload.open_half(parsed.leader_share if role == "leader" else parsed.helper_share,
                               X25519PrivateKey.from_private_bytes(sk), survey.id,
                               survey.version, parsed.report_id, role,
                               set(parsed.public_shares))
              for role, sk in (("leader", LEADER_SK), ("helper", HELPER_SK))]
    verify_key = bytes(32)
    for key, enc in encs.items():
        ctx = encoding.ctx(survey, key)
        states, prep_shares = [], []
        for agg_id in (vdaf.LEADER, vdaf.HELPER):
            state, share = vdaf.prep_init(enc, verify_key, ctx, agg_id, parsed.report_id,
                                          parsed.public_shares[key], halves[agg_id][key])
            states.append(state)
            prep_shares.append(share)
        msg = vdaf.combine(enc, ctx, prep_shares)  # the proof holds
        outs = [vdaf.finish(enc, ctx, s, msg) for s in states]
        total = [(a + b) % vdaf.modulus(enc) for a, b in zip(*outs, strict=True)]
        if key in expected:
            assert total == expected[key], key


def test_js_writes_the_bytes_python_signs_for_two_server_surveys(js_page: Any,
                                                                 web_root_url: str) -> None:
    """canonical.js also covers the two-server keys (collection, two_server, central/local ε)."""
    from ldpsurvey.shared.survey import canonical_json

    texts = [canonical_json(s.to_dict()).decode() for _, s in surveys()]
    with_leader = json.loads(texts[-1])
    with_leader["id"] = "with-leader"
    with_leader["two_server"].update(leader_url="https://leader.example", delta=1e-9)
    texts.append(canonical_json(Survey.from_dict(with_leader).to_dict()).decode())
    got = js_page.evaluate("""async ([root, texts]) => {
      const C = await import(root + "js/canonical.js");
      return texts.map((t) => C.canonicalSurveyText(JSON.parse(t)));
    }""", [web_root_url, texts])
    assert got == texts
    assert '"leader_url":"https://leader.example"' in texts[-1] and '"delta":1e-09' in texts[-1]


ACCOUNTING = """async ([root, cases]) => {
  const F = await import(root + "js/twoserver/flow.js");
  const T = await import(root + "js/trust.js");
  return cases.map((c) => ({
    charges: F.charges(c.survey, new Map(Object.entries(c.answers))).map(
      (x) => [x.question, x.epsilon, x.local_epsilon]),
    views: T.policyViews(c.survey).map((v) => v.questions.map((q) => [q.id, q.epsilon])),
  }));
}"""


def test_the_page_charges_and_limits_as_the_python_client(vectors: dict[str, Any],
                                                          js_page: Any,
                                                          web_root_url: str) -> None:
    """Every release an upload enters is charged (a declared crosstab is one of its own), and
    the ε limit sees the survey the same way (client/budget.py cost_views), on both sides."""
    from ldpsurvey.client.budget import cost_views
    from ldpsurvey.client.two_server import build_upload

    cases = vectors["cases"]
    js = js_page.evaluate(ACCOUNTING, [web_root_url, cases])
    assert any(c["survey"].get("crosstabs") for c in cases)
    for case, page in zip(cases, js, strict=True):
        survey = Survey.from_dict(case["survey"])
        charges = build_upload(survey, case["answers"]).charges
        # local ε0: Python books the mechanism's exact realized ε, the page the declared one
        # (at most 1e-6 above it: shared/mechanisms realize ε from below)
        assert page["charges"] == [[c.question, c.epsilon, pytest.approx(
            c.extra["local_epsilon"], abs=1e-6) if isinstance(c.extra["local_epsilon"], float)
            else c.extra["local_epsilon"]] for c in charges], case["name"]
        assert page["views"] == [[list(item) for item in view]
                                 for view in cost_views(survey)], case["name"]
