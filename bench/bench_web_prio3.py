"""The page's two-server client in Chromium: shard + prove + seal times, per instance and for
the sample survey, and the cost of BigInt field arithmetic.

Run: .venv/bin/python bench/bench_web_prio3.py [--runs N]. Prints numbers, asserts nothing.
Serves client/web/ read-only on loopback, opens an empty page in Debian's `chromium`
(headless, Playwright) and imports the modules once; the first (cold) run of each measurement
is a warm-up and excluded, as are module loading and parsing. Every run draws from the page's
default source (crypto.getRandomValues) and WebCrypto's fresh ephemeral keys, exactly what a
respondent's Send does.

- per instance: Prio3Count, Prio3Histogram k = 16, Prio3Sum 0..100 (shard + prove) and the
  same with both halves HPKE-sealed (one key's upload),
- the sample survey in two-server mode (Count + Histogram k = 5 + Sum 0..30): buildUpload,
  i.e. encode, shard, prove and seal both halves,
- field arithmetic: one Field128 and one Field64 multiply-and-reduce with BigInt, to judge
  whether a faster exact representation would be worth it.
Target (issue 19): sample survey < 50 ms median of 20 runs.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "web"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from static_server import TEST_PAGE, serve_web_root
from two_server_vectors import surveys

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]

MEASURE = """async ([root, survey, runs]) => {
  const V = await import(root + "js/prio3/vdaf.js");
  const F = await import(root + "js/prio3/field.js");
  const H = await import(root + "js/hpke.js");
  const U = await import(root + "js/twoserver/upload.js");
  // the modules the survey and its upload need (as the page loads them: optional.js loadFor,
  // uploadFor where there is one), not timed
  const O = await import(root + "js/optional.js");
  await O.loadFor(survey);
  if (O.uploadFor) await O.uploadFor(survey);
  const B = await import(root + "js/bytes.js");
  const R = await import(root + "js/randomness.js");
  const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1;
                           return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
  async function time(fn) {
    await fn();  // cold run: excluded
    const ts = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      await fn();
      ts.push(performance.now() - t0);
    }
    return { median: median(ts), max: Math.max(...ts) };
  }
  const key = B.fromB64url(survey.two_server.leader_hpke_key);
  const te = new TextEncoder();
  const ctx = te.encode("bench");
  const instances = { "Count": [V.prio3Count(), 1], "Histogram k=16":
    [V.prio3Histogram(16, U.bestChunkLength(16)), 7], "Sum 0..100": [V.prio3Sum(100), 42] };
  const out = {};
  for (const [name, [vdaf, m]] of Object.entries(instances)) {
    const shard = () => vdaf.shard(ctx, m, U.randomBytes(R.secureSource, 16),
                                   U.randomBytes(R.secureSource, vdaf.RAND_SIZE));
    out[name] = {
      shard: await time(async () => shard()),
      shard_seal: await time(async () => {
        const [, shares] = shard();
        await H.seal(key, ctx, shares[0]);
        await H.seal(key, ctx, shares[1]);
      }),
    };
  }
  const answers = { rx_misuse: true, cannabis_frequency: "weekly", drinks_last_week: 12,
                    substances: ["stimulants", "cocaine"] };
  out["sample survey (buildUpload)"] = { all: await time(() => U.buildUpload(survey, answers)) };
  const seal2 = await time(async () => {
    await H.seal(key, ctx, new Uint8Array(200));
    await H.seal(key, ctx, new Uint8Array(200));
  });
  out["two HPKE seals alone"] = { all: seal2 };
  for (const [name, field] of [["Field128", F.Field128], ["Field64", F.Field64]]) {
    const xs = Array.from({ length: 1000 }, (_, i) => field.MODULUS - BigInt(i + 1) * 7919n);
    const t0 = performance.now();
    let acc = 1n;
    for (let r = 0; r < 100; r++) for (const x of xs) acc = (acc * x) % field.MODULUS;
    out[`${name} mul+mod`] = { ns: (performance.now() - t0) * 1e6 / 1e5, check: String(acc % 10n) };
  }
  return out;
}"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    executable = shutil.which("chromium")
    if executable is None:
        sys.exit("no `chromium` on PATH (Debian: apt-get install chromium)")
    _, survey = next(surveys())
    with serve_web_root() as root, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, headless=True,
                                             args=ARGS)
        try:
            page = browser.new_page()
            page.goto(root + TEST_PAGE)
            result = page.evaluate(MEASURE, [root, survey.to_dict(), args.runs])
        finally:
            browser.close()
    print(f"Chromium, median (max) of {args.runs} warm runs, ms:")
    for name, parts in result.items():
        if "ns" in parts:
            print(f"  {name:<34} {parts['ns']:.0f} ns per multiply-and-reduce (BigInt)")
            continue
        line = ", ".join(f"{what} {t['median']:.2f} ({t['max']:.2f})" for what, t in parts.items())
        print(f"  {name:<34} {line}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
