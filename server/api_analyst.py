"""The analyst API: publish, list, estimate, export, close. Every route needs a bearer token
(checked once for the whole blueprint, so no route can forget it)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, request, stream_with_context

from . import aggregation, crosstabs, designs, regression, subgroups, submissions, surveys
from .auth import check_authorization
from .common.jsonbody import json_object
from .http_request import (
    bins_param,
    confidence_param,
    current_store,
    required_param,
    version_param,
)

bp = Blueprint("analyst", __name__)


@bp.before_request
def require_token() -> None:
    check_authorization(current_store(), request.headers.get("Authorization"))


@bp.post("/api/surveys")
def create_survey() -> tuple[dict[str, Any], int]:
    store = current_store()
    record, created = surveys.publish(store, json_object(request))
    return record.public(store.invite_only(record.id)), 201 if created else 200


@bp.get("/api/surveys")
def list_surveys() -> dict[str, Any]:
    return {"surveys": [r.summary() for r in surveys.list_all(current_store())]}


@bp.get("/api/surveys/<survey_id>/estimates")
def estimates(survey_id: str) -> dict[str, Any]:
    confidence = confidence_param()
    return aggregation.estimates(current_store(), survey_id, version_param(), confidence)


@bp.get("/api/surveys/<survey_id>/crosstab")
def crosstab(survey_id: str) -> dict[str, Any]:
    """Joint and conditional estimates of two questions (`rows`, `cols`); `bins` (or
    `row_bins`/`col_bins`) bin integer questions; `source` = auto|declared|reports."""
    rows, cols = required_param("rows"), required_param("cols")
    return crosstabs.crosstab(current_store(), survey_id, version_param(), rows, cols,
                              bins_param("row_bins"), bins_param("col_bins"), confidence_param(),
                              request.args.get("source", "auto"), bins_param("bins"))


@bp.get("/api/surveys/<survey_id>/subgroups")
def subgroup_estimates(survey_id: str) -> dict[str, Any]:
    """Every randomized question's estimates within each subgroup of a disclosed question
    (`by`; `bins` bin an integer one)."""
    return subgroups.subgroups(current_store(), survey_id, version_param(), required_param("by"),
                               confidence_param(), bins_param("bins"))


@bp.get("/api/surveys/<survey_id>/regression")
def regress(survey_id: str) -> dict[str, Any]:
    """Logistic (or linear) regression of `outcome` on `covariates` through the channels."""
    spec = regression.Spec(required_param("outcome"),
                           regression.parse_covariates(request.args.get("covariates")),
                           request.args.get("level"))
    return regression.regression(current_store(), survey_id, version_param(), spec,
                                 confidence_param())


@bp.get("/api/surveys/<survey_id>/submissions.jsonl")
def export(survey_id: str) -> Response:
    version = version_param()
    surveys.get(current_store(), survey_id, version)  # 404 before streaming starts
    lines = submissions.export_lines(current_store(), survey_id, version)
    return Response(stream_with_context(lines), mimetype="application/x-ndjson")


@bp.get("/api/surveys/<survey_id>/designs.jsonl")
def export_designs(survey_id: str) -> Response:
    """The design joined to each submission through its invitation code (docs/weights.md)."""
    surveys.get(current_store(), survey_id)  # 404 before streaming starts
    return Response(designs.design_lines(current_store(), survey_id),
                    mimetype="application/x-ndjson")


@bp.post("/api/surveys/<survey_id>/close")
def close(survey_id: str) -> dict[str, Any]:
    records = surveys.close(current_store(), survey_id)
    return {"id": survey_id, "status": "closed",
            "versions": [r.version for r in records]}
