"""Fixtures for every test: a server app on a fresh database, a token, a published survey.

`db_path` is the database target: a SQLite file, or, in modules that set
`BACKENDS = ("sqlite", "postgresql")`, also a fresh database on a throwaway PostgreSQL server
that the session starts itself. Without PostgreSQL those cases skip with the reason, except
under CI (CI=true), where they fail.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from ldpsurvey.server.app import create_app
from ldpsurvey.server.auth import create_token
from ldpsurvey.server.http_request import STORE_EXTENSION
from ldpsurvey.server.store import open_store
from support.postgres import PgServer, shared_server
from support.server_data import manifest


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    backends = getattr(metafunc.module, "BACKENDS", None)
    if backends and "backend" in metafunc.fixturenames:
        metafunc.parametrize("backend", backends, indirect=True)


@pytest.fixture(scope="session")
def pg_server() -> PgServer:
    """The session's throwaway PostgreSQL server (started on first use)."""
    return shared_server()


@pytest.fixture()
def backend(request: pytest.FixtureRequest) -> str:
    return getattr(request, "param", "sqlite")


@pytest.fixture()
def db_path(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A SQLite path, or a PostgreSQL URL of a fresh database (dropped afterwards)."""
    if backend == "sqlite":
        yield tmp_path / "server.db"
        return
    server: PgServer = request.getfixturevalue("pg_server")
    url = server.create_database()
    try:
        yield url
    finally:
        server.drop_database(url)


@pytest.fixture()
def app(db_path: Any) -> Iterator[Flask]:
    app = create_app({"DATABASE": str(db_path), "MAX_CONTENT_LENGTH": 1 << 20,
                      "MAX_BATCH": 100, "TESTING": True})
    yield app
    app.extensions[STORE_EXTENSION].close()


@pytest.fixture()
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture()
def token(db_path: Any, app: Flask) -> str:
    store = open_store(db_path)
    try:
        return create_token(store, "test")[1]
    finally:
        store.close()


@pytest.fixture()
def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture()
def published(client: FlaskClient, auth: dict[str, str]) -> Iterator[dict[str, Any]]:
    body = manifest()
    response = client.post("/api/surveys", json=body, headers=auth)
    assert response.status_code == 201, response.get_json()
    yield response.get_json()
