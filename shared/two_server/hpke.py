"""HPKE (RFC 9180) base mode, DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, AES-128-GCM.

Each aggregator (leader, helper) holds an X25519 key pair; the signed survey carries both
public keys. The client seals each server's input share to that server's key with an `info`
string binding the survey id, version, report id and the receiving role, so a sealed share
cannot be replayed into another survey, version, report or to the other server: opening it
there fails. The ciphertext is `enc || ct` (32 + len(plaintext) + 16 bytes) as
`cryptography.hazmat.primitives.hpke.Suite.encrypt` returns it (single-shot, empty AAD).

The library draws the ephemeral key itself and takes no AAD, so RFC 9180's test vectors (which
fix the ephemeral key and use a non-empty AAD) cannot be replayed through it: the tests check
round trips, the exact output layout and tampering; the browser port will bring vectors.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hpke, serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey

from ..errors import LdpSurveyError
from .config import KEY_SIZE, b64url, from_b64url

ROLES = ("leader", "helper")
ENC_SIZE = 32
TAG_SIZE = 16
_SUITE = hpke.Suite(hpke.KEM.X25519, hpke.KDF.HKDF_SHA256, hpke.AEAD.AES_128_GCM)
INFO_LABEL = b"ldpsurvey two-server input share v1"


class HpkeError(LdpSurveyError):
    """A sealed share does not open (wrong key, other survey/report/role, or tampered)."""

    code = "hpke_open_failed"


class HpkeKeyError(LdpSurveyError):
    """An HPKE key file is missing, unreadable or not an X25519 key."""

    code = "invalid_hpke_key"


def info(survey_id: str, version: int, report_id: bytes, role: str) -> bytes:
    """The HPKE info string: label, survey id, version, report id and receiving role."""
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}")
    sid = survey_id.encode()
    return b"|".join([INFO_LABEL, sid, str(version).encode(), report_id.hex().encode(),
                      role.encode()])


def seal(public_key: bytes, plaintext: bytes, info_bytes: bytes) -> bytes:
    """enc || ciphertext of `plaintext` to the 32-byte X25519 `public_key`."""
    if len(public_key) != KEY_SIZE:
        raise HpkeKeyError("an X25519 public key is 32 bytes")
    return _SUITE.encrypt(plaintext, X25519PublicKey.from_public_bytes(public_key),
                          info=info_bytes)


def open_sealed(private_key: X25519PrivateKey, sealed: bytes, info_bytes: bytes) -> bytes:
    """The plaintext, or HpkeError if the ciphertext was not sealed to this key and info."""
    if len(sealed) < ENC_SIZE + TAG_SIZE:
        raise HpkeError("a sealed share is shorter than its encapsulated key and tag")
    try:
        return _SUITE.decrypt(sealed, private_key, info=info_bytes)
    except (InvalidTag, ValueError) as exc:
        raise HpkeError("the sealed share does not open with this server's key for this "
                        "survey, version, report and role") from exc


@dataclass(frozen=True)
class KeyPaths:
    private: Path
    public: Path


def key_paths(out_dir: str | Path, role: str) -> KeyPaths:
    out = Path(out_dir)
    return KeyPaths(out / f"{role}-hpke.key", out / f"{role}-hpke.pub")


def generate_keypair(out_dir: str | Path, role: str) -> tuple[KeyPaths, bytes]:
    """Write a new X25519 pair for `role` (private key mode 0600, base64url raw bytes)."""
    paths = key_paths(out_dir, role)
    paths.private.parent.mkdir(parents=True, exist_ok=True)
    if paths.private.exists():
        raise HpkeKeyError(f"{paths.private} already exists; refusing to overwrite a key")
    key = X25519PrivateKey.from_private_bytes(os.urandom(KEY_SIZE))
    raw = key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                            serialization.NoEncryption())
    fd = os.open(paths.private, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(b64url(raw) + "\n")
    public = public_bytes(key)
    paths.public.write_text(b64url(public) + "\n")
    return paths, public


def public_bytes(key: X25519PrivateKey) -> bytes:
    return key.public_key().public_bytes(serialization.Encoding.Raw,
                                         serialization.PublicFormat.Raw)


def load_private_key(path: str | Path) -> X25519PrivateKey:
    try:
        text = Path(path).read_text().strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise HpkeKeyError(f"cannot read HPKE key {path}: {exc}") from exc
    try:
        raw = from_b64url(text)
    except ValueError:
        raw = b""
    if len(raw) != KEY_SIZE:
        raise HpkeKeyError(f"{path} is not an HPKE private key (base64url of 32 bytes, as "
                           f"`keys generate` writes it)")
    return X25519PrivateKey.from_private_bytes(raw)
