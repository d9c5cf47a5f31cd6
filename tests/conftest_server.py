"""Fixtures and helpers for the server tests (imported explicitly by tests/test_server_*.py)."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from flask import Flask
from flask.testing import FlaskClient
from ldpsurvey.server.app import create_app
from ldpsurvey.server.auth import create_token
from ldpsurvey.server.db import connect
from ldpsurvey.shared.manifest import sign_survey
from ldpsurvey.shared.mechanisms import Mechanism, mechanism_for
from ldpsurvey.shared.survey import Survey


def survey_dict(survey_id: str = "health", version: int = 1) -> dict[str, Any]:
    """A survey with one question of each kind (binary RR, GRR, geometric), one optional."""
    return {
        "id": survey_id, "title": "Health check", "version": version,
        "questions": [
            {"id": "smoker", "text": "Do you smoke?", "type": "binary", "epsilon": 1.0},
            {"id": "color", "text": "Favourite colour?", "type": "categorical",
             "epsilon": 1.5, "options": ["red", "green", "blue"], "mechanism": "grr"},
            {"id": "age", "text": "Age?", "type": "integer", "epsilon": 2.0,
             "min": 18, "max": 30, "mechanism": "geometric", "optional": True},
        ],
    }


def manifest(data: Mapping[str, Any] | None = None,
             key: Ed25519PrivateKey | None = None) -> dict[str, Any]:
    """A signed manifest body for POST /api/surveys."""
    survey = Survey.from_dict(dict(data or survey_dict()))
    signed = sign_survey(survey, key or Ed25519PrivateKey.generate())
    body = signed.to_dict()
    body.pop("sha256")
    return body


def mechanisms(data: Mapping[str, Any] | None = None) -> dict[str, Mechanism]:
    survey = Survey.from_dict(dict(data or survey_dict()))
    return {q.id: mechanism_for(q) for q in survey.questions}


MECHS = mechanisms()


def submission(answers: Mapping[str, Any] | None = None, sid: str | None = None,
               **extra: Any) -> dict[str, Any]:
    """A submission of reports perturbed on the secure path from true `answers`."""
    truth = dict(answers if answers is not None else
                 {"smoker": True, "color": "green", "age": 25})
    reports = {qid: MECHS[qid].perturb(value) for qid, value in truth.items()}
    return {"submission_id": sid or str(uuid.uuid4()), "answers": reports, **extra}


def snapshot(path: str | Path) -> dict[str, list[tuple]]:
    """Every row of every table, for 'the database is unchanged' assertions."""
    conn = sqlite3.connect(str(path))
    try:
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {t: conn.execute(f'SELECT * FROM "{t}" ORDER BY 1, 2').fetchall()
                for t in tables}
    finally:
        conn.close()


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
