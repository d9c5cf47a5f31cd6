"""The page's skip-logic conditions equal shared/'s: every shared vector (condition_vectors.py)
parsed and evaluated by client/web/js/conditions.js in real Chromium gives the same references
and truth values, or the same error kind, position and message."""

from __future__ import annotations

from typing import Any

import pytest
from condition_vectors import EXPRESSIONS, build_condition_vectors

REPLAY = """async ([root, vectors]) => {
  const C = await import(root + "js/conditions.js");
  return vectors.cases.map((c) => {
    try {
      const parsed = C.parseCondition(c.text, vectors.questions, vectors.at);
      return { references: [...parsed.references],
               values: vectors.answer_sets.map((answers) => parsed.evaluate(answers)) };
    } catch (e) {
      if (!(e instanceof C.ConditionError)) return { crash: `${e.name}: ${e.message}` };
      return { error: { kind: e.kind, position: e.position, message: e.message } };
    }
  });
}"""


@pytest.fixture(scope="module")
def vectors() -> dict[str, Any]:
    return build_condition_vectors()


def test_vectors_cover_each_kind_of_result(vectors: dict[str, Any]) -> None:
    kinds = {c["error"]["kind"] for c in vectors["cases"] if "error" in c}
    assert kinds == {"syntax", "reference", "type"}
    valid = [c for c in vectors["cases"] if "values" in c]
    assert len(valid) > 40 and all(any(c["values"]) or not all(c["values"]) for c in valid)
    assert any(True in c["values"] and False in c["values"] for c in valid)
    assert len(vectors["cases"]) == len(EXPRESSIONS)


def test_the_page_parses_and_evaluates_every_vector_as_python_does(
        js_page: Any, web_root_url: str, vectors: dict[str, Any]) -> None:
    results = js_page.evaluate(REPLAY, [web_root_url, vectors])
    mismatches = []
    for case, js in zip(vectors["cases"], results, strict=True):
        expected = ({"error": case["error"]} if "error" in case else
                    {"references": case["references"], "values": case["values"]})
        if js != expected:
            mismatches.append(f"{case['text']!r}: Python {expected}, page {js}")
    assert not mismatches, "\n".join(mismatches[:20])
