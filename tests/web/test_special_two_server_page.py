"""Special values in a two-server survey on the page (docs/special-values.md): the type units'
measurement (client/web/js/types: `encoding`, `measuredIndex`) is Python's
(shared/two_server/encoding.py) for binary, categorical and ordinal questions with special
values, with and without "not asked", so a special value is uploaded as its Histogram cell
with no new circuit (an integer's cells: its range's values, then the special values); an
integer question with special values and a local ε0 is refused, as shared/survey.py refuses
it."""

from __future__ import annotations

from typing import Any

from ldpsurvey.shared.errors import AnswerError
from ldpsurvey.shared.skip_logic import NOT_ASKED
from ldpsurvey.shared.two_server.encoding import question_encoding, question_index
from support.two_server_stand_ins import question_data, survey_of

DK, PNTA = "Don't know", "Prefer not to say"
BOTH = {"dont_know": DK, "refused": PNTA}

UNIT_REPLAY = """async ([root, cases]) => {
  const { unitOf } = await import(root + "js/types/index.js");
  return cases.map(([q, notAsked, answers]) => ({
    encoding: unitOf(q).encoding(q, notAsked),
    measured: answers.map((a) => {
      try { return unitOf(q).measuredIndex(q, a, notAsked); }
      catch (e) { return { refused: e.name }; }
    }),
  }));
}"""


def _questions() -> list[Any]:
    gate = question_data("binary", 1.0, qid="gate")
    plain = [question_data("binary", 1.0, qid="b", special=BOTH),
             question_data("categorical", 1.0, qid="c", options=["a", "b", "c"],
                           special={"refused": PNTA}),
             question_data("ordinal", 1.0, qid="o", options=["lo", "mid", "hi"], special=BOTH),
             question_data("integer", 1.0, qid="n", min=0, max=4, special=BOTH)]
    follow = [{**data, "id": data["id"] + "_f", "relevant": "gate"} for data in plain]
    return survey_of([gate, *plain, *follow]).questions[1:]


def test_the_pages_measurement_of_special_values_is_pythons(js_page, web_root_url) -> None:
    cases, expected = [], []
    for q in _questions():
        answers = [*q.unit.values(q), DK, PNTA, NOT_ASKED, "nothing"]
        enc = question_encoding(q)
        measured: list[Any] = []
        for a in answers:
            try:
                measured.append(question_index(q, a))
            except AnswerError:
                measured.append({"refused": "AnswerError"})
        cases.append([q.to_dict(), q.not_asked, answers])
        expected.append({"encoding": {"kind": enc.kind, "length": enc.length,
                                      "max": enc.max_measurement}, "measured": measured})
    assert js_page.evaluate(UNIT_REPLAY, [web_root_url, cases]) == expected
    assert all(e["encoding"]["kind"] == "histogram" for e in expected)


REFUSAL = """async ([root, survey]) => {
  const { checkTwoServer } = await import(root + "js/twoserver/verify.js");
  try { checkTwoServer(survey); return null; } catch (e) { return e.message; }
}"""


def test_an_integer_with_special_values_and_a_local_epsilon_is_refused(js_page,
                                                                     web_root_url) -> None:
    survey = survey_of([question_data("ordinal", 1.0, qid="o", options=["lo", "hi"],
                                      special=BOTH)]).to_dict()
    assert js_page.evaluate(REFUSAL, [web_root_url, survey]) is None
    plain = {**question_data("integer", 1.0, qid="n", min=0, max=5), "text": "How many?",
             "epsilon": 1.0, "mechanism": "none", "special": {"refused": PNTA}}
    survey["questions"].append(plain)  # a Histogram over its values and special values
    assert js_page.evaluate(REFUSAL, [web_root_url, survey]) is None
    # a forged document: shared/survey.py refuses `special` on an integer with a local ε0
    survey["questions"][-1] = {**plain, "local_epsilon": 2.0, "mechanism": "asked_geometric"}
    message = js_page.evaluate(REFUSAL, [web_root_url, survey])
    assert message is not None and "“How many?”" in message and "special values" in message
