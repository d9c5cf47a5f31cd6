"""The page's Square Wave port equals Python's in real Chromium (square_wave_vectors.py), and
one report takes far less than the 10 ms a phone-class CPU may spend (issue 41)."""

from __future__ import annotations

from typing import Any

import pytest
from ldpsurvey.shared.mechanisms.square_wave import SquareWave
from square_wave_vectors import build_square_wave_vectors

REPLAY = """async ([root, cases]) => {
  const SW = await import(root + "js/square_wave.js");
  const R = await import(root + "js/tapes.js");
  const failures = [];
  cases.forEach((c, i) => {
    try {
      const mech = SW.squareWave(c.epsilon, BigInt(c.min), BigInt(c.max), c.params);
      const tape = R.tapeSource(c.tape);
      const report = mech.perturb(BigInt(c.answer), tape);
      if (tape.remaining) throw new Error(`${tape.remaining} recorded draws left unused`);
      if (report !== c.report) throw new Error(`report ${report}, Python: ${c.report}`);
    } catch (e) {
      const where = `ε=${c.epsilon}, ${c.min}..${c.max}, answer ${c.answer}`;
      failures.push(`case ${i} (${where}): ${e.message}`);
    }
  });
  return failures;
}"""


@pytest.fixture(scope="module")
def vectors() -> dict[str, Any]:
    return build_square_wave_vectors()


def test_vectors_cover_the_edges(vectors: dict[str, Any]) -> None:
    cases = vectors["cases"]
    grids = {c["params"]["grid"] for c in cases}
    assert {2, 5, 16, 1024} <= grids
    assert {c["params"]["half_window"] for c in cases} >= {0, 1}
    assert any(c["params"]["half_window"] > 400 for c in cases)  # small ε: wide window
    # Reports before, inside and after the answer's window: every branch of the draw's mapping.
    places = set()
    for c in cases:
        mech = SquareWave(c["epsilon"], range(int(c["min"]), int(c["max"]) + 1))
        j = mech.grid_point(int(c["answer"]) - mech.low)
        places.add("before" if c["report"] < j else "inside" if c["report"] < j + mech.window
                   else "after")
    assert places == {"before", "inside", "after"}


def test_js_reproduces_every_python_report(js_page: Any, web_root_url: str,
                                           vectors: dict[str, Any]) -> None:
    cases = vectors["cases"]
    failures: list[str] = []
    for start in range(0, len(cases), 200):
        failures += js_page.evaluate(REPLAY, [web_root_url, cases[start:start + 200]])
    assert not failures, f"{len(failures)} of {len(cases)} vectors differ:\n" + "\n".join(
        failures[:20])


def test_js_refuses_tampered_parameters(js_page: Any, web_root_url: str,
                                        vectors: dict[str, Any]) -> None:
    results = js_page.evaluate("""async ([root, refused]) => {
      const SW = await import(root + "js/square_wave.js");
      const M = await import(root + "js/mechanisms.js");
      return refused.map((r) => {
        try {
          SW.squareWave(r.epsilon, BigInt(r.min), BigInt(r.max), r.params);
          return `${r.why}: accepted`;
        } catch (e) {
          return e instanceof M.ManifestMismatch ? null : `${r.why}: ${e.name} ${e.message}`;
        }
      }).filter((x) => x !== null);
    }""", [web_root_url, vectors["refused"]])
    assert results == []


def test_js_refuses_answers_off_the_grid(js_page: Any, web_root_url: str) -> None:
    names = js_page.evaluate("""async (root) => {
      const SW = await import(root + "js/square_wave.js");
      const mech = SW.squareWave(1.0, 0n, 99n);
      return [100n, -1n, 5, "5", 2.5].map((a) => {
        try { mech.perturb(a); return "accepted"; } catch (e) { return e.name; }
      });
    }""", web_root_url)
    assert names == ["AnswerError"] * 5


@pytest.mark.parametrize("epsilon, low, high", [(1.0, 0, 1023), (0.1, -2**30, 2**30),
                                                (50.0, 0, 2**53 - 2)])
def test_one_report_is_fast(js_page: Any, web_root_url: str, epsilon: float, low: int,
                            high: int) -> None:
    """Per-report time with the page's CSPRNG (crypto.getRandomValues), mechanism built once
    as the page would (building, once per question, is timed apart). The target is < 10 ms on a
    phone-class CPU, which runs such integer code ~5x slower than this machine: asserted with
    that margin, < 2 ms here."""
    timing = js_page.evaluate("""async ([root, eps, low, high]) => {
      const SW = await import(root + "js/square_wave.js");
      let t = performance.now();
      const mech = SW.squareWave(eps, BigInt(low), BigInt(high));
      const build = performance.now() - t;
      const reports = 2000;
      const answer = (BigInt(low) + BigInt(high)) / 2n;
      t = performance.now();
      for (let i = 0; i < reports; i++) mech.perturb(answer);
      return { build, perReport: (performance.now() - t) / reports };
    }""", [web_root_url, epsilon, str(low), str(high)])
    print(f"square_wave JS ε={epsilon} range {low}..{high}: build {timing['build']:.2f} ms, "
          f"{timing['perReport'] * 1000:.1f} µs per report")
    assert timing["perReport"] < 2.0
    assert timing["build"] < 50.0
