"""Skip logic end to end from the CLI against a real `ldpsurvey serve`: `respond` asks only the
questions that apply, sends a randomized "not asked" for a follow-up whose condition reads a
randomized answer (so the stored reports have the same shape whatever was answered) and
nothing for one whose condition reads disclosed answers only; the ledger books every report
sent; the server refuses a submission whose presence does not fit its disclosed answers; the
estimates show the share not asked and the shares among those asked."""

from __future__ import annotations

import json
import urllib.error
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ldpsurvey.client.ledger import Ledger
from ldpsurvey.client.state import StateDir
from support.clients import RealServer, http_json
from support.skip import report_shape, skip_survey
from test_client_e2e import run

SID = "skipping"


@pytest.fixture(scope="module")
def deployed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("skip")
    server = RealServer(root / "server.db")
    server.start()
    try:
        token = server.token()
        assert run("keys", "generate", "--out", str(root / "keys")).returncode == 0
        path = root / "survey.json"
        path.write_text(json.dumps(skip_survey(SID)))
        published = run("publish", str(path), "--server", server.url, "--token", token,
                        "--key", str(root / "keys" / "survey-signing.key"))
        assert published.returncode == 0, published.stderr
        yield {"server": server, "token": token, "root": root,
               "pub": str(root / "keys" / "survey-signing.pub")}
    finally:
        server.stop()


def respond(deployed: dict[str, Any], state: Path, answers: dict[str, Any] | None = None,
            *extra: str, input: str | None = None) -> Any:
    args = ["respond", "--server", deployed["server"].url, "--survey", SID, "--trust",
            deployed["pub"], "--state", str(state), *extra]
    if answers is not None:
        path = state.with_suffix(".json")
        path.write_text(json.dumps(answers))
        args += ["--answers", str(path)]
    return run(*args, input=input)


def test_stored_reports_have_the_same_shape_whatever_was_answered(
        deployed: dict[str, Any], tmp_path: Path) -> None:
    users = {"used": True, "freq": "weekly", "days": 12, "region": "north", "clinic": False}
    others = {"used": False, "region": "north", "clinic": True}
    for name, answers in (("user", users), ("other", others)):
        result = respond(deployed, tmp_path / name, answers, "--yes")
        assert result.returncode == 0, result.stderr
    rows = deployed["server"].export(SID, deployed["token"])
    assert len(rows) == 2
    shapes = [{qid: report_shape(r) for qid, r in row["answers"].items()} for row in rows]
    assert shapes[0] == shapes[1]  # the server cannot tell who was asked the follow-ups
    assert set(shapes[0]) == {"used", "freq", "days", "region", "clinic"}
    assert shapes[0]["days"] == ["list", "int", "int"]  # the asked bit and the number
    # The ledger books what was sent: the follow-ups cost their ε though they did not apply.
    entries = Ledger(StateDir(str(tmp_path / "other"))).entries()
    charged = {e["question"]: e["epsilon"] for e in entries if not e.get("disclosed")}
    assert charged == pytest.approx({"used": 1.0, "freq": 1.0, "days": 1.0, "clinic": 1.0})


def test_a_public_condition_sends_nothing_and_costs_nothing(deployed: dict[str, Any],
                                                            tmp_path: Path) -> None:
    state = tmp_path / "south"
    result = respond(deployed, state, {"used": False, "region": "south"}, "--dry-run")
    assert result.returncode == 0, result.stderr
    review = result.stdout
    assert "Have you been to the northern clinic?" in review  # said once, in the skip note
    assert "Nothing is sent for them" in review
    assert "still sends a randomized ‘not asked’" in review
    assert "ε = 3 in total" in review  # used, freq, days: 1 + 1 + 1
    result = respond(deployed, state, {"used": False, "region": "south"}, "--yes")
    assert result.returncode == 0, result.stderr
    entries = Ledger(StateDir(str(state))).entries()
    assert "clinic" not in {e["question"] for e in entries}


def test_respond_asks_only_the_questions_that_apply(deployed: dict[str, Any],
                                                    tmp_path: Path) -> None:
    typed = "\n".join(["no", "2"]) + "\n"  # used: no; region: south; nothing else is asked
    result = respond(deployed, tmp_path / "typed", None, "--yes", input=typed)
    assert result.returncode == 0, result.stderr
    assert "How often?" not in result.stdout.split("Randomized and stored")[0]
    assert "Where do you live?" in result.stdout


def test_an_answer_to_a_question_that_does_not_apply_is_refused(deployed: dict[str, Any],
                                                                tmp_path: Path) -> None:
    before = len(deployed["server"].export(SID, deployed["token"]))
    result = respond(deployed, tmp_path / "wrong", {"used": False, "freq": "weekly",
                                                    "region": "south"}, "--yes")
    assert result.returncode != 0
    (line,) = result.stderr.strip().splitlines()
    assert "'freq' does not apply to these answers" in line
    assert len(deployed["server"].export(SID, deployed["token"])) == before


def test_the_server_checks_presence_against_the_disclosed_answers(
        deployed: dict[str, Any]) -> None:
    server, token = deployed["server"], deployed["token"]
    before = len(server.export(SID, token))
    # region "south" (index 1) with a clinic report: the clinic question does not apply there
    body = {"submission_id": "6f1c2d3e-4a5b-4c6d-8e7f-000000000001", "version": 1,
            "answers": {"used": True, "freq": 3, "days": [1, 4], "region": 1, "clinic": True}}
    with pytest.raises(urllib.error.HTTPError) as info:
        http_json("POST", f"{server.url}/api/surveys/{SID}/submissions", body)
    assert info.value.code == 422
    error = json.loads(info.value.read())["error"]
    assert "does not apply" in json.dumps(error)
    missing = {**body, "answers": {**body["answers"], "region": 0}}
    del missing["answers"]["clinic"]
    with pytest.raises(urllib.error.HTTPError) as info:
        http_json("POST", f"{server.url}/api/surveys/{SID}/submissions", missing)
    assert info.value.code == 422
    no_follow_up = {**body, "answers": {"used": True, "region": 1}}  # hidden ones: required
    with pytest.raises(urllib.error.HTTPError) as info:
        http_json("POST", f"{server.url}/api/surveys/{SID}/submissions", no_follow_up)
    assert info.value.code == 422
    assert len(server.export(SID, token)) == before


def test_the_estimates_show_not_asked_and_shares_among_those_asked(
        deployed: dict[str, Any]) -> None:
    server, token = deployed["server"], deployed["token"]
    doc = http_json("GET", f"{server.url}/api/surveys/{SID}/estimates", token=token)
    by_id = {q["question"]: q for q in doc["questions"]}
    freq = by_id["freq"]
    assert [c["value"] for c in freq["categories"]] == ["rarely", "monthly", "weekly",
                                                        "(not asked)"]
    assert freq["not_asked"]["value"] == "(not asked)"
    assert [c["value"] for c in freq["among_asked"]["categories"]] == ["rarely", "monthly",
                                                                       "weekly"]
    assert "mean" in by_id["days"]["among_asked"] and "not_asked" in by_id["days"]
    assert "among_asked" not in by_id["used"] and "not_asked" not in by_id["clinic"]
