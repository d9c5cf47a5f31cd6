"""POST /api/surveys/<id>/submissions answered by a lean WSGI handler in front of Flask.

Why: issue 22 asks single submissions (one per request, 8 clients) to reach 0.9 of an HTTP
floor, a trivial waitress + Flask endpoint that parses the same JSON. Measured in a real
waitress server with a store that stores nothing, the Flask route cost ~290 µs of server CPU
per request against the floor's ~240 µs, while the same validation (`submissions.submit`)
called from a plain WSGI function cost ~140 µs: Flask's request machinery (request context,
routing, the Response, after_request hooks, error handlers) was the largest cost of the
hottest endpoint.

`SubmissionsEndpoint` wraps the app's WSGI callable (`app.wsgi_app`, so waitress and the test
client both go through it). It answers only a POST to exactly that path whose survey id is a
slug (shared/survey.py's rule, which every published survey id follows), with a JSON
Content-Type Flask accepts and a plain Content-Length within MAX_CONTENT_LENGTH. Everything
else (other methods, OPTIONS preflights included, other paths and ids, a body Flask refuses
before reading it) goes to Flask untouched. Its answers are Flask's byte for byte, because
they are made by the same parts: Flask's request class and `json_object` read the body, the
app's JSON provider writes the answer, `http_errors.error_response` maps errors and
`cors.cors_headers` decides the CORS headers (tests/server/test_submissions_wsgi.py compares
both paths). Like the Flask route, it logs and keeps nothing about the request.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from flask import Flask

from ..shared.survey import SLUG
from . import submissions
from .cors import CORS_ENDPOINTS, cors_headers
from .http_errors import error_response
from .http_request import STORE_EXTENSION
from .jsonbody import json_object

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

ENDPOINT = "public.post_submissions"  # the Flask route it stands in for (api_public.py)
_CORS = ENDPOINT in CORS_ENDPOINTS
# The slug rule without its anchors, matched with fullmatch: `$` would let a trailing "\n" in.
_SLUG = SLUG.pattern.removeprefix("^").removesuffix("$")
_ROUTE = re.compile(f"/api/surveys/({_SLUG})/submissions")
# What clients send (exactly "application/json" for ours), each of them taken by json_object.
_JSON_TYPES = frozenset({"application/json", "application/json; charset=utf-8",
                         "application/json;charset=utf-8", "application/json; charset=UTF-8",
                         "application/json;charset=UTF-8"})
_LENGTH = re.compile(r"[0-9]{1,15}")


class SubmissionsEndpoint:
    """WSGI middleware: the submissions POST answered here, every other request by Flask."""

    def __init__(self, app: Flask, flask_wsgi: WSGIApplication) -> None:
        self.app = app
        self.flask_wsgi = flask_wsgi

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse
                 ) -> Iterable[bytes]:
        survey_id = self.survey_id(environ)
        if survey_id is None:
            return self.flask_wsgi(environ, start_response)
        app = self.app
        config = app.config
        try:
            request = app.request_class(environ)
            request.max_content_length = config["MAX_CONTENT_LENGTH"]  # no app context here
            result = submissions.submit(app.extensions[STORE_EXTENSION], survey_id,
                                        json_object(request), max_batch=config["MAX_BATCH"])
            response = app.json.response(result.to_dict())
        except Exception as exc:
            response = error_response(app, exc, ENDPOINT)
        headers = response.headers.to_wsgi_list()
        if _CORS:
            headers += cors_headers(environ.get("HTTP_ORIGIN"), "POST",
                                    config["ALLOWED_ORIGINS"])
        start_response(response.status, headers)
        return [response.get_data()]

    def survey_id(self, environ: WSGIEnvironment) -> str | None:
        """The survey id of a request answered here; None for one Flask answers (without
        reading its body: a Content-Type json_object refuses, a body without a plain
        Content-Length, such as a chunked one, or one longer than MAX_CONTENT_LENGTH)."""
        if environ.get("REQUEST_METHOD") != "POST":
            return None
        route = _ROUTE.fullmatch(environ.get("PATH_INFO", ""))
        if (route is None or environ.get("CONTENT_TYPE") not in _JSON_TYPES
                or "HTTP_TRANSFER_ENCODING" in environ):
            return None
        length = environ.get("CONTENT_LENGTH")
        if not length or _LENGTH.fullmatch(length) is None:
            return None
        limit = self.app.config["MAX_CONTENT_LENGTH"]
        if limit is not None and int(length) > limit:
            return None
        return route.group(1)
