"""One-time invitation codes: an invite-only survey accepts one submission per code.

The analyst creates codes (`ldpsurvey invites create`), which are printed once; the server keeps
only their SHA-256. Codes carry 128 bits from the OS CSPRNG, so a plain hash lookup is safe.
Claiming happens inside the transaction that stores the submission, so a code is bound to
exactly one submission id; resending that same submission id with the same code stays an
idempotent duplicate, and any other use of the code is refused (403). See docs/poisoning.md.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sqlite_utils

from .db import transaction
from .errors import Forbidden, NotFound

PREFIX = "inv_"
MAX_CODE_LENGTH = 64
MAX_COUNT = 1_000_000


class InviteRefused(Forbidden):
    """The invitation code is missing, unknown, or already used by another submission."""

    code = "invite_refused"


def digest(code: str) -> str:
    return hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()


def create_tables(db: sqlite_utils.Database) -> None:
    """Schema migration body: the invite-only flag per survey id and the code hashes."""
    db["invite_surveys"].create({"survey_id": str, "created": str}, pk="survey_id",
                                not_null={"created"})
    db["invites"].create({"code_sha256": str, "survey_id": str, "submission_id": str},
                         pk="code_sha256", not_null={"survey_id"})
    db["invites"].create_index(["survey_id", "submission_id"])


@dataclass(frozen=True)
class InviteCounts:
    survey_id: str
    invite_only: bool
    issued: int
    used: int


def create(db: sqlite_utils.Database, survey_id: str, count: int) -> list[str]:
    """`count` new codes for a stored survey, which becomes invite-only; returned once."""
    if not 1 <= count <= MAX_COUNT:
        raise ValueError(f"count must be between 1 and {MAX_COUNT}")
    codes = [PREFIX + secrets.token_urlsafe(16) for _ in range(count)]
    with transaction(db) as conn:
        if conn.execute("SELECT 1 FROM surveys WHERE id = ?", (survey_id,)).fetchone() is None:
            raise NotFound(f"survey {survey_id!r} does not exist", {"id": survey_id})
        conn.execute("INSERT OR IGNORE INTO invite_surveys (survey_id, created) "
                     "VALUES (?, datetime('now'))", (survey_id,))
        conn.executemany("INSERT INTO invites (code_sha256, survey_id) VALUES (?, ?)",
                         [(digest(c), survey_id) for c in codes])
    return codes


def counts(db: sqlite_utils.Database, survey_id: str) -> InviteCounts:
    only = db.execute("SELECT 1 FROM invite_surveys WHERE survey_id = ?",
                      (survey_id,)).fetchone() is not None
    issued, used = db.execute("SELECT count(*), count(submission_id) FROM invites "
                              "WHERE survey_id = ?", (survey_id,)).fetchone()
    return InviteCounts(survey_id, only, int(issued), int(used))


def invite_only(conn: Any, survey_id: str) -> bool:
    return conn.execute("SELECT 1 FROM invite_surveys WHERE survey_id = ?",
                        (survey_id,)).fetchone() is not None


def check_shape(raw: Mapping[str, Any], problems: list[dict[str, str]]) -> str | None:
    """The item's code if it is present and shaped like a code (else a listed problem)."""
    code = raw.get("invite")
    if code is None:
        return None
    if not isinstance(code, str) or not code or len(code) > MAX_CODE_LENGTH:
        problems.append({"field": "invite", "message": "must be an invitation code string"})
        return None
    return code


def claim(conn: Any, survey_id: str, items: Sequence[tuple[str, str | None]],
          new_ids: Iterable[str]) -> None:
    """Bind each (submission id, code) of one request, or raise InviteRefused claiming none.

    Runs inside the storing transaction. `new_ids` are the submission ids this request stores;
    any other id is a resend of a stored submission and passes only with the code already
    bound to it (idempotent). A new id needs an unused code, and one code binds one id."""
    new = set(new_ids)
    refused: list[dict[str, Any]] = []
    bound_here: dict[str, str] = {}     # code hash -> the new submission id it binds
    code_of: dict[str, str] = {}        # new submission id -> its code hash
    for index, (sid, code) in enumerate(items):
        problem = None
        if code is None:
            problem = "this survey is invite-only: send your invitation code"
        else:
            key = digest(code)
            row = conn.execute("SELECT submission_id FROM invites WHERE code_sha256 = ? AND "
                               "survey_id = ?", (key, survey_id)).fetchone()
            if row is None:
                problem = "unknown invitation code"
            elif sid not in new:
                if row[0] != sid:
                    problem = "this invitation code was already used"
            elif row[0] is not None or bound_here.get(key, sid) != sid \
                    or code_of.get(sid, key) != key:
                problem = "this invitation code was already used"
            else:
                bound_here[key] = sid
                code_of[sid] = key
        if problem is not None:
            refused.append({"index": index, "submission_id": sid, "message": problem})
    if refused:
        raise InviteRefused(f"{len(refused)} of {len(items)} submission(s) refused: invitation "
                            "code missing, unknown or already used; nothing was stored",
                            {"refused": len(refused), "total": len(items),
                             "items": refused[:100]})
    conn.executemany("UPDATE invites SET submission_id = ? WHERE code_sha256 = ?",
                     [(sid, key) for key, sid in bound_here.items()])
