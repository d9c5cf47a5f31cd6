"""The secret the leader presents to the helper (both servers' operators hold it).

The helper's batch endpoints (run a job, collect a batch) answer only the leader: without this,
anyone who can reach the helper could collect a batch first (the leader's collect is then
refused) or run a job over sealed uploads it captured (their reports then count as replays for
the leader). Nothing leaks either way, but a batch is lost. The token is random (32 bytes from
the OS CSPRNG, base64url), kept in a file of mode 0600 on both servers, sent as
`Authorization: Bearer <token>` and compared by its SHA-256 in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

from ..errors import AuthenticationRequired, Forbidden, StoreError

PREFIX = "ldph_"


def generate(path: str | Path) -> Path:
    """Write a fresh token to a new file (mode 0600); refuses to overwrite one."""
    target = Path(path)
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise StoreError(f"{target} exists: a helper token is never overwritten") from None
    except OSError as exc:
        raise StoreError(f"cannot create {target}: {exc.strerror}") from None
    with os.fdopen(fd, "w") as out:
        out.write(PREFIX + secrets.token_urlsafe(32) + "\n")
    return target


def read(path: str | Path) -> str:
    """The token in a file written by `generate` (or by hand: one line, no spaces)."""
    try:
        token = Path(path).read_text().strip()
    except OSError as exc:
        raise StoreError(f"cannot read the helper token {path}: {exc.strerror}") from None
    if len(token) < 16 or any(c.isspace() for c in token):
        raise StoreError(f"{path} does not hold a helper token (one line of at least 16 "
                         "characters, as `ldpsurvey helper token` writes)")
    return token


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def check(expected_sha256: str, header: str | None) -> None:
    """401 without a bearer token, 403 with another one."""
    scheme, _, token = (header or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise AuthenticationRequired("only the leader may call this endpoint: "
                                     "Authorization: Bearer <the helper token>")
    if not hmac.compare_digest(digest(token.strip()), expected_sha256):
        raise Forbidden("not the helper token this helper was started with")
