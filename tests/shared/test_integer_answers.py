"""An integer question's answer is a whole number given as an integer (a JSON integer) on
every path that takes a true answer, whatever its mechanism (shared/question_types/integer.py
`whole_answer`): the number grid's mechanisms (duchi, square_wave, the pair, one_bit_mean) took
3.0, "3" and "3.0" where geometric, asked_geometric, a disclosed integer, the two-server
upload and the HTTP API (a disclosed integer's report) refuse them. 3.0 and "3" are refused
naming questions.<id>; a decimal keeps taking numbers and decimal strings (its grid rounds)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ldpsurvey.client.respondent import Respondent
from ldpsurvey.shared.errors import AnswerError
from ldpsurvey.shared.survey import Survey

RANGE = {"type": "integer", "text": "How many?", "min": 0, "max": 10}
QUESTIONS = {
    "geometric": {"epsilon": 1.0},
    "duchi": {"epsilon": 1.0, "mechanism": "duchi"},
    "distribution": {"epsilon": 1.0, "estimate": ["distribution"]},
    "pair": {"epsilon": 1.0, "estimate": ["mean", "distribution"]},
    "one_bit_mean": {"epsilon": 1.0, "mechanism": "one_bit_mean"},
    "special": {"epsilon": 1.0, "special": {"refused": "Prefer not to say"}},
    "disclosed": {"disclosed": True},
}


def survey() -> Survey:
    return Survey.from_dict({"id": "counts", "title": "Counts", "version": 1, "questions": [
        {"id": qid, **RANGE, **extra} for qid, extra in QUESTIONS.items()]})


def checked(tmp_path: Path, answers: dict[str, Any]) -> dict[str, Any]:
    answers = {qid: 3 for qid in QUESTIONS} | answers
    return Respondent("http://127.0.0.1:9", state_dir=str(tmp_path),
                      max_epsilon=10.0).check_answers(
        survey(), answers)


@pytest.mark.parametrize("qid", list(QUESTIONS))
@pytest.mark.parametrize("given", [3.0, "3", "3.0", 2.5, True])
def test_an_integer_answer_that_is_not_an_integer_is_refused_naming_the_question(
        tmp_path: Path, qid: str, given: Any) -> None:
    with pytest.raises(AnswerError) as caught:
        checked(tmp_path, {qid: given})
    assert str(caught.value).startswith(f"questions.{qid}: {given!r} is not a whole number")
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("qid", list(QUESTIONS))
def test_an_integer_answer_is_one_int_however_the_library_gives_it(tmp_path: Path,
                                                                   qid: str) -> None:
    """3 and a numpy integer 3 are the same answer, kept as the int 3 (one answer: a series
    memoizes, and the ledger charges, per answer)."""
    for given in (3, np.int64(3)):
        value = checked(tmp_path, {qid: given})[qid]
        assert value == 3 and type(value) is int


def test_a_special_value_is_still_an_answer(tmp_path: Path) -> None:
    assert checked(tmp_path, {"special": "Prefer not to say"})["special"] == "Prefer not to say"


def test_a_decimal_keeps_taking_numbers_and_decimal_strings(tmp_path: Path) -> None:
    """Its grid rounds (docs/decimal.md, "On the device"): not an integer's rule."""
    decimal = Survey.from_dict({"id": "d", "title": "D", "version": 1, "questions": [
        {"id": "d", "type": "decimal", "text": "?", "min": 0, "max": 10, "resolution": 1,
         "epsilon": 1.0}]})
    respondent = Respondent("http://127.0.0.1:9", state_dir=str(tmp_path))
    for given in (3, 3.0, "3", "3.0"):
        assert respondent.check_answers(decimal, {"d": given})["d"] == 3


def test_a_two_server_upload_refuses_them_the_same_way() -> None:
    from ldpsurvey.client.two_server import check_answers
    from support.two_server_stand_ins import two_server_survey_dict

    two = Survey.from_dict(two_server_survey_dict([
        {"id": "n", **RANGE, "central_epsilon": 1.0}]))
    assert check_answers(two, {"n": 3}) == {"n": 3}
    for given in (3.0, "3"):
        with pytest.raises(AnswerError, match=r"^questions\.n: .* is not a whole number"):
            check_answers(two, {"n": given})
