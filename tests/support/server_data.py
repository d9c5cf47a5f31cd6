"""Helpers for the server tests: a test survey, signed manifests, perturbed submissions."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.shared.manifest import sign_survey
from ldpsurvey.shared.mechanisms import Mechanism, mechanism_for
from ldpsurvey.shared.survey import Survey


def survey_dict(survey_id: str = "health", version: int = 1) -> dict[str, Any]:
    """A survey with one question of each kind (binary RR, GRR, geometric), one optional."""
    return {
        "id": survey_id, "title": "Health check", "version": version,
        "questions": [
            {"id": "smoker", "text": "Do you smoke?", "type": "binary", "epsilon": 1.0,
             "mechanism": "binary_rr"},
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


