"""The helper's HTTP API (the leader is its only client; DAP is the model, not the wire).

    GET  /healthz
    GET  /helper/hpke-key                                   the helper's public key
    POST /helper/surveys/<id>/versions/<v>/jobs/<batch>     aggregate one batch
    POST /helper/surveys/<id>/versions/<v>/batches/<batch>/collect
Refusals are typed errors answered as JSON 4xx (server/common/http_errors.py). Started with a
leader token, the helper runs and collects batches only for a caller presenting it (the
leader): server/common/two_server/helper_token.py.
"""

from __future__ import annotations

import re
from typing import Any

from flask import Blueprint, current_app, request
from ldpsurvey.server.common.errors import InvalidParameter
from ldpsurvey.server.common.jsonbody import json_object
from ldpsurvey.server.common.two_server import helper_token
from ldpsurvey.server.common.wire_ints import VERSION_RANGE, param_int
from ldpsurvey.shared.two_server.config import b64url

from . import jobs

HELPER_EXTENSION = "ldpsurvey.helper"
_BATCH_ID = re.compile(r"^[0-9a-f-]{8,64}$")
bp = Blueprint("helper", __name__)


def _helper() -> jobs.Helper:
    return current_app.extensions[HELPER_EXTENSION]


def _batch(batch_id: str) -> str:
    if not _BATCH_ID.match(batch_id):
        raise InvalidParameter("a batch id is 8-64 lowercase hex digits or '-'")
    return batch_id


@bp.get("/healthz")
def healthz() -> dict[str, Any]:
    return {"status": "ok", "role": "helper"}


@bp.get("/helper/hpke-key")
def hpke_key() -> dict[str, Any]:
    return {"hpke_key": b64url(_helper().public_key)}


def _leader_only() -> None:
    expected = current_app.config.get("LEADER_TOKEN_SHA256")
    if expected is not None:
        helper_token.check(expected, request.headers.get("Authorization"))


def _version(text: str) -> int:
    return param_int(text, "version", *VERSION_RANGE)


@bp.post("/helper/surveys/<survey_id>/versions/<version>/jobs/<batch_id>")
def job(survey_id: str, version: str, batch_id: str) -> dict[str, Any]:
    _leader_only()
    return jobs.run_job(_helper(), survey_id, _version(version), _batch(batch_id),
                        json_object(request))


@bp.post("/helper/surveys/<survey_id>/versions/<version>/batches/<batch_id>/collect")
def collect(survey_id: str, version: str, batch_id: str) -> dict[str, Any]:
    _leader_only()
    return jobs.collect(_helper(), survey_id, _version(version), _batch(batch_id),
                        json_object(request))
