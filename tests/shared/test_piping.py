"""Piped texts (shared/piping.py, docs/piping.md): `${id}` in a question's text, hint or option
labels, in every language, names an earlier question; the survey's check refuses anything else
naming the field; the signed bytes keep the template; `substitute` writes the answers in with
the fallback for what was not asked or answered."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.shared.errors import SurveyError
from ldpsurvey.shared.manifest import sign_survey, verify_manifest
from ldpsurvey.shared.piping import FALLBACK, pipes, references, substitute
from ldpsurvey.shared.survey import Survey


def piped_survey() -> dict[str, Any]:
    return {"id": "piped", "title": "Piped", "version": 1, "language": "en",
            "questions": [
                {"id": "drug", "type": "categorical", "text": "Which one have you tried?",
                 "epsilon": 1.0, "options": ["cannabis", "cocaine"]},
                {"id": "used", "type": "binary", "text": "Have you used ${drug} this month?",
                 "hint": "Think of ${drug} only.", "epsilon": 1.0},
                {"id": "how", "type": "categorical", "text": "How did you take it?",
                 "epsilon": 1.0, "options": ["smoked ${drug}", "other"]},
                {"id": "days", "type": "integer", "text": "On how many days (${used})?",
                 "epsilon": 1.0, "min": 0, "max": 30}],
            "translations": {"es": {"questions": {
                "drug": {"text": "¿Cuál ha probado?",
                         "options": {"cannabis": "cannabis", "cocaine": "cocaína"}},
                "used": {"text": "¿Ha consumido ${drug} este mes?", "hint": "Solo ${drug}."},
                "how": {"options": {"smoked ${drug}": "fumó ${drug}"}}}}}}


def test_a_piped_survey_parses_and_keeps_its_template_in_the_signed_bytes():
    survey = Survey.from_dict(piped_survey())
    assert survey.question("used").text == "Have you used ${drug} this month?"
    assert b"Have you used ${drug} this month?" in survey.canonical_bytes()
    assert "fum\u00f3 ${drug}".encode() in survey.canonical_bytes()
    key = Ed25519PrivateKey.generate()
    manifest = json.loads(json.dumps(sign_survey(survey, key).to_dict()))
    assert verify_manifest(manifest).survey.question("used").text == (
        "Have you used ${drug} this month?")
    assert verify_manifest(manifest).survey.sha256 == survey.sha256
    assert pipes(survey)


def test_a_survey_without_references_keeps_its_bytes():
    """`${` alone (no reference) is text, and a survey without references does not pipe."""
    data = piped_survey()
    for q in data["questions"]:
        q["text"] = q["text"].replace("${", "$ {")
        q.pop("hint", None)
    data["questions"][2]["options"] = ["smoked", "other"]
    data.pop("translations")
    survey = Survey.from_dict(data)
    assert not pipes(survey)
    assert survey.question("used").text == "Have you used $ {drug} this month?"


@pytest.mark.parametrize(("path", "value", "field", "words"), [
    (("questions", 1, "text"), "Used ${nothing}?", "questions.used.text",
     "${nothing} is not a question of this survey"),
    (("questions", 1, "text"), "Used ${days}?", "questions.used.text",
     "${days} is asked after this question (question 4)"),
    (("questions", 1, "hint"), "Your ${used}", "questions.used.hint",
     "${used} is this question's own answer, which is not given yet (a cycle)"),
    (("questions", 2, "options", 1), "other than ${how}", "questions.how.options",
     "${how} is this question's own answer"),
    (("questions", 1, "text"), "Used ${}?", "questions.used.text",
     "${} is not a question of this survey"),
    (("translations", "es", "questions", "used", "text"), "¿${days}?",
     "translations.es.questions.used.text", "${days} is asked after this question"),
    (("translations", "es", "questions", "used", "hint"), "¿${x}?",
     "translations.es.questions.used.hint", "${x} is not a question of this survey"),
    (("translations", "es", "questions", "how", "options", "smoked ${drug}"), "${how}",
     "translations.es.questions.how.options.smoked ${drug}", "own answer"),
])
def test_a_reference_that_is_not_an_earlier_question_is_refused_naming_the_field(
        path, value, field, words):
    data = copy.deepcopy(piped_survey())
    target: Any = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    if path[-1] == 1 and path[-2] == "options":  # an option renamed: its translation goes
        data["translations"]["es"]["questions"].pop("how")
    with pytest.raises(SurveyError) as caught:
        Survey.from_dict(data)
    assert caught.value.field == field
    assert words in caught.value.problem
    assert "earlier" in caught.value.problem  # says what a reference may name


def test_substitute_writes_each_answer_and_the_fallback_for_the_rest():
    shown = {"drug": "cocaína", "used": None}
    text = "¿${drug}? ${used} ${missing} ${drug}"
    assert substitute(text, shown.get) == f"¿cocaína? {FALLBACK} {FALLBACK} cocaína"
    assert references(text) == ["drug", "used", "missing", "drug"]
    # what is written in is text: a second `${...}` inside an answer is not read again
    assert substitute("${a}", {"a": "${b}"}.get) == "${b}"
    assert substitute("no reference {drug} $drug", shown.get) == "no reference {drug} $drug"
