"""The helper's Flask application factory (the same pattern as server/app.py)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flask import Flask
from ldpsurvey.server.common.http_errors import register_error_handlers
from ldpsurvey.server.common.two_server.db import TwoServerDb
from ldpsurvey.server.common.two_server.helper_token import digest
from ldpsurvey.shared.two_server.hpke import load_private_key, public_bytes

from .api import HELPER_EXTENSION, bp
from .jobs import Helper

DEFAULTS: dict[str, Any] = {
    "DATABASE": "ldpsurvey-helper.db",
    "HPKE_KEY": None,              # path of the helper's private key (required)
    "TRUSTED": None,               # designer key fingerprints accepted; None: any signer
    "LEADER_TOKEN": None,          # the token the leader must present (None: anyone may call)
    "MAX_CONTENT_LENGTH": 256 * 1024 * 1024,
}


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    """A configured helper; its tables are created before the first request."""
    here = Path(__file__).resolve().parent
    app = Flask("ldpsurvey.helper", root_path=str(here), instance_path=str(here / "instance"))
    app.config.update(DEFAULTS)
    app.config.update(config or {})
    if not app.config["HPKE_KEY"]:
        raise ValueError("the helper needs its HPKE private key (--hpke-key)")
    key = load_private_key(app.config["HPKE_KEY"])
    trusted = app.config["TRUSTED"]
    app.extensions[HELPER_EXTENSION] = Helper(
        db=TwoServerDb(app.config["DATABASE"]), private_key=key, public_key=public_bytes(key),
        trusted=frozenset(trusted) if trusted else None)
    token = app.config["LEADER_TOKEN"]
    app.config["LEADER_TOKEN_SHA256"] = digest(token) if token else None
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.register_blueprint(bp)
    register_error_handlers(app)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    return app
