"""The store layer: every SQL statement of the server, behind one `Store` protocol.

`open_store(target)` picks the backend from the target: a `postgresql://` (or `postgres://`)
URL or a libpq `key=value` connection string opens PostgreSQL (needs the `postgres` extra),
anything else is a SQLite file path.
"""

from __future__ import annotations

from pathlib import Path

from ..common.db_target import is_postgres, redact
from ..common.errors import StoreError
from .base import (
    AggregateRules,
    Dump,
    IngestJob,
    IngestResult,
    InviteCounts,
    InviteDesign,
    PendingSubmission,
    Replacement,
    Store,
    StoredAggregates,
    StoredDesigns,
    SurveyRow,
    TokenRow,
    current_hour,
    now_second,
)
from .base import (
    compact as compact_json,
)
from .ingest_process import ChildPlan

__all__ = [
    "AggregateRules", "ChildPlan", "Dump", "IngestJob", "IngestResult", "InviteCounts",
    "InviteDesign", "PendingSubmission", "Replacement", "Store", "StoredAggregates",
    "StoredDesigns", "SurveyRow", "TokenRow",
    "compact_json", "current_hour", "now_second", "open_store",
]


def open_store(target: str | Path, *, migrate: bool = True, must_exist: bool = False,
               read_only: bool = False, pool_size: int = 8,
               ingest_process: ChildPlan | None = None) -> Store:
    """A store for a SQLite path or a PostgreSQL URL; the schema is migrated unless `migrate`
    is False. `must_exist` refuses a SQLite file that does not exist yet (CLI commands that
    read); `read_only` opens SQLite read-only. `ingest_process` runs SQLite's ingest
    transactions, and the checking of request bodies sent there, in a child process that uses
    its functions (`ldpsurvey serve`; PostgreSQL runs them in its own server anyway)."""
    if is_postgres(target):
        try:
            from .postgres import PgStore
        except ImportError:
            raise StoreError("PostgreSQL needs the postgres extra: "
                             "pip install 'ldpsurvey[postgres]'") from None

        return PgStore(str(target), migrate=migrate, pool_size=pool_size)
    from .sqlite import SqliteStore

    if (must_exist or read_only) and not Path(target).is_file():
        raise StoreError(f"database {redact(target)} does not exist")
    return SqliteStore(target, migrate=migrate, read_only=read_only,
                       ingest_process=ingest_process)
