"""Location questions (issue 21): certification, estimation, and accuracy of region shares.

Run: .venv/bin/python bench/bench_location.py [--quick]. Prints numbers, asserts nothing.
- certification at build of a 20 x 20 grid (a fresh channel: exact weights, totals, the exact
  plain ε and the geo-indistinguishability check), target < 1 s; 32 x 32 for scale;
- estimation from 10^5 reports (EM + the linear estimates of cells, regions and the map's
  resolution), target < 2 s;
- EM's convergence (issue 32): passes, time and the certified gap at the end, at n = 20,000
  and ε_geo in {0.5, 2}, under the old cap of 600 passes and the current `MAX_PASSES`;
- accuracy (seeded simulation, not a report path): total-variation error of the shares of a
  partition of the grid into 16 regions (4 x 4 blocks of 5 x 5 cells), at n in {2,000, 20,000}
  and ε_geo in {0.5, 2} per km (1 km cells), EM against the raw share of reports per region,
  with the coverage and mean half-width of the report's (linear) 95% region intervals. Truth:
  the simulator's two clusters.
- the page (real Chromium, as bench_web.py): building the 20 x 20 mechanism (re-deriving and
  certifying it) once, and randomizing one answer with crypto.getRandomValues, target < 10 ms.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from ldpsurvey.analyst.simulate.location import location_weights
from ldpsurvey.shared.location_channel import GeoChannel, GridShape
from ldpsurvey.shared.location_estimate import MAX_PASSES, em, fit, operator
from ldpsurvey.shared.location_linear import indicators, linear_shares
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Survey


def survey(rows: int, cols: int, epsilon_geo: float, cell_km: float = 1.0) -> Survey:
    blocks = {f"b{i}{j}": [f"{5 * i + 1}-{5 * i + 5},{5 * j + 1}-{5 * j + 5}"]
              for i in range(rows // 5) for j in range(cols // 5)}
    return Survey.from_dict({"id": "bench", "title": "Bench", "version": 1, "questions": [
        {"id": "home", "type": "location", "text": "Where?", "epsilon_geo": epsilon_geo,
         "grid": {"rows": rows, "cols": cols, "cell_km": cell_km}, "regions": blocks}]})


def time_certification(rows: int, cols: int, epsilon_geo: float, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        GeoChannel(GridShape(rows, cols, 1.0), epsilon_geo).certify()
        best = min(best, time.perf_counter() - start)
    return best


def time_estimation(epsilon_geo: float, n: int, repeats: int) -> tuple[float, float]:
    mechanism = mechanism_for(survey(20, 20, epsilon_geo).questions[0])
    rng = np.random.default_rng(1)
    answers = rng.choice(400, size=n, p=location_weights(20, 20))
    aggregate = mechanism.aggregate_many(mechanism.perturb_many(answers, rng))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        mechanism.estimate(aggregate)
        times.append(time.perf_counter() - start)
    return min(times), float(np.median(times))


def accuracy(epsilon_geo: float, n: int, runs: int, seed: int) -> dict[str, float]:
    mechanism = mechanism_for(survey(20, 20, epsilon_geo).questions[0])
    op = operator(mechanism.geo)
    regions = [list(m) for m in mechanism.groups.values()]
    targets = indicators(400, regions)
    truth_cells = location_weights(20, 20)
    rng = np.random.default_rng(seed)
    tv_em, tv_raw, covered, total, half = [], [], 0, 0, []
    for _ in range(runs):
        answers = rng.choice(400, size=n, p=truth_cells)
        truth = np.array([np.bincount(answers, minlength=400)[r].sum() / n for r in regions])
        counts = np.bincount(mechanism.perturb_many(answers, rng), minlength=400)
        fitted = fit(op, counts)
        em_shares = np.array([fitted.f[r].sum() for r in regions])
        raw = np.array([counts[r].sum() / n for r in regions])
        lo, hi = linear_shares(mechanism.geo.dense, targets, counts).interval(0.95)
        covered += int(((lo <= truth) & (truth <= hi)).sum())
        total += len(regions)
        half.append(float(np.mean(hi - lo) / 2))
        tv_em.append(0.5 * np.abs(em_shares - truth).sum())
        tv_raw.append(0.5 * np.abs(raw - truth).sum())
    return {"em": float(np.mean(tv_em)), "em_sd": float(np.std(tv_em, ddof=1)),
            "raw": float(np.mean(tv_raw)), "raw_sd": float(np.std(tv_raw, ddof=1)),
            "coverage": covered / total, "half": float(np.mean(half)),
            "plain": mechanism.realized_epsilon()}


def convergence(epsilon_geo: float, n: int, runs: int, cap: int) -> list[tuple[int, float, float]]:
    """(passes, seconds, certified gap) of EM per run, seeds 0..runs-1, at a pass cap."""
    mechanism = mechanism_for(survey(20, 20, epsilon_geo).questions[0])
    op = operator(mechanism.geo)
    out = []
    for seed in range(runs):
        rng = np.random.default_rng(seed)
        answers = rng.choice(400, size=n, p=location_weights(20, 20))
        counts = np.bincount(mechanism.perturb_many(answers, rng), minlength=400)
        start = time.perf_counter()
        result = em(op, counts / n, max_passes=cap)
        out.append((result.passes, time.perf_counter() - start, float(result.gap[0])))
    return out


PAGE = """async ([root, question, repeats]) => {
  await (await import(root + "js/optional.js")).loadFor({ questions: [question] });
  const M = await import(root + "js/mechanisms.js");
  const t0 = performance.now();
  const mech = M.mechanismFor(question);
  const build = performance.now() - t0;
  const times = [];
  for (let i = 0; i < repeats; i++) {
    const start = performance.now();
    mech.perturb("10,10");
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return { build, median: times[times.length >> 1], max: times[times.length - 1] };
}"""


def time_page(epsilon_geo: float, repeats: int) -> dict[str, float] | None:
    """Build and randomize in real Chromium; None without chromium/playwright."""
    import shutil
    import sys
    from pathlib import Path

    executable = shutil.which("chromium")
    if executable is None:
        return None
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "web"))
    from playwright.sync_api import sync_playwright
    from static_server import TEST_PAGE, serve_web_root

    question = survey(20, 20, epsilon_geo).to_dict()["questions"][0]
    with serve_web_root() as root, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, headless=True,
                                             args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page()
        page.goto(root + TEST_PAGE)
        result = page.evaluate(PAGE, [root, question, repeats])
        browser.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats and runs")
    args = parser.parse_args()
    repeats, runs = (2, 4) if args.quick else (5, 20)

    print("certification at build (fresh channel, best of repeats):")
    for rows, eps in ((20, 0.5), (20, 2.0), (32, 0.5)):
        print(f"  {rows} x {rows}, ε_geo {eps}/km, 1 km cells: "
              f"{time_certification(rows, rows, eps, repeats) * 1000:.0f} ms")
    print("estimation from 10^5 reports (EM + linear estimates), 20 x 20:")
    for eps in (0.5, 2.0):
        best, median = time_estimation(eps, 100_000, repeats)
        print(f"  ε_geo {eps}/km: best {best:.2f} s, median {median:.2f} s")
    print(f"EM convergence at n = 20,000, 20 x 20, {runs} runs (rule: gap <= 1e-6 nats per "
          f"report): passes, seconds, gap (min / median / max)")
    for eps in (0.5, 2.0):
        for cap in (600, MAX_PASSES):
            r = np.array(convergence(eps, 20_000, runs, cap))
            capped = int((r[:, 2] > 1e-6).sum())
            print(f"  ε_geo {eps}/km, cap {cap:>6,}: passes {r[:, 0].min():.0f} / "
                  f"{np.median(r[:, 0]):.0f} / {r[:, 0].max():.0f}; s {r[:, 1].min():.2f} / "
                  f"{np.median(r[:, 1]):.2f} / {r[:, 1].max():.2f}; gap {r[:, 2].min():.1e} / "
                  f"{np.median(r[:, 2]):.1e} / {r[:, 2].max():.1e}; not converged in "
                  f"{capped} of {runs}")
    for eps in (0.5, 2.0):
        page = time_page(eps, 200)
        if page is None:
            print("page: no chromium on PATH, skipped")
            break
        print(f"page, 20 x 20, ε_geo {eps}/km: build + certify {page['build']:.0f} ms once; "
              f"randomize one answer median {page['median']:.2f} ms, max {page['max']:.2f} ms "
              f"over 200 (target < 10 ms)")
    print(f"accuracy: TV error of 16 region shares, mean ± sd over {runs} runs, 20 x 20 grid "
          f"of 1 km cells")
    print("  ε_geo/km  plain ε        n   EM TV            raw TV           95% coverage, "
          "mean half-width (linear)")
    for eps in (0.5, 2.0):
        for n in (2_000, 20_000):
            r = accuracy(eps, n, runs, seed=int(eps * 10) + n)
            print(f"  {eps:<8}  {r['plain']:7.3f}  {n:7,}   {r['em']:.4f} ± {r['em_sd']:.4f}"
                  f"  {r['raw']:.4f} ± {r['raw_sd']:.4f}  {r['coverage']:.0%}, "
                  f"±{r['half']:.3f}")


if __name__ == "__main__":
    main()
