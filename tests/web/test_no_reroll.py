"""No re-roll: the page draws a report only when Send is pressed, once per question.

Issue 17: the review used to show a randomized report and "Change my answers" + Review drew a
fresh one, so a respondent could review until the device said "no" and send a chosen report.
Now the review shows the answers and the exact chances (no draw); Send draws, stores, sends.

The page runs unchanged except for its entry module: these tests serve an `app.js` that
starts page.js with a *recording* source wrapping the CSPRNG (tapes.js recordingSource),
so every randbelow call the page makes is on a tape the test reads. Replaying that tape through
mechanismFor(q).perturb once per answered question, in order, must give exactly the reports the
server stored and use up the tape: one draw per question, and the sent report is that draw.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from support.clients import http_json

READY = "body[data-state=ready]"
SENT = "body[data-delivery=sent]"
ANSWERS = {"smoker": True, "mood": "fine", "drinks": 4}  # what fill() answers

RECORDING_ENTRY = """
import { start } from "./page.js";
import { secureSource } from "./randomness.js";
import { recordingSource } from "./tapes.js";
const source = recordingSource(secureSource);
window.ldpDraws = () => source.tape.map(([n, value]) => [n.toString(), value.toString()]);
start(source);
"""


def recorded(page: Any) -> None:
    """Serve the recording entry module instead of app.js to this tab."""
    page.route("**/js/app.js", lambda route: route.fulfill(
        status=200, content_type="text/javascript; charset=utf-8", body=RECORDING_ENTRY))


def draws(page: Any) -> list[list[str]]:
    return page.evaluate("window.ldpDraws()")


def fill(page: Any) -> None:
    page.get_by_label("Yes").check()
    page.get_by_label("fine").check()
    page.get_by_label("A whole number from 0 to 30").fill("4")


def review(page: Any) -> str:
    page.get_by_role("button", name="Review what will be sent").click()
    page.wait_for_selector("#review")
    return page.locator("#review").inner_text()


def signed_questions(deployment: Any, sid: str) -> list[dict[str, Any]]:
    """The questions as the designer signed them (mechanisms and parameters resolved)."""
    doc = http_json("GET", f"{deployment.server.url}/api/surveys/{sid}")
    return json.loads(base64.b64decode(doc["signed_bytes"]))["questions"]


def test_reviewing_again_and_again_draws_nothing_and_send_draws_once(deployment, page):
    sid = deployment.new_survey()["id"]
    recorded(page)
    page.goto(deployment.page_url(sid))
    page.wait_for_selector(READY)
    fill(page)
    first = review(page)
    # the answers and the exact chances, in words; no report exists yet
    assert "Your answer (stays on this device): Yes" in first
    assert "‘yes’ (your real answer) with probability 73.1%" in first  # e/(e+1), ε = 1
    assert "‘no’ with probability 26.9%" in first
    assert "“fine” (your real answer) with probability" in first
    assert "Your device sent" not in first and page.locator(".sent").count() == 0
    for _ in range(5):
        page.click("#edit")
        page.get_by_label("No", exact=True).check()  # change an answer, and change it back
        page.get_by_label("Yes").check()
        assert review(page) == first  # the same words every time: nothing random in them
    assert draws(page) == []  # no randomness was consumed before Send
    assert deployment.stored(sid) == []

    page.click("#send")
    page.wait_for_selector(SENT)
    assert page.locator("#edit").count() == 0 and page.locator("form#answers").count() == 0
    tape = draws(page)
    assert tape  # the draws were made after Send...
    (stored,) = deployment.stored(sid)
    replayed = page.evaluate("""async ([questions, tape, answers]) => {
        const M = await import("./js/mechanisms.js");
        const R = await import("./js/tapes.js");
        const source = R.tapeSource(tape);
        const reports = {};
        for (const q of questions) reports[q.id] = M.mechanismFor(q).perturb(answers[q.id], source);
        return { reports, remaining: source.remaining };
    }""", [signed_questions(deployment, sid), tape, ANSWERS])
    assert replayed["remaining"] == 0  # ...exactly one perturb per question, nothing more
    assert replayed["reports"] == stored["answers"]  # and those draws are what was sent
    shown = json.loads(page.locator("pre.wire").text_content())
    assert shown["answers"] == stored["answers"]
    assert "Your device sent" in page.locator("#receipt").inner_text()
    assert page.problems == []


def test_after_send_a_reload_never_draws_again(deployment, page):
    sid = deployment.new_survey()["id"]
    recorded(page)
    page.goto(deployment.page_url(sid))
    page.wait_for_selector(READY)
    fill(page)
    review(page)
    page.click("#send")
    page.wait_for_selector(SENT)
    sent = json.loads(page.locator("pre.wire").text_content())

    page.reload()  # a fresh page, a fresh recording source
    page.wait_for_selector("body[data-state=answered]")
    assert draws(page) == []
    assert page.locator("form#answers").count() == 0 and page.locator("#send").count() == 0
    again = json.loads(page.locator("pre.wire").text_content())
    assert again == sent  # the stored report is shown again, not a new one
    (stored,) = deployment.stored(sid)
    assert stored["answers"] == sent["answers"]


def test_a_second_tab_that_reviewed_before_the_first_sent_draws_nothing_it_shows(
        deployment, context):
    """Two tabs reviewed the same survey; the first sends. The second's Send meets the ledger
    (already answered): whatever it drew is dropped unseen, and the first report is shown."""
    sid = deployment.new_survey()["id"]
    tabs = [context.new_page(), context.new_page()]
    for tab in tabs:
        tab.bring_to_front()  # a background tab's animation frames (Playwright's waits) crawl
        recorded(tab)
        tab.goto(deployment.page_url(sid))
        tab.wait_for_selector(READY)
        fill(tab)
        review(tab)
        assert draws(tab) == []
    tabs[0].bring_to_front()
    tabs[0].click("#send")
    tabs[0].wait_for_selector(SENT)
    first = json.loads(tabs[0].locator("pre.wire").text_content())
    tabs[1].bring_to_front()
    tabs[1].click("#send")
    tabs[1].wait_for_selector("body[data-state=answered]")
    assert json.loads(tabs[1].locator("pre.wire").text_content()) == first
    assert len(deployment.stored(sid)) == 1
