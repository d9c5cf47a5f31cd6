"""The respondent page on a slow phone: time until the first question is on screen, and where
the time goes, for every sample survey (shared/samples/*.toml).

Run: .venv/bin/python bench/bench_first_question.py [--runs N] [--sample NAME ...]
Prints numbers, asserts nothing. Starts `ldpsurvey serve` on a free loopback port, publishes
each sample signed (a two-server sample with fresh HPKE keys in place of its placeholders:
the page shows its questions without contacting the helper), and opens its page in Debian's
`chromium` (headless, Playwright) in a fresh profile per run (cold: no cache, no IndexedDB)
under Chromium's own throttling over the DevTools protocol: Emulation.setCPUThrottlingRate 4
(4x slower CPU) and Network.emulateNetworkConditions "slow 4G" (1.6 Mbit/s down, 750 kbit/s
up, 150 ms round trip per request).

"First question on screen" is the page's performance mark `ldpsurvey-question` (page.js: the
survey fetched, its signature verified, every mechanism re-derived and its ε proven, the trust
checks done and the form rendered), from the start of navigation; "ready" (`ldpsurvey-ready`,
body[data-state=ready]) comes once what only reviewing and sending need has loaded too
(a two-server survey's Prio3 and HPKE load later, at the respondent's first answer). Issue
40's target: the first question within 2 s. The phases come from the page's own marks (page.js,
manifest.js) and its resource timing:

- html: the HTML document received;
- code: the page's modules (those index.html names) received, the last of them;
- survey: the survey document fetched (GET /api/surveys/<id>; the page the aggregator serves
  carries it, so this is where.js running and reading it);
- signature: its Ed25519 signature verified (WebCrypto);
- modules: the modules and words this survey needs loaded (js/optional.js, js/types/);
- canonical: the canonical bytes, the hash and the skip logic checked;
- mechanisms: every mechanism re-derived and its ε proven;
- trust: the trust checks and the ledger (IndexedDB);
- render: the form drawn (the first question on screen);
- later: what only sending needs, loaded (ready).

With them, the files the page asked for before its first question was on screen: on this
network each costs a round trip and HTTP/1.1 carries six at a time, so their number is most of
`code` (bench/RESULTS.md, "First question on screen"), and unlike the times it does not move
with the machine's load.

and the CPU the page's main thread spent (DevTools Performance.getMetrics: ScriptDuration,
TaskDuration) up to that point, throttled.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import tomllib
from pathlib import Path
from typing import Any

from ldpsurvey.analyst.demo import create_token, publish, running_server
from ldpsurvey.shared.survey import Survey
from playwright.sync_api import sync_playwright

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
SAMPLES = Path(__file__).resolve().parents[1] / "shared" / "samples"
TARGET_MS = 2000
CPU_SLOWDOWN = 4
SLOW_4G = {"offline": False, "latency": 150, "downloadThroughput": 1_600_000 / 8,
           "uploadThroughput": 750_000 / 8}
PHASES = ("html", "code", "survey", "signature", "modules", "canonical", "mechanisms", "trust",
          "render", "later")

# Everything the phases need, read from the page once it is ready.
TIMINGS = """() => {
  const mark = (name) => performance.getEntriesByName(name)[0]?.startTime ?? null;
  const nav = performance.getEntriesByType("navigation")[0];
  const resources = performance.getEntriesByType("resource");
  const api = resources.find((r) => r.name.includes("/api/surveys/"));
  // the page's own modules: those asked for before the survey (or, when the page carries its
  // survey's document, before where.js ran)
  const cut = api ? api.startTime : mark("ldpsurvey-where") ?? Infinity;
  const before = resources.filter((r) => !r.name.includes("/api/") && r.startTime < cut);
  const fcp = performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? null;
  return {
    html: nav.responseEnd,
    code: Math.max(nav.responseEnd, ...before.map((r) => r.responseEnd)),
    surveyStart: api ? api.startTime : null, survey: mark("ldpsurvey-fetched"),
    signature: mark("ldpsurvey-signature"), modules: mark("ldpsurvey-modules"),
    canonical: mark("ldpsurvey-canonical"), mechanisms: mark("ldpsurvey-verified"),
    trust: mark("ldpsurvey-checked"),
    render: mark("ldpsurvey-question") ?? mark("ldpsurvey-ready"),  // before: one mark
    later: mark("ldpsurvey-ready"), fcp,
    files: resources.filter((r) => !r.name.includes("/api/")).length,
    // asked for before the first question was on screen: each costs a round trip, six at a time
    asked: resources.filter((r) => !r.name.includes("/api/") &&
                                   r.startTime < (mark("ldpsurvey-question") ?? Infinity)).length,
    wire: resources.filter((r) => !r.name.includes("/api/"))
      .reduce((n, r) => n + r.encodedBodySize, 0) + (nav.encodedBodySize ?? 0),
  };
}"""


def sample_data(path: Path) -> dict[str, Any]:
    """A sample survey as published: a two-server one with fresh X25519 public keys and a
    loopback helper address in place of its placeholders."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    if "two_server" in data:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
        from ldpsurvey.shared.two_server.config import b64url

        def public() -> str:
            return b64url(X25519PrivateKey.generate().public_key().public_bytes(
                serialization.Encoding.Raw, serialization.PublicFormat.Raw))

        data["two_server"] = {**data["two_server"], "helper_url": "http://127.0.0.1:9",
                              "helper_hpke_key": public(), "leader_hpke_key": public()}
    return {**data, "id": f"first-{path.stem}"}


def open_throttled(browser: Any, url: str) -> dict[str, Any]:
    """One cold, throttled page load: the phases' end times (ms from navigation) and CPU."""
    context = browser.new_context()
    try:
        page = context.new_page()
        cdp = context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.send("Network.emulateNetworkConditions", SLOW_4G)
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": CPU_SLOWDOWN})
        cdp.send("Performance.enable")
        page.goto(url, wait_until="commit", timeout=120_000)
        page.wait_for_selector("body[data-state=ready]", timeout=120_000)
        metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
        timings = page.evaluate(TIMINGS)
        timings["script_ms"] = 1000 * metrics.get("ScriptDuration", 0.0)
        timings["task_ms"] = 1000 * metrics.get("TaskDuration", 0.0)
        return timings
    finally:
        context.close()


def phases(t: dict[str, Any]) -> dict[str, float]:
    """Each phase's own duration (ms): from the end of the ones before to its own end. A phase
    that ended while an earlier one was still going (a survey the page carries is read while
    its last modules are still arriving) took no time of its own: 0, not a negative span."""
    out = {}
    last = 0.0
    for name in PHASES:
        end = t.get(name)
        if end is None:
            continue
        out[name] = max(0.0, end - last)
        last = max(last, end)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sample", action="append", default=[],
                        help="a sample's file name without .toml (default: every sample)")
    args = parser.parse_args()
    executable = shutil.which("chromium")
    if executable is None:
        sys.exit("no `chromium` on PATH (Debian: apt-get install chromium)")
    paths = [p for p in sorted(SAMPLES.glob("*.toml")) if not args.sample or p.stem in args.sample]
    results: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        with running_server(db, threads=4) as url, sync_playwright() as playwright:
            token = create_token(db)
            browser = playwright.chromium.launch(executable_path=executable, headless=True,
                                                 args=ARGS)
            try:
                for path in paths:
                    data = sample_data(path)
                    publish(url, Survey.from_dict(data), token, Path(tmp) / f"keys-{path.stem}")
                    results[path.name] = [open_throttled(browser, f"{url}/s/{data['id']}")
                                          for _ in range(args.runs)]
            finally:
                browser.close()
    print(f"first question on screen, {CPU_SLOWDOWN}x CPU throttling, slow 4G (1.6 Mbit/s, "
          f"150 ms RTT), cold profile, median of {args.runs} runs (target < {TARGET_MS} ms)")
    summary = {}
    for name, runs in results.items():
        ready = statistics.median(r["render"] for r in runs)
        answerable = statistics.median(r["later"] for r in runs)
        median = {p: statistics.median(phases(r).get(p, 0.0) for r in runs) for p in PHASES}
        script = statistics.median(r["script_ms"] for r in runs)
        task = statistics.median(r["task_ms"] for r in runs)
        wire = statistics.median(r["wire"] for r in runs)
        files = statistics.median(r["files"] for r in runs)
        asked = statistics.median(r["asked"] for r in runs)
        print(f"{name}: {ready:.0f} ms ({'within' if ready <= TARGET_MS else 'OVER'} target), "
              f"ready {answerable:.0f} ms; runs {', '.join(str(round(r['render'])) for r in runs)}")
        print("  " + ", ".join(f"{p} {median[p]:.0f}" for p in PHASES) + " (ms)")
        print(f"  main thread: script {script:.0f} ms, all tasks {task:.0f} ms; "
              f"{files:.0f} files ({asked:.0f} asked for before the first question), "
              f"{wire / 1000:.1f} kB on the wire")
        summary[name] = {"first_question_ms": round(ready, 1), "ready_ms": round(answerable, 1),
                         "phases_ms": {p: round(v, 1) for p, v in median.items()},
                         "script_ms": round(script, 1), "task_ms": round(task, 1),
                         "wire_bytes": wire, "files": files, "asked_before_question": asked}
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
