"""The respondent page: time until it is interactive on a local server, and its total size.

Run: .venv/bin/python bench/bench_page.py [--runs N]. Prints numbers, asserts nothing.
Starts `ldpsurvey serve` on a free loopback port (as the demo does), publishes the sample
survey signed, and opens /s/wellbeing-2026 in Debian's `chromium` (headless, Playwright) in a
fresh profile each run (cold: no cache, no IndexedDB). "Interactive" is the page's own
performance mark `ldpsurvey-ready`: the manifest fetched, its Ed25519 signature verified, every
mechanism re-derived and its ε proven, the trust checks done and the form rendered; measured
from the start of navigation. Size is every byte the page loads (HTML, CSS, JS modules; the
manifest is data and reported apart), raw and gzip-compressed.
Targets (issue 10): interactive < 1 s on a local server; total size < 200 kB.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from ldpsurvey.analyst.demo import create_token, publish, running_server, sample_survey
from playwright.sync_api import sync_playwright

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
READY = "performance.getEntriesByName('ldpsurvey-ready')[0].startTime"


def measure(url: str, runs: int) -> tuple[list[float], dict[str, bytes], int]:
    """Milliseconds to interactive per cold run; the page's files and the manifest's size."""
    executable = shutil.which("chromium")
    if executable is None:
        sys.exit("no `chromium` on PATH (Debian: apt-get install chromium)")
    times: list[float] = []
    files: dict[str, bytes] = {}
    manifest = 0
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, headless=True,
                                             args=ARGS)
        try:
            for run in range(runs):
                context = browser.new_context()
                page = context.new_page()
                bodies: dict[str, bytes] = {}
                page.on("response", lambda r, bodies=bodies: bodies.__setitem__(r.url, r.body())
                        if r.ok else None)
                page.goto(url)
                page.wait_for_selector("body[data-state=ready]")
                times.append(page.evaluate(READY))
                if run == 0:
                    files = {a.split("/s/", 1)[-1]: b for a, b in bodies.items()
                             if "/api/" not in a}
                    manifest = sum(len(b) for a, b in bodies.items() if "/api/" in a)
                context.close()
        finally:
            browser.close()
    return times, files, manifest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        survey = sample_survey()
        with running_server(db, threads=4) as url:
            publish(url, survey, create_token(db), Path(tmp) / "keys")
            times, files, manifest = measure(f"{url}/s/{survey.id}", args.runs)
    total = sum(len(b) for b in files.values())
    gzipped = sum(len(gzip.compress(b, 9)) for b in files.values())
    print(f"page files: {len(files)}")
    for name, body in sorted(files.items(), key=lambda item: -len(item[1])):
        print(f"  {len(body):>7,} B  {name}")
    print(f"total size: {total:,} B = {total / 1000:.1f} kB raw, {gzipped / 1000:.1f} kB gzip "
          f"(target < 200 kB); manifest {manifest:,} B")
    print(f"interactive (cold profile, {len(times)} runs): median {statistics.median(times):.0f} "
          f"ms, max {max(times):.0f} ms (target < 1000 ms)")
    print(json.dumps({"interactive_ms_median": round(statistics.median(times), 1),
                      "interactive_ms_max": round(max(times), 1), "total_bytes": total,
                      "total_gzip_bytes": gzipped, "manifest_bytes": manifest}))


if __name__ == "__main__":
    main()
