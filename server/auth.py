"""Analyst bearer tokens: shown once at creation, stored only as their SHA-256.

HTTP: no `Authorization: Bearer ...` header, or one whose token is not shaped like ours, is 401
(authenticate first); a well-formed token that is unknown or revoked is 403 (this credential
is refused). Tokens carry 256 bits from the OS CSPRNG, so a plain hash lookup is safe.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime

import sqlite_utils

from .db import transaction
from .errors import AuthenticationRequired, Forbidden, StoreError

PREFIX = "ldp_"
TOKEN_SHAPE = re.compile(r"^ldp_[A-Za-z0-9_-]{43}$")
MAX_NAME = 100


@dataclass(frozen=True)
class TokenInfo:
    """What `token list` shows: never the token itself."""

    id: int
    name: str
    created: str
    revoked: str | None


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def create_token(db: sqlite_utils.Database, name: str = "analyst") -> tuple[TokenInfo, str]:
    """A new token; the plain token is returned once and never stored."""
    name = name.strip()
    if not name or len(name) > MAX_NAME:
        raise StoreError(f"a token name is 1-{MAX_NAME} characters")
    token = PREFIX + secrets.token_urlsafe(32)
    created = _now()
    with transaction(db) as conn:
        cur = conn.execute("INSERT INTO tokens (name, token_sha256, created) VALUES (?, ?, ?)",
                           (name, _digest(token), created))
        token_id = int(cur.lastrowid or 0)
    return TokenInfo(token_id, name, created, None), token


def list_tokens(db: sqlite_utils.Database) -> list[TokenInfo]:
    rows = db.execute("SELECT id, name, created, revoked FROM tokens ORDER BY id").fetchall()
    return [TokenInfo(*row) for row in rows]


def revoke_token(db: sqlite_utils.Database, token_id: int) -> TokenInfo:
    """Revoke a token by id; revoking twice keeps the first revocation time."""
    with transaction(db) as conn:
        cur = conn.execute("UPDATE tokens SET revoked = coalesce(revoked, ?) WHERE id = ?",
                           (_now(), token_id))
        if cur.rowcount == 0:
            raise StoreError(f"no token with id {token_id}")
    return next(t for t in list_tokens(db) if t.id == token_id)


def check_authorization(db: sqlite_utils.Database, header: str | None) -> None:
    """Raise 401/403 unless the Authorization header carries a live analyst token."""
    if not header:
        raise AuthenticationRequired("this endpoint needs an analyst token: "
                                     "Authorization: Bearer <token>")
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not TOKEN_SHAPE.match(token):
        raise AuthenticationRequired("malformed Authorization header: expected "
                                     "'Bearer ldp_...'")
    row = db.execute("SELECT revoked FROM tokens WHERE token_sha256 = ?",
                     (_digest(token),)).fetchone()
    if row is None or row[0] is not None:
        raise Forbidden("this token is unknown or revoked")
