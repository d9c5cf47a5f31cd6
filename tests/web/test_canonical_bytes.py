"""canonical.js writes the very bytes Python signs (shared/survey.py canonical_json of
Survey.to_dict), so the page refuses exactly the non-canonical surveys the CLI refuses.

Shared vectors, not reading: Python writes the canonical text of many surveys and floats, and
the page's JS must reproduce each byte for byte from the parsed JSON.
"""

from __future__ import annotations

import math
import sys
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from ldpsurvey.analyst.demo import sample_survey
from ldpsurvey.shared.survey import Survey, canonical_json
from support.clients import survey_dict

TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1,
               max_size=30).filter(str.strip)
EPSILON = st.floats(min_value=1e-6, max_value=50.0, allow_nan=False, allow_infinity=False)

FLOATS = [1.0, 0.1, 0.5, 1.5, 2.0, 50.0, 1e-05, 1e-4, 0.0001234, 123456789.125, 1e15, 1e16,
          1.5e16, 5e-324, sys.float_info.max, sys.float_info.min, 1 / 3, 2 / 3, math.log(3),
          math.pi * 1e-7, 9007199254740993.0, 0.0, -0.0, -2.5, 1e22, 1.2345678901234567e-300]


def surveys() -> list[dict[str, Any]]:
    odd = survey_dict(survey_id="odd-text", series="weekly")
    odd["title"] = 'Quotes " and \\ back\tslash\n, control \x01\x1f, DEL \x7f, é 中 😀'
    odd["description"] = "\u2028 line separator, / slash"
    odd["questions"][1]["groups"] = {"😀 high": ["good", "great"], "\uffff low": ["awful"],
                                     "Z": ["low"], "a": ["fine"]}
    odd["questions"][0]["instantaneous_epsilon"] = 0.7
    odd["questions"][0]["mechanism"] = "binary_rr"
    return [sample_survey().to_dict(), Survey.from_dict(survey_dict()).to_dict(),
            Survey.from_dict(odd).to_dict(),
            Survey.from_dict({**survey_dict(survey_id="sized"), "report_size_limit": 64,
                              "version": 12}).to_dict(),
            Survey.from_dict({**survey_dict(survey_id="crossed"), "crosstabs": [
                ["smoker", "mood"], {"rows": "drinks", "cols": "mood", "row_bins": [-3, 5, 10]},
                {"cols": "drinks", "rows": "smoker", "col_bins": [7]}]}).to_dict(),
            Survey.from_dict({"id": "where", "title": "Where", "version": 1, "questions": [
                {"id": "home", "type": "location", "text": "Home?", "epsilon_geo": 1,
                 "grid": {"rows": 3, "cols": 4, "cell_km": 2}, "regions": {"é 😀": ["1-2,3"]}},
                {"id": "work", "type": "location", "text": "Work?", "epsilon_geo": 0.3,
                 "grid": {"rows": 2, "cols": 2, "cell_km": 1 / 3}}]}).to_dict(),
            translated_survey()]


def translated_survey() -> dict[str, Any]:
    """Contract 4: a base language, hints and several translations (the signature covers
    every language, so the page must rebuild them byte for byte)."""
    d = survey_dict(survey_id="multilingual")
    d["questions"][1]["groups"] = {"at least fine": ["fine", "good", "great"], "😀 z": ["low"]}
    d["questions"].append({"id": "home", "type": "location", "text": "Home?", "epsilon_geo": 1,
                           "grid": {"rows": 3, "cols": 4, "cell_km": 2},
                           "regions": {"town": ["1-2,3"], "é 😀": ["3,1"]}})
    d["language"] = "en"
    d["questions"][0]["hint"] = "Cigarettes, cigars or pipes; 😀 \u2028"
    d["questions"][2]["hint"] = "Zero if none"
    d["translations"] = {
        "es": {"title": "Control", "description": "Una encuesta \" breve",
               "questions": {"smoker": {"text": "¿Fuma?", "hint": "Cigarrillos"},
                             "mood": {"options": {"low": "bajo", "great": "genial",
                                                  "awful": "fatal"},
                                      "groups": {"😀 z": "z \u2028", "at least fine": "bien"}},
                             "home": {"regions": {"town": "pueblo"}}}},
        "zh-Hant": {"questions": {"drinks": {"hint": "沒有就填零"}}},
        "ar": {"title": "تسجيل", "questions": {"mood": {"text": "كيف مزاجك؟"},
                                               "home": {"regions": {"é 😀": "مدينة",
                                                                    "town": "بلدة"}}}}}
    return Survey.from_dict(d).to_dict()


def js_canonical(js_page: Any, root: str, texts: list[str]) -> list[str]:
    return js_page.evaluate("""async ([root, texts]) => {
      const C = await import(root + "js/canonical.js");
      return texts.map((t) => { try { return C.canonicalSurveyText(JSON.parse(t)); }
                                catch (e) { return `${e.name}: ${e.message}`; } });
    }""", [root, texts])


def test_js_writes_the_bytes_python_signs(js_page: Any, web_root_url: str) -> None:
    texts = [canonical_json(s).decode() for s in surveys()]
    assert js_canonical(js_page, web_root_url, texts) == texts


def test_js_writes_every_language_python_signs(js_page: Any, web_root_url: str) -> None:
    """The signature verifies on the page with every language present (contract 4)."""
    text = canonical_json(translated_survey()).decode()
    assert js_canonical(js_page, web_root_url, [text]) == [text]


def test_js_writes_floats_as_python_repr(js_page: Any, web_root_url: str) -> None:
    got = js_page.evaluate("""async ([root, xs]) => {
      const C = await import(root + "js/canonical.js");
      return xs.map(C.pyFloat);
    }""", [web_root_url, FLOATS])
    assert got == [repr(x) for x in FLOATS]


@settings(max_examples=20, deadline=None)
@given(title=TEXT, text=TEXT, epsilon=EPSILON, options=st.lists(TEXT, min_size=2, max_size=5,
                                                               unique=True))
def test_js_matches_python_on_generated_surveys(js_page: Any, web_root_url: str, title: str,
                                                text: str, epsilon: float,
                                                options: list[str]) -> None:
    data = {"id": "gen", "title": title, "version": 1, "questions": [
        {"id": "q", "text": text, "type": "categorical", "epsilon": epsilon,
         "options": options, "mechanism": "grr", "groups": {options[-1]: options[:1]}}]}
    expected = canonical_json(Survey.from_dict(data).to_dict()).decode()
    assert js_canonical(js_page, web_root_url, [expected]) == [expected]


def test_js_rewrites_what_is_not_canonical(js_page: Any, web_root_url: str) -> None:
    import json

    canonical = Survey.from_dict(survey_dict()).to_dict()
    non_ascii = surveys()[2]
    texts = [
        json.dumps(canonical, sort_keys=True, ensure_ascii=False),  # spaces
        json.dumps(canonical, separators=(",", ":"), ensure_ascii=False),  # unsorted
        json.dumps(non_ascii, sort_keys=True, separators=(",", ":")),  # \u escapes
        canonical_json(canonical).decode().replace('"epsilon":1.0', '"epsilon":1'),
        canonical_json({**canonical, "note": "x"}).decode(),  # a key Python refuses
        canonical_json({k: v for k, v in canonical.items() if k != "description"}).decode(),
        # a translation's key Python refuses, and one a question's translation does not have
        canonical_json({**translated_survey(), "translations": {
            "es": {"title": "x", "note": "y"}}}).decode(),
        canonical_json({**translated_survey(), "translations": {
            "es": {"questions": {"smoker": {"text": "x", "label": "y"}}}}}).decode(),
        # translated group and region names in an order that is not canonical
        canonical_json(translated_survey()).decode().replace(
            '"groups":{"at least fine":"bien","😀 z":"z \u2028"}',
            '"groups":{"😀 z":"z \u2028","at least fine":"bien"}'),
    ]
    assert texts[-1] != canonical_json(translated_survey()).decode()
    rewritten = js_canonical(js_page, web_root_url, texts)
    assert all(a != b for a, b in zip(rewritten, texts, strict=True))
