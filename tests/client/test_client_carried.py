"""A value the invitation carries from the main survey's export, read by a condition
(`carried = true`; docs/sensitive-module.md, "Values a condition reads"), against a real
`ldpsurvey serve`: `invites create --carry` carries it (and refuses a survey whose carried
question it does not carry), `respond` fills it in from the invitation and shows it, the
follow-up it gates is asked or not as the main survey's value says, and the server refuses a
submission whose carried value is not its invitation's (422, nothing stored).
"""

from __future__ import annotations

import csv
import io
import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.analyst.cli import cli
from ldpsurvey.shared.manifest import fingerprint
from support.clients import RealServer, http_json

SURVEY = {
    "id": "module", "title": "Sensitive module", "version": 1,
    "questions": [
        {"id": "smoker", "text": "Do you smoke?", "type": "binary", "epsilon": 1.0},
        {"id": "children_n", "text": "Household members aged 5 to 17", "type": "integer",
         "min": 0, "max": 30, "disclosed": True, "carried": True},
        {"id": "school_drop", "text": "Has a child of the household left school?",
         "type": "binary", "epsilon": 1.0, "relevant": "children_n >= 1"},
    ],
}
# The main survey's export, as ODK Central writes it: the count under its group path.
EXPORT = ("KEY,consented-demographics-ind_age_5_17_n,region\n"
          "uuid:1,2,north\nuuid:2,0,south\nuuid:3,1.0,north\n")
CARRY = "children_n=consented-demographics-ind_age_5_17_n"


@dataclass
class Deployed:
    server: RealServer
    token: str
    key: Ed25519PrivateKey
    codes: dict[str, str]
    root: Path


def run(*args: Any) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


def create(server: RealServer, export: Path, *extra: Any) -> Result:
    return run("invites", "create", "--db", server.db_path, "--survey", "module",
               "--from-export", export, "--key", "KEY", *extra)


@pytest.fixture(scope="module")
def deployed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployed]:
    root = tmp_path_factory.mktemp("carried")
    server = RealServer(root / "server.db")
    server.start()
    try:
        token, key = server.token(), Ed25519PrivateKey.generate()
        server.publish(SURVEY, key, token)
        export = root / "main.csv"
        export.write_text(EXPORT, encoding="utf-8")
        # codes that do not carry the survey's carried question are refused, nothing stored
        for extra in ((), ("--carry", "region")):
            refused = create(server, export, *extra)
            assert refused.exit_code == 1 and "--carry children_n" in refused.output, \
                refused.output
        plain = run("invites", "create", "--db", server.db_path, "--survey", "module",
                    "--count", "1")
        assert plain.exit_code == 1 and "--from-export" in plain.output, plain.output
        listed = run("invites", "list", "--db", server.db_path, "--survey", "module")
        assert "0 code(s) issued" in listed.output
        made = create(server, export, "--carry", CARRY)
        assert made.exit_code == 0, made.output
        codes = {row["key"]: row["code"] for row in csv.DictReader(io.StringIO(made.stdout))}
        yield Deployed(server, token, key, codes, root)
    finally:
        server.stop()


def respond(d: Deployed, state: Path, answers: dict[str, Any], *extra: Any) -> Result:
    path = state.parent / f"{state.name}.json"
    path.write_text(json.dumps(answers))
    return run("respond", "--server", d.server.url, "--survey", "module", "--answers", path,
               "--trust", fingerprint(d.key.public_key()), "--state", state, "--attempts", 1,
               "--yes", *extra)


def test_an_export_value_out_of_range_is_refused(deployed: Deployed, tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("KEY,consented-demographics-ind_age_5_17_n\nuuid:9,31\n", encoding="utf-8")
    result = create(deployed.server, bad, "--carry", CARRY)
    assert result.exit_code == 1
    assert "'children_n' is '31', not a whole number from 0 to 30" in result.output


def test_the_carried_value_gates_the_follow_up_both_ways(deployed: Deployed,
                                                         tmp_path: Path) -> None:
    # uuid:1 carries 2: the follow-up is asked, randomized, and sent
    asked = respond(deployed, tmp_path / "a", {"smoker": True, "school_drop": False},
                    "--invite", deployed.codes["uuid:1"])
    assert asked.exit_code == 0, asked.output
    assert "Your invitation carries these values from your interview" in asked.output
    assert "children_n: 2" in asked.output
    # uuid:2 carries 0: the follow-up is not asked (answering it is refused before any draw)
    refused = respond(deployed, tmp_path / "b", {"smoker": True, "school_drop": False},
                      "--invite", deployed.codes["uuid:2"])
    assert refused.exit_code == 1 and "school_drop" in refused.output, refused.output
    skipped = respond(deployed, tmp_path / "b", {"smoker": False},
                      "--invite", deployed.codes["uuid:2"])
    assert skipped.exit_code == 0, skipped.output
    stored = {s["answers"]["children_n"]: s["answers"]
              for s in deployed.server.export("module", deployed.token)}
    assert set(stored[2]) == {"smoker", "children_n", "school_drop"}
    assert set(stored[0]) == {"smoker", "children_n"}


def test_an_answer_to_the_carried_question_must_be_the_invitation_s(
        deployed: Deployed, tmp_path: Path) -> None:
    result = respond(deployed, tmp_path / "c", {"smoker": True, "children_n": 5,
                                                "school_drop": True},
                     "--invite", deployed.codes["uuid:3"])
    assert result.exit_code == 1
    assert "'children_n' is the value your invitation carries (1)" in result.output
    assert not (tmp_path / "c" / "ledger.json").exists()


def test_without_an_invitation_the_survey_is_refused_before_anything_is_drawn(
        deployed: Deployed, tmp_path: Path) -> None:
    result = respond(deployed, tmp_path / "d", {"smoker": True}, "--dry-run")
    assert result.exit_code == 1, result.output
    assert "takes 'children_n' from your invitation" in result.output
    assert "--invite CODE" in result.output
    assert not (tmp_path / "d" / "ledger.json").exists()


def post(d: Deployed, body: dict[str, Any]) -> tuple[int, Any]:
    import urllib.error

    try:
        return 200, http_json("POST", f"{d.server.url}/api/surveys/module/submissions", body)
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_the_server_refuses_another_value_than_the_invitation_s(deployed: Deployed) -> None:
    before = deployed.server.export("module", deployed.token)
    code = deployed.codes["uuid:3"]  # carries 1 ("1.0" in the export)
    for value, body_extra in ((4, {"invite": code}), (1, {})):
        body = {"submission_id": str(uuid.uuid4()), "version": 1, **body_extra,
                "answers": {"smoker": True, "children_n": value, "school_drop": True}}
        status, answer = post(deployed, body)
        assert status == 422, answer
        [item] = answer["error"]["details"]["items"]
        message = item["errors"][0]["message"]
        assert ("not the value the invitation carries" in message if body_extra
                else "send the invitation code that carries it" in message)
    assert deployed.server.export("module", deployed.token) == before
    listed = run("invites", "list", "--db", deployed.server.db_path, "--survey", "module")
    assert "3 code(s) issued" in listed.output and "uuid" not in listed.output
