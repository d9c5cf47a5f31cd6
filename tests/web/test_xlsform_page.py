"""The KoboToolbox-style XLSForm of tests/data/xlsform, imported and published with both its
languages in the signed manifest, answered on the page in real Chromium in its base language
(English): the page verifies the signature over every language, shows the check-all-that-apply
question and the skip it drives, and the server stores the reports. (The page's language
switcher and catalogue come later: docs/languages.md.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ldpsurvey.analyst.xlsform_import import import_xlsform

FORM = Path(__file__).parents[1] / "data" / "xlsform" / "health_safety_2025.xlsx"
READY = "body[data-state=ready]"
SENT = "body[data-delivery=sent]"


def visible(page: Any, index: int) -> bool:
    return page.locator(f"#q{index}-fieldset").is_visible()


def test_the_imported_form_is_answered_on_the_page(deployment: Any, page: Any) -> None:
    data = import_xlsform(FORM).survey.to_dict()
    assert set(data["translations"]) == {"es"}
    deployment.server.publish(data, deployment.key, deployment.token)
    sid = data["id"]
    page.goto(deployment.page_url(sid))
    page.wait_for_selector(READY)  # the signature verified over both languages
    text = page.locator("body").inner_text()
    assert "Which region do you live in?" in text and "Cocaine" in text
    assert not visible(page, 3)  # cannabis_freq: only when cannabis is checked
    page.locator("#q0-fieldset").get_by_label("South").check()
    page.locator("#q1-fieldset").get_by_label("Yes").check()
    page.locator("#q2-fieldset").get_by_label("Cannabis").check()
    assert visible(page, 3)
    page.locator("#q3-fieldset").get_by_label("Weekly").check()
    page.locator("#q4-fieldset input").fill("2")
    page.locator("#q5-fieldset").get_by_label("No").check()
    page.get_by_role("button", name="Review what will be sent").click()
    page.wait_for_selector("#review")
    assert "How often have you used cannabis?" in page.locator("#review").inner_text()
    page.click("#send")
    page.wait_for_selector(SENT)
    (stored,) = deployment.stored(sid)
    assert set(stored["answers"]) == {"region", "used_any", "substances", "cannabis_freq",
                                      "heavy_days", "partner_violence"}
    assert stored["answers"]["region"] == 1  # disclosed: "South", sent as given
    assert page.problems == []
