"""`ldpsurvey respond` with special values ("Don't know", "Prefer not to say"): listed under the
question, typed by label, name or translated text (any case), and randomized over the extended
domain like any answer."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner
from ldpsurvey.client.cli import check_answer, parse_answer, prompt_answers
from ldpsurvey.client.page_words import words_for
from ldpsurvey.shared.errors import AnswerError
from ldpsurvey.shared.mechanisms import mechanism_for
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


class _Device:
    """What the review asks of a respondent: each question's mechanism and the ε ceiling."""

    max_epsilon = 5.0
    server_url = "http://127.0.0.1:9"

    def mechanism(self, survey: Survey, q: Any) -> Any:
        return mechanism_for(q)


def test_the_review_counts_special_values_among_what_may_be_sent() -> None:
    """The English review said "one of the other 2 options" for a 3-option question with two
    special values (grr over 5 values: 4 others), and "whether you were asked" for an integer
    that has no "not asked" value; it now says the page's sentences for special values."""
    from ldpsurvey.client.cli import _review

    lines = "\n".join(_review(_Device(), SURVEY, {"used": "Prefer not to say", "days": 3,
                                                  "freq": "never"}))
    assert "one of the other 3 values (your answer, ‘don’t know’ and the like among them)" \
        in lines  # binary: yes, no, 2 special values
    assert "the status ‘an answer’" in lines and "whether you were asked" not in lines
    assert "other 1 option" not in lines and "other 2 options" not in lines


def test_a_report_of_a_special_value_is_said_after_sending_not_an_index_error() -> None:
    """What `respond` prints once a report is stored: a report of a special value's index
    raised IndexError (the options alone were indexed), and an integer's status code was
    said as an asked bit."""
    from ldpsurvey.client.review_words import report_words

    english, french = words_for("en"), words_for("fr")
    used, days, freq = SURVEY.questions
    assert report_words(used, mechanism_for(used), 3, None, english) == \
        "the option “Prefer not to say”"
    assert report_words(freq, mechanism_for(freq), 2, None, english) == \
        "the option “Don't know”"
    assert report_words(days, mechanism_for(days), [1, 4], None, english) == \
        "the status ‘an answer’ and the number 4"
    assert report_words(days, mechanism_for(days), [2, 4], None, english) == \
        "the status “Prefer not to say” and the number 4"
    assert "«\xa0Prefer not to say\xa0»" in report_words(days, mechanism_for(days), [2, 4], None,
                                                   french)
