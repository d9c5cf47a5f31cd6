"""The page in several languages (issue 34, part 2): the browser's language chooses, Spanish and
French say the page's words and the survey's text with their own number formatting (the same
numbers the English sentences state, ε rounded up), a language the survey lacks falls back to
its base language, a string a translation lacks falls back alone and says so there, the
switcher works from the keyboard and keeps every answer (in the form and in the review) and
the choice, Arabic lays the page out right to left, the signature covers every language, and
an exported page answers offline in the chosen language."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from support.clients import survey_dict
from support.web import serve_document

READY = "body[data-state=ready]"
SENT = "body[data-delivery=sent]"

TRANSLATIONS = {
    "es": {"title": "Control", "description": "Un breve control.",
           "questions": {
               "smoker": {"text": "¿Fuma?",
                          "hint": "Cuentan también los cigarrillos electrónicos."},
               "mood": {"text": "¿Cómo está su ánimo?",
                        "options": {"awful": "pésimo", "low": "bajo", "fine": "bien",
                                    "good": "bueno"}},  # "great" falls back to English
               "drinks": {"text": "¿Bebidas la semana pasada?"}}},
    "fr": {"title": "Point", "questions": {  # no description, no hint: they fall back
        "smoker": {"text": "Fumez-vous ?"},
        "mood": {"text": "Comment est votre humeur ?",
                 "options": {"awful": "affreuse", "low": "basse", "fine": "correcte",
                             "good": "bonne", "great": "excellente"}},
        "drinks": {"text": "Verres la semaine dernière ?"}}},
    "ar": {"title": "استطلاع", "description": "استطلاع قصير.", "questions": {
        "smoker": {"text": "هل تدخن؟"},
        "mood": {"text": "كيف مزاجك؟",
                 "options": {"awful": "سيئ جدا", "low": "منخفض", "fine": "جيد", "good": "حسن",
                             "great": "ممتاز"}},
        "drinks": {"text": "كم مشروبا الأسبوع الماضي؟"}}},
}


def publish(deployment: Any, translations: dict[str, Any] = TRANSLATIONS) -> str:
    data = survey_dict(survey_id=f"lang-{next(deployment.ids)}",
                       smoker={"hint": "E-cigarettes count too."})
    data["description"] = "A short check-in."
    data["translations"] = translations
    deployment.server.publish(data, deployment.key, deployment.token)
    return data["id"]


def open_page(browser: Any, url: str, **options: Any) -> tuple[Any, Any]:
    context = browser.new_context(**options)
    page = context.new_page()
    page.problems = []
    page.on("pageerror", lambda error: page.problems.append(f"pageerror: {error}"))
    page.goto(url)
    page.wait_for_selector(READY)
    return context, page


def percent(page: Any, value: float, decimals: int = 0) -> str:
    """`value` % as this browser's Intl.NumberFormat writes it in the page's locale (es "74 %",
    fr "74 %": each with its own no-break space)."""
    return page.evaluate("""([v, d]) => new Intl.NumberFormat(document.documentElement.lang,
        {style: "percent", minimumFractionDigits: d, maximumFractionDigits: d}).format(v / 100)""",
                         [value, decimals])


def text(page: Any, selector: str) -> str:
    return page.locator(selector).inner_text()


def answer(page: Any, no: str, fine: str, drinks: str = "4") -> None:
    page.locator("#q0-fieldset").get_by_label(no, exact=True).check()
    page.locator("#q1-fieldset").get_by_label(fine, exact=True).check()
    page.locator("#q2-input").fill(drinks)


def answers_kept(page: Any) -> list[Any]:
    """No checked, fine checked, the number entered: read from the values, not the words."""
    return page.evaluate("""() => [
        document.querySelector('#q0-fieldset input[value=false]').checked,
        document.querySelector('#q1-fieldset input[value=fine]').checked,
        document.querySelector('#q2-input').value]""")


def test_a_spanish_browser_gets_the_page_in_spanish_with_spanish_numbers(deployment, browser):
    sid = publish(deployment)
    context, page = open_page(browser, deployment.page_url(sid), locale="es-ES")
    try:
        assert page.evaluate("[document.documentElement.lang, document.documentElement.dir]") \
            == ["es", "ltr"]
        assert text(page, "#title") == "Control" and page.title() == "Control"
        assert text(page, ".description") == "Un breve control."
        # survey_dict() spends ε = 3.5: e^3.5 = 33.1 -> 34 times, 50% -> at most 98% (rounded up)
        privacy = text(page, "#privacy")
        assert privacy.startswith("Su privacidad: su dispositivo aleatoriza cada respuesta")
        assert "como mucho, 34 veces más seguro" in privacy
        assert percent(page, 50) == "50\u00a0%"  # Spanish puts a no-break space before %
        assert (f"pasar de un {percent(page, 50)} de seguridad a como mucho un "
                f"{percent(page, 98)}") in privacy
        hint = text(page, "#q0-hint")
        assert "como mucho, 2,8 veces más seguro" in hint and f"un {percent(page, 74)}" in hint
        assert hint.endswith("(ε = 1).")
        assert text(page, "#q0-fieldset .qhint") == "Cuentan también los cigarrillos electrónicos."
        page.get_by_text("Detalles: presupuesto de privacidad y clave de firma").click()
        assert "gasta ε = 3,5 de privacidad" in text(page, "#survey-details")
        # the one string Spanish lacks falls back alone, in English, and says so there only
        fallen = page.locator(".untranslated")
        assert fallen.count() == 1 and fallen.inner_text() == "great"
        assert fallen.get_attribute("lang") == "en"
        assert text(page, "#q1-fieldset .fallback") == "(en inglés)"
        assert page.locator(".fallback").count() == 1
        assert text(page, "#q1-fieldset legend") == "2. ¿Cómo está su ánimo?"
        # the switcher lists every language by its own name (the base first, then the
        # translations in the signed survey's order)
        assert page.locator("#language option").all_inner_texts() == [
            "English", "العربية", "Español", "Français"]
        assert page.locator("#language").input_value() == "es"
        assert text(page, "label[for=language]") == "Idioma"
        answer(page, "No", "bien")
        page.get_by_role("button", name="Revisar lo que se enviará").click()
        page.wait_for_selector("#review")
        review = text(page, "#review")
        assert "Su respuesta (se queda en este dispositivo): bien" in review
        # grr at ε = 1.5 over 5 options: e^1.5 / (e^1.5 + 4) = 52.8%
        assert ("enviará «bien» (su respuesta real) con una probabilidad del "
                f"{percent(page, 52.8, 1)}") in review
        assert "ε = 3,5 en total; el límite de esta página es ε = 5" in review
        page.click("#send")
        page.wait_for_selector(SENT)
        assert text(page, "#title") == "Gracias"
        assert text(page, "#delivery") == "Enviado: el servidor confirmó la recepción."
        assert "Lo que envió este dispositivo (aleatorizado)" in text(page, "#receipt")
        (stored,) = deployment.stored(sid)
        assert set(stored["answers"]) == {"smoker", "mood", "drinks"}
        assert page.problems == []
    finally:
        context.close()


def test_a_french_browser_gets_french_and_a_missing_description_falls_back(deployment,
                                                                          browser):
    sid = publish(deployment)
    context, page = open_page(browser, deployment.page_url(sid), locale="fr-FR")
    try:
        assert page.evaluate("document.documentElement.lang") == "fr"
        assert text(page, "#title") == "Point"
        hint = text(page, "#q0-hint")
        assert hint.startswith("Confidentialité\u00a0: quiconque voit ce qui est envoyé")
        assert "au plus 2,8 fois plus sûr" in hint and f"à au plus {percent(page, 74)}" in hint
        assert f"passer de {percent(page, 50)} de certitude" in hint
        description = page.locator(".description .untranslated")
        assert description.get_attribute("lang") == "en"
        assert description.inner_text() == "A short check-in."
        assert text(page, ".description .fallback") == "(en anglais)"
        # nor does French give the first question's hint: it falls back there too, and only
        # the two strings French lacks are marked
        assert page.locator("#q0-fieldset .qhint .untranslated").inner_text() == \
            "E-cigarettes count too."
        assert page.locator(".untranslated").count() == 2
        assert text(page, "#q1-fieldset").count("excellente") == 1
        assert page.locator("button[type=submit]").inner_text() == "Vérifier ce qui sera envoyé"
        assert page.problems == []
    finally:
        context.close()


@pytest.mark.parametrize("locale", ["de-DE", "ja-JP"])
def test_a_language_the_survey_lacks_falls_back_to_its_base_language(deployment, browser,
                                                                     locale):
    sid = publish(deployment)
    context, page = open_page(browser, deployment.page_url(sid), locale=locale)
    try:
        assert page.evaluate("document.documentElement.lang") == "en"
        assert text(page, "#title") == "Check-in"
        assert text(page, "#privacy").startswith("Your privacy: your device randomizes")
        assert page.locator(".untranslated").count() == 0
        assert page.locator("#language").input_value() == "en"
        assert page.problems == []
    finally:
        context.close()


def test_the_switcher_works_by_keyboard_and_keeps_every_answer(deployment, browser):
    sid = publish(deployment)
    context, page = open_page(browser, deployment.page_url(sid), locale="en-US")
    try:
        answer(page, "No", "fine")
        page.locator("#language").focus()
        page.keyboard.press("ArrowDown")  # English -> العربية
        page.wait_for_function("() => document.documentElement.dir === 'rtl'")
        page.keyboard.press("ArrowDown")  # -> Español
        page.wait_for_function("() => document.documentElement.lang === 'es'")
        page.wait_for_selector("#title:text('Control')")
        assert page.evaluate("document.activeElement.id") == "language"
        assert answers_kept(page) == [True, True, "4"]
        assert page.locator("#q1-fieldset").get_by_label("bien", exact=True).is_checked()
        page.keyboard.press("ArrowDown")  # Español -> Français
        page.wait_for_selector("#title:text('Point')")
        assert answers_kept(page) == [True, True, "4"]
        # an error shown before the switch is shown again in the new language
        page.locator("#q2-input").fill("")
        page.locator("#q0-fieldset input[value=true]").check()
        page.locator("#q2-input").fill("99")
        page.get_by_role("button", name="Vérifier ce qui sera envoyé").click()
        assert text(page, "#q2-error") == "Veuillez saisir un nombre entier de 0 à 30."
        page.locator("#language").focus()
        page.keyboard.press("ArrowUp")  # Français -> Español
        page.wait_for_selector("#title:text('Control')")
        assert text(page, "#q2-error") == "Escriba un número entero de 0 a 30, por favor."
        page.locator("#q2-input").fill("7")
        page.get_by_role("button", name="Revisar lo que se enviará").click()
        page.wait_for_selector("#review")
        # switching during the review redraws it in the new language with the same answers
        page.locator("#language").focus()
        page.keyboard.press("ArrowUp")  # Español -> العربية: English words, Arabic text
        page.wait_for_selector("#review-title:text('Before you send')")
        assert "كيف مزاجك؟" in text(page, "#review")
        page.keyboard.press("ArrowUp")  # -> English
        page.wait_for_selector("#title:text('Check-in')")
        review = text(page, "#review")
        assert "Your answer (stays on this device): Yes" in review
        assert "Your answer (stays on this device): fine" in review
        assert "Your answer (stays on this device): 7" in review
        assert page.locator("#answers").is_hidden()
        page.click("#send")
        page.wait_for_selector(SENT)
        assert len(deployment.stored(sid)) == 1
        # the choice is kept: the next survey opens in the language chosen last
        other = publish(deployment)
        page.goto(deployment.page_url(other))
        page.wait_for_selector(READY)
        assert page.evaluate("document.documentElement.lang") == "en"
        page.select_option("#language", "fr")
        page.wait_for_selector("#title:text('Point')")
        page.goto(deployment.page_url(publish(deployment)))
        page.wait_for_selector(READY)
        assert page.evaluate("document.documentElement.lang") == "fr"
        assert page.problems == []
    finally:
        context.close()


def test_arabic_is_laid_out_right_to_left(deployment, browser):
    sid = publish(deployment)
    ltr_context, ltr = open_page(browser, deployment.page_url(sid), locale="en-US",
                                 viewport={"width": 390, "height": 844})
    rtl_context, rtl = open_page(browser, deployment.page_url(sid), locale="ar-EG",
                                 viewport={"width": 390, "height": 844})
    try:
        assert rtl.evaluate("[document.documentElement.lang, document.documentElement.dir]") \
            == ["ar", "rtl"]
        assert text(rtl, "#title") == "استطلاع"

        def box(page: Any, selector: str) -> dict[str, float]:
            return page.locator(selector).first.bounding_box()

        width = 390
        for page, rtl_side in ((ltr, False), (rtl, True)):
            radio = box(page, "#q1-0")
            label = box(page, "label[for=q1-0]")
            assert (radio["x"] > label["x"]) == rtl_side  # the radio before its label
            switch = box(page, "#language")
            assert (switch["x"] + switch["width"] / 2 < width / 2) == rtl_side  # at the end
        # mirrored: the radio of an option sits as far from the right edge as it does from the
        # left in English
        left = box(ltr, "#q1-0")["x"]
        right = width - (box(rtl, "#q1-0")["x"] + box(rtl, "#q1-0")["width"])
        assert abs(left - right) < 2, (left, right)
        # nothing wider than the phone, in either direction
        for page in (ltr, rtl):
            assert page.evaluate("document.documentElement.scrollWidth") <= width
        # the page's own words have no Arabic catalogue: English, marked as such
        assert rtl.evaluate("document.querySelector('#privacy').closest('[lang]').lang") == "en"
        assert rtl.problems == [] and ltr.problems == []
    finally:
        ltr_context.close()
        rtl_context.close()


def test_the_signature_covers_every_language(deployment, browser):
    sid = publish(deployment)
    context, page = open_page(browser, deployment.page_url(sid), locale="es-ES")
    context.close()

    def tamper(doc: dict[str, Any]) -> dict[str, Any]:
        survey = json.loads(base64.b64decode(doc["signed_bytes"]))
        survey["translations"]["fr"]["questions"]["smoker"]["text"] = "Fumez-vous beaucoup ?"
        doc["signed_bytes"] = base64.b64encode(json.dumps(
            survey, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode()).decode()
        return doc

    context = browser.new_context(locale="es-ES")
    try:
        page = context.new_page()
        serve_document(page, sid, tamper)
        page.goto(deployment.page_url(sid))
        page.wait_for_selector("body[data-state=refused]")
        status = text(page, "#status")
        assert "La firma de la encuesta no es válida" in status
        assert "No se ha aleatorizado ni enviado nada." in status
    finally:
        context.close()


def test_an_exported_page_answers_offline_in_the_chosen_language(deployment, browser):
    sid = publish(deployment)
    url = deployment.export(sid)
    context, page = open_page(browser, url, locale="fr-FR")
    try:
        assert text(page, "#title") == "Point"
        context.set_offline(True)
        answer(page, "Non", "correcte")
        page.get_by_role("button", name="Vérifier ce qui sera envoyé").click()
        page.wait_for_selector("#review")
        page.click("#send")
        page.wait_for_selector("body[data-delivery=pending]")
        # still waiting offline: the receipt says what it will send, not that it sent it
        assert text(page, "#receipt-title") == "Ce que cet appareil enverra (randomisé)"
        assert text(page, "#receipt ol.sent").count("Votre appareil enverra\u00a0: ") == 3
        assert "a envoyé" not in text(page, "#receipt")
        delivery = text(page, "#delivery")
        assert delivery.startswith("Conservé sur cet appareil, pas encore remis (cet appareil "
                                   "est hors ligne).")
        assert deployment.stored(sid) == []
        assert page.locator("#retry").inner_text() == "Essayer d'envoyer maintenant"
        context.set_offline(False)  # the page sends it when the browser is back online
        page.wait_for_selector(SENT)
        assert text(page, "#delivery") == "Envoyé\u00a0: le serveur en a accusé réception."
        assert text(page, "#receipt-title") == "Ce que cet appareil a envoyé (randomisé)"
        assert text(page, "#receipt ol.sent").count("Votre appareil a envoyé\u00a0: ") == 3
        assert len(deployment.stored(sid)) == 1
        assert page.problems == []
    finally:
        context.close()
