"""HPKE sealing of input shares (RFC 9180 base mode, X25519 / HKDF-SHA256 / AES-128-GCM).

The library draws the ephemeral key and takes no AAD, so RFC 9180's vectors cannot be
replayed through it (see shared/two_server/hpke.py); these tests check round trips, the
output layout, the binding of the info string and tampering. The browser port brings vectors.
"""

from __future__ import annotations

import os
import stat

import pytest
from ldpsurvey.shared.two_server import hpke

REPORT = bytes(range(16))


@pytest.fixture
def pair(tmp_path):
    paths, public = hpke.generate_keypair(tmp_path, "helper")
    return hpke.load_private_key(paths.private), public, paths


def test_round_trip_and_layout(pair):
    key, public, _ = pair
    info = hpke.info("pulse", 1, REPORT, "helper")
    sealed = hpke.seal(public, b"share bytes", info)
    assert len(sealed) == hpke.ENC_SIZE + len(b"share bytes") + hpke.TAG_SIZE
    assert hpke.open_sealed(key, sealed, info) == b"share bytes"
    assert hpke.seal(public, b"share bytes", info) != sealed  # a fresh ephemeral key each time


@pytest.mark.parametrize("other", [
    ("other", 1, REPORT, "helper"), ("pulse", 2, REPORT, "helper"),
    ("pulse", 1, bytes(16), "helper"), ("pulse", 1, REPORT, "leader"),
])
def test_info_binds_survey_version_report_and_role(pair, other):
    key, public, _ = pair
    sealed = hpke.seal(public, b"x", hpke.info("pulse", 1, REPORT, "helper"))
    with pytest.raises(hpke.HpkeError):
        hpke.open_sealed(key, sealed, hpke.info(*other))


@pytest.mark.parametrize("position", [0, 31, 32, -1])
def test_tampering_is_detected(pair, position):
    key, public, _ = pair
    info = hpke.info("pulse", 1, REPORT, "helper")
    sealed = bytearray(hpke.seal(public, b"payload", info))
    sealed[position] ^= 1
    with pytest.raises(hpke.HpkeError):
        hpke.open_sealed(key, bytes(sealed), info)
    with pytest.raises(hpke.HpkeError):
        hpke.open_sealed(key, bytes(sealed[:20]), info)


def test_another_key_cannot_open(pair, tmp_path):
    _, public, _ = pair
    other_paths, _ = hpke.generate_keypair(tmp_path / "other", "leader")
    info = hpke.info("pulse", 1, REPORT, "helper")
    with pytest.raises(hpke.HpkeError):
        hpke.open_sealed(hpke.load_private_key(other_paths.private),
                         hpke.seal(public, b"x", info), info)


def test_key_files(pair, tmp_path):
    _, _, paths = pair
    assert stat.S_IMODE(os.stat(paths.private).st_mode) == 0o600
    with pytest.raises(hpke.HpkeKeyError, match="refusing to overwrite"):
        hpke.generate_keypair(tmp_path, "helper")
    bad = tmp_path / "bad.key"
    bad.write_text("not a key")
    with pytest.raises(hpke.HpkeKeyError, match="not an HPKE private key"):
        hpke.load_private_key(bad)
    with pytest.raises(hpke.HpkeKeyError, match="cannot read"):
        hpke.load_private_key(tmp_path / "missing.key")
    with pytest.raises(hpke.HpkeKeyError):
        hpke.seal(b"short", b"x", b"info")
