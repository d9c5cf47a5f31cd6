"""The survey's text in the respondent's language on the command line (`respond --lang`).

The language is `--lang`, else the environment's (LANGUAGE, LC_ALL, LC_MESSAGES, LANG in
gettext's precedence), matched by BCP 47 prefix against the survey's languages; the survey's
own language when none matches (shared/translations.py). Each string falls back to the base
language on its own, and is then marked with the base language's tag, e.g. "[en]". The
prompts' privacy lines, yes/no words and the review are the page's sentences in the language
when the page has a catalogue for it (client/page_words.py, client/review_words.py: es, fr);
the CLI's other messages stay English.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.piping import substitute
from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.translations import Shown, SurveyText, choose_text, languages

from .page_words import Speaker, Words


def survey_text(survey: Survey, lang: str | None, warn: Any = None) -> SurveyText:
    """The text `respond` shows; `warn` hears when --lang names a language the survey lacks."""
    text = choose_text(survey, lang)
    if lang is not None and warn is not None and text.language.split("-")[0] != (
            lang.replace("_", "-").split("-")[0].lower()):
        warn(f"this survey has no text in {lang!r} (it has: "
             f"{', '.join(languages(survey))}); it is shown in {text.language!r}")
    return text


def said(shown: Shown, text: SurveyText) -> str:
    """A string, marked with its language's tag where it fell back."""
    return f"{shown.text} [{shown.language}]" if shown.fell_back and shown.text else shown.text


def shown_survey(survey: Survey, text: SurveyText) -> Survey:
    """The survey with its title, description and question texts in the chosen language (for
    what is printed only: answers, mechanisms and reports use the survey itself)."""
    if not text.translated:
        return survey
    return replace(survey, title=said(text.title(), text),
                   description=said(text.description(), text),
                   questions=tuple(replace(q, text=said(text.question(q.id), text))
                                   for q in survey.questions))


def piping(survey: Survey, text: SurveyText, words: Words,
           answers: Mapping[str, Any]) -> Callable[[str], str]:
    """What writes the respondent's earlier answers into a piped text (`${id}`,
    shared/piping.py) as the prompts show it: each answer as the review names it (an option by
    its text in `text`'s language, yes/no in `words`'), FALLBACK for a question not asked or
    not answered. `answers` is read when the text is, so it may still be filling. For what is
    shown only: never for what is stored or sent (the receipts keep the template)."""
    by_id = {q.id: q for q in survey.questions}
    speaker = Speaker(words, text)

    def answer(qid: str) -> str | None:
        value = answers.get(qid)
        if value is None or qid not in by_id:
            return None
        q = by_id[qid]
        return q.unit.answer_words(q, value, speaker)
    return lambda shown: substitute(shown, answer)


def piped_texts(shown: Survey, pipe: Callable[[str], str]) -> Survey:
    """The printed survey (shown_survey) with its question texts piped (`piping`): for the
    review, which shows the answers anyway; never for what is stored or sent."""
    return replace(shown, questions=tuple(replace(q, text=pipe(q.text))
                                          for q in shown.questions))


def fallback_line(text: SurveyText) -> str | None:
    """One line saying where the text falls back, or None when nothing does."""
    if not text.translated:
        return None
    missing = text.fallbacks()
    if not missing:
        return f"Survey text in {text.language}."
    return (f"Survey text in {text.language}; {len(missing)} string(s) not translated are shown "
            f"in {text.base}, marked [{text.base}].")


@dataclass(frozen=True)
class Terminal(Speaker):
    """What a question's unit asks with on the terminal (shared/question_types
    TerminalWords): the page's words in `words`' language and the survey's text `shown` (a
    SurveyText, or None: its own labels)."""

    def yes_no(self, typed: str) -> bool | None:
        return self.words.yes_no(typed)

    def yes_no_hint(self) -> str:
        return self.words.yes_no_hint()

    # Writes earlier answers into a piped option text (`piping`); None: shown as it is.
    pipe: Callable[[str], str] | None = None

    def listed(self, question: Any, label: Any) -> str:
        listed = label if self.shown is None else said(self.shown.option(question.id, label),
                                                       self.shown)
        return listed if self.pipe is None else self.pipe(listed)

    def region(self, question: Any, name: str) -> str:
        return name if self.shown is None else said(self.shown.region(question.id, name),
                                                    self.shown)

    def typed_option(self, question: Any, typed: str) -> str:
        if self.shown is None or not self.shown.translated or typed in question.options:
            return typed
        texts = {self.shown.option(question.id, label).text: label for label in question.options}
        return texts.get(typed, typed)

    def typed_region(self, question: Any, typed: str) -> str:
        if self.shown is None or not self.shown.translated or typed in question.groups:
            return typed
        names = {self.shown.region(question.id, name).text: name for name in question.groups}
        return names.get(typed, typed)

    def encode(self, question: Any, answer: Any) -> int:
        return mechanism_for(question).encode(answer)
