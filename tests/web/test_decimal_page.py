"""Decimal questions on the page, in real Chromium against a real server: the sample survey
shared/samples/income.toml answered end to end on a phone-sized window (a numeric keypad,
inputmode="decimal"), answers rounded to the resolution as Python rounds them, clear inline
errors for a number out of range or text that is not a number, the review saying in plain
words what is sent, and the stored reports accepted by Python's mechanisms."""

from __future__ import annotations

import json
import re
from typing import Any

from ldpsurvey.client.review import chances, report_words
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Survey
from test_page import READY, SENT
from test_page_weight import sample_survey


def publish(deployment: Any, data: dict[str, Any]) -> dict[str, Any]:
    data = {**data, "id": f"{data['id']}-{next(deployment.ids)}"}
    deployment.server.publish(data, deployment.key, deployment.token)
    return data


def field(page: Any, index: int) -> Any:
    return page.locator(f"#q{index}-input")


def test_the_income_sample_answered_on_a_phone_and_stored(deployment, page):
    page.set_viewport_size({"width": 360, "height": 740})
    data = publish(deployment, sample_survey("income"))
    survey = Survey.from_dict(data)
    decimals = [(i, q) for i, q in enumerate(survey.questions) if q.type == "decimal"]
    assert [q.id for _, q in decimals] == ["income", "hours", "gambling"]
    page.goto(deployment.page_url(data["id"]))
    page.wait_for_selector(READY)
    for index, _ in decimals:  # a phone shows its numeric keypad with a decimal mark
        assert field(page, index).get_attribute("inputmode") == "decimal"
    assert "A number from 0 to 20000 (kept to the nearest 10)" in page.locator(
        "#q1-fieldset").inner_text()
    page.get_by_label("north").check()
    income, hours, gambling = (field(page, i) for i, _ in decimals)
    income.fill("1,234.5")      # thousands separators: refused, not guessed
    hours.fill("eighty")        # not a number
    gambling.fill("500.5")      # past max
    page.get_by_role("button", name="Review what will be sent").click()
    errors = {i: page.locator(f"#q{i}-error") for i, _ in decimals}
    assert errors[1].inner_text() == ("Please enter the number without separators between "
                                      "thousands, such as 10000.")
    assert errors[2].inner_text() == "Please enter a number, such as 40."
    assert errors[3].inner_text() == "Please enter a number from 0 to 500."
    assert income.get_attribute("aria-invalid") == "true"
    assert page.evaluate("document.activeElement.id") == "q1-input"
    assert page.locator("#review").count() == 0
    income.fill("12344.99")     # to the nearest 10: 12340
    hours.fill("37.75")         # to the nearest 0.5, half up: 38
    gambling.fill(" 20 ")
    page.get_by_role("button", name="Review what will be sent").click()
    page.wait_for_selector("#review")
    review = page.locator("#review").inner_text()
    for kept in ("Your answer (stays on this device): 12340",
                 "Your answer (stays on this device): 38",
                 "Your answer (stays on this device): 20"):
        assert kept in review
    assert review.count("that depends on your answer") >= 3
    assert "For the average:" in review and "For the distribution:" in review
    for (_, q), kept in zip(decimals, (12340, 38, 20), strict=True):
        assert chances(q, mechanism_for(q), kept) in review  # the CLI's sentence, exactly
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    page.click("#send")
    page.wait_for_selector(SENT)
    shown = json.loads(page.locator("pre.wire").text_content())
    (stored,) = deployment.stored(data["id"])
    assert stored["answers"] == shown["answers"]
    for _, q in decimals:  # each report is one Python's mechanism accepts as it is
        mechanism = mechanism_for(q)
        assert mechanism.validate_report(stored["answers"][q.id]) == stored["answers"][q.id]
    assert isinstance(stored["answers"]["income"], list) and len(stored["answers"]["income"]) == 2
    receipt = page.locator(".review.sent").inner_text()
    assert "the numbers" in receipt and "(for the average)" in receipt
    for _, q in decimals:  # the number each report stands for, as the CLI's receipt says it
        assert report_words(q, mechanism_for(q), stored["answers"][q.id]) in receipt
    assert page.problems == []


def test_an_optional_decimal_left_empty_is_skipped(deployment, page):
    data = publish(deployment, {
        "id": "decimal-optional", "title": "Optional", "version": 1, "questions": [
            {"id": "debt", "type": "decimal", "text": "Your debt, if any", "min": -2.5,
             "max": 3, "resolution": "0.1", "epsilon": 1.0, "optional": True,
             "mechanism": "duchi"},
            {"id": "smoker", "type": "binary", "text": "Do you smoke?", "epsilon": 1.0}]})
    page.goto(deployment.page_url(data["id"]))
    page.wait_for_selector(READY)
    page.get_by_label("Yes").check()
    page.get_by_role("button", name="Review what will be sent").click()
    page.wait_for_selector("#review")
    page.click("#send")
    page.wait_for_selector(SENT)
    (stored,) = deployment.stored(data["id"])
    assert set(stored["answers"]) == {"smoker"}


def test_a_negative_decimal_in_french_with_a_comma(deployment, browser):
    """The page's language's decimal mark is typed and shown: -1,25 in French is -1.25, kept to
    the nearest 0.1 (half up: -1.2), and what is sent is said in French with French numbers."""
    context = browser.new_context(locale="fr-FR")
    try:
        page = context.new_page()
        data = publish(deployment, {
            "id": "decimal-fr", "title": "Debt", "version": 1, "language": "en",
            "questions": [
                {"id": "debt", "type": "decimal", "text": "Your debt", "min": -2.5,
                 "max": 3, "resolution": "0.1", "epsilon": 1.0, "mechanism": "duchi"}],
            "translations": {"fr": {"title": "Dette",
                                    "questions": {"debt": {"text": "Votre dette"}}}}})
        page.goto(deployment.page_url(data["id"]))
        page.wait_for_selector(READY)
        assert page.evaluate("document.documentElement.lang") == "fr"
        assert "Un nombre de -2,5 à 3 (arrondi à 0,1 près)" in page.locator(
            "#q0-fieldset").inner_text()
        field(page, 0).fill("-1,25")
        page.locator("form#answers button[type=submit]").click()
        page.wait_for_selector("#review")
        review = page.locator("#review").inner_text()
        assert "-1,2" in review
        assert re.search(r"Votre appareil enverra un nombre entre -\d+,\d et \d+,\d qui dépend "
                         r"de votre réponse\.", review), review
        page.click("#send")
        page.wait_for_selector(SENT)
        (stored,) = deployment.stored(data["id"])
        assert stored["answers"]["debt"] in (0, 1)
    finally:
        context.close()


def test_a_hidden_follow_up_on_a_disclosed_answer_how_much(deployment, page):
    """"If yes: how much?" on a disclosed yes/no: the decimal shows only after "Yes", and is
    sent only then (a decimal cannot follow a randomized answer: it has no "not asked")."""
    data = publish(deployment, {
        "id": "decimal-follow-up", "title": "Debt", "version": 1, "questions": [
            {"id": "owes", "type": "binary", "text": "Do you owe money?", "disclosed": True},
            {"id": "amount", "type": "decimal", "text": "If yes: how much?", "min": 0,
             "max": 10000, "resolution": 50, "epsilon": 1.0, "relevant": "owes"}]})
    page.goto(deployment.page_url(data["id"]))
    page.wait_for_selector(READY)
    assert not page.locator("#q1-fieldset").is_visible()
    page.get_by_label("Yes").check()
    assert page.locator("#q1-fieldset").is_visible()
    field(page, 1).fill("1234")  # to the nearest 50: 1250
    page.get_by_label("No").check()
    assert not page.locator("#q1-fieldset").is_visible()
    page.get_by_label("Yes").check()
    page.get_by_role("button", name="Review what will be sent").click()
    page.wait_for_selector("#review")
    assert "Your answer (stays on this device): 1250" in page.locator("#review").inner_text()
    page.click("#send")
    page.wait_for_selector(SENT)
    (stored,) = deployment.stored(data["id"])
    assert stored["answers"]["owes"] is True and isinstance(stored["answers"]["amount"], int)
    assert page.problems == []
