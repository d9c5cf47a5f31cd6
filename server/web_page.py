"""The respondent web page, served by the aggregator at GET /s/<survey_id> (hosting mode 2).

The page's files (client/web, package data of ldpsurvey.client) are the app's static folder
under /s/, and /s/<survey_id> serves its index.html: the page reads the survey id from its own
path and talks to its own origin. Every response here carries a strict Content-Security-Policy
(only this origin's scripts, styles and connections; no inline code, no framing). The files are
served gzip-compressed to browsers that accept it, compressed once and kept (page_files.py).
The page at /s/<survey_id> carries the survey's public document (what GET /api/surveys/<id>
answers) in a JSON data block, so the page's code need not ask for it one round trip after it
has loaded (js/where.js takes it from there; an exported page asks its server), and
`<link rel=modulepreload>` hints for its question types' modules (js/types/<type>.js and what
they import statically, beyond what index.html preloads for every survey), so they load with
the page's own code rather than once where.js has read the survey.

In this mode the respondent trusts the aggregator to serve honest code: a hostile aggregator
could serve a page that sends true answers. `ldpsurvey page export` (hosting mode 1) puts the
page on an origin the aggregator does not control; see docs/web.md.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from importlib.resources import files
from pathlib import Path
from typing import Any

from flask import Blueprint, Response, current_app, request
from markupsafe import escape

from . import surveys
from .http_request import current_store
from .page_files import PageFiles, page_file, respond

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


SURVEY_SLOT = b"<!--survey-document-->"  # in index.html, before where.js's script
# what could end the data block or be read as markup, escaped in the JSON (as \uXXXX)
_JSON_ESCAPES = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026",
                 0x2028: "\\u2028", 0x2029: "\\u2029"}


def document_block(survey_id: str, document: dict[str, Any]) -> bytes:
    """The data block (`<script type="application/json">`, never run: the page's CSP allows
    no inline script) that carries survey `survey_id`'s document in its page."""
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    return (f'<script type="application/json" id="survey-document" '
            f'data-survey="{escape(survey_id)}">{text.translate(_JSON_ESCAPES)}</script>'
            ).encode()


ENTRY_MODULES = ("js/app.js", "js/where.js")  # what index.html loads and preloads
# index.html's hint for api.js, which where.js imports only to ask an exported page's server
# for the survey: the page served here carries its document, so the hint would make api.js
# one more file before the first question (issue 40; the page loads it to send, after them)
ASKING_HINT = b'\n<link rel="modulepreload" href="js/api.js">'
_TYPE_NAME = re.compile(r"[a-z][a-z_]*")


def type_modules(files: PageFiles, document: dict[str, Any]) -> list[str]:
    """The modules the page imports for the question types of the survey `document` signs
    (js/types/<type>.js, optional.js loadFor) and everything they import statically, less what
    every page loads (ENTRY_MODULES and their imports); none for a document it cannot read
    (the page refuses it)."""
    try:
        survey = json.loads(base64.b64decode(document["signed_bytes"], validate=True))
        types = sorted({q["type"] for q in survey["questions"]})
    except (KeyError, TypeError, ValueError, binascii.Error):
        return []
    units = [f"js/types/{name}.js" for name in types
             if isinstance(name, str) and _TYPE_NAME.fullmatch(name)]
    if not units:
        return []
    every_page = set(files.modules(ENTRY_MODULES))
    return [name for name in files.modules(["js/types/base.js", *units])
            if name not in every_page]


def preload_links(modules: list[str]) -> bytes:
    """The hints for `modules`, each on its own line; the page puts them last in its head,
    after those of what every page loads (asked for first)."""
    return "".join(f'\n<link rel="modulepreload" href="{escape(name)}">'
                   for name in modules).encode()


@bp.get("/s/<survey_id>")
def survey_page(survey_id: str) -> Response:
    """index.html with the survey's document in it (404 JSON for an unknown survey); made per
    request (the document changes with the survey's status), no-cache like every page file."""
    document = surveys.public_document(current_store(), survey_id)
    files = page_files()
    html = files.get("index.html").raw
    filled = html.replace(SURVEY_SLOT, document_block(survey_id, document), 1).replace(
        ASKING_HINT, b"", 1).replace(
        b"</head>", preload_links(type_modules(files, document)) + b"\n</head>", 1)
    return respond(page_file(filled, "index.html"), request)


def add_security_headers(response: Response) -> Response:
    """after_request: the CSP and friends on the page and its static files."""
    if request.endpoint in PAGE_ENDPOINTS:
        for name, value in SECURITY_HEADERS.items():
            response.headers[name] = value
    return response
