"""The schema of both backends, as ordered migrations (append, never edit).

Migration i (1-based) takes a database from schema version i-1 to i; `schema_version` records
what was applied. SQLite keeps one aggregate row per (survey, version, key) and the counters on
the survey row (one writer at a time). PostgreSQL keeps N shard rows per key and per-shard
counters, so concurrent writers pick different rows instead of queueing on one; readers merge.
Every PostgreSQL table that holds survey data carries `survey_id` in its primary key, so it can
be distributed by survey (see docs/postgresql.md on Citus).
"""

from __future__ import annotations

# Each submission made with an invitation code gets the code's design (weight, stratum, PSU,
# fpc, random group: NULL where the code carries none): run by the migration that added the
# columns. Ingest copies it as it claims; `migrate-store` writes it with each row (Dump).
DESIGN_COLUMNS = ("weight", "stratum", "psu", "fpc", "random_group")
SQLITE_COPY_DESIGNS = (
    "UPDATE submissions SET (weight, stratum, psu, fpc, random_group) = (SELECT i.weight, "
    "i.stratum, i.psu, i.fpc, i.random_group FROM invites AS i WHERE i.survey_id = "
    "submissions.survey_id AND i.submission_id = submissions.submission_id) WHERE "
    "(survey_id, submission_id) IN (SELECT survey_id, submission_id FROM invites WHERE "
    "submission_id IS NOT NULL)")
POSTGRES_COPY_DESIGNS = (
    "UPDATE submissions AS s SET weight = i.weight, stratum = i.stratum, psu = i.psu, "
    "fpc = i.fpc, random_group = i.random_group FROM invites AS i WHERE i.survey_id = "
    "s.survey_id AND i.submission_id = s.submission_id")

# Schema 9 / PostgreSQL 7: each survey's stratum and PSU labels numbered (`design_labels`), the
# labels of stored codes in sorted order, and the codes packed after a stored design's numbers
# (server/store/packed_designs.py), so a design-based report reads codes with numpy and the
# labels once per survey. A label without a code leaves its row's packed bytes NULL (read from
# the columns). SQLite packs with `ldp_label_codes` (registered on every connection: SQLite
# before 3.41 has no unhex), PostgreSQL with int4send (big-endian, as the SQL function packs).
_NUMBER_LABELS = (
    "INSERT INTO design_labels (survey_id, kind, code, label) SELECT survey_id, '{kind}', "
    "row_number() OVER (PARTITION BY survey_id ORDER BY {kind}) - 1, {kind} FROM (SELECT "
    "DISTINCT survey_id, {kind} FROM invites WHERE {kind} IS NOT NULL) AS t")
_CODE_OF = ("(SELECT code FROM design_labels AS l WHERE l.survey_id = {table}.survey_id AND "
            "l.kind = '{kind}' AND l.label = {table}.{kind})")


def _sqlite_label_codes(table: str) -> str:
    return (f"UPDATE {table} SET design_packed = ldp_label_codes(design_packed, stratum, "  # noqa: S608
            f"{_CODE_OF.format(table=table, kind='stratum')}, psu, "
            f"{_CODE_OF.format(table=table, kind='psu')}) WHERE design_packed IS NOT NULL")


def _postgres_label_codes(table: str) -> str:
    stratum = _CODE_OF.format(table=table, kind="stratum")
    psu = _CODE_OF.format(table=table, kind="psu")
    return (f"UPDATE {table} SET design_packed = CASE WHEN (stratum IS NOT NULL AND {stratum} "  # noqa: S608
            f"IS NULL) OR (psu IS NOT NULL AND {psu} IS NULL) THEN NULL ELSE design_packed || "
            f"int4send(coalesce({stratum}, -1)) || int4send(coalesce({psu}, -1)) END WHERE "
            "length(design_packed) = 24")


SQLITE_MIGRATIONS: list[list[str]] = [
    [  # 1: surveys, submissions, aggregates, tokens
        """CREATE TABLE surveys (id TEXT, version INTEGER, manifest TEXT NOT NULL,
            sha256 TEXT NOT NULL, status TEXT NOT NULL, created_hour TEXT NOT NULL,
            n_submissions INTEGER NOT NULL DEFAULT 0, last_submission_hour TEXT,
            PRIMARY KEY (id, version))""",
        """CREATE TABLE submissions (seq INTEGER PRIMARY KEY, survey_id TEXT NOT NULL,
            version INTEGER NOT NULL, submission_id TEXT NOT NULL, received_hour TEXT NOT NULL,
            reports TEXT NOT NULL,
            FOREIGN KEY (survey_id, version) REFERENCES surveys (id, version))""",
        "CREATE UNIQUE INDEX idx_submissions_survey_id_submission_id "
        "ON submissions (survey_id, submission_id)",
        "CREATE INDEX idx_submissions_survey_id_version_seq "
        "ON submissions (survey_id, version, seq)",
        """CREATE TABLE aggregates (survey_id TEXT, version INTEGER, question_id TEXT,
            aggregate TEXT NOT NULL, PRIMARY KEY (survey_id, version, question_id),
            FOREIGN KEY (survey_id, version) REFERENCES surveys (id, version))""",
        """CREATE TABLE tokens (id INTEGER PRIMARY KEY, name TEXT NOT NULL,
            token_sha256 TEXT NOT NULL, created TEXT NOT NULL, revoked TEXT)""",
        "CREATE UNIQUE INDEX idx_tokens_token_sha256 ON tokens (token_sha256)",
    ],
    [  # 2: invitation codes
        "CREATE TABLE invite_surveys (survey_id TEXT PRIMARY KEY, created TEXT NOT NULL)",
        """CREATE TABLE invites (code_sha256 TEXT PRIMARY KEY, survey_id TEXT NOT NULL,
            submission_id TEXT)""",
        "CREATE INDEX idx_invites_survey_id_submission_id ON invites (survey_id, submission_id)",
    ],
    [  # 3: aggregates are keyed by an opaque key (a question id, or a joint key)
        "ALTER TABLE aggregates RENAME COLUMN question_id TO key",
    ],
    [  # 4: an invitation code may carry its sampled unit's design (NULL: none)
        "ALTER TABLE invites ADD COLUMN weight REAL",
        "ALTER TABLE invites ADD COLUMN stratum TEXT",
        "ALTER TABLE invites ADD COLUMN psu TEXT",
        "ALTER TABLE invites ADD COLUMN fpc REAL",
        "ALTER TABLE invites ADD COLUMN random_group INTEGER",
    ],
    [  # 5: an invitation code may carry disclosed covariates (`invites create --from-export`):
        # a JSON object per code, and the carried names per survey (NULL: none)
        "ALTER TABLE invites ADD COLUMN carried TEXT",
        "ALTER TABLE invite_surveys ADD COLUMN carried TEXT",
    ],
    [  # 6: a submission carries the design of the invitation code it was made with (copied
        # when the code is claimed), so a design-based analysis reads it with the reports in
        # one scan instead of looking up each submission's code
        "ALTER TABLE submissions ADD COLUMN weight REAL",
        "ALTER TABLE submissions ADD COLUMN stratum TEXT",
        "ALTER TABLE submissions ADD COLUMN psu TEXT",
        "ALTER TABLE submissions ADD COLUMN fpc REAL",
        "ALTER TABLE submissions ADD COLUMN random_group INTEGER",
        SQLITE_COPY_DESIGNS,
    ],
    [  # 7: a submission's reports packed as integers beside their JSON (written with it at
        # ingest: server/report_columns.py PackedLayout), so a report reads a question's column
        # with numpy instead of parsing JSON; NULL (rows stored before, or reports that do not
        # pack) makes a report read that version's JSON, as before
        "ALTER TABLE submissions ADD COLUMN packed BLOB",
    ],
    [  # 8: a design's numbers (weight, fpc, random group) packed as bytes beside the columns
        # (server/store/packed_designs.py): written with an invitation code's design and copied
        # to the submission with the columns, so a design-based report reads them with numpy;
        # NULL (codes and rows stored before) makes a report read the columns, as before
        "ALTER TABLE invites ADD COLUMN design_packed BLOB",
        "ALTER TABLE submissions ADD COLUMN design_packed BLOB",
    ],
    [  # 9: a design's stratum and PSU labels numbered per survey, the codes packed with its
        # numbers (see _NUMBER_LABELS above); the designed and grouped codes of a survey indexed
        """CREATE TABLE design_labels (survey_id TEXT NOT NULL, kind TEXT NOT NULL,
            code INTEGER NOT NULL, label TEXT NOT NULL, PRIMARY KEY (survey_id, kind, code))""",
        "CREATE UNIQUE INDEX idx_design_labels_label ON design_labels (survey_id, kind, label)",
        _NUMBER_LABELS.format(kind="stratum"),
        _NUMBER_LABELS.format(kind="psu"),
        _sqlite_label_codes("invites"),
        _sqlite_label_codes("submissions"),
        "CREATE INDEX idx_invites_designed ON invites (survey_id) WHERE weight IS NOT NULL",
        # whether a survey's codes carry random groups: found without visiting every code
        "CREATE INDEX idx_invites_grouped ON invites (survey_id) WHERE random_group IS NOT NULL",
    ],
]

POSTGRES_MIGRATIONS: list[list[str]] = [
    [  # 1: everything, sharded aggregates and counters
        """CREATE TABLE surveys (id text NOT NULL, version integer NOT NULL,
            manifest text NOT NULL, sha256 text NOT NULL, status text NOT NULL,
            created_hour text NOT NULL, PRIMARY KEY (id, version))""",
        """CREATE TABLE submissions (survey_id text NOT NULL, seq bigserial NOT NULL,
            version integer NOT NULL, submission_id text NOT NULL, received_hour text NOT NULL,
            reports text NOT NULL, PRIMARY KEY (survey_id, seq),
            UNIQUE (survey_id, submission_id),
            FOREIGN KEY (survey_id, version) REFERENCES surveys (id, version))""",
        "CREATE INDEX submissions_version_seq ON submissions (survey_id, version, seq)",
        """CREATE TABLE aggregates (survey_id text NOT NULL, version integer NOT NULL,
            key text NOT NULL, shard smallint NOT NULL, aggregate text NOT NULL,
            PRIMARY KEY (survey_id, version, key, shard),
            FOREIGN KEY (survey_id, version) REFERENCES surveys (id, version))""",
        """CREATE TABLE submission_counts (survey_id text NOT NULL, version integer NOT NULL,
            shard smallint NOT NULL, n bigint NOT NULL, last_hour text,
            PRIMARY KEY (survey_id, version, shard),
            FOREIGN KEY (survey_id, version) REFERENCES surveys (id, version))""",
        """CREATE TABLE tokens (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            name text NOT NULL, token_sha256 text NOT NULL UNIQUE, created text NOT NULL,
            revoked text)""",
        "CREATE TABLE invite_surveys (survey_id text PRIMARY KEY, created text NOT NULL)",
        """CREATE TABLE invites (survey_id text NOT NULL, code_sha256 text NOT NULL,
            submission_id text, PRIMARY KEY (survey_id, code_sha256))""",
        "CREATE INDEX invites_used ON invites (survey_id, submission_id)",
    ],
    [  # 2: an invitation code may carry its sampled unit's design (NULL: none)
        """ALTER TABLE invites ADD COLUMN weight double precision, ADD COLUMN stratum text,
            ADD COLUMN psu text, ADD COLUMN fpc double precision,
            ADD COLUMN random_group integer""",
    ],
    [  # 3: an invitation code may carry disclosed covariates (`invites create --from-export`):
        # a JSON object per code, and the carried names per survey (NULL: none)
        "ALTER TABLE invites ADD COLUMN carried text",
        "ALTER TABLE invite_surveys ADD COLUMN carried text",
    ],
    [  # 4: a submission carries the design of the invitation code it was made with (SQLite's 6)
        """ALTER TABLE submissions ADD COLUMN weight double precision, ADD COLUMN stratum text,
            ADD COLUMN psu text, ADD COLUMN fpc double precision,
            ADD COLUMN random_group integer""",
        POSTGRES_COPY_DESIGNS,
    ],
    [  # 5: a submission's reports packed as integers beside their JSON (SQLite's 7)
        "ALTER TABLE submissions ADD COLUMN packed bytea",
    ],
    [  # 6: a design's numbers packed as bytes beside the columns (SQLite's 8)
        "ALTER TABLE invites ADD COLUMN design_packed bytea",
        "ALTER TABLE submissions ADD COLUMN design_packed bytea",
    ],
    [  # 7: a design's labels numbered, the codes packed with its numbers (SQLite's 9)
        """CREATE TABLE design_labels (survey_id text NOT NULL, kind text NOT NULL,
            code integer NOT NULL, label text NOT NULL, PRIMARY KEY (survey_id, kind, code),
            UNIQUE (survey_id, kind, label))""",
        _NUMBER_LABELS.format(kind="stratum"),
        _NUMBER_LABELS.format(kind="psu"),
        _postgres_label_codes("invites"),
        _postgres_label_codes("submissions"),
        "CREATE INDEX invites_designed ON invites (survey_id) WHERE weight IS NOT NULL",
        "CREATE INDEX invites_grouped ON invites (survey_id) WHERE random_group IS NOT NULL",
    ],
]
