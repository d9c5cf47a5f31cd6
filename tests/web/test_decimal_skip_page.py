"""The respondent page and a decimal follow-up on a randomized answer ("Do you gamble? If yes:
how much?"), in real Chromium against a real server: the page derives and verifies asked_grid
(client/web/js/asked_grid.js), shows the follow-up only after "Yes", says in the review what is
sent in the command line's words, and sends [asked bit, report cell] for the follow-up whether
it was asked or not; the server stores reports Python's mechanism accepts as they are
(docs/decimal.md, docs/skip-logic.md)."""

from __future__ import annotations

import json
from typing import Any

from ldpsurvey.client.review import chances, report_words
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.skip_logic import NOT_ASKED
from ldpsurvey.shared.survey import Survey
from test_decimal_page import field, publish
from test_page import READY, SENT

SURVEY = {"id": "gamble", "title": "Gambling", "version": 1, "questions": [
    {"id": "gambles", "type": "binary", "text": "Do you gamble?", "epsilon": 1.0},
    {"id": "lost", "type": "decimal", "text": "If yes: how much did you lose?",
     "relevant": "gambles == true", "min": 0, "max": 500, "resolution": 5, "epsilon": 2.0}]}


def _stored_pair(deployment: Any, data: dict[str, Any], page: Any) -> tuple[Any, list[int]]:
    """Send, and return the survey's `lost` question and its stored report, checked by Python's
    mechanism (it accepts it as it is) and equal to what the page shows it sent."""
    page.click("#send")
    page.wait_for_selector(SENT)
    shown = json.loads(page.locator("pre.wire").text_content())
    (stored,) = deployment.stored(data["id"])
    assert stored["answers"] == shown["answers"]
    lost = Survey.from_dict(data).questions[1]
    assert lost.mechanism == "asked_grid" and lost.not_asked
    report = stored["answers"]["lost"]
    assert mechanism_for(lost).validate_report(report) == report
    return lost, report


def test_if_yes_how_much_is_answered_and_the_server_accepts_the_pair(deployment, page):
    data = publish(deployment, SURVEY)
    page.goto(deployment.page_url(data["id"]))
    page.wait_for_selector(READY)
    assert not page.locator("#q1-fieldset").is_visible()
    page.locator("#q0-fieldset").get_by_label("Yes").check()
    assert page.locator("#q1-fieldset").is_visible()
    field(page, 1).fill("122.5")  # to the nearest 5, half up: 125
    page.get_by_role("button", name="Review what will be sent").click()
    page.wait_for_selector("#review")
    review = page.locator("#review").inner_text()
    assert "Your answer (stays on this device): 125" in review
    lost = Survey.from_dict(data).questions[1]
    assert chances(lost, mechanism_for(lost), 125) in review  # the CLI's sentence, exactly
    lost, report = _stored_pair(deployment, data, page)
    receipt = page.locator(".review.sent").inner_text()
    assert report_words(lost, mechanism_for(lost), report) in receipt
    assert page.problems == []


def test_no_sends_the_follow_up_as_not_asked_all_the_same(deployment, page):
    data = publish(deployment, SURVEY)
    page.goto(deployment.page_url(data["id"]))
    page.wait_for_selector(READY)
    page.locator("#q0-fieldset").get_by_label("Yes").check()
    field(page, 1).fill("40")
    page.locator("#q0-fieldset").get_by_label("No").check()  # the number is not sent
    assert not page.locator("#q1-fieldset").is_visible()
    page.get_by_role("button", name="Review what will be sent").click()
    page.wait_for_selector("#review")
    review = page.locator("#review").inner_text()
    assert "If yes: how much did you lose?" in review  # the hidden line names it
    assert "40" not in review.replace("Do you gamble?", "")
    lost, report = _stored_pair(deployment, data, page)
    assert report_words(lost, mechanism_for(lost), report) in \
        page.locator(".review.sent").inner_text()
    assert NOT_ASKED not in json.dumps(deployment.stored(data["id"]))
    assert page.problems == []
