"""`report --lang` and `regress --lang`: every report labelled in the analyst's chosen language.

The survey's text comes from its translations (shared/translations.py), each string falling
back to the survey's own language where a translation lacks it; a language the survey has no
text in at all is refused (one line, before anything is rendered). Estimates are unchanged and
keep the option labels (and group and region names) as values: the table, Markdown and HTML
formats show each option's, group's and region's text in that language; JSON adds a `labels`
object (the language, the title, each shown question's text, option texts, group and region
names, and where the text fell back); CSV adds text columns at the end of each line. Without
--lang every format is as before, byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ldpsurvey.shared.errors import ReportRenderError, SurveyError
from ldpsurvey.shared.translations import SurveyText, best_language, languages, requested_tag

from .model import Report, unit_of


def chosen_language(survey: Mapping[str, Any], lang: str) -> str:
    """The survey's language `lang` asks for, matched by BCP 47 prefix (es-MX reads es).
    ReportRenderError when the survey has no text in it: an analyst who asked for a language
    gets it or is told, never a report in another one."""
    try:
        requested_tag(lang)
    except SurveyError as exc:
        raise ReportRenderError(str(exc)) from None
    available = languages(survey)
    chosen = best_language(available, [lang])
    if chosen is None:
        raise ReportRenderError(f"--lang: survey {survey.get('id', '')!r} has no text in "
                                f"{lang!r}; its languages: {', '.join(available)}")
    return chosen


def in_language(report: Report, lang: str) -> Report:
    """The report labelled in `lang` (matched by BCP 47 prefix; ReportRenderError when the
    survey has no such text)."""
    chosen = chosen_language(report.survey, lang)
    text = SurveyText(report.survey, chosen)
    survey = dict(report.survey)
    survey["title"] = text.title().text
    survey["description"] = text.description().text
    survey["questions"] = [{**q, "text": text.question(q["id"]).text}
                           for q in report.survey.get("questions", [])]
    return replace(report, survey=survey, language=chosen)


@dataclass(frozen=True)
class LanguageRequest:
    """A command's `--lang TAG`. Each kind of report is labelled through it (the survey is
    known only once fetched; a language it lacks is refused then: chosen_language)."""

    tag: str

    def language(self, survey: Mapping[str, Any]) -> str:
        """The survey's language to label a report in."""
        return chosen_language(survey, self.tag)

    def report(self, report: Report) -> Report:
        """An estimates report (also a two-server one, a design-based one) in the language."""
        return in_language(report, self.tag)

    def crosstab(self, report: Any) -> Any:
        """A crosstab report (crosstab_view.CrosstabReport) in the language."""
        if report.survey is None:
            raise ReportRenderError("--lang: the crosstab's survey is not known")
        return replace(report, language=self.language(report.survey))


def request(lang: str | None) -> LanguageRequest | None:
    """A --lang option's request (None without --lang)."""
    return None if lang is None else LanguageRequest(lang)


def question_labels(text: SurveyText, q: Mapping[str, Any]) -> dict[str, Any]:
    """One question's entry of `labels`: its text, and its option texts, group and region
    names in the language (each keyed by the label or name the estimates use)."""
    qid = q["id"]
    entry: dict[str, Any] = {"text": text.question(qid).text}
    unit = unit_of(q.get("type"))
    if unit.option_texts(q):
        entry["options"] = {label: text.option(qid, label).text
                            for label in unit.option_texts(q)}
    if unit.group_texts(q):
        entry["groups"] = {name: text.group(qid, name).text for name in unit.group_texts(q)}
    if q.get("regions"):
        entry["regions"] = {name: text.region(qid, name).text for name in q["regions"]}
    return entry


def labels_for(text: SurveyText, survey: Mapping[str, Any],
               qids: Iterable[str] | None = None) -> dict[str, Any]:
    """The JSON formats' `labels`: the language, the title, the text of the questions a report
    shows (`qids`; every question when None) and which of those strings fell back."""
    wanted = None if qids is None else set(qids)
    shown = [q for q in survey.get("questions", []) if wanted is None or q["id"] in wanted]
    ids = {q["id"] for q in shown}
    fallbacks = [f for f in text.fallbacks()
                 if not f.startswith("questions.") or f.split(".", 2)[1] in ids]
    return {"language": text.language, "title": text.title().text,
            "questions": {q["id"]: question_labels(text, q) for q in shown},
            "fell_back_to": text.base, "fallbacks": fallbacks}


def labels_document(report: Report) -> dict[str, Any]:
    """The JSON format's `labels`: the report's language and its text for each question."""
    return labels_for(report.text, report.survey)


def answer_text(text: SurveyText | None, qdef: Mapping[str, Any] | None, label: str) -> str:
    """An answer value as a report shows it (`label` as `model.answer_label` writes it): an
    option's text in the language; yes/no, numbers, bins, cells and "not asked" as they are.
    The label itself without a language."""
    if text is None or qdef is None:
        return label
    if label in unit_of(qdef.get("type")).option_texts(qdef):
        return text.option(str(qdef["id"]), label).text
    return label


def side_texts(text: SurveyText | None, qdef: Mapping[str, Any] | None,
               side: Mapping[str, Any], labels: Sequence[str]) -> list[str]:
    """A crosstab side's cells as a report shows them: option texts, or for a declared group
    (or a multiselect option) against the rest its name and "not <name>" in the language."""
    group = side.get("group")
    if text is None or qdef is None or group is None:
        return [answer_text(text, qdef, label) for label in labels]
    qid, name = str(qdef["id"]), str(group)
    if name in unit_of(qdef.get("type")).group_texts(qdef):
        shown = text.group(qid, name).text
    else:
        shown = answer_text(text, qdef, name)
    return [shown if label == name else f"not {shown}" if label == f"not {name}" else label
            for label in labels]


def crosstab_labels(report: Any) -> dict[str, Any]:
    """A crosstab's JSON `labels`: those of its two questions, and its rows' and columns'
    cells as shown, in the document's order (crosstab_view.CrosstabReport)."""
    doc = labels_for(report.text, report.survey, [report.rows_question, report.cols_question])
    doc["cells"] = {"rows": report.shown_rows, "cols": report.shown_cols}
    return doc


def survey_labels(survey: Mapping[str, Any], language: str) -> dict[str, Any]:
    """`labels` of every question of the survey in one of its languages."""
    return labels_for(SurveyText(survey, language), survey)


def answer_names(survey: Mapping[str, Any], language: str, qid: str,
                 labels: Iterable[str]) -> dict[str, str]:
    """label -> its text in the language, for answers of question `qid` (e.g. the subgroups
    of a disclosed question)."""
    text = SurveyText(survey, language)
    qdef = next((q for q in survey.get("questions", []) if q.get("id") == qid), None)
    return {label: answer_text(text, qdef, label) for label in labels}
