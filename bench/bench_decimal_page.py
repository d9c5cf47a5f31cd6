"""One decimal report on a phone-class CPU: the time the page takes to turn a typed number into
the report it sends, in Chromium under 4x CPU throttling.

Run: .venv/bin/python bench/bench_decimal_page.py [--reports N]
Prints numbers, asserts nothing. Serves client/web/ on loopback, opens the test page in Debian's
`chromium` (headless, Playwright) with Emulation.setCPUThrottlingRate 4 over the DevTools
protocol (a phone is about 4x slower than this machine's core), and times inside the page, for
each mechanism a decimal question may name (on shared/samples/income.toml's income grid: 0 to
20,000 by 10, 2,001 values, ε = 2) and for the sample's own questions:

- cold: `mechanismFor(question)` (every parameter re-derived, ε proven) and the first report;
- report: one report, as the page makes it when Send is pressed: the typed text read and rounded
  to the resolution (types/decimal.js readAnswer), encoded, and randomized with the OS CSPRNG
  (crypto.getRandomValues) — the mean, the 95th percentile and the slowest of N reports.

Issue 41's target: one decimal report < 10 ms on a phone-class CPU.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "web"))

from ldpsurvey.shared.survey import Survey
from playwright.sync_api import sync_playwright
from static_server import TEST_PAGE, serve_web_root

SAMPLE = Path(__file__).resolve().parent.parent / "shared" / "samples" / "income.toml"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
CPU_SLOWDOWN = 4
TARGET_MS = 10.0
TYPED = "12344.99"

TIMES = """async ([root, question, typed, reports]) => {
  const O = await import(root + "js/optional.js");
  await O.loadAll();
  const M = await import(root + "js/mechanisms.js");
  const D = await import(root + "js/types/decimal.js");
  const start = performance.now();
  const mech = M.mechanismFor(question);
  mech.perturb(D.readAnswer(question, typed).value);
  const cold = performance.now() - start;
  const times = [];
  for (let i = 0; i < reports; i++) {
    const t0 = performance.now();
    mech.perturb(D.readAnswer(question, typed).value);
    times.push(performance.now() - t0);
  }
  return { cold, times };
}"""


def questions() -> list[tuple[str, dict]]:
    """(label, canonical question): each mechanism on the income grid, and the sample's own."""
    data = tomllib.loads(SAMPLE.read_text(encoding="utf-8"))
    income = next(q for q in data["questions"] if q["id"] == "income")
    base = {k: v for k, v in income.items() if k not in ("estimate", "bins", "mechanism")}
    kinds = [(name, {"mechanism": name}) for name in ("duchi", "piecewise", "hybrid",
                                                       "geometric")]
    kinds.append(("square_wave", {"mechanism": "square_wave", "estimate": ["distribution"]}))
    kinds.append(("mean_and_distribution (hybrid)", {  # both estimates: the pair
        "mechanism": "hybrid", "estimate": ["mean", "distribution"]}))
    out = []
    for label, keys in kinds:
        survey = {"id": "bench", "title": "Bench", "version": 1,
                  "questions": [{**base, **keys}]}
        out.append((f"{label}, ε = {base['epsilon']}",
                    Survey.from_dict(survey).to_dict()["questions"][0]))
    for q in Survey.from_dict(data).to_dict()["questions"]:
        if q["type"] == "decimal":
            out.append((f"income.toml {q['id']} ({q['mechanism']})", q))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reports", type=int, default=200)
    args = parser.parse_args()
    executable = shutil.which("chromium")
    if executable is None:
        sys.exit("no `chromium` on PATH (Debian: apt-get install chromium)")
    rows = []
    with serve_web_root() as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, headless=True,
                                             args=ARGS)
        try:
            for label, question in questions():
                context = browser.new_context()
                page = context.new_page()
                cdp = context.new_cdp_session(page)
                cdp.send("Emulation.setCPUThrottlingRate", {"rate": CPU_SLOWDOWN})
                page.goto(url + TEST_PAGE)
                typed = TYPED if question["max"] >= 20000 else str(question["max"] / 3)
                result = page.evaluate(TIMES, [url, question, typed, args.reports])
                context.close()
                times = sorted(result["times"])
                rows.append((label, result["cold"], statistics.fmean(times),
                             times[int(0.95 * (len(times) - 1))], times[-1]))
        finally:
            browser.close()
    print(f"one decimal report in Chromium, {CPU_SLOWDOWN}x CPU throttling "
          f"(target < {TARGET_MS:g} ms), {args.reports} reports each")
    print("  (the page's clock ticks in 0.1 ms steps: the mean is over every report)")
    for label, cold, mean, p95, worst in rows:
        verdict = "within" if p95 < TARGET_MS else "OVER"
        print(f"  {label}: report mean {mean:.2f} ms, p95 {p95:.1f} ms ({verdict} target), "
              f"slowest {worst:.1f} ms; cold (mechanism built, ε proven, first report) "
              f"{cold:.1f} ms")


if __name__ == "__main__":
    main()
