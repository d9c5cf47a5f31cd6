"""Delivery without loss: state files, the outbox, retries, and a real server down then up."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.analyst.cli import cli
from ldpsurvey.client import state as state_module
from ldpsurvey.client.respondent import Respondent
from ldpsurvey.client.state import atomic_write
from ldpsurvey.client.transport import RetryPolicy
from ldpsurvey.shared.survey import Survey
from support.clients import FakeServer, RealServer, free_port, signed, survey_dict

SURVEY = Survey.from_dict(survey_dict())
ANSWERS = {"smoker": True, "mood": "fine", "drinks": 3}


class Sleeps:
    """An injected sleep that records the delays instead of waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def accepting(method: str, path: str, body: Any) -> tuple[int, Any]:
    return 201, {"accepted": [body["submission_id"]], "duplicates": []}


@pytest.fixture()
def fake() -> Iterator[FakeServer]:
    s = FakeServer(accepting)
    yield s
    s.close()


# --- state files -----------------------------------------------------------------------------


def test_state_files_are_private(fake: FakeServer, tmp_path: Path) -> None:
    state = tmp_path / "state"
    r = Respondent(fake.url, state_dir=str(state), warn=lambda m: None)
    r.submit(r.answer(SURVEY, ANSWERS))
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    files = [p for p in state.rglob("*") if p.is_file() and p.name != ".lock"]
    assert {p.parent.name for p in files} >= {"receipts"}
    assert "ledger.json" in {p.name for p in files}
    for path in [*files, state / ".lock"]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    for folder in ("outbox", "receipts"):
        assert stat.S_IMODE((state / folder).stat().st_mode) == 0o700
    assert not [p for p in state.rglob("*.tmp")]


def test_atomic_write_keeps_the_old_file_when_the_rename_fails(tmp_path: Path,
                                                              monkeypatch: Any) -> None:
    target = tmp_path / "ledger.json"
    atomic_write(target, b"old")

    def broken_replace(src: str, dst: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(state_module.os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        atomic_write(target, b"new")
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["ledger.json"]  # the temp file was removed


def test_atomic_write_fsyncs_file_and_directory(tmp_path: Path, monkeypatch: Any) -> None:
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(state_module.os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    atomic_write(tmp_path / "x.json", b"{}")
    assert len(synced) == 2  # the temp file, then the directory after the rename


def test_damaged_state_file_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "ledger.json").write_text("{not json")
    result = CliRunner().invoke(cli, ["receipts", "--state", str(tmp_path)])
    assert result.exit_code == 1
    assert "ledger.json is not valid JSON" in result.output


# --- the outbox and retries --------------------------------------------------------------------


def test_submission_is_in_the_outbox_before_it_is_sent(tmp_path: Path) -> None:
    seen_in_outbox: list[bool] = []
    state = tmp_path / "state"

    def handler(method: str, path: str, body: Any) -> tuple[int, Any]:
        stored = state / "outbox" / f"{body['submission_id']}.json"
        seen_in_outbox.append(json.loads(stored.read_text())["body"] == body)
        return accepting(method, path, body)

    server = FakeServer(handler)
    try:
        r = Respondent(server.url, state_dir=str(state))
        assert r.submit(r.answer(SURVEY, ANSWERS)).status == "sent"
    finally:
        server.close()
    assert seen_in_outbox == [True]
    assert list((state / "outbox").iterdir()) == []
    assert len(list((state / "receipts").iterdir())) == 1


def test_5xx_is_retried_with_exponential_backoff(tmp_path: Path) -> None:
    answers = iter([(503, {"error": {"code": "busy"}}), (500, {}), None])

    def handler(method: str, path: str, body: Any) -> tuple[int, Any]:
        return next(answers) or accepting(method, path, body)

    server = FakeServer(handler)
    sleeps = Sleeps()
    try:
        r = Respondent(server.url, state_dir=str(tmp_path), sleep=sleeps,
                       retry=RetryPolicy(attempts=5, base_delay=1.0, max_delay=60))
        delivery = r.submit(r.answer(SURVEY, ANSWERS))
        posts = server.posts()
    finally:
        server.close()
    assert delivery.status == "sent"
    assert len(posts) == 3 and posts[0].body == posts[1].body == posts[2].body
    # Delay i is base·2^i scaled by a jitter factor in [0.5, 1].
    assert len(sleeps.delays) == 2
    assert 0.5 <= sleeps.delays[0] <= 1.0 and 1.0 <= sleeps.delays[1] <= 2.0


def test_4xx_is_a_permanent_failure_kept_in_the_outbox(tmp_path: Path) -> None:
    def handler(method: str, path: str, body: Any) -> tuple[int, Any]:
        return 409, {"error": {"code": "closed", "message": "survey checkin is closed",
                               "details": None}}

    server = FakeServer(handler)
    sleeps = Sleeps()
    try:
        r = Respondent(server.url, state_dir=str(tmp_path), sleep=sleeps)
        delivery = r.submit(r.answer(SURVEY, ANSWERS))
        assert len(server.posts()) == 1 and sleeps.delays == []
    finally:
        server.close()
    assert delivery.status == "failed"
    assert "HTTP 409 (closed): survey checkin is closed" in delivery.message
    [record] = r.outbox.all_outbox()
    assert record["status"] == "failed" and record["http_status"] == 409
    assert r.flush() == []  # failed submissions are not retried unless asked


def test_lost_acknowledgement_resends_the_identical_submission(tmp_path: Path) -> None:
    # The server stores the first attempt but the answer is lost (500); the resend carries the
    # same id and the same reports, and the server reports it as a duplicate.
    stored: dict[str, Any] = {}

    def handler(method: str, path: str, body: Any) -> tuple[int, Any]:
        sid = body["submission_id"]
        if sid in stored:
            return 200, {"accepted": [], "duplicates": [sid]}
        stored[sid] = body
        return 500, {"error": {"code": "oops"}}

    server = FakeServer(handler)
    try:
        r = Respondent(server.url, state_dir=str(tmp_path), sleep=Sleeps())
        delivery = r.submit(r.answer(SURVEY, ANSWERS))
        bodies = [p.body for p in server.posts()]
    finally:
        server.close()
    assert delivery.status == "sent" and "already had it" in delivery.message
    assert len(bodies) == 2 and bodies[0] == bodies[1]
    assert len(stored) == 1


def test_unreachable_server_keeps_the_submission_pending_then_flush_sends_it(
        tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    sleeps = Sleeps()
    r = Respondent(url, state_dir=str(tmp_path), sleep=sleeps, retry=RetryPolicy(attempts=3))
    submission = r.answer(SURVEY, ANSWERS)
    delivery = r.submit(submission)
    assert delivery.status == "pending" and "unavailable after 3 attempts" in delivery.message
    assert len(sleeps.delays) == 2
    [record] = r.outbox.pending()
    assert record["body"] == submission.wire()
    server = FakeServer(accepting, port=port)
    try:
        assert [d.status for d in r.flush()] == ["sent"]
        assert [p.body for p in server.posts()] == [submission.wire()]
        assert r.flush() == []
    finally:
        server.close()


# --- a real server, down then up ---------------------------------------------------------------


def test_real_server_down_then_up_every_submission_arrives_exactly_once(tmp_path: Path) -> None:
    server = RealServer(tmp_path / "server.db")
    key = Ed25519PrivateKey.generate()
    state = tmp_path / "state"
    server.start()
    try:
        token = server.token()
        server.publish(survey_dict(version=1), key, token)
        server.publish(survey_dict(version=2), key, token)
        server.publish(survey_dict(survey_id="other"), key, token)
        r = Respondent(server.url, state_dir=str(state), sleep=Sleeps(),
                       retry=RetryPolicy(attempts=2), warn=lambda m: None)
        surveys = [r.fetch_survey("checkin").survey, r.fetch_survey("other").survey]
        v1 = Survey.from_dict(survey_dict(version=1))
        server.stop()
        sent = []
        for survey in [v1, *surveys]:
            submission = r.answer(survey, ANSWERS)
            assert r.submit(submission).status == "pending"
            sent.append(submission)
        listing = CliRunner().invoke(cli, ["outbox", "list", "--state", str(state)])
        assert listing.exit_code == 0 and listing.output.count("pending") == 3
        server.start()
        result = CliRunner().invoke(cli, ["outbox", "flush", "--state", str(state)])
        assert result.exit_code == 0, result.output
        assert result.output.count("sent") == 3
        # A second flush has nothing to do; re-sending a delivered one is a duplicate.
        again = CliRunner().invoke(cli, ["outbox", "flush", "--state", str(state)])
        assert again.output.strip() == "nothing to send"
        receipt = r.outbox.all_receipts()[0]
        assert r.outbox.deliver(receipt, r.transport).message.endswith("already had it)")
        exported = server.export("checkin", token) + server.export("other", token)
    finally:
        server.stop()
    ids = sorted(e["submission_id"] for e in exported)
    assert ids == sorted(s.submission_id for s in sent)
    by_id = {e["submission_id"]: e for e in exported}
    for s in sent:
        assert by_id[s.submission_id]["answers"] == s.reports
        assert by_id[s.submission_id]["version"] == s.version


def test_429_is_retried_not_a_permanent_failure(tmp_path: Path) -> None:
    answers = iter([(429, {"error": {"code": "slow_down"}}), None])

    def handler(method: str, path: str, body: Any) -> tuple[int, Any]:
        return next(answers) or accepting(method, path, body)

    server = FakeServer(handler)
    try:
        r = Respondent(server.url, state_dir=str(tmp_path), sleep=Sleeps())
        assert r.submit(r.answer(SURVEY, ANSWERS)).status == "sent"
        assert len(server.posts()) == 2
    finally:
        server.close()


def test_receipts_show_reports_and_epsilon_never_true_answers(fake: FakeServer,
                                                               tmp_path: Path) -> None:
    state = tmp_path / "state"
    r = Respondent(fake.url, state_dir=str(state))
    submission = r.answer(SURVEY, {"smoker": True, "mood": "great"})
    r.submit(submission)
    result = CliRunner().invoke(cli, ["receipts", "--state", str(state), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    [receipt] = data["receipts"]
    assert receipt["body"] == submission.wire()
    [spend] = data["epsilon_by_survey"]
    assert spend["survey"] == "checkin" and spend["versions"] == [1]
    assert spend["epsilon"] == pytest.approx(2.5)
    assert "great" not in result.output
    text = CliRunner().invoke(cli, ["receipts", "--state", str(state)])
    assert "checkin: ε = 2.5 (v1)" in text.output
    empty = CliRunner().invoke(cli, ["outbox", "list", "--state", str(state)])
    assert empty.output.strip() == "outbox is empty"


def test_state_directory_readable_by_others_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    result = CliRunner().invoke(cli, ["receipts", "--state", str(shared)])
    assert result.exit_code == 1
    assert "accessible by other users (mode 755)" in result.output
    assert stat.S_IMODE(shared.stat().st_mode) == 0o755  # left as it was


def test_crash_between_receipt_and_unlink_is_not_resent(fake: FakeServer, tmp_path: Path) -> None:
    # A crash after the receipt was written but before the outbox file was removed leaves both:
    # the receipt wins, nothing is sent again.
    state = tmp_path / "state"
    r = Respondent(fake.url, state_dir=str(state))
    r.submit(r.answer(SURVEY, ANSWERS))
    [receipt] = (state / "receipts").iterdir()
    record = json.loads(receipt.read_text())
    (state / "outbox" / receipt.name).write_text(json.dumps({**record, "status": "pending"}))
    assert r.outbox.pending() == []
    assert r.flush() == []
    assert len(fake.posts()) == 1


def test_interactive_respond_refuses_an_answered_version_before_asking(tmp_path: Path) -> None:
    key = Ed25519PrivateKey.generate()
    manifest = signed(survey_dict(), key)
    server = FakeServer(lambda m, p, b: (200, manifest) if m == "GET" else accepting(m, p, b))
    try:
        args = ["respond", "--server", server.url, "--survey", "checkin", "--state",
                str(tmp_path / "state"), "--yes"]
        first = CliRunner().invoke(cli, args, input="no\n2\n5\n")
        assert first.exit_code == 0, first.output
        second = CliRunner().invoke(cli, args, input="no\n2\n5\n")
        assert second.exit_code == 1
        assert "already answered survey 'checkin' version 1" in second.output
        assert "Do you smoke?" not in second.output
        assert len(server.posts()) == 1
    finally:
        server.close()
