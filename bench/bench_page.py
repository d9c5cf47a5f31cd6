"""The respondent page: time until it is interactive on a local server, and its total size.

Run: .venv/bin/python bench/bench_page.py [--runs N]. Prints numbers, asserts nothing.
Starts `ldpsurvey serve` on a free loopback port (as the demo does), publishes the sample
survey signed, and opens /s/wellbeing-2026 in Debian's `chromium` (headless, Playwright) in a
fresh profile each run (cold: no cache, no IndexedDB). "Interactive" is the page's own
performance mark `ldpsurvey-ready`: the manifest fetched, its Ed25519 signature verified, every
mechanism re-derived and its ε proven, the trust checks done and the form rendered; measured
from the start of navigation. Size is every byte the page loads (HTML, CSS, JS modules; the
manifest is data and reported apart): raw, gzip -9 of each file, and on the wire (the server
sends them gzip-compressed, server/page_files.py). A survey with a location question is
measured too: its page also loads the location modules (js/optional.js), which a plain
survey's page does not (nor the two-server ones, loaded only for two-server surveys). The
sample survey has a check-all-that-apply question, so its page loads js/multiselect.js (the
multiselect randomizers and checkboxes), which a survey without one does not.
A plain survey (yes/no, categorical, integer: tests/web/test_page_weight.py's) is measured
too, and the same survey translated into Spanish opened by a Spanish browser (es-ES): its page
also loads survey_text.js, switcher.js and the Spanish catalogue's core, which an English page
does not (docs/languages.md). Targets (issue 10, issue 32): interactive < 1 s on a local
server; a plain survey's page < 200 kB raw and < 64 kB gzipped.
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

from bench_first_question import sample_data
from ldpsurvey.analyst.demo import create_token, publish, running_server, sample_survey
from ldpsurvey.shared.survey import Survey
from playwright.sync_api import sync_playwright

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
SAMPLES = Path(__file__).resolve().parents[1] / "shared" / "samples"
READY = "performance.getEntriesByName('ldpsurvey-ready')[0].startTime"
# the questions on screen (page.js marks it before loading what reviewing and sending need;
# where `ldpsurvey-ready` was marked before issue 40's first-question work)
QUESTION = "performance.getEntriesByName('ldpsurvey-question')[0]?.startTime ?? null"


PLAIN_SURVEY = {  # tests/support/clients.py survey_dict(): the budget test's survey
    "id": "bench-plain", "title": "Check-in", "version": 1,
    "questions": [
        {"id": "smoker", "text": "Do you smoke?", "type": "binary", "epsilon": 1.0},
        {"id": "mood", "text": "How is your mood?", "type": "categorical", "epsilon": 1.5,
         "options": ["awful", "low", "fine", "good", "great"], "mechanism": "grr"},
        {"id": "drinks", "text": "Drinks last week?", "type": "integer", "epsilon": 1.0,
         "min": 0, "max": 30, "mechanism": "geometric", "optional": True}]}
TRANSLATED_SURVEY = {**PLAIN_SURVEY, "id": "bench-translated", "translations": {"es": {
    "title": "Control", "questions": {
        "smoker": {"text": "¿Fuma?"}, "drinks": {"text": "¿Bebidas la semana pasada?"},
        "mood": {"text": "¿Cómo está su ánimo?", "options": {
            "awful": "pésimo", "low": "bajo", "fine": "bien", "good": "bueno",
            "great": "excelente"}}}}}}
LOCATION_SURVEY = {
    "id": "bench-where", "title": "Where", "version": 1,
    "questions": [{"id": "home", "type": "location", "text": "Where is your home?",
                   "epsilon_geo": 0.5, "grid": {"rows": 6, "cols": 6, "cell_km": 1.0}}]}


def measure(url: str, runs: int, locale: str | None = None, shown: list[float] | None = None
            ) -> tuple[list[float], dict[str, tuple[int, int, str]], int]:
    """Milliseconds to interactive per cold run (and to the questions on screen, appended to
    `shown`); per page file (first run) its raw size, its size on the wire and its
    Content-Encoding; the survey document's size (the page carries it: taken out of the
    HTML's numbers)."""
    executable = shutil.which("chromium")
    if executable is None:
        sys.exit("no `chromium` on PATH (Debian: apt-get install chromium)")
    times: list[float] = []
    files: dict[str, tuple[int, int, str]] = {}
    manifest = 0
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, headless=True,
                                             args=ARGS)
        try:
            for run in range(runs):
                context = browser.new_context(**({"locale": locale} if locale else {}))
                page = context.new_page()
                responses: list[object] = []
                page.on("response", lambda r, responses=responses: responses.append(r))
                page.goto(url)
                page.wait_for_selector("body[data-state=ready]")
                page.wait_for_function("document.readyState === 'complete'")
                times.append(page.evaluate(READY))
                if shown is not None:
                    shown.append(page.evaluate(QUESTION))
                if run == 0:
                    # the survey's document the page carries is data, not the page: reported
                    # apart (as the API's answer was), taken out of the HTML's numbers as
                    # tests/web/test_page_weight.py does
                    document = page.evaluate("document.getElementById('survey-document')"
                                             "?.textContent ?? ''").encode()
                    manifest += len(document)
                    for r in responses:
                        if not r.ok:  # type: ignore[attr-defined]
                            continue
                        body = r.body()  # type: ignore[attr-defined]
                        if "/api/" in r.url:  # type: ignore[attr-defined]
                            manifest += len(body)
                            continue
                        wire = r.request.sizes()["responseBodySize"]  # type: ignore[attr-defined]
                        encoding = r.headers.get("content-encoding", "-")  # type: ignore[attr-defined]
                        size = len(body)
                        if r.request.resource_type == "document":  # type: ignore[attr-defined]
                            size -= len(document)
                            wire -= len(gzip.compress(document, 9))
                        files[r.url.split("/s/", 1)[-1]] = (size, wire, encoding)  # type: ignore[attr-defined]
                context.close()
        finally:
            browser.close()
    return times, files, manifest


def report(what: str, files: dict[str, tuple[int, int, str]], bodies: dict[str, bytes]) -> dict:
    """Print the files and totals of one page; their numbers."""
    raw = sum(size for size, _, _ in files.values())
    wire = sum(w for _, w, _ in files.values())
    gzipped = sum(len(gzip.compress(b, 9)) for b in bodies.values())
    print(f"{what}: {len(files)} files")
    for name, (size, w, encoding) in sorted(files.items(), key=lambda item: -item[1][0]):
        print(f"  {size:>7,} B raw {w:>7,} B on the wire ({encoding})  {name}")
    print(f"  total: {raw / 1000:.1f} kB raw (target < 200 kB), {gzipped / 1000:.1f} kB gzip -9 "
          f"(target < 64 kB), {wire / 1000:.1f} kB on the wire")
    return {"files": len(files), "raw_bytes": raw, "gzip_bytes": gzipped, "wire_bytes": wire}


BUDGET_RAW, BUDGET_WIRE = 200_000, 64_000  # tests/web/test_page_weight.py


def budget_left(numbers: dict) -> str:
    """How far a page is within (or over) the budget, raw and on the wire."""
    words = []
    for what, size, budget in (("raw", numbers["raw_bytes"], BUDGET_RAW),
                               ("on the wire", numbers["wire_bytes"], BUDGET_WIRE)):
        left = budget - size
        words.append(f"{'within' if left >= 0 else 'OVER'} by {abs(left):,} B {what}")
    return ", ".join(words)


def page_bodies(files: dict[str, tuple[int, int, str]]) -> dict[str, bytes]:
    """The page's files as served (client/web, JavaScript without its comments:
    server/page_files.py served_bytes), to gzip them here; the survey's page is index.html
    (without the survey's document it carries: counted on the wire only)."""
    from ldpsurvey.server.page_files import served_bytes
    from ldpsurvey.server.web_page import web_dir

    root = web_dir()
    return {name: served_bytes(root / name) if (root / name).is_file()
            else (root / "index.html").read_bytes() for name in files}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        survey = sample_survey()
        with running_server(db, threads=4) as url:
            token = create_token(db)
            publish(url, survey, token, Path(tmp) / "keys")
            shown: list[float] = []
            times, files, manifest = measure(f"{url}/s/{survey.id}", args.runs, shown=shown)
            publish(url, Survey.from_dict(PLAIN_SURVEY), token, Path(tmp) / "keys2")
            _, plain_files, _ = measure(f"{url}/s/{PLAIN_SURVEY['id']}", 1)
            publish(url, Survey.from_dict(LOCATION_SURVEY), token, Path(tmp) / "keys3")
            _, location_files, _ = measure(f"{url}/s/{LOCATION_SURVEY['id']}", 1)
            publish(url, Survey.from_dict(TRANSLATED_SURVEY), token, Path(tmp) / "keys4")
            _, spanish_files, _ = measure(f"{url}/s/{TRANSLATED_SURVEY['id']}", 1, "es-ES")
            samples = {}
            for path in sorted(SAMPLES.glob("*.toml")):
                # a two-server sample: fresh HPKE keys in its placeholders (its page shows its
                # questions without the helper)
                data = {**sample_data(path), "id": f"bench-{path.stem}"}
                publish(url, Survey.from_dict(data), token, Path(tmp) / f"keys-{path.stem}")
                samples[path.name] = measure(f"{url}/s/{data['id']}", 1)[1]
    sample = report(f"the sample survey's page ({survey.id}, with a multiselect question)",
                    files, page_bodies(files))
    print(f"  manifest {manifest:,} B")
    plain = report("a plain survey's page (yes/no, categorical, integer; the budget's)",
                   plain_files, page_bodies(plain_files))
    located = report("a location survey's page", location_files, page_bodies(location_files))
    spanish = report("the plain survey translated, opened in Spanish (es-ES)", spanish_files,
                     page_bodies(spanish_files))
    sample_pages = {}
    over = []
    for name, sample_files in samples.items():
        numbers = report(f"shared/samples/{name}'s page", sample_files, page_bodies(sample_files))
        sample_pages[name] = numbers
        print(f"  {name}: {numbers['raw_bytes'] / 1000:.1f} kB raw, "
              f"{numbers['wire_bytes'] / 1000:.1f} kB on the wire; {budget_left(numbers)}")
        if numbers["raw_bytes"] > BUDGET_RAW or numbers["wire_bytes"] > BUDGET_WIRE:
            over.append(name)
    print(f"sample pages over the budget ({BUDGET_RAW // 1000} kB raw, {BUDGET_WIRE // 1000} kB "
          f"on the wire): {', '.join(over) or 'none'}")
    print(f"interactive (cold profile, {len(times)} runs): median {statistics.median(times):.0f} "
          f"ms, max {max(times):.0f} ms (target < 1000 ms)")
    if all(t is not None for t in shown):
        print(f"questions on screen (mark ldpsurvey-question, {len(shown)} runs): median "
              f"{statistics.median(shown):.0f} ms, max {max(shown):.0f} ms")
    print(json.dumps({"interactive_ms_median": round(statistics.median(times), 1),
                      "interactive_ms_max": round(max(times), 1), "sample_page": sample,
                      "plain_page": plain,
                      "location_page": located, "spanish_page": spanish,
                      "sample_pages": sample_pages, "manifest_bytes": manifest}))


if __name__ == "__main__":
    main()
