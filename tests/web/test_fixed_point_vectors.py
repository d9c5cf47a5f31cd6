"""The page measures a number on a grid exactly as shared/two_server/fixed_point.py: vectors in
Chromium.

Python writes, per grid (mean, bins, both, hidden follow-ups; splits from the even one to the
cube-root one), its encoding, the measurement of every grid index (a sample on a long grid) and
of "not asked", and the shard of each measurement from a fixed nonce and `rand`
(shared/two_server/vdaf.py's instance: Prio3Sum, Prio3Histogram, or the Histogram + SumVec pair,
each part a draft-20 instance whose own vectors tests/web/test_prio3_web_vectors.py replays).
twoserver/fixed_point.js and upload.js's instanceOf must give the same encoding, measurements
and bytes.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ldpsurvey.shared.two_server import vdaf
from ldpsurvey.shared.two_server.encoding import Encoding
from ldpsurvey.shared.two_server.fixed_point import Grid, grid_encoding, grid_measurement

GRIDS = [  # origin, step, points, edges, mean, not asked
    ("0", "10", 2001, (), True, False),
    ("-2.3", "0.1", 57, ("-2.3", "-1", "0", "1.25", "3.3"), True, False),
    ("-2.3", "0.1", 57, ("-2.3", "-1", "0", "1.25", "3.3"), False, False),
    ("-2.3", "0.1", 57, ("-2.3", "-1", "0", "1.25", "3.3"), False, True),
    ("-2.3", "0.1", 57, ("-2.3", "-1", "0", "1.25", "3.3"), True, True),
    ("0", "0.25", 5, (), True, True),
    ("1/3", "1/3", 2, ("1/3", "2/3"), True, True),
    ("0", "1", 1000, (), True, True),
]

REPLAY = """async ([root, cases]) => {
  const G = await import(root + "js/twoserver/fixed_point.js");
  const U = await import(root + "js/twoserver/upload.js");
  const { Rational } = await import(root + "js/rational.js");
  const hex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  const bytes = (h) => Uint8Array.from(h.match(/../g) || [], (x) => parseInt(x, 16));
  const failures = [];
  for (const [i, c] of cases.entries()) {
    const grid = { origin: Rational.parse(c.grid.origin), step: Rational.parse(c.grid.step),
      points: c.grid.points, edges: c.grid.edges.map((e) => Rational.parse(e)),
      mean: c.grid.mean, notAsked: c.grid.not_asked };
    try {
      const enc = G.gridEncoding(grid);
      const mine = JSON.stringify(enc);
      const theirs = JSON.stringify(c.encoding);
      if (mine !== theirs) throw new Error(`encoding ${mine}, Python ${theirs}`);
      for (const m of c.measurements) {
        const got = G.gridMeasurement(grid, m.j);
        if (JSON.stringify(got) !== JSON.stringify(m.measurement)) {
          const py = JSON.stringify(m.measurement);
          throw new Error(`j=${m.j}: ${JSON.stringify(got)}, Python ${py}`);
        }
        if (m.public_share === undefined) continue;
        const inst = U.instanceOf({ key: "x", ...enc });
        const [pub, shares] = inst.shard(bytes(c.ctx), got, bytes(c.nonce), bytes(m.rand));
        if (hex(pub) !== m.public_share) throw new Error(`j=${m.j}: public share differs`);
        shares.forEach((s, k) => {
          if (hex(s) !== m.input_shares[k]) throw new Error(`j=${m.j}: input share ${k} differs`);
        });
      }
    } catch (e) {
      failures.push(`grid ${i}: ${e.message}`);
    }
  }
  return failures;
}"""


def _cases() -> list[dict[str, Any]]:
    cases = []
    for number, (origin, step, points, edges, mean, not_asked) in enumerate(GRIDS):
        grid = Grid(Fraction(origin), Fraction(step), points, tuple(Fraction(e) for e in edges),
                    mean, not_asked)
        enc = grid_encoding("x", grid, Encoding)
        as_js = {"kind": enc.kind, "length": enc.length, "max": enc.max_measurement,
                 "offset": 0}
        if enc.kind == "histogram_sum":
            as_js["scale"] = enc.scale
        indices: list[int | None] = sorted({0, 1, points // 2, points - 2, points - 1}
                                           | set(range(0, points, max(1, points // 40))))
        if not_asked:
            indices.append(None)
        ctx, nonce = f"ldpsurvey two-server v1|s|1|x{number}".encode(), bytes(range(16))
        inst = vdaf.instance(enc)
        measurements = []
        for i, j in enumerate(indices):
            row: dict[str, Any] = {"j": j, "measurement": grid_measurement(enc, j)}
            if i % 7 == 0 or j is None:  # shard a few: sharding a pair is ~100 ms in Python
                rand = bytes((number * 31 + i * 7 + b) % 256 for b in range(inst.RAND_SIZE))
                public, shares = inst.shard(ctx, row["measurement"], nonce, rand)
                row.update(rand=rand.hex(), public_share=inst.encode_public_share(public).hex(),
                           input_shares=[inst.encode_input_share(k, s).hex()
                                         for k, s in enumerate(shares)])
            measurements.append(row)
        cases.append({"grid": {"origin": str(grid.origin), "step": str(grid.step),
                               "points": points, "edges": [str(e) for e in grid.edges],
                               "mean": mean, "not_asked": not_asked},
                      "encoding": as_js, "ctx": ctx.hex(), "nonce": nonce.hex(),
                      "measurements": measurements})
    return cases


def test_the_page_measures_a_grid_as_python(js_page: Any, web_root_url: str) -> None:
    cases = _cases()
    kinds = {c["encoding"]["kind"] for c in cases}
    assert kinds == {"sum", "histogram", "histogram_sum"}
    scales = {c["encoding"].get("scale") for c in cases} - {None}
    assert len(scales) >= 3  # the even split and the cube-root one, on several grids
    assert js_page.evaluate(REPLAY, [web_root_url, cases]) == []
