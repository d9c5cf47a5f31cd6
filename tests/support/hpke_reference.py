"""RFC 9180 HPKE base mode, DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, AES-128-GCM, with a
FIXED ephemeral key: written from the RFC with cryptography's primitives, for test vectors
only (cryptography's own HPKE draws the ephemeral key itself, so its output cannot be pinned).
tests/web/test_two_server_vectors.py checks it against RFC 9180 A.1.1 and checks that
shared/two_server/hpke.py opens what it seals.
"""

from __future__ import annotations

import hashlib
import hmac

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM


def public_key(private: bytes) -> bytes:
    return X25519PrivateKey.from_private_bytes(private).public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw)


_KEM = b"KEM" + (0x20).to_bytes(2, "big")
_HPKE = b"HPKE" + (0x20).to_bytes(2, "big") + (1).to_bytes(2, "big") + (1).to_bytes(2, "big")


def _extract(salt: bytes, ikm: bytes) -> bytes:
    return hmac.new(salt, ikm, hashlib.sha256).digest()


def _expand(prk: bytes, info: bytes, length: int) -> bytes:
    out, t, i = b"", b"", 1
    while len(out) < length:
        t = hmac.new(prk, t + info + bytes([i]), hashlib.sha256).digest()
        out, i = out + t, i + 1
    return out[:length]


def _labeled_extract(suite: bytes, salt: bytes, label: bytes, ikm: bytes) -> bytes:
    return _extract(salt, b"HPKE-v1" + suite + label + ikm)


def _labeled_expand(suite: bytes, prk: bytes, label: bytes, info: bytes, length: int) -> bytes:
    return _expand(prk, length.to_bytes(2, "big") + b"HPKE-v1" + suite + label + info, length)


def reference_context(pk_r: bytes, info: bytes, sk_e: bytes) -> tuple[bytes, bytes, bytes]:
    """(enc, key, base_nonce) of SetupBaseS with the ephemeral private key `sk_e`."""
    eph = X25519PrivateKey.from_private_bytes(sk_e)
    enc = public_key(sk_e)
    dh = eph.exchange(X25519PublicKey.from_public_bytes(pk_r))
    prk = _labeled_extract(_KEM, b"", b"eae_prk", dh)
    shared = _labeled_expand(_KEM, prk, b"shared_secret", enc + pk_r, 32)
    context = (b"\x00" + _labeled_extract(_HPKE, b"", b"psk_id_hash", b"")
               + _labeled_extract(_HPKE, b"", b"info_hash", info))
    secret = _labeled_extract(_HPKE, shared, b"secret", b"")
    return (enc, _labeled_expand(_HPKE, secret, b"key", context, 16),
            _labeled_expand(_HPKE, secret, b"base_nonce", context, 12))


def reference_seal(pk_r: bytes, plaintext: bytes, info: bytes, sk_e: bytes,
                   aad: bytes = b"", seq: int = 0) -> bytes:
    """enc || AES-128-GCM ciphertext (sequence number `seq`), as hpke.seal lays it out."""
    enc, key, base_nonce = reference_context(pk_r, info, sk_e)
    nonce = bytes(a ^ b for a, b in zip(base_nonce, seq.to_bytes(12, "big"), strict=True))
    return enc + AESGCM(key).encrypt(nonce, plaintext, aad)
