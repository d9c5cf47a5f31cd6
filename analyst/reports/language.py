"""`report --lang`: a report whose questions are labelled in the analyst's chosen language.

The survey's text comes from its translations (shared/translations.py), each string falling
back to the survey's own language where a translation lacks it. Estimates are unchanged and
keep the option labels as values: the table, Markdown and HTML formats show each option's text
in that language; JSON adds a `labels` object (the language, the title, each question's text
and option texts, and where the text fell back); CSV adds `question_text` and `option_text`
columns. Without --lang every format is as before, byte for byte.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ...shared.errors import ReportRenderError
from ...shared.translations import SurveyText, best_language, canonical_tag, languages
from .model import Report


def in_language(report: Report, lang: str, warn: Any = None) -> Report:
    """The report labelled in `lang` (matched by BCP 47 prefix; the survey's own language,
    with a warning, when the survey has no such text)."""
    if canonical_tag(lang) is None:
        raise ReportRenderError(f"--lang: {lang!r} is not a BCP 47 language tag")
    available = languages(report.survey)
    chosen = best_language(available, [lang]) or available[0]
    if warn is not None and best_language(available, [lang]) is None:
        warn(f"the survey has no text in {lang!r} (it has: {', '.join(available)}); the report "
             f"is in {chosen!r}")
    text = SurveyText(report.survey, chosen)
    survey = dict(report.survey)
    survey["title"] = text.title().text
    survey["description"] = text.description().text
    survey["questions"] = [{**q, "text": text.question(q["id"]).text}
                           for q in report.survey.get("questions", [])]
    return replace(report, survey=survey, language=chosen)


def labels_document(report: Report) -> dict[str, Any]:
    """The JSON format's `labels`: the report's language and its text for each question."""
    text: SurveyText = report.text
    questions = {}
    for q in report.survey.get("questions", []):
        entry: dict[str, Any] = {"text": text.question(q["id"]).text}
        if q.get("type") in ("categorical", "ordinal", "multiselect"):
            entry["options"] = {label: text.option(q["id"], label).text
                                for label in q.get("options", [])}
        questions[q["id"]] = entry
    return {"language": text.language, "title": text.title().text, "questions": questions,
            "fell_back_to": text.base, "fallbacks": text.fallbacks()}
