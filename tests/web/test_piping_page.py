"""Piped texts on the page (docs/piping.md), in real Chromium against a real `ldpsurvey
serve`: a question's text, hint and option labels show the respondent's own earlier answer,
as its label in the respondent's language, written as text (an answer that looks like HTML
stays text); "…" while the question it shows is not answered or not asked (skip logic); the
review shows the answers too; and no request the page makes carries a shown text."""

from __future__ import annotations

from typing import Any

READY = "body[data-state=ready]"
SENT = "body[data-delivery=sent]"
HTML_LABEL = "<b>pills</b>"


def piped_survey(survey_id: str) -> dict[str, Any]:
    return {"id": survey_id, "title": "Piped", "version": 1, "language": "en", "questions": [
        {"id": "ever", "type": "binary", "text": "Have you ever used drugs?", "epsilon": 1.0},
        {"id": "drug", "type": "categorical", "text": "Which one?", "epsilon": 1.0,
         "options": ["cannabis", "cocaine", HTML_LABEL], "relevant": "ever"},
        {"id": "used", "type": "binary", "text": "Have you used ${drug} this month?",
         "hint": "Only ${drug} counts.", "epsilon": 1.0},
        {"id": "how", "type": "categorical", "text": "How (${used})?", "epsilon": 1.0,
         "options": ["smoked ${drug}", "another way"]}],
        "translations": {"es": {"questions": {
            "ever": {"text": "¿Ha consumido drogas alguna vez?"},
            "drug": {"text": "¿Cuál?", "options": {"cannabis": "cannabis",
                                                   "cocaine": "cocaína",
                                                   HTML_LABEL: HTML_LABEL}},
            "used": {"text": "¿Ha consumido ${drug} este mes?",
                     "hint": "Solo cuenta ${drug}."},
            "how": {"text": "¿Cómo (${used})?",
                    "options": {"smoked ${drug}": "fumó ${drug}",
                                "another way": "de otra forma"}}}}}}


def legend(page: Any, index: int) -> str:
    return page.locator(f"#q{index}-fieldset legend").inner_text()


def test_a_piped_label_shows_the_earlier_answer_and_the_request_does_not_carry_it(
        deployment, browser):
    sid = "piped-page"
    deployment.server.publish(piped_survey(sid), deployment.key, deployment.token)
    context = browser.new_context(locale="es-ES")
    try:
        page = context.new_page()
        problems: list[str] = []
        page.on("pageerror", lambda error: problems.append(str(error)))
        posts: list[Any] = []
        page.on("request", lambda r: posts.append(r) if r.method == "POST" else None)
        page.goto(deployment.page_url(sid))
        page.wait_for_selector(READY)
        # nothing answered yet: the fallback
        assert legend(page, 2) == "3. ¿Ha consumido \u2026 este mes?"
        ever = page.locator("#q0-fieldset")
        ever.get_by_label("Sí", exact=True).check()
        page.locator("#q1-fieldset").get_by_label("cocaína", exact=True).check()
        assert legend(page, 2) == "3. ¿Ha consumido cocaína este mes?"
        assert page.locator("#q2-fieldset .qhint").inner_text() == "Solo cuenta cocaína."
        assert page.locator("#q3-fieldset").get_by_label("fumó cocaína", exact=True).count() == 1
        # an answer that looks like HTML is written as text
        page.locator("#q1-fieldset").get_by_label(HTML_LABEL, exact=True).check()
        assert legend(page, 2) == f"3. ¿Ha consumido {HTML_LABEL} este mes?"
        assert page.locator("#q2-fieldset legend b").count() == 0
        # not asked (skip logic): the fallback again
        ever.get_by_label("No", exact=True).check()
        assert not page.locator("#q1-fieldset").is_visible()
        assert legend(page, 2) == "3. ¿Ha consumido \u2026 este mes?"
        ever.get_by_label("Sí", exact=True).check()
        page.locator("#q1-fieldset").get_by_label("cocaína", exact=True).check()
        page.locator("#q2-fieldset").get_by_label("Sí", exact=True).check()
        assert legend(page, 3).startswith("4. ¿Cómo (Sí)?")
        page.locator("#q3-fieldset").get_by_label("fumó cocaína", exact=True).check()
        page.get_by_role("button", name="Revisar").click()
        page.wait_for_selector("#review")
        shown = page.locator("#review ol.review > li .qtext").all_text_contents()
        assert "¿Ha consumido cocaína este mes?" in shown and "¿Cómo (Sí)?" in shown
        page.locator("#send").click()
        page.wait_for_selector(SENT)
        assert posts, "the page sent nothing"
        for request in posts:
            body = request.post_data or ""
            for text in ("cocaína", "fumó", "Ha consumido", "Cómo", "${", "\u2026",
                         "\\u2026"):
                assert text not in body, (text, request.url)
        (stored,) = deployment.stored(sid)
        assert set(stored["answers"]) == {"ever", "drug", "used", "how"}
        # after sending, the list of what was sent keeps no true answer: the fallback
        sent = page.locator("ol.review.sent > li .qtext").all_text_contents()
        assert "¿Ha consumido \u2026 este mes?" in sent
        assert problems == []
    finally:
        context.close()


VECTORS = [("Have you used ${drug}?", {"drug": "cocaína"}),
           ("${a}${b} and ${c}", {"a": "1", "c": "<i>x</i>"}),
           ("no ${} {x} $x ${ a }", {}),
           ("${a}", {"a": "${b}", "b": "never read again"})]


def test_the_page_substitutes_as_shared_piping_does(js_page, web_root_url):
    """client/web/js/piping.js substitute and shared/piping.py substitute: the same text for
    the same answers (references, the fallback, an answer that holds `${...}`)."""
    from ldpsurvey.shared.piping import substitute

    for text, answers in VECTORS:
        page = js_page.evaluate("""async ([root, text, answers]) => {
            const { substitute } = await import(root + "js/piping.js");
            return substitute(text, (id) => (Object.hasOwn(answers, id) ? answers[id] : null));
        }""", [web_root_url, text, answers])
        assert page == substitute(text, answers.get), text
