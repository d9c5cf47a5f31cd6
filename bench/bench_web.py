"""Browser randomizers: secure perturb throughput and one full sample survey, in real Chromium.

Run: .venv/bin/python bench/bench_web.py [--quick]. Prints numbers, asserts nothing. Drives
Debian's `chromium` headless through Playwright (as tests/web does) and times, inside the
page, `mechanismFor(question).perturb(answer)` with `secureSource` (crypto.getRandomValues).
Targets (issue 10): >= 10,000 reports/s for grr k=16; one full survey of
shared/samples/sensitive.toml (build every mechanism, prove its ε, perturb every answer) in
< 50 ms. Issue 33: one multiselect report randomized in < 10 ms (the question's mechanism
built, its ε proven, and one report drawn, cold; then the steady per-report time).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "web"))

from ldpsurvey.shared.survey import Survey, load_survey
from playwright.sync_api import sync_playwright
from static_server import TEST_PAGE, serve_web_root

SAMPLE = Path(__file__).resolve().parent.parent / "shared" / "samples" / "sensitive.toml"
SAMPLE_ANSWERS = {"rx_misuse": False, "cannabis_frequency": "monthly", "drinks_last_week": 4,
                  "substances": ["opioids", "cocaine"]}
# Skip logic (docs/skip-logic.md): the drug-use sample, for a respondent every follow-up applies
# to and one none does (each follow-up then a randomized "not asked").
DRUG_USE = SAMPLE.with_name("drug-use.toml")
DRUG_USE_ANSWERS = [
    {"substances": ["cannabis", "ecstasy"], "cannabis_frequency": "weekly", "days_used": 6},
    {"substances": []},
]
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]

THROUGHPUT = """async ([root, question, answer, seconds]) => {
  await (await import(root + "js/optional.js")).loadAll();
  const M = await import(root + "js/mechanisms.js");
  const mech = M.mechanismFor(question);
  mech.perturb(answer);
  let n = 0;
  const start = performance.now();
  while (performance.now() - start < seconds * 1000) {
    for (let i = 0; i < 50; i++) mech.perturb(answer);
    n += 50;
  }
  return n / ((performance.now() - start) / 1000);
}"""

SURVEY = """async ([root, questions, answers, repeats]) => {
  await (await import(root + "js/optional.js")).loadAll();
  const t0 = performance.now();
  const M = await import(root + "js/mechanisms.js");
  const imported = performance.now() - t0;
  const once = () => {
    const start = performance.now();
    const reports = {};
    for (const q of questions) reports[q.id] = M.mechanismFor(q).perturb(answers[q.id]);
    return performance.now() - start;
  };
  const first = once();
  const times = [];
  for (let i = 0; i < repeats; i++) times.push(once());
  times.sort((a, b) => a - b);
  return { imported, first, median: times[times.length >> 1], max: times[times.length - 1] };
}"""


SKIP_SURVEY = """async ([root, survey, answerSets, repeats]) => {
  await (await import(root + "js/optional.js")).loadAll();
  const M = await import(root + "js/mechanisms.js");
  const K = await import(root + "js/skip_logic.js");
  // the whole survey on the page: conditions parsed and checked, every mechanism built (its ε
  // proven), the answers resolved ("not asked" where due) and every report drawn
  const once = (answers) => {
    const start = performance.now();
    const plan = K.skipPlan(survey);
    const values = K.resolveAnswers(survey, plan, new Map(Object.entries(answers)));
    const reports = {};
    for (const q of survey.questions) {
      const mech = M.mechanismFor(q, { notAsked: plan.get(q.id).notAsked });
      if (values.has(q.id)) reports[q.id] = mech.perturb(values.get(q.id));
    }
    return performance.now() - start;
  };
  try {
    return answerSets.map((answers) => {
      const first = once(answers);
      const times = [];
      for (let i = 0; i < repeats; i++) times.push(once(answers));
      times.sort((a, b) => a - b);
      return { first, median: times[times.length >> 1], max: times[times.length - 1] };
    });
  } catch (err) {
    return { error: `${err.name}: ${err.message}` };
  }
}"""


# One multiselect report: the mechanism built for the question (parameters re-derived, ε proven
# over every pair of allowed sets), then one report drawn with crypto.getRandomValues.
ONE_SET_REPORT = """async ([root, question, answer, repeats]) => {
  await (await import(root + "js/optional.js")).loadAll();
  const M = await import(root + "js/mechanisms.js");
  const start = performance.now();
  const mech = M.mechanismFor(question);
  mech.perturb(answer);
  const cold = performance.now() - start;
  const times = [];
  for (let i = 0; i < repeats; i++) {
    const t = performance.now();
    M.mechanismFor(question).perturb(answer);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { cold, median: times[times.length >> 1], max: times[times.length - 1] };
}"""


def set_question(mechanism: str, k: int, m: int) -> dict:
    survey = Survey.from_dict({"id": "b", "title": "b", "version": 1, "questions": [
        {"id": "q", "text": "q", "type": "multiselect", "mechanism": mechanism,
         "epsilon": 2.0, "options": [f"v{i}" for i in range(k)], "max_selected": m}]})
    return survey.to_dict()["questions"][0]


def skip_surveys() -> list[tuple[str, dict, list[dict]]]:
    """The drug-use sample, and tests/support/skip.py's survey (no multiselect question)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from support.skip import skip_survey

    used = {"used": True, "freq": "weekly", "days": 12, "region": "north", "clinic": False}
    other = {"used": False, "region": "north", "clinic": True}
    return [(DRUG_USE.name, load_survey(DRUG_USE).to_dict(), DRUG_USE_ANSWERS),
            ("tests/support/skip.py", Survey.from_dict(skip_survey("bench")).to_dict(),
             [used, other])]


def question(mechanism: str, k: int, epsilon: float = 1.0) -> dict:
    qtype = {"ordinal_exp": "ordinal", "geometric": "integer"}.get(mechanism, "categorical")
    spec = {"id": "q", "text": "q", "type": qtype, "mechanism": mechanism, "epsilon": epsilon}
    if qtype == "integer":
        spec.update(min=0, max=k - 1)
    else:
        spec["options"] = [f"v{i}" for i in range(k)]
    survey = Survey.from_dict({"id": "b", "title": "b", "version": 1, "questions": [spec]})
    return survey.to_dict()["questions"][0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="shorter timings")
    seconds = 0.3 if parser.parse_args().quick else 1.5
    executable = shutil.which("chromium")
    if executable is None:
        sys.exit("bench_web: no `chromium` on PATH")
    survey = load_survey(SAMPLE).to_dict()
    with serve_web_root() as root, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, headless=True,
                                             args=ARGS)
        page = browser.new_page()
        page.goto(root + TEST_PAGE)
        for name, skip_survey, answer_sets in skip_surveys():
            timings = page.evaluate(SKIP_SURVEY, [root, skip_survey, answer_sets, 200])
            if isinstance(timings, dict):
                print(f"skip-logic survey ({name}): not run: {timings['error']}")
                continue
            for who, t in zip(("every follow-up applies", "no follow-up applies"), timings,
                              strict=True):
                print(f"skip-logic survey ({name}, {who}): first {t['first']:.2f} ms, median "
                      f"{t['median']:.2f} ms, max {t['max']:.2f} ms over 200 (conditions "
                      f"parsed, mechanisms built and proven, reports drawn; target < 50 ms)",
                      flush=True)
        timing = page.evaluate(SURVEY, [root, survey["questions"], SAMPLE_ANSWERS, 200])
        print(f"sample survey ({SAMPLE.name}, {len(survey['questions'])} questions): "
              f"first {timing['first']:.2f} ms (cold caches), median {timing['median']:.2f} ms, "
              f"max {timing['max']:.2f} ms over 200; module import {timing['imported']:.1f} ms "
              f"(target < 50 ms)")
        for mechanism, k, m in (("option_rr", 5, 3), ("psfo_grr", 5, 3), ("psfo_olh", 5, 3),
                                ("option_rr", 20, 3), ("set_ue", 20, 3), ("psfo_grr", 20, 3),
                                ("psfo_olh", 20, 3), ("option_rr", 64, 64),
                                ("psfo_grr", 64, 64), ("psfo_olh", 64, 64)):
            q = set_question(mechanism, k, m)
            t = page.evaluate(ONE_SET_REPORT, [root, q, q["options"][:min(m, 3)], 200])
            print(f"multiselect {mechanism:<9} k={k:<3} m={m:<3} ε=2: build + one report "
                  f"{t['cold']:.2f} ms cold, median {t['median']:.2f} ms, max {t['max']:.2f} "
                  f"ms over 200 (target < 10 ms)", flush=True)
        cases = [("binary_rr", 2), ("grr", 16), ("grr", 1024), ("oue", 16), ("oue", 1024),
                 ("sue", 16), ("sue", 1024), ("ss", 16), ("ss", 1024), ("olh", 16),
                 ("olh", 1024), ("hr", 16), ("hr", 1024), ("ordinal_exp", 16),
                 ("ordinal_exp", 1024), ("geometric", 16), ("geometric", 1024)]
        for mechanism, k in cases:
            q = (Survey.from_dict({"id": "b", "title": "b", "version": 1, "questions": [
                {"id": "q", "text": "q", "type": "binary", "mechanism": "binary_rr",
                 "epsilon": 1.0}]}).to_dict()["questions"][0] if mechanism == "binary_rr"
                 else question(mechanism, k))
            answer = (True if mechanism == "binary_rr" else k // 2 if mechanism == "geometric"
                      else q["options"][k // 2])
            per_s = page.evaluate(THROUGHPUT, [root, q, answer, seconds])
            target = "  (target >= 10,000/s)" if (mechanism, k) == ("grr", 16) else ""
            print(f"{mechanism:<12} k={k:<5} ε=1 secure perturb in Chromium "
                  f"{per_s:>11,.0f} reports/s{target}", flush=True)
        browser.close()


if __name__ == "__main__":
    main()
