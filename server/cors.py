"""CORS for the public endpoints a respondent page on another origin calls.

A page exported with `ldpsurvey page export` is hosted on an origin the aggregator does not
control, so its fetches are cross-origin: the manifest GET needs Access-Control-Allow-Origin to
be readable, and the JSON submission POST is preflighted. Only origins the operator lists
(`ldpsurvey serve --allow-origin URL`, none by default) get these headers; an Origin is echoed
only when it is exactly one of them, never reflected otherwise. The Origin header is compared,
never logged or stored.
"""

from __future__ import annotations

from collections.abc import Container, Iterable
from urllib.parse import urlsplit

from flask import Response, current_app, request

from .common.errors import ServerError

# The two-server upload too: an exported page answers a two-server survey through it.
CORS_ENDPOINTS = frozenset({"public.get_survey", "public.post_submissions", "two_server.upload"})
PREFLIGHT_MAX_AGE = 600  # seconds a browser may cache a preflight answer
_DEFAULT_PORTS = {"http": 80, "https": 443}


class BadOrigin(ServerError):
    """An --allow-origin value that is not scheme://host[:port]."""

    code = "bad_origin"


def normalize_origin(text: str) -> str:
    """scheme://host[:port] as a browser sends it in Origin (lowercase, no default port)."""
    parts = urlsplit(text.strip())
    bad = BadOrigin(f"{text!r} is not an origin: give scheme://host[:port], e.g. "
                    "https://surveys.example.org (no path, query or wildcard)")
    if (parts.scheme not in _DEFAULT_PORTS or not parts.hostname or parts.username
            or parts.password or parts.path not in ("", "/") or parts.query or parts.fragment
            or "*" in text):
        raise bad
    try:
        port = parts.port
    except ValueError:
        raise bad from None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    suffix = "" if port is None or port == _DEFAULT_PORTS[parts.scheme] else f":{port}"
    return f"{parts.scheme}://{host}{suffix}"


def allowed_origins(values: Iterable[str]) -> frozenset[str]:
    return frozenset(normalize_origin(v) for v in values)


def cors_headers(origin: str | None, method: str, allowed: Container[str]
                 ) -> list[tuple[str, str]]:
    """The CORS headers of a public respondent endpoint's answer, in order: Vary: Origin
    always (the answer depends on it), and for an allowed `origin` its echo, plus the allowed
    methods, headers and cache time when the request is a preflight (OPTIONS)."""
    headers = [("Vary", "Origin")]
    if origin is None or origin not in allowed:
        return headers
    headers.append(("Access-Control-Allow-Origin", origin))
    if method == "OPTIONS":
        headers += [("Access-Control-Allow-Methods", "GET, POST"),
                    ("Access-Control-Allow-Headers", "Content-Type"),
                    ("Access-Control-Max-Age", str(PREFLIGHT_MAX_AGE))]
    return headers


def add_cors_headers(response: Response) -> Response:
    """after_request: `cors_headers` on the public respondent endpoints."""
    if request.endpoint not in CORS_ENDPOINTS:
        return response
    for name, value in cors_headers(request.headers.get("Origin"), request.method,
                                    current_app.config["ALLOWED_ORIGINS"]):
        if name == "Vary" and "Vary" in response.headers:
            response.vary.add(value)
        else:  # the usual case, without parsing an empty header set
            response.headers[name] = value
    return response
