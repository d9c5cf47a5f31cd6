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
before reading it) goes to Flask untouched, and so does a body whose length is not its
Content-Length (with the bytes that came). Its answers are Flask's byte for byte, because they
are made by the same parts: `submissions.submit_body` parses (`jsonbody.object_of`), checks and
stores the body (in the SQLite ingest process under `ldpsurvey serve`), the app's JSON provider
writes the answer (the 200's two headers are written here: building a werkzeug Request and
Response cost ~75 µs of server CPU per request under load), `http_errors.error_response` maps
errors and `cors.cors_headers` decides the CORS headers (tests/server/test_submissions_wsgi.py
compares both paths). Like the Flask route, it logs and keeps nothing about the request.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from flask import Flask
from ldpsurvey.shared.survey import SLUG

from . import submissions
from .common.http_errors import error_response
from .cors import CORS_ENDPOINTS, cors_headers
from .http_request import STORE_EXTENSION

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
_COMPACT = (",", ":")


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
        length = int(environ["CONTENT_LENGTH"])
        stream = environ["wsgi.input"]
        data = stream.read(length)
        if environ.get("wsgi.input_terminated") and len(data) == length:
            data += stream.read(1)  # werkzeug reads such a stream to its end
        if len(data) != length:  # cut short, or longer: Flask answers, from the same bytes
            rest = stream.read() if len(data) > length else b""
            return self.flask_wsgi({**environ, "wsgi.input": io.BytesIO(data + rest)},
                                   start_response)
        app = self.app
        config = app.config
        try:
            result = submissions.submit_body(app.extensions[STORE_EXTENSION], survey_id, data,
                                             max_batch=config["MAX_BATCH"])
            # what app.json.response writes (create_app makes it compact), without building a
            # Response; the equivalence test compares the bytes
            body = f"{app.json.dumps(result.to_dict(), separators=_COMPACT)}\n".encode()
            status = "200 OK"
            headers = [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
        except Exception as exc:
            response = error_response(app, exc, ENDPOINT)
            status, headers, body = (response.status, response.headers.to_wsgi_list(),
                                     response.get_data())
        if _CORS:
            headers += cors_headers(environ.get("HTTP_ORIGIN"), "POST",
                                    config["ALLOWED_ORIGINS"])
        start_response(status, headers)
        return [body]

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
