"""Piped texts in `respond`'s prompts (docs/piping.md): `${drug}` in a question's text, hint
and option labels shows the respondent's own earlier answer, in their language, and "…" for a
question skipped; the request sends no text at all (the substituted value never leaves the
device) and the receipt kept on the device holds the template."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.analyst.cli import cli
from support.clients import FakeServer, serving, signed


def piped() -> dict[str, Any]:
    return {"id": "piped", "title": "Piped", "version": 1, "language": "en", "questions": [
        {"id": "age", "type": "integer", "text": "Age?", "epsilon": 1.0, "min": 18,
         "max": 99, "optional": True},
        {"id": "drug", "type": "categorical", "text": "Which one have you tried?",
         "epsilon": 1.0, "options": ["cannabis", "cocaine"]},
        {"id": "used", "type": "binary", "text": "Have you used ${drug} this month?",
         "hint": "Age ${age}.", "epsilon": 1.0},
        {"id": "how", "type": "categorical", "text": "How (${used})?", "epsilon": 1.0,
         "options": ["smoked ${drug}", "another way"]}],
        "translations": {"es": {"questions": {
            "age": {"text": "¿Edad?"},
            "drug": {"text": "¿Cuál ha probado?", "options": {"cocaine": "cocaína"}},
            "used": {"text": "¿Ha consumido ${drug} este mes?", "hint": "Edad ${age}."},
            "how": {"text": "¿Cómo (${used})?",
                    "options": {"smoked ${drug}": "fumó ${drug}",
                                "another way": "de otra forma"}}}}}}


@pytest.fixture()
def server() -> Iterator[FakeServer]:
    with serving(signed(piped(), Ed25519PrivateKey.generate())) as fake:
        yield fake


def test_the_prompts_show_earlier_answers_and_nothing_of_them_is_sent(
        server: FakeServer, tmp_path: Path) -> None:
    state = tmp_path / "state"
    result = CliRunner().invoke(cli, ["respond", "--server", server.url, "--survey", "piped",
                                      "--state", str(state), "--lang", "es", "--yes"],
                                input="\ncocaína\nsí\n1\n")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "3. ¿Ha consumido cocaína este mes?" in out
    assert "   Edad \u2026." in out  # age skipped: the fallback
    assert "4. ¿Cómo (Sí)?" in out  # yes/no in the respondent's words
    assert "fumó cocaína" in out and "${" not in out[:out.index("4. ")]
    (sent,) = [r for r in server.requests if r.method == "POST"]
    wire = json.dumps(sent.body, ensure_ascii=False)
    for shown in ("cocaína", "fumó", "consumido", "Edad", "${", "\u2026"):
        assert shown not in wire  # the request carries reports, never a text
    assert set(sent.body["answers"]) == {"drug", "used", "how"}
    kept = "".join(p.read_text(errors="replace") for p in state.rglob("*") if p.is_file())
    assert "¿Ha consumido ${drug} este mes?" in kept  # the receipt keeps the template
    assert "¿Ha consumido cocaína" not in kept


def test_the_english_prompts_name_the_option_by_its_label(server: FakeServer,
                                                           tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["respond", "--server", server.url, "--survey", "piped",
                                      "--state", str(tmp_path / "s"), "--lang", "en",
                                      "--dry-run"], input="30\ncannabis\nno\n2\n")
    assert result.exit_code == 0, result.output
    assert "3. Have you used cannabis this month?" in result.output
    # asked, then reviewed: the review shows the piped texts too
    assert result.output.count("3. Have you used cannabis this month?") == 2
    assert result.output.count("4. How (No)?") == 2
    assert "   Age 30." in result.output
    assert "4. How (No)?" in result.output and "smoked cannabis" in result.output
