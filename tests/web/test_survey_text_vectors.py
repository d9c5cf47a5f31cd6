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
              "options": ["never", "monthly", "weekly", "constructor"],
              "groups": {"ever": ["monthly", "weekly"], "toString": ["never"]}},
             {"id": "pain", "type": "ordinal", "text": "Pain?", "epsilon": 1.0,
              "options": ["none", "some"]},
             {"id": "subs", "type": "multiselect", "text": "Which?", "epsilon": 2.0,
              "options": ["a", "b"], "hint": "Check all"},
             {"id": "ages", "type": "ordinal", "text": "Age?", "epsilon": 1.0,
              "options": ["18-24", "25+", "65 or older", "½ – ¾", "٣"]},
             {"id": "days", "type": "integer", "text": "Days?", "epsilon": 1.0, "min": 0,
              "max": 7},
             {"id": "home", "type": "location", "text": "Where?", "epsilon_geo": 1.0,
              "grid": {"rows": 3, "cols": 3, "cell_km": 1.0},
              "regions": {"town": ["1-2,1-2"], "river": ["3,1-3"], "constructor": ["1,3"]}}],
         "translations": {
             "es": {"title": "Vectores", "questions": {
                 "used": {"text": "¿Consumió?"},
                 "freq": {"text": "¿Con qué frecuencia?", "hint": "Solo aquí",
                          "options": {"never": "nunca", "weekly": "cada semana"},
                          "groups": {"ever": "alguna vez"}},
                 "home": {"regions": {"town": "pueblo"}},
                 "ages": {"options": {"65 or older": "65 o más"}},
                 "subs": {"options": {"a": "á", "b": "be"}, "hint": "Marque"}}},
             "fr": {"description": "Introduction"},
             "zh-Hant": {"questions": {"days": {"text": "天數？"},
                                       "home": {"regions": {"river": "河", "constructor": "建"}},
                                       "freq": {"groups": {"toString": "從不"}}}}}}
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
                                    for o in (q.get("options") or [])],
                        "groups": [shown(text.group(q["id"], g)) for g in (q.get("groups")
                                                                            or {})],
                        "regions": [shown(text.region(q["id"], r)) for r in (q.get("regions")
                                                                              or {})]}
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
                        options: (q.options ?? []).map((o) => shown(text.option(q.id, o))),
                        groups: Object.keys(q.groups ?? {}).map(
                          (g) => shown(text.group(q.id, g))),
                        regions: Object.keys(q.regions ?? {}).map(
                          (r) => shown(text.region(q.id, r))) };
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
    assert "questions.home.regions.river" in expected["es"]["fallbacks"]
    # number-only options read the same in every language: untranslated, they are not marked
    assert expected["es"]["ages"]["options"] == [
        ["18-24", "en", False], ["25+", "en", False], ["65 o más", "es", False],
        ["½ – ¾", "en", False], ["٣", "en", False]]
    assert [o[2] for o in expected["fr"]["ages"]["options"]] == [False, False, True, False, False]
    assert "questions.ages.options.65 or older" in expected["fr"]["fallbacks"]
    assert not any(f.startswith("questions.ages.options.") for f in expected["es"]["fallbacks"])
    assert expected["zh-Hant"]["home"]["regions"] == [
        ["town", "en", True], ["河", "zh-Hant", False], ["建", "zh-Hant", False]]


def test_js_refuses_names_that_are_not_the_questions_as_python_does(js_page: Any,
                                                                   web_root_url: str) -> None:
    """A group or region the question does not have is an error in both, never empty text
    (nor Object.prototype's: "constructor" is not a group of a question without one)."""
    d = translated_survey()
    calls = [("group", "freq", "nope"), ("group", "freq", "constructor"),
             ("group", "home", "town"), ("group", "pain", "ever"), ("region", "home", "nope"),
             ("region", "freq", "ever"), ("region", "home", "toString"),
             ("option", "freq", "toString")]
    python = []
    for method, qid, name in calls:
        try:
            getattr(SurveyText(d, "es"), method)(qid, name)
            python.append("ok")
        except KeyError:
            python.append("refused")
    got = js_page.evaluate("""async ([root, survey, calls]) => {
      const T = await import(root + "js/survey_text.js");
      const text = new T.SurveyText(survey, "es");
      return calls.map(([method, id, name]) => {
        try { text[method](id, name); return "ok"; }
        catch (e) { return e instanceof RangeError ? "refused" : String(e); }
      });
    }""", [web_root_url, d, [list(c) for c in calls]])
    assert got == python == ["refused"] * len(calls)


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
