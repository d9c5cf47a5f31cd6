"""The SQLite store: the embedded default (one file, one writer at a time, group commit).

Durability: WAL journal; every write transaction's WAL frames are fsynced before anyone is
told it committed, so a 2xx survives a process kill -9, an OS crash and a power loss. SQLite's
own `synchronous=FULL` would fsync inside COMMIT, while the write lock is held, so each group
of requests would wait for the previous group's fsync before it could even start. Instead the
connection runs `synchronous=NORMAL` (COMMIT writes the frames to the WAL file, unsynced; a
checkpoint still syncs the WAL before and the database after) and the store fsyncs the WAL
file itself right after COMMIT (`_sync_wal`): the write lock is free during the fsync, and an
fsync covers every frame written before it, so nothing is acknowledged that is not on disk.
Writers open `BEGIN IMMEDIATE`, so they take the write lock before reading.

Concurrent ingest requests share one transaction and one fsync (group_commit.py); the next
group's transaction runs while this group's fsync is in flight. `ldpsurvey serve` runs those
transactions in a child process instead (ingest_process.py): the same code on its own GIL, one
group after another, each synced before the next starts (an fsync thread there was measured
slower: bench/RESULTS.md, issue 22's sixth pass).
Each thread keeps its own connection: opening SQLite and setting its pragmas costs about as
much as storing a small submission.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from ldpsurvey.shared.survey import QUESTION_ID

from ..common.errors import StoreError
from ..group_commit import committer_for
from ..invites.claims import InviteRefused, digest, plan_claims
from .base import (
    DesignPage,
    Dump,
    IngestJob,
    IngestResult,
    InviteCounts,
    InviteDesign,
    PackedPage,
    ParsedCache,
    PendingSubmission,
    Rebuild,
    Replacement,
    StoredAggregates,
    StoredDesigns,
    SurveyRow,
    TokenRow,
    compact,
    current_hour,
    now_second,
    packed_rows,
    refusal,
    split_fresh,
)
from .ingest_process import ChildPlan, IngestProcess
from .packed_designs import (
    NO_DESIGN,
    ROW_BYTES,
    LabelNumbers,
    labels_by_code,
    unpack_designs,
    with_label_codes,
)
from .schema import SQLITE_MIGRATIONS

BUSY_TIMEOUT_MS = 30_000
# Page cache per connection (KiB): keeps the submission-id index hot under large ingests.
CACHE_KIB = 32 * 1024
_IN_CHUNK = 500
_SURVEY_COLUMNS = ("SELECT id, version, manifest, sha256, status, created_hour, n_submissions, "
                   "last_submission_hour FROM surveys ")
_parsed = ParsedCache()


def _connect(path: str, read_only: bool) -> sqlite3.Connection:
    """Autocommit mode: writers open their transactions explicitly (`_write`)."""
    if read_only:
        conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True,
                               isolation_level=None, check_same_thread=False)
    else:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False,
                               timeout=BUSY_TIMEOUT_MS / 1000)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    if not read_only:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")  # the store fsyncs the WAL: `_sync_wal`
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
    # what schema 9's migration packs the stored designs' label codes with (schema.py)
    conn.create_function("ldp_label_codes", 5, with_label_codes, deterministic=True)
    return conn


class SqliteStore:
    """A store in one SQLite file; safe to share between threads (a connection per thread)."""

    backend = "sqlite"

    def __init__(self, path: str | Path, *, read_only: bool = False,
                 migrate: bool = True, ingest_process: ChildPlan | None = None) -> None:
        self.path = str(path)
        self.read_only = read_only
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._all_lock = threading.Lock()
        self._wal_fd: int | None = None
        self._wal_lock = threading.Lock()
        self._writer: sqlite3.Connection | None = None
        self._writer_lock = threading.Lock()
        if read_only and not Path(self.path).is_file():
            raise StoreError(f"database {self.path} does not exist")
        conn = self._conn()
        if migrate and not read_only:
            self._migrate(conn)
        elif self._check_version(conn) < len(SQLITE_MIGRATIONS):
            raise StoreError(f"database {self.path} has an older schema: open it once with "
                             "`ldpsurvey serve` or `ldpsurvey recompute` to migrate it")
        # With `ingest_process` (the functions a child checks and stores with), ingest
        # transactions run in a child process (ingest_process.py).
        self.ingest_process = (None if ingest_process is None or read_only
                               else IngestProcess(os.path.abspath(self.path), ingest_process,
                                                  SqliteStore))

    # --- connections ------------------------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        """This thread's connection for reads."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._open()
        return conn

    def _open(self) -> sqlite3.Connection:
        try:
            conn = _connect(self.path, self.read_only)
        except sqlite3.DatabaseError as exc:  # unwritable directory, not SQLite, ...
            raise StoreError(f"cannot open database {self.path}: {exc}") from exc
        with self._all_lock:
            self._all.append(conn)
        return conn

    @contextmanager
    def _write(self, durable: bool = True) -> Iterator[sqlite3.Connection]:
        """One write transaction: BEGIN IMMEDIATE ... COMMIT, rolled back on any exception,
        then made durable (`_sync_wal`) unless the caller does that itself (group commit).

        Every write of this store runs on one connection, one at a time (SQLite has one writer
        anyway): a connection must drop its page cache when another connection has written, so
        writers taking turns on their own connections would each read their pages again."""
        with self._writer_lock:
            conn = self._writer
            if conn is None:
                conn = self._writer = self._open()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        if durable:
            self._sync_wal()

    def _sync_wal(self) -> None:
        """fsync the WAL file: every transaction committed before this call is then on disk.

        The file is opened once (its directory entry synced then: it may have just been
        created) and kept open: SQLite deletes a WAL only when the last connection to the
        database closes, and this store's writer connection stays open until `close`, so the
        file this descriptor names is the WAL for as long as there are writes to sync. One
        fsync instead of open, fsync, fstat and close: each system call releases and retakes
        the GIL, which costs a group of requests dearly under concurrency."""
        wal = self.path + "-wal"
        with self._wal_lock:
            fd = self._wal_fd
            if fd is None:
                try:
                    fd = os.open(wal, os.O_RDONLY)
                except FileNotFoundError:  # checkpointed away: all in the database file
                    return
                except OSError as exc:
                    raise StoreError(f"cannot sync {wal}: {exc}") from exc
            try:
                os.fsync(fd)
                if self._wal_fd is None:
                    _sync_directory(os.path.dirname(os.path.abspath(wal)))
                    self._wal_fd = fd
            except OSError as exc:
                if self._wal_fd is None:
                    os.close(fd)
                raise StoreError(f"cannot sync {wal}: {exc}") from exc

    def describe(self) -> str:
        return self.path

    def close(self) -> None:
        if self.ingest_process is not None:
            self.ingest_process.close()
        with self._all_lock:
            conns, self._all = self._all, []
        for conn in conns:
            conn.close()
        self._local = threading.local()
        self._writer = None
        with self._wal_lock:
            if self._wal_fd is not None:
                os.close(self._wal_fd)
                self._wal_fd = None

    def ping(self) -> None:
        self._conn().execute("SELECT 1").fetchone()

    # --- schema -----------------------------------------------------------------------------

    def schema_version(self) -> int:
        conn = self._conn()
        if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = "
                        "'schema_version'").fetchone() is None:
            return 0
        return int(conn.execute("SELECT max(version) FROM schema_version").fetchone()[0] or 0)

    def _check_version(self, conn: sqlite3.Connection) -> int:
        try:
            current = self.schema_version()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot open database {self.path}: {exc}") from exc
        if current > len(SQLITE_MIGRATIONS):
            raise StoreError(f"database schema version {current} is newer than this "
                             f"ldpsurvey ({len(SQLITE_MIGRATIONS)}); upgrade ldpsurvey")
        return current

    def _migrate(self, conn: sqlite3.Connection) -> None:
        if self._check_version(conn) == len(SQLITE_MIGRATIONS):
            return
        try:
            with self._write() as conn:
                conn.execute("CREATE TABLE IF NOT EXISTS schema_version "
                             "(version INTEGER PRIMARY KEY, applied TEXT NOT NULL)")
                current = self.schema_version()  # another process may have migrated meanwhile
                for number in range(current + 1, len(SQLITE_MIGRATIONS) + 1):
                    for statement in SQLITE_MIGRATIONS[number - 1]:
                        conn.execute(statement)
                    conn.execute("INSERT INTO schema_version (version, applied) "
                                 "VALUES (?, datetime('now'))", (number,))
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot open database {self.path}: {exc}") from exc

    # --- surveys ----------------------------------------------------------------------------

    def put_survey(self, survey_id: str, version: int, manifest: str, sha256: str,
                   hour: str) -> tuple[SurveyRow, bool]:
        with self._write() as conn:
            row = conn.execute(_SURVEY_COLUMNS + "WHERE id = ? AND version = ?",
                               (survey_id, version)).fetchone()
            if row is not None:
                return SurveyRow(*row), False
            conn.execute("INSERT INTO surveys (id, version, manifest, sha256, status, "
                         "created_hour, n_submissions) VALUES (?, ?, ?, ?, 'open', ?, 0)",
                         (survey_id, version, manifest, sha256, hour))
        found = self.get_survey(survey_id, version)
        assert found is not None
        return found, True

    def get_survey(self, survey_id: str, version: int | None = None) -> SurveyRow | None:
        conn = self._conn()
        if version is None:
            row = conn.execute(_SURVEY_COLUMNS + "WHERE id = ? ORDER BY version DESC LIMIT 1",
                               (survey_id,)).fetchone()
        else:
            row = conn.execute(_SURVEY_COLUMNS + "WHERE id = ? AND version = ?",
                               (survey_id, version)).fetchone()
        return None if row is None else SurveyRow(*row)

    def list_surveys(self) -> list[SurveyRow]:
        rows = self._conn().execute(_SURVEY_COLUMNS + "ORDER BY id, version").fetchall()
        return [SurveyRow(*r) for r in rows]

    def survey_versions(self, survey_id: str) -> dict[int, tuple[str, str]]:
        rows = self._conn().execute("SELECT version, sha256, status FROM surveys WHERE id = ?",
                                    (survey_id,)).fetchall()
        return {r[0]: (r[1], r[2]) for r in rows}

    def close_survey(self, survey_id: str) -> int:
        with self._write() as conn:
            return conn.execute("UPDATE surveys SET status = 'closed' WHERE id = ?",
                                (survey_id,)).rowcount

    # --- tokens -----------------------------------------------------------------------------

    def add_token(self, name: str, token_sha256: str, created: str) -> int:
        with self._write() as conn:
            cur = conn.execute("INSERT INTO tokens (name, token_sha256, created) "
                               "VALUES (?, ?, ?)", (name, token_sha256, created))
            return int(cur.lastrowid or 0)

    def list_tokens(self) -> list[TokenRow]:
        rows = self._conn().execute("SELECT id, name, created, revoked FROM tokens "
                                    "ORDER BY id").fetchall()
        return [TokenRow(*r) for r in rows]

    def revoke_token(self, token_id: int, when: str) -> TokenRow | None:
        with self._write() as conn:
            conn.execute("UPDATE tokens SET revoked = coalesce(revoked, ?) WHERE id = ?",
                         (when, token_id))
        return next((t for t in self.list_tokens() if t.id == token_id), None)

    def token_state(self, token_sha256: str) -> str | None:
        row = self._conn().execute("SELECT revoked FROM tokens WHERE token_sha256 = ?",
                                   (token_sha256,)).fetchone()
        return None if row is None else ("active" if row[0] is None else "revoked")

    # --- invitations ------------------------------------------------------------------------

    def add_invites(self, survey_id: str, code_hashes: Sequence[str],
                    designs: Sequence[InviteDesign] | None = None,
                    check: Callable[[StoredDesigns], None] | None = None,
                    carried: tuple[tuple[str, ...], Sequence[str]] | None = None) -> bool:
        with self._write() as conn:
            if conn.execute("SELECT 1 FROM surveys WHERE id = ?", (survey_id,)).fetchone() \
                    is None:
                return False
            if check is not None:
                check(_stored_designs(conn, survey_id))
            conn.execute("INSERT OR IGNORE INTO invite_surveys (survey_id, created) "
                         "VALUES (?, ?)", (survey_id, now_second()))
            if carried is not None:
                names, values = carried
                conn.execute("UPDATE invite_surveys SET carried = ? WHERE survey_id = ?",
                             (json.dumps(list(names)), survey_id))
                conn.executemany(
                    "INSERT INTO invites (code_sha256, survey_id, carried) VALUES (?, ?, ?)",
                    [(h, survey_id, v) for h, v in zip(code_hashes, values, strict=True)])
            elif designs is None:
                conn.executemany("INSERT INTO invites (code_sha256, survey_id) VALUES (?, ?)",
                                 [(h, survey_id) for h in code_hashes])
            else:
                numbers = LabelNumbers(conn.execute(
                    "SELECT kind, code, label FROM design_labels WHERE survey_id = ?",
                    (survey_id,)))
                conn.executemany(
                    "INSERT INTO invites (code_sha256, survey_id, weight, stratum, psu, fpc, "
                    "random_group, design_packed) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [(h, survey_id, d.weight, d.stratum, d.psu, d.fpc, d.group,
                      numbers.pack(d)) for h, d in zip(code_hashes, designs, strict=True)])
                conn.executemany("INSERT INTO design_labels (survey_id, kind, code, label) "
                                 "VALUES (?, ?, ?, ?)",
                                 [(survey_id, *new) for new in numbers.new])
        return True

    def design_labels(self, survey_id: str) -> dict[str, list[str]]:
        return labels_by_code(self._conn().execute(
            "SELECT kind, code, label FROM design_labels WHERE survey_id = ?", (survey_id,)))

    def invite_designs(self, survey_id: str) -> list[tuple[str | None, InviteDesign]]:
        rows = self._conn().execute(
            "SELECT submission_id, weight, stratum, psu, fpc, random_group FROM invites "
            "WHERE survey_id = ? AND weight IS NOT NULL", (survey_id,))
        make = InviteDesign._make
        return [(row[0], make(row[1:])) for row in rows]

    def invite_carried_names(self, survey_id: str) -> tuple[str, ...]:
        row = self._conn().execute("SELECT carried FROM invite_surveys WHERE survey_id = ?",
                                   (survey_id,)).fetchone()
        return tuple(json.loads(row[0])) if row is not None and row[0] else ()

    def invite_carried(self, survey_id: str, code_sha256: str) -> tuple[bool, str | None]:
        row = self._conn().execute("SELECT carried FROM invites WHERE code_sha256 = ? AND "
                                   "survey_id = ?", (code_sha256, survey_id)).fetchone()
        return (False, None) if row is None else (True, row[0])

    def submission_carried(self, survey_id: str, version: int) -> list[tuple[str, str]]:
        return self._conn().execute(
            "SELECT s.submission_id, i.carried FROM submissions AS s JOIN invites AS i ON "
            "i.survey_id = s.survey_id AND i.submission_id = s.submission_id WHERE "
            "s.survey_id = ? AND s.version = ? AND i.carried IS NOT NULL ORDER BY s.seq",
            (survey_id, version)).fetchall()

    def invite_counts(self, survey_id: str) -> InviteCounts:
        conn = self._conn()
        only = conn.execute("SELECT 1 FROM invite_surveys WHERE survey_id = ?",
                            (survey_id,)).fetchone() is not None
        issued, used = conn.execute("SELECT count(*), count(submission_id) FROM invites "
                                    "WHERE survey_id = ?", (survey_id,)).fetchone()
        return InviteCounts(survey_id, only, int(issued), int(used))

    def invite_only(self, survey_id: str) -> bool:
        return self._conn().execute("SELECT 1 FROM invite_surveys WHERE survey_id = ?",
                                    (survey_id,)).fetchone() is not None

    # --- ingest -----------------------------------------------------------------------------

    def ingest(self, job: IngestJob) -> IngestResult:
        """Concurrent requests share one transaction (group commit), run here or in the
        ingest process (which fsyncs before it answers)."""
        if self.ingest_process is not None:
            return self.ingest_process.ingest(job)
        return committer_for(os.path.abspath(self.path)).run(job, self._ingest_group,
                                                              self._sync_wal)

    def _ingest_group(self, jobs: Sequence[IngestJob]) -> list[Any]:
        """One transaction for several requests, in order: a result or an error per job.

        Later jobs see earlier ones' ids as duplicates; aggregates are read once per survey
        version, merged in memory and written once. The common group (no invitations, no id
        stored before) takes the fast path: one insert that skips stored ids, whose row count
        proves none was skipped. Otherwise that transaction is rolled back and the careful path
        looks up stored ids first."""
        hour = current_hour()
        try:
            with self._write(durable=False) as conn:  # the committer syncs, off the write lock
                states = {sid: _survey_state(conn, sid) for sid in {j.survey_id for j in jobs}}
                if any(invite_only for _, invite_only in states.values()):
                    return self._ingest_careful(conn, jobs, hour, states)
                return self._ingest_fast(conn, jobs, hour, states)
        except _StoredBefore:
            pass
        with self._write(durable=False) as conn:
            states = {sid: _survey_state(conn, sid) for sid in {j.survey_id for j in jobs}}
            return self._ingest_careful(conn, jobs, hour, states)

    def _ingest_fast(self, conn: sqlite3.Connection, jobs: Sequence[IngestJob], hour: str,
                     states: Mapping[str, tuple[dict[int, str], bool]]) -> list[Any]:
        outcomes: list[Any] = []
        seen: dict[str, set[str]] = {}
        fresh_by_job: list[tuple[IngestJob, list[PendingSubmission]]] = []
        for job in jobs:
            refused = refusal(job, states[job.survey_id][0])
            if refused is not None:
                outcomes.append(refused)
                continue
            known = seen.setdefault(job.survey_id, set())
            result, fresh = split_fresh(job, known)  # repeated within the group
            known.update(it.submission_id for it in fresh)
            fresh_by_job.append((job, fresh))
            outcomes.append(result)
        rows = [(job.survey_id, it.version, it.submission_id, hour, compact(it.reports),
                 packed)
                for job, fresh in fresh_by_job
                for it, packed in zip(fresh, packed_rows(job, fresh), strict=True)]
        if rows:
            before = conn.total_changes
            conn.executemany(
                "INSERT INTO submissions (survey_id, version, submission_id, received_hour, "
                "reports, packed) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (survey_id, submission_id) DO NOTHING", rows)
            if conn.total_changes - before != len(rows):
                raise _StoredBefore  # rolls the insert back: the careful path sorts them out
        self._add_up(conn, fresh_by_job, hour)
        return outcomes

    def _ingest_careful(self, conn: sqlite3.Connection, jobs: Sequence[IngestJob], hour: str,
                        states: Mapping[str, tuple[dict[int, str], bool]]) -> list[Any]:
        outcomes: list[Any] = []
        known: dict[str, set[str]] = {}
        rows: list[tuple] = []
        fresh_by_job: list[tuple[IngestJob, list[PendingSubmission]]] = []
        for job in jobs:
            sid = job.survey_id
            refused = refusal(job, states[sid][0])
            if refused is not None:
                outcomes.append(refused)
                continue
            seen = known.setdefault(sid, set())
            seen |= _existing_ids(conn, sid, [it.submission_id for it in job.items
                                              if it.submission_id not in seen])
            result, fresh = split_fresh(job, seen)
            new_ids = {it.submission_id for it in fresh}
            code_of: dict[str, str] = {}  # new submission id -> the hash of its code
            if states[sid][1]:  # invite-only
                try:  # claims the codes, or refuses the whole request claiming none
                    code_of = {s: key for key, s in _claim(conn, sid, job, new_ids).items()}
                except InviteRefused as exc:
                    outcomes.append(exc)
                    continue
            seen |= new_ids
            rows.extend((sid, it.version, it.submission_id, hour, compact(it.reports),
                         packed, code_of.get(it.submission_id))
                        for it, packed in zip(fresh, packed_rows(job, fresh), strict=True))
            fresh_by_job.append((job, fresh))
            outcomes.append(result)
        if any(row[-1] is not None for row in rows):  # each with its code's design
            conn.executemany(
                "INSERT INTO submissions (survey_id, version, submission_id, received_hour, "
                "reports, packed, weight, stratum, psu, fpc, random_group, design_packed) "
                "SELECT ?, ?, ?, ?, ?, ?, i.weight, i.stratum, i.psu, i.fpc, i.random_group, "
                "i.design_packed FROM (SELECT 1) LEFT JOIN invites AS i ON i.code_sha256 = ?",
                rows)
        elif rows:
            conn.executemany(
                "INSERT INTO submissions (survey_id, version, submission_id, received_hour, "
                "reports, packed) VALUES (?, ?, ?, ?, ?, ?)", [row[:-1] for row in rows])
        self._add_up(conn, fresh_by_job, hour)
        return outcomes

    def _add_up(self, conn: sqlite3.Connection,
                fresh_by_job: Sequence[tuple[IngestJob, Sequence[PendingSubmission]]],
                hour: str) -> None:
        """Stored submissions move their versions' aggregates and counters."""
        added: dict[tuple[str, int], list[PendingSubmission]] = {}
        rules: dict[tuple[str, int], Any] = {}
        for job, fresh in fresh_by_job:
            for it in fresh:
                added.setdefault((job.survey_id, it.version), []).append(it)
                rules[(job.survey_id, it.version)] = job.rules[it.version]
        for (sid, version), items in added.items():
            deltas = rules[(sid, version)].deltas([it.reports for it in items])
            self._apply_deltas(conn, sid, version, rules[(sid, version)], deltas)
            conn.execute("UPDATE surveys SET n_submissions = n_submissions + ?, "
                         "last_submission_hour = ? WHERE id = ? AND version = ?",
                         (len(items), hour, sid, version))

    def _apply_deltas(self, conn: sqlite3.Connection, survey_id: str, version: int,
                      rules: Any, deltas: Mapping[str, Any]) -> None:
        """Merge deltas into the stored aggregates: read once, merge in memory, write once."""
        stored = dict(conn.execute("SELECT key, aggregate FROM aggregates "
                                   "WHERE survey_id = ? AND version = ?", (survey_id, version)))
        writes = []
        for key in sorted(deltas):
            text = _parsed.merged_text(
                (self.path, survey_id, version, key), stored.get(key), deltas[key],
                lambda data, key=key: rules.parse_aggregate(key, data))
            writes.append((survey_id, version, key, text))
        conn.executemany("INSERT INTO aggregates (survey_id, version, key, aggregate) "
                         "VALUES (?, ?, ?, ?) ON CONFLICT (survey_id, version, key) "
                         "DO UPDATE SET aggregate = excluded.aggregate", writes)

    # --- aggregates and reports ------------------------------------------------------------

    def aggregates(self, survey_id: str, version: int) -> StoredAggregates:
        conn = self._conn()
        conn.execute("BEGIN")  # one snapshot for the aggregates and the counters
        try:
            return self._stored_in(conn, survey_id, version)
        finally:
            conn.execute("COMMIT")

    def rebuild(self, survey_id: str, version: int, rebuild: Rebuild) -> Any:
        with self._write() as conn:
            stored = self._stored_in(conn, survey_id, version)
            reports = conn.execute("SELECT version, submission_id, received_hour, reports "
                                   "FROM submissions WHERE survey_id = ? AND version = ? "
                                   "ORDER BY seq", (survey_id, version))
            outcome, replacement = rebuild(reports, stored)
            if replacement is not None:
                self._replace(conn, survey_id, version, replacement)
        return outcome

    def _stored_in(self, conn: sqlite3.Connection, survey_id: str,
                   version: int) -> StoredAggregates:
        texts = {k: [t] for k, t in conn.execute(
            "SELECT key, aggregate FROM aggregates WHERE survey_id = ? AND version = ?",
            (survey_id, version))}
        row = conn.execute("SELECT n_submissions, last_submission_hour FROM surveys "
                           "WHERE id = ? AND version = ?", (survey_id, version)).fetchone()
        n, last = row if row is not None else (0, None)
        return StoredAggregates(texts, int(n), last)

    @staticmethod
    def _replace(conn: sqlite3.Connection, survey_id: str, version: int,
                 replacement: Replacement) -> None:
        conn.execute("DELETE FROM aggregates WHERE survey_id = ? AND version = ?",
                     (survey_id, version))
        conn.executemany("INSERT INTO aggregates (survey_id, version, key, aggregate) "
                         "VALUES (?, ?, ?, ?)",
                         [(survey_id, version, k, t) for k, t in replacement.texts.items()])
        conn.execute("UPDATE surveys SET n_submissions = ?, last_submission_hour = ? "
                     "WHERE id = ? AND version = ?",
                     (replacement.n_submissions, replacement.last_submission_hour,
                      survey_id, version))

    def export_rows(self, survey_id: str, version: int | None, after: int,
                    limit: int) -> list[tuple[int, int, str, str, str]]:
        where = "survey_id = ?" + ("" if version is None else " AND version = ?")
        params: tuple[Any, ...] = (survey_id,) if version is None else (survey_id, version)
        return self._conn().execute(
            f"SELECT seq, version, submission_id, received_hour, reports FROM submissions "  # noqa: S608
            f"WHERE {where} AND seq > ? ORDER BY seq LIMIT ?", (*params, after, limit)
        ).fetchall()

    def question_reports(self, survey_id: str, version: int, qids: Sequence[str],
                         page: int) -> Iterator[tuple[str, int]]:
        paths = [_json_path(q) for q in qids]
        if len(paths) == 1:  # '->' gives the JSON text, NULL when the question is missing
            row = f"'[' || (reports -> '{paths[0]}') || ']'"
        else:  # one JSON parse per row; a missing question is null, which no report ever is
            row = "json_extract(reports, " + ", ".join(f"'{p}'" for p in paths) + ")"
        sql = (f"SELECT group_concat(CASE WHEN instr(arr, 'null') = 0 THEN arr END, ','), "  # noqa: S608
               f"count(*), max(seq) FROM (SELECT seq, {row} AS arr FROM submissions "
               f"WHERE survey_id = ? AND version = ? AND seq > ? ORDER BY seq LIMIT ?)")
        last = 0
        while True:
            text, scanned, top = self._conn().execute(
                sql, (survey_id, version, last, page)).fetchone()
            if not scanned:
                return
            yield text or "", scanned
            last = top

    def submission_table(self, survey_id: str, version: int, qids: Sequence[str],
                         widths: Sequence[int], page: int,
                         ids: bool = True) -> Iterator[tuple[str, str, int]]:
        """Every stored submission of a version, `page` at a time, in arrival order: per page
        the submission ids joined by the unit separator (\\x1f), the rows' reports of `qids`
        as JSON arrays joined by ',' (a missing question: null, or for a report of
        width > 1 an array of as many nulls), and how many submissions the page holds. The
        database extracts the columns (one JSON parse per row for the width-1 reports), so
        the caller parses only numbers (server/report_columns.py `submission_columns`)."""
        parts = []
        narrow = [_json_path(q) for q, w in zip(qids, widths, strict=True) if w == 1]
        if narrow:
            parts.append("json_extract(reports, " + ", ".join(f"'{p}'" for p in narrow) + ")"
                         if len(narrow) > 1 else f"'[' || coalesce(reports -> '{narrow[0]}', "
                         "'null') || ']'")
        for q, w in zip(qids, widths, strict=True):
            if w > 1:
                nulls = "[" + ",".join(["null"] * w) + "]"
                parts.append(f"coalesce(reports -> '{_json_path(q)}', '{nulls}')")
        row = " || ',' || ".join(parts) if parts else "'[]'"
        id_column = "group_concat(submission_id, char(31))" if ids else "''"
        sql = (f"SELECT {id_column}, group_concat({row}, ','), "  # noqa: S608
               f"count(*), max(seq) FROM (SELECT seq, submission_id, reports FROM submissions "
               f"WHERE survey_id = ? AND version = ? AND seq > ? ORDER BY seq LIMIT ?)")
        last = 0
        while True:
            id_text, text, count, top = self._conn().execute(
                sql, (survey_id, version, last, page)).fetchone()
            if not count:
                return
            yield id_text, text, count
            last = top

    def report_types(self, survey_id: str, version: int,
                     qids: Sequence[str]) -> dict[str, str | None]:
        """The JSON type of each question's stored reports ('true'/'false' for a yes/no
        report, 'integer', 'array'), read from the first submission that answered it (None:
        none did). Reports of a question are checked alike at ingest, so one tells all."""
        out: dict[str, str | None] = {}
        for qid in qids:
            path = _json_path(qid)
            row = self._conn().execute(
                f"SELECT json_type(reports, '{path}') AS t FROM submissions WHERE "  # noqa: S608
                f"survey_id = ? AND version = ? AND t IS NOT NULL LIMIT 1",
                (survey_id, version)).fetchone()
            out[qid] = None if row is None else str(row[0])
        return out

    def packed_pages(self, survey_id: str, version: int, page: int, reports: bool = True,
                     designs: bool = True) -> Iterator[PackedPage]:
        """As Store.packed_pages: the database joins a page's packed reports and packed designs
        (server/store/packed_designs.py; a row without a design joins the bytes of none) in one
        pass (the index, then each row once), one value each per page and no Python object per
        row, read with numpy. group_concat takes a BLOB's bytes as they are (zero bytes
        included) in a UTF-8 database, which ldpsurvey's are; in another encoding it would
        transcode them, so there a page's reports are None (the JSON path) and its designs are
        read from the columns, as are a page's with a row stored before schema 8 (a design but
        no packed bytes) or 9 (packed without its label codes): the numbers as SQLite's REALs
        (the cursor's floats, exact; NULL, no design, becomes nan) into a numpy record array,
        and the labels joined by the database."""
        utf8 = self._conn().execute("PRAGMA encoding").fetchone()[0] == "UTF-8"
        where = "WHERE survey_id = ? AND version = ? AND seq > ? AND seq <= ? ORDER BY seq"
        if designs:
            # whether any code carries each column: each look-up stops at the first that does
            # (random groups: by their partial index, idx_invites_grouped)
            has_fpc, has_stratum, has_psu, has_group = (self._conn().execute(
                f"SELECT EXISTS (SELECT 1 FROM invites WHERE survey_id = ? AND {c} IS NOT "  # noqa: S608
                "NULL)", (survey_id,)).fetchone()[0] == 1
                for c in ("fpc", "stratum", "psu", "random_group"))
            # NULL as +inf (1e999: SQLite keeps no NaN), made nan below; a stored design's
            # numbers are finite (checked when its code was made)
            numbers = ["ifnull(weight, 1e999)", *(["ifnull(fpc, 1e999)"] if has_fpc else []),
                       *(["coalesce(random_group, 0)"] if has_group else [])]
            record = np.dtype([(f"c{j}", np.int64 if has_group and j == len(numbers) - 1
                                else np.float64) for j in range(len(numbers))])
            rows_sql = f"SELECT {', '.join(numbers)} FROM submissions {where}"  # noqa: S608
            labels = [
                *(["group_concat(coalesce(stratum, ''), char(31))"] if has_stratum else []),
                *(["group_concat(coalesce(psu, ''), char(31))"] if has_psu else [])]
            labels_sql = (f"SELECT {', '.join(labels) or 'NULL'} FROM (SELECT stratum, psu "  # noqa: S608
                          f"FROM submissions {where})")
        # d is NULL only for a row with a design but no packed bytes
        design_column = (f"CASE WHEN weight IS NULL THEN X'{NO_DESIGN.hex()}' ELSE "
                         "design_packed END" if designs else "NULL")
        head_sql = ("SELECT count(*), max(seq), CAST(group_concat(packed, '') AS BLOB), "  # noqa: S608
                    "count(packed), CAST(group_concat(d, '') AS BLOB), count(d) FROM (SELECT "
                    f"seq, {'packed' if reports else 'NULL AS packed'}, {design_column} AS d "
                    "FROM submissions WHERE survey_id = ? AND version = ? AND seq > ? "
                    "ORDER BY seq LIMIT ?)")
        last = 0
        while True:
            count, top, blob, packed, design_blob, designed = self._conn().execute(
                head_sql, (survey_id, version, last, page)).fetchone()
            if not count:
                return
            found = None
            if designs:
                # every row packed, and by schema 9 (24 bytes before: the blob would be shorter)
                if designed == count and utf8 and len(design_blob) == count * ROW_BYTES:
                    weight, fpc, group, stratum, psu = unpack_designs(design_blob, count)
                else:
                    bounds = (survey_id, version, last, top)
                    weight, fpc, group = self._design_columns(rows_sql, record, bounds,
                                                              has_fpc, has_group)
                    texts = iter(self._conn().execute(labels_sql, bounds).fetchone())
                    stratum = next(texts) if has_stratum else None
                    psu = next(texts) if has_psu else None
                found = DesignPage(weight, fpc if has_fpc else None,
                                   stratum if has_stratum else None,
                                   psu if has_psu else None, group if has_group else None)
            yield PackedPage(count, blob if reports and packed == count and utf8 else None,
                             found)
            last = top

    def _design_columns(self, rows_sql: str, record: np.dtype, bounds: tuple,
                        has_fpc: bool, has_group: bool) -> tuple[Any, Any, Any]:
        """A page's weight, fpc and random group read from the columns (None: not read)."""
        table = np.fromiter(self._conn().execute(rows_sql, bounds), dtype=record)

        def real(j: int) -> np.ndarray:
            column = np.ascontiguousarray(table[f"c{j}"])
            column[np.isinf(column)] = np.nan
            return column

        return (real(0), real(1) if has_fpc else None,
                np.ascontiguousarray(table[f"c{len(record) - 1}"]) if has_group else None)

    def designed_invites(self, survey_id: str) -> int:
        """How many of the survey's invitation codes carry a design."""
        return int(self._conn().execute("SELECT count(*) FROM invites WHERE survey_id = ? AND "
                                        "weight IS NOT NULL", (survey_id,)).fetchone()[0])

    # --- moving data ------------------------------------------------------------------------

    def is_empty(self) -> bool:
        import sqlite_utils  # here, not at the top: it imports pandas (0.4 s of CPU), and
        # opening a store (every command, `report --rake` included) need not

        db = sqlite_utils.Database(self._conn())
        return all(db.table(t).count == 0
                   for t in ("surveys", "tokens", "invites", "invite_surveys"))

    def dump(self) -> Dump:
        conn = self._conn()
        return Dump(
            surveys=self.list_surveys(),
            tokens=conn.execute("SELECT id, name, token_sha256, created, revoked FROM tokens "
                                "ORDER BY id").fetchall(),
            invite_surveys=conn.execute("SELECT survey_id, created, carried FROM "
                                        "invite_surveys ORDER BY survey_id").fetchall(),
            invites=conn.execute("SELECT code_sha256, survey_id, submission_id, weight, "
                                 "stratum, psu, fpc, random_group, carried FROM invites "
                                 "ORDER BY code_sha256").fetchall(),
            labels=conn.execute("SELECT survey_id, kind, code, label FROM design_labels "
                                "ORDER BY survey_id, kind, code").fetchall())

    def all_reports(self) -> Iterable[tuple[str, int, str, str, str]]:
        return self._conn().execute("SELECT survey_id, version, submission_id, received_hour, "
                                    "reports, packed FROM submissions ORDER BY seq")

    def load(self, dump: Dump, reports: Iterable[tuple[str, int, str, str, str]],
             texts: Mapping[tuple[str, int], Replacement]) -> None:
        with self._write() as conn:
            conn.executemany("INSERT INTO surveys (id, version, manifest, sha256, status, "
                             "created_hour, n_submissions, last_submission_hour) "
                             "VALUES (?, ?, ?, ?, ?, ?, 0, NULL)",
                             [(s.id, s.version, s.manifest, s.sha256, s.status, s.created_hour)
                              for s in dump.surveys])
            conn.executemany("INSERT INTO tokens (id, name, token_sha256, created, revoked) "
                             "VALUES (?, ?, ?, ?, ?)", dump.tokens)
            conn.executemany("INSERT INTO invite_surveys (survey_id, created, carried) "
                             "VALUES (?, ?, ?)", dump.invite_surveys)
            conn.executemany("INSERT INTO invites (code_sha256, survey_id, submission_id, "
                             "weight, stratum, psu, fpc, random_group, carried, design_packed) "
                             "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", dump.packed_invites())
            conn.executemany("INSERT INTO design_labels (survey_id, kind, code, label) "
                             "VALUES (?, ?, ?, ?)", dump.design_labels())
            conn.executemany("INSERT INTO submissions (survey_id, version, submission_id, "
                             "received_hour, reports, packed, weight, stratum, psu, fpc, "
                             "random_group, design_packed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, "
                             "?, ?, ?)", dump.with_designs(reports))
            for (sid, version), replacement in texts.items():
                self._replace(conn, sid, version, replacement)


def _json_path(qid: str) -> str:
    if not QUESTION_ID.fullmatch(qid):  # the only text put into SQL: checked, never trusted
        raise StoreError(f"not a question id: {qid!r}")
    return '$."' + qid + '"'


def _sync_directory(path: str) -> None:
    """fsync a directory, so that a file just created in it survives a power loss."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _existing_ids(conn: sqlite3.Connection, survey_id: str, ids: list[str]) -> set[str]:
    found: set[str] = set()
    unique = list(dict.fromkeys(ids))
    for start in range(0, len(unique), _IN_CHUNK):
        chunk = unique[start:start + _IN_CHUNK]
        marks = ",".join("?" * len(chunk))
        rows = conn.execute(f"SELECT submission_id FROM submissions WHERE survey_id = ? "  # noqa: S608
                            f"AND submission_id IN ({marks})", (survey_id, *chunk))
        found.update(r[0] for r in rows)
    return found


class _StoredBefore(Exception):
    """The fast path met a submission id stored before: take the careful path."""


def _survey_state(conn: sqlite3.Connection, survey_id: str) -> tuple[dict[int, str], bool]:
    """version -> status of every stored version, and whether the survey is invite-only: one
    query, read inside the write transaction."""
    rows = conn.execute("SELECT version, status, EXISTS (SELECT 1 FROM invite_surveys "
                        "WHERE survey_id = ?1) FROM surveys WHERE id = ?1", (survey_id,))
    statuses: dict[int, str] = {}
    invite_only = False
    for version, status, invited in rows:
        statuses[version] = status
        invite_only = bool(invited)
    return statuses, invite_only


def _stored_designs(conn: sqlite3.Connection, survey_id: str) -> StoredDesigns:
    plain = conn.execute("SELECT count(*) FROM invites WHERE survey_id = ? AND weight IS NULL",
                         (survey_id,)).fetchone()[0]
    designed = conn.execute("SELECT stratum, psu, fpc, count(*) FROM invites WHERE "
                            "survey_id = ? AND weight IS NOT NULL GROUP BY stratum, psu, fpc",
                            (survey_id,)).fetchall()
    grouped = conn.execute("SELECT EXISTS (SELECT 1 FROM invites WHERE survey_id = ? "
                           "AND random_group IS NOT NULL)", (survey_id,)).fetchone()[0]
    names = conn.execute("SELECT carried FROM invite_surveys WHERE survey_id = ?",
                         (survey_id,)).fetchone()
    return StoredDesigns(int(plain), [tuple(r) for r in designed], bool(grouped),
                         tuple(json.loads(names[0])) if names and names[0] else ())


def _claim(conn: sqlite3.Connection, survey_id: str, job: IngestJob,
           new_ids: set[str]) -> dict[str, str]:
    """Binds the request's new submission ids to their codes (InviteRefused: none); returns
    the bindings, code hash -> submission id."""
    hashes = sorted({digest(it.invite) for it in job.items if it.invite is not None})
    bound: dict[str, str | None] = {}
    for start in range(0, len(hashes), _IN_CHUNK):
        chunk = hashes[start:start + _IN_CHUNK]
        marks = ",".join("?" * len(chunk))
        bound.update(conn.execute(
            f"SELECT code_sha256, submission_id FROM invites WHERE survey_id = ? "  # noqa: S608
            f"AND code_sha256 IN ({marks})", (survey_id, *chunk)).fetchall())
    bindings = plan_claims([(it.submission_id, it.invite) for it in job.items], new_ids, bound)
    conn.executemany("UPDATE invites SET submission_id = ? WHERE code_sha256 = ?",
                     [(sid, key) for key, sid in bindings.items()])
    return bindings
