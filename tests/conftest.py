"""Fixtures for every test: a server app on a fresh database, a token, a published survey.

`db_path` is the database target: a SQLite file, or, in modules that set
`BACKENDS = ("sqlite", "postgresql")`, also a fresh database on a throwaway PostgreSQL server
that the session starts itself. Without PostgreSQL those cases skip with the reason, except
under CI (CI=true), where they fail. The backend "sqlite-process" is a SQLite file whose app
runs ingest in a child process, as `ldpsurvey serve` does (server/store/ingest_process.py).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import core as hypothesis_core
from hypothesis import settings
from ldpsurvey.server.app import create_app
from ldpsurvey.server.auth import create_token
from ldpsurvey.server.http_request import STORE_EXTENSION
from ldpsurvey.server.store import open_store
from support.exploring_seed import exploring_seed
from support.postgres import PgServer, shared_server
from support.server_data import manifest

# Hypothesis: the default run is deterministic (the same examples on every run, chosen from
# each test's name), so CI gives the same verdict every time and a failure can be reproduced by
# running the test again. Open-ended exploration lives in the slow run (`-m slow`, whose
# variants use the "slow" profile): fresh examples from a seed printed in the header and
# beside every failure (a fixed seed under CI, below). print_blob prints
# `@reproduce_failure(...)` for the exact example; deadline=None because a per-example time
# limit fails at random on a loaded machine.
settings.register_profile("default", derandomize=True, print_blob=True, deadline=None,
                          database=None)
settings.register_profile("slow", derandomize=False, print_blob=True, deadline=None,
                          max_examples=1000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def pytest_configure(config: pytest.Config) -> None:
    """Fix the seed of the non-derandomized (slow) tests for this run, so it can be printed."""
    if config.getoption("hypothesis_seed", None) is None and \
            hypothesis_core.global_force_seed is None:
        hypothesis_core.global_force_seed = exploring_seed()


def _seed_note() -> str:
    seed = hypothesis_core.global_force_seed
    return (f"hypothesis profile {settings.get_current_profile_name()!r} (derandomized tests "
            f"draw the same examples every run); exploring tests use seed {seed}: rerun with "
            f"--hypothesis-seed={seed}")


def pytest_report_header(config: pytest.Config) -> str:
    return _seed_note()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.failed and getattr(getattr(item, "obj", None), "is_hypothesis_test", False):
        report.sections.append(("hypothesis", _seed_note()))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    backends = getattr(metafunc.module, "BACKENDS", None)
    marker = metafunc.definition.get_closest_marker("backends")
    if marker is not None:
        backends = marker.args
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
    if backend.startswith("sqlite"):
        yield tmp_path / "server.db"
        return
    server: PgServer = request.getfixturevalue("pg_server")
    url = server.create_database()
    try:
        yield url
    finally:
        server.drop_database(url)


@pytest.fixture()
def app(db_path: Any, backend: str) -> Iterator[Flask]:
    app = create_app({"DATABASE": str(db_path), "MAX_CONTENT_LENGTH": 1 << 20,
                      "MAX_BATCH": 100, "TESTING": True,
                      "INGEST_PROCESS": backend == "sqlite-process"})
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
