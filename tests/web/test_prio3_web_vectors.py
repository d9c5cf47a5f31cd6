"""The page's Prio3 (client/web/js/prio3/) shards exactly as the draft: every vector, in Chromium.

The same draft-irtf-cfrg-vdaf-20 vectors the Python library passes (tests/data/vdaf/draft-20,
source and licence in its README): for every `shard` operation of every Prio3 vector the JS
public share and each input share must equal the vector's bytes, plus the XofTurboShake128
vector. The page never verifies, so the verification operations are the Python side's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

VECTORS = Path(__file__).parents[1] / "data" / "vdaf" / "draft-20"

SHARD_ALL = """async ([root, vectors]) => {
  const V = await import(root + "js/prio3/vdaf.js");
  const F = await import(root + "js/prio3/field.js");
  const hex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  const bytes = (h) => Uint8Array.from(h.match(/../g) || [], (x) => parseInt(x, 16));
  const instance = (name, v) => {
    const kind = name.split("_")[0];
    const o = { shares: v.shares };
    if (kind === "Prio3Count") return V.prio3Count(o);
    if (kind === "Prio3Sum") return V.prio3Sum(v.max_measurement, o);
    if (kind === "Prio3Histogram") return V.prio3Histogram(v.length, v.chunk_length, o);
    if (kind === "Prio3SumVec") {
      return V.prio3SumVec(v.length, v.max_measurement, v.chunk_length, o);
    }
    if (kind === "Prio3SumVecWithMultiproof") {
      return V.prio3SumVecMultiproof(F.Field64, 3, v.length, v.max_measurement, v.chunk_length, o);
    }
    if (kind === "Prio3MultihotCountVec") {
      return V.prio3MultihotCountVec(v.length, v.max_weight, v.chunk_length, o);
    }
    throw new Error("unknown instance " + name);
  };
  const failures = [];
  let checked = 0;
  for (const [name, v] of Object.entries(vectors)) {
    const vdaf = instance(name, v);
    for (const op of v.operations) {
      if (op.operation !== "shard") continue;
      const r = v.reports[op.report_index];
      try {
        const [pub, shares] = vdaf.shard(bytes(v.ctx), r.measurement, bytes(r.nonce),
                                         bytes(r.rand));
        if (hex(pub) !== r.public_share) throw new Error("public share differs");
        if (shares.length !== r.input_shares.length) throw new Error("share count differs");
        shares.forEach((s, j) => {
          if (hex(s) !== r.input_shares[j]) throw new Error(`input share ${j} differs`);
        });
        checked += 1;
      } catch (e) {
        failures.push(`${name} report ${op.report_index}: ${e.message}`);
      }
    }
  }
  return { failures, checked };
}"""

XOF = """async ([root, v]) => {
  const X = await import(root + "js/prio3/xof.js");
  const F = await import(root + "js/prio3/field.js");
  const hex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  const bytes = (h) => Uint8Array.from(h.match(/../g) || [], (x) => parseInt(x, 16));
  const seed = X.XofTurboShake128.deriveSeed(bytes(v.seed), bytes(v.dst), bytes(v.binder));
  const vec = X.XofTurboShake128.expandIntoVec(F.Field128, bytes(v.seed), bytes(v.dst),
    bytes(v.binder), Number(v.length));
  return [hex(seed), hex(F.Field128.encodeVec(vec))];
}"""


def _vectors() -> dict[str, Any]:
    return {p.stem: json.loads(p.read_text()) for p in sorted(VECTORS.glob("Prio3*.json"))}


def test_every_shard_operation_of_every_vector(js_page: Any, web_root_url: str) -> None:
    vectors = _vectors()
    assert len(vectors) == 24  # the set the Python library passes
    expected = sum(op["operation"] == "shard" for v in vectors.values() for op in v["operations"])
    result = js_page.evaluate(SHARD_ALL, [web_root_url, vectors])
    assert result["failures"] == []
    assert result["checked"] == expected > 20


def test_xof_vector(js_page: Any, web_root_url: str) -> None:
    v = json.loads((VECTORS / "XofTurboShake128.json").read_text())
    seed, vec = js_page.evaluate(XOF, [web_root_url, v])
    assert seed == v["derived_seed"]
    assert vec == v["expanded_vec_field128"]


def test_invalid_measurements_are_refused_before_sharding(js_page: Any,
                                                          web_root_url: str) -> None:
    refused = js_page.evaluate("""async (root) => {
      const V = await import(root + "js/prio3/vdaf.js");
      const F = await import(root + "js/prio3/flp.js");
      const nonce = new Uint8Array(16);
      const cases = [[V.prio3Count(), 2], [V.prio3Count(), 0.5], [V.prio3Sum(100), 101],
                     [V.prio3Sum(100), -1], [V.prio3Histogram(16, 4), 16],
                     [V.prio3Histogram(16, 4), "3"]];
      return cases.map(([vdaf, m]) => {
        try {
          vdaf.shard(new Uint8Array(0), m, nonce, new Uint8Array(vdaf.RAND_SIZE));
          return "sharded";
        } catch (e) {
          return e instanceof F.MeasurementError ? "refused" : e.message;
        }
      });
    }""", web_root_url)
    assert refused == ["refused"] * 6
