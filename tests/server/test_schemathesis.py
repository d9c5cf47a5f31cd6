"""schemathesis against GET /api/openapi.json: every documented operation, fuzzed from its
schema (valid and invalid inputs), must never answer 5xx and must answer what the document
says (status codes, content types, response schemas).

schemathesis (a test dependency) generates requests from the OpenAPI document itself, so the
document and the server are checked against each other; the hand-written properties in
tests/server/test_hostile_http.py check the database side (nothing stored on refusal).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from ldpsurvey.server.app import create_app
from ldpsurvey.server.auth import create_token
from ldpsurvey.server.db import connect
from schemathesis.specs.openapi.checks import positive_data_acceptance
from support.server_data import manifest, submission

# Left out: `positive_data_acceptance` (a schema-valid request must get 2xx). A JSON schema
# cannot say "signed by this key" or "a report this question's mechanism can produce", so
# schema-valid manifests and submissions are rightly refused with 422. (With it, schemathesis
# also found ?confidence=0.99999999999999999, below 1 in decimal but 1.0 as a float: the
# server answered 500 there until f2b47f8, now 400.)


class Deployed:
    """A server app on a temporary database with an analyst token and one open survey.

    Built at import: schemathesis parametrizes from a schema object, and its lazy
    fixture-based loader does not work with the pytest version used here (9.x)."""

    def __init__(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="ldpsurvey-schemathesis-")
        db_path = Path(self.dir) / "st.db"
        # The production limits (batch size, body cap): the document states the batch limit.
        self.app = create_app({"DATABASE": str(db_path), "TESTING": True})
        db = connect(db_path)
        try:
            self.token = create_token(db, "schemathesis")[1]
        finally:
            db.conn.close()
        client = self.app.test_client()
        auth = {"Authorization": f"Bearer {self.token}"}
        assert client.post("/api/surveys", json=manifest(), headers=auth).status_code == 201
        assert client.post("/api/surveys/health/submissions",
                           json=submission()).status_code == 200


DEPLOYED = Deployed()
schema = schemathesis.openapi.from_wsgi("/api/openapi.json", DEPLOYED.app)


@pytest.fixture(scope="module", autouse=True)
def _remove_database() -> Iterator[None]:
    yield
    shutil.rmtree(DEPLOYED.dir, ignore_errors=True)


@schema.parametrize()
@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_api_conforms_and_never_fails(case: schemathesis.Case) -> None:
    if case.path.endswith("/close"):
        case.path_parameters = {"survey_id": "never-published"}  # keep the survey open
    case.call_and_validate(headers={"Authorization": f"Bearer {DEPLOYED.token}"},
                           excluded_checks=[positive_data_acceptance])
