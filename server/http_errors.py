"""The one place errors become HTTP responses: {"error": {"code", "message", "details"}}.

Server errors carry their own status; library errors (an invalid survey, manifest or report)
are 422; werkzeug's HTTP errors (404, 405, 413, ...) keep their status and headers. Anything
else is a bug: it is logged without any request metadata and answered with a JSON 500.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from flask import Flask, Response, jsonify, request
from werkzeug.exceptions import HTTPException

from ..shared.errors import MESSAGE_LIMIT, LdpSurveyError, clip

log = logging.getLogger("ldpsurvey.server")

_KEEP_HEADERS = ("Allow", "WWW-Authenticate", "Retry-After")


def error_response(status: int, code: str, message: str, details: Any = None,
                   headers: dict[str, str] | None = None) -> Response:
    """The JSON error body; whatever it echoes of the request is clipped (bounded size)."""
    response = jsonify({"error": {"code": code, "message": clip(message, MESSAGE_LIMIT),
                                  "details": clipped(details)}})
    response.status_code = status
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


def clipped(value: Any) -> Any:
    """`value` with every string in it (dict keys too) clipped to ECHO_LIMIT characters."""
    if isinstance(value, str):
        return clip(value)
    if isinstance(value, dict):
        return {clipped(k): clipped(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clipped(v) for v in value]
    return value


def _library_error(exc: LdpSurveyError) -> Response:
    status = getattr(exc, "status", 422)
    headers = {"WWW-Authenticate": 'Bearer realm="ldpsurvey"'} if status == 401 else None
    return error_response(status, exc.code, exc.message, exc.details, headers)


def _http_error(exc: HTTPException) -> Response:
    status = exc.code or 500
    code = re.sub(r"[^a-z0-9]+", "_", (exc.name or "error").lower()).strip("_")
    original = exc.get_response()
    headers = {k: original.headers[k] for k in _KEEP_HEADERS if k in original.headers}
    return error_response(status, code, exc.description or exc.name or "error", None, headers)


def _unexpected(exc: Exception) -> Response:
    # The endpoint name only: no address, user agent, headers or body.
    log.error("unexpected error in endpoint %s", request.endpoint, exc_info=exc)
    return error_response(500, "internal_error", "internal server error")


def register_error_handlers(app: Flask) -> None:
    app.register_error_handler(LdpSurveyError, _library_error)
    app.register_error_handler(HTTPException, _http_error)
    app.register_error_handler(Exception, _unexpected)
