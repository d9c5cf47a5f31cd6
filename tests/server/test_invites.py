"""One-time invitation codes: created by the analyst, stored as hashes, one submission each."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.server.invites import REFUSALS, create, digest
from ldpsurvey.server.store import open_store
from support.server_data import snapshot, sql, submission

pytestmark = pytest.mark.usefixtures("published")
BACKENDS = ("sqlite", "sqlite-process", "postgresql")
URL = "/api/surveys/health/submissions"


def codes(db_path: Path, n: int) -> list[str]:
    store = open_store(db_path)
    try:
        return create(store, "health", n)
    finally:
        store.close()


def post(client: Any, body: Any) -> Any:
    return client.post(URL, json=body)


def test_codes_are_printed_once_and_only_hashes_are_stored(db_path: Path) -> None:
    result = CliRunner().invoke(cli, ["invites", "create", "--db", str(db_path), "--survey",
                                      "health", "--count", "5"])
    assert result.exit_code == 0, result.output
    printed = [line for line in result.stdout.splitlines() if line.startswith("inv_")]
    assert len(printed) == 5 and len(set(printed)) == 5
    dump = repr(snapshot(db_path))
    assert not any(code in dump for code in printed)
    assert all(digest(code) in dump for code in printed)
    listed = CliRunner().invoke(cli, ["invites", "list", "--db", str(db_path), "--survey",
                                      "health"])
    assert "invite-only; 5 code(s) issued, 0 used" in listed.output


def test_unknown_survey_is_a_one_line_error(db_path: Path) -> None:
    result = CliRunner().invoke(cli, ["invites", "create", "--db", str(db_path), "--survey",
                                      "nope", "--count", "2"])
    assert result.exit_code == 1 and "does not exist" in result.output


def test_open_survey_ignores_codes(client: Any) -> None:
    assert post(client, submission()).status_code == 200
    assert post(client, submission(invite="inv_whatever")).status_code == 200


def test_each_code_is_accepted_for_exactly_one_submission(client: Any, db_path: Path) -> None:
    first, second = codes(db_path, 2)
    sub = submission(invite=first)
    assert post(client, sub).get_json() == {"accepted": [sub["submission_id"]],
                                            "duplicates": []}
    # The same submission resent with its code: an idempotent duplicate.
    assert post(client, sub).get_json() == {"accepted": [], "duplicates": [sub["submission_id"]]}
    before = snapshot(db_path)
    for body, reason in ((submission(invite=first), "used"),
                         (submission(invite="inv_" + "A" * 22), "unknown"),
                         (submission(), "missing"),
                         ({**sub, "invite": second}, "other_code")):  # stored, another code
        response = post(client, body)
        assert response.status_code == 403, response.get_json()
        error = response.get_json()["error"]
        assert error["code"] == "invite_refused" and set(error) == {"code", "message", "details"}
        # why, for a device to say in its own words (the page: js/messages/<lang>/invite.js)
        [item] = error["details"]["items"]
        assert item["reason"] == reason and item["message"] == REFUSALS[reason]
        assert item["submission_id"] == body["submission_id"]
        assert snapshot(db_path) == before
    assert post(client, submission(invite=second)).status_code == 200


def test_a_batch_is_all_or_nothing(client: Any, db_path: Path) -> None:
    a, b, c = codes(db_path, 3)
    before = snapshot(db_path)
    # One code used twice in a batch: the whole batch is refused and no code is claimed.
    response = post(client, {"submissions": [submission(invite=a), submission(invite=b),
                                             submission(invite=b)]})
    assert response.status_code == 403
    assert response.get_json()["error"]["details"]["refused"] == 1
    assert snapshot(db_path) == before
    sid = str(uuid.uuid4())
    ok = post(client, {"submissions": [submission(invite=a), submission(sid=sid, invite=b),
                                       submission(sid=sid, invite=b), submission(invite=c)]})
    assert ok.status_code == 200 and len(ok.get_json()["accepted"]) == 3
    assert sql(db_path, "SELECT count(submission_id) FROM invites") == [(3,)]


@pytest.mark.parametrize("invite", [1, None, "", "x" * 65, ["inv_x"], {"a": 1}])
def test_malformed_codes_are_422(client: Any, db_path: Path, invite: Any) -> None:
    codes(db_path, 1)
    before = snapshot(db_path)
    body = submission()
    body["invite"] = invite
    response = post(client, body)
    assert response.status_code in (403, 422)  # None: missing (403); the rest malformed
    assert snapshot(db_path) == before


def test_the_public_survey_document_says_whether_a_code_is_needed_and_nothing_more(
        client: Any, db_path: Path, auth: dict[str, str]) -> None:
    """The page asks for an invitation code when the survey's public document says
    invite_only; the document says nothing else about the codes (how many, how many used)."""
    before = client.get("/api/surveys/health").get_json()
    assert before["invite_only"] is False
    [code] = codes(db_path, 1)
    after = client.get("/api/surveys/health").get_json()
    assert after == {**before, "invite_only": True}
    assert client.get("/api/surveys/health?version=1").get_json()["invite_only"] is True
    assert post(client, submission(invite=code)).status_code == 200
    assert client.get("/api/surveys/health").get_json() == after  # nothing about use
    # a served document can still be published as is (invite_only is not kept)
    again = client.post("/api/surveys", json=after, headers=auth)
    assert again.status_code == 200 and again.get_json() == after
