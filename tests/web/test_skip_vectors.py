"""The page randomizes questions with a "not asked" value as the Python client does: every skip
vector (skip_vectors.py) reproduced draw for draw in real Chromium, the same words in the review
and the receipt, and the same refusals of a tampered survey."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from ldpsurvey.client.review import chances, report_words
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.skip_logic import NOT_ASKED
from ldpsurvey.shared.survey import Survey
from skip_vectors import build_skip_vectors, survey_of

REPLAY = """async ([root, cases]) => {
  const M = await import(root + "js/mechanisms.js");
  const K = await import(root + "js/skip_logic.js");
  const R = await import(root + "js/tapes.js");
  const S = await import(root + "js/sha256.js");
  const failures = [];
  cases.forEach((c, i) => {
    try {
      const plan = K.skipPlan(c.survey);
      if (!plan.get("q").notAsked || plan.get("gate").notAsked) throw new Error("skip plan");
      const mech = M.mechanismFor(c.question, { notAsked: true });
      const tape = R.tapeSource(c.tape);
      const answer = c.question.type === "integer" && c.answer !== K.NOT_ASKED
        ? BigInt(c.answer) : c.answer;
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
        throw new Error(`report ${JSON.stringify(report)}, Python: ${JSON.stringify(c.report)}`);
      }
      if (c.memo && mech.answerTag(answer, memo) !== c.memo.tag) throw new Error("ledger tag");
    } catch (e) {
      const q = c.question;
      failures.push(`case ${i} (${q.mechanism}, ${q.type}, ε=${q.epsilon}, ${c.answer}): ` +
                    e.message);
    }
  });
  return failures;
}"""


@pytest.fixture(scope="module")
def cases() -> list[dict[str, Any]]:
    return build_skip_vectors()


def test_vectors_cover_every_type_and_not_asked(cases: list[dict[str, Any]]) -> None:
    assert {c["question"]["mechanism"] for c in cases} == {
        "grr", "hr", "ordinal_exp", "asked_geometric", "option_rr", "set_ue", "psfo_grr"}
    assert {c["question"]["type"] for c in cases} == {"binary", "categorical", "ordinal",
                                                       "integer", "multiselect"}
    assert sum(c["answer"] == NOT_ASKED for c in cases) > 50
    assert any(c.get("memo") for c in cases) and any(c.get("error") for c in cases) is False


def test_js_reproduces_every_python_report(js_page: Any, web_root_url: str,
                                           cases: list[dict[str, Any]]) -> None:
    failures: list[str] = []
    for start in range(0, len(cases), 100):
        failures += js_page.evaluate(REPLAY, [web_root_url, cases[start:start + 100]])
    assert not failures, f"{len(failures)} of {len(cases)} differ:\n" + "\n".join(failures[:20])


def test_the_review_and_receipt_say_the_same_words_on_the_page_and_the_cli(
        js_page: Any, web_root_url: str, cases: list[dict[str, Any]]) -> None:
    seen: dict[tuple[Any, ...], dict[str, Any]] = {}
    for case in cases:
        q = case["question"]
        key = (q["mechanism"], q["type"], q.get("instantaneous_epsilon") is not None,
               q["epsilon"], case["answer"] == NOT_ASKED)
        seen.setdefault(key, case)
    picked = list(seen.values())
    on_page = js_page.evaluate("""async ([root, cases]) => {
        const M = await import(root + "js/mechanisms.js");
        const R = await import(root + "js/review.js");
        const K = await import(root + "js/skip_logic.js");
        return cases.map((c) => {
          const q = c.question;
          const answer = q.type === "integer" && c.answer !== K.NOT_ASKED ? Number(c.answer)
            : c.answer;
          const mechanisms = new Map([[q.id, M.mechanismFor(q, { notAsked: true })]]);
          return [R.chances(q, mechanisms.get(q.id), answer),
                  R.sentList({ questions: [q] }, { [q.id]: c.report }, mechanisms)
                    .querySelector(".sent").textContent];
        });
    }""", [web_root_url, picked])
    for case, (page_text, page_sent) in zip(picked, on_page, strict=True):
        survey = Survey.from_dict(case["survey"])
        question = survey.questions[1]
        mechanism = mechanism_for(question)
        answer = case["answer"]
        if question.type == "integer" and answer != NOT_ASKED:
            answer = int(answer)
        assert chances(question, mechanism, answer) == page_text
        assert f"Your device sent: {report_words(question, mechanism, case['report'])}" == \
            page_sent
        assert "undefined" not in page_text and "NaN" not in page_text
        if mechanism.name in ("grr", "asked_geometric"):  # layered: the general words
            assert "‘not asked’" in page_text


def _refusals() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(why, survey, question) a page must refuse: tampered "not asked" parameters, a
    mechanism that cannot carry "not asked", skip logic shared/ refuses."""
    out = []
    categorical = survey_of({"type": "categorical", "mechanism": "grr", "epsilon": 1.0,
                             "options": ["a", "b", "c"]})
    tampered = copy.deepcopy(categorical)
    # the parameters of GRR over the 3 options alone, as if "not asked" were not in the domain
    tampered["questions"][1]["params"] = Survey.from_dict(
        {**categorical, "questions": [categorical["questions"][0],
                                      {**categorical["questions"][1], "relevant": None,
                                       "params": {}}]}).to_dict()["questions"][1]["params"]
    out.append(("GRR parameters without 'not asked'", tampered, tampered["questions"][1]))
    integer = survey_of({"type": "integer", "epsilon": 1.0, "min": 0, "max": 30})
    raised = copy.deepcopy(integer)
    raised["questions"][1]["params"]["rate"] = "1/15"
    out.append(("a faster noise rate than ε allows", raised, raised["questions"][1]))
    unfit = copy.deepcopy(categorical)
    unfit["questions"][1]["mechanism"] = "oue"
    out.append(("a mechanism that cannot carry 'not asked'", unfit, unfit["questions"][1]))
    return out


def test_the_page_refuses_tampered_not_asked_questions(js_page: Any,
                                                       web_root_url: str) -> None:
    refusals = _refusals()
    for _why, survey, _question in refusals:
        with pytest.raises(Exception):  # noqa: B017 (any refusal: SurveyError, PrivacyCheck)
            Survey.from_dict(survey)
    results = js_page.evaluate("""async ([root, refusals]) => {
      const M = await import(root + "js/mechanisms.js");
      return refusals.map(([why, survey, q]) => {
        try { M.mechanismFor(q, { notAsked: true }); return `${why}: accepted`; }
        catch (e) { return e instanceof M.ManifestMismatch ? null : `${why}: ${e.name}`; }
      }).filter((x) => x !== null);
    }""", [web_root_url, refusals])
    assert results == []


@pytest.mark.parametrize(("why", "change"), [
    ("a disclosed question depending on a randomized answer",
     {"disclosed": True, "type": "binary"}),
    ("an optional question depending on a randomized answer", {"optional": True}),
    ("a condition that reads a later question", {"relevant": "later"}),
    ("a condition that does not parse", {"relevant": "gate = true"}),
])
def test_the_page_refuses_skip_logic_shared_refuses(js_page: Any, web_root_url: str, why: str,
                                                    change: dict[str, Any]) -> None:
    survey = survey_of({"type": "binary", "epsilon": 1.0})
    survey["questions"].append({**survey["questions"][0], "id": "later"})
    question = survey["questions"][1]
    question.update(change)
    if change.get("disclosed"):
        for key in ("epsilon", "mechanism", "params", "mechanism_choice"):
            question.pop(key, None)
    with pytest.raises(Exception):  # noqa: B017 (shared/ refuses it when parsing)
        Survey.from_dict(survey)
    name = js_page.evaluate("""async ([root, survey]) => {
      const K = await import(root + "js/skip_logic.js");
      try { K.skipPlan(survey); return "accepted"; } catch (e) { return e.name; }
    }""", [web_root_url, survey])
    assert name == "SkipMismatch", why
