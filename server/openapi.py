"""The OpenAPI 3 description of the HTTP API, served at GET /api/openapi.json.

Kept beside the blueprints and tested against them: every route in the app is documented, and
every documented operation lists the error statuses it can return.
"""

from __future__ import annotations

import copy
from typing import Any

from ldpsurvey.shared.survey import MAX_VERSION, QUESTION_ID
from ldpsurvey.shared.two_server.upload import MAX_SEALED

from .submissions import MAX_BATCH


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"application/json": {"schema": schema}}


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": _json(_ref("Error"))}


def _errors(*statuses: int) -> dict[str, Any]:
    text = {400: "Malformed JSON or an invalid query parameter",
            401: "Missing or malformed bearer token",
            403: "Unknown or revoked token",
            404: "No such survey (or version)",
            409: "Conflict with stored state (closed survey, other content for this version)",
            413: "Body larger than the configured limit",
            415: "Body is not application/json",
            422: "Well-formed JSON with invalid content",
            502: "The two-server helper refused (its message is passed on)",
            503: "The store is unreachable or stayed contended after retries: retry later"}
    # Every endpoint that reads or writes the store can answer 503 (store_unavailable).
    return {str(s): _error(text[s]) for s in (*statuses, 503)}


_SURVEY_ID = {"name": "survey_id", "in": "path", "required": True,
              "schema": {"type": "string"}}
_VERSION = {"name": "version", "in": "query", "required": False,
            "description": "Survey version; the latest when omitted.",
            "schema": {"type": "integer", "minimum": 1, "maximum": MAX_VERSION}}
_CONFIDENCE = {"name": "confidence", "in": "query", "required": False,
               "schema": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1,
                          "default": 0.95}}
_BEARER = [{"bearer": []}]


def _query(name: str, description: str, required: bool = False) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": required, "description": description,
            "schema": {"type": "string"}}


_CELL = {"type": "object", "required": ["estimate", "std_error", "ci_low", "ci_high",
                                         "too_noisy"],
         "properties": {"estimate": {"type": ["number", "null"]},
                        "std_error": {"type": ["number", "null"]},
                        "ci_low": {"type": ["number", "null"]},
                        "ci_high": {"type": ["number", "null"]},
                        "variance_bound": {"type": ["number", "null"]},
                        "std_error_method": {
                            "type": ["string", "null"], "enum": ["sample", "floor", None],
                            "description": "sample: the sample variance of the per-submission "
                                           "values; floor: the exact variance at the estimate "
                                           "projected to the simplex, which was larger"},
                        "too_noisy": {"type": "boolean",
                                      "description": "the interval is wider than the range "
                                                     "of the number, or a ratio's "
                                                     "denominator includes 0"}}}
_GRID = {"type": "array", "items": {"type": "array", "items": _CELL}}
_AXIS = {"type": "object", "required": ["question", "mechanism", "cells"],
         "properties": {"question": {"type": "string"}, "mechanism": {"type": "string"},
                        "cells": {"type": "array"},
                        "group": {"type": "string",
                                  "description": "the side is this declared group of the "
                                                 "question against the rest"}}}
_AUTH = (401, 403)

_SCHEMAS: dict[str, Any] = {
    "Error": {
        "type": "object", "required": ["error"],
        "properties": {"error": {
            "type": "object", "required": ["code", "message", "details"],
            "properties": {"code": {"type": "string"}, "message": {"type": "string"},
                           "details": {}}}}},
    "Manifest": {
        "type": "object", "required": ["survey", "signature", "public_key"],
        "description": "A signed survey manifest: the canonical survey dict, an Ed25519 "
                       "signature over its canonical bytes, and the raw public key (base64).",
        "properties": {"survey": {"type": "object",
                                  "required": ["id", "title", "version", "questions"]},
                       "signature": {"type": "string", "minLength": 1},
                       "public_key": {"type": "string", "minLength": 1},
                       "sha256": {"type": "string"},
                       "status": {"type": "string"},
                       "invite_only": {"type": "boolean"},
                       "invite_carries": {"type": "array", "items": {"type": "string"}},
                       "signed_bytes": {"type": "string"}}},
    "SurveyDocument": {
        "type": "object",
        "required": ["survey", "signature", "public_key", "sha256", "status", "invite_only",
                     "signed_bytes"],
        "properties": {"survey": {"type": "object"}, "signature": {"type": "string"},
                       "public_key": {"type": "string"}, "sha256": {"type": "string"},
                       "status": {"type": "string", "enum": ["open", "closed"]},
                       "invite_only": {
                           "type": "boolean",
                           "description": "The survey takes only submissions (or uploads) "
                                          "with a one-time invitation code (`ldpsurvey "
                                          "invites create`): the page asks for one. Set by "
                                          "the operator, not signed; nothing else about the "
                                          "codes is served."},
                       "invite_carries": {
                           "type": "array", "items": {"type": "string"},
                           "description": "Only for a survey whose codes carry disclosed "
                                          "covariates (`invites create --from-export "
                                          "--carry`): their names. The page then asks "
                                          "POST .../invitation what its code carries and "
                                          "shows it before the questions."},
                       "signed_bytes": {
                           "type": "string", "contentEncoding": "base64",
                           "description": "The exact bytes the signature covers (the "
                                          "canonical survey JSON), base64: what a browser "
                                          "verifies and parses."}}},
    "Crosstab": {
        "type": "object",
        "required": ["survey", "version", "rows", "cols", "n", "confidence", "source", "joint",
                     "row_shares", "col_shares", "col_given_row", "row_given_col", "notes"],
        "properties": {"survey": {"type": "string"}, "version": {"type": "integer"},
                       "rows": _AXIS, "cols": _AXIS, "n": {"type": "integer"},
                       "confidence": {"type": "number"},
                       "source": {"type": "string", "enum": ["declared", "reports"]},
                       "joint": _GRID, "col_given_row": _GRID, "row_given_col": _GRID,
                       "row_shares": {"type": "array", "items": _CELL},
                       "col_shares": {"type": "array", "items": _CELL},
                       "cols_mean_given_row": {"type": "array", "items": _CELL},
                       "rows_mean_given_col": {"type": "array", "items": _CELL},
                       "quantiles_given_category": {
                           "type": "object",
                           "description": "A number answered by square_wave (alone or in "
                                          "the mean-and-distribution pair) against a whole "
                                          "question with one report index: the number's "
                                          "quartiles among each category, by EM over both "
                                          "channels, with bootstrap intervals (method "
                                          "joint_ems); any other number read by its mean: "
                                          "method none, each category's quartiles empty and "
                                          "its note saying why (docs/crosstabs.md)."},
                       "notes": {"type": "array", "items": {"type": "string"}}}},
    "SurveySummary": {
        "type": "object",
        "required": ["id", "version", "title", "sha256", "status", "created_hour",
                     "n_submissions", "last_submission_hour"],
        "properties": {"id": {"type": "string"}, "version": {"type": "integer"},
                       "title": {"type": "string"}, "sha256": {"type": "string"},
                       "status": {"type": "string", "enum": ["open", "closed"]},
                       "created_hour": {"type": "string"},
                       "n_submissions": {"type": "integer"},
                       "last_submission_hour": {"type": ["string", "null"]}}},
    "Submission": {
        "type": "object", "required": ["submission_id", "answers"],
        "additionalProperties": False,
        "properties": {"submission_id": {"type": "string", "format": "uuid"},
                       "version": {"type": "integer", "minimum": 1},
                       "invite": {"type": "string", "minLength": 1, "maxLength": 64,
                                  "description": "one-time invitation code (invite-only "
                                                 "surveys; ignored otherwise)"},
                       "answers": {"type": "object", "minProperties": 1,
                                   "description": "question id -> perturbed report",
                                   "propertyNames": {"pattern": QUESTION_ID.pattern},
                                   "additionalProperties": {}}}},
    "SubmissionBatch": {
        "type": "object", "required": ["submissions"], "additionalProperties": False,
        "properties": {"submissions": {"type": "array", "minItems": 1, "maxItems": MAX_BATCH,
                                       "items": _ref("Submission")}}},
    "SubmissionResult": {
        "type": "object", "required": ["accepted", "duplicates"],
        "properties": {"accepted": {"type": "array", "items": {"type": "string"}},
                       "duplicates": {"type": "array", "items": {"type": "string"}}}},
    "InviteRefused": {
        "type": "object", "required": ["error"],
        "description": "403 invite_refused: an invitation code missing, unknown or already "
                       "used; nothing was stored. Each refused item says why in `reason` (for "
                       "a device's own words) and in English in `message`.",
        "properties": {"error": {
            "type": "object", "required": ["code", "message", "details"],
            "properties": {
                "code": {"type": "string", "enum": ["invite_refused"]},
                "message": {"type": "string"},
                "details": {"type": "object", "required": ["refused", "total", "items"],
                            "properties": {
                                "refused": {"type": "integer"}, "total": {"type": "integer"},
                                "items": {"type": "array", "items": {
                                    "type": "object",
                                    "required": ["index", "submission_id", "reason",
                                                 "message"],
                                    "properties": {
                                        "index": {"type": "integer"},
                                        "submission_id": {"type": ["string", "null"]},
                                        "reason": {"type": "string", "enum": [
                                            "missing", "unknown", "used", "other_code"]},
                                        "message": {"type": "string"}}}}}}}}}},
    "Estimates": {
        "type": "object",
        "required": ["survey", "version", "sha256", "confidence", "n_submissions",
                     "last_submission_hour", "questions"],
        "properties": {"survey": {"type": "string"}, "version": {"type": "integer"},
                       "sha256": {"type": "string"}, "confidence": {"type": "number"},
                       "n_submissions": {"type": "integer"},
                       "last_submission_hour": {"type": ["string", "null"]},
                       "questions": {"type": "array", "items": {"type": "object"}}}},
}

_INVITE_REFUSED = {"description": "An invite-only survey: the invitation code is missing, "
                                   "unknown or already used (nothing stored)",
                    "content": _json(_ref("InviteRefused"))}

_PATHS: dict[str, Any] = {
    "/healthz": {"get": {
        "operationId": "healthz", "summary": "Liveness: the database answers.",
        "responses": {"200": {"description": "OK", "content": _json({
            "type": "object", "required": ["status"],
            "properties": {"status": {"type": "string", "enum": ["ok"]}}})}}}},
    "/api/openapi.json": {"get": {
        "operationId": "openapi", "summary": "This document.",
        "responses": {"200": {"description": "OpenAPI 3 document",
                              "content": _json({"type": "object"})}}}},
    "/api/surveys": {
        "get": {
            "operationId": "listSurveys", "summary": "Every stored survey version.",
            "security": _BEARER,
            "responses": {"200": {"description": "Surveys", "content": _json({
                "type": "object", "required": ["surveys"],
                "properties": {"surveys": {"type": "array",
                                           "items": _ref("SurveySummary")}}})},
                          **_errors(*_AUTH)}},
        "post": {
            "operationId": "createSurvey",
            "summary": "Store a signed survey manifest (verified first).",
            "security": _BEARER,
            "requestBody": {"required": True, "content": _json(_ref("Manifest"))},
            "responses": {
                "200": {"description": "Identical version already stored",
                        "content": _json(_ref("SurveyDocument"))},
                "201": {"description": "Stored", "content": _json(_ref("SurveyDocument"))},
                **_errors(400, *_AUTH, 409, 413, 415, 422)}}},
    "/api/surveys/{survey_id}": {"get": {
        "operationId": "getSurvey", "summary": "A survey's signed manifest, hash and status.",
        "parameters": [_SURVEY_ID, _VERSION],
        "responses": {"200": {"description": "The survey",
                              "content": _json(_ref("SurveyDocument"))},
                      **_errors(400, 404)}}},
    "/api/surveys/{survey_id}/submissions": {"post": {
        "operationId": "submit",
        "summary": "One submission or a batch of perturbed reports; all-or-nothing.",
        "parameters": [_SURVEY_ID],
        "requestBody": {"required": True, "content": _json(
            {"oneOf": [_ref("Submission"), _ref("SubmissionBatch")]})},
        "responses": {"200": {"description": "Accepted and duplicate submission ids",
                              "content": _json(_ref("SubmissionResult"))},
                      **_errors(400, 404, 409, 413, 415, 422), "403": _INVITE_REFUSED}}},
    "/api/surveys/{survey_id}/invitation": {"post": {
        "operationId": "invitation",
        "summary": "What an invitation code carries (docs/sensitive-module.md): the disclosed "
                   "covariates the server links to the submission made with it, which the "
                   "page shows before the questions. The code travels in the body, not the "
                   "URL, so that it is in no access log.",
        "parameters": [_SURVEY_ID],
        "requestBody": {"required": True, "content": _json({
            "type": "object", "required": ["invite"], "additionalProperties": False,
            "properties": {"invite": {"type": "string", "minLength": 1, "maxLength": 64}}})},
        "responses": {"200": {"description": "The carried values ({} for none)",
                              "content": _json({
                                  "type": "object", "required": ["carries"],
                                  "properties": {"carries": {
                                      "type": "object",
                                      "additionalProperties": {"type": "string"}}}})},
                      **_errors(400, 404, 413, 415, 422)}}},
    "/api/surveys/{survey_id}/estimates": {"get": {
        "operationId": "estimates", "summary": "Estimates from the stored aggregates.",
        "security": _BEARER,
        "parameters": [_SURVEY_ID, _VERSION, _CONFIDENCE],
        "responses": {"200": {"description": "Estimate document",
                              "content": _json(_ref("Estimates"))},
                      **_errors(400, *_AUTH, 404, 409)}}},
    "/api/surveys/{survey_id}/crosstab": {"get": {
        "operationId": "crosstab",
        "summary": "Joint and conditional estimates of two questions (docs/crosstabs.md).",
        "security": _BEARER,
        "parameters": [_SURVEY_ID, _VERSION, _CONFIDENCE,
                       _query("rows", "Question id of the rows, or question:group for one of "
                              "its declared groups against the rest.", required=True),
                       _query("cols", "Question id of the columns, or question:group.",
                              required=True),
                       _query("bins", "Bin edges, e.g. 0,5,10, for the integer question(s); "
                              "refused (422) when neither question is an integer one."),
                       _query("row_bins", "Bin edges for an integer row question."),
                       _query("col_bins", "Bin edges for an integer column question."),
                       {"name": "source", "in": "query", "required": False,
                        "description": "declared: the survey's declared crosstab aggregate; "
                                       "reports: one pass over the stored reports; auto: "
                                       "declared when it matches, else reports.",
                        "schema": {"type": "string", "enum": ["auto", "declared", "reports"],
                                   "default": "auto"}}],
        "responses": {"200": {"description": "Crosstab document",
                              "content": _json(_ref("Crosstab"))},
                      **_errors(400, *_AUTH, 404, 409, 422)}}},
    "/api/surveys/{survey_id}/submissions.jsonl": {"get": {
        "operationId": "exportSubmissions",
        "summary": "Stored perturbed reports, one JSON object per line.",
        "security": _BEARER,
        "parameters": [_SURVEY_ID, _VERSION],
        "responses": {"200": {"description": "JSON lines",
                              "content": {"application/x-ndjson": {
                                  "schema": {"type": "string"}}}},
                      **_errors(400, *_AUTH, 404)}}},
    "/api/surveys/{survey_id}/designs.jsonl": {"get": {
        "operationId": "exportDesigns",
        "summary": "The sampling design of each invitation code that carries one (`invites "
                   "create --design`; docs/weights.md): one JSON object per line with the "
                   "submission_id it admitted (null: not used yet), weight, stratum, psu, fpc "
                   "and group (null where the frame had no such column). Empty for other "
                   "surveys.",
        "security": _BEARER,
        "parameters": [_SURVEY_ID],
        "responses": {"200": {"description": "JSON lines",
                              "content": {"application/x-ndjson": {
                                  "schema": {"type": "string"}}}},
                      **_errors(*_AUTH, 404)}}},
    "/api/surveys/{survey_id}/close": {"post": {
        "operationId": "closeSurvey", "summary": "Refuse further submissions (all versions).",
        "security": _BEARER,
        "parameters": [_SURVEY_ID],
        "responses": {"200": {"description": "Closed", "content": _json({
            "type": "object", "required": ["id", "status", "versions"],
            "properties": {"id": {"type": "string"},
                           "status": {"type": "string", "enum": ["closed"]},
                           "versions": {"type": "array", "items": {"type": "integer"}}}})},
                      **_errors(*_AUTH, 404)}}},
}

_PATHS["/api/surveys/{survey_id}/subgroups"] = {"get": {
    "operationId": "subgroups",
    "summary": "Every randomized question's estimates within each subgroup of a disclosed "
               "question (docs/disclosed.md).",
    "security": _BEARER,
    "parameters": [_SURVEY_ID, _VERSION, _CONFIDENCE,
                   _query("by", "Id of a disclosed question (yes/no, categorical, ordinal, or "
                          "integer: binned).", required=True),
                   _query("bins", "Bin edges, e.g. 30,50, for an integer `by` question "
                          "(default: one bin per value up to 10 values, else four).")],
    "responses": {"200": {"description": "Subgroup document", "content": _json({
        "type": "object", "required": ["survey", "version", "by", "subgroups"],
        "properties": {"survey": {"type": "string"}, "version": {"type": "integer"},
                       "by": {"type": "string"},
                       "subgroups": {"type": "array", "items": {"type": "object"}}}})},
                  **_errors(400, *_AUTH, 404, 409, 422)}}}

_PATHS["/api/surveys/{survey_id}/regression"] = {"get": {
    "operationId": "regression",
    "summary": "Logistic regression of a randomized yes/no or categorical outcome (linear for "
               "an integer one) on covariates, through the known channels (docs/regression.md).",
    "security": _BEARER,
    "parameters": [_SURVEY_ID, _VERSION, _CONFIDENCE,
                   _query("outcome", "Id of the outcome question.", required=True),
                   _query("covariates", "Comma-separated covariate question ids."),
                   _query("level", "The option of a categorical outcome modelled against the "
                                   "rest.")],
    "responses": {"200": {"description": "Regression document", "content": _json({
        "type": "object", "required": ["survey", "version", "kind", "coefficients"],
        "properties": {"survey": {"type": "string"}, "version": {"type": "integer"},
                       "kind": {"type": "string", "enum": ["logistic", "linear"]},
                       "coefficients": {"type": "array", "items": {"type": "object"}}}})},
                  **_errors(400, *_AUTH, 404, 409, 422)}}}

_PATHS["/s/{survey_id}"] = {"get": {
    "operationId": "respondentPage",
    "summary": "The respondent web page for a survey (HTML; its scripts and styles are under "
               "/s/js/ and /s/css/). Served with a strict Content-Security-Policy.",
    "parameters": [_SURVEY_ID],
    "responses": {"200": {"description": "The page",
                          "content": {"text/html": {"schema": {"type": "string"}}}},
                  **_errors(404)}}}
_BATCH_ID = {"name": "batch_id", "in": "path", "required": True, "schema": {"type": "string"}}
_OBJECT = {"type": "object"}
_QID = QUESTION_ID.pattern.strip("^$")
_B64URL = {"type": "string", "pattern": "^[A-Za-z0-9_-]*={0,2}$"}
_SEALED = {**_B64URL, "minLength": 64, "maxLength": -(-MAX_SEALED * 4 // 3),
           "description": "base64url of HPKE enc (32 bytes) || AES-128-GCM ciphertext of the "
                          "canonical JSON {key: base64url(input share)} (docs/two-server.md)"}
_SCHEMAS["TwoServerUpload"] = {
    "type": "object", "additionalProperties": False,
    "description": "One device's two-server upload; every byte is specified in "
                   "docs/two-server.md (the upload on the wire).",
    "required": ["submission_id", "version", "public_shares", "leader_share", "helper_share"],
    "properties": {
        "submission_id": {"type": "string", "format": "uuid",
                          "pattern": "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-"
                                     "[0-9a-f]{12}$",
                          "description": "the 16-byte report id (also the Prio3 nonce), "
                                         "lowercase"},
        "version": {"type": "integer", "minimum": 1, "maximum": MAX_VERSION},
        "public_shares": {
            "type": "object", "minProperties": 1,
            "description": "per answered question id (and crosstab:<rows>:<cols> key): "
                           "base64url of its Prio3 public share",
            "propertyNames": {"pattern": f"^(?:{_QID}|crosstab:{_QID}:{_QID})$"},
            "additionalProperties": {**_B64URL, "maxLength": -(-MAX_SEALED * 4 // 3)}},
        "leader_share": _SEALED, "helper_share": _SEALED,
        "invite": {"type": "string", "minLength": 1, "maxLength": 64,
                   "description": "the one-time invitation code of an invite-only survey "
                                  "(ldpsurvey invites create): claimed with the upload, "
                                  "bound to it by its hash, not stored with it; the leader "
                                  "batches each cell and random group its design names apart "
                                  "(docs/weights.md)"}}}
_SCHEMAS["TwoServerUploadResult"] = {
    "type": "object", "required": ["submission_id", "duplicate"],
    "properties": {"submission_id": {"type": "string"}, "duplicate": {"type": "boolean"}}}
# The two-server mode's leader routes (server/two_server/api.py, docs/two-server.md).
_PATHS.update({
    "/api/surveys/{survey_id}/two-server/uploads": {"post": {
        "operationId": "twoServerUpload",
        "summary": "One device's Prio3 upload: public shares and the leader's and helper's "
                   "HPKE-sealed input shares (stored before the 2xx).",
        "parameters": [_SURVEY_ID],
        "requestBody": {"required": True, "content": _json(_ref("TwoServerUpload"))},
        "responses": {"200": {"description": "Already stored (duplicate)",
                              "content": _json(_ref("TwoServerUploadResult"))},
                      "201": {"description": "Stored",
                              "content": _json(_ref("TwoServerUploadResult"))},
                      **_errors(400, 404, 409, 413, 415, 422), "403": _INVITE_REFUSED}}},
    "/api/surveys/{survey_id}/two-server/aggregate": {"post": {
        "operationId": "twoServerAggregate",
        "summary": "Form batches and run the pending aggregation jobs with the helper now.",
        "security": _BEARER, "parameters": [_SURVEY_ID],
        "responses": {"200": {"description": "What was done", "content": _json(_OBJECT)},
                      **_errors(*_AUTH, 404, 409, 502)}}},
    "/api/surveys/{survey_id}/two-server/batches": {"get": {
        "operationId": "twoServerBatches", "summary": "Batches and uploads waiting for one.",
        "security": _BEARER, "parameters": [_SURVEY_ID],
        "responses": {"200": {"description": "Batches", "content": _json(_OBJECT)},
                      **_errors(*_AUTH, 404)}}},
    "/api/surveys/{survey_id}/two-server/batches/{batch_id}/collect": {"post": {
        "operationId": "twoServerCollect",
        "summary": "A batch's noisy sums (each server's own noise added once) and estimates.",
        "security": _BEARER, "parameters": [_SURVEY_ID, _BATCH_ID],
        "responses": {"200": {"description": "The collected batch", "content": _json(_OBJECT)},
                      **_errors(*_AUTH, 404, 409, 502)}}},
})
_PATHS["/api/surveys/{survey_id}"]["get"]["description"] = _PATHS[
    "/api/surveys/{survey_id}/submissions"]["post"]["description"] = (
    "Answers CORS requests (and preflights) only from the origins the operator allows with "
    "`ldpsurvey serve --allow-origin`; none by default.")

_DOCUMENT: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "ldpsurvey aggregator", "version": "1",
             "description": "Stores only locally randomized reports and estimates from them. "
                            "Errors are {error: {code, message, details}}."},
    "paths": _PATHS,
    "components": {"schemas": _SCHEMAS,
                   "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
}


def openapi_document() -> dict[str, Any]:
    """A fresh copy of the document (callers may not mutate the module's)."""
    return copy.deepcopy(_DOCUMENT)
