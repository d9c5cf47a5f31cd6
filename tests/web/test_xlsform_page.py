"""The KoboToolbox-style XLSForm of tests/data/xlsform, imported and published with both its
languages in the signed manifest, answered on the page in real Chromium in its base language
(English): the page verifies the signature over every language, shows the check-all-that-apply
question and the skip it drives, and the server stores the reports. (And answered in
Spanish: issue 34's done-when, end to end on a phone-size page in es-ES, then the report read
in Spanish and in English.)"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from ldpsurvey.analyst.xlsform_import import import_xlsform
from support.clients import ldpsurvey_exe
from support.timeouts import TEST_TIMEOUT

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


def test_answered_on_a_phone_in_spanish_and_reported_in_either_language(deployment: Any,
                                                                        browser: Any) -> None:
    """Issue 34's done-when: the Kobo-style form, imported in one command and published, is
    answered on a phone in Spanish (the browser's language; the page's words and the survey's
    text both Spanish, nothing wider than the screen), then reported in Spanish and English."""
    data = import_xlsform(FORM).survey.to_dict()
    sid = f"{data['id']}-phone"
    deployment.server.publish({**data, "id": sid}, deployment.key, deployment.token)
    phone = browser.new_context(locale="es-ES", viewport={"width": 360, "height": 740},
                                is_mobile=True, has_touch=True)
    try:
        page = phone.new_page()
        page.goto(deployment.page_url(sid))
        page.wait_for_selector(READY)
        assert page.evaluate("document.documentElement.lang") == "es"
        assert page.locator("#title").inner_text() == "Encuesta de salud y seguridad 2025"
        assert page.locator("#q0-fieldset legend").inner_text() == "1. ¿En qué región vive?"
        assert page.locator(".untranslated").count() == 0  # nothing falls back
        assert page.locator("#privacy").inner_text().startswith("Su privacidad:")
        assert "Revelada: se envía tal como la responde" in page.locator("#q0-hint").inner_text()
        assert not visible(page, 3)
        page.locator("#q0-fieldset").get_by_label("Sur").check()
        page.locator("#q1-fieldset").get_by_label("Sí").check()
        page.locator("#q2-fieldset").get_by_label("Cannabis").check()
        page.locator("#q2-fieldset").get_by_label("Cocaína").check()
        assert visible(page, 3)  # the skip, in Spanish
        page.locator("#q3-fieldset").get_by_label("Cada semana").check()
        page.locator("#q4-fieldset input").fill("2")
        page.locator("#q5-fieldset").get_by_label("No").check()
        assert page.evaluate("document.documentElement.scrollWidth") <= 360
        page.get_by_role("button", name="Revisar lo que se enviará").click()
        page.wait_for_selector("#review")
        review = page.locator("#review").inner_text()
        assert "Su respuesta (se envía tal como la da): Sur" in review
        assert "Su respuesta (se queda en este dispositivo): Cannabis, Cocaína" in review
        assert "¿Con qué frecuencia ha consumido cannabis?" in review
        assert page.evaluate("document.documentElement.scrollWidth") <= 360
        page.click("#send")
        page.wait_for_selector(SENT)
        assert page.locator("#title").inner_text() == "Gracias"
        assert "Su dispositivo envió" in page.locator("#receipt").inner_text()
    finally:
        phone.close()
    (stored,) = deployment.stored(sid)
    assert stored["answers"]["region"] == 1  # disclosed: "South", the label's index
    assert set(stored["answers"]) == {"region", "used_any", "substances", "cannabis_freq",
                                      "heavy_days", "partner_violence"}

    def report(*extra: str) -> str:
        env = {k: v for k, v in os.environ.items() if k not in ("LANG", "LANGUAGE", "LC_ALL")}
        done = subprocess.run([*ldpsurvey_exe(), "report", "--server", deployment.server.url,
                               "--survey", sid, "--token", deployment.token, *extra],
                              capture_output=True, text=True, timeout=TEST_TIMEOUT,
                              check=False, env={**env, "LANG": "C.UTF-8"})
        assert done.returncode == 0, done.stderr
        return done.stdout

    spanish, english = report("--lang", "es"), report()
    assert "cannabis_freq: ¿Con qué frecuencia ha consumido cannabis?" in spanish
    assert "Cocaína" in spanish and "Cada semana" in spanish
    assert "How often have you used cannabis?" in english and "Cocaine" in english
