"""The helper's refusals through its app (Flask test client): typed errors as JSON 4xx, and
hostile shares that become rejections, never server errors."""

from __future__ import annotations

import os
import uuid

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.helper.app import create_app
from ldpsurvey.shared.manifest import fingerprint
from ldpsurvey.shared.two_server import hpke
from ldpsurvey.shared.two_server.config import b64url
from support.two_server import signed_survey, two_server_survey

DESIGNER = Ed25519PrivateKey.generate()


@pytest.fixture
def helper(tmp_path):
    paths, public = hpke.generate_keypair(tmp_path, "helper")
    app = create_app({"DATABASE": str(tmp_path / "helper.db"), "HPKE_KEY": str(paths.private),
                      "TRUSTED": [fingerprint(DESIGNER.public_key())]})
    return app.test_client(), public


def manifest(helper_key, key=DESIGNER, **changes):
    data = two_server_survey("https://helper.example", helper_key, os.urandom(32), **changes)
    return signed_survey(data, key)


def job(client, body, batch=None):
    return client.post(f"/helper/surveys/pulse/versions/1/jobs/{batch or uuid.uuid4()}",
                       json=body)


def junk_reports(n):
    return [{"submission_id": str(uuid.uuid4()),
             "public_shares": {"smoker": "", "mood": b64url(os.urandom(40)), "nope": "AA"},
             "helper_share": b64url(os.urandom(80)),
             "leader_prep_shares": {"smoker": b64url(os.urandom(33)), "mood": "!!"}}
            for _ in range(n)]


def test_hostile_shares_are_rejected_not_errors(helper):
    client, public = helper
    body = {"manifest": manifest(public), "verify_key": b64url(os.urandom(32)),
            "reports": junk_reports(5)}
    response = job(client, body)
    assert response.status_code == 200, response.get_json()
    msgs = response.get_json()["prep_msgs"]
    assert all(v is None for per in msgs.values() for v in per.values())


@pytest.mark.parametrize(("change", "status", "code"), [
    (lambda b, pub: b.update(manifest=manifest(os.urandom(32))), 409, "hpke_key_mismatch"),
    (lambda b, pub: b.update(manifest=manifest(pub, key=Ed25519PrivateKey.generate())), 403,
     "forbidden"),
    (lambda b, pub: b["manifest"].update(signature="AAAA"), 422, "invalid_manifest"),
    (lambda b, pub: b.update(verify_key="short"), 422, "validation_failed"),
    (lambda b, pub: b.update(reports="many"), 422, "validation_failed"),
    (lambda b, pub: b.update(reports=junk_reports(4)), 422, "batch_too_small"),
    (lambda b, pub: b["reports"].append(dict(b["reports"][0])), 409, "report_replayed"),
    (lambda b, pub: b["reports"][0].update(submission_id="x"), 422, "validation_failed"),
])
def test_refusals_are_typed_json_4xx(helper, change, status, code):
    client, public = helper
    body = {"manifest": manifest(public), "verify_key": b64url(os.urandom(32)),
            "reports": junk_reports(5)}
    change(body, public)
    response = job(client, body)
    assert response.status_code == status, response.get_json()
    assert response.get_json()["error"]["code"] == code


def test_bad_batch_ids_and_unknown_batches(helper):
    client, _ = helper
    assert client.post("/helper/surveys/pulse/versions/1/jobs/NOT..OK", json={}).status_code \
        == 400
    response = client.post(f"/helper/surveys/pulse/versions/1/batches/{uuid.uuid4()}/collect",
                           json={"collection_id": "c"})
    assert (response.status_code, response.get_json()["error"]["code"]) == (404,
                                                                             "unknown_batch")
    response = client.post(f"/helper/surveys/pulse/versions/1/batches/{uuid.uuid4()}/collect",
                           json={"collection_id": 7})
    assert response.status_code == 422


def test_sealed_garbage_shares_are_rejected_not_errors(helper):
    """Shares that open (sealed to the helper correctly) but decode to nothing valid."""
    from ldpsurvey.shared.survey import canonical_json

    client, public = helper
    reports = []
    for _ in range(5):
        rid = os.urandom(16)
        keys = {"smoker": os.urandom(3), "mood": os.urandom(500),
                "crosstab:smoker:mood": b""}
        plain = canonical_json({k: b64url(os.urandom(len(v) + 7)) for k, v in keys.items()})
        reports.append({
            "submission_id": str(uuid.UUID(bytes=rid)),
            "public_shares": {k: b64url(v) for k, v in keys.items()},
            "helper_share": b64url(hpke.seal(public, plain, hpke.info("pulse", 1, rid,
                                                                       "helper"))),
            "leader_prep_shares": {k: b64url(os.urandom(50)) for k in keys}})
    response = job(client, {"manifest": manifest(public), "verify_key": b64url(os.urandom(32)),
                            "reports": reports})
    assert response.status_code == 200, response.get_json()
    msgs = response.get_json()["prep_msgs"]
    assert all(v is None for per in msgs.values() for v in per.values())


def test_a_helper_with_a_leader_token_serves_only_the_leader(tmp_path):
    """Jobs and collects need the helper token: 401 without one, 403 with another, and the
    refusal happens before anything is read or stored; the public key stays public."""
    from ldpsurvey.server.common.two_server import helper_token

    paths, public = hpke.generate_keypair(tmp_path, "helper")
    token = helper_token.read(helper_token.generate(tmp_path / "token.txt"))
    app = create_app({"DATABASE": str(tmp_path / "helper.db"), "HPKE_KEY": str(paths.private),
                      "TRUSTED": [fingerprint(DESIGNER.public_key())], "LEADER_TOKEN": token})
    client = app.test_client()
    body = {"manifest": manifest(public), "verify_key": b64url(os.urandom(32)),
            "reports": junk_reports(5)}
    batch = str(uuid.uuid4())
    collect = f"/helper/surveys/pulse/versions/1/batches/{batch}/collect"
    for headers, status, code in (({}, 401, "authentication_required"),
                                  ({"Authorization": "Bearer " + "x" * 40}, 403, "forbidden"),
                                  ({"Authorization": "Basic " + token}, 401,
                                   "authentication_required")):
        for path, payload in ((f"/helper/surveys/pulse/versions/1/jobs/{batch}", body),
                              (collect, {"collection_id": batch})):
            response = client.post(path, json=payload, headers=headers)
            assert response.status_code == status, response.get_json()
            assert response.get_json()["error"]["code"] == code
    assert client.get("/helper/hpke-key").status_code == 200
    leader = {"Authorization": f"Bearer {token}"}
    assert client.post(f"/helper/surveys/pulse/versions/1/jobs/{batch}", json=body,
                       headers=leader).status_code == 200


def test_a_helper_token_file_is_new_private_and_read_back(tmp_path):
    from ldpsurvey.server.common.errors import StoreError
    from ldpsurvey.server.common.two_server import helper_token

    path = helper_token.generate(tmp_path / "t.txt")
    assert os.stat(path).st_mode & 0o777 == 0o600
    token = helper_token.read(path)
    assert token.startswith(helper_token.PREFIX) and len(token) > 40
    assert helper_token.read(helper_token.generate(tmp_path / "u.txt")) != token
    with pytest.raises(StoreError, match="never overwritten"):
        helper_token.generate(path)
    (tmp_path / "bad.txt").write_text("short\n")
    with pytest.raises(StoreError, match="does not hold a helper token"):
        helper_token.read(tmp_path / "bad.txt")


def test_helper_token_command(tmp_path):
    from click.testing import CliRunner
    from ldpsurvey.analyst.cli import cli

    out = tmp_path / "leader-token.txt"
    first = CliRunner().invoke(cli, ["helper", "token", "--out", str(out)])
    assert first.exit_code == 0 and out.exists(), first.output
    again = CliRunner().invoke(cli, ["helper", "token", "--out", str(out)])
    assert again.exit_code != 0 and "never overwritten" in again.output
    assert len(again.output.strip().splitlines()) == 1
