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
    # a yes/no question answered with a special value: the vectors hold a bare `used` false
    # there (what the page must then reproduce), not Python's bool(label)
    bare = next(c for c in valid if c["text"] == "used")
    specials = [i for i, a in enumerate(vectors["answer_sets"])
                if isinstance(a.get("used"), str)]
    assert specials and not any(bare["values"][i] for i in specials)


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


# A yes/no question answered with a special value, with the truths written out by hand (not
# Python's results): the answer is the special value's label, an answer but not a yes.
SPECIAL_YES_NO = [
    ("used", False), ("(used)", False), ("not used", True), ("used == true", False),
    ("used and q.2-b", False), ("used or q.2-b", False), ("not (used or q.2-b)", True),
    ("(used) == true", False), ("used != q.2-b", True), ("answered(used)", True),
]

JUDGE = """async ([root, questions, at, answers, texts]) => {
  const C = await import(root + "js/conditions.js");
  return texts.map((text) => C.parseCondition(text, questions, at).evaluate(answers));
}"""


@pytest.mark.parametrize("special", ["Don't know", "Prefer not to say"])
def test_the_page_reads_a_yes_no_special_value_as_not_yes(
        js_page: Any, web_root_url: str, vectors: dict[str, Any], special: str) -> None:
    """A bare yes/no question means "answered yes" (XLSForm's `${used} = 'yes'` is false for
    a dk choice): the page read Boolean(label), true for a special value's label."""
    other = "Prefer not to say" if special == "Don't know" else "Don't know"
    answers = {"used": special, "q.2-b": other}  # two special values, different labels
    texts = [text for text, _ in SPECIAL_YES_NO]
    got = js_page.evaluate(JUDGE, [web_root_url, vectors["questions"], vectors["at"], answers,
                                   texts])
    assert dict(zip(texts, got, strict=True)) == dict(SPECIAL_YES_NO)
