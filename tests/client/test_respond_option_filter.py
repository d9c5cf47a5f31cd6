"""Cascading options in `respond`'s prompts (shared/option_filter.py): a categorical question
with a filter lists only the options that go with the earlier answer, numbered from 1, and
reads a number or a label among them only; every option when the earlier question was skipped
or answered "Don't know"; the report is still drawn over the full list."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.analyst.cli import cli
from support.clients import FakeServer, serving, signed

TOWNS = ["Aville", "Btown", "Cburg", "Dham"]


def cascading() -> dict[str, Any]:
    return {"id": "cascade", "title": "Cascade", "version": 1, "questions": [
        {"id": "region", "type": "categorical", "text": "Region?", "epsilon": 1.0,
         "options": ["North", "South"], "optional": True,
         "special": {"dont_know": "Don't know"}},
        {"id": "town", "type": "categorical", "text": "Town?", "epsilon": 1.0,
         "mechanism": "grr", "options": TOWNS,
         "filter": {"by": "region", "values": {"Aville": ["North"], "Btown": ["North"],
                                               "Cburg": ["South"],
                                               "Dham": ["North", "South"]}}}]}


@pytest.fixture()
def server() -> Iterator[FakeServer]:
    with serving(signed(cascading(), Ed25519PrivateKey.generate())) as fake:
        yield fake


def listed(output: str, question: str) -> list[str]:
    """The options printed under question `question` ("2. Town?"), in order."""
    part = output.split(question, 1)[1].split("\n\n", 1)[0]
    return re.findall(r"^\s+\[\d+\] (.+)$", part, flags=re.M)


def respond(server: FakeServer, tmp_path: Any, typed: str) -> Any:
    return CliRunner().invoke(cli, ["respond", "--server", server.url, "--survey", "cascade",
                                    "--state", str(tmp_path / "s"), "--yes"], input=typed)


def test_the_prompt_lists_the_options_of_the_earlier_answer(server: FakeServer,
                                                            tmp_path: Any) -> None:
    result = respond(server, tmp_path, "2\nCburg\n")  # South, then Cburg
    assert result.exit_code == 0, result.output
    assert listed(result.output, "2. Town?") == ["Cburg", "Dham"]
    (sent,) = [r for r in server.requests if r.method == "POST"]
    report = sent.body["answers"]["town"]
    assert isinstance(report, int) and 0 <= report < len(TOWNS)  # grr over all four


def test_a_hidden_option_is_not_an_answer_and_numbers_count_the_shown_ones(
        server: FakeServer, tmp_path: Any) -> None:
    result = respond(server, tmp_path, "North\nCburg\n3\n")
    assert result.exit_code == 0, result.output
    # listed, then listed again after the refusal
    assert listed(result.output, "2. Town?") == ["Aville", "Btown", "Dham"] * 2
    assert "choose 1-3 or type an option exactly" in result.output  # Cburg: not shown


@pytest.mark.parametrize("region", ["\n", "Don't know\n"])
def test_every_option_shows_when_the_earlier_answer_cannot_narrow(
        server: FakeServer, tmp_path: Any, region: str) -> None:
    result = respond(server, tmp_path, region + "Cburg\n")
    assert result.exit_code == 0, result.output
    assert listed(result.output, "2. Town?") == TOWNS


def respond_with(server: FakeServer, tmp_path: Any, answers: dict[str, Any]) -> Any:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(answers), encoding="utf-8")
    return CliRunner().invoke(cli, ["respond", "--server", server.url, "--survey", "cascade",
                                    "--state", str(tmp_path / "s"), "--answers", str(path),
                                    "--yes"])


def test_answers_from_a_file_refuse_an_option_the_earlier_answer_hides(
        server: FakeServer, tmp_path: Any) -> None:
    # the page and the prompts never offer Cburg after North: --answers may not send it either
    result = respond_with(server, tmp_path, {"region": "North", "town": "Cburg"})
    assert result.exit_code != 0
    (line,) = [x for x in result.output.splitlines() if "Cburg" in x]
    assert "'town'" in line and "'region'" in line and "'North'" in line
    assert "'Aville', 'Btown', 'Dham'" in line  # the options it allows, in order
    assert not [r for r in server.requests if r.method == "POST"]  # nothing sent
    state = tmp_path / "s"
    assert not (state / "ledger.json").exists()  # nothing charged
    assert not [p for p in state.rglob("*") if p.is_file()
                and {"outbox", "receipts"} & set(p.relative_to(state).parts)]  # nor stored


@pytest.mark.parametrize("answers", [
    {"region": "North", "town": "Dham"},           # an option that goes with North
    {"town": "Cburg"},                             # region skipped: every option shows
    {"region": "Don't know", "town": "Cburg"}])    # a special value: every option shows
def test_answers_from_a_file_take_every_option_the_page_shows(
        server: FakeServer, tmp_path: Any, answers: dict[str, Any]) -> None:
    result = respond_with(server, tmp_path, answers)
    assert result.exit_code == 0, result.output
    assert len([r for r in server.requests if r.method == "POST"]) == 1
