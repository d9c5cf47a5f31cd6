"""The respondent web page, served by the aggregator at GET /s/<survey_id> (hosting mode 2).

The page's files (client/web, package data of ldpsurvey.client) are the app's static folder
under /s/, and /s/<survey_id> serves its index.html: the page reads the survey id from its own
path and talks to its own origin. Every response here carries a strict Content-Security-Policy
(only this origin's scripts, styles and connections; no inline code, no framing).

In this mode the respondent trusts the aggregator to serve honest code: a hostile aggregator
could serve a page that sends true answers. `ldpsurvey page export` (hosting mode 1) puts the
page on an origin the aggregator does not control; see docs/web.md.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from flask import Blueprint, Response, current_app, request, send_from_directory

from . import surveys
from .context import get_db

bp = Blueprint("page", __name__)

STATIC_URL_PATH = "/s"
CSP = ("default-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; "
       "form-action 'none'; frame-ancestors 'none'; object-src 'none'")
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
}
PAGE_ENDPOINTS = frozenset({"static", "page.survey_page"})


def web_dir() -> Path:
    """The page's files as installed (index.html, js/, css/)."""
    return Path(str(files("ldpsurvey.client") / "web"))


@bp.get("/s/<survey_id>")
def survey_page(survey_id: str) -> Response:
    surveys.get(get_db(), survey_id)  # 404 JSON for an unknown survey
    response = send_from_directory(current_app.static_folder or web_dir(), "index.html")
    response.headers["Cache-Control"] = "no-cache"
    return response


def add_security_headers(response: Response) -> Response:
    """after_request: the CSP and friends on the page and its static files."""
    if request.endpoint in PAGE_ENDPOINTS:
        for name, value in SECURITY_HEADERS.items():
            response.headers[name] = value
    return response
