"""The respondent page in a real browser against a real `ldpsurvey serve`.

End to end: the page verifies, answers, shows what will be sent, and the server stores a valid
report; the ledger refuses a second answer; a submission that could not be delivered is sent
later, once; the page works from a phone-sized window and from the keyboard alone.
"""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from static_server import serve_web_root
from support.clients import http_json

READY = "body[data-state=ready]"
SENT = "body[data-delivery=sent]"
PENDING = "body[data-delivery=pending]"


def fill_checkin(page: Any) -> None:
    """Answer survey_dict()'s questions: smoker yes, mood fine, drinks 4."""
    page.get_by_label("Yes").check()
    page.get_by_label("fine").check()
    page.get_by_label("A whole number from 0 to 30").fill("4")


def answer_and_review(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_selector(READY)
    fill_checkin(page)
    page.get_by_role("button", name="Review what will be sent").click()
    page.wait_for_selector("#review")


def posts(page: Any) -> list[Any]:
    seen: list[Any] = []
    page.on("request", lambda request: seen.append(request) if request.method == "POST" else None)
    return seen


def test_page_answers_and_the_server_stores_a_valid_report(deployment, page):
    survey = deployment.new_survey()
    sid = survey["id"]
    with urllib.request.urlopen(deployment.page_url(sid)) as response:
        csp = response.headers["Content-Security-Policy"]
    assert "default-src 'self'" in csp and "connect-src 'self'" in csp

    answer_and_review(page, deployment.page_url(sid))
    review = page.locator("#review")
    assert "ε = 3.5 in total" in review.inner_text()  # 1 + 1.5 + 1
    assert deployment.stored(sid) == []  # reviewing sends nothing
    page.click("#send")
    page.wait_for_selector(SENT)

    shown = json.loads(page.locator("pre.wire").text_content())
    (stored,) = deployment.stored(sid)
    assert stored["submission_id"] == shown["submission_id"]
    assert stored["answers"] == shown["answers"]
    assert set(stored["answers"]) == {"smoker", "mood", "drinks"}
    estimates = http_json("GET", f"{deployment.server.url}/api/surveys/{sid}/estimates",
                          token=deployment.token)
    assert estimates["n_submissions"] == 1
    assert page.problems == []  # no script error, no CSP violation


def test_the_ledger_refuses_a_second_answer_in_the_same_browser(deployment, page):
    sid = deployment.new_survey()["id"]
    answer_and_review(page, deployment.page_url(sid))
    page.click("#send")
    page.wait_for_selector(SENT)
    page.reload()
    page.wait_for_selector("body[data-state=answered]")
    assert "already answered" in page.locator("#content").inner_text()
    assert page.locator("form#answers").count() == 0
    assert len(deployment.stored(sid)) == 1


def test_skipping_an_optional_question_sends_no_report_for_it(deployment, page):
    sid = deployment.new_survey()["id"]
    page.goto(deployment.page_url(sid))
    page.wait_for_selector(READY)
    page.get_by_label("No").check()
    page.get_by_label("awful").check()
    page.get_by_role("button", name="Review what will be sent").click()
    page.wait_for_selector("#review")
    assert "ε = 2.5 in total" in page.locator("#review").inner_text()
    page.click("#send")
    page.wait_for_selector(SENT)
    (stored,) = deployment.stored(sid)
    assert set(stored["answers"]) == {"smoker", "mood"}


def test_a_missing_required_answer_is_shown_and_nothing_is_randomized(deployment, page):
    sid = deployment.new_survey()["id"]
    page.goto(deployment.page_url(sid))
    page.wait_for_selector(READY)
    page.get_by_label("Yes").check()
    page.get_by_label("A whole number from 0 to 30").fill("31")
    page.get_by_role("button", name="Review what will be sent").click()
    errors = page.locator(".error:not([hidden])")
    assert errors.count() == 2
    assert "required" in errors.nth(0).inner_text()
    assert "from 0 to 30" in errors.nth(1).inner_text()
    assert page.locator("#review").count() == 0
    focused = page.evaluate("document.activeElement.name")
    assert focused == "q1"  # focus moved to the first question needing attention
    assert page.locator("[aria-invalid=true]").count() == 5 + 1  # mood's radios, drinks


def test_offline_then_online_delivers_exactly_once(deployment, context, page):
    sid = deployment.new_survey()["id"]
    answer_and_review(page, deployment.page_url(sid))
    context.set_offline(True)
    page.click("#send")
    page.wait_for_selector(PENDING)
    assert "Saved on this device" in page.locator("#delivery").inner_text()
    assert deployment.stored(sid) == []
    shown = json.loads(page.locator("pre.wire").text_content())

    context.set_offline(False)  # the browser's "online" event resends the stored body
    page.wait_for_selector(SENT)
    (stored,) = deployment.stored(sid)
    assert stored["submission_id"] == shown["submission_id"]
    assert stored["answers"] == shown["answers"]  # the same reports, not re-randomized


def test_a_lost_acknowledgement_is_resent_and_counted_once(deployment, page):
    sid = deployment.new_survey()["id"]
    answer_and_review(page, deployment.page_url(sid))
    sent = posts(page)

    def deliver_then_drop_the_answer(route: Any) -> None:
        route.fetch()  # the server stores it...
        route.abort("connectionreset")  # ...but the page never hears back

    pattern = f"**/api/surveys/{sid}/submissions"
    page.route(pattern, deliver_then_drop_the_answer)
    page.click("#send")
    page.wait_for_selector(PENDING)
    assert len(deployment.stored(sid)) == 1
    page.unroute(pattern)

    page.reload()  # on load the page sends what is pending
    page.wait_for_selector("body[data-state=answered]")
    page.wait_for_selector(SENT)
    assert "already had it" in page.locator("#delivery").inner_text()
    assert len(deployment.stored(sid)) == 1
    bodies = [json.loads(request.post_data) for request in sent]
    assert len(bodies) >= 2 and all(b == bodies[0] for b in bodies)


def test_an_exported_page_answers_through_cors(deployment, page):
    sid = deployment.new_survey()["id"]
    url = deployment.export(sid)
    answer_and_review(page, url)
    assert "the key this page trusts" in page.locator("#content").text_content()
    page.click("#send")
    page.wait_for_selector(SENT)
    assert len(deployment.stored(sid)) == 1
    assert page.problems == []


def test_a_page_on_an_origin_the_server_does_not_allow_cannot_read_the_survey(
        deployment, page):
    sid = deployment.new_survey()["id"]
    deployment.export(sid)
    with serve_web_root(deployment.site_root) as other:  # same files, another origin
        page.goto(f"{other}{sid}/index.html")
        page.wait_for_selector("body[data-state=cors]")
        status = page.locator("#status").inner_text()
        assert "is running but does not allow pages served from" in status
        assert f"--allow-origin {other.rstrip('/')}" in status


def test_phone_sized_window(deployment, browser, tmp_path):
    sid = deployment.new_survey()["id"]
    phone = browser.new_context(viewport={"width": 360, "height": 640}, is_mobile=True,  # <= 390
                                has_touch=True, device_scale_factor=2)
    try:
        tab = phone.new_page()
        answer_and_review(tab, deployment.page_url(sid))
        width = tab.evaluate("window.innerWidth")
        assert tab.evaluate("document.documentElement.scrollWidth") <= width  # no sideways scroll
        for button in (tab.locator("#send"), tab.locator("#edit")):
            box = button.bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= width
            assert box["height"] >= 44  # a comfortable touch target (CSS px)
        tab.screenshot(path=str(tmp_path / "phone-review.png"), full_page=True)
        tab.locator("#send").tap()
        tab.wait_for_selector(SENT)
        tab.get_by_text("Technical details").tap()  # the raw JSON and receipt id
        assert tab.locator("pre.wire").is_visible()
        assert tab.evaluate("document.documentElement.scrollWidth") <= width
        tab.screenshot(path=str(tmp_path / "phone-sent.png"), full_page=True)
    finally:
        phone.close()


def test_every_control_has_a_label_and_every_question_a_legend(deployment, page):
    sid = deployment.new_survey()["id"]
    page.goto(deployment.page_url(sid))
    page.wait_for_selector(READY)
    unlabeled = page.evaluate("""() => [...document.querySelectorAll('input, select')]
        .filter((e) => e.labels.length === 0).map((e) => e.outerHTML)""")
    assert unlabeled == []
    assert page.locator("fieldset.question").count() == 3
    assert page.locator("fieldset.question > legend").count() == 3


def test_answering_with_the_keyboard_alone(deployment, page):
    sid = deployment.new_survey()["id"]
    page.goto(deployment.page_url(sid))
    page.wait_for_selector(READY)
    keys = page.keyboard
    keys.press("Tab")            # the "Details" control (ε and the signing key)...
    keys.press("Enter")          # ...opens from the keyboard
    assert page.locator("#fingerprint").is_visible()
    keys.press("Tab")            # question 1: the first radio ("Yes")
    keys.press("Space")
    keys.press("Tab")            # question 2: the radio group, on "awful"
    keys.press("ArrowDown")      # "low"
    keys.press("ArrowDown")      # "fine"
    keys.press("Tab")            # question 3: the number
    keys.type("7")
    keys.press("Tab")            # the review button
    keys.press("Enter")
    page.wait_for_selector("#review")
    keys.press("Tab")            # focus was moved to the review's heading; next: Send
    assert page.evaluate("document.activeElement.id") == "send"
    keys.press("Enter")
    page.wait_for_selector(SENT)
    (stored,) = deployment.stored(sid)
    assert set(stored["answers"]) == {"smoker", "mood", "drinks"}


def test_a_series_memoizes_the_permanent_report_and_charges_a_repeat_nothing(deployment, page):
    first = deployment.new_survey(series="weekly-checkin")
    sid = first["id"]
    answer_and_review(page, deployment.page_url(sid))
    page.click("#send")
    page.wait_for_selector(SENT)
    deployment.server.publish({**first, "version": 2}, deployment.key, deployment.token)
    answer_and_review(page, deployment.page_url(sid))  # the same true answers, next round
    assert "ε = 0 in total" in page.locator("#review").inner_text()
    assert page.locator("#review").inner_text().count("ε = 0 (the same answer") == 3
    page.click("#send")
    page.wait_for_selector(SENT)
    rounds = {s["version"]: s["answers"] for s in deployment.stored(sid)}
    assert rounds[1] == rounds[2]  # the memoized permanent values, not fresh noise
    entries = page.evaluate("""async (sid) => {
        const store = await import("./js/store.js");
        return [(await store.answered(sid, 1)).entries, (await store.answered(sid, 2)).entries];
    }""", sid)
    assert [e["reused"] for e in entries[0]] == [False, False, False]
    assert [e["reused"] for e in entries[1]] == [True, True, True]
    assert all(e["epsilon"] == 0 for e in entries[1])
    assert entries[0][0]["tag"] == entries[1][0]["tag"]


def test_ordinal_and_long_categorical_questions(deployment, page):
    from support.clients import survey_dict

    data = survey_dict(survey_id="web-shapes")
    data["questions"] = [
        {"id": "pain", "text": "How bad is the pain?", "type": "ordinal", "epsilon": 1.0,
         "options": ["none", "mild", "moderate", "severe"], "mechanism": "ordinal_exp"},
        {"id": "country", "text": "Where do you live?", "type": "categorical", "epsilon": 2.0,
         "options": [f"country {i}" for i in range(20)], "optional": True,
         "groups": {"first five": [f"country {i}" for i in range(5)]}},
    ]
    deployment.server.publish(data, deployment.key, deployment.token)
    page.goto(deployment.page_url("web-shapes"))
    page.wait_for_selector(READY)
    assert "“first five”" in page.locator("#q1-hint").inner_text()  # groups are shown
    page.get_by_label("moderate").check()
    page.get_by_label("Choose one").select_option("country 13")  # > 12 options: a select
    page.get_by_role("button", name="Review what will be sent").click()
    page.wait_for_selector("#review")
    page.click("#send")
    page.wait_for_selector(SENT)
    (stored,) = deployment.stored("web-shapes")
    assert set(stored["answers"]) == {"pain", "country"}
    assert 0 <= stored["answers"]["pain"] < 4


def test_the_review_states_the_same_odds_as_the_top_of_the_page(deployment, page):
    """ε = 4.4998095 in total: e^ε = 89.99998, so "at most 90 times" at the top; the review's
    total is shown rounded (4.5, whose e^ is 90.017) but its odds come from the exact
    total, so it says 90 too, not 91."""
    sid = deployment.new_survey(mood={"epsilon": 2.4998095})["id"]
    answer_and_review(page, deployment.page_url(sid))
    top = page.locator("#privacy").inner_text()
    review = page.locator("#review .total").inner_text()
    assert "at most 90 times" in top, top
    assert "at most 90 times" in review and "ε = 4.5 in total" in review, review
