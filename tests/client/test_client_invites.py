"""A CLI respondent and one-time invitation codes, against a real `ldpsurvey serve` (and a real
leader and helper for the two-server mode).

Without a code an invite-only survey is refused before anything is randomized or charged. A
code the server refuses (unknown, used) leaves the randomized submission waiting on the device;
`respond --invite CODE` then sends that very body with another code (never drawn again, the
ledger charged once), the server counts the code used, and the device forgets the code.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.analyst.cli import cli
from ldpsurvey.client import Respondent
from ldpsurvey.client.errors import InvitationError
from ldpsurvey.client.invitation import normalized
from ldpsurvey.shared.manifest import fingerprint
from support.clients import FakeServer, RealServer, http_json, signed, survey_dict

TRUE_ANSWERS = {"smoker": True, "mood": "great", "drinks": 17}
WRONG = "inv_" + "Q" * 22  # shaped like a code, issued by no one


@dataclass
class Deployed:
    server: RealServer
    token: str
    key: Ed25519PrivateKey
    answers: Path

    @property
    def trust(self) -> str:
        return fingerprint(self.key.public_key())


@pytest.fixture(scope="module")
def deployed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployed]:
    root = tmp_path_factory.mktemp("invites")
    server = RealServer(root / "server.db")
    server.start()
    try:
        answers = root / "answers.json"
        answers.write_text(json.dumps(TRUE_ANSWERS))
        yield Deployed(server, server.token(), Ed25519PrivateKey.generate(), answers)
    finally:
        server.stop()


def run(*args: Any, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


def invite_only(d: Deployed, survey_id: str, count: int) -> list[str]:
    """Publish a survey and make it invite-only with `count` codes (`invites create`)."""
    d.server.publish(survey_dict(survey_id=survey_id), d.key, d.token)
    created = run("invites", "create", "--db", d.server.db_path, "--survey", survey_id,
                  "--count", count)
    assert created.exit_code == 0, created.output
    codes = created.stdout.split()
    assert len(codes) == count
    return codes


def counts(db: Path, survey_id: str) -> str:
    listed = run("invites", "list", "--db", db, "--survey", survey_id)
    assert listed.exit_code == 0, listed.output
    return listed.stdout.strip()


def respond(d: Deployed, survey_id: str, state: Path, *extra: Any) -> Result:
    return run("respond", "--server", d.server.url, "--survey", survey_id, "--answers",
               d.answers, "--trust", d.trust, "--state", state, "--attempts", 1, "--yes",
               *extra)


def outbox(state: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted((state / "outbox").glob("*.json"))]


def receipts(state: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted((state / "receipts").glob("*.json"))]


def state_text(state: Path) -> str:
    return "\n".join(p.read_text() for p in sorted(state.rglob("*.json")))


def one_line_error(result: Result) -> str:
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith("Error: ")
    return lines[0]


def test_a_wrong_code_then_the_right_one_sends_the_same_randomized_body(
        deployed: Deployed, tmp_path: Path) -> None:
    [code] = invite_only(deployed, "wrong-then-right", 1)
    state = tmp_path / "state"
    refused = respond(deployed, "wrong-then-right", state, "--invite", WRONG)
    # the reports were drawn and printed before the send; the error line says what to do
    error = refused.output.strip().splitlines()[-1]
    assert refused.exit_code == 1 and error.startswith("Error: ")
    assert "does not know this invitation code" in error
    assert ("ldpsurvey respond --server " + deployed.server.url +
            " --survey wrong-then-right --invite CODE") in error
    [waiting] = outbox(state)
    assert waiting["status"] == "invite" and waiting["refused"] == "unknown"
    assert "invite" not in waiting["body"]  # the code is kept beside the body
    ledger = (state / "ledger.json").read_bytes()
    charged = json.loads(ledger)["entries"]
    assert sum(e["epsilon"] for e in charged) == pytest.approx(3.5)
    assert deployed.server.export("wrong-then-right", deployed.token) == []
    assert counts(deployed.server.db_path, "wrong-then-right").endswith(
        "1 code(s) issued, 0 used")

    # flushing (even with --include-failed) does not resend the refused code
    flushed = run("outbox", "flush", "--state", state, "--include-failed", "--attempts", 1)
    assert flushed.exit_code == 0, flushed.output
    assert "--invite CODE" in flushed.output and "nothing else to send" in flushed.output
    assert outbox(state) == [waiting]
    listed = run("outbox", "list", "--state", state)
    assert listed.output.startswith("invite ") and "--invite CODE" in listed.output

    # respond again with the right code: the stored body goes, nothing is drawn or charged
    sent = respond(deployed, "wrong-then-right", state, "--invite", code)
    assert sent.exit_code == 0, sent.output
    assert "nothing is drawn or charged again" in sent.output
    assert f"sent submission {waiting['submission_id']}: delivered" in sent.output
    [stored] = deployed.server.export("wrong-then-right", deployed.token)
    assert stored["submission_id"] == waiting["submission_id"]
    assert json.dumps(stored["answers"], sort_keys=True) == \
        json.dumps(waiting["body"]["answers"], sort_keys=True)
    assert (state / "ledger.json").read_bytes() == ledger  # charged once
    assert counts(deployed.server.db_path, "wrong-then-right").endswith(
        "1 code(s) issued, 1 used")
    assert outbox(state) == []
    [receipt] = receipts(state)
    assert receipt["body"] == waiting["body"] and receipt["invited"] is True
    assert code not in state_text(state) and WRONG not in state_text(state)  # forgotten
    assert "with an invitation code, not kept" in run("receipts", "--state", state).output

    # answered: a third run is refused as before (its ε would be spent twice)
    again = respond(deployed, "wrong-then-right", state, "--invite", code)
    assert "already answered" in one_line_error(again)


def test_no_code_is_refused_before_anything_is_randomized(deployed: Deployed,
                                                          tmp_path: Path) -> None:
    invite_only(deployed, "no-code", 1)
    state = tmp_path / "state"
    error = one_line_error(respond(deployed, "no-code", state))
    assert "takes invited answers only" in error and "--invite CODE" in error
    assert not (state / "ledger.json").exists()
    assert not list(state.rglob("outbox/*.json")) and not list(state.rglob("receipts/*"))
    assert deployed.server.export("no-code", deployed.token) == []
    # a code that cannot be one is refused the same way
    error = one_line_error(respond(deployed, "no-code", state, "--invite", "my code"))
    assert "is not an invitation code" in error
    assert not (state / "ledger.json").exists()
    # the review of a dry run says a code is needed
    dry = respond(deployed, "no-code", state, "--dry-run")
    assert dry.exit_code == 0 and "needs your invitation code (--invite CODE)" in dry.output


def test_a_used_code_waits_for_another(deployed: Deployed, tmp_path: Path) -> None:
    first, second = invite_only(deployed, "used-code", 2)
    assert respond(deployed, "used-code", tmp_path / "a", "--invite", first).exit_code == 0
    late = tmp_path / "b"
    refused = respond(deployed, "used-code", late, "--invite", first)
    assert refused.exit_code == 1
    assert "was already used" in refused.output.strip().splitlines()[-1]
    [waiting] = outbox(late)
    assert waiting["status"] == "invite" and waiting["refused"] == "used"
    ledger = (late / "ledger.json").read_bytes()
    # no code given now: told how to send the stored answers, nothing drawn or sent
    error = one_line_error(respond(deployed, "used-code", late))
    assert "kept on this device as they were randomized" in error
    assert outbox(late) == [waiting]
    # a pasted link's code, its prefix capitalized by a phone, is the code
    pasted = f"https://surveys.example/s/used-code#invite=I{second[1:]}"
    sent = respond(deployed, "used-code", late, "--invite", pasted)
    assert sent.exit_code == 0, sent.output
    stored = {s["submission_id"]: s for s in deployed.server.export("used-code",
                                                                     deployed.token)}
    assert len(stored) == 2
    assert stored[waiting["submission_id"]]["answers"] == waiting["body"]["answers"]
    assert (late / "ledger.json").read_bytes() == ledger
    assert counts(deployed.server.db_path, "used-code").endswith("2 code(s) issued, 2 used")


def test_the_code_is_asked_for_with_the_questions(deployed: Deployed, tmp_path: Path) -> None:
    """Without --answers, respond asks the questions: it asks for the code first (re-asked
    while it cannot be a code; an empty entry refuses before anything is drawn)."""
    [code] = invite_only(deployed, "asked", 1)
    base = ("respond", "--server", deployed.server.url, "--survey", "asked", "--trust",
            deployed.trust, "--attempts", 1, "--yes")
    empty = run(*base, "--state", tmp_path / "empty", input="\n")
    assert empty.exit_code == 1 and "takes invited answers only" in empty.output
    assert not (tmp_path / "empty" / "ledger.json").exists()
    sent = run(*base, "--state", tmp_path / "typed", input=f"not a code\n {code} \nyes\n4\n\n")
    assert sent.exit_code == 0, sent.output
    assert "Invitation code" in sent.output and "not an invitation code" in sent.output
    assert counts(deployed.server.db_path, "asked").endswith("1 code(s) issued, 1 used")


def test_a_refusal_naming_another_code_means_delivered(tmp_path: Path) -> None:
    """other_code: the server holds this very submission id, bound to an earlier code (its
    acknowledgement was lost): the submission was delivered, as the page decides."""
    key = Ed25519PrivateKey.generate()

    def handler(method: str, path: str, body: Any) -> tuple[int, Any]:
        if method == "GET":
            return 200, {**signed(survey_dict(survey_id="lost-ack"), key), "invite_only": True}
        return 403, {"error": {"code": "invite_refused", "message": "refused", "details": {
            "items": [{"index": 0, "submission_id": body["submission_id"],
                       "reason": "other_code", "message": "stored already"}]}}}

    fake = FakeServer(handler)
    try:
        r = Respondent(fake.url, state_dir=str(tmp_path), warn=lambda m: None)
        verified = r.fetch_survey("lost-ack")
        assert verified.invite_only
        with pytest.raises(InvitationError, match="takes invited answers only"):
            r.answer(verified, TRUE_ANSWERS)
        delivery = r.submit(r.answer(verified, TRUE_ANSWERS, invite="inv_abc"))
        assert delivery.status == "sent" and "already had it" in delivery.message
        [post] = fake.posts()
        assert post.body["invite"] == "inv_abc"
        assert "inv_abc" not in state_text(tmp_path)
    finally:
        fake.close()


@pytest.mark.parametrize(("typed", "code"), [
    ("inv_abc", "inv_abc"), ("  Inv_abc\n", "inv_abc"), ("INV_abc", "inv_abc"),
    ("https://x.example/s/a#invite=inv_a%2Bb&x=1", "inv_a+b"), ("inv_", None), ("abc", None),
    ("inv_a b", None), ("inv_" + "a" * 61, None), ("inv_é", None)])
def test_codes_are_read_as_the_page_reads_them(typed: str, code: str | None) -> None:
    assert normalized(typed) == code


def test_a_code_missing_at_send_waits_for_one(deployed: Deployed, tmp_path: Path) -> None:
    """The survey became invite-only after the device fetched it: the server refuses the
    submission as `missing`, and the stored body goes with the code given next."""
    deployed.server.publish(survey_dict(survey_id="became-invited"), deployed.key,
                            deployed.token)
    r = Respondent(deployed.server.url, state_dir=str(tmp_path), trust=deployed.trust)
    verified = r.fetch_survey("became-invited")
    assert not verified.invite_only
    submission = r.answer(verified, TRUE_ANSWERS)
    created = run("invites", "create", "--db", deployed.server.db_path, "--survey",
                  "became-invited", "--count", 1)
    [code] = created.stdout.split()
    delivery = r.submit(submission)
    assert delivery.status == "invite", delivery.message
    assert "takes invited answers only, and no invitation code was sent" in delivery.message
    sent = respond(deployed, "became-invited", tmp_path, "--invite", code)
    assert sent.exit_code == 0, sent.output
    [stored] = deployed.server.export("became-invited", deployed.token)
    assert (stored["submission_id"], stored["answers"]) == (submission.submission_id,
                                                            dict(submission.reports))
    assert counts(deployed.server.db_path, "became-invited").endswith(
        "1 code(s) issued, 1 used")


def test_an_earlier_clients_failed_record_is_sent_with_another_code(
        deployed: Deployed, tmp_path: Path) -> None:
    """A submission an earlier client marked failed on invite_refused (its wrong code inside
    the body) is not locked out: respond --invite sends it with the new code."""
    [code] = invite_only(deployed, "legacy", 1)
    refused = respond(deployed, "legacy", tmp_path, "--invite", WRONG)
    assert refused.exit_code == 1
    [path] = (tmp_path / "outbox").glob("*.json")
    record = json.loads(path.read_text())
    # as the client before this change stored it
    legacy = {k: v for k, v in record.items() if k not in ("invite", "refused")}
    legacy.update(status="failed", body={**record["body"], "invite": WRONG})
    path.write_text(json.dumps(legacy))
    assert "--invite CODE" in run("outbox", "list", "--state", tmp_path).output
    sent = respond(deployed, "legacy", tmp_path, "--invite", code)
    assert sent.exit_code == 0, sent.output
    [stored] = deployed.server.export("legacy", deployed.token)
    assert stored["answers"] == record["body"]["answers"]
    [receipt] = receipts(tmp_path)
    assert "invite" not in receipt["body"] and WRONG not in state_text(tmp_path)
    assert counts(deployed.server.db_path, "legacy").endswith("1 code(s) issued, 1 used")


def test_two_server_a_wrong_code_then_the_right_one(tmp_path: Path) -> None:
    """Two-server mode: the code travels beside the sealed halves; after a refused code the
    SAME sealed upload (never split again) goes to the leader with the right one."""
    from support.two_server import signed_survey, start_pair, two_server_survey

    pair = start_pair(tmp_path / "pair")
    try:
        key = Ed25519PrivateKey.generate()
        data = two_server_survey(pair.helper.url, pair.helper_key, pair.leader_key,
                                 survey_id="pulse-invited")
        http_json("POST", pair.leader.url + "/api/surveys", signed_survey(data, key),
                  pair.token)
        created = run("invites", "create", "--db", pair.leader.db_path, "--survey",
                      "pulse-invited", "--count", 1)
        [code] = created.stdout.split()
        answers = tmp_path / "answers.json"
        answers.write_text(json.dumps({"smoker": True, "mood": "high", "hours": 7}))
        state = tmp_path / "state"
        base = ("respond", "--server", pair.leader.url, "--survey", "pulse-invited",
                "--answers", answers, "--trust", fingerprint(key.public_key()), "--state",
                state, "--attempts", 1, "--yes")
        error = one_line_error(run(*base))  # no code: refused before sharding
        assert "takes invited answers only" in error and not (state / "ledger.json").exists()
        refused = run(*base, "--invite", WRONG)
        assert refused.exit_code == 1
        assert "does not know this invitation code" in refused.output
        [waiting] = outbox(state)
        assert waiting["status"] == "invite" and waiting["path"] == "two-server/uploads"
        assert "invite" not in waiting["body"]
        ledger = (state / "ledger.json").read_bytes()
        sent = run(*base, "--invite", code)
        assert sent.exit_code == 0, sent.output
        with sqlite3.connect(pair.leader.db_path) as db:
            [(report_id, body)] = db.execute("SELECT report_id, body FROM ts_uploads WHERE "
                                             "survey_id = 'pulse-invited'").fetchall()
        assert report_id == waiting["submission_id"]
        stored = json.loads(body)
        assert {k: stored[k] for k in ("public_shares", "leader_share", "helper_share")} == \
            {k: waiting["body"][k] for k in ("public_shares", "leader_share", "helper_share")}
        assert (state / "ledger.json").read_bytes() == ledger
        assert counts(pair.leader.db_path, "pulse-invited").endswith("1 code(s) issued, 1 used")
        assert code not in state_text(state)
    finally:
        pair.stop()
