"""The request's database connection: opened on first use, closed when the request ends."""

from __future__ import annotations

import sqlite_utils
from flask import current_app, g

from .db import connect


def get_db() -> sqlite_utils.Database:
    if "db" not in g:
        g.db = connect(current_app.config["DATABASE"], migrate_schema=False)
    return g.db


def close_db(_exc: BaseException | None = None) -> None:
    db = g.pop("db", None)
    if db is not None:
        db.conn.close()
