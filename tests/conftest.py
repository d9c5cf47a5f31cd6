"""Fixtures for every test: a server app on a fresh SQLite file, a token, a published survey."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from ldpsurvey.server.app import create_app
from ldpsurvey.server.auth import create_token
from ldpsurvey.server.db import connect
from support.server_data import manifest


@pytest.fixture()
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "server.db"


@pytest.fixture()
def app(db_path: Path) -> Flask:
    return create_app({"DATABASE": str(db_path), "MAX_CONTENT_LENGTH": 1 << 20,
                       "MAX_BATCH": 100, "TESTING": True})


@pytest.fixture()
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture()
def token(db_path: Path, app: Flask) -> str:
    db = connect(db_path)
    try:
        return create_token(db, "test")[1]
    finally:
        db.conn.close()


@pytest.fixture()
def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture()
def published(client: FlaskClient, auth: dict[str, str]) -> Iterator[dict[str, Any]]:
    body = manifest()
    response = client.post("/api/surveys", json=body, headers=auth)
    assert response.status_code == 201, response.get_json()
    yield response.get_json()
