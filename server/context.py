"""The request's database connection: one per server thread, reused across its requests.

Opening SQLite and setting its pragmas costs about as much as storing a small submission, so
each thread keeps its connection (per app). At the end of every request a transaction left open
by a failure is rolled back, so the next request on that thread starts clean.
"""

from __future__ import annotations

import threading

import sqlite_utils
from flask import current_app

from .db import connect

_EXTENSION = "ldpsurvey.connections"


def get_db() -> sqlite_utils.Database:
    local = current_app.extensions.setdefault(_EXTENSION, threading.local())
    db = getattr(local, "db", None)
    if db is None:
        db = local.db = connect(current_app.config["DATABASE"], migrate_schema=False)
    return db


def end_request(_exc: BaseException | None = None) -> None:
    local = current_app.extensions.get(_EXTENSION)
    db = getattr(local, "db", None)
    if db is not None and db.conn.in_transaction:
        db.conn.execute("ROLLBACK")
