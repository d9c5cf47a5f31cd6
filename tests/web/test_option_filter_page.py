"""Cascading options on the page (client/web/js/option_filter.js; shared/option_filter.py):
the page signs the filter byte for byte as Python does, shows the same options as Python for
the same answers (shared vectors), and in real Chromium against a real `ldpsurvey serve` a
respondent answers a cascading pair: the second question shows only the options of the first
answer (all of them while it is unanswered, skipped or "Don't know"), an answer that the
first question's change hides is cleared, and the report is drawn over the full list."""

from __future__ import annotations

from typing import Any

from ldpsurvey.shared.option_filter import shown_options
from ldpsurvey.shared.skip_logic import NOT_ASKED
from ldpsurvey.shared.survey import Survey, canonical_json

READY = "body[data-state=ready]"
SENT = "body[data-delivery=sent]"
TOWNS = ["Aville", "Btown", "Cburg", "Dham"]
VALUES = {"Aville": ["North"], "Btown": ["North"], "Cburg": ["South"],
          "Dham": ["North", "South"]}


def cascading(survey_id: str, many: bool = False) -> dict[str, Any]:
    """Region, then town filtered by it (with `many`: 14 towns, past the page's radios: a
    <select>), then a question after them."""
    towns = TOWNS + ([f"Extra {i}" for i in range(10)] if many else [])
    values = {**VALUES, **{t: ["South"] for t in towns[4:]}}
    return {"id": survey_id, "title": "Cascade", "version": 1, "questions": [
        {"id": "region", "type": "categorical", "text": "Region?", "epsilon": 1.0,
         "options": ["North", "South"], "optional": True,
         "special": {"dont_know": "Don't know"}},
        {"id": "town", "type": "categorical", "text": "Town?", "epsilon": 1.0,
         "mechanism": "grr", "options": towns, "filter": {"by": "region", "values": values}},
        {"id": "ever", "type": "binary", "text": "Ever?", "epsilon": 1.0}]}


def ticked() -> dict[str, Any]:
    return {"id": "ticked", "title": "Ticked", "version": 1, "questions": [
        {"id": "sources", "type": "multiselect", "text": "Sources?", "epsilon": 1.0,
         "options": ["own", "bought", "aid"]},
        {"id": "main", "type": "categorical", "text": "Main?", "epsilon": 1.0,
         "options": ["own", "bought", "aid", "other"],
         "filter": {"by": "sources", "values": {"own": ["own"], "bought": ["bought"],
                                                "aid": ["aid"],
                                                "other": ["own", "bought", "aid"]}}}]}


def vectors() -> list[dict[str, Any]]:
    cases = []
    for data, answers in ((cascading("v"), ["North", "South", None, NOT_ASKED, "Don't know",
                                             "Nowhere", ["North"]]),
                          (ticked(), [["own"], ["aid", "bought"], [], None, NOT_ASKED,
                                      ["nothing"], "own"])):
        survey = Survey.from_dict(data)
        by, q = survey.questions[0], survey.questions[1]
        for answer in answers:
            cases.append({"by": by.to_dict(), "q": q.to_dict(), "answer": answer,
                          "shown": list(shown_options(q, by, answer))})
    return cases


def test_the_page_shows_the_options_python_shows(js_page: Any, web_root_url: str) -> None:
    cases = vectors()
    got = js_page.evaluate("""async ([root, cases]) => {
        const F = await import(root + "js/option_filter.js");
        return cases.map((c) => F.shownOptions(c.q, c.by, c.answer));
    }""", [web_root_url, cases])
    assert got == [c["shown"] for c in cases]
    assert any(len(c["shown"]) < len(c["q"]["options"]) for c in cases)  # some narrow


def test_the_page_writes_the_filter_bytes_python_signs(js_page: Any, web_root_url: str) -> None:
    texts = [canonical_json(Survey.from_dict(d).to_dict()).decode()
             for d in (cascading("bytes"), ticked())]
    got = js_page.evaluate("""async ([root, texts]) => {
        const O = await import(root + "js/optional.js");
        const C = await import(root + "js/canonical.js");
        const out = [];
        for (const t of texts) {
          await O.loadFor(JSON.parse(t));
          out.push(C.canonicalSurveyText(JSON.parse(t)));
        }
        return out;
    }""", [web_root_url, texts])
    assert got == texts


def visible(page: Any, index: int) -> list[str]:
    """The option labels a respondent can see under question `index` (radios or <select>)."""
    return page.evaluate("""(index) => {
        const fieldset = document.querySelector(`#q${index}-fieldset`);
        const radios = [...fieldset.querySelectorAll(".choice")]
          .filter((c) => c.offsetParent !== null).map((c) => c.querySelector("label").textContent);
        const options = [...fieldset.querySelectorAll("select option")]
          .filter((o) => o.value && !o.hidden).map((o) => o.textContent);
        return [...radios, ...options];
    }""", index)


def test_a_respondent_answers_a_cascading_pair(deployment, browser) -> None:
    sid = "cascade-page"
    deployment.server.publish(cascading(sid), deployment.key, deployment.token)
    context = browser.new_context(locale="en-US")
    try:
        page = context.new_page()
        problems: list[str] = []
        page.on("pageerror", lambda error: problems.append(str(error)))
        page.goto(deployment.page_url(sid))
        page.wait_for_selector(READY)
        region, town = page.locator("#q0-fieldset"), page.locator("#q1-fieldset")
        assert visible(page, 1) == TOWNS  # not answered yet: every option
        region.get_by_label("South", exact=True).check()
        assert visible(page, 1) == ["Cburg", "Dham"]
        town.get_by_label("Cburg", exact=True).check()
        region.get_by_label("North", exact=True).check()  # Cburg hides: it is cleared
        assert visible(page, 1) == ["Aville", "Btown", "Dham"]
        assert not page.locator("#q1-fieldset input[value=Cburg]").is_checked()
        region.get_by_label("Don't know", exact=True).check()
        assert visible(page, 1) == TOWNS
        region.get_by_label("Skip this question", exact=True).check()
        assert visible(page, 1) == TOWNS
        region.get_by_label("North", exact=True).check()
        town.get_by_label("Btown", exact=True).check()
        page.locator("#q2-fieldset").get_by_label("No", exact=True).check()
        page.get_by_role("button", name="Review").click()
        page.wait_for_selector("#review")
        page.locator("#send").click()
        page.wait_for_selector(SENT)
        (stored,) = deployment.stored(sid)
        report = stored["answers"]["town"]
        assert isinstance(report, int) and 0 <= report < len(TOWNS)  # grr over all four
        assert problems == []
    finally:
        context.close()


def test_a_long_filtered_list_narrows_its_select(deployment, browser) -> None:
    sid = "cascade-select"
    deployment.server.publish(cascading(sid, many=True), deployment.key, deployment.token)
    page = browser.new_page()
    try:
        page.goto(deployment.page_url(sid))
        page.wait_for_selector(READY)
        assert len(visible(page, 1)) == 14
        page.locator("#q0-fieldset").get_by_label("North", exact=True).check()
        assert visible(page, 1) == ["Aville", "Btown", "Dham"]
        page.locator("#q1-select").select_option("Btown")
        page.locator("#q0-fieldset").get_by_label("South", exact=True).check()
        assert page.locator("#q1-select").input_value() == ""  # Btown hid: cleared
        assert visible(page, 1)[:2] == ["Cburg", "Dham"] and len(visible(page, 1)) == 12
    finally:
        page.close()
