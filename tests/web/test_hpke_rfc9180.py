"""The page's HPKE (client/web/js/hpke.js) in Chromium: RFC 9180's vector, and Python opens it.

- RFC 9180 A.1.1 (tests/data/hpke/, base mode, X25519 / HKDF-SHA256 / AES-128-GCM): with the
  vector's ephemeral key injected, enc and every ciphertext (sequence numbers 0..256) match.
- Without an injected key every seal uses a fresh ephemeral key (two seals differ), and
  shared/two_server/hpke.py opens what the page sealed with the survey's info string; another
  info (survey, report or role) or a flipped byte does not open.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from ldpsurvey.shared.two_server import hpke

VECTORS = Path(__file__).parents[1] / "data" / "hpke" / "rfc9180-base-x25519-sha256-aes128gcm.json"

RFC = """async ([root, v]) => {
  const H = await import(root + "js/hpke.js");
  const hex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  const bytes = (h) => Uint8Array.from(h.match(/../g) || [], (x) => parseInt(x, 16));
  const ctx = await H.setupBaseS(bytes(v.pkRm), bytes(v.info),
                                 { ephemeralPrivateKey: bytes(v.skEm) });
  const out = { enc: hex(ctx.enc), cts: {} };
  let seq = 0;
  for (const e of v.encryptions) {
    while (seq < e.sequence_number) { await ctx.seal(new Uint8Array(0), new Uint8Array(0)); seq++; }
    out.cts[e.sequence_number] = hex(await ctx.seal(bytes(e.aad), bytes(e.pt)));
    seq++;
  }
  return out;
}"""

SEAL = """async ([root, pk, info, pt]) => {
  const H = await import(root + "js/hpke.js");
  const b64 = (b) => btoa(String.fromCharCode(...b));
  const unb64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
  const te = new TextEncoder();
  const sealed = [];
  for (let i = 0; i < 2; i++) {
    sealed.push(b64(await H.seal(unb64(pk), te.encode(info), te.encode(pt))));
  }
  return sealed;
}"""


def test_rfc9180_base_vector(js_page: Any, web_root_url: str) -> None:
    (v,) = json.loads(VECTORS.read_text())
    assert (v["mode"], v["kem_id"], v["kdf_id"], v["aead_id"]) == (0, 0x20, 1, 1)
    got = js_page.evaluate(RFC, [web_root_url, v])
    assert got["enc"] == v["enc"] == v["pkEm"]
    assert got["cts"] == {str(e["sequence_number"]): e["ct"] for e in v["encryptions"]}
    assert len(got["cts"]) == 6


def test_python_opens_what_the_page_sealed(js_page: Any, web_root_url: str) -> None:
    key = X25519PrivateKey.generate()
    pk = base64.b64encode(hpke.public_bytes(key)).decode()
    report_id = bytes(range(16))
    info = hpke.info("wellbeing-2026", 3, report_id, "helper")
    plaintext = '{"q1":"AAEC"}'
    sealed = [base64.b64decode(s) for s in js_page.evaluate(
        SEAL, [web_root_url, pk, info.decode(), plaintext])]
    assert sealed[0] != sealed[1]  # a fresh ephemeral key per seal
    for blob in sealed:
        assert len(blob) == hpke.ENC_SIZE + len(plaintext) + hpke.TAG_SIZE
        assert hpke.open_sealed(key, blob, info) == plaintext.encode()
    others = [hpke.info("other", 3, report_id, "helper"), hpke.info("wellbeing-2026", 4,
              report_id, "helper"), hpke.info("wellbeing-2026", 3, bytes(16), "helper"),
              hpke.info("wellbeing-2026", 3, report_id, "leader")]
    for other in others:
        with pytest.raises(hpke.HpkeError):
            hpke.open_sealed(key, sealed[0], other)
    flipped = bytearray(sealed[0])
    flipped[40] ^= 1
    with pytest.raises(hpke.HpkeError):
        hpke.open_sealed(key, bytes(flipped), info)


def test_a_malformed_key_is_refused(js_page: Any, web_root_url: str) -> None:
    refused = js_page.evaluate("""async (root) => {
      const H = await import(root + "js/hpke.js");
      try {
        await H.seal(new Uint8Array(31), new Uint8Array(0), new Uint8Array(1));
        return "sealed";
      } catch (e) { return e instanceof H.HpkeError ? "refused" : e.message; }
    }""", web_root_url)
    assert refused == "refused"
