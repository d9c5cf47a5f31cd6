"""Piped text: `${question}` in a question's text, hint or option labels shows the
respondent's own earlier answer, substituted on the respondent's device only (docs/piping.md).

    [[questions]]
    id = "used"
    text = "Have you used ${substance} in the past month?"   # `substance` asked before

The signed survey keeps the template: the canonical bytes, the manifest and everything the
server holds say `${child_age}`; the page (client/web/js/piping.js) and `respond`'s prompts
(client/cli.py) write the answer in, as the respondent's device shows it (an option by its
text in the respondent's language, yes/no in the device's words), and nothing about the
substituted value is sent. A reference names an EARLIER question of the survey: checked when
the survey is parsed (`check_piping`), naming the field (`questions.<id>.text`, `.hint`,
`.options`, `translations.<tag>.questions.<id>.text` ...). An unknown id, a later question or
the question itself (the only cycle a text can make, since it reads only earlier answers) is
refused.

A reference whose question was not asked (skip logic) or is not answered (yet, or skipped as
optional) shows FALLBACK, "…": the sentence stays readable and says nothing that is not so.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from .errors import SurveyError

# `${name}`: the XLSForm spelling. Anything between the braces is a reference (and must be a
# question id); a `$` or `{` elsewhere is text.
REFERENCE = re.compile(r"\$\{([^{}]*)\}")
FALLBACK = "\u2026"  # "…": what a reference to an unanswered or unasked question shows


def references(text: str) -> list[str]:
    """The question ids a text pipes, in order of appearance (repeats kept)."""
    return REFERENCE.findall(text) if "${" in text else []  # most texts: no regex at all


def substitute(text: str, answer_text: Callable[[str], str | None]) -> str:
    """`text` with each `${id}` replaced by `answer_text(id)` (the answer as the device shows
    it), or FALLBACK where that is None (not asked, not answered)."""
    def one(match: re.Match[str]) -> str:
        shown = answer_text(match.group(1))
        return FALLBACK if shown is None else shown
    return REFERENCE.sub(one, text)


def piped_texts(question: Any, translations: Mapping[str, Any]
                ) -> Iterable[tuple[str, str]]:
    """(where, text) of every text of `question` that may pipe: its text, hint and option
    labels (those that are the designer's words), and their translations."""
    where = f"questions.{question.id}"
    yield f"{where}.text", question.text
    if question.hint is not None:
        yield f"{where}.hint", question.hint
    labels = question.unit.translatable_options(question)
    if "${" in "\n".join(labels):  # one scan of a long option list, not one call per label
        for label in labels:
            yield f"{where}.options", label
    for tag, translation in translations.items():
        entry = translation.questions.get(question.id)
        if entry is None:
            continue
        at = f"translations.{tag}.questions.{question.id}"
        if entry.text is not None:
            yield f"{at}.text", entry.text
        if entry.hint is not None:
            yield f"{at}.hint", entry.hint
        if "${" in "\n".join(entry.options.values()):
            for label, shown in entry.options.items():
                yield f"{at}.options.{label}", shown


def check_piping(questions: Sequence[Any], translations: Mapping[str, Any]) -> None:
    """SurveyError, naming the field, for a `${...}` that is not an earlier question."""
    position = {q.id: i for i, q in enumerate(questions)}
    for i, question in enumerate(questions):
        for where, text in piped_texts(question, translations):
            for name in references(text):
                _check_reference(name, i, question.id, position, where)


def _check_reference(name: str, index: int, own: str, position: Mapping[str, int],
                     where: str) -> None:
    if name not in position:
        raise SurveyError(where, f"${{{name}}} is not a question of this survey: a text can "
                          "show only an earlier question's answer (`${question_id}`)")
    if name == own:
        raise SurveyError(where, f"${{{name}}} is this question's own answer, which is not "
                          "given yet (a cycle): a text can show only an earlier question's "
                          "answer")
    if position[name] > index:
        raise SurveyError(where, f"${{{name}}} is asked after this question (question "
                          f"{position[name] + 1}): a text can show only an earlier "
                          "question's answer; move it before, or drop the reference")


def pipes(survey: Any) -> bool:
    """Whether any question's text, hint or option label pipes an answer."""
    return any(references(text) for q in survey.questions
               for _, text in piped_texts(q, survey.translations))
