"""Signed manifests: a round trip verifies; any change to what was signed is refused."""

from __future__ import annotations

import base64
import copy
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.shared.errors import ManifestError, SigningKeyError
from ldpsurvey.shared.manifest import (
    SignedManifest,
    fingerprint,
    generate_keypair,
    load_private_key,
    load_public_key,
    public_key_b64,
    sign_survey,
    verify_manifest,
)
from ldpsurvey.shared.survey import Survey, canonical_json

SURVEY = {
    "id": "habits", "title": "Habits", "version": 1,
    "questions": [
        {"id": "smoke", "text": "Do you smoke?", "type": "binary", "epsilon": 1.0},
        {"id": "freq", "text": "How often?", "type": "categorical", "epsilon": 2.0,
         "options": ["never", "monthly", "weekly", "daily"]},
        {"id": "hours", "text": "Hours of sleep", "type": "integer", "epsilon": 1.5,
         "min": 0, "max": 16},
    ],
}


@pytest.fixture(scope="module")
def key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


@pytest.fixture
def manifest(key: Ed25519PrivateKey) -> dict[str, Any]:
    return json.loads(json.dumps(sign_survey(Survey.from_dict(SURVEY), key).to_dict()))


def test_round_trip(manifest: dict[str, Any], key: Ed25519PrivateKey) -> None:
    verified = verify_manifest(manifest)
    assert verified.survey == Survey.from_dict(SURVEY)
    assert verified.sha256 == manifest["sha256"] == Survey.from_dict(SURVEY).sha256
    assert verified.fingerprint == fingerprint(key.public_key())
    assert SignedManifest.from_dict(manifest).to_dict() == manifest


def _refused(data: Any, match: str | None = None) -> None:
    with pytest.raises(ManifestError, match=match):
        verify_manifest(data)


def test_tampered_epsilon(manifest: dict[str, Any]) -> None:
    bad = copy.deepcopy(manifest)
    q = bad["survey"]["questions"][0]
    q["epsilon"] = 2.0
    # Keep the parameters consistent with the new ε, so only the signature can catch it.
    q["params"] = Survey.from_dict(
        {**SURVEY, "questions": [{**SURVEY["questions"][0], "epsilon": 2.0,
                                  "mechanism": q["mechanism"]}]}).questions[0].params
    _refused(bad, "does not verify|canonical")


def test_tampered_options(manifest: dict[str, Any]) -> None:
    bad = copy.deepcopy(manifest)
    bad["survey"]["questions"][1]["options"][3] = "hourly"
    _refused(bad, "does not verify")


def test_tampered_mechanism(manifest: dict[str, Any]) -> None:
    bad = copy.deepcopy(manifest)
    q = bad["survey"]["questions"][1]
    assert q["mechanism"] != "binary_rr"
    q["mechanism"] = "grr" if q["mechanism"] != "grr" else "olh"
    _refused(bad)


def test_tampered_params(manifest: dict[str, Any], key: Ed25519PrivateKey) -> None:
    bad = copy.deepcopy(manifest)
    bad["survey"]["questions"][0]["params"]["p"] = "9/10"
    _refused(bad, "does not verify")
    # Signed as tampered, the signature holds and the parser names the parameters.
    bad["signature"] = base64.b64encode(key.sign(canonical_json(bad["survey"]))).decode()
    _refused(bad, "params")


def test_signature_is_checked_before_the_survey_is_parsed(
        manifest: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """Parsing builds every mechanism (each proves its ε): a manifest that is not signed by
    the key it names causes none of that work."""
    parsed: list[Any] = []
    monkeypatch.setattr(Survey, "from_dict", classmethod(lambda cls, d: parsed.append(d)))
    bad = copy.deepcopy(manifest)
    bad["survey"]["questions"][1]["options"] = [f"o{i}" for i in range(60000)]
    _refused(bad, "does not verify")
    assert parsed == []


@pytest.mark.parametrize("signature", [None, "", "not base64!", base64.b64encode(b"x").decode()])
def test_stripped_or_broken_signature(manifest: dict[str, Any], signature: Any) -> None:
    bad = dict(manifest)
    if signature is None:
        del bad["signature"]
    else:
        bad["signature"] = signature
    _refused(bad)


def test_swapped_key(manifest: dict[str, Any]) -> None:
    bad = dict(manifest)
    bad["public_key"] = public_key_b64(Ed25519PrivateKey.generate().public_key())
    _refused(bad, "does not verify")


def test_re_signed_with_another_key_verifies_as_another_signer(manifest: dict[str, Any]) -> None:
    other = Ed25519PrivateKey.generate()
    resigned = sign_survey(Survey.from_dict(SURVEY), other).to_dict()
    assert verify_manifest(resigned).fingerprint == fingerprint(other.public_key())
    assert verify_manifest(resigned).fingerprint != verify_manifest(manifest).fingerprint


def test_non_canonical_survey_dict(manifest: dict[str, Any], key: Ed25519PrivateKey) -> None:
    # The raw (auto, unfilled) dict signed directly: valid survey, but not what is canonical.
    raw_bytes = json.dumps(SURVEY, sort_keys=True, separators=(",", ":")).encode()
    bad = dict(manifest)
    bad["survey"] = SURVEY
    bad["signature"] = base64.b64encode(key.sign(raw_bytes)).decode()
    _refused(bad, "canonical")


def test_invalid_survey_inside(manifest: dict[str, Any], key: Ed25519PrivateKey) -> None:
    bad = copy.deepcopy(manifest)
    bad["survey"]["questions"][0]["epsilon"] = -1
    _refused(bad, "does not verify")
    bad["signature"] = base64.b64encode(key.sign(canonical_json(bad["survey"]))).decode()
    _refused(bad, "invalid")


@pytest.mark.parametrize("data", [None, [], "manifest", {"survey": SURVEY}])
def test_not_a_manifest(data: Any) -> None:
    _refused(data)


def test_keypair_files(tmp_path: Path) -> None:
    key_path, pub_path = generate_keypair(tmp_path)
    assert stat.S_IMODE(os.stat(key_path).st_mode) == 0o600
    key = load_private_key(key_path)
    assert fingerprint(load_public_key(pub_path)) == fingerprint(key.public_key())
    with pytest.raises(SigningKeyError, match="already exists"):
        generate_keypair(tmp_path)
    (tmp_path / "junk.key").write_text("not a key")
    with pytest.raises(SigningKeyError):
        load_private_key(tmp_path / "junk.key")
    with pytest.raises(SigningKeyError):
        load_public_key(tmp_path / "missing.pub")
