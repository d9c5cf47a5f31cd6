"""The public API: what respondents' devices call. No authentication, no request metadata kept."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, current_app, request

from . import submissions, surveys
from .context import get_db
from .jsonbody import json_object
from .openapi import openapi_document
from .params import version_param

bp = Blueprint("public", __name__)


@bp.get("/healthz")
def healthz() -> dict[str, Any]:
    get_db().execute("SELECT 1").fetchone()
    return {"status": "ok"}


@bp.get("/api/openapi.json")
def openapi() -> dict[str, Any]:
    return openapi_document()


@bp.get("/api/surveys/<survey_id>")
def get_survey(survey_id: str) -> dict[str, Any]:
    return surveys.get(get_db(), survey_id, version_param()).public()


@bp.post("/api/surveys/<survey_id>/submissions")
def post_submissions(survey_id: str) -> dict[str, Any]:
    body = json_object(request)
    result = submissions.submit(get_db(), survey_id, body,
                                max_batch=current_app.config["MAX_BATCH"])
    return result.to_dict()
