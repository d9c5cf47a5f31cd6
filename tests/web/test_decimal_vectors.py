"""The page's decimal questions equal Python's, in real Chromium (tests/web/decimal_vectors.py):
a typed answer rounded to the same grid value (half up, exact: no float drift) or refused for
the same reason, the same index encoded, the same report drawn from the same recorded draws,
the canonical bytes rebuilt byte for byte, the review's range the numbers Python's mechanism
can send, and tampered definitions refused."""

from __future__ import annotations

from typing import Any

import pytest
from decimal_vectors import (
    GRIDS,
    MEAN_MECHANISMS,
    SERIES_MECHANISMS,
    canonical_cases,
    cli_chances,
    memo_cases,
    question,
    refused,
    report_cases,
    rounding_cases,
    stated_range,
)

ROUND = """async ([root, cases, mark]) => {
  const D = await import(root + "js/types/decimal.js");
  const i18n = await import(root + "js/i18n.js");
  const failures = [];
  for (const c of cases) {
    const encode = D.default.encoder(c.question);
    for (const v of c.texts) {
      const typed = mark === "," ? v.text.replace(".", ",") : v.text;
      const got = D.readAnswer(c.question, typed, mark);
      const q = c.question;
      const where = `${JSON.stringify(typed)} on [${q.min}, ${q.max}] by ${q.resolution}`;
      if (v.error !== undefined) {
        const key = v.error === "range" ? "decimal.range" : null;
        if (got.value !== undefined) {
          failures.push(`${where}: page ${got.value}, Python refuses (${v.error})`);
        } else if (key && got.error !== i18n.t(key, { min: i18n.N(c.min), max: i18n.N(c.max) })) {
          failures.push(`${where}: page says ${got.error}, Python: outside the range`);
        }
        continue;
      }
      if (got.value !== v.value) {
        failures.push(`${where}: page ${got.value ?? got.error}, Python ${v.value}`);
        continue;
      }
      const index = encode(got.value);
      if (index !== BigInt(v.index)) failures.push(`${where}: index ${index}, Python ${v.index}`);
    }
  }
  return failures;
}"""

REPLAY = """async ([root, cases]) => {
  const M = await import(root + "js/mechanisms.js");
  const R = await import(root + "js/tapes.js");
  const failures = [];
  cases.forEach((c, i) => {
    try {
      const mech = M.mechanismFor(c.question);
      const tape = R.tapeSource(c.tape);
      const report = mech.perturb(c.answer, tape);
      if (tape.remaining) throw new Error(`${tape.remaining} recorded draws left unused`);
      if (JSON.stringify(report) !== JSON.stringify(c.report)) {
        throw new Error(`report ${JSON.stringify(report)}, Python: ${JSON.stringify(c.report)}`);
      }
    } catch (e) {
      const q = c.question;
      const what = `${q.mechanism} ${q.params.mean ?? ""}, ε=${q.epsilon}`;
      const grid = `[${q.min}, ${q.max}] by ${q.resolution}`;
      failures.push(`case ${i} (${what}, ${grid}, ${c.answer}): ${e.message}`);
    }
  });
  return failures;
}"""


@pytest.fixture(scope="module")
def cases() -> list[dict[str, Any]]:
    return report_cases()


def test_the_vectors_cover_every_mechanism_and_grid(cases: list[dict[str, Any]]) -> None:
    named = {(c["question"]["mechanism"], c["question"]["params"].get("mean")
              if c["question"]["mechanism"] == "mean_and_distribution" else None)
             for c in cases}
    assert named >= {*((m, None) for m in (*MEAN_MECHANISMS, *SERIES_MECHANISMS,
                                           "square_wave")),
                     *(("mean_and_distribution", m) for m in MEAN_MECHANISMS)}
    rounded = rounding_cases()
    assert len(rounded) == len(GRIDS)
    verdicts = [v for c in rounded for v in c["texts"]]
    assert {v.get("error") for v in verdicts} == {None, "range", "number"}
    # a halfway point rounds up, away from min (not to even), somewhere
    assert any(v.get("value") and v["text"].endswith("5") and v["value"] != v["text"]
               for v in verdicts)


@pytest.mark.parametrize("mark", [".", ","])
def test_a_typed_answer_is_rounded_as_python_rounds_it(js_page: Any, web_root_url: str,
                                                       mark: str) -> None:
    """With "." and with a comma as the decimal mark (Spanish, French): the same grid value."""
    failures = js_page.evaluate(ROUND, [web_root_url, rounding_cases(), mark])
    assert not failures, f"{len(failures)} differ:\n" + "\n".join(failures[:20])


def test_js_reproduces_every_python_report(js_page: Any, web_root_url: str,
                                           cases: list[dict[str, Any]]) -> None:
    failures: list[str] = []
    for start in range(0, len(cases), 100):
        failures += js_page.evaluate(REPLAY, [web_root_url, cases[start:start + 100]])
    assert not failures, f"{len(failures)} of {len(cases)} vectors differ:\n" + "\n".join(
        failures[:20])


MEMO_REPLAY = """async ([root, cases]) => {
  const M = await import(root + "js/mechanisms.js");
  const S = await import(root + "js/sha256.js");
  const failures = [];
  for (const c of cases) {
    try {
      const mech = M.mechanismFor(c.question);
      const memo = { secret: S.fromHex(c.memo.secret), series: c.memo.series };
      const noDraws = { randbelow() { throw new Error("a memoized report drew fresh noise"); } };
      const report = mech.perturb(c.answer, noDraws, memo);
      if (JSON.stringify(report) !== JSON.stringify(c.report)) {
        throw new Error(`report ${JSON.stringify(report)}, Python: ${JSON.stringify(c.report)}`);
      }
      if (mech.answerTag(c.answer, memo) !== c.memo.tag) throw new Error("ledger tag differs");
    } catch (e) {
      const q = c.question;
      const grid = `[${q.min}, ${q.max}] by ${q.resolution}`;
      failures.push(`${q.mechanism} ε=${q.epsilon} ${grid}, ${c.answer}: ${e.message}`);
    }
  }
  return failures;
}"""


def test_memo_vectors_cross_both_sides_of_alpha() -> None:
    """The series vectors hold, for one_bit_mean, answers rounded to each end on one grid, and
    answers sharing an end's tag and bit (at most two tags per question)."""
    cases = [c for c in memo_cases() if c["question"]["mechanism"] == "one_bit_mean"]
    by_question: dict[str, set[str]] = {}
    for c in cases:
        key = repr(sorted(c["question"].items()))
        by_question.setdefault(key, set()).add(c["memo"]["tag"])
    assert all(len(tags) <= 2 for tags in by_question.values())
    assert any(len(tags) == 2 for tags in by_question.values())


def test_js_memoizes_a_series_decimal_as_python_does(js_page: Any, web_root_url: str) -> None:
    """one_bit_mean's α-point, end and memoized bit, and duchi's per-value memo: the same report
    and ledger tag from the same device secret, no fresh draw."""
    cases = memo_cases()
    failures: list[str] = []
    for start in range(0, len(cases), 100):
        failures += js_page.evaluate(MEMO_REPLAY, [web_root_url, cases[start:start + 100]])
    assert not failures, f"{len(failures)} of {len(cases)} differ:\n" + "\n".join(failures[:20])


def test_the_page_rebuilds_the_signed_bytes(js_page: Any, web_root_url: str) -> None:
    texts = [c["text"] for c in canonical_cases()]
    rebuilt = js_page.evaluate("""async ([root, texts]) => {
      const C = await import(root + "js/canonical.js");
      return texts.map((text) => C.canonicalSurveyText(JSON.parse(text)));
    }""", [web_root_url, texts])
    assert rebuilt == texts


@pytest.mark.parametrize("epsilon", [0.3, 1.0])  # hybrid: Duchi's alone (α = 0), then mixed
@pytest.mark.parametrize("mechanism", ["duchi", "piecewise", "hybrid", "square_wave"])
@pytest.mark.parametrize("grid", [(0, 20000, 10), (-2.5, 3, "0.1"), (0, 1, "0.25")])
def test_the_review_states_the_range_pythons_mechanism_sends(js_page: Any, web_root_url: str,
                                                             mechanism: str, grid: Any,
                                                             epsilon: float) -> None:
    """"a number between A and B that depends on your answer": A and B the lowest and highest
    numbers a report of Python's mechanism stands for, on the question's scale, and the
    command line's sentence (DecimalType.device_chances) character for character."""
    keys = {"estimate": ["distribution"], "bins": 2} if mechanism == "square_wave" else {}
    q = question(grid, mechanism=mechanism, epsilon=epsilon, **keys)
    low, high = stated_range(q)
    said = js_page.evaluate("""async ([root, q]) => {
      const M = await import(root + "js/mechanisms.js");
      return M.mechanismFor(q).describe().text;
    }""", [web_root_url, q])
    assert said == (f"Your device will send a number between {low} and {high} that depends on "
                    "your answer.")
    assert said == cli_chances(q)


def test_js_refuses_tampered_definitions(js_page: Any, web_root_url: str) -> None:
    described = [{"why": why, "question": q} for why, q in refused()]
    results = js_page.evaluate("""async ([root, cases]) => {
      const M = await import(root + "js/mechanisms.js");
      return cases.map((c) => {
        try { M.mechanismFor(c.question); return `${c.why}: accepted`; }
        catch (e) {
          return e instanceof M.ManifestMismatch ? null : `${c.why}: ${e.name} ${e.message}`;
        }
      }).filter((x) => x !== null);
    }""", [web_root_url, described])
    assert len(described) >= 6
    assert results == []


@pytest.mark.parametrize("estimate", [["mean"], ["mean", "distribution"]])
@pytest.mark.parametrize("mechanism", MEAN_MECHANISMS)
def test_the_review_says_what_respond_says(js_page: Any, web_root_url: str, mechanism: str,
                                           estimate: list[str]) -> None:
    """Every mean mechanism alone and in the pair (geometric: its noise in steps of the
    resolution), character for character."""
    q = question((-2.5, 3, "0.1"), mechanism=mechanism, estimate=estimate)
    said = js_page.evaluate("""async ([root, q]) => {
      const M = await import(root + "js/mechanisms.js");
      return M.mechanismFor(q).describe().text;
    }""", [web_root_url, q])
    assert said == cli_chances(q)


@pytest.mark.parametrize("mechanism", SERIES_MECHANISMS)
def test_the_review_of_a_series_mechanism_says_what_respond_says(js_page: Any, web_root_url: str,
                                                                 mechanism: str) -> None:
    q = question((-2.5, 3, "0.1"), mechanism=mechanism)
    said = js_page.evaluate("""async ([root, q]) => {
      const M = await import(root + "js/mechanisms.js");
      return M.mechanismFor(q).describe().text;
    }""", [web_root_url, q])
    assert said == cli_chances(q)
