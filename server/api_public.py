"""The public API: what respondents' devices call. No authentication, no request metadata kept."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, current_app, request

from . import submissions, surveys
from .common.jsonbody import json_object
from .http_request import current_store, version_param
from .openapi import openapi_document

bp = Blueprint("public", __name__)


@bp.get("/healthz")
def healthz() -> dict[str, Any]:
    current_store().ping()
    return {"status": "ok"}


@bp.get("/api/openapi.json")
def openapi() -> dict[str, Any]:
    return openapi_document()


@bp.get("/api/surveys/<survey_id>")
def get_survey(survey_id: str) -> dict[str, Any]:
    return surveys.public_document(current_store(), survey_id, version_param())


@bp.post("/api/surveys/<survey_id>/invitation")
def post_invitation(survey_id: str) -> dict[str, Any]:
    """What the code in the body carries (docs/sensitive-module.md): the page shows it
    before the questions. In the body, not the URL, so that no access log holds the code."""
    from .invites.carried import carried_values, requested_code

    return {"carries": carried_values(current_store(), survey_id,
                                      requested_code(json_object(request)))}


@bp.post("/api/surveys/<survey_id>/submissions")
def post_submissions(survey_id: str) -> dict[str, Any]:
    body = json_object(request)
    result = submissions.submit(current_store(), survey_id, body,
                                max_batch=current_app.config["MAX_BATCH"])
    return result.to_dict()
