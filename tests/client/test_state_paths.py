"""The state directory by any name: a relative --state or $LDPSURVEY_STATE behaves exactly like
the absolute path, and every file in it is read or the command fails loudly (issue 17)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from ldpsurvey.analyst.cli import cli
from ldpsurvey.client.respondent import Respondent
from ldpsurvey.client.state import STATE_ENV
from ldpsurvey.client.transport import RetryPolicy
from ldpsurvey.shared.survey import Survey
from support.clients import FakeServer, ldpsurvey_exe, survey_dict
from support.timeouts import TEST_TIMEOUT

SURVEY = Survey.from_dict(survey_dict())
ANSWERS = {"smoker": True, "mood": "fine", "drinks": 3}


class Switchable:
    """A server that answers 503 until `up` is set, then accepts every submission."""

    def __init__(self) -> None:
        self.up = False

    def __call__(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        if not self.up:
            return 503, {"error": {"code": "store_unavailable", "message": "down"}}
        return 201, {"accepted": [body["submission_id"]], "duplicates": []}


@pytest.fixture()
def switchable() -> Iterator[tuple[FakeServer, Switchable]]:
    handler = Switchable()
    server = FakeServer(handler)
    yield server, handler
    server.close()


def run(args: list[str], env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, args, env=env)


def state_args(how: str, name: str) -> tuple[list[str], dict[str, str] | None]:
    """CLI arguments and environment naming the state directory `name` the way `how` says."""
    if how == "option":
        return ["--state", name], None
    return [], {STATE_ENV: name}


@pytest.mark.parametrize("how", ["option", "env"])
def test_relative_state_sees_the_outbox_then_the_receipt(
        how: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        switchable: tuple[FakeServer, Switchable]) -> None:
    server, handler = switchable
    monkeypatch.chdir(tmp_path)
    if how == "env":
        monkeypatch.setenv(STATE_ENV, "dev-rel")
    r = Respondent(server.url, state_dir="dev-rel" if how == "option" else None,
                   retry=RetryPolicy(attempts=1), warn=lambda m: None)
    submission = r.answer(SURVEY, ANSWERS)
    assert r.submit(submission).status == "pending"
    assert (tmp_path / "dev-rel" / "outbox" / f"{submission.submission_id}.json").exists()

    args, env = state_args(how, "dev-rel")
    listing = run(["outbox", "list", *args], env)
    assert listing.exit_code == 0, listing.output
    assert "pending" in listing.output and submission.submission_id in listing.output
    assert "unavailable after 1 attempt (HTTP 503)" in listing.output  # not "1 attempts"
    waiting = run(["receipts", *args], env)
    assert "Not delivered" in waiting.output and submission.submission_id in waiting.output

    handler.up = True
    flushed = run(["outbox", "flush", *args], env)
    assert flushed.exit_code == 0, flushed.output
    assert f"sent     checkin  {submission.submission_id}" in flushed.output
    assert [p.body for p in server.posts()][-1] == submission.wire()

    relative = run(["receipts", "--json", *args], env)
    absolute = run(["receipts", "--json", "--state", str(tmp_path / "dev-rel")])
    assert relative.exit_code == absolute.exit_code == 0
    assert json.loads(relative.output) == json.loads(absolute.output)
    [receipt] = json.loads(relative.output)["receipts"]
    assert receipt["submission_id"] == submission.submission_id
    assert json.loads(relative.output)["total_epsilon"] == pytest.approx(SURVEY.total_epsilon)


def test_relative_state_from_another_directory_in_a_subprocess(
        tmp_path: Path, switchable: tuple[FakeServer, Switchable]) -> None:
    # The README's own step: `ldpsurvey receipts --state device-1`, run where device-1 lives.
    server, handler = switchable
    handler.up = True
    r = Respondent(server.url, state_dir=str(tmp_path / "device-1"), warn=lambda m: None)
    submission = r.answer(SURVEY, ANSWERS)
    assert r.submit(submission).status == "sent"
    done = subprocess.run([*ldpsurvey_exe(), "receipts", "--state", "device-1"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=TEST_TIMEOUT,
                          env={**os.environ, "LDPSURVEY_STATE": ""})
    assert done.returncode == 0, done.stderr
    assert submission.submission_id in done.stdout
    assert f"checkin: ε = {SURVEY.total_epsilon:.4g} (v1)" in done.stdout


# --- every read fails loudly ------------------------------------------------------------------


@pytest.fixture()
def device(tmp_path: Path, switchable: tuple[FakeServer, Switchable]) -> Path:
    """A state directory with one receipt and one pending submission."""
    server, handler = switchable
    state = tmp_path / "device"
    r = Respondent(server.url, state_dir=str(state), retry=RetryPolicy(attempts=1),
                   warn=lambda m: None)
    handler.up = True
    assert r.submit(r.answer(SURVEY, ANSWERS)).status == "sent"
    handler.up = False
    other = Survey.from_dict(survey_dict(survey_id="other"))
    assert r.submit(r.answer(other, ANSWERS)).status == "pending"
    return state


def only(folder: Path) -> Path:
    [path] = folder.iterdir()
    return path


# The commands that read each folder's records.
READERS = {"outbox": [["receipts"], ["receipts", "--json"], ["outbox", "list"],
                      ["outbox", "flush", "--attempts", "1"]],
           "receipts": [["receipts"], ["receipts", "--json"]]}


def assert_loud(state: Path, needle: str, folder: str = "outbox") -> None:
    for command in READERS[folder]:
        result = run([*command, "--state", str(state)])
        assert result.exit_code == 1, (command, result.output)
        assert needle in result.output, (command, result.output)
        assert "Traceback" not in result.output
        assert "outbox is empty" not in result.output and "nothing" not in result.output


@pytest.mark.parametrize("folder", ["outbox", "receipts"])
def test_corrupt_record_is_an_error_not_an_empty_list(device: Path, folder: str) -> None:
    damaged = only(device / folder)
    damaged.write_text('{"submission_id": "abc", "status": "pen')
    assert_loud(device, f"{damaged} is not valid JSON", folder)


@pytest.mark.parametrize("folder", ["outbox", "receipts"])
def test_record_missing_fields_is_an_error(device: Path, folder: str) -> None:
    damaged = only(device / folder)
    record = json.loads(damaged.read_text())
    del record["survey_id"]
    damaged.write_text(json.dumps(record))
    assert_loud(device, f"{damaged} is damaged: 'survey_id' is missing", folder)


@pytest.mark.parametrize("folder", ["outbox", "receipts"])
def test_unreadable_record_is_an_error(device: Path, folder: str) -> None:
    # Tests run as root, so chmod 000 would still be readable: a directory in place of the
    # file is unreadable for everyone.
    unreadable = device / folder / "0000-dead.json"
    unreadable.mkdir()
    assert_loud(device, f"cannot read {unreadable}", folder)


def test_folder_replaced_by_a_file_is_an_error(device: Path) -> None:
    (device / "receipts").rename(device / "receipts.bak")
    (device / "receipts").write_text("not a folder")
    assert_loud(device, "receipts is not a directory")


@pytest.mark.parametrize("content", ["[]", '{"answered": {}}', '{"answered": {}, "entries": [1]}',
                                     "{broken"])
def test_damaged_ledger_is_an_error(device: Path, content: str) -> None:
    (device / "ledger.json").write_text(content)
    result = run(["receipts", "--state", str(device)])
    assert result.exit_code == 1 and "ledger.json" in result.output, result.output


def test_ledger_that_is_a_directory_is_an_error(device: Path) -> None:
    (device / "ledger.json").unlink()
    (device / "ledger.json").mkdir()
    result = run(["receipts", "--state", str(device)])
    assert result.exit_code == 1
    assert f"cannot read {device / 'ledger.json'}" in result.output
