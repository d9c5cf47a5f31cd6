"""One-time invitation codes: created by the analyst, stored as hashes, one submission each."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.server.invites import create
from ldpsurvey.server.invites.claims import REFUSALS, digest
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


def test_links_carry_each_code_in_the_fragment_of_the_surveys_page(db_path: Path) -> None:
    """`--links`: ready-to-send links, the code in the URL fragment (which a browser never
    sends to the server with the page request), in CSV beside the code."""
    result = CliRunner().invoke(cli, ["invites", "create", "--db", str(db_path), "--survey",
                                      "health", "--count", "3", "--links",
                                      "https://survey.example.org/"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "code,link" and len(lines) == 4
    for line in lines[1:]:
        code, link = line.split(",")
        assert link == f"https://survey.example.org/s/health#invite={code}"
        assert digest(code) in repr(snapshot(db_path))
    # the page's address as respondents open it: the aggregator's, or an exported page's
    for url, page in (("https://survey.example.org/s/health", "https://survey.example.org/s/health"),
                      ("https://org.example/wave-3/index.html?lang=es",
                       "https://org.example/wave-3/index.html?lang=es"),
                      ("http://127.0.0.1:8000", "http://127.0.0.1:8000/s/health")):
        one = CliRunner().invoke(cli, ["invites", "create", "--db", str(db_path), "--survey",
                                       "health", "--count", "1", "--links", url])
        assert one.exit_code == 0, one.output
        code, link = one.stdout.splitlines()[1].split(",")
        assert link == f"{page}#invite={code}"
        assert "warning" not in one.stderr


def test_links_of_a_design_frame_and_a_plain_http_warning(db_path: Path, tmp_path: Path) -> None:
    frame = tmp_path / "frame.csv"
    frame.write_text("id,weight\nu1,2\nu2,3\n")
    result = CliRunner().invoke(cli, ["invites", "create", "--db", str(db_path), "--survey",
                                      "health", "--design", str(frame), "--links",
                                      "http://survey.example.org"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "id,code,link"
    assert [line.split(",")[0] for line in lines[1:]] == ["u1", "u2"]
    for line in lines[1:]:
        _, code, link = line.split(",")
        assert link == f"http://survey.example.org/s/health#invite={code}"
    assert "warning: http://survey.example.org/s/health is http://" in result.stderr


@pytest.mark.parametrize(("url", "words"), [
    ("ftp://survey.example.org", "not an http(s) address"),
    ("survey.example.org", "not an http(s) address"),
    ("https://survey.example.org/s/health#invite=x", "has a fragment"),
    ("https://survey.example.org/s/other", "the page of survey 'other', not 'health'"),
])
def test_a_bad_links_address_is_a_usage_error_and_makes_no_code(db_path: Path, url: str,
                                                           words: str) -> None:
    before = snapshot(db_path)
    result = CliRunner().invoke(cli, ["invites", "create", "--db", str(db_path), "--survey",
                                      "health", "--count", "2", "--links", url])
    assert result.exit_code == 2 and words in result.output, result.output
    assert "inv_" not in result.output
    assert snapshot(db_path) == before
