"""Surveys in several languages (contract 4, shared/translations.py): parsing and refusals,
canonical bytes (unchanged without translations), the signature over every language, the
per-string fallback of `SurveyText`, and choosing a language from --lang or the environment."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.shared.errors import ManifestError, SurveyError
from ldpsurvey.shared.manifest import sign_survey, verify_manifest
from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.translations import (
    SurveyText,
    best_language,
    canonical_tag,
    choose_text,
    environment_languages,
    languages,
)

# Written before contract 4 existed; its sha256 was computed by the code of main at d368ce8
# (before `language`, `translations` and `hint`): a survey without them keeps its bytes.
BEFORE = {"id": "before-translations", "title": "Before translations", "version": 3,
          "description": "A survey written before contract 4.",
          "questions": [
              {"id": "used", "type": "binary", "text": "Used?", "epsilon": 1.0,
               "mechanism": "binary_rr"},
              {"id": "freq", "type": "categorical", "text": "How often?", "epsilon": 1.5,
               "mechanism": "grr", "options": ["never", "monthly", "weekly"],
               "groups": {"ever": ["monthly", "weekly"]}, "relevant": "used"},
              {"id": "pain", "type": "ordinal", "text": "Pain?", "epsilon": 1.0,
               "mechanism": "grr", "options": ["none", "some", "a lot"]},
              {"id": "days", "type": "integer", "text": "Days?", "epsilon": 1.0,
               "mechanism": "geometric", "min": 0, "max": 30, "optional": True},
              {"id": "subs", "type": "multiselect", "text": "Which?", "epsilon": 2.0,
               "mechanism": "option_rr", "options": ["a", "b", "c"], "max_selected": 2},
              {"id": "region", "type": "categorical", "text": "Region?", "disclosed": True,
               "options": ["north", "south"]}]}
BEFORE_SHA256 = "7a275f564d5047f7de98b63d29810c08dc49633c3207a3e28dcb15ea3c479cfd"

SPANISH = {"title": "Antes de las traducciones",
           "description": "Una encuesta.",
           "questions": {
               "used": {"text": "¿Consumió?", "hint": "En los últimos 12 meses"},
               "freq": {"text": "¿Con qué frecuencia?",
                        "options": {"never": "nunca", "weekly": "cada semana"}},
               "subs": {"options": {"a": "á", "b": "be", "c": "ce"}},
               "region": {"text": "¿Región?", "options": {"north": "norte"}}}}


def translated(**changes: Any) -> dict[str, Any]:
    d = copy.deepcopy(BEFORE)
    d["questions"][0]["hint"] = "In the past 12 months"
    d["language"] = "en"
    d["translations"] = {"es": copy.deepcopy(SPANISH), "fr": {"title": "Avant"}}
    d.update(changes)
    return d


def test_a_survey_without_translations_keeps_its_bytes() -> None:
    survey = Survey.from_dict(BEFORE)
    assert survey.sha256 == BEFORE_SHA256
    assert b"language" not in survey.canonical_bytes()
    assert b"hint" not in survey.canonical_bytes()


def test_translations_hints_and_language_are_in_the_canonical_bytes() -> None:
    survey = Survey.from_dict(translated())
    d = json.loads(survey.canonical_bytes())
    assert d["language"] == "en"
    assert d["translations"]["es"] == SPANISH
    assert d["translations"]["fr"] == {"title": "Avant"}
    assert d["questions"][0]["hint"] == "In the past 12 months"
    assert Survey.from_dict(d).sha256 == survey.sha256 != BEFORE_SHA256
    # each key changes the bytes on its own
    only_language = Survey.from_dict({**BEFORE, "language": "en"})
    assert only_language.sha256 != BEFORE_SHA256


def test_the_signature_covers_every_language() -> None:
    key = Ed25519PrivateKey.generate()
    manifest = json.loads(json.dumps(sign_survey(Survey.from_dict(translated()), key).to_dict()))
    assert verify_manifest(manifest).survey.translations["es"].questions["used"].hint == (
        "En los últimos 12 meses")
    for path in (("es", "questions", "freq", "options", "never"), ("fr", "title")):
        changed = copy.deepcopy(manifest)
        table = changed["survey"]["translations"]
        for key_ in path[:-1]:
            table = table[key_]
        table[path[-1]] += "!"
        with pytest.raises(ManifestError, match="does not verify"):
            verify_manifest(changed)


@pytest.mark.parametrize("change, field, problem", [
    ({"language": "english"}, "language", "not a BCP 47"),
    ({"language": "EN"}, "language", "write the language tag 'EN' as 'en'"),
    ({"language": 7}, "language", "not a BCP 47"),
    ({"translations": {"es_MX": {"title": "x"}}}, "translations.es_MX", "as 'es-MX'"),
    ({"translations": {"Español (es)": {"title": "x"}}}, "translations.Español (es)",
     "not a BCP 47"),
    ({"translations": {"en": {"title": "x"}}}, "translations.en", "survey's own language"),
    ({"translations": {}}, "translations", "table of language tag"),
    ({"translations": {"es": {}}}, "translations.es", "must be a table with"),
    ({"translations": {"es": {"tittle": "x"}}}, "translations.es.tittle", "unknown key"),
    ({"translations": {"es": {"title": " "}}}, "translations.es.title", "non-empty"),
    ({"translations": {"es": {"title": "x" * 2001}}}, "translations.es.title", "at most 2000"),
    ({"translations": {"es": {"questions": []}}}, "translations.es.questions", "table"),
    ({"translations": {"es": {"questions": {"nope": {"text": "x"}}}}},
     "translations.es.questions.nope", "is not a question of this survey"),
    ({"translations": {"es": {"questions": {"used": {}}}}}, "translations.es.questions.used",
     "must be a table"),
    ({"translations": {"es": {"questions": {"used": {"label": "x"}}}}},
     "translations.es.questions.used.label", "unknown key"),
    ({"translations": {"es": {"questions": {"freq": {"options": {"daily": "x"}}}}}},
     "translations.es.questions.freq.options", "'daily' is not an option"),
    ({"translations": {"es": {"questions": {"used": {"options": {"yes": "sí"}}}}}},
     "translations.es.questions.used.options", "a binary question has no option labels"),
    ({"translations": {"es": {"questions": {"days": {"options": {"0": "cero"}}}}}},
     "translations.es.questions.days.options", "an integer question has no option labels"),
    ({"translations": {"es": {"questions": {"freq": {"options": {"never": ""}}}}}},
     "translations.es.questions.freq.options.never", "non-empty"),
    ({"translations": {"es": {"questions": {"freq": {"options": {"never": "x" * 501}}}}}},
     "translations.es.questions.freq.options.never", "at most 500"),
    ({"translations": {"es": {"questions": {"used": {"text": "\ud800"}}}}},
     "translations.es.questions.used.text", "lone surrogate"),
    # group and region names (contract 4's groups/regions)
    ({"translations": {"es": {"questions": {"freq": {"groups": {"often": "x"}}}}}},
     "translations.es.questions.freq.groups", "'often' is not a group of this question "
                                               "(its groups: 'ever')"),
    ({"translations": {"es": {"questions": {"freq": {"groups": []}}}}},
     "translations.es.questions.freq.groups", "must be a table of group = shown text"),
    ({"translations": {"es": {"questions": {"freq": {"groups": {"ever": " "}}}}}},
     "translations.es.questions.freq.groups.ever", "non-empty"),
    ({"translations": {"es": {"questions": {"freq": {"groups": {"ever": "x" * 501}}}}}},
     "translations.es.questions.freq.groups.ever", "at most 500"),
    ({"translations": {"es": {"questions": {"pain": {"groups": {"ever": "x"}}}}}},
     "translations.es.questions.pain.groups",
     "an ordinal question without groups has no groups to translate"),
    ({"translations": {"es": {"questions": {"subs": {"groups": {"a": "x"}}}}}},
     "translations.es.questions.subs.groups", "a multiselect question has no groups to "
                                              "translate (only categorical and ordinal"),
    ({"translations": {"es": {"questions": {"freq": {"regions": {"ever": "x"}}}}}},
     "translations.es.questions.freq.regions", "a categorical question has no regions to "
                                               "translate (only location questions"),
])
def test_translations_refused_naming_the_field(change: dict[str, Any], field: str,
                                               problem: str) -> None:
    with pytest.raises(SurveyError) as info:
        Survey.from_dict({**copy.deepcopy(BEFORE), **change})
    assert info.value.field == field
    assert problem in info.value.problem


LOCATED = {"id": "located", "title": "Located", "version": 1, "questions": [
    {"id": "home", "type": "location", "text": "Where?", "epsilon_geo": 1.0,
     "grid": {"rows": 3, "cols": 3, "cell_km": 1.0},
     "regions": {"town": ["1-2,1-2"], "river": ["3,1-3"]}},
    {"id": "away", "type": "location", "text": "And then?", "epsilon_geo": 1.0,
     "grid": {"rows": 2, "cols": 2, "cell_km": 1.0}},
    {"id": "freq", "type": "ordinal", "text": "How often?", "epsilon": 1.0,
     "options": ["never", "monthly", "weekly"], "groups": {"at least monthly": ["monthly",
                                                                               "weekly"]}}]}


def located(translation: dict[str, Any]) -> dict[str, Any]:
    return {**copy.deepcopy(LOCATED), "translations": {"es": translation}}


def test_group_and_region_names_are_translated_and_fall_back_per_name() -> None:
    before = Survey.from_dict(LOCATED)
    survey = Survey.from_dict(located({"questions": {
        "home": {"regions": {"town": "pueblo"}},
        "freq": {"groups": {"at least monthly": "al menos una vez al mes"}}}}))
    d = json.loads(survey.canonical_bytes())
    assert d["translations"]["es"]["questions"] == {
        "home": {"regions": {"town": "pueblo"}},
        "freq": {"groups": {"at least monthly": "al menos una vez al mes"}}}
    assert Survey.from_dict(d).sha256 == survey.sha256 != before.sha256
    # a translation without groups or regions keeps the bytes main's code gave it at 2ef0c2e
    # (before translated group and region names)
    older = located({"title": "Ubicado", "questions": {"home": {"text": "¿Dónde?"},
                                                        "freq": {"options": {"never": "nunca"}}}})
    assert Survey.from_dict(older).sha256 == (
        "4afd0cddcebfc5e0a13b919b94c77958d848249b596ccc318425458ade01fced")
    es = SurveyText(survey, "es")
    assert es.group("freq", "at least monthly").text == "al menos una vez al mes"
    town, river = es.region("home", "town"), es.region("home", "river")
    assert (town.text, town.language, town.fell_back) == ("pueblo", "es", False)
    assert (river.text, river.language, river.fell_back) == ("river", "en", True)
    assert "questions.home.regions.river" in es.fallbacks()
    assert "questions.home.regions.town" not in es.fallbacks()
    assert not [f for f in es.fallbacks() if ".groups." in f]
    en = SurveyText(survey)
    assert en.region("home", "town").text == "town" and not en.region("home", "town").fell_back
    assert en.group("freq", "at least monthly").text == "at least monthly"
    for call in (lambda: es.region("home", "nope"), lambda: es.region("away", "town"),
                 lambda: es.region("freq", "at least monthly"),
                 lambda: es.group("home", "town"), lambda: es.group("freq", "nope")):
        with pytest.raises(KeyError):
            call()


@pytest.mark.parametrize("translation, field, problem", [
    ({"home": {"regions": {"lake": "lago"}}}, "translations.es.questions.home.regions",
     "'lake' is not a region of this question (its regions: 'town', 'river')"),
    ({"away": {"regions": {"town": "pueblo"}}}, "translations.es.questions.away.regions",
     "a location question without regions has no regions to translate"),
    ({"home": {"groups": {"town": "pueblo"}}}, "translations.es.questions.home.groups",
     "a location question has no groups to translate"),
    ({"home": {"options": {"1,1": "x"}}}, "translations.es.questions.home.options",
     "a location question has no option labels to translate"),
    ({"home": {"regions": {"town": ""}}}, "translations.es.questions.home.regions.town",
     "non-empty"),
])
def test_region_names_refused_naming_them(translation: dict[str, Any], field: str,
                                          problem: str) -> None:
    with pytest.raises(SurveyError) as info:
        Survey.from_dict(located({"questions": translation}))
    assert info.value.field == field
    assert problem in info.value.problem


def test_a_hint_is_checked_like_any_text() -> None:
    d = copy.deepcopy(BEFORE)
    d["questions"][1]["hint"] = ""
    with pytest.raises(SurveyError, match=r"questions\.freq\.hint: must be a non-empty"):
        Survey.from_dict(d)


def test_text_falls_back_per_string_and_says_where() -> None:
    survey = Survey.from_dict(translated())
    es = SurveyText(survey, "es")
    assert es.translated and es.base == "en" and es.language == "es"
    assert es.title().text == "Antes de las traducciones" and not es.title().fell_back
    assert es.question("used").text == "¿Consumió?"
    assert es.hint("used").text == "En los últimos 12 meses"
    assert es.option("freq", "never").text == "nunca"
    weekly, monthly = es.option("freq", "weekly"), es.option("freq", "monthly")
    assert (weekly.text, weekly.language, weekly.fell_back) == ("cada semana", "es", False)
    assert (monthly.text, monthly.language, monthly.fell_back) == ("monthly", "en", True)
    assert es.question("pain").fell_back and es.question("pain").text == "Pain?"
    assert es.hint("freq") is None  # no hint in either language: none, and no fallback
    assert es.fallbacks() == [
        "questions.freq.options.monthly", "questions.freq.groups.ever", "questions.pain.text",
        "questions.pain.options.none",
        "questions.pain.options.some", "questions.pain.options.a lot", "questions.days.text",
        "questions.subs.text", "questions.region.options.south"]
    fr = SurveyText(survey, "fr")
    assert fr.title().text == "Avant"
    assert fr.description().fell_back and fr.description().text == BEFORE["description"]
    assert "description" in fr.fallbacks() and "questions.used.hint" in fr.fallbacks()
    en = SurveyText(survey)
    assert not en.translated and en.fallbacks() == []
    assert en.option("freq", "monthly") == SurveyText(survey.to_dict(), "en").option(
        "freq", "monthly")
    with pytest.raises(KeyError):
        es.option("freq", "daily")
    with pytest.raises(KeyError):
        es.question("nope")
    with pytest.raises(KeyError):
        SurveyText(survey, "de")


def test_a_hint_only_in_a_translation_is_shown_there_only() -> None:
    d = translated()
    d["translations"]["es"]["questions"]["freq"]["hint"] = "Piense en el último mes"
    survey = Survey.from_dict(d)
    hint = SurveyText(survey, "es").hint("freq")
    assert hint is not None and (hint.text, hint.fell_back) == ("Piense en el último mes",
                                                                False)
    assert SurveyText(survey, "en").hint("freq") is None
    assert SurveyText(survey, "fr").hint("freq") is None


def test_a_base_language_other_than_english() -> None:
    d = translated(language="es-MX")
    d["translations"] = {"en": {"title": "In English"}}
    survey = Survey.from_dict(d)
    assert languages(survey) == ["es-MX", "en"]
    assert SurveyText.choose(survey, ["en-GB"]).title().text == "In English"
    assert SurveyText.choose(survey, ["de"]).language == "es-MX"


@pytest.mark.parametrize("tag, canonical", [
    ("en", "en"), ("EN", "en"), ("es_mx", "es-MX"), ("zh-hant-tw", "zh-Hant-TW"),
    ("es-419", "es-419"), ("sr-Latn", "sr-Latn"), ("de-CH-1996", "de-CH-1996"),
    ("en-US-x-twain", "en-US-x-twain"), ("english", None), ("e", None), ("", None),
    ("Español (es)", None), ("en-", None), ("en--US", None), ("x-private", None),
])
def test_canonical_tags(tag: str, canonical: str | None) -> None:
    assert canonical_tag(tag) == canonical


@pytest.mark.parametrize("available, preferences, chosen", [
    (["en", "es"], ["es"], "es"),
    (["en", "es"], ["ES"], "es"),
    (["en", "es"], ["es-MX", "en"], "es"),          # the preference's prefix
    (["en", "es-419", "es-ES"], ["es"], "es-419"),  # a tag the preference is a prefix of
    (["en", "es", "es-MX"], ["es-MX"], "es-MX"),     # the exact tag before its prefix
    (["en", "pt-BR", "pt"], ["pt-PT"], "pt"),
    (["en", "fr"], ["de", "fr-CA", "en"], "fr"),     # first preference that matches wins
    (["en", "fr"], ["de"], None),
    (["en", "fr"], ["not a tag", "fr"], "fr"),
    (["en", "es"], ["e"], None),                      # no matching on partial subtags
])
def test_best_language_by_bcp47_prefix(available: list[str], preferences: list[str],
                                       chosen: str | None) -> None:
    assert best_language(available, preferences) == chosen


@pytest.mark.parametrize("env, wanted", [
    ({}, []),
    ({"LANG": "es_ES.UTF-8"}, ["es-ES"]),
    ({"LANG": "es_ES.UTF-8", "LC_ALL": "fr_FR.UTF-8"}, ["fr-FR"]),
    ({"LANG": "es_ES.UTF-8", "LC_MESSAGES": "de_DE"}, ["de-DE"]),
    ({"LC_ALL": "fr_FR", "LC_MESSAGES": "de_DE"}, ["fr-FR"]),
    ({"LANG": "es_ES.UTF-8", "LANGUAGE": "pt_BR:fr"}, ["pt-BR", "fr", "es-ES"]),
    ({"LANG": "C.UTF-8", "LANGUAGE": "es"}, []),      # gettext: C disables LANGUAGE
    ({"LANGUAGE": "es"}, []),                         # no locale at all: the same
    ({"LC_ALL": "POSIX", "LANG": "es_ES"}, []),
    ({"LANG": "sr_RS@latin"}, ["sr-RS"]),
    ({"LANG": "es_ES", "LANGUAGE": "::bad tag:fr"}, ["fr", "es-ES"]),
])
def test_environment_languages_in_gettext_precedence(env: dict[str, str],
                                                     wanted: list[str]) -> None:
    assert environment_languages(env) == wanted


def test_choose_text_prefers_lang_over_the_environment() -> None:
    survey = Survey.from_dict(translated())
    assert choose_text(survey, "fr", {"LANG": "es_ES.UTF-8"}).language == "fr"
    assert choose_text(survey, None, {"LANG": "es_ES.UTF-8"}).language == "es"
    assert choose_text(survey, None, {"LANG": "de_DE.UTF-8"}).language == "en"
    assert choose_text(survey, "de", {"LANG": "es_ES.UTF-8"}).language == "en"
    with pytest.raises(SurveyError, match="--lang: 'spanish' is not a BCP 47"):
        choose_text(survey, "spanish", {})
