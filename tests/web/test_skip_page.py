"""Skip logic on the respondent page, in real Chromium against a real `ldpsurvey serve`: a
follow-up appears and disappears as the answer it depends on changes (announced, from the
keyboard alone, at phone width), the review lists only what applies and says why a randomized
"not asked" is still sent, and the server stores reports of the same shape whatever was
answered."""

from __future__ import annotations

from typing import Any

from support.skip import report_shape, skip_survey

READY = "body[data-state=ready]"
SENT = "body[data-delivery=sent]"


def publish(deployment: Any, survey_id: str) -> str:
    deployment.server.publish(skip_survey(survey_id), deployment.key, deployment.token)
    return deployment.page_url(survey_id)


def visible(page: Any, index: int) -> bool:
    return page.locator(f"#q{index}-fieldset").is_visible()


def test_a_follow_up_appears_and_disappears_as_its_condition_changes(deployment, page):
    page.goto(publish(deployment, "skip-live"))
    page.wait_for_selector(READY)
    assert [visible(page, i) for i in range(5)] == [True, False, False, True, False]
    page.locator("#q0-fieldset").get_by_label("Yes").check()
    assert visible(page, 1) and not visible(page, 2)
    assert "Question 2 now applies" in page.locator("#skip-live").text_content()
    page.get_by_label("weekly").check()
    assert visible(page, 2)  # a follow-up of a follow-up
    page.locator("#q0-fieldset").get_by_label("No").check()
    assert not visible(page, 1) and not visible(page, 2)  # both go when the gate closes
    live = page.locator("#skip-live").text_content()
    assert "Question 2 no longer applies." in live and "Question 3 no longer applies." in live
    page.get_by_label("north").check()
    assert visible(page, 4)
    page.get_by_label("south").check()
    assert not visible(page, 4)
    assert page.problems == []


def test_keyboard_only_the_review_lists_what_applies_and_says_what_is_sent_for_the_rest(
        deployment, page):
    sid = "skip-keys"
    page.goto(publish(deployment, sid))
    page.wait_for_selector(READY)
    keys = page.keyboard
    page.locator("#q0-fieldset input").first.focus()  # question 1: "Yes"
    keys.press("ArrowRight")      # "No" (a radio group moves with the arrows)
    assert page.locator("#q0-fieldset").get_by_label("No").is_checked()
    assert not visible(page, 1)
    keys.press("ArrowLeft")       # back to "Yes": the follow-up appears
    assert visible(page, 1)
    keys.press("Tab")             # into the follow-up, which is next in the tab order
    assert page.evaluate("document.activeElement.closest('fieldset').id") == "q1-fieldset"
    keys.press("ArrowDown")       # "monthly"
    keys.press("Tab")             # the number of days now applies
    assert page.evaluate("document.activeElement.closest('fieldset').id") == "q2-fieldset"
    keys.type("4")
    keys.press("Tab")             # region: disclosed
    keys.press("ArrowDown")       # "south": the clinic question does not apply
    keys.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Review what will be sent"
    keys.press("Enter")
    page.wait_for_selector("#review")
    listed = page.locator("#review ol.review > li .qtext").all_text_contents()
    assert listed == ["Have you used cannabis in the past year?", "How often?",
                      "On how many days last month?", "Where do you live?"]
    notes = page.locator("#review p.skipped").all_text_contents()
    assert len(notes) == 1 and "“Have you been to the northern clinic?”" in notes[0]
    assert "Nothing is sent for them" in notes[0]
    keys.press("Tab")
    assert page.evaluate("document.activeElement.id") == "send"
    keys.press("Enter")
    page.wait_for_selector(SENT)
    (stored,) = deployment.stored(sid)
    assert set(stored["answers"]) == {"used", "freq", "days", "region"}
    assert page.problems == []


def test_not_asked_is_still_sent_and_the_stored_shape_is_the_same(deployment, browser):
    """Two respondents, one who used and one who did not: the server stores the same questions
    with reports of the same shape, and the second review says a randomized "not asked" goes
    out for the follow-ups, and why. At phone width."""
    sid = "skip-shape"
    url = publish(deployment, sid)
    for used in (True, False):
        phone = browser.new_context(viewport={"width": 360, "height": 640}, is_mobile=True,
                                    has_touch=True)
        try:
            tab = phone.new_page()
            tab.goto(url)
            tab.wait_for_selector(READY)
            tab.locator("#q0-fieldset").get_by_label("Yes" if used else "No").check()
            if used:
                tab.get_by_label("weekly").check()
                tab.get_by_label("A whole number from 0 to 30").fill("12")
            tab.get_by_label("north").check()
            tab.locator("#q4-fieldset").get_by_label("No").check()
            tab.get_by_role("button", name="Review what will be sent").click()
            tab.wait_for_selector("#review")
            review = tab.locator("#review").inner_text()
            width = tab.evaluate("window.innerWidth")
            assert tab.evaluate("document.documentElement.scrollWidth") <= width
            if not used:
                note = tab.locator("#review p.skipped").inner_text()
                assert "“How often?”; “On how many days last month?”" in note
                assert "still sends a randomized ‘not asked’" in note
                assert "would reveal those answers" in note
                assert "ε = 2 in total" in note
            assert "ε = 4 in total" in review  # used, freq, days, clinic: always sent
            tab.locator("#send").tap()
            tab.wait_for_selector(SENT)
        finally:
            phone.close()
    rows = deployment.stored(sid)
    assert len(rows) == 2
    shapes = [{qid: report_shape(report) for qid, report in row["answers"].items()} for row in rows]
    assert shapes[0] == shapes[1]
    assert set(shapes[0]) == {"used", "freq", "days", "region", "clinic"}

