"""`ldpsurvey page export`: the copy is pinned to the server, survey and key, and written only
after the survey checks out the way the page will check it."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.analyst.cli import cli
from ldpsurvey.client.errors import KeyChangedError, PolicyError, TrustError
from ldpsurvey.client.page_export import export_page
from ldpsurvey.client.transport import RetryPolicy
from ldpsurvey.shared.manifest import fingerprint
from ldpsurvey.shared.survey import Survey
from support.clients import FakeServer, signed, survey_dict

KEY = Ed25519PrivateKey.generate()
FINGERPRINT = fingerprint(KEY.public_key())
NO_RETRY = RetryPolicy(attempts=1)


def served(data=None, key=KEY, with_bytes=True):
    data = data or survey_dict()
    doc = signed(data, key)
    if with_bytes:
        doc["signed_bytes"] = base64.b64encode(Survey.from_dict(data).canonical_bytes()).decode()
    return FakeServer(lambda method, path, body: (200, doc))


@pytest.fixture()
def server():
    fake = served()
    yield fake
    fake.close()


def config_of(out: Path) -> dict:
    text = (out / "js" / "config.js").read_text()
    return json.loads(re.search(r"export const config = (\{.*\});", text, re.S).group(1))


def test_export_pins_server_survey_and_key(server, tmp_path):
    out = tmp_path / "page"
    result = export_page("checkin", server.url + "/", FINGERPRINT, out, retry=NO_RETRY)
    assert result.version == 1 and result.fingerprint == FINGERPRINT
    assert config_of(out) == {"server": server.url, "survey": "checkin",
                              "fingerprint": FINGERPRINT, "maxEpsilon": 5.0}
    index = (out / "index.html").read_text()
    assert f"connect-src {server.url}" in index and "connect-src 'self'" not in index
    for name in ("js/app.js", "js/manifest.js", "js/store.js", "css/page.css"):
        assert (out / name).is_file(), name
    assert [r.method for r in server.requests] == ["GET"]


def test_export_accepts_a_public_key_file(server, tmp_path):
    from cryptography.hazmat.primitives import serialization

    pub = tmp_path / "key.pub"
    pub.write_bytes(KEY.public_key().public_bytes(serialization.Encoding.PEM,
                                                  serialization.PublicFormat.SubjectPublicKeyInfo))
    export_page("checkin", server.url, str(pub), tmp_path / "page", retry=NO_RETRY)
    assert config_of(tmp_path / "page")["fingerprint"] == FINGERPRINT


def test_export_refuses_a_survey_signed_by_another_key(tmp_path):
    other = served(key=Ed25519PrivateKey.generate())
    try:
        with pytest.raises(KeyChangedError, match="not the key you trust"):
            export_page("checkin", other.url, FINGERPRINT, tmp_path / "page", retry=NO_RETRY)
    finally:
        other.close()
    assert not (tmp_path / "page").exists()


def test_export_refuses_what_the_page_would_refuse(tmp_path):
    costly = served(survey_dict(smoker={"epsilon": 6.0}))
    old = served(with_bytes=False)
    try:
        with pytest.raises(PolicyError, match="above your limit"):
            export_page("checkin", costly.url, FINGERPRINT, tmp_path / "a", retry=NO_RETRY)
        with pytest.raises(TrustError, match="signed_bytes"):
            export_page("checkin", old.url, FINGERPRINT, tmp_path / "b", retry=NO_RETRY)
        with pytest.raises(TrustError, match="instead"):
            export_page("other", old.url, FINGERPRINT, tmp_path / "c", retry=NO_RETRY)
    finally:
        costly.close()
        old.close()
    assert list(tmp_path.iterdir()) == []


def test_export_into_a_non_empty_directory_needs_force(server, tmp_path):
    (tmp_path / "keep.txt").write_text("mine")
    with pytest.raises(TrustError, match="not empty"):
        export_page("checkin", server.url, FINGERPRINT, tmp_path, retry=NO_RETRY)
    export_page("checkin", server.url, FINGERPRINT, tmp_path, force=True, retry=NO_RETRY)
    assert (tmp_path / "index.html").is_file() and (tmp_path / "keep.txt").read_text() == "mine"


def test_the_cli_prints_what_it_pinned_and_errors_in_one_line(server, tmp_path):
    runner = CliRunner()
    ok = runner.invoke(cli, ["page", "export", "checkin", "--server", server.url, "--trust",
                             FINGERPRINT, "--out", str(tmp_path / "page")])
    assert ok.exit_code == 0, ok.output
    assert FINGERPRINT in ok.output and "--allow-origin" in ok.output
    bad = runner.invoke(cli, ["page", "export", "checkin", "--server", server.url, "--trust",
                              "0" * 64, "--out", str(tmp_path / "other")])
    assert bad.exit_code == 1 and len(bad.output.strip().splitlines()) == 1
    assert "not the key you trust" in bad.output
