"""Analyst bearer tokens: shown once at creation, stored only as their SHA-256.

HTTP: no `Authorization: Bearer ...` header, or one whose token is not shaped like ours, is 401
(authenticate first); a well-formed token that is unknown or revoked is 403 (this credential
is refused). Tokens carry 256 bits from the OS CSPRNG, so a plain hash lookup is safe.
"""

from __future__ import annotations

import hashlib
import re
import secrets

from .common.errors import AuthenticationRequired, Forbidden, StoreError
from .store import Store, TokenRow, now_second

PREFIX = "ldp_"
TOKEN_SHAPE = re.compile(r"^ldp_[A-Za-z0-9_-]{43}$")
MAX_NAME = 100


TokenInfo = TokenRow  # what `token list` shows: never the token itself


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_token(store: Store, name: str = "analyst") -> tuple[TokenInfo, str]:
    """A new token; the plain token is returned once and never stored."""
    name = name.strip()
    if not name or len(name) > MAX_NAME:
        raise StoreError(f"a token name is 1-{MAX_NAME} characters")
    token = PREFIX + secrets.token_urlsafe(32)
    created = now_second()
    token_id = store.add_token(name, _digest(token), created)
    return TokenInfo(token_id, name, created, None), token


def list_tokens(store: Store) -> list[TokenInfo]:
    return store.list_tokens()


def revoke_token(store: Store, token_id: int) -> TokenInfo:
    """Revoke a token by id; revoking twice keeps the first revocation time."""
    found = store.revoke_token(token_id, now_second())
    if found is None:
        raise StoreError(f"no token with id {token_id}")
    return found


def check_authorization(store: Store, header: str | None) -> None:
    """Raise 401/403 unless the Authorization header carries a live analyst token."""
    if not header:
        raise AuthenticationRequired("this endpoint needs an analyst token: "
                                     "Authorization: Bearer <token>")
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or any(c.isspace() for c in token):
        raise AuthenticationRequired("malformed Authorization header: expected "
                                     "'Bearer ldp_...'")
    # A well-formed header whose token is not one of ours (wrong shape included: no token
    # ever issued has it) is an unknown token, not a malformed header.
    if not TOKEN_SHAPE.match(token) or store.token_state(_digest(token)) != "active":
        raise Forbidden("unknown or revoked token: ask the server operator for a valid one "
                        "(`ldpsurvey token create`)")
