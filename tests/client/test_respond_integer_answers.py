"""`respond --answers` holds an integer question's answer to a JSON integer whatever its
mechanism (shared/question_types/integer.py `whole_answer`): 3.0 or "3" for an integer on the
number grid (duchi) was randomized and sent; it is refused in one line naming
questions.<id>, nothing drawn, stored or sent. The prompts read a typed whole number only."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.analyst.cli import cli
from support.clients import FakeServer, serving, signed


@pytest.fixture()
def server() -> Iterator[FakeServer]:
    with serving(signed({"id": "spend", "title": "Spending", "version": 1, "questions": [
        {"id": "spent", "type": "integer", "text": "Dollars spent?", "min": 0, "max": 100,
         "epsilon": 1.0, "mechanism": "duchi"}]}, Ed25519PrivateKey.generate())) as fake:
        yield fake


def respond(server: FakeServer, tmp_path: Any, *args: str, typed: str | None = None) -> Any:
    return CliRunner().invoke(cli, ["respond", "--server", server.url, "--survey", "spend",
                                    "--state", str(tmp_path / "s"), "--yes", *args],
                              input=typed)


@pytest.mark.parametrize("given", [3.0, "3"])
def test_answers_from_a_file_refuse_an_integer_that_is_not_a_json_integer(
        server: FakeServer, tmp_path: Any, given: Any) -> None:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps({"spent": given}), encoding="utf-8")
    result = respond(server, tmp_path, "--answers", str(path))
    assert result.exit_code != 0
    assert result.output.splitlines()[-1] == (
        f"Error: questions.spent: {given!r} is not a whole number: the answer to an integer "
        f'question is a JSON integer (3, not 3.0 or "3")')
    assert not [r for r in server.requests if r.method == "POST"]
    assert not (tmp_path / "s" / "ledger.json").exists()


def test_answers_from_a_file_take_a_json_integer(server: FakeServer, tmp_path: Any) -> None:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps({"spent": 3}), encoding="utf-8")
    result = respond(server, tmp_path, "--answers", str(path))
    assert result.exit_code == 0, result.output
    assert len([r for r in server.requests if r.method == "POST"]) == 1


def test_the_prompt_reads_a_whole_number_only(server: FakeServer, tmp_path: Any) -> None:
    result = respond(server, tmp_path, typed="3.0\n3\n")
    assert result.exit_code == 0, result.output
    assert "'3.0' is not a whole number" in result.output
    assert len([r for r in server.requests if r.method == "POST"]) == 1
