"""`respond` reviews before it draws: the answers and the exact chances of what each will be
sent as, a confirmation on the terminal (--yes for scripts), and reports printed only once they
are stored in the outbox. A declined review draws nothing (issue 17: no re-roll on the CLI)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.analyst.cli import cli
from ldpsurvey.client import cli as client_cli
from ldpsurvey.client.respondent import Respondent
from ldpsurvey.client.review import (
    chances,
    question_privacy,
    report_words,
    review_lines,
)
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.wording import epsilon_text, odds_factor, percent_sure
from support.clients import FakeServer, signed, survey_dict

SURVEY = Survey.from_dict(survey_dict())
ANSWERS = {"smoker": False, "mood": "fine", "drinks": 4}


def accepting(method: str, path: str, body: Any) -> tuple[int, Any]:
    return 201, {"accepted": [body["submission_id"]], "duplicates": []}


@pytest.fixture()
def server() -> Iterator[FakeServer]:
    manifest = signed(survey_dict(), Ed25519PrivateKey.generate())
    fake = FakeServer(lambda m, p, b: (200, manifest) if m == "GET" else accepting(m, p, b))
    try:
        yield fake
    finally:
        fake.close()


def respond(server: FakeServer, tmp_path: Path, *extra: str, input: str | None = None) -> Any:
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(ANSWERS))
    return CliRunner().invoke(cli, ["respond", "--server", server.url, "--survey", "checkin",
                                    "--answers", str(answers), "--state",
                                    str(tmp_path / "state"), *extra], input=input)


def test_without_a_terminal_and_without_yes_it_refuses_before_anything(server, tmp_path):
    result = respond(server, tmp_path)  # CliRunner's stdin is not a terminal
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "pass --yes" in lines[0]
    assert server.requests == []  # not even fetched
    assert not (tmp_path / "state").exists()


def test_declining_the_review_draws_records_and_sends_nothing(server, tmp_path, monkeypatch):
    monkeypatch.setattr(client_cli, "stdin_is_terminal", lambda: True)

    def no_draw(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a report was drawn before the respondent confirmed")

    monkeypatch.setattr(Respondent, "answer", no_draw)
    result = respond(server, tmp_path, input="n\n")
    assert result.exit_code == 1
    out = result.output
    assert "nothing has been randomized yet" in out
    assert "Your answer (stays on this device): No" in out  # the page's words
    assert "‘no’ (your real answer) with probability 73.1%, and ‘yes’ with probability 26.9%" \
        in out
    assert "“fine” (your real answer) with probability" in out
    assert "Privacy: anyone who sees what is sent can be at most 2.8 times more sure" in out
    assert "3 or 5 with probability" in out and "below 0 or above 30" in out
    assert "at most 34 times more sure of your real answers" in out  # e^3.5 = 33.1, rounded up
    assert "Randomize and send now?" in out
    assert "Error: not sent: nothing was randomized, recorded or sent" in out
    assert server.posts() == []
    assert not (tmp_path / "state" / "ledger.json").exists()


def test_confirming_draws_once_stores_then_prints_what_was_sent(server, tmp_path, monkeypatch):
    monkeypatch.setattr(client_cli, "stdin_is_terminal", lambda: True)
    result = respond(server, tmp_path, input="y\n")
    assert result.exit_code == 0, result.output
    out = result.output
    assert out.index("Randomize and send now?") < out.index("Randomized and stored")
    [post] = server.posts()
    [receipt] = (tmp_path / "state" / "receipts").iterdir()
    stored = json.loads(receipt.read_text())["body"]
    assert stored == post.body  # what was stored is what was sent
    printed = out[out.index("Randomized and stored"):]
    for q in SURVEY.questions:
        words = report_words(q, mechanism_for(q), stored["answers"][q.id])
        assert f"{q.text} -> {words}" in printed  # and what was printed
    assert "sent submission" in printed


def test_yes_skips_the_review_and_still_prints_only_stored_reports(server, tmp_path):
    result = respond(server, tmp_path, "--yes")
    assert result.exit_code == 0, result.output
    assert "nothing has been randomized yet" not in result.output
    assert "Randomized and stored on this device" in result.output
    assert len(server.posts()) == 1


def test_odds_factor_rounds_up_so_at_most_stays_true():
    assert [odds_factor(e) for e in (0.5, 1, 3.5, 4.5, 5, 10)] == \
        ["1.7", "2.8", "34", "91", "149", "22,100"]
    for i in range(1, 300):
        epsilon = i / 20
        factor, n = float(odds_factor(epsilon).replace(",", "")), math.exp(epsilon)
        slack = 0.1 if n < 10 else 1 if n < 1000 else n / 100  # the last digit shown
        assert n <= factor <= n + slack


def test_epsilon_is_shown_with_three_significant_digits_rounded_up():
    """Issue 32: the page showed `ε = 3.13585`; a person reads three digits, and a bound
    rounded up stays a bound."""
    assert [epsilon_text(e) for e in (3.13585, 1, 0.25, 1.94591, 4.4998095, 33.87, 0.1, 13.2,
                                      9.996, 1234.5, 0.001, 0)] == \
        ["3.14", "1", "0.25", "1.95", "4.5", "33.9", "0.1", "13.2", "10", "1240", "0.001", "0"]
    for i in range(1, 2000):
        epsilon = i / 137
        shown = float(epsilon_text(epsilon))
        assert epsilon <= shown <= epsilon * (1 + 1e-2)  # up, by less than the third digit
        assert len(epsilon_text(epsilon).replace(".", "").lstrip("0")) <= 3


def test_the_odds_are_anchored_in_a_probability_from_fifty_fifty():
    """"at most 91 times more sure" means, from 50%, at most e^ε/(1 + e^ε): rounded up, whole
    below 99%, with the decimals it takes to stay below 100%."""
    assert [percent_sure(e) for e in (0.1, 1, 3.5, 4.5, 5, 7, 10, 20)] == \
        ["53%", "74%", "98%", "99%", "99.4%", "99.91%", "99.996%", None]
    for i in range(1, 400):
        epsilon = i / 40
        text = percent_sure(epsilon)
        exact = 100 / (1 + math.exp(-epsilon))
        if text is None:
            assert exact > 99.9999
            continue
        shown = float(text.rstrip("%"))
        decimals = len(text.rstrip("%").partition(".")[2])
        assert exact <= shown < 100 and shown - exact < 10 ** -decimals
    assert "for example from 50% to at most 74% sure (ε = 1)." in question_privacy(
        SURVEY.question("smoker"))


@pytest.mark.parametrize(("mechanism", "params", "marked"), [
    ("forced_response", {"p_truth": "1/2", "forced": {"never": "1/4", "once": "1/8",
                                                      "often": "1/8"}}, True),
    ("unrelated_question", {"p_truth": "7/10", "prevalence": {"never": "1/2", "once": "3/10",
                                                              "often": "1/5"}}, True),
    ("matrix", {"matrix": [["3/5", "1/5", "1/5"], ["1/5", "3/5", "1/5"],
                           ["1/5", "1/5", "3/5"]]}, False),
])
def test_a_designs_review_marks_the_real_answer_among_its_reports(mechanism, params, marked):
    """Issue 32: a forced-response review listed ‘no’ 12.5%, ‘yes’ 87.5% without saying which
    is the respondent's own answer, as binary_rr's does. Marked once, on the answer's report;
    a matrix report names no answer, so nothing is marked there."""
    survey = Survey.from_dict({"id": "d", "title": "D", "version": 1, "questions": [
        {"id": "q", "text": "Q?", "type": "categorical", "options": ["never", "once", "often"],
         "mechanism": mechanism, "params": params, "epsilon": 3.0}]})
    q = survey.questions[0]
    for answer in q.options:
        text = chances(q, mechanism_for(q), answer)
        assert text.count("(your real answer)") == (1 if marked else 0), text
        if marked:
            assert f"“{answer}” (your real answer) " in text


def test_chances_state_the_mechanisms_exact_probabilities():
    _, mood, drinks = SURVEY.questions
    grr = mechanism_for(mood)
    text = chances(mood, grr, "fine")
    assert f"{100 * float(grr.p_star):.1f}%" in text and f"{100 * float(grr.q_star):.1f}%" in text
    geometric = mechanism_for(drinks)
    r = float(geometric.rate)
    assert f"{100 * math.tanh(r / 2):.1f}%" in chances(drinks, geometric, 4)
    lines = review_lines(SURVEY, {"smoker": True}, {q.id: mechanism_for(q)
                                                    for q in SURVEY.questions})
    assert sum("skipped" in line for line in lines) == 2


def test_an_integer_report_outside_the_range_is_called_expected_noise():
    drinks = SURVEY.question("drinks")
    mechanism = mechanism_for(drinks)
    assert report_words(drinks, mechanism, 7) == "the number 7"
    assert "outside 0 to 30: that is the random noise, as expected" in \
        report_words(drinks, mechanism, -27)
