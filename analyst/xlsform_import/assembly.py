"""The survey table from the mapped parts: the settings' keys, the introduction (the notes
before the first question) as the description, the questions in the form's order, the
translations grouped by language; and its readable TOML (analyst/survey_toml.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .errors import FIX, RowProblem
from .languages import Languages
from .questions import Question
from .settings import SurveySettings

_FIRST_KEYS = ("id", "title", "version")  # the description comes after these


def with_introduction(settings: SurveySettings, intro: Sequence[Any], languages: Languages
                      ) -> SurveySettings:
    """The settings with the introduction (the label cells of the notes before the first
    question) as the description and its translations; unchanged without one."""
    description, translated = _introduction(intro, languages)
    data = settings.data
    if description:
        data = {**{k: v for k, v in data.items() if k in _FIRST_KEYS},
                "description": description,
                **{k: v for k, v in data.items() if k not in _FIRST_KEYS}}
    texts = {tag: dict(entry) for tag, entry in settings.texts.items()}
    for tag, text in translated.items():
        texts.setdefault(tag, {})["description"] = text
    return SurveySettings(data, texts)


def _introduction(intro: Sequence[Any], languages: Languages) -> tuple[str, dict[str, str]]:
    """The notes joined by blank lines: the base text and its translations (a note without
    a translation keeps its base text there)."""
    parts = [languages.text(label) for label in intro]
    base = "\n\n".join(text for text, _ in parts if text)
    tags = {tag for _, others in parts for tag in others}
    translated = {tag: "\n\n".join(others.get(tag, text or "") for text, others in parts
                                   if text or tag in others) for tag in sorted(tags)}
    return base, translated


def assemble(questions: Sequence[Question], settings: SurveySettings, languages: Languages
             ) -> dict[str, Any]:
    """The survey table of these questions."""
    data = dict(settings.data)
    data["questions"] = [q.data for q in questions]
    translations: dict[str, dict[str, Any]] = {}
    for tag in languages.tags.values():
        if tag == languages.base_tag:
            continue
        entry = dict(settings.texts.get(tag, {}))
        per_question = {q.data["id"]: q.texts[tag] for q in questions if q.texts.get(tag)}
        if per_question:
            entry["questions"] = per_question
        if entry:
            translations[tag] = entry
    if translations:
        data["translations"] = translations
    return data


def toml(data: Mapping[str, Any], filename: str, questions: Sequence[Question],
         left_out: Sequence[RowProblem], to_check: Sequence[RowProblem] = ()) -> str:
    """The table as TOML: a header naming the form, the rows left out (those that need
    the designer's fix apart, first) and the rows imported as ODK runs them, to check; above
    each question the row it came from."""
    from ..survey_toml import to_toml

    header = [f"Imported from the XLSForm {filename} by `ldpsurvey import xlsform`.",
              "Edit freely: `ldpsurvey plan` on this file checks it and plans the sample."]
    to_fix = [p for p in left_out if p.kind == FIX]
    if to_fix:
        header.append(f"{len(to_fix)} row(s) need your fix and were left out "
                      "(--skip-unsupported):")
        header += [f"  {p}" for p in to_fix]
    if to_check:
        header.append(f"{len(to_check)} row(s) imported as ODK runs them; check them (the "
                      "form is wrong there):")
        header += [f"  {p}" for p in to_check]
    if len(left_out) > len(to_fix):
        header.append("Rows left out (--skip-unsupported):")
        header += [f"  {p}" for p in left_out if p.kind != FIX]
    comments = {q.data["id"]: q.comments for q in questions}
    return to_toml(data, header, comments)
