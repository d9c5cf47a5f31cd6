"""The SQLite store: connection settings and the schema, migrated in order on open.

Durability: WAL journal with `synchronous=FULL`. In WAL mode, NORMAL only syncs the WAL at
checkpoints, so a commit survives a process kill -9 but may be lost on power loss or an OS
crash. FULL fsyncs the WAL on every commit, so a transaction that committed before we answered
2xx survives both. A request is acknowledged only after its COMMIT returns.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlite_utils

from .errors import StoreError

BUSY_TIMEOUT_MS = 30_000
# Page cache per connection (KiB): keeps the submission-id index hot under large ingests.
CACHE_KIB = 32 * 1024


def connect(path: str | Path, *, migrate_schema: bool = True) -> sqlite_utils.Database:
    """A connection with WAL, foreign keys, FULL sync and a busy timeout; schema up to date
    (the app migrates once at start and skips the check on its per-request connections).

    The connection is in autocommit mode: writers open transactions explicitly with
    `transaction()` (BEGIN IMMEDIATE), so a writer takes the write lock before it reads.
    """
    try:
        conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False,
                               timeout=BUSY_TIMEOUT_MS / 1000)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        db = sqlite_utils.Database(conn)
        if migrate_schema:
            migrate(db)
    except sqlite3.DatabaseError as exc:  # unwritable directory, not a SQLite file, ...
        raise StoreError(f"cannot open database {path}: {exc}") from exc
    return db


@contextmanager
def transaction(db: sqlite_utils.Database) -> Iterator[sqlite3.Connection]:
    """One write transaction: BEGIN IMMEDIATE ... COMMIT, rolled back on any exception."""
    conn = db.conn
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


# --- migrations ----------------------------------------------------------------------------


def _v1_initial(db: sqlite_utils.Database) -> None:
    db["surveys"].create(
        {"id": str, "version": int, "manifest": str, "sha256": str, "status": str,
         "created_hour": str, "n_submissions": int, "last_submission_hour": str},
        pk=("id", "version"), not_null={"manifest", "sha256", "status", "created_hour",
                                        "n_submissions"},
        defaults={"n_submissions": 0})
    db["submissions"].create(
        {"seq": int, "survey_id": str, "version": int, "submission_id": str,
         "received_hour": str, "reports": str},
        pk="seq", not_null={"survey_id", "version", "submission_id", "received_hour",
                            "reports"},
        foreign_keys=[(("survey_id", "version"), "surveys", ("id", "version"))])
    db["submissions"].create_index(["survey_id", "submission_id"], unique=True)
    db["submissions"].create_index(["survey_id", "version", "seq"])
    db["aggregates"].create(
        {"survey_id": str, "version": int, "question_id": str, "aggregate": str},
        pk=("survey_id", "version", "question_id"), not_null={"aggregate"},
        foreign_keys=[(("survey_id", "version"), "surveys", ("id", "version"))])
    db["tokens"].create(
        {"id": int, "name": str, "token_sha256": str, "created": str, "revoked": str},
        pk="id", not_null={"name", "token_sha256", "created"})
    db["tokens"].create_index(["token_sha256"], unique=True)


def _v2_invites(db: sqlite_utils.Database) -> None:
    from .invites import create_tables

    create_tables(db)


# Ordered: migration i (1-based) takes the schema from version i-1 to i. Append, never edit.
MIGRATIONS: list[Callable[[sqlite_utils.Database], None]] = [_v1_initial, _v2_invites]


def schema_version(db: sqlite_utils.Database) -> int:
    if "schema_version" not in db.table_names():
        return 0
    row = db.execute("SELECT max(version) FROM schema_version").fetchone()
    return int(row[0] or 0)


def migrate(db: sqlite_utils.Database) -> int:
    """Apply pending migrations, each in its own transaction; returns the schema version."""
    current = schema_version(db)
    if current == len(MIGRATIONS):
        return current
    if current > len(MIGRATIONS):
        raise StoreError(f"database schema version {current} is newer than this ldpsurvey "
                         f"({len(MIGRATIONS)}); upgrade ldpsurvey")
    with transaction(db) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS schema_version "
                     "(version INTEGER PRIMARY KEY, applied TEXT NOT NULL)")
        current = schema_version(db)  # another process may have migrated meanwhile
        for number in range(current + 1, len(MIGRATIONS) + 1):
            MIGRATIONS[number - 1](db)
            conn.execute("INSERT INTO schema_version (version, applied) "
                         "VALUES (?, datetime('now'))", (number,))
    return len(MIGRATIONS)
