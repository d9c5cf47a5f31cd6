"""The one place errors become HTTP responses: {"error": {"code", "message", "details"}}.

Server errors carry their own status; library errors (an invalid survey, manifest or report)
are 422; werkzeug's HTTP errors (404, 405, 413, ...) keep their status and headers. Anything
else is a bug: it is logged without any request metadata and answered with a JSON 500.
`error_response` decides all of it, for Flask's error handlers and for the lean submissions
endpoint in front of Flask (server/submissions_wsgi.py) alike.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from flask import Flask, Response, current_app, request
from ldpsurvey.shared.errors import MESSAGE_LIMIT, LdpSurveyError, clip
from werkzeug.exceptions import HTTPException

log = logging.getLogger("ldpsurvey.server")

_KEEP_HEADERS = ("Allow", "WWW-Authenticate", "Retry-After")


def error_response(app: Flask, exc: Exception, endpoint: str | None) -> Response:
    """The answer to an exception raised while `endpoint` handled a request (an unexpected
    one is logged with the endpoint name only: no address, user agent, headers or body)."""
    if isinstance(exc, LdpSurveyError):
        status = getattr(exc, "status", 422)
        headers = {"WWW-Authenticate": 'Bearer realm="ldpsurvey"'} if status == 401 else {}
        return _json_error(app, status, exc.code, exc.message, exc.details, headers)
    if isinstance(exc, HTTPException):
        code = re.sub(r"[^a-z0-9]+", "_", (exc.name or "error").lower()).strip("_")
        original = exc.get_response()
        headers = {k: original.headers[k] for k in _KEEP_HEADERS if k in original.headers}
        return _json_error(app, exc.code or 500, code, exc.description or exc.name or "error",
                           None, headers)
    log.error("unexpected error in endpoint %s", endpoint, exc_info=exc)
    return _json_error(app, 500, "internal_error", "internal server error", None, {})


def _json_error(app: Flask, status: int, code: str, message: str, details: Any,
                headers: dict[str, str]) -> Response:
    """The JSON error body; whatever it echoes of the request is clipped (bounded size)."""
    response = app.json.response({"error": {"code": code, "message": clip(message, MESSAGE_LIMIT),
                                            "details": clipped(details)}})
    response.status_code = status
    for name, value in headers.items():
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


def _flask_error(exc: Exception) -> Response:
    return error_response(current_app, exc, request.endpoint)


def register_error_handlers(app: Flask) -> None:
    # Every exception class reaches this one handler (Flask walks the class's MRO), except a
    # werkzeug routing redirect, which Flask never hands to a handler.
    app.register_error_handler(Exception, _flask_error)
