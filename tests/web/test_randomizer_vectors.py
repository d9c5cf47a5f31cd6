"""The browser's randomizers equal shared/'s: every vector reproduced in real Chromium.

For each vector (tests/web/vectors.py, also written to tests/web/vectors.json) the JS
mechanism must request exactly the recorded draws, in order, use all of them, and return the
report the Python client sent (or refuse the same report); memoized vectors must also give the
same ledger tag. Questions the Python side refuses must throw ManifestMismatch in JS.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import random
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from ldpsurvey.shared.exact import rational_exp_floor, rational_floor
from vectors import write_vectors

VECTORS_FILE = Path(__file__).with_name("vectors.json")

REPLAY = """async ([root, cases]) => {
  const M = await import(root + "js/mechanisms.js");
  const R = await import(root + "js/tapes.js");
  const S = await import(root + "js/sha256.js");
  const failures = [];
  cases.forEach((c, i) => {
    try {
      const mech = M.mechanismFor(c.question);
      const tape = R.tapeSource(c.tape);
      const answer = c.question.type === "integer" ? BigInt(c.answer) : c.answer;
      const memo = c.memo ? { secret: S.fromHex(c.memo.secret), series: c.memo.series } : undefined;
      let report;
      let error;
      try {
        report = mech.perturb(answer, tape, memo);
      } catch (e) {
        if (!(e instanceof M.ReportError)) throw e;
        error = "ReportError";
      }
      if (tape.remaining) throw new Error(`${tape.remaining} recorded draws left unused`);
      if (error !== c.error) throw new Error(`error ${error}, Python: ${c.error}`);
      if (!error && JSON.stringify(report) !== JSON.stringify(c.report)) {
        const [js, py] = [report, c.report].map((r) => JSON.stringify(r).slice(0, 200));
        throw new Error(`report ${js}, Python: ${py}`);
      }
      if (c.memo && mech.answerTag(answer, memo) !== c.memo.tag) {
        throw new Error("ledger tag differs");
      }
    } catch (e) {
      const q = c.question;
      failures.push(`case ${i} (${q.mechanism}, ${q.type}, ε=${q.epsilon}): ${e.message}`);
    }
  });
  return failures;
}"""


@pytest.fixture(scope="module")
def vectors() -> dict[str, Any]:
    return write_vectors(VECTORS_FILE)


def test_vectors_cover_every_mechanism_and_edge(vectors: dict[str, Any]) -> None:
    from ldpsurvey.shared.mechanisms import DESIGNS, GRID_MECHANISMS, MECHANISMS, SET_MECHANISMS

    cases = vectors["cases"]
    assert {c["question"]["mechanism"] for c in cases} == (
        set(MECHANISMS) | set(DESIGNS) | set(GRID_MECHANISMS) | set(SET_MECHANISMS))
    sets = [c for c in cases if c["question"]["type"] == "multiselect"]
    assert {len(c["question"]["options"]) for c in sets} >= {2, 64}
    assert any(c["answer"] == [] for c in sets) and any(c.get("memo") for c in sets)
    alone = [c for c in sets if c["question"].get("exclusive")]
    assert {c["question"]["mechanism"] for c in alone} == set(SET_MECHANISMS)
    assert any(c["answer"] == c["question"]["exclusive"][-1:] for c in alone)
    assert {c["question"]["epsilon"] for c in cases} >= {0.01, 50.0}
    sizes = {len(c["question"].get("options", ())) for c in cases}
    assert {2, 3, 16, 1024} <= sizes
    assert any(c["question"].get("instantaneous_epsilon") and c.get("memo") for c in cases)
    assert any(c["question"].get("groups") for c in cases)


def test_js_reproduces_every_python_report(js_page: Any, web_root_url: str,
                                           vectors: dict[str, Any]) -> None:
    cases = vectors["cases"]
    failures: list[str] = []
    for start in range(0, len(cases), 100):
        failures += js_page.evaluate(REPLAY, [web_root_url, cases[start:start + 100]])
    assert not failures, f"{len(failures)} of {len(cases)} vectors differ:\n" + "\n".join(
        failures[:20])


def test_js_refuses_what_python_refuses(js_page: Any, web_root_url: str,
                                        vectors: dict[str, Any]) -> None:
    results = js_page.evaluate("""async ([root, refused]) => {
      const M = await import(root + "js/mechanisms.js");
      return refused.map((r) => {
        try { M.mechanismFor(r.question); return `${r.why}: accepted`; }
        catch (e) {
          return e instanceof M.ManifestMismatch ? null : `${r.why}: ${e.name} ${e.message}`;
        }
      }).filter((x) => x !== null);
    }""", [web_root_url, vectors["refused"]])
    assert len(vectors["refused"]) >= 8
    assert results == []


def test_unknown_mechanism_is_unsupported_not_mismatched(js_page: Any, web_root_url: str,
                                                         vectors: dict[str, Any]) -> None:
    question = dict(vectors["cases"][0]["question"], mechanism="future_mechanism")
    name = js_page.evaluate("""async ([root, q]) => {
      const M = await import(root + "js/mechanisms.js");
      try { M.mechanismFor(q); return "accepted"; } catch (e) { return e.name; }
    }""", [web_root_url, question])
    assert name == "UnsupportedMechanism"


def test_invalid_answers_are_refused_not_clamped(js_page: Any, web_root_url: str,
                                                 vectors: dict[str, Any]) -> None:
    by_type = {}
    for case in vectors["cases"]:
        if not case["question"].get("instantaneous_epsilon"):
            by_type.setdefault(case["question"]["type"], case["question"])
    attempts = [(by_type["binary"], "yes"), (by_type["binary"], 1),
                (by_type["categorical"], "not an option"), (by_type["integer"], "3"),
                (by_type["integer"], 2.5), (by_type["integer"], by_type["integer"]["max"] + 1)]
    names = js_page.evaluate("""async ([root, attempts]) => {
      const M = await import(root + "js/mechanisms.js");
      return attempts.map(([q, answer]) => {
        try { M.mechanismFor(q).perturb(answer); return "accepted"; } catch (e) { return e.name; }
      });
    }""", [web_root_url, attempts])
    assert names == ["AnswerError"] * len(attempts)


def test_rationals_match_fraction(js_page: Any, web_root_url: str) -> None:
    """Exact float -> rational, the certified e^ε bounds, and correctly rounded rational ->
    float, against Python's Fraction over random and edge doubles."""
    rng = random.Random(3)
    values = [1e-300, 5e-324, 0.1, 1.0, math.log(3), 49.999999, 50.0, 2.0**-40]
    values += [rng.uniform(0, 50) for _ in range(60)] + [10 ** rng.uniform(-12, 1.7)
                                                         for _ in range(60)]
    got = js_page.evaluate("""async ([root, values]) => {
      const R = await import(root + "js/rational.js");
      return values.map((x) => [R.Rational.fromNumber(x).toString(),
        R.rationalExpFloor(x).toString(), R.rationalFloor(x).toString(),
        R.rationalExpFloor(x).toNumber(),
        new R.Rational(1n).div(R.rationalExpFloor(x).add(7)).toNumber()]);
    }""", [web_root_url, values])
    for x, (exact, exp_floor, floor, as_float, share) in zip(values, got, strict=True):
        assert Fraction(exact) == Fraction(x)
        assert Fraction(exp_floor) == rational_exp_floor(x)
        if x > 1e-300:
            assert Fraction(floor) == rational_floor(x)
        assert float(as_float) == float(rational_exp_floor(x))  # JSON may bring an int
        assert float(share) == float(1 / (rational_exp_floor(x) + 7))


@pytest.mark.parametrize("length", [0, 1, 55, 56, 63, 64, 65, 200, 1000])
def test_sha256_and_hmac_match_hashlib(js_page: Any, web_root_url: str, length: int) -> None:
    data = bytes((7 * i + length) % 256 for i in range(length))
    key = bytes(range(length % 100))
    digest, mac = js_page.evaluate("""async ([root, data, key]) => {
      const S = await import(root + "js/sha256.js");
      const [d, k] = [S.fromHex(data), S.fromHex(key)];
      return [S.toHex(S.sha256(d)), S.toHex(S.hmacSha256(k, d))];
    }""", [web_root_url, data.hex(), key.hex()])
    assert digest == hashlib.sha256(data).hexdigest()
    assert mac == hmac.new(key, data, hashlib.sha256).hexdigest()


def test_total_epsilon_is_fsum(js_page: Any, web_root_url: str) -> None:
    """The page's ε ceiling sums like client/trust.py (math.fsum): same refusals at the edge."""
    epsilons = [0.1] * 10 + [1e-17] * 5 + [2.0 / 3]
    got = js_page.evaluate("""async ([root, eps]) => {
      const M = await import(root + "js/mechanisms.js");
      const survey = { questions: eps.map((e, i) => ({ id: `q${i}`, epsilon: e })) };
      const total = M.totalEpsilon(survey);
      let refused = null;
      try { M.checkPolicy(survey, 1.6666666666666667); } catch (e) { refused = e.name; }
      return [total, refused];
    }""", [web_root_url, epsilons])
    assert got[0] == math.fsum(epsilons)
    assert got[1] == ("PolicyError" if math.fsum(epsilons) > 1.6666666666666667 else None)
    assert json.dumps(got[0]) == json.dumps(math.fsum(epsilons))


def test_descriptions_state_the_exact_probabilities(js_page: Any, web_root_url: str,
                                                     vectors: dict[str, Any]) -> None:
    """describe() for the page: plain words, and the probability of sending the truth is the
    mechanism's exact p* (rounded to a float); explainReport names what was sent."""
    from ldpsurvey.shared.mechanisms import mechanism_for
    from ldpsurvey.shared.survey import Survey

    seen: dict[str, dict[str, Any]] = {}
    for case in vectors["cases"]:
        q = case["question"]
        key = q["mechanism"] + ("+i" if q.get("instantaneous_epsilon") else "")
        if ("error" not in case and q["epsilon"] == 1.0) or key.endswith("+i"):
            seen.setdefault(key, case)
    described = js_page.evaluate("""async ([root, cases]) => {
      const M = await import(root + "js/mechanisms.js");
      return cases.map((c) => {
        const mech = M.mechanismFor(c.question);
        return [mech.describe(), mech.explainReport(c.report)];
      });
    }""", [web_root_url, list(seen.values())])
    for case, (description, explained) in zip(seen.values(), described, strict=True):
        q = case["question"]
        text = description["text"]
        assert text.startswith("Your") and "NaN" not in text and "undefined" not in text
        assert "NaN" not in explained and "undefined" not in explained
        survey = Survey.from_dict({"id": "d", "title": "d", "version": 1, "questions": [q],
                                   **({"series": "s"} if q.get("instantaneous_epsilon") else {})})
        mech = mechanism_for(survey.questions[0])
        if hasattr(mech, "p_star") and q["mechanism"] != "olh":
            assert description["truthful"] == float(mech.p_star), q["mechanism"]
        if q["type"] == "binary":
            assert explained == ("yes" if case["report"] else "no")
        elif q["mechanism"] in ("grr", "ordinal_exp"):
            assert q["options"][case["report"]] in explained
