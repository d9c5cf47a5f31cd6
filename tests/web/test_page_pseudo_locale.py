"""Every word the page shows comes from its message catalogue: with Spanish's catalogue files
replaced by a pseudo-locale (every letter of English's messages accented, built here from the
catalogue itself) and a survey whose Spanish text is Greek, no run of plain Latin letters may
remain anywhere a respondent reads: text, labels, aria-labels, titles. The walk goes through
every screen of a survey with every kind of question (yes/no with a hint, options, an optional
number, check-all-that-apply with its limit, a map, an ordinal, a decimal sent twice for its
mean and distribution, a follow-up that is skipped and still sent as 'not asked'): the form, its
errors, the review with its details, the thank-you screen and receipt with its details, and a
refusal."""

from __future__ import annotations

import base64
import json
import re
from typing import Any

import pytest
from support.page_catalogue import MESSAGES, pseudo, read_part
from support.web import serve_document

READY = "body[data-state=ready]"
SENT = "body[data-delivery=sent]"

SURVEY = {
    "title": "Health", "version": 1, "description": "A short survey.", "questions": [
        {"id": "smoker", "text": "Do you smoke?", "type": "binary", "epsilon": 0.5,
         "hint": "E-cigarettes count."},
        {"id": "often", "text": "How often?", "type": "ordinal", "epsilon": 0.5,
         "options": ["rarely", "weekly", "daily"], "relevant": "smoker"},
        {"id": "mood", "text": "Your mood?", "type": "categorical", "epsilon": 0.5,
         "options": ["low", "fine", "good"], "mechanism": "grr"},
        {"id": "drinks", "text": "Drinks last week?", "type": "integer", "epsilon": 0.5,
         "min": 0, "max": 30, "mechanism": "geometric", "optional": True},
        {"id": "used", "text": "Which have you used?", "type": "multiselect", "epsilon": 1.0,
         "options": ["tea", "coffee", "cola"], "max_selected": 2},
        {"id": "home", "text": "Where do you live?", "type": "location", "epsilon_geo": 0.5,
         "grid": {"rows": 3, "cols": 3, "cell_km": 1.0}, "regions": {"Βορράς": ["1,1-3"]}},
        {"id": "income", "text": "Your income?", "type": "decimal", "epsilon": 0.5, "min": 0,
         "max": 100, "resolution": "0.5", "mechanism": "hybrid",
         "estimate": ["mean", "distribution"]},
    ],
    "translations": {"es": {
        "title": "Υγεία", "description": "Μια σύντομη έρευνα.",
        "questions": {
            "smoker": {"text": "Καπνίζετε;", "hint": "Μετράνε και τα ηλεκτρονικά."},
            "often": {"text": "Πόσο συχνά;", "options": {"rarely": "σπάνια",
                                                          "weekly": "εβδομαδιαία",
                                                          "daily": "καθημερινά"}},
            "mood": {"text": "Η διάθεσή σας;",
                     "options": {"low": "χαμηλή", "fine": "καλή", "good": "πολύ καλή"}},
            "drinks": {"text": "Ποτά την περασμένη εβδομάδα;"},
            "used": {"text": "Τι έχετε χρησιμοποιήσει;",
                     "options": {"tea": "τσάι", "coffee": "καφές", "cola": "κόλα"}},
            "home": {"text": "Πού μένετε;"}, "income": {"text": "Το εισόδημά σας;"}}}},
}

SCAN = """() => {
    const skip = (n) => n.closest('pre, code, script, style, noscript, #language');
    const texts = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        if (!skip(n.parentElement)) texts.push(n.textContent);
    }
    for (const e of document.querySelectorAll('[aria-label], [title], [placeholder], [alt]')) {
        if (skip(e)) continue;
        for (const a of ['aria-label', 'title', 'placeholder', 'alt']) {
            if (e.hasAttribute(a)) texts.push(e.getAttribute(a));
        }
    }
    texts.push(document.title);
    return texts;
}"""


def plain_words(page: Any, allowed: tuple[str, ...]) -> list[str]:
    """Runs of three or more plain Latin letters the page shows (ids and hex left out)."""
    page.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })")
    found = []
    for text in page.evaluate(SCAN):
        for word in allowed:
            text = text.replace(word, "")
        text = re.sub(r"\b[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}\b|\b[0-9a-f]{16,}\b", "",
                      text)
        found += re.findall(r"[A-Za-z]{3,}", text)
    return found


@pytest.fixture()
def pseudo_spanish(browser: Any) -> Any:
    """A context in es-ES whose Spanish catalogue files are the pseudo-locale."""
    context = browser.new_context(locale="es-ES", viewport={"width": 390, "height": 900})

    def serve(route: Any) -> None:
        part = route.request.url.rsplit("/", 1)[-1]
        english = read_part(MESSAGES / "en" / part)
        body = "export default " + json.dumps({k: pseudo(v) for k, v in english.items()},
                                              ensure_ascii=False) + ";\n"
        route.fulfill(body=body, content_type="text/javascript")

    context.route("**/js/messages/es/*.js", serve)
    yield context
    context.close()


def test_every_screen_shows_only_catalogue_words(deployment: Any, pseudo_spanish: Any) -> None:
    sid = f"pseudo-{next(deployment.ids)}"
    deployment.server.publish({"id": sid, **SURVEY}, deployment.key, deployment.token)
    allowed = (sid,)
    page = pseudo_spanish.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(deployment.page_url(sid))
    page.wait_for_selector(READY)
    assert page.evaluate("document.documentElement.lang") == "es"
    assert plain_words(page, allowed) == []
    page.locator("#answers button[type=submit]").click()  # every error shown
    assert page.locator(".error:not([hidden])").count() >= 3
    assert plain_words(page, allowed) == []
    page.locator("#q0-fieldset input[value=true]").check()  # the follow-up appears
    page.locator("#q1-fieldset input[value=daily]").check()
    page.locator("#q0-fieldset input[value=false]").check()  # and goes: "not asked"
    page.locator("#q2-fieldset input[value=fine]").check()
    page.locator("#q3-input").fill("45")  # out of range: its error
    for option in ("tea", "coffee", "cola"):  # the third is refused: the limit's message
        page.locator(f"#q4-fieldset input[value={option}]").click()
    assert page.locator("#q4-limit").inner_text() != ""
    page.locator("[role=gridcell][tabindex='0']").focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")
    page.locator("#q6-input").fill("1.234,5")  # a thousands separator: its error
    page.locator("#answers button[type=submit]").click()
    assert page.locator("#q3-error").is_visible()
    assert page.locator("#q6-error").is_visible()
    assert plain_words(page, allowed) == []
    page.locator("#q6-input").fill("abc")  # not a number: its error
    page.locator("#answers button[type=submit]").click()
    assert page.locator("#q6-error").is_visible()
    assert plain_words(page, allowed) == []
    page.locator("#q6-input").fill("12,5")  # the language's decimal mark
    page.locator("#q3-input").fill("3")
    page.locator("#answers button[type=submit]").click()
    page.wait_for_selector("#review")
    assert page.locator("#review .skipped").count() == 1  # the follow-up, sent 'not asked'
    assert plain_words(page, allowed) == []
    page.click("#send")
    page.wait_for_selector(SENT)
    assert plain_words(page, allowed) == []
    assert problems == []


def test_a_refusal_shows_only_catalogue_words(deployment: Any, pseudo_spanish: Any) -> None:
    sid = f"pseudo-{next(deployment.ids)}"
    deployment.server.publish({"id": sid, **SURVEY}, deployment.key, deployment.token)

    def unsigned(doc: dict[str, Any]) -> dict[str, Any]:
        return {**doc, "signed_bytes": base64.b64encode(b"{}").decode()}

    page = pseudo_spanish.new_page()
    serve_document(page, sid, unsigned)
    page.goto(deployment.page_url(sid))
    page.wait_for_selector("body[data-state=refused]")
    assert plain_words(page, (sid,)) == []
