"""The device refuses manifests it should not trust, with a clear message, sending nothing."""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.analyst.cli import cli
from ldpsurvey.client.errors import KeyChangedError, PolicyError, ReplayError, TrustError
from ldpsurvey.client.respondent import Respondent
from ldpsurvey.shared.manifest import fingerprint
from ldpsurvey.shared.survey import canonical_json
from support.clients import FakeServer, signed, survey_dict

KEY = Ed25519PrivateKey.generate()
OTHER_KEY = Ed25519PrivateKey.generate()
ANSWERS = {"smoker": True, "mood": "good", "drinks": 4}


class Scripted:
    """Serves the manifests in `served` in turn (the last one repeats) and accepts posts."""

    def __init__(self) -> None:
        self.served: list[dict[str, Any]] = []
        self.server = FakeServer(self.handle)

    def handle(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        if method == "GET":
            return 200, (self.served.pop(0) if len(self.served) > 1 else self.served[0])
        return 201, {"accepted": [body["submission_id"]], "duplicates": []}


@pytest.fixture()
def fake() -> Iterator[Scripted]:
    s = Scripted()
    yield s
    s.server.close()


def _resign(body: dict[str, Any]) -> dict[str, Any]:
    """Recompute the canonical params after an edit, keeping the old signature."""
    from ldpsurvey.shared.survey import Survey

    body["survey"] = Survey.from_dict(
        {**body["survey"], "questions": [{k: v for k, v in q.items() if k not in
                                          ("params", "mechanism_choice")}
                                         for q in body["survey"]["questions"]]}).to_dict()
    return body


def _signed_as_is(body: dict[str, Any]) -> dict[str, Any]:
    """Sign the edited survey bytes with the designer's key: the signature holds, so what
    refuses the manifest is the survey check behind it (a signature never vouches for a
    survey the device would not build)."""
    signature = KEY.sign(canonical_json(body["survey"]))
    body["signature"] = base64.b64encode(signature).decode()
    return body


def raise_epsilon(body: dict[str, Any]) -> dict[str, Any]:
    body["survey"]["questions"][0]["epsilon"] = 4.0   # params left as they were
    return _signed_as_is(body)


def raise_epsilon_and_params(body: dict[str, Any]) -> dict[str, Any]:
    body["survey"]["questions"][0]["epsilon"] = 4.0
    return _resign(body)


def change_mechanism(body: dict[str, Any]) -> dict[str, Any]:
    body["survey"]["questions"][1]["mechanism"] = "binary_rr"
    return _signed_as_is(body)


def unknown_mechanism(body: dict[str, Any]) -> dict[str, Any]:
    body["survey"]["questions"][1]["mechanism"] = "send_plaintext"
    return _signed_as_is(body)


def change_options(body: dict[str, Any]) -> dict[str, Any]:
    body["survey"]["questions"][1]["options"][0] = "suicidal"
    return _resign(body)


def change_params(body: dict[str, Any]) -> dict[str, Any]:
    body["survey"]["questions"][1]["params"] = {"p": "99/100", "q": "1/400"}
    return _signed_as_is(body)


def change_params_unsigned(body: dict[str, Any]) -> dict[str, Any]:
    body["survey"]["questions"][1]["params"] = {"p": "99/100", "q": "1/400"}
    return body


def strip_signature(body: dict[str, Any]) -> dict[str, Any]:
    body.pop("signature")
    return body


def swap_key(body: dict[str, Any]) -> dict[str, Any]:
    # A complete, valid manifest signed by someone else (e.g. a compromised server).
    return signed(survey_dict(), OTHER_KEY)


def wrong_sha(body: dict[str, Any]) -> dict[str, Any]:
    body["sha256"] = "0" * 64
    return body


def other_survey(body: dict[str, Any]) -> dict[str, Any]:
    return signed(survey_dict(survey_id="other"), KEY)


TAMPERS: dict[str, tuple[Callable[[dict[str, Any]], dict[str, Any]], type[Exception], str]] = {
    "epsilon raised": (raise_epsilon, TrustError, "params: do not match"),
    "epsilon and params raised": (raise_epsilon_and_params, TrustError,
                                  "signature does not verify"),
    "mechanism changed": (change_mechanism, TrustError, "does not fit a categorical question"),
    "unknown mechanism": (unknown_mechanism, TrustError, "unknown mechanism 'send_plaintext'"),
    "options changed": (change_options, TrustError, "signature does not verify"),
    "params changed": (change_params, TrustError, "params: do not match"),
    "params changed, not re-signed": (change_params_unsigned, TrustError,
                                      "signature does not verify"),
    "signature stripped": (strip_signature, TrustError, "not signed"),
    "key swapped": (swap_key, KeyChangedError, "signing key changed"),
    "sha256 wrong": (wrong_sha, TrustError, "sha256"),
    "another survey": (other_survey, TrustError, "sent survey 'other' instead"),
}


@pytest.mark.parametrize("name", sorted(TAMPERS))
def test_tampered_manifest_is_refused_and_nothing_is_sent(fake: Scripted, tmp_path: Path,
                                                          name: str) -> None:
    tamper, error, message = TAMPERS[name]
    genuine = signed(survey_dict(), KEY)
    # First a genuine fetch pins the key; then the server serves the tampered manifest.
    fake.served = [genuine, tamper(copy.deepcopy(genuine))]
    respondent = Respondent(fake.server.url, state_dir=str(tmp_path), warn=lambda m: None)
    respondent.fetch_survey("checkin")
    with pytest.raises(error) as info:
        respondent.fetch_survey("checkin")
    assert message in info.value.message
    assert fake.server.posts() == []


@pytest.mark.parametrize("name", sorted(TAMPERS))
def test_cli_refuses_tampered_manifest_with_one_line(fake: Scripted, tmp_path: Path,
                                                     name: str) -> None:
    tamper, _, message = TAMPERS[name]
    genuine = signed(survey_dict(), KEY)
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(ANSWERS))
    pub = tmp_path / "designer.pub"
    pub.write_bytes(KEY.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    fake.served = [tamper(copy.deepcopy(genuine))]
    result = CliRunner().invoke(cli, ["respond", "--server", fake.server.url, "--survey",
                                      "checkin", "--answers", str(answers), "--trust", str(pub),
                                      "--state", str(tmp_path / "state"), "--yes"])
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: refusing survey 'checkin'")
    if name != "key swapped":  # with --trust the swapped key fails the trusted-key check
        assert message in lines[0]
    else:
        assert "not the key you trust" in lines[0]
    assert fake.server.posts() == []


def test_first_use_pins_the_key_with_a_loud_warning(fake: Scripted, tmp_path: Path) -> None:
    fake.served = [signed(survey_dict(), KEY)]
    warnings: list[str] = []
    respondent = Respondent(fake.server.url, state_dir=str(tmp_path), warn=warnings.append)
    verified = respondent.fetch_survey("checkin")
    assert verified.first_use
    assert len(warnings) == 1 and "FIRST USE" in warnings[0]
    assert fingerprint(KEY.public_key()) in warnings[0]
    respondent.fetch_survey("checkin")
    assert len(warnings) == 1  # pinned: no warning the second time


def test_pins_are_per_origin_and_survey(fake: Scripted, tmp_path: Path) -> None:
    fake.served = [signed(survey_dict(), KEY), signed(survey_dict(survey_id="other"), OTHER_KEY)]
    respondent = Respondent(fake.server.url, state_dir=str(tmp_path), warn=lambda m: None)
    respondent.fetch_survey("checkin")
    assert respondent.fetch_survey("other").fingerprint == fingerprint(OTHER_KEY.public_key())


@pytest.mark.parametrize("how", ["fingerprint", "file"])
def test_trusted_key_is_accepted_without_warning(fake: Scripted, tmp_path: Path,
                                                 how: str) -> None:
    fake.served = [signed(survey_dict(), KEY)]
    trust = fingerprint(KEY.public_key())
    if how == "file":
        path = tmp_path / "k.pub"
        path.write_bytes(KEY.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
        trust = str(path)
    warnings: list[str] = []
    respondent = Respondent(fake.server.url, state_dir=str(tmp_path / "s"), trust=trust,
                            warn=warnings.append)
    assert not respondent.fetch_survey("checkin").first_use
    assert warnings == []


def test_wrong_trusted_fingerprint_is_refused(fake: Scripted, tmp_path: Path) -> None:
    fake.served = [signed(survey_dict(), KEY)]
    respondent = Respondent(fake.server.url, state_dir=str(tmp_path),
                            trust=fingerprint(OTHER_KEY.public_key()))
    with pytest.raises(KeyChangedError, match="not the key you trust"):
        respondent.fetch_survey("checkin")


def test_replayed_older_version_is_refused(fake: Scripted, tmp_path: Path) -> None:
    fake.served = [signed(survey_dict(version=2), KEY), signed(survey_dict(version=1), KEY)]
    respondent = Respondent(fake.server.url, state_dir=str(tmp_path), warn=lambda m: None)
    respondent.fetch_survey("checkin")
    with pytest.raises(ReplayError, match="version 1 is older than version 2"):
        respondent.fetch_survey("checkin")


def test_different_manifest_under_seen_version_is_refused(fake: Scripted,
                                                          tmp_path: Path) -> None:
    changed = survey_dict()
    changed["questions"][0]["text"] = "Have you ever smoked, even once?"
    # Both are validly signed by the pinned key: the designer must bump the version.
    fake.served = [signed(survey_dict(), KEY), signed(changed, KEY)]
    respondent = Respondent(fake.server.url, state_dir=str(tmp_path), warn=lambda m: None)
    respondent.fetch_survey("checkin")
    with pytest.raises(ReplayError, match="version 1 was seen before with different content"):
        respondent.fetch_survey("checkin")


def test_newer_version_is_accepted(fake: Scripted, tmp_path: Path) -> None:
    fake.served = [signed(survey_dict(version=1), KEY), signed(survey_dict(version=2), KEY)]
    respondent = Respondent(fake.server.url, state_dir=str(tmp_path), warn=lambda m: None)
    respondent.fetch_survey("checkin")
    assert respondent.fetch_survey("checkin").survey.version == 2


def test_total_epsilon_above_policy_is_refused(fake: Scripted, tmp_path: Path) -> None:
    fake.served = [signed(survey_dict(), KEY)]  # total ε = 1 + 1.5 + 1 = 3.5
    respondent = Respondent(fake.server.url, state_dir=str(tmp_path), max_epsilon=3.0,
                            warn=lambda m: None)
    with pytest.raises(PolicyError, match=r"costs ε = 3\.5 in total, above your limit of 3"):
        respondent.fetch_survey("checkin")


def test_question_epsilon_above_policy_is_refused(fake: Scripted, tmp_path: Path) -> None:
    fake.served = [signed(survey_dict(), KEY)]
    respondent = Respondent(fake.server.url, state_dir=str(tmp_path), max_epsilon=1.2,
                            warn=lambda m: None)
    with pytest.raises(PolicyError, match=r"question 'mood' costs ε = 1\.5"):
        respondent.fetch_survey("checkin")


def test_default_policy_refuses_a_survey_over_total_five(fake: Scripted, tmp_path: Path) -> None:
    fake.served = [signed(survey_dict(mood={"epsilon": 3.5}), KEY)]  # total 5.5
    respondent = Respondent(fake.server.url, state_dir=str(tmp_path), warn=lambda m: None)
    with pytest.raises(PolicyError, match="above your limit of 5"):
        respondent.fetch_survey("checkin")


def test_refused_manifest_does_not_pin_or_record(fake: Scripted, tmp_path: Path) -> None:
    fake.served = [signed(survey_dict(), KEY)]
    respondent = Respondent(fake.server.url, state_dir=str(tmp_path), max_epsilon=1.0,
                            warn=lambda m: None)
    with pytest.raises(PolicyError):
        respondent.fetch_survey("checkin")
    assert not (tmp_path / "trust.json").exists()


def test_trusting_a_rotated_key_explicitly_replaces_the_pin(fake: Scripted,
                                                            tmp_path: Path) -> None:
    fake.served = [signed(survey_dict(), KEY), signed(survey_dict(version=2), OTHER_KEY)]
    state = str(tmp_path)
    Respondent(fake.server.url, state_dir=state, warn=lambda m: None).fetch_survey("checkin")
    rotated = fingerprint(OTHER_KEY.public_key())
    Respondent(fake.server.url, state_dir=state, trust=rotated).fetch_survey("checkin")
    # From now on the new key is the pinned one, without --trust.
    again = Respondent(fake.server.url, state_dir=state).fetch_survey("checkin")
    assert again.fingerprint == rotated and not again.first_use
