"""The tables of the two-server mode (leader and helper), in SQLite or PostgreSQL.

One small SQL layer for both roles: `transaction()` yields a cursor whose statements use `?`
placeholders (rewritten to `%s` for PostgreSQL); the transaction commits when the block ends
and rolls back on any exception, so a 2xx is answered only after the commit. SQLite runs in
WAL mode with synchronous=FULL and `BEGIN IMMEDIATE` writers, as the main store does. The
tables live in the same database as the server's other tables (own names, `ts_`/`hs_`).
Binary values are stored as base64url text, the same in both backends.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..db_target import is_postgres, redact
from ..errors import StoreError, StoreUnavailable

SCHEMA = (
    # leader: its verify key per survey version, uploads, batches
    """CREATE TABLE IF NOT EXISTS ts_keys (survey_id TEXT NOT NULL, version INTEGER NOT NULL,
       verify_key TEXT NOT NULL, PRIMARY KEY (survey_id, version))""",
    """CREATE TABLE IF NOT EXISTS ts_uploads (survey_id TEXT NOT NULL, report_id TEXT NOT NULL,
       version INTEGER NOT NULL, body TEXT NOT NULL, batch_id TEXT,
       PRIMARY KEY (survey_id, report_id))""",
    """CREATE INDEX IF NOT EXISTS ts_uploads_unbatched ON ts_uploads (survey_id, version,
       batch_id)""",
    """CREATE TABLE IF NOT EXISTS ts_batches (survey_id TEXT NOT NULL, version INTEGER NOT NULL,
       batch_id TEXT NOT NULL, state TEXT NOT NULL, n_reports INTEGER NOT NULL,
       created TEXT NOT NULL, result TEXT, leader_noisy TEXT, collected TEXT,
       PRIMARY KEY (survey_id, version, batch_id))""",
    # helper: its tasks (survey version, manifest hash, verify key), report ids, batches
    """CREATE TABLE IF NOT EXISTS hs_tasks (survey_id TEXT NOT NULL, version INTEGER NOT NULL,
       sha256 TEXT NOT NULL, manifest TEXT NOT NULL, verify_key TEXT NOT NULL,
       PRIMARY KEY (survey_id, version))""",
    """CREATE TABLE IF NOT EXISTS hs_reports (survey_id TEXT NOT NULL, version INTEGER NOT NULL,
       report_id TEXT NOT NULL, batch_id TEXT NOT NULL,
       PRIMARY KEY (survey_id, version, report_id))""",
    """CREATE TABLE IF NOT EXISTS hs_batches (survey_id TEXT NOT NULL, version INTEGER NOT NULL,
       batch_id TEXT NOT NULL, request_sha256 TEXT NOT NULL, response TEXT NOT NULL,
       aggregate TEXT NOT NULL, collection_id TEXT, collected TEXT,
       PRIMARY KEY (survey_id, version, batch_id))""",
)


# Columns added after a table was first created: (table, column, SQL type). A database made
# before gets them on open (SQLite has no ADD COLUMN IF NOT EXISTS, so the schema is read).
ADDED_COLUMNS = (
    # the part of the sample a batch holds, JSON {"cell": ..., "group": ...} (NULL: all of it)
    ("ts_batches", "part", "TEXT"),
)

TABLES = ("ts_keys", "ts_uploads", "ts_batches", "hs_tasks", "hs_reports", "hs_batches")


def tables_in_use(target: str | Path) -> list[str]:
    """The two-server tables of a database that hold rows (read only: no table is created)."""
    found: list[str] = []
    if is_postgres(str(target)):
        import psycopg

        with psycopg.connect(str(target)) as conn, conn.cursor() as cur:
            for table in TABLES:
                cur.execute("SELECT to_regclass(%s)", (table,))
                if cur.fetchone()[0] is not None:
                    cur.execute(f"SELECT EXISTS (SELECT 1 FROM {table})")  # noqa: S608
                    if cur.fetchone()[0]:
                        found.append(table)
        return found
    conn = sqlite3.connect(f"file:{target}?mode=ro", uri=True)
    try:
        for table in TABLES:
            exists = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                                  "name = ?", (table,)).fetchone()
            if exists and conn.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone():  # noqa: S608
                found.append(table)
    finally:
        conn.close()
    return found


class TwoServerDb:
    """Transactions on the two-server tables of one database (a SQLite path or a PG URL)."""

    def __init__(self, target: str | Path) -> None:
        self.target = str(target)
        self.postgres = is_postgres(self.target)
        self._local = threading.local()
        with self.transaction() as cur:
            for statement in SCHEMA:
                cur.execute(statement)
            for table, column, kind in ADDED_COLUMNS:
                if column not in _columns(cur, table, self.postgres):
                    cur.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")

    @contextmanager
    def transaction(self) -> Iterator[Cursor]:
        if self.postgres:
            with self._pg_transaction() as cur:
                yield cur
            return
        conn = self._sqlite()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield Cursor(conn.cursor(), postgres=False)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def _sqlite(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            try:
                conn = sqlite3.connect(self.target, isolation_level=None,
                                       check_same_thread=False, timeout=30)
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = FULL")
            except sqlite3.DatabaseError as exc:
                raise StoreError(f"cannot open database {self.target}: {exc}") from exc
            self._local.conn = conn
        return conn

    @contextmanager
    def _pg_transaction(self) -> Iterator[Cursor]:
        import psycopg

        try:
            conn = psycopg.connect(self.target)
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(f"cannot reach the database {redact(self.target)}") from exc
        try:
            with conn.transaction(), conn.cursor() as cur:
                # One writer at a time, as SQLite's BEGIN IMMEDIATE gives: the two-server
                # tables see few, small transactions, and no retry loop is needed.
                cur.execute("SELECT pg_advisory_xact_lock(1851)")
                yield Cursor(cur, postgres=True)
        finally:
            conn.close()


def _columns(cur: Cursor, table: str, postgres: bool) -> set[str]:
    if postgres:
        rows = cur.execute("SELECT column_name FROM information_schema.columns WHERE "
                           "table_name = ? AND table_schema = current_schema()",
                           (table,)).fetchall()
        return {r[0] for r in rows}
    return {r[1] for r in cur.execute(f"PRAGMA table_info({table})").fetchall()}


class Cursor:
    """A DB-API cursor taking `?` placeholders in both backends."""

    def __init__(self, cur: Any, postgres: bool) -> None:
        self._cur = cur
        self._postgres = postgres

    @property
    def postgres(self) -> bool:
        return self._postgres

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        self._cur.execute(sql.replace("?", "%s") if self._postgres else sql, tuple(params))
        return self

    def fetchone(self) -> Any:
        return self._cur.fetchone()

    def fetchall(self) -> list[Any]:
        return list(self._cur.fetchall())

    @property
    def rowcount(self) -> int:
        return self._cur.rowcount
