"""An invite-only two-server survey answered from the respondent page, in real Chromium against
a real leader and helper (tests/support/two_server.py): the upload carries the code beside the
sealed halves (the link's, or one typed in the field); the leader binds it to the upload and
stores the halves without it; a refused code is said in words by its reason (unknown, used),
and the SAME sealed upload is sent with another code (never split again); offline, the queued
upload keeps its code until the leader acknowledges it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.analyst.cli import cli
from ldpsurvey.client.respondent import Respondent
from ldpsurvey.server.invites.claims import digest
from support.clients import http_json
from support.two_server import Pair, signed_survey, start_pair, two_server_survey
from test_invite_page import FRAME, outbox, requests_of

READY = "body[data-state=ready]"
SENT = "body[data-delivery=sent]"
PENDING = "body[data-delivery=pending]"
REFUSED = "body[data-delivery=invite]"


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory, browser: Any) -> Iterator[Pair]:
    started = start_pair(tmp_path_factory.mktemp("invite-pair"))
    yield started
    started.stop()


def invite_only(pair: Pair, sid: str, tmp_path: Path) -> dict[str, tuple[str, str]]:
    """Publish a two-server survey and make it invite-only with a design (`invites create
    --design --links` on the leader's database): unit id -> (code, link)."""
    data = two_server_survey(pair.helper.url, pair.helper_key, pair.leader_key, survey_id=sid,
                             min_batch=5)
    http_json("POST", pair.leader.url + "/api/surveys",
              signed_survey(data, Ed25519PrivateKey.generate()), pair.token)
    frame = tmp_path / f"{sid}-frame.csv"
    frame.write_text(FRAME)
    result = CliRunner().invoke(cli, ["invites", "create", "--db", str(pair.leader.db_path),
                                      "--survey", sid, "--design", str(frame), "--links",
                                      pair.leader.url])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "id,code,link"
    return {uid: (code, link) for uid, code, link in (line.split(",") for line in lines[1:])}


def query(pair: Pair, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    db = sqlite3.connect(pair.leader.db_path)
    try:
        return list(db.execute(sql, args))
    finally:
        db.close()


def uploads(pair: Pair, sid: str) -> list[tuple[str, dict[str, Any]]]:
    """The leader's stored uploads: (report id, body)."""
    return [(rid, json.loads(body)) for rid, body in query(
        pair, "SELECT report_id, body FROM ts_uploads WHERE survey_id = ?", sid)]


def bound(pair: Pair, sid: str) -> dict[str, str]:
    """Code hash -> the upload id it is bound to (used codes only)."""
    return dict(query(pair, "SELECT code_sha256, submission_id FROM invites WHERE survey_id = ? "
                            "AND submission_id IS NOT NULL", sid))


def answer_and_review(page: Any) -> None:
    page.check("#q0-0")  # smoker: Yes
    page.get_by_label("great").check()
    page.locator("#q2-input").fill("5")
    page.get_by_role("button", name="Review what will be sent").click()
    page.wait_for_selector("#review")


def test_a_link_offline_then_online_uploads_the_sealed_halves_with_its_code(
        pair, context, page, tmp_path):
    sid = "web-2s-invite-link"
    code, link = invite_only(pair, sid, tmp_path)["u2"]
    assert http_json("GET", f"{pair.leader.url}/api/surveys/{sid}")["invite_only"] is True
    seen = requests_of(page)
    page.goto(link)
    page.wait_for_selector(READY)
    assert "#" not in page.url
    notice = page.locator("#invite").inner_text()
    assert "You opened this survey from your invitation link" in notice
    assert "splitting your answers between the two organizations protects them" in notice
    assert page.locator("#invite-code").count() == 0
    answer_and_review(page)
    assert page.locator("#invite-review").inner_text() == f"Sent with your invitation code {code}."
    context.set_offline(True)
    page.click("#send")
    page.wait_for_selector(PENDING)
    assert uploads(pair, sid) == []
    [record] = outbox(page)
    assert record["status"] == "pending" and record["invite"] == code
    shown = json.loads(page.locator("pre.wire").text_content())
    context.set_offline(False)  # the browser's "online" event resends the stored upload
    page.wait_for_selector(SENT)

    assert not any(code in request.url for request in seen)
    [post] = [r for r in seen if r.method == "POST" and r.failure is None]
    assert json.loads(post.post_data) == {**shown, "invite": code}
    [(report_id, stored)] = uploads(pair, sid)
    assert stored == shown  # the same sealed halves, and no code among them
    assert bound(pair, sid) == {digest(code): report_id}
    [record] = outbox(page)
    assert record["status"] == "sent" and record["invite"] is None
    assert page.problems == []


def test_typed_codes_refused_by_reason_then_the_same_upload_is_sent(pair, page, tmp_path):
    """No link: the field above the questions. An unknown code, then a code another respondent
    used (the CLI client, first): each said in words with the two-server mode's reassurance,
    nothing stored; a good code sends the very upload sealed at Send."""
    sid = "web-2s-invite-typed"
    codes = invite_only(pair, sid, tmp_path)
    used = codes["u1"][0]
    other = Respondent(pair.leader.url, state_dir=str(tmp_path / "other"), warn=lambda m: None,
                       max_epsilon=1e4)
    assert other.submit(other.answer(other.fetch_survey(sid), {"smoker": False, "mood": "low"},
                                     invite=used)).status == "sent"
    seen = requests_of(page)
    page.goto(f"{pair.leader.url}/s/{sid}")
    page.wait_for_selector(READY)
    assert "splitting your answers between the two organizations" in \
        page.locator("#invite-why").inner_text()
    unknown = "inv_" + "Z" * 22
    page.get_by_label("The code from your invitation (it begins with “inv_”)").fill(unknown)
    answer_and_review(page)
    page.click("#send")
    page.wait_for_selector(REFUSED)
    assert page.locator("h1").inner_text() == "Your invitation code was not accepted"
    alert = page.get_by_role("alert").inner_text()
    assert "The survey server does not know this invitation code" in alert
    assert "exactly as they were split and sealed" in alert and "never split again" in alert
    assert len(uploads(pair, sid)) == 1  # the other respondent's only
    shown = json.loads(page.locator("pre.wire").text_content())

    page.get_by_label("Invitation code").fill(used)
    page.get_by_role("button", name="Send with this code").click()
    page.locator("#invite-refused", has_text="has already been used").wait_for()
    assert len(uploads(pair, sid)) == 1
    page.get_by_label("Invitation code").fill(codes["u3"][0])
    page.get_by_role("button", name="Send with this code").click()
    page.wait_for_selector(SENT)

    bodies = [json.loads(r.post_data) for r in seen if r.method == "POST"]
    assert [b.pop("invite") for b in bodies] == [unknown, used, codes["u3"][0]]
    assert bodies == [shown] * 3  # one sealed upload, sent three times: never split again
    mine = {rid: body for rid, body in uploads(pair, sid)}
    assert [body for body in mine.values() if body == shown] == [shown]
    assert bound(pair, sid)[digest(codes["u3"][0])] in mine
    assert mine[bound(pair, sid)[digest(codes["u3"][0])]] == shown
    assert page.problems == []
