"""A `decimal` question on the respondent's device (issue 41): a typed or given answer rounded
to the resolution (half up) before it is randomized, one outside min..max refused, the review
saying in plain words what is sent ("a number between A and B that depends on your answer"),
and the receipt naming the number a report stands for."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.analyst.cli import cli
from ldpsurvey.client import review_words
from ldpsurvey.client.cli import parse_answer
from ldpsurvey.client.page_words import Words
from ldpsurvey.client.review import chances, report_words, review_lines
from ldpsurvey.shared.errors import AnswerError
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Survey
from support.clients import FakeServer, signed

SAMPLE = Path(__file__).resolve().parents[2] / "shared" / "samples" / "income.toml"
DATA = tomllib.loads(SAMPLE.read_text())
SURVEY = Survey.from_dict(DATA)
MECHS = {q.id: mechanism_for(q) for q in SURVEY.questions}


@pytest.mark.parametrize("typed, kept", [("1234.56", 1230), ("1235", 1240), ("0", 0),
                                         ("20000", 20000), (" 7.5 ", 10)])
def test_a_typed_answer_is_rounded_to_the_resolution_half_up(typed: str, kept: int) -> None:
    assert parse_answer(SURVEY.question("income"), typed) == kept


def test_hours_keep_their_half_hours() -> None:
    assert parse_answer(SURVEY.question("hours"), "37.3") == 37.5
    assert parse_answer(SURVEY.question("hours"), "37.2") == 37.0


@pytest.mark.parametrize("typed", ["abc", "12,345", "1e3", "-5", "20000.1", "", "nan"])
def test_a_typed_answer_that_is_not_a_number_in_range_is_refused(typed: str) -> None:
    with pytest.raises(AnswerError):
        parse_answer(SURVEY.question("income"), typed)


def test_the_review_says_what_is_sent_in_plain_words() -> None:
    income, hours = SURVEY.question("income"), SURVEY.question("hours")
    said = chances(hours, MECHS["hours"], 37.5)
    low, high = (float(x) for x in re.findall(r"between (-?[\d.]+) and (-?[\d.]+)", said)[0])
    sent = [float(MECHS["hours"].sent_value(y)) for y in range(MECHS["hours"].index_count)]
    assert (low, high) == (pytest.approx(min(sent), abs=0.05), pytest.approx(max(sent),
                                                                              abs=0.05))
    assert said.endswith("that depends on your answer.")
    pair = chances(income, MECHS["income"], 1230)
    assert pair.startswith("Your answer is sent twice") and pair.count("a number between") == 2
    lines = review_lines(SURVEY, {"region": "north", "income": 1230, "hours": 37.5,
                                  "gambling": 12}, MECHS)
    assert "   Your answer (stays on this device): 1230" in lines


@pytest.mark.parametrize("lang", ["es", "fr"])
def test_the_review_in_another_language_names_the_answer_and_its_privacy(lang: str) -> None:
    """The decimal's own sentences are the page's catalogue part (decimal.js, the page unit's):
    said in the language where the catalogue has it, in English until then."""
    lines = review_words.review_lines(SURVEY, {"region": "north", "income": 1230,
                                               "hours": 37.5, "gambling": 12}, MECHS, None,
                                      Words(lang))
    assert any("1230" in line for line in lines)
    assert sum("ε = 1)" in line for line in lines) == 2


def test_a_receipt_names_the_numbers_a_report_stands_for() -> None:
    hours = SURVEY.question("hours")
    cell = MECHS["hours"].index_count - 1
    number = float(MECHS["hours"].sent_value(cell))
    assert report_words(hours, MECHS["hours"], cell) == f"the number {number:.1f}"
    income = report_words(SURVEY.question("income"), MECHS["income"], [0, 0])
    assert re.fullmatch(r"the numbers -?\d+ \(for the average\) and -?\d+ \(for the "
                        r"distribution\)", income)


def test_respond_rounds_on_the_device_and_sends_only_grid_cells(tmp_path: Path) -> None:
    manifest = signed(DATA, Ed25519PrivateKey.generate())
    sent: list[Any] = []

    def handler(method: str, path: str, body: Any) -> tuple[int, Any]:
        if method == "GET":
            return 200, manifest
        sent.append(body)
        return 201, {"accepted": [body["submission_id"]], "duplicates": []}

    fake = FakeServer(handler)
    try:
        answers = tmp_path / "answers.json"
        answers.write_text(json.dumps({"region": "north", "income": 1234.56, "hours": 37.3,
                                       "gambling": 12}))
        result = CliRunner().invoke(cli, ["respond", "--server", fake.url, "--survey",
                                          DATA["id"], "--answers", str(answers), "--state",
                                          str(tmp_path / "state"), "--yes"])
        assert result.exit_code == 0, result.output
        reports = sent[0]["answers"]
        for qid in ("income", "hours", "gambling"):
            assert MECHS[qid].validate_report(reports[qid]) == reports[qid]
        assert "1234.56" not in json.dumps(sent)  # the true answer never leaves
        outside = tmp_path / "outside.json"
        outside.write_text(json.dumps({"region": "north", "income": 20001, "hours": 1,
                                       "gambling": 1}))
        refused = CliRunner().invoke(cli, ["respond", "--server", fake.url, "--survey",
                                           DATA["id"], "--answers", str(outside), "--state",
                                           str(tmp_path / "state2"), "--yes"])
        assert refused.exit_code != 0 and "outside 0 to 20000" in refused.output
        assert len(sent) == 1
    finally:
        fake.close()
