"""A two-server upload is refused once a close or `invites create` of its survey returned, even
when it read the survey's state before (issue 39): the leader reads the version's status again
in the storing transaction, under the lock those two wait for, and the invite-only flag after
it. The upload is docs/two-server.md's worked example (a valid sealed upload)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.server import invites
from ldpsurvey.server.app import create_app
from ldpsurvey.server.auth import create_token
from ldpsurvey.server.store import open_store
from ldpsurvey.shared.two_server.config import b64url
from support.clients import signed
from support.postgres import lock_wait_or_end
from support.server_data import sql

BACKENDS = ("sqlite", "postgresql")
DOCS = Path(__file__).parents[2] / "docs"
EXAMPLE = json.loads((DOCS / "two-server-upload-example.json").read_text())
UPLOADS = "/api/surveys/example/two-server/uploads"


def leader_app(db_path: Any, tmp_path: Path) -> Any:
    key_file = tmp_path / "leader-hpke.key"
    key_file.write_text(b64url(bytes.fromhex(EXAMPLE["leader_private_key"])) + "\n")
    app = create_app({"DATABASE": str(db_path), "HPKE_KEY": str(key_file), "TESTING": True})
    store = open_store(db_path)
    try:
        token = create_token(store, "race")[1]
    finally:
        store.close()
    body = signed(EXAMPLE["survey"], Ed25519PrivateKey.generate())
    body.pop("status")
    assert app.test_client().post("/api/surveys", json=body, headers={
        "Authorization": f"Bearer {token}"}).status_code == 201
    return app


def uploads(db_path: Any) -> int:
    return len(sql(db_path, "SELECT 1 FROM ts_uploads"))


def test_an_upload_that_read_open_before_a_close_is_refused(db_path: Any, tmp_path: Path,
                                                            monkeypatch) -> None:
    """The close commits and returns between the upload's first read of the survey (open) and
    its transaction: 409, nothing stored (main stored it, after the close had returned)."""
    from ldpsurvey.server.two_server import leader

    app = leader_app(db_path, tmp_path)
    real = leader.surveys.get

    def then_closed(store: Any, survey_id: str, version: int | None = None) -> Any:
        record = real(store, survey_id, version)
        other = open_store(db_path)
        try:
            assert other.close_survey(survey_id) == 1
        finally:
            other.close()
        return record

    monkeypatch.setattr(leader.surveys, "get", then_closed)
    response = app.test_client().post(UPLOADS, json=EXAMPLE["body"])
    assert response.status_code == 409, response.get_json()
    assert response.get_json()["error"]["code"] == "survey_closed"
    assert uploads(db_path) == 0


@pytest.mark.backends("postgresql")
def test_invites_create_returns_only_after_an_upload_in_flight_committed(
        db_path: Any, tmp_path: Path, monkeypatch) -> None:
    """An upload has found the survey open to anyone and is paused before it stores (in its
    transaction): `invites create` waits for it, so no code-less upload commits after it
    returned. (SQLite: BEGIN IMMEDIATE serializes them already.)"""
    from ldpsurvey.server.two_server import leader

    app = leader_app(db_path, tmp_path)
    paused, go = threading.Event(), threading.Event()
    real = leader._claim_invite

    def pausing(*args: Any, **kwargs: Any) -> None:
        real(*args, **kwargs)
        paused.set()
        assert go.wait(60)

    monkeypatch.setattr(leader, "_claim_invite", pausing)
    order: list[str] = []
    replies: list[int] = []

    def upload() -> None:
        replies.append(app.test_client().post(UPLOADS, json=EXAMPLE["body"]).status_code)
        order.append("upload stored")

    def make_invite_only() -> None:
        store = open_store(db_path)
        try:
            invites.create(store, "example", 1)
        finally:
            store.close()
        order.append("invites create returned")

    storing = threading.Thread(target=upload)
    storing.start()
    assert paused.wait(60)
    creating = threading.Thread(target=make_invite_only)
    creating.start()
    state = lock_wait_or_end(str(db_path), creating)
    go.set()
    storing.join(60)
    creating.join(60)
    assert state == "waiting", "invites create returned while a code-less upload was still " \
                               "to be stored"
    assert replies == [201] and order == ["upload stored", "invites create returned"]
    assert uploads(db_path) == 1
