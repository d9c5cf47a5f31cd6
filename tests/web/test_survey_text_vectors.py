"""client/web/js/survey_text.js reads a survey's languages as shared/translations.py does:
shared vectors written by Python (every string of a translated survey in each language, with
its language and whether it fell back; every fallback list; language matching and tag
canonicalization), reproduced in Chromium."""

from __future__ import annotations

import copy
from typing import Any

from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.translations import SurveyText, best_language, canonical_tag, languages

TAGS = ["en", "EN", "es_mx", "zh-hant-tw", "es-419", "sr-Latn", "de-CH-1996", "en-US-x-twain",
        "english", "e", "", "Español (es)", "en-", "en--US", "x-private", "pt_br", "ar"]
MATCHES = [
    (["en", "es"], ["es"]), (["en", "es"], ["ES"]), (["en", "es"], ["es-MX", "en"]),
    (["en", "es-419", "es-ES"], ["es"]), (["en", "es", "es-MX"], ["es-MX"]),
    (["en", "pt-BR", "pt"], ["pt-PT"]), (["en", "fr"], ["de", "fr-CA", "en"]),
    (["en", "fr"], ["de"]), (["en", "fr"], ["not a tag", "fr"]), (["en", "es"], ["e"]),
    (["en", "es"], []),
]


def translated_survey() -> dict[str, Any]:
    d = {"id": "vectors", "title": "Vectors", "version": 1, "description": "Intro",
         "language": "en", "questions": [
             {"id": "used", "type": "binary", "text": "Used?", "epsilon": 1.0,
              "hint": "Past year"},
             {"id": "freq", "type": "categorical", "text": "How often?", "epsilon": 1.0,
              "options": ["never", "monthly", "weekly"]},
             {"id": "pain", "type": "ordinal", "text": "Pain?", "epsilon": 1.0,
              "options": ["none", "some"]},
             {"id": "subs", "type": "multiselect", "text": "Which?", "epsilon": 2.0,
              "options": ["a", "b"], "hint": "Check all"},
             {"id": "days", "type": "integer", "text": "Days?", "epsilon": 1.0, "min": 0,
              "max": 7}],
         "translations": {
             "es": {"title": "Vectores", "questions": {
                 "used": {"text": "¿Consumió?"},
                 "freq": {"text": "¿Con qué frecuencia?", "hint": "Solo aquí",
                          "options": {"never": "nunca", "weekly": "cada semana"}},
                 "subs": {"options": {"a": "á", "b": "be"}, "hint": "Marque"}}},
             "fr": {"description": "Introduction"},
             "zh-Hant": {"questions": {"days": {"text": "天數？"}}}}}
    return Survey.from_dict(d).to_dict()


def strings(text: SurveyText, d: dict[str, Any]) -> dict[str, Any]:
    def shown(s: Any) -> Any:
        return None if s is None else [s.text, s.language, s.fell_back]

    out: dict[str, Any] = {"language": text.language, "translated": text.translated,
                           "title": shown(text.title()),
                           "description": shown(text.description()),
                           "fallbacks": text.fallbacks()}
    for q in d["questions"]:
        out[q["id"]] = {"text": shown(text.question(q["id"])),
                        "hint": shown(text.hint(q["id"])),
                        "options": [shown(text.option(q["id"], o))
                                    for o in (q.get("options") or [])]}
    return out


def test_js_reads_every_language_as_python_does(js_page: Any, web_root_url: str) -> None:
    d = translated_survey()
    expected = {lang: strings(SurveyText(d, lang), d) for lang in languages(d)}
    expected["choose es-MX"] = strings(SurveyText.choose(d, ["es-MX"]), d)
    expected["choose de"] = strings(SurveyText.choose(d, ["de"]), d)
    got = js_page.evaluate("""async ([root, survey, langs]) => {
      const T = await import(root + "js/survey_text.js");
      const strings = (text) => {
        const shown = (s) => s === null ? null : [s.text, s.language, s.fellBack];
        const out = { language: text.language, translated: text.translated,
                      title: shown(text.title()), description: shown(text.description()),
                      fallbacks: text.fallbacks() };
        for (const q of survey.questions) {
          out[q.id] = { text: shown(text.question(q.id)), hint: shown(text.hint(q.id)),
                        options: (q.options ?? []).map((o) => shown(text.option(q.id, o))) };
        }
        return out;
      };
      const out = {};
      for (const lang of langs) out[lang] = strings(new T.SurveyText(survey, lang));
      out["choose es-MX"] = strings(T.SurveyText.choose(survey, ["es-MX"]));
      out["choose de"] = strings(T.SurveyText.choose(survey, ["de"]));
      return out;
    }""", [web_root_url, d, languages(d)])
    assert got == expected
    assert expected["es"]["fallbacks"] and expected["en"]["fallbacks"] == []


def test_js_matches_languages_and_tags_as_python_does(js_page: Any, web_root_url: str) -> None:
    expected = {"tags": [canonical_tag(t) for t in TAGS],
                "matches": [best_language(a, p) for a, p in MATCHES]}
    got = js_page.evaluate("""async ([root, tags, matches]) => {
      const T = await import(root + "js/survey_text.js");
      return { tags: tags.map(T.canonicalTag),
               matches: matches.map(([a, p]) => T.bestLanguage(a, p)) };
    }""", [web_root_url, TAGS, [list(m) for m in MATCHES]])
    assert got == expected


def test_a_survey_without_translations_reads_in_its_own_language(js_page: Any,
                                                                  web_root_url: str) -> None:
    d = copy.deepcopy(translated_survey())
    del d["translations"], d["language"]
    got = js_page.evaluate("""async ([root, survey]) => {
      const T = await import(root + "js/survey_text.js");
      const t = T.SurveyText.choose(survey, ["es-ES", "fr"]);
      return [t.language, t.translated, t.title().text, t.fallbacks()];
    }""", [web_root_url, d])
    assert got == ["en", False, "Vectors", []]
