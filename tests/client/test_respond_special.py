"""`ldpsurvey respond` with special values ("Don't know", "Prefer not to say"): listed under the
question, typed by label, name or translated text (any case), and randomized over the extended
domain like any answer."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from ldpsurvey.client.cli import check_answer, parse_answer, prompt_answers
from ldpsurvey.client.page_words import words_for
from ldpsurvey.shared.errors import AnswerError
from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.translations import SurveyText

SPECIAL = {"dont_know": "Don't know", "refused": "Prefer not to say"}
SURVEY = Survey.from_dict({"id": "s", "title": "S", "version": 1, "language": "en",
                           "questions": [
    {"id": "used", "text": "Used?", "type": "binary", "epsilon": 1.0, "special": SPECIAL},
    {"id": "days", "text": "Days?", "type": "integer", "epsilon": 1.0, "min": 0, "max": 7,
     "special": SPECIAL},
    {"id": "freq", "text": "How often?", "type": "ordinal", "epsilon": 1.0,
     "options": ["never", "often"], "special": SPECIAL}],
    "translations": {"fr": {"questions": {"used": {"text": "Consommé ?",
                                                   "options": {"Don't know": "Ne sait pas"}}}}}})


@pytest.mark.parametrize("qid", ["used", "days", "freq"])
@pytest.mark.parametrize("typed, value", [("Don't know", "Don't know"),
                                          ("prefer NOT to say", "Prefer not to say"),
                                          ("refused", "Prefer not to say")])
def test_a_special_value_is_typed_by_label_or_name(qid: str, typed: str, value: str) -> None:
    q = SURVEY.question(qid)
    assert parse_answer(q, typed, SurveyText(SURVEY), words_for("en")) == value
    check_answer(q, value)  # the mechanism encodes it: a value of the extended domain


def test_answers_still_parse_and_other_words_are_refused() -> None:
    text, words = SurveyText(SURVEY), words_for("en")
    assert parse_answer(SURVEY.question("used"), "yes", text, words) is True
    assert parse_answer(SURVEY.question("days"), "3", text, words) == 3
    assert parse_answer(SURVEY.question("freq"), "2", text, words) == "often"
    with pytest.raises(AnswerError):
        parse_answer(SURVEY.question("used"), "maybe", text, words)


def test_the_translated_label_is_read_in_the_language_shown() -> None:
    q = SURVEY.question("used")
    assert parse_answer(q, "ne sait pas", SurveyText(SURVEY, "fr"), words_for("fr")) == "Don't know"


def test_the_prompt_lists_the_special_values() -> None:
    import click

    @click.command()
    def ask() -> None:
        click.echo(repr(prompt_answers(SURVEY)))

    result = CliRunner().invoke(ask, input="Don't know\nrefused\nnever\n")
    assert result.exit_code == 0, result.output
    assert "[Don't know]" in result.output and "[Prefer not to say]" in result.output
    assert "'used': \"Don't know\"" in result.output and "'freq': 'never'" in result.output
