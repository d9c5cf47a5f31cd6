"""Database targets: which backend one names, and the target without its secrets.

`is_postgres` tells a PostgreSQL URL or libpq connection string from a SQLite path (the store
and the two-server tables open theirs by it). Redaction is for messages and logs.

Redaction works on the raw string, before anything parses it: a URL the driver cannot parse
(an unclosed IPv6 bracket, bad percent-encoding, a `/`, `#`, `?` or `@` inside the password)
must not show its password either. Every place credentials can sit is covered:

- the userinfo of a URL, `scheme://user:password@host`: everything between the first `:` after
  the user and the LAST `@` is the password (so `@`, `/`, `#`, `?` inside it are hidden);
- `password=` in a URL's query string: hidden to the end of the string;
- `password=value` / `password='quoted value'` in a libpq key=value connection string.

Drivers quote parts of the target in their own messages, sometimes cut at a delimiter inside
the password; `scrub` removes the password and each delimiter-separated piece of it.
"""

from __future__ import annotations

import re
import urllib.parse
from pathlib import Path

MASK = "***"
_SCHEME = re.compile(r"^\s*[A-Za-z][A-Za-z0-9+.-]*://")
_QUERY_PASSWORD = re.compile(r"([?&]\s*password\s*=)(.*)", re.IGNORECASE | re.DOTALL)
_DSN_PASSWORD = re.compile(r"(\bpassword\s*=\s*)('(?:\\.|[^'\\])*(?:'|$)|\S*)", re.IGNORECASE)
_PIECES = re.compile(r"[/#?@:\[\]%&=\s'\\]+")
MIN_PIECE = 2  # a lone character of a password is not worth mangling every message for

# A libpq connection string starts with one of its keywords: `host=db password=...`.
_LIBPQ_DSN = re.compile(r"^\s*(host|hostaddr|port|dbname|user|password|passfile|service|"
                        r"sslmode|connect_timeout|application_name|options)\s*=", re.IGNORECASE)


def is_postgres(target: str | Path) -> bool:
    text = str(target)
    return text.startswith(("postgresql://", "postgres://")) or bool(_LIBPQ_DSN.match(text))


def _split_userinfo(text: str) -> tuple[str, str, str | None, str] | None:
    """(scheme://, user, password or None, rest from the '@') of a URL with userinfo."""
    scheme = _SCHEME.match(text)
    if scheme is None:
        return None
    rest = text[scheme.end():]
    at = rest.rfind("@")
    if at < 0:
        return None
    userinfo = rest[:at]
    user, colon, password = userinfo.partition(":")
    return scheme.group(0), user, password if colon else None, rest[at:]


def redact(target: str | Path) -> str:
    """The target with every password replaced by ***: safe for logs and error messages."""
    text = str(target)
    parts = _split_userinfo(text)
    if parts is not None and parts[2] is not None:
        scheme, user, _, rest = parts
        text = f"{scheme}{user}:{MASK}{rest}"
    if _SCHEME.match(text):
        text = _QUERY_PASSWORD.sub(lambda m: m.group(1) + MASK, text)
    return _DSN_PASSWORD.sub(lambda m: m.group(1) + MASK, text)


def secrets_of(target: str | Path) -> list[str]:
    """The password(s) the target carries, as written and percent-decoded."""
    text = str(target)
    found: list[str] = []
    parts = _split_userinfo(text)
    if parts is not None and parts[2]:
        found.append(parts[2])
    if _SCHEME.match(text):
        found += [m.group(2) for m in _QUERY_PASSWORD.finditer(text)]
    found += [m.group(2).strip("'") for m in _DSN_PASSWORD.finditer(text)]
    found += [urllib.parse.unquote(s) for s in found]
    return [s for s in dict.fromkeys(found) if s]


def scrub(message: str, target: str | Path) -> str:
    """A driver's message about `target` with the target redacted and no piece of a password."""
    text = str(message).replace(str(target), redact(target))
    pieces: set[str] = set()
    for secret in secrets_of(target):
        pieces.add(secret)
        pieces.update(p for p in _PIECES.split(secret) if len(p) >= MIN_PIECE)
    for piece in sorted(pieces, key=len, reverse=True):
        text = text.replace(piece, MASK)
    return text
