"""Integers from the wire (issue 32): out-of-range and wrongly typed integers in every path
segment, query parameter and body field of every route of the leader (single-server API and
two-server routes, as the OpenAPI document lists them) and of the helper (as its Flask url_map
lists them) are answered with a JSON 4xx, never a 5xx; base64url fields are decoded strictly.

The routes come from the OpenAPI document and the url_map, so a new route is swept without
editing this file; a new route taking a body fails `test_every_body_route_has_a_template`
until it has a template here.
"""

from __future__ import annotations

import base64
import copy
import json
import os
import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.client.two_server import build_upload
from ldpsurvey.helper.app import create_app as create_helper
from ldpsurvey.server.app import create_app
from ldpsurvey.server.auth import create_token
from ldpsurvey.server.invites.carried import create_carried, parse_export
from ldpsurvey.server.openapi import openapi_document
from ldpsurvey.server.store import open_store
from ldpsurvey.shared.manifest import public_key_b64
from ldpsurvey.shared.survey import Survey, canonical_json
from ldpsurvey.shared.two_server import hpke
from ldpsurvey.shared.two_server.config import b64url, from_b64url
from support.server_data import manifest, submission, survey_dict
from support.two_server import signed_survey, two_server_survey

# 2^63 and -2^63 - 1 are the first integers outside SQLite's and PostgreSQL's 64-bit columns;
# 2^64 is the first one orjson cannot read as an integer; 10^100 is beyond both.
BIG = [1 << 63, -(1 << 63) - 1, 1 << 64, 10 ** 100]
NOT_INTEGERS = [1.5, True, 1e300]
LEADER_TOKEN = "t" * 43
DESIGNER = Ed25519PrivateKey.generate()
QUERY_DEFAULTS = {"rows": "smoker", "cols": "color", "by": "smoker", "outcome": "smoker",
                  "covariates": "color"}


class Deployed:
    def __init__(self, tmp: Any) -> None:
        leader_paths, self.leader_key = hpke.generate_keypair(tmp, "leader")
        helper_paths, self.helper_key = hpke.generate_keypair(tmp, "helper")
        self.leader = create_app({"DATABASE": str(tmp / "leader.db"), "TESTING": True,
                                  "HPKE_KEY": str(leader_paths.private)})
        self.helper = create_helper({"DATABASE": str(tmp / "helper.db"),
                                     "HPKE_KEY": str(helper_paths.private),
                                     "LEADER_TOKEN": LEADER_TOKEN})
        db = open_store(tmp / "leader.db")
        try:
            self.token = create_token(db, "sweep")[1]
        finally:
            db.close()
        self.pulse = two_server_survey("https://helper.example", self.helper_key,
                                       self.leader_key)
        leader = self.leader.test_client()
        for body in (manifest(), signed_survey(self.pulse, DESIGNER)):
            assert leader.post("/api/surveys", json=body, headers=self.auth).status_code == 201
        assert leader.post("/api/surveys/health/submissions",
                           json=submission()).status_code == 200
        # a survey whose codes carry a covariate (docs/sensitive-module.md), for the body of
        # POST .../invitation
        carried = survey_dict("carried")
        assert leader.post("/api/surveys", json=manifest(carried),
                           headers=self.auth).status_code == 201
        db = open_store(tmp / "leader.db")
        try:
            export = parse_export("key,region\nk1,north\n", "export.csv", "key", ["region"])
            [(_, self.invite_code)] = create_carried(db, "carried", export)
        finally:
            db.close()

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def upload(self) -> dict[str, Any]:
        return build_upload(Survey.from_dict(self.pulse),
                            {"smoker": True, "mood": "low", "hours": 7}).body


@pytest.fixture(scope="module")
def deployed(tmp_path_factory: pytest.TempPathFactory) -> Deployed:
    return Deployed(tmp_path_factory.mktemp("wire"))


def resigned(body: dict[str, Any]) -> dict[str, Any]:
    """A manifest body signed again over whatever its survey now holds (so that a changed
    number reaches the survey parser, not only the signature check)."""
    raw = body["survey"]
    try:
        signed_bytes = canonical_json(raw)
    except (TypeError, ValueError):
        return body
    return {**body, "signature": base64.b64encode(DESIGNER.sign(signed_bytes)).decode(),
            "public_key": public_key_b64(DESIGNER.public_key())}


def canonical(data: dict[str, Any]) -> dict[str, Any]:
    return Survey.from_dict(data).to_dict()


def body_templates(deployed: Deployed) -> dict[str, list[tuple[dict[str, Any], Any]]]:
    """operationId -> [(valid body, what to do to a mutated copy before sending)]."""
    keep = lambda body: body  # noqa: E731
    return {
        "createSurvey": [(resigned({"survey": canonical(survey_dict("health", 2))}), resigned),
                         (resigned({"survey": canonical(two_server_survey(
                             "https://helper.example", deployed.helper_key,
                             deployed.leader_key, version=2))}), resigned)],
        "submit": [(submission(), keep), ({"submissions": [submission(), submission()]}, keep)],
        "twoServerUpload": [(deployed.upload(), keep)],
        "invitation": [({"invite": deployed.invite_code}, keep)],
    }


def helper_templates(deployed: Deployed) -> dict[str, list[tuple[dict[str, Any], Any]]]:
    reports = []
    for _ in range(5):
        upload = deployed.upload()
        reports.append({"submission_id": upload["submission_id"],
                        "public_shares": upload["public_shares"],
                        "helper_share": upload["helper_share"],
                        "leader_prep_shares": {k: b64url(os.urandom(32))
                                               for k in upload["public_shares"]}})
    job = {"manifest": signed_survey(deployed.pulse, DESIGNER),
           "verify_key": b64url(os.urandom(32)), "reports": reports}
    return {"helper.job": [(job, fresh_report_ids)],
            "helper.collect": [({"collection_id": "c-1"}, lambda body: body)]}


def fresh_report_ids(body: Any) -> Any:
    """A job's reports under new ids, so that a mutated job is prepared, not refused as a
    replay of the last one (their sealed shares no longer open: rejected reports, still
    prepared)."""
    reports = body.get("reports") if isinstance(body, dict) else None
    for report in reports if isinstance(reports, list) else []:
        if isinstance(report, dict) and isinstance(report.get("submission_id"), str):
            report["submission_id"] = str(uuid.uuid4())
    return body


def leaves(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """(path, leaf) of every scalar in a JSON value."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from leaves(item, (*path, index))
    else:
        yield path, value


def replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    out = copy.deepcopy(value)
    node = out
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = new
    return out


def mutations(template: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """Every leaf replaced by each out-of-range integer; an integer leaf also by non-integers."""
    for path, leaf in leaves(template):
        bad = BIG + (NOT_INTEGERS if type(leaf) is int else [])
        for value in bad:
            yield f"{path} = {value!r:.30}", replaced(template, path, value)


def assert_no_5xx(response: Any, what: str) -> None:
    """Not a server error, and JSON (a refusal is {"error": ...}; a number in a string-typed
    place, a batch id of digits say, may well be accepted)."""
    assert response.status_code < 500, (what, response.status_code, response.data[:300])
    body = response.get_json()
    assert response.status_code < 400 or "error" in body, what


def openapi_operations() -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, methods in openapi_document()["paths"].items():
        for method, operation in methods.items():
            yield path, method, operation


def url(path: str, values: dict[str, str]) -> str:
    for name, value in values.items():
        path = path.replace("{" + name + "}", value)
    return path


SURVEY_IDS = ("health", "pulse", "carried")
BATCH = str(uuid.uuid4())


def test_every_body_route_has_a_template(deployed: Deployed) -> None:
    documented = {op["operationId"] for _, _, op in openapi_operations() if "requestBody" in op}
    assert documented == set(body_templates(deployed))
    posts = {r.endpoint for r in deployed.helper.url_map.iter_rules()
             if "POST" in (r.methods or ())}
    assert posts == set(helper_templates(deployed))


@pytest.mark.parametrize(("path", "method", "operation"), list(openapi_operations()),
                         ids=[f"{m} {p}" for p, m, _ in openapi_operations()])
def test_leader_parameters_never_5xx(deployed: Deployed, path: str, method: str,
                                     operation: dict[str, Any]) -> None:
    client = deployed.leader.test_client()
    params = operation.get("parameters", [])
    for survey_id in SURVEY_IDS:
        defaults = {"survey_id": survey_id, "batch_id": BATCH}
        query = {p["name"]: QUERY_DEFAULTS.get(p["name"], "1") for p in params
                 if p["in"] == "query" and p.get("required")}
        for param in params:
            for value in [*BIG, *NOT_INTEGERS, -1, 0]:
                text = json.dumps(value)
                values, args = dict(defaults), dict(query)
                (values if param["in"] == "path" else args)[param["name"]] = text
                response = client.open(url(path, values), method=method.upper(),
                                       query_string=args, headers=deployed.auth)
                assert response.status_code < 500, (path, param["name"], text,
                                                    response.data[:300])


@pytest.mark.parametrize("operation_id", ["createSurvey", "submit", "twoServerUpload",
                                          "invitation"])
def test_leader_bodies_never_5xx(deployed: Deployed, operation_id: str) -> None:
    paths = {op["operationId"]: (path, method) for path, method, op in openapi_operations()}
    path, method = paths[operation_id]
    client = deployed.leader.test_client()
    for template, prepare in body_templates(deployed)[operation_id]:
        accepted = [client.open(url(path, {"survey_id": survey_id}), method=method.upper(),
                                json=prepare(template), headers=deployed.auth).status_code < 300
                    for survey_id in SURVEY_IDS]
        assert any(accepted), "an unchanged template reaches the store (the sweep goes deep)"
        for survey_id in SURVEY_IDS:
            for what, body in mutations(template):
                response = client.open(url(path, {"survey_id": survey_id}),
                                       method=method.upper(), data=json.dumps(prepare(body)),
                                       content_type="application/json", headers=deployed.auth)
                assert_no_5xx(response, f"{operation_id} {survey_id} {what}")


def test_helper_routes_never_5xx(deployed: Deployed) -> None:
    client = deployed.helper.test_client()
    auth = {"Authorization": f"Bearer {LEADER_TOKEN}"}
    templates = helper_templates(deployed)
    for rule in deployed.helper.url_map.iter_rules():
        if rule.endpoint == "static":
            continue
        template = re.sub(r"<(?:[^:>]+:)?([^>]+)>", r"{\1}", rule.rule)  # <int:v> -> {v}
        defaults = {"survey_id": "pulse", "version": "1"}
        method = "POST" if "POST" in (rule.methods or ()) else "GET"
        body = templates.get(rule.endpoint, [({}, None)])[0][0]
        if rule.endpoint == "helper.job":  # the template itself is a job the helper runs
            response = client.open(url(template, {**defaults, "batch_id": str(uuid.uuid4())}),
                                   method=method, json=body, headers=auth)
            assert response.status_code == 200, response.get_json()
        for name in rule.arguments:
            for value in [*BIG, *NOT_INTEGERS, -1, 0]:
                path = url(template, {**defaults, "batch_id": BATCH, name: json.dumps(value)})
                response = client.open(path, method=method, json=body, headers=auth)
                assert_no_5xx(response, f"{rule.rule} {name}={value!r:.30}")
        for valid, prepare in templates.get(rule.endpoint, []):
            for what, mutated in mutations(valid):
                path = url(template, {**defaults, "batch_id": str(uuid.uuid4())})
                response = client.open(path, method=method, data=json.dumps(prepare(mutated)),
                                       content_type="application/json", headers=auth)
                assert_no_5xx(response, f"{rule.rule} {what}")


def test_the_reported_500s_are_4xx_naming_the_field(deployed: Deployed) -> None:
    leader = deployed.leader.test_client()
    response = leader.post("/api/surveys/any/two-server/uploads",
                           data=b'{"version": 9223372036854775808}',
                           content_type="application/json")
    assert response.status_code == 422
    assert response.get_json()["error"]["details"] == {"field": "version"}
    helper = deployed.helper.test_client()
    response = helper.post(f"/helper/surveys/any/versions/9223372036854775808/batches/{BATCH}"
                           "/collect", json={"collection_id": "c"},
                           headers={"Authorization": f"Bearer {LEADER_TOKEN}"})
    assert response.status_code == 400
    assert response.get_json()["error"]["details"] == {"parameter": "version"}


@pytest.mark.parametrize("text", ["%%%", "QR", "Q", "QQ=", "a+b/", "QQ\n", " QQ"])
def test_base64url_is_decoded_strictly(text: str) -> None:
    with pytest.raises(ValueError):
        from_b64url(text)


@pytest.mark.parametrize(("text", "raw"), [("", b""), ("QQ", b"A"), ("QQ==", b"A"),
                                           ("QUFB", b"AAA"), ("-_8", b"\xfb\xff")])
def test_base64url_accepts_every_canonical_form(text: str, raw: bytes) -> None:
    assert from_b64url(text) == raw


@pytest.mark.parametrize("field", ["public_shares.smoker", "leader_share", "helper_share"])
def test_an_upload_with_malformed_base64_is_refused_naming_the_field(deployed: Deployed,
                                                                     field: str) -> None:
    body = deployed.upload()
    if "." in field:
        body["public_shares"]["smoker"] = "%%%"
    else:
        body[field] = "%%%"
    response = deployed.leader.test_client().post("/api/surveys/pulse/two-server/uploads",
                                                  json=body)
    assert response.status_code == 422
    error = response.get_json()["error"]
    assert error["details"] == {"field": field} and field in error["message"]
