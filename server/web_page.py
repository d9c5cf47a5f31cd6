"""The respondent web page, served by the aggregator at GET /s/<survey_id> (hosting mode 2).

The page's files (client/web, package data of ldpsurvey.client) are the app's static folder
under /s/, and /s/<survey_id> serves its index.html: the page reads the survey id from its own
path and talks to its own origin. Every response here carries a strict Content-Security-Policy
(only this origin's scripts, styles and connections; no inline code, no framing). The files are
served gzip-compressed to browsers that accept it, compressed once and kept (page_files.py).

In this mode the respondent trusts the aggregator to serve honest code: a hostile aggregator
could serve a page that sends true answers. `ldpsurvey page export` (hosting mode 1) puts the
page on an origin the aggregator does not control; see docs/web.md.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from flask import Blueprint, Response, current_app, request

from . import surveys
from .http_request import current_store
from .page_files import PageFiles

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
PAGE_FILES = "ldpsurvey.page_files"  # app.extensions key


def web_dir() -> Path:
    """The page's files as installed (index.html, js/, css/)."""
    return Path(str(files("ldpsurvey.client") / "web"))


def page_files() -> PageFiles:
    """This app's page files, compressed once (made on first use)."""
    files = current_app.extensions.get(PAGE_FILES)
    if files is None:
        files = current_app.extensions[PAGE_FILES] = PageFiles(
            current_app.static_folder or web_dir())
    return files


def static_file(filename: str) -> Response:
    """The app's static view (endpoint "static", /s/<path:filename>; app.py installs it in
    place of Flask's): the page's files, gzip-compressed when the browser accepts it."""
    return page_files().response(filename, request)


@bp.get("/s/<survey_id>")
def survey_page(survey_id: str) -> Response:
    surveys.get(current_store(), survey_id)  # 404 JSON for an unknown survey
    return page_files().response("index.html", request)  # no-cache, like every page file


def add_security_headers(response: Response) -> Response:
    """after_request: the CSP and friends on the page and its static files."""
    if request.endpoint in PAGE_ENDPOINTS:
        for name, value in SECURITY_HEADERS.items():
            response.headers[name] = value
    return response
