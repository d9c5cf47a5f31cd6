"""The Flask application factory: configuration, schema migration, blueprints, error mapping."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flask import Flask

from .api_analyst import bp as analyst_bp
from .api_public import bp as public_bp
from .common.http_errors import register_error_handlers
from .cors import add_cors_headers, allowed_origins
from .http_request import STORE_EXTENSION
from .store import open_store
from .submissions import CHILD_PLAN, MAX_BATCH
from .submissions_wsgi import SubmissionsEndpoint
from .web_page import STATIC_URL_PATH, add_security_headers, static_file, web_dir
from .web_page import bp as page_bp

DEFAULTS: dict[str, Any] = {
    "DATABASE": "ldpsurvey.db",
    "MAX_CONTENT_LENGTH": 16 * 1024 * 1024,  # bytes; larger bodies get 413
    "MAX_BATCH": MAX_BATCH,
    "POOL_SIZE": 8,  # PostgreSQL connections per process (serve sets it to its thread count)
    "ALLOWED_ORIGINS": frozenset(),  # origins whose pages may call the public API (CORS)
    "INGEST_PROCESS": False,  # SQLite ingest in a child process (serve sets it; issue 22)
}


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    """A configured app; the database (a SQLite path or a PostgreSQL URL) is created or
    migrated before the first request."""
    # Explicit paths: Flask cannot locate a package installed through a package-dir mapping.
    here = Path(__file__).resolve().parent
    # The static folder is the respondent page (client/web), served under /s/.
    app = Flask("ldpsurvey.server", root_path=str(here), instance_path=str(here / "instance"),
                static_folder=str(web_dir()), static_url_path=STATIC_URL_PATH)
    app.config.update(DEFAULTS)
    app.config.update(config or {})
    app.config["ALLOWED_ORIGINS"] = allowed_origins(app.config["ALLOWED_ORIGINS"])
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.json.compact = True  # type: ignore[attr-defined]
    # a survey id may hold an encoded '/': werkzeug would merge the '//' it decodes to and
    # answer a 308 HTML redirect instead of the JSON 404 (found by tests/server/test_hostile_http)
    app.url_map.merge_slashes = False
    app.extensions[STORE_EXTENSION] = open_store(
        app.config["DATABASE"], pool_size=int(app.config["POOL_SIZE"]),
        ingest_process=CHILD_PLAN if app.config["INGEST_PROCESS"] else None)
    app.register_blueprint(public_bp)
    app.register_blueprint(analyst_bp)
    app.register_blueprint(page_bp)
    app.view_functions["static"] = static_file  # the page's files, gzip-compressed once
    from .two_server.api import init_leader

    init_leader(app)  # the two-server routes (and HPKE_KEY, AGGREGATE_EVERY)
    app.after_request(add_cors_headers)
    app.after_request(add_security_headers)
    register_error_handlers(app)
    # the hot ingest route without Flask's per-request machinery (issue 22), same answers
    app.wsgi_app = SubmissionsEndpoint(app, app.wsgi_app)  # type: ignore[method-assign]
    # werkzeug's request log line starts with the client address: never emit it.
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    return app
