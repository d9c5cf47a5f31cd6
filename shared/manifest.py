"""Signed survey manifests: the survey's canonical bytes, an Ed25519 signature, the public key.

The survey designer signs; the server verifies before storing and serves the manifest
unchanged; the respondent's device verifies again against a key it trusts. A manifest
verifies only if its survey dict is already canonical (`auto` resolved, parameters filled), so
the bytes that were signed are exactly the bytes any party re-derives from the dict.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from .errors import ManifestError, SigningKeyError, SurveyError
from .survey import Survey, canonical_json

PRIVATE_KEY_NAME = "survey-signing.key"
PUBLIC_KEY_NAME = "survey-signing.pub"


def generate_keypair(out_dir: str | Path) -> tuple[Path, Path]:
    """Write a new Ed25519 pair: the private key with mode 0600, the public key beside it."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    key_path, pub_path = out / PRIVATE_KEY_NAME, out / PUBLIC_KEY_NAME
    if key_path.exists():
        raise SigningKeyError(f"{key_path} already exists; refusing to overwrite a signing key")
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(pem)
    pub_path.write_bytes(key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    return key_path, pub_path


def load_private_key(path: str | Path) -> Ed25519PrivateKey:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise SigningKeyError(f"cannot read private key {path}: {exc.strerror or exc}") from exc
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise SigningKeyError(f"{path} is not an unencrypted PEM private key") from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise SigningKeyError(f"{path} is not an Ed25519 key")
    return key


def public_key_from_text(text: str) -> Ed25519PublicKey:
    """A public key from PEM text or base64 of the raw 32 bytes."""
    text = text.strip()
    try:
        if text.startswith("-----BEGIN"):
            key = serialization.load_pem_public_key(text.encode())
            if not isinstance(key, Ed25519PublicKey):
                raise SigningKeyError("not an Ed25519 public key")
            return key
        raw = base64.b64decode(text, validate=True)
        return Ed25519PublicKey.from_public_bytes(raw)
    except (ValueError, binascii.Error, TypeError) as exc:
        raise SigningKeyError("not an Ed25519 public key (PEM, or base64 of 32 bytes)") from exc


def load_public_key(path: str | Path) -> Ed25519PublicKey:
    try:
        return public_key_from_text(Path(path).read_text())
    except OSError as exc:
        raise SigningKeyError(f"cannot read public key {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise SigningKeyError(f"{path} is not a text key file") from exc


def public_key_b64(key: Ed25519PublicKey) -> str:
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return base64.b64encode(raw).decode()


def fingerprint(key: Ed25519PublicKey) -> str:
    """SHA-256 of the raw public key, hex: what a respondent compares out of band."""
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()


@dataclass(frozen=True)
class SignedManifest:
    """A survey with the designer's signature over its canonical bytes."""

    survey: Survey
    signature: str
    public_key: str

    @property
    def sha256(self) -> str:
        return self.survey.sha256

    @property
    def key(self) -> Ed25519PublicKey:
        return public_key_from_text(self.public_key)

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.key)

    def to_dict(self) -> dict[str, Any]:
        return {"survey": self.survey.to_dict(), "signature": self.signature,
                "public_key": self.public_key, "sha256": self.sha256}

    @classmethod
    def from_dict(cls, data: Any) -> SignedManifest:
        """Parse and verify; ManifestError says what is wrong."""
        return verify_manifest(data)


def sign_survey(survey: Survey, key: Ed25519PrivateKey) -> SignedManifest:
    signature = key.sign(survey.canonical_bytes())
    return SignedManifest(survey=survey, signature=base64.b64encode(signature).decode(),
                          public_key=public_key_b64(key.public_key()))


def verify_manifest(data: Any) -> SignedManifest:
    """The manifest in `data` if its signature verifies over the canonical survey bytes.

    The signature is checked first, over the survey's bytes as given, before the survey is
    parsed: parsing builds every question's mechanism (each proves its ε), work nobody without
    the signing key can make a verifier do.
    """
    if not isinstance(data, Mapping):
        raise ManifestError("a manifest is an object with survey, signature and public_key")
    raw_survey, signature, public_key = (data.get("survey"), data.get("signature"),
                                         data.get("public_key"))
    if not signature:
        raise ManifestError("the manifest is not signed (no signature)")
    if not isinstance(signature, str) or not isinstance(public_key, str) or not public_key:
        raise ManifestError("signature and public_key must be base64 strings")
    if not isinstance(raw_survey, Mapping):
        raise ManifestError("the manifest's survey is invalid: survey: must be a table/object",
                            {"field": "survey", "problem": "must be a table/object"})
    try:
        signed_bytes = canonical_json(raw_survey)
    except (TypeError, ValueError, RecursionError) as exc:
        raise ManifestError("the manifest's survey is not plain JSON") from exc
    try:
        key = public_key_from_text(public_key)
        sig = base64.b64decode(signature, validate=True)
    except (SigningKeyError, binascii.Error, ValueError) as exc:
        raise ManifestError("signature or public_key is not valid base64 of an Ed25519 "
                            "key/signature") from exc
    try:
        key.verify(sig, signed_bytes)
    except InvalidSignature:
        raise ManifestError("the signature does not verify: the survey was changed after "
                            "signing, or signed with another key") from None
    try:
        survey = Survey.from_dict(raw_survey)
    except SurveyError as exc:
        raise ManifestError(f"the manifest's survey is invalid: {exc.message}",
                            exc.details) from exc
    if signed_bytes != survey.canonical_bytes():
        raise ManifestError("the manifest's survey is not in canonical form (auto mechanisms "
                            "resolved, parameters filled in); sign what `publish` produces")
    return SignedManifest(survey=survey, signature=signature, public_key=public_key_b64(key))
