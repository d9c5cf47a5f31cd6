"""The page randomizes questions with special values ("Don't know", "Prefer not to say") as the
Python client does: every case reproduced draw for draw in real Chromium (the index mechanism
over the extended domain; an integer's status code pair), with and without a "not asked" value,
and the page's review and receipt words stay defined for every one of them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.skip_logic import NOT_ASKED
from ldpsurvey.shared.survey import Survey
from skip_vectors import GATE
from vectors import SEEDS, _answers, _perturb

SPECIAL = {"dont_know": "Don't know", "refused": "Prefer not to say"}


def _survey(spec: dict[str, Any], gated: bool) -> dict[str, Any]:
    question = {"id": "q", "text": "Then?", **spec, **({"relevant": "gate"} if gated else {})}
    return Survey.from_dict({"id": "special-vectors", "title": "Special vectors", "version": 1,
                             "questions": [GATE, question]}).to_dict()


def _specs() -> Iterator[dict[str, Any]]:
    for epsilon in (0.01, 1.0, 50.0):
        for special in (SPECIAL, {"refused": "Prefer not to say"}):
            yield {"type": "binary", "epsilon": epsilon, "special": special}
            yield {"type": "binary", "mechanism": "hr", "epsilon": epsilon, "special": special}
            for name in ("grr", "hr"):
                yield {"type": "categorical", "mechanism": name, "epsilon": epsilon,
                       "options": ["a", "b", "c"], "special": special}
            yield {"type": "ordinal", "mechanism": "ordinal_exp", "epsilon": epsilon,
                   "options": ["low", "mid", "high"], "special": special}
            for low, high in ((0, 1), (0, 30), (-5, 10)):
                yield {"type": "integer", "epsilon": epsilon, "min": low, "max": high,
                       "special": special}


def build_special_vectors() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    for spec in _specs():
        for gated in (False, True):
            survey = _survey(spec, gated)
            question = survey["questions"][1]
            mech = mechanism_for(Survey.from_dict(survey).questions[1])
            extra = [*spec["special"].values(), *([NOT_ASKED] if gated else [])]
            for answer in [*_answers(question, every=False), *extra]:
                for seed in SEEDS[:2]:
                    cases.append({"survey": survey, "question": question, "answer": answer,
                                  "gated": gated, **_perturb(mech, answer, seed)})
    for case in cases:
        case["tape"] = [[hex(n), hex(v)] for n, v in case["tape"]]
        if case["question"]["type"] == "integer" and not isinstance(case["answer"], str):
            case["answer"] = str(case["answer"])
    return cases


REPLAY = """async ([root, cases]) => {
  const M = await import(root + "js/mechanisms.js");
  const O = await import(root + "js/optional.js");
  const K = await import(root + "js/skip_logic.js");
  const R = await import(root + "js/tapes.js");
  const V = await import(root + "js/review.js");
  const failures = [];
  for (const [i, c] of cases.entries()) {
    try {
      await O.loadFor(c.survey);
      const plan = K.skipPlan(c.survey);
      if (plan.get("q").notAsked !== c.gated) throw new Error("skip plan");
      const mech = M.mechanismFor(c.question, { notAsked: c.gated });
      const tape = R.tapeSource(c.tape);
      const q = c.question;
      const special = Object.values(q.special);
      const answer = q.type === "integer" && c.answer !== K.NOT_ASKED && !special.includes(c.answer)
        ? BigInt(c.answer) : c.answer;
      const report = mech.perturb(answer, tape);
      if (tape.remaining) throw new Error(`${tape.remaining} recorded draws left unused`);
      if (JSON.stringify(report) !== JSON.stringify(c.report)) {
        throw new Error(`report ${JSON.stringify(report)}, Python: ${JSON.stringify(c.report)}`);
      }
      const shown = typeof answer === "bigint" ? Number(answer) : answer;
      const words = V.chances(q, mech, shown) + " " + mech.explainReport(report);
      if (/undefined|NaN|\\{/.test(words)) throw new Error(`words: ${words}`);
    } catch (e) {
      const q = c.question;
      failures.push(`case ${i} (${q.mechanism}, ${q.type}, ε=${q.epsilon}, ${c.answer}): ` +
                    e.message);
    }
  }
  return failures;
}"""


@pytest.fixture(scope="module")
def cases() -> list[dict[str, Any]]:
    return build_special_vectors()


def test_vectors_cover_every_type_and_value(cases: list[dict[str, Any]]) -> None:
    assert {c["question"]["mechanism"] for c in cases} == {
        "grr", "hr", "ordinal_exp", "asked_geometric"}
    assert {c["question"]["type"] for c in cases} == {"binary", "categorical", "ordinal",
                                                       "integer"}
    assert sum(c["answer"] == "Prefer not to say" for c in cases) > 50
    codes = {c["report"][0] for c in cases if c["question"]["type"] == "integer"}
    assert codes == {0, 1, 2, 3}  # an answer, two special values, "not asked"


def test_js_reproduces_every_python_report(js_page: Any, web_root_url: str,
                                           cases: list[dict[str, Any]]) -> None:
    failures: list[str] = []
    for start in range(0, len(cases), 100):
        failures += js_page.evaluate(REPLAY, [web_root_url, cases[start:start + 100]])
    assert not failures, f"{len(failures)} of {len(cases)} differ:\n" + "\n".join(failures[:20])
