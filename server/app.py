"""The Flask application factory: configuration, schema migration, blueprints, error mapping."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flask import Flask

from .api_analyst import bp as analyst_bp
from .api_public import bp as public_bp
from .http_errors import register_error_handlers
from .http_request import STORE_EXTENSION
from .store import open_store
from .submissions import MAX_BATCH

DEFAULTS: dict[str, Any] = {
    "DATABASE": "ldpsurvey.db",
    "MAX_CONTENT_LENGTH": 16 * 1024 * 1024,  # bytes; larger bodies get 413
    "MAX_BATCH": MAX_BATCH,
    "POOL_SIZE": 8,  # PostgreSQL connections per process (serve sets it to its thread count)
}


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    """A configured app; the database (a SQLite path or a PostgreSQL URL) is created or
    migrated before the first request."""
    # Explicit paths: Flask cannot locate a package installed through a package-dir mapping.
    here = Path(__file__).resolve().parent
    app = Flask("ldpsurvey.server", root_path=str(here), instance_path=str(here / "instance"))
    app.config.update(DEFAULTS)
    app.config.update(config or {})
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.json.compact = True  # type: ignore[attr-defined]
    app.extensions[STORE_EXTENSION] = open_store(app.config["DATABASE"],
                                                 pool_size=int(app.config["POOL_SIZE"]))
    app.register_blueprint(public_bp)
    app.register_blueprint(analyst_bp)
    register_error_handlers(app)
    # werkzeug's request log line starts with the client address: never emit it.
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    return app
