"""The respondent page with disclosed questions (said plainly next to the question, sent as
given, no ε) and with a named randomized-response design (its exact chances in the review; the
draws themselves are proven equal to Python's by tests/web/vectors.py)."""

from __future__ import annotations

import json
from typing import Any

READY = "body[data-state=ready]"
SENT = "body[data-delivery=sent]"
WORDS = "sent as you answer it, not randomized"


def with_disclosed(survey_id: str) -> dict[str, Any]:
    return {"id": survey_id, "title": "Covariates", "version": 1, "questions": [
        {"id": "region", "text": "Your region?", "type": "categorical",
         "options": ["north", "south"], "disclosed": True},
        {"id": "age", "text": "Your age?", "type": "integer", "min": 18, "max": 99,
         "disclosed": True},
        {"id": "smoker", "text": "Do you smoke?", "type": "binary", "epsilon": 1.0,
         "mechanism": "binary_rr"},
    ]}


def test_disclosed_questions_are_said_plainly_and_sent_as_given(deployment, page):
    data = with_disclosed("web-disclosed")
    deployment.server.publish(data, deployment.key, deployment.token)
    page.goto(deployment.page_url("web-disclosed"))
    page.wait_for_selector(READY)
    form = page.locator("form#answers").inner_text()
    assert form.count(WORDS) == 2
    # the page never claims that every answer is randomized when some are disclosed
    assert ("randomizes every answer before sending it, except the 2 disclosed ones, which "
            "are sent as you give them") in page.locator("#privacy").inner_text()
    page.get_by_label("south").check()
    page.get_by_label("A whole number from 18 to 99").fill("42")
    page.get_by_label("Yes").check()
    page.get_by_role("button", name="Review what will be sent").click()
    page.wait_for_selector("#review")
    review = page.locator("#review").inner_text()
    assert "ε = 1 in total" in review
    assert review.count("Disclosed: no ε") == 2
    assert review.count("Your answer (sent as you give it)") == 2
    assert review.count("Your answer (stays on this device)") == 1
    assert "except the disclosed ones, which are sent as you give them" in review
    page.click("#send")
    page.wait_for_selector(SENT)
    # the receipt's heading said "(randomized)" above the disclosed answers too
    assert page.locator("#receipt-title").inner_text() == (
        "What this device sent (randomized, except the disclosed answers, sent as you gave "
        "them)")
    sent = page.locator("#receipt ol.sent").inner_text()
    assert sent.count("Sent as you gave it, not randomized: ") == 2
    assert "Sent as you gave it, not randomized: the number 42" in sent
    assert sent.count("Your device sent: ") == 1
    shown = json.loads(page.locator("pre.wire").text_content())
    (stored,) = deployment.stored("web-disclosed")
    assert stored["answers"] == shown["answers"]
    assert stored["answers"]["region"] == 1 and stored["answers"]["age"] == 42
    assert page.problems == []


def test_a_named_design_is_answered_with_its_exact_chances(deployment, page):
    data = {"id": "web-forced", "title": "Forced", "version": 1, "questions": [
        {"id": "drugs", "text": "Cannabis this year?", "type": "binary",
         "mechanism": "forced_response",
         "params": {"p_truth": "3/4", "forced": {"yes": "1/8", "no": "1/8"}}}]}
    deployment.server.publish(data, deployment.key, deployment.token)
    page.goto(deployment.page_url("web-forced"))
    page.wait_for_selector(READY)
    page.get_by_label("Yes").check()
    page.get_by_role("button", name="Review what will be sent").click()
    page.wait_for_selector("#review")
    review = page.locator("#review").inner_text()
    # P(yes | yes) = 3/4 + 1/8, P(no | yes) = 1/8; exact ε = ln 7
    # the report that is the real answer is marked, as for binary_rr (issue 32)
    assert ("Your device will send one of these at random (forced response): ‘no’ 12.5%, "
            "‘yes’ (your real answer) 87.5%.") in review
    assert "ε = 1.95 in total" in review
    page.click("#send")
    page.wait_for_selector(SENT)
    (stored,) = deployment.stored("web-forced")
    assert isinstance(stored["answers"]["drugs"], bool)
    assert page.problems == []
