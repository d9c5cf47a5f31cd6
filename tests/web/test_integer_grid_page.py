"""The page answers an integer asked on the number grid (issue 41: duchi, piecewise, hybrid,
square_wave, mean_and_distribution; client/web/js/types/integer.js with js/number_grid.js) as
Python does, in real Chromium: every vector of tests/web/integer_grid_vectors.py drawn report
for report from the same recorded draws, the signed bytes rebuilt byte for byte, the review's
sentence the command line's, and a survey answered end to end against a real server (the
page refused such a survey by name before)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from integer_grid_vectors import canonical_cases, cli_chances, question, report_cases
from ldpsurvey.client.review import chances, report_words
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Survey
from test_decimal_page import publish
from test_decimal_vectors import REPLAY
from test_page import READY, SENT


@pytest.fixture(scope="module")
def cases() -> list[dict[str, Any]]:
    return report_cases()


def test_the_vectors_cover_every_grid_mechanism(cases: list[dict[str, Any]]) -> None:
    named = {(c["question"]["mechanism"], c["question"]["params"].get("mean")
              if c["question"]["mechanism"] == "mean_and_distribution" else None)
             for c in cases}
    assert named >= {("duchi", None), ("piecewise", None), ("hybrid", None),
                     ("one_bit_mean", None),
                     ("square_wave", None),
                     *(("mean_and_distribution", m)
                       for m in ("duchi", "piecewise", "hybrid", "geometric"))}


def test_js_reproduces_every_python_report(js_page: Any, web_root_url: str,
                                           cases: list[dict[str, Any]]) -> None:
    failures: list[str] = []
    for start in range(0, len(cases), 100):
        failures += js_page.evaluate(REPLAY, [web_root_url, cases[start:start + 100]])
    assert not failures, f"{len(failures)} of {len(cases)} vectors differ:\n" + "\n".join(
        failures[:20])


def test_the_page_rebuilds_the_signed_bytes(js_page: Any, web_root_url: str) -> None:
    texts = canonical_cases()
    rebuilt = js_page.evaluate("""async ([root, texts]) => {
      const C = await import(root + "js/canonical.js");
      return texts.map((text) => C.canonicalSurveyText(JSON.parse(text)));
    }""", [web_root_url, texts])
    assert rebuilt == texts


@pytest.mark.parametrize("keys", [{"mechanism": "duchi"}, {"mechanism": "hybrid"},
                                  {"estimate": ["distribution"]},
                                  {"estimate": ["mean", "distribution"]}])
def test_the_review_says_the_command_lines_sentence(js_page: Any, web_root_url: str,
                                                    keys: dict[str, Any]) -> None:
    q = question(0, 20000, **keys)
    said = js_page.evaluate("""async ([root, q]) => {
      const M = await import(root + "js/mechanisms.js");
      return M.mechanismFor(q).describe(1234n).text;
    }""", [web_root_url, q])
    assert said == cli_chances(q, 1234)
    assert "1234" not in said


def test_an_integer_asked_for_its_distribution_answered_end_to_end(deployment, page):
    data = publish(deployment, {
        "id": "integer-grid", "title": "Spending", "version": 1, "questions": [
            {"id": "spent", "type": "integer", "text": "Spent last month, in dollars?",
             "min": 0, "max": 20000, "epsilon": 2.0, "estimate": ["mean", "distribution"],
             "bins": 8},
            {"id": "days", "type": "integer", "text": "Days off sick?", "min": 0, "max": 365,
             "epsilon": 1.0, "mechanism": "piecewise"}]})
    survey = Survey.from_dict(data)
    page.goto(deployment.page_url(data["id"]))
    page.wait_for_selector(READY)
    page.locator("#q0-input").fill("1234")
    page.locator("#q1-input").fill("12")
    page.get_by_role("button", name="Review what will be sent").click()
    page.wait_for_selector("#review")
    review = page.locator("#review").inner_text()
    assert "For the average:" in review and "For the distribution:" in review
    for q, kept in zip(survey.questions, (1234, 12), strict=True):
        assert chances(q, mechanism_for(q), kept) in review  # the CLI's sentence, exactly
    page.click("#send")
    page.wait_for_selector(SENT)
    shown = json.loads(page.locator("pre.wire").text_content())
    (stored,) = deployment.stored(data["id"])
    assert stored["answers"] == shown["answers"]
    assert "1234" not in json.dumps(stored["answers"])
    receipt = page.locator(".review.sent").inner_text()
    for q in survey.questions:  # accepted by Python's mechanism, said as the CLI says it
        report = stored["answers"][q.id]
        assert mechanism_for(q).validate_report(report) == report
        assert report_words(q, mechanism_for(q), report) in receipt
    assert isinstance(stored["answers"]["spent"], list) and len(stored["answers"]["spent"]) == 2
    assert page.problems == []
