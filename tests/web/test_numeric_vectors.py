"""The page's mean mechanisms equal Python's: every vector (tests/web/numeric_vectors.py)
reproduced in real Chromium, the same draws requested in the same order, all of them used, the
same report; tampered descriptions refused."""

from __future__ import annotations

from typing import Any

import pytest
from numeric_vectors import build_cases, refused

REPLAY = """async ([root, cases]) => {
  const N = await import(root + "js/numeric_mechanisms.js");
  const R = await import(root + "js/tapes.js");
  const failures = [];
  cases.forEach((c, i) => {
    try {
      const core = N.meanMechanismFor(c);
      const tape = R.tapeSource(c.tape);
      const report = core.perturbIndex(c.index, tape);
      if (tape.remaining) throw new Error(`${tape.remaining} recorded draws left unused`);
      if (report !== c.report) throw new Error(`report ${report}, Python: ${c.report}`);
      if (report >= core.count) throw new Error(`report ${report} beyond ${core.count} cells`);
    } catch (e) {
      failures.push(`case ${i} (${c.mechanism}, ε=${c.epsilon}, k=${c.k}): ${e.message}`);
    }
  });
  return failures;
}"""


@pytest.fixture(scope="module")
def cases() -> list[dict[str, Any]]:
    return build_cases()


def test_vectors_cover_every_mean_mechanism_and_edge(cases: list[dict[str, Any]]) -> None:
    from ldpsurvey.shared.mechanisms import MEAN_MECHANISMS

    assert {c["mechanism"] for c in cases} == set(MEAN_MECHANISMS)
    assert {c["params"].get("cells") for c in cases} >= {16, 32, 64, 128, 4096}
    assert {c["params"].get("alpha") for c in cases if c["mechanism"] == "hybrid"} >= {"0"}
    hybrid = [c for c in cases if c["mechanism"] == "hybrid" and c["params"]["alpha"] != "0"]
    assert any(c["report"] <= c["params"]["cells"] for c in hybrid)  # PM's cells
    assert any(c["report"] > c["params"]["cells"] for c in hybrid)  # Duchi's ±B


def test_js_reproduces_every_python_report(js_page: Any, web_root_url: str,
                                           cases: list[dict[str, Any]]) -> None:
    failures: list[str] = []
    for start in range(0, len(cases), 100):
        failures += js_page.evaluate(REPLAY, [web_root_url, cases[start:start + 100]])
    assert not failures, f"{len(failures)} of {len(cases)} vectors differ:\n" + "\n".join(
        failures[:20])


def test_js_refuses_tampered_descriptions(js_page: Any, web_root_url: str) -> None:
    described = [{"why": why, **case} for why, case in refused()]
    results = js_page.evaluate("""async ([root, cases]) => {
      const N = await import(root + "js/numeric_mechanisms.js");
      const M = await import(root + "js/mechanisms.js");
      return cases.map((c) => {
        try { N.meanMechanismFor(c); return `${c.why}: accepted`; }
        catch (e) {
          return e instanceof M.ManifestMismatch ? null : `${c.why}: ${e.name} ${e.message}`;
        }
      }).filter((x) => x !== null);
    }""", [web_root_url, described])
    assert len(described) >= 8
    assert results == []


def test_one_report_is_fast_on_the_page(js_page: Any, web_root_url: str) -> None:
    """The mechanism is built once per question; a report is one row and one draw. Worst cell
    count (4096 at ε = 14) on 65536 grid values, with the OS CSPRNG: the median of 200 reports
    stays far below the issue's 10 ms (a phone is a few times slower than this machine)."""
    median = js_page.evaluate("""async (root) => {
      const N = await import(root + "js/numeric_mechanisms.js");
      const times = [];
      for (const [name, eps] of [["piecewise", 14], ["hybrid", 14], ["hybrid", 1], ["duchi", 1]]) {
        const core = N.meanMechanismFor({ mechanism: name, epsilon: eps, k: 65536,
                                          params: N[name + "Core"](eps, 65536).params });
        for (let i = 0; i < 50; i++) {
          const start = performance.now();
          core.perturbIndex((i * 7919) % 65536);
          times.push(performance.now() - start);
        }
      }
      times.sort((a, b) => a - b);
      return times[times.length >> 1];
    }""", web_root_url)
    assert median < 10, median


@pytest.mark.parametrize("name", ["duchi", "piecewise", "hybrid"])
def test_secure_reports_on_the_page_follow_the_exact_row(js_page: Any, web_root_url: str,
                                                         name: str) -> None:
    """20,000 reports drawn on the page with the CSPRNG (crypto.getRandomValues) for one answer,
    against Python's exact row: Pearson χ² over the cells, false alarm 1e-5 per mechanism."""
    from ldpsurvey.shared.mechanisms import MEAN_MECHANISMS
    from scipy.stats import chi2

    mech = MEAN_MECHANISMS[name](1.0, range(11))
    draws = 20_000
    counts = js_page.evaluate("""async ([root, name, draws]) => {
      const N = await import(root + "js/numeric_mechanisms.js");
      const core = N[name + "Core"](1.0, 11);
      const counts = new Array(core.count).fill(0);
      for (let i = 0; i < draws; i++) counts[core.perturbIndex(3)] += 1;
      return counts;
    }""", [web_root_url, name, draws])
    expected = [float(p) * draws for p in mech.row(3)]
    assert len(counts) == len(expected)
    used = [i for i, e in enumerate(expected) if e > 0]
    assert all(counts[i] == 0 for i in range(len(counts)) if i not in used)
    statistic = sum((counts[i] - expected[i]) ** 2 / expected[i] for i in used)
    assert statistic <= chi2.ppf(1 - 1e-5, len(used) - 1)
