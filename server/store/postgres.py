"""The PostgreSQL store: several server processes on one database (psycopg 3 + a pool).

Ingest without a hot row: submissions go in with one `INSERT ... SELECT FROM unnest(...)
ON CONFLICT DO NOTHING RETURNING submission_id` (the ids it returns are the new ones; the rest
are duplicates). The arrays go as binary parameters (`%b`): in text, psycopg escapes each
element with a regular expression: about half the server's CPU per batch of 1,000
(bench/RESULTS.md, "bench_store's PostgreSQL ingest, fixed"). Aggregates and submission
counters are kept as N_SHARDS partial rows per key; each transaction picks one shard at random
and locks only that shard's rows (in key order), so concurrent writers rarely wait on each
other; readers merge the shards.

Consistency: an ingest takes `FOR KEY SHARE` on its survey version rows (writers never block
each other there) and re-checks the status under it; closing a survey and recomputing its
aggregates take `FOR UPDATE`, which waits for ingests in flight and holds back new ones.
Serialization failures and deadlocks are retried with the whole transaction; a request is
answered only after COMMIT returned.

Credentials come from the URL, the PG* environment variables or a password file (libpq reads
PGPASSFILE / ~/.pgpass); messages show the URL with any password replaced by ***.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np
import psycopg
from psycopg import errors as pg_errors
from psycopg_pool import ConnectionPool, PoolTimeout

from ..common.db_target import redact, scrub
from ..common.errors import STORE_UNAVAILABLE, StoreError, StoreUnavailable
from ..invites.claims import digest, plan_claims
from .base import (
    DesignPage,
    Dump,
    IngestJob,
    IngestResult,
    InviteCounts,
    InviteDesign,
    PackedPage,
    ParsedCache,
    Rebuild,
    Replacement,
    StoredAggregates,
    StoredDesigns,
    SurveyRow,
    TokenRow,
    by_version,
    compact,
    current_hour,
    now_second,
    packed_rows,
    refusal,
    split_fresh,
)
from .packed_designs import NO_DESIGN, ROW_BYTES, LabelNumbers, labels_by_code, unpack_designs
from .schema import POSTGRES_MIGRATIONS

log = logging.getLogger("ldpsurvey.server.store")

N_SHARDS = 16
MAX_ATTEMPTS = 8  # a transaction that keeps failing on conflicts is an error after this
_MIGRATION_LOCK = 0x6C6470_0001  # pg_advisory_xact_lock key: one migrating process at a time
_RETRIED = (pg_errors.SerializationFailure, pg_errors.DeadlockDetected)
_SURVEY_COLUMNS = """SELECT s.id, s.version, s.manifest, s.sha256, s.status, s.created_hour,
    coalesce((SELECT sum(n) FROM submission_counts c
              WHERE c.survey_id = s.id AND c.version = s.version), 0)::bigint,
    (SELECT max(last_hour) FROM submission_counts c
     WHERE c.survey_id = s.id AND c.version = s.version)
    FROM surveys s """
_parsed = ParsedCache()
T = TypeVar("T")


def _numbers(text: str, kind: Any) -> Any:
    """The numbers of a column joined by ',' ('nan' where missing) as an array."""
    return np.fromstring(text, dtype=kind, sep=",")


def _fits(text: str) -> bool:
    """Whether PostgreSQL text can hold this string (no NUL, valid UTF-8). A looked-up id
    that cannot be stored cannot match a stored row."""
    if "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class PgStore:
    """A store in a PostgreSQL database; thread-safe (a pooled connection per operation)."""

    backend = "postgresql"
    ingest_process = None  # ingest runs in the PostgreSQL server's own processes

    def __init__(self, url: str, *, migrate: bool = True, pool_size: int = 8) -> None:
        self.url = url
        self._shown = redact(url)
        try:  # one direct attempt first: a wrong URL or password fails at once, in one line
            psycopg.connect(url, connect_timeout=10).close()
        except psycopg.Error as exc:
            raise StoreError(f"cannot connect to {self._shown}: {self._detail(exc)}") from None
        self._pool = ConnectionPool(url, min_size=1, max_size=max(1, pool_size), open=False,
                                    timeout=10, name="ldpsurvey",
                                    kwargs={"autocommit": True})
        try:
            self._pool.open(wait=True, timeout=30)
        except PoolTimeout:
            self._pool.close()
            raise StoreError(f"cannot connect to {self._shown}: the connection pool did not "
                             "fill in time") from None
        try:
            if migrate:
                self._migrate()
            elif self._check_version() < len(POSTGRES_MIGRATIONS):
                raise StoreError(f"{self._shown} holds no ldpsurvey data of this version (schema "
                                 f"{self.schema_version()} < {len(POSTGRES_MIGRATIONS)}); "
                                 "`ldpsurvey serve` or `recompute` on it migrates it")
        except BaseException:
            self._pool.close()
            raise

    def describe(self) -> str:
        return self._shown

    def close(self) -> None:
        self._pool.close()

    def ping(self) -> None:
        with self._read() as conn:
            conn.execute("SELECT 1").fetchone()

    # --- transactions -----------------------------------------------------------------------

    @contextmanager
    def _read(self) -> Iterator[psycopg.Connection]:
        """A pooled connection in autocommit mode (each statement its own snapshot)."""
        try:
            with self._pool.connection() as conn:
                yield conn
        except (PoolTimeout, psycopg.OperationalError) as exc:
            raise self._unavailable(exc) from None

    def _write(self, work: Callable[[psycopg.Connection], T]) -> T:
        """Run `work` in one transaction, retrying it whole on serialization failures and
        deadlocks; returns after COMMIT."""
        for attempt in range(1, MAX_ATTEMPTS + 1):
            try:
                with self._pool.connection() as conn, conn.transaction():
                    return work(conn)
            except _RETRIED as exc:
                if attempt == MAX_ATTEMPTS:  # a 503 (try again), not a 500: nothing is stored
                    raise StoreUnavailable(f"the database refused this transaction {attempt} "
                                           "times (conflicting writers); try again") from exc
                time.sleep(random.uniform(0, 0.01 * attempt))  # noqa: S311 (jitter only)
            except (PoolTimeout, psycopg.OperationalError) as exc:
                raise self._unavailable(exc) from None
        raise AssertionError("unreachable")

    def _detail(self, exc: Exception) -> str:
        """The driver's first line about `exc`, without any piece of the password."""
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return scrub(first, self.url)

    def _unavailable(self, exc: Exception) -> StoreUnavailable:
        # The detail names the database's user, host and port: the operator's log gets it,
        # a respondent's device does not.
        log.warning("the database %s is unavailable: %s", self._shown, self._detail(exc))
        return StoreUnavailable(STORE_UNAVAILABLE)

    # --- schema -----------------------------------------------------------------------------

    def schema_version(self) -> int:
        with self._read() as conn:
            return self._version_in(conn)

    @staticmethod
    def _version_in(conn: psycopg.Connection) -> int:
        if conn.execute("SELECT to_regclass('schema_version')").fetchone()[0] is None:
            return 0
        return int(conn.execute("SELECT max(version) FROM schema_version").fetchone()[0] or 0)

    def _check_version(self) -> int:
        current = self.schema_version()
        if current > len(POSTGRES_MIGRATIONS):
            raise StoreError(f"database schema version {current} is newer than this ldpsurvey "
                             f"({len(POSTGRES_MIGRATIONS)}); upgrade ldpsurvey")
        return current

    def _migrate(self) -> None:
        if self._check_version() == len(POSTGRES_MIGRATIONS):
            return

        def work(conn: psycopg.Connection) -> None:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            conn.execute("CREATE TABLE IF NOT EXISTS schema_version "
                         "(version integer PRIMARY KEY, applied text NOT NULL)")
            current = self._version_in(conn)  # another process may have migrated meanwhile
            for number in range(current + 1, len(POSTGRES_MIGRATIONS) + 1):
                for statement in POSTGRES_MIGRATIONS[number - 1]:
                    conn.execute(statement)
                conn.execute("INSERT INTO schema_version (version, applied) VALUES (%s, %s)",
                             (number, now_second()))

        try:
            self._write(work)
        except psycopg.Error as exc:
            raise StoreError(f"cannot migrate {self._shown}: {self._detail(exc)}") from None

    # --- surveys ----------------------------------------------------------------------------

    def put_survey(self, survey_id: str, version: int, manifest: str, sha256: str,
                   hour: str) -> tuple[SurveyRow, bool]:
        def work(conn: psycopg.Connection) -> bool:
            cur = conn.execute("INSERT INTO surveys (id, version, manifest, sha256, status, "
                               "created_hour) VALUES (%s, %s, %s, %s, 'open', %s) "
                               "ON CONFLICT DO NOTHING", (survey_id, version, manifest,
                                                          sha256, hour))
            return cur.rowcount == 1

        created = self._write(work)
        row = self.get_survey(survey_id, version)
        assert row is not None
        return row, created

    def get_survey(self, survey_id: str, version: int | None = None) -> SurveyRow | None:
        if not _fits(survey_id):
            return None
        with self._read() as conn:
            if version is None:
                row = conn.execute(_SURVEY_COLUMNS + "WHERE s.id = %s ORDER BY s.version DESC "
                                   "LIMIT 1", (survey_id,)).fetchone()
            else:
                row = conn.execute(_SURVEY_COLUMNS + "WHERE s.id = %s AND s.version = %s",
                                   (survey_id, version)).fetchone()
        return None if row is None else SurveyRow(*row)

    def list_surveys(self) -> list[SurveyRow]:
        with self._read() as conn:
            rows = conn.execute(_SURVEY_COLUMNS + "ORDER BY s.id, s.version").fetchall()
        return [SurveyRow(*r) for r in rows]

    def survey_versions(self, survey_id: str) -> dict[int, tuple[str, str]]:
        if not _fits(survey_id):
            return {}
        with self._read() as conn:
            rows = conn.execute("SELECT version, sha256, status FROM surveys WHERE id = %s",
                                (survey_id,)).fetchall()
        return {r[0]: (r[1], r[2]) for r in rows}

    def close_survey(self, survey_id: str) -> int:
        if not _fits(survey_id):
            return 0
        def work(conn: psycopg.Connection) -> int:
            # FOR UPDATE waits for ingests in flight (they hold FOR KEY SHARE) and holds back
            # new ones, so nothing is stored in a version after its close committed.
            conn.execute("SELECT 1 FROM surveys WHERE id = %s ORDER BY version FOR UPDATE",
                         (survey_id,))
            return conn.execute("UPDATE surveys SET status = 'closed' WHERE id = %s",
                                (survey_id,)).rowcount

        return self._write(work)

    # --- tokens -----------------------------------------------------------------------------

    def add_token(self, name: str, token_sha256: str, created: str) -> int:
        return self._write(lambda conn: int(conn.execute(
            "INSERT INTO tokens (name, token_sha256, created) VALUES (%s, %s, %s) RETURNING id",
            (name, token_sha256, created)).fetchone()[0]))

    def list_tokens(self) -> list[TokenRow]:
        with self._read() as conn:
            rows = conn.execute("SELECT id, name, created, revoked FROM tokens "
                                "ORDER BY id").fetchall()
        return [TokenRow(*r) for r in rows]

    def revoke_token(self, token_id: int, when: str) -> TokenRow | None:
        row = self._write(lambda conn: conn.execute(
            "UPDATE tokens SET revoked = coalesce(revoked, %s) WHERE id = %s "
            "RETURNING id, name, created, revoked", (when, token_id)).fetchone())
        return None if row is None else TokenRow(*row)

    def token_state(self, token_sha256: str) -> str | None:
        with self._read() as conn:
            row = conn.execute("SELECT revoked FROM tokens WHERE token_sha256 = %s",
                               (token_sha256,)).fetchone()
        return None if row is None else ("active" if row[0] is None else "revoked")

    # --- invitations ------------------------------------------------------------------------

    def add_invites(self, survey_id: str, code_hashes: Sequence[str],
                    designs: Sequence[InviteDesign] | None = None,
                    check: Callable[[StoredDesigns], None] | None = None,
                    carried: tuple[tuple[str, ...], Sequence[str]] | None = None) -> bool:
        if not _fits(survey_id):
            return False
        def work(conn: psycopg.Connection) -> bool:
            # FOR UPDATE, as close_survey: waits for ingests in flight (they hold FOR KEY
            # SHARE) and holds back new ones until this commits, so no submission without a
            # code is stored after the survey became invite-only (issue 39).
            if not conn.execute("SELECT 1 FROM surveys WHERE id = %s ORDER BY version "
                                "FOR UPDATE", (survey_id,)).fetchall():
                return False
            conn.execute("INSERT INTO invite_surveys (survey_id, created) VALUES (%s, %s) "
                         "ON CONFLICT DO NOTHING", (survey_id, now_second()))
            if check is not None:  # under the invite_surveys row's lock: one adder at a time
                conn.execute("SELECT 1 FROM invite_surveys WHERE survey_id = %s FOR UPDATE",
                             (survey_id,))
                check(self._stored_designs(conn, survey_id))
            with conn.cursor() as cur:
                if carried is not None:
                    names, values = carried
                    conn.execute("UPDATE invite_surveys SET carried = %s WHERE survey_id = %s",
                                 (json.dumps(list(names)), survey_id))
                    cur.executemany(
                        "INSERT INTO invites (survey_id, code_sha256, carried) "
                        "VALUES (%s, %s, %s)",
                        [(survey_id, h, v) for h, v in zip(code_hashes, values, strict=True)])
                elif designs is None:
                    cur.executemany("INSERT INTO invites (survey_id, code_sha256) "
                                    "VALUES (%s, %s)", [(survey_id, h) for h in code_hashes])
                else:
                    # under the invite_surveys row's lock: one adder numbers the labels at a time
                    conn.execute("SELECT 1 FROM invite_surveys WHERE survey_id = %s FOR UPDATE",
                                 (survey_id,))
                    numbers = LabelNumbers(conn.execute(
                        "SELECT kind, code, label FROM design_labels WHERE survey_id = %s",
                        (survey_id,)).fetchall())
                    cur.executemany(
                        "INSERT INTO invites (survey_id, code_sha256, weight, stratum, psu, "
                        "fpc, random_group, design_packed) VALUES (%s, %s, %s, %s, %s, %s, %s, "
                        "%s)",
                        [(survey_id, h, d.weight, d.stratum, d.psu, d.fpc, d.group,
                          numbers.pack(d)) for h, d in zip(code_hashes, designs, strict=True)])
                    cur.executemany("INSERT INTO design_labels (survey_id, kind, code, label) "
                                    "VALUES (%s, %s, %s, %s)",
                                    [(survey_id, *new) for new in numbers.new])
            return True

        return self._write(work)

    @staticmethod
    def _stored_designs(conn: psycopg.Connection, survey_id: str) -> StoredDesigns:
        plain = conn.execute("SELECT count(*) FROM invites WHERE survey_id = %s AND weight IS "
                             "NULL", (survey_id,)).fetchone()[0]
        designed = conn.execute("SELECT stratum, psu, fpc, count(*) FROM invites WHERE "
                                "survey_id = %s AND weight IS NOT NULL GROUP BY stratum, psu, "
                                "fpc", (survey_id,)).fetchall()
        grouped = conn.execute("SELECT EXISTS (SELECT 1 FROM invites WHERE survey_id = %s "
                               "AND random_group IS NOT NULL)", (survey_id,)).fetchone()[0]
        names = conn.execute("SELECT carried FROM invite_surveys WHERE survey_id = %s",
                             (survey_id,)).fetchone()
        return StoredDesigns(int(plain), [tuple(r) for r in designed], bool(grouped),
                             tuple(json.loads(names[0])) if names and names[0] else ())

    def invite_designs(self, survey_id: str) -> list[tuple[str | None, InviteDesign]]:
        if not _fits(survey_id):
            return []
        with self._read() as conn:
            rows = conn.execute(
                "SELECT submission_id, weight, stratum, psu, fpc, random_group FROM invites "
                "WHERE survey_id = %s AND weight IS NOT NULL", (survey_id,)).fetchall()
        make = InviteDesign._make
        return [(row[0], make(row[1:])) for row in rows]

    def invite_carried_names(self, survey_id: str) -> tuple[str, ...]:
        if not _fits(survey_id):
            return ()
        with self._read() as conn:
            row = conn.execute("SELECT carried FROM invite_surveys WHERE survey_id = %s",
                               (survey_id,)).fetchone()
        return tuple(json.loads(row[0])) if row is not None and row[0] else ()

    def invite_carried(self, survey_id: str, code_sha256: str) -> tuple[bool, str | None]:
        if not _fits(survey_id):
            return False, None
        with self._read() as conn:
            row = conn.execute("SELECT carried FROM invites WHERE survey_id = %s AND "
                               "code_sha256 = %s", (survey_id, code_sha256)).fetchone()
        return (False, None) if row is None else (True, row[0])

    def submission_carried(self, survey_id: str, version: int) -> list[tuple[str, str]]:
        if not _fits(survey_id):
            return []
        with self._read() as conn:
            rows = conn.execute(
                "SELECT s.submission_id, i.carried FROM submissions AS s JOIN invites AS i ON "
                "i.survey_id = s.survey_id AND i.submission_id = s.submission_id WHERE "
                "s.survey_id = %s AND s.version = %s AND i.carried IS NOT NULL ORDER BY s.seq",
                (survey_id, version)).fetchall()
        return [(r[0], r[1]) for r in rows]

    def invite_counts(self, survey_id: str) -> InviteCounts:
        if not _fits(survey_id):
            return InviteCounts(survey_id, False, 0, 0)
        with self._read() as conn:
            only = conn.execute("SELECT 1 FROM invite_surveys WHERE survey_id = %s",
                                (survey_id,)).fetchone() is not None
            issued, used = conn.execute("SELECT count(*), count(submission_id) FROM invites "
                                        "WHERE survey_id = %s", (survey_id,)).fetchone()
        return InviteCounts(survey_id, only, int(issued), int(used))

    def invite_only(self, survey_id: str) -> bool:
        if not _fits(survey_id):
            return False
        with self._read() as conn:
            return conn.execute("SELECT 1 FROM invite_surveys WHERE survey_id = %s",
                                (survey_id,)).fetchone() is not None

    # --- ingest -----------------------------------------------------------------------------

    def ingest(self, job: IngestJob) -> IngestResult:
        return self._write(lambda conn: self._ingest(conn, job))

    def _ingest(self, conn: psycopg.Connection, job: IngestJob) -> IngestResult:
        sid = job.survey_id
        # Every version's status, under a lock that close_survey and add_invites wait for
        # (FOR UPDATE) and that waits for them: a locked row is read as last committed.
        statuses = dict(conn.execute(
            "SELECT version, status FROM surveys WHERE id = %s ORDER BY version FOR KEY SHARE",
            (sid,)).fetchall())
        # Whether invitations are needed: read after the lock, in a statement of its own (READ
        # COMMITTED gives it a new snapshot), so that it sees an add_invites the lock waited
        # for; a subquery of the locking statement would read the snapshot from before.
        invite_only = bool(statuses) and conn.execute(
            "SELECT EXISTS (SELECT 1 FROM invite_surveys WHERE survey_id = %s)",
            (sid,)).fetchone()[0]
        refused = refusal(job, statuses)  # closed, or a newer version, since validation
        if refused is not None:
            raise refused
        _, candidates = split_fresh(job, set())  # first occurrence of each id in the request
        hour = current_hour()
        inserted = {r[0] for r in conn.execute(
            "INSERT INTO submissions (survey_id, version, submission_id, received_hour, "
            "reports, packed) SELECT %s, v, i, %s, r, p FROM unnest(%b::integer[], %b::text[], "
            "%b::text[], %b::bytea[]) AS t(v, i, r, p) ON CONFLICT (survey_id, submission_id) "
            "DO NOTHING RETURNING submission_id",
            (sid, hour, [it.version for it in candidates],
             [it.submission_id for it in candidates],
             [compact(it.reports) for it in candidates],
             packed_rows(job, candidates))).fetchall()}
        result, fresh = split_fresh(job, {it.submission_id for it in candidates} - inserted)
        if invite_only:  # raises InviteRefused: the transaction rolls back
            bindings = self._claim(conn, job, inserted)
            if bindings:  # each new submission carries its code's design
                conn.execute(
                    "UPDATE submissions AS s SET weight = i.weight, stratum = i.stratum, "
                    "psu = i.psu, fpc = i.fpc, random_group = i.random_group, "
                    "design_packed = i.design_packed FROM invites AS i "
                    "WHERE i.survey_id = %s AND i.code_sha256 = ANY(%s) AND s.survey_id = "
                    "i.survey_id AND s.submission_id = i.submission_id", (sid, list(bindings)))
        shard = random.randrange(N_SHARDS)  # noqa: S311 (spreads writers; not a secret)
        for version, items in sorted(by_version(fresh).items()):
            rules = job.rules[version]
            deltas = rules.deltas([it.reports for it in items])
            self._apply_deltas(conn, sid, version, shard, rules, deltas)
            conn.execute(
                "INSERT INTO submission_counts (survey_id, version, shard, n, last_hour) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (survey_id, version, shard) DO UPDATE "
                "SET n = submission_counts.n + excluded.n, "
                "last_hour = greatest(submission_counts.last_hour, excluded.last_hour)",
                (sid, version, shard, len(items), hour))
        return result

    @staticmethod
    def _claim(conn: psycopg.Connection, job: IngestJob, new_ids: set[str]) -> dict[str, str]:
        """Binds the request's new submission ids to their codes (InviteRefused: none);
        returns the bindings, code hash -> submission id."""
        hashes = sorted({digest(it.invite) for it in job.items if it.invite is not None})
        bound = dict(conn.execute(
            "SELECT code_sha256, submission_id FROM invites WHERE survey_id = %s "
            "AND code_sha256 = ANY(%s) ORDER BY code_sha256 FOR UPDATE",
            (job.survey_id, hashes)).fetchall())
        bindings = plan_claims([(it.submission_id, it.invite) for it in job.items], new_ids,
                               bound)
        if bindings:
            conn.execute("UPDATE invites SET submission_id = t.s FROM unnest(%b::text[], "
                         "%b::text[]) AS t(c, s) WHERE survey_id = %s AND code_sha256 = t.c",
                         (list(bindings), list(bindings.values()), job.survey_id))
        return bindings

    def _apply_deltas(self, conn: psycopg.Connection, survey_id: str, version: int, shard: int,
                      rules: Any, deltas: Mapping[str, Any]) -> None:
        """Merge deltas into one shard's rows of these keys, locked in key order."""
        keys = sorted(deltas)
        select = ("SELECT key, aggregate FROM aggregates WHERE survey_id = %s AND version = %s "
                  "AND shard = %s AND key = ANY(%s) ORDER BY key FOR UPDATE")
        stored = dict(conn.execute(select, (survey_id, version, shard, keys)).fetchall())
        missing = [k for k in keys if k not in stored]
        if missing:  # first write to this shard: make the rows, then lock them
            conn.execute("INSERT INTO aggregates (survey_id, version, key, shard, aggregate) "
                         "SELECT %s, %s, k, %s, a FROM unnest(%b::text[], %b::text[]) "
                         "AS t(k, a) ON CONFLICT DO NOTHING",
                         (survey_id, version, shard, missing,
                          [compact(rules.empty_aggregate(k).to_dict()) for k in missing]))
            stored.update(conn.execute(select, (survey_id, version, shard, missing)).fetchall())
        texts = [_parsed.merged_text((self.url, survey_id, version, key, shard), stored[key],
                                     deltas[key],
                                     lambda data, key=key: rules.parse_aggregate(key, data))
                 for key in keys]
        conn.execute("UPDATE aggregates SET aggregate = t.a FROM unnest(%b::text[], %b::text[]) "
                     "AS t(k, a) WHERE survey_id = %s AND version = %s AND shard = %s "
                     "AND key = t.k", (keys, texts, survey_id, version, shard))

    # --- aggregates and reports ------------------------------------------------------------

    def aggregates(self, survey_id: str, version: int) -> StoredAggregates:
        with self._read() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")  # one snapshot
            return self._stored_in(conn, survey_id, version)

    @staticmethod
    def _stored_in(conn: psycopg.Connection, survey_id: str, version: int) -> StoredAggregates:
        texts: dict[str, list[str]] = {}
        for key, text in conn.execute("SELECT key, aggregate FROM aggregates WHERE survey_id = "
                                      "%s AND version = %s ORDER BY key, shard",
                                      (survey_id, version)):
            texts.setdefault(key, []).append(text)
        n, last = conn.execute("SELECT coalesce(sum(n), 0)::bigint, max(last_hour) FROM "
                               "submission_counts WHERE survey_id = %s AND version = %s",
                               (survey_id, version)).fetchone()
        return StoredAggregates(texts, int(n), last)

    def rebuild(self, survey_id: str, version: int, rebuild: Rebuild) -> Any:
        def work(conn: psycopg.Connection) -> Any:
            conn.execute("SELECT 1 FROM surveys WHERE id = %s AND version = %s FOR UPDATE",
                         (survey_id, version))
            stored = self._stored_in(conn, survey_id, version)
            with conn.cursor(name="ldpsurvey_rebuild") as cur:
                cur.itersize = 5000
                cur.execute("SELECT version, submission_id, received_hour, reports FROM "
                            "submissions WHERE survey_id = %s AND version = %s ORDER BY seq",
                            (survey_id, version))
                outcome, replacement = rebuild(cur, stored)
            if replacement is not None:
                self._replace(conn, survey_id, version, replacement)
            return outcome

        return self._write(work)

    @staticmethod
    def _replace(conn: psycopg.Connection, survey_id: str, version: int,
                 replacement: Replacement) -> None:
        conn.execute("DELETE FROM aggregates WHERE survey_id = %s AND version = %s",
                     (survey_id, version))
        conn.execute("INSERT INTO aggregates (survey_id, version, key, shard, aggregate) "
                     "SELECT %s, %s, k, 0, a FROM unnest(%b::text[], %b::text[]) AS t(k, a)",
                     (survey_id, version, list(replacement.texts),
                      list(replacement.texts.values())))
        conn.execute("DELETE FROM submission_counts WHERE survey_id = %s AND version = %s",
                     (survey_id, version))
        conn.execute("INSERT INTO submission_counts (survey_id, version, shard, n, last_hour) "
                     "VALUES (%s, %s, 0, %s, %s)", (survey_id, version,
                                                    replacement.n_submissions,
                                                    replacement.last_submission_hour))

    def export_rows(self, survey_id: str, version: int | None, after: int,
                    limit: int) -> list[tuple[int, int, str, str, str]]:
        where = "survey_id = %s" + ("" if version is None else " AND version = %s")
        params: tuple[Any, ...] = (survey_id,) if version is None else (survey_id, version)
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT seq, version, submission_id, received_hour, reports FROM submissions "  # noqa: S608
                f"WHERE {where} AND seq > %s ORDER BY seq LIMIT %s", (*params, after, limit)
            ).fetchall()
        return [tuple(r) for r in rows]

    def question_reports(self, survey_id: str, version: int, qids: Sequence[str],
                         page: int) -> Iterator[tuple[str, int]]:
        values = ", ".join("r -> %s" for _ in qids)  # placeholders only: ids are parameters
        last = 0
        while True:
            with self._read() as conn:
                text, scanned, top = conn.execute(
                    f"SELECT string_agg(arr, ',' ORDER BY seq), count(*), max(seq) FROM "  # noqa: S608
                    f"(SELECT seq, CASE WHEN r ?& %s THEN jsonb_build_array({values})::text "
                    f"END AS arr FROM submissions, LATERAL (SELECT reports::jsonb AS r "
                    f"OFFSET 0) AS parsed WHERE survey_id = %s AND version = %s AND seq > %s "
                    f"ORDER BY seq LIMIT %s) AS t",
                    (list(qids), *qids, survey_id, version, last, page)).fetchone()
            if not scanned:
                return
            yield text or "", scanned
            last = top

    def submission_table(self, survey_id: str, version: int, qids: Sequence[str],
                         widths: Sequence[int], page: int,
                         ids: bool = True) -> Iterator[tuple[str, str, int]]:
        """As SQLite's (Store.submission_table): the database parses each row's JSON once
        (OFFSET 0 keeps the planner from inlining the parse into every extraction: ten parses
        per row, 5x slower) and extracts the columns; width-1 reports first, then the wider
        ones, as SQLite lays them out. jsonb's text puts a space after each comma, which
        numpy's parse skips."""
        parts = []
        narrow = [q for q, w in zip(qids, widths, strict=True) if w == 1]
        params: list[Any] = []
        if narrow:
            parts.append("jsonb_build_array(" + ", ".join("r -> %s" for _ in narrow)
                         + ")::text")
            params += narrow
        for q, w in zip(qids, widths, strict=True):
            if w > 1:
                parts.append("coalesce(r -> %s, %s::jsonb)::text")
                params += [q, "[" + ",".join(["null"] * w) + "]"]
        row = " || ',' || ".join(parts) if parts else "'[]'"
        id_column = "string_agg(submission_id, chr(31) ORDER BY seq)" if ids else "''"
        sql = (f"SELECT {id_column}, string_agg(line, ',' "  # noqa: S608
               f"ORDER BY seq), count(*), max(seq) FROM (SELECT seq, submission_id, {row} AS "
               f"line FROM submissions, LATERAL (SELECT reports::jsonb AS r OFFSET 0) AS parsed "
               f"WHERE survey_id = %s AND version = %s AND seq > %s ORDER BY seq LIMIT %s) AS t")
        last = 0
        while True:
            with self._read() as conn:
                id_text, text, count, top = conn.execute(
                    sql, (*params, survey_id, version, last, page)).fetchone()
            if not count:
                return
            yield id_text, text, count
            last = top

    def report_types(self, survey_id: str, version: int,
                     qids: Sequence[str]) -> dict[str, str | None]:
        """As SQLite's: 'true' for a yes/no report (jsonb's 'boolean'), 'integer' for a
        number, 'array', read from a submission that answered the question (any one: reports
        of a question are checked alike at ingest; no ORDER BY, so the scan stops at the
        first)."""
        names = {"boolean": "true", "number": "integer"}
        out: dict[str, str | None] = {}
        with self._read() as conn:
            for qid in qids:
                row = conn.execute(
                    "SELECT jsonb_typeof(reports::jsonb -> %s) AS t FROM submissions WHERE "
                    "survey_id = %s AND version = %s AND reports::jsonb ? %s LIMIT 1",
                    (qid, survey_id, version, qid)).fetchone()
                out[qid] = None if row is None else names.get(row[0], row[0])
        return out

    def packed_pages(self, survey_id: str, version: int, page: int, reports: bool = True,
                     designs: bool = True) -> Iterator[PackedPage]:
        """As Store.packed_pages: the database joins a page's packed reports and packed designs
        (server/store/packed_designs.py; string_agg of bytea, one value each per page) in one
        pass over its rows, read with numpy. A page with a row stored before schema 6 (a
        design but no packed bytes) or 7 (packed without its label codes) has each design
        column joined as text instead (a double precision's text in PostgreSQL 12+ is the
        shortest that reads back exactly), which numpy parses, and its labels joined as
        text."""
        if not _fits(survey_id):
            return
        carried = [False] * 4
        if designs:
            with self._read() as conn:  # whether any code carries each column: each look-up
                # stops at the first that does (random groups: by their partial index)
                carried = [conn.execute(
                    f"SELECT EXISTS (SELECT 1 FROM invites WHERE survey_id = %s AND {c} IS "  # noqa: S608
                    "NOT NULL)", (survey_id,)).fetchone()[0]
                    for c in ("fpc", "stratum", "psu", "random_group")]
        labels = [column if have else "''" for have, column in zip(carried[1:3], (
            "string_agg(coalesce(stratum, ''), chr(31) ORDER BY seq)",
            "string_agg(coalesce(psu, ''), chr(31) ORDER BY seq)"), strict=True)]
        page_of = ("FROM (SELECT seq, weight, fpc, stratum, psu, random_group, design_packed "
                   "FROM submissions WHERE survey_id = %s AND version = %s AND seq > %s ORDER "
                   "BY seq LIMIT %s) AS t")
        # d is NULL only for a row with a design but no packed bytes
        design_column = (f"CASE WHEN weight IS NULL THEN '\\x{NO_DESIGN.hex()}'::bytea ELSE "
                         "design_packed END" if designs else "NULL::bytea")
        head_sql = ("SELECT count(*), max(seq), string_agg(packed, ''::bytea ORDER BY seq), "  # noqa: S608
                    "count(packed), string_agg(d, ''::bytea ORDER BY seq), count(d) FROM "
                    f"(SELECT seq, {'packed' if reports else 'NULL::bytea AS packed'}, "
                    f"{design_column} AS d FROM submissions WHERE survey_id = %s AND "
                    "version = %s AND seq > %s ORDER BY seq LIMIT %s) AS p")
        texts_sql = (
            "SELECT string_agg(coalesce(weight::text, 'nan'), ',' ORDER BY seq), "
            "string_agg(coalesce(fpc::text, 'nan'), ',' ORDER BY seq), "
            f"string_agg(coalesce(random_group, 0)::text, ',' ORDER BY seq), {', '.join(labels)} "
            f"{page_of}")
        last = 0
        while True:
            with self._read() as conn:
                count, top, blob, packed, design_blob, designed = conn.execute(
                    head_sql, (survey_id, version, last, page)).fetchone()
                if not count:
                    return
                found = None
                if designs:
                    # every row packed, and by schema 7 (24 bytes before: the blob would be
                    # shorter)
                    if designed == count and len(design_blob) == count * ROW_BYTES:
                        weight, fpc, group, stratum, psu = unpack_designs(bytes(design_blob),
                                                                          count)
                    else:
                        weight, fpc, group, stratum, psu = conn.execute(
                            texts_sql, (survey_id, version, last, page)).fetchone()
                        weight, fpc, group = (_numbers(weight or "", float),
                                              _numbers(fpc or "", float),
                                              _numbers(group or "", np.int64))
                        stratum, psu = stratum or "", psu or ""
                    found = DesignPage(weight, fpc if carried[0] else None,
                                       stratum if carried[1] else None,
                                       psu if carried[2] else None,
                                       group if carried[3] else None)
            yield PackedPage(count, bytes(blob) if reports and packed == count else None, found)
            last = top

    def design_labels(self, survey_id: str) -> dict[str, list[str]]:
        with self._read() as conn:
            return labels_by_code(conn.execute(
                "SELECT kind, code, label FROM design_labels WHERE survey_id = %s",
                (survey_id,)).fetchall())

    def designed_invites(self, survey_id: str) -> int:
        """How many of the survey's invitation codes carry a design."""
        if not _fits(survey_id):
            return 0
        with self._read() as conn:
            return int(conn.execute("SELECT count(*) FROM invites WHERE survey_id = %s AND "
                                    "weight IS NOT NULL", (survey_id,)).fetchone()[0])

    # --- moving data ------------------------------------------------------------------------

    def is_empty(self) -> bool:
        with self._read() as conn:
            found = any(conn.execute(f"SELECT EXISTS (SELECT 1 FROM {t})").fetchone()[0]  # noqa: S608
                        for t in ("surveys", "tokens", "invites", "invite_surveys"))
        return not found

    def dump(self) -> Dump:
        with self._read() as conn:
            tokens = conn.execute("SELECT id, name, token_sha256, created, revoked FROM tokens "
                                  "ORDER BY id").fetchall()
            invite_surveys = conn.execute("SELECT survey_id, created, carried FROM "
                                          "invite_surveys ORDER BY survey_id").fetchall()
            invites = conn.execute("SELECT code_sha256, survey_id, submission_id, weight, "
                                   "stratum, psu, fpc, random_group, carried FROM invites "
                                   "ORDER BY code_sha256").fetchall()
            labels = conn.execute("SELECT survey_id, kind, code, label FROM design_labels "
                                  "ORDER BY survey_id, kind, code").fetchall()
        return Dump(self.list_surveys(), [tuple(t) for t in tokens],
                    [tuple(r) for r in invite_surveys], [tuple(r) for r in invites],
                    [tuple(r) for r in labels])

    def all_reports(self) -> Iterable[tuple[str, int, str, str, str]]:
        with self._read() as conn, conn.transaction(), \
                conn.cursor(name="ldpsurvey_dump") as cur:
            cur.itersize = 5000
            cur.execute("SELECT survey_id, version, submission_id, received_hour, reports, "
                        "packed FROM submissions ORDER BY survey_id, seq")
            yield from cur

    def load(self, dump: Dump, reports: Iterable[tuple[str, int, str, str, str]],
             texts: Mapping[tuple[str, int], Replacement]) -> None:
        with self._pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
            cur.executemany("INSERT INTO surveys (id, version, manifest, sha256, status, "
                            "created_hour) VALUES (%s, %s, %s, %s, %s, %s)",
                            [(s.id, s.version, s.manifest, s.sha256, s.status, s.created_hour)
                             for s in dump.surveys])
            cur.executemany("INSERT INTO tokens (id, name, token_sha256, created, revoked) "
                            "VALUES (%s, %s, %s, %s, %s)", dump.tokens)
            cur.execute("SELECT setval(pg_get_serial_sequence('tokens', 'id'), "
                        "greatest((SELECT max(id) FROM tokens), 1))")
            cur.executemany("INSERT INTO invite_surveys (survey_id, created, carried) "
                            "VALUES (%s, %s, %s)", dump.invite_surveys)
            cur.executemany("INSERT INTO invites (code_sha256, survey_id, submission_id, "
                            "weight, stratum, psu, fpc, random_group, carried, design_packed) "
                            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                            list(dump.packed_invites()))
            cur.executemany("INSERT INTO design_labels (survey_id, kind, code, label) "
                            "VALUES (%s, %s, %s, %s)", dump.design_labels())
            with cur.copy("COPY submissions (survey_id, version, submission_id, "
                          "received_hour, reports, packed, weight, stratum, psu, fpc, "
                          "random_group, design_packed) FROM STDIN") as copy:
                for row in dump.with_designs(reports):
                    copy.write_row(row)
            for (sid, version), replacement in texts.items():
                self._replace(conn, sid, version, replacement)
