"""`ldpsurvey respond` end to end against a real `ldpsurvey serve`, as a respondent would run it.

One server for the module (started once, on a free port, readiness by polling /healthz); the
designer's side uses the real `keys generate` and `publish` commands.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.client import Respondent
from ldpsurvey.shared.manifest import fingerprint, load_public_key
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Survey
from support.clients import RealServer, free_port, http_json, ldpsurvey_exe, survey_dict
from support.timeouts import TEST_TIMEOUT

TRUE_ANSWERS = {"smoker": True, "mood": "great", "drinks": 17}
SURVEY_OPTIONS = survey_dict()["questions"][1]["options"]  # mood's labels, by index


def run(*args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ldpsurvey_exe(), *args], capture_output=True, text=True,
                          input=input, timeout=TEST_TIMEOUT, check=False)


def weekly(version: int) -> dict[str, Any]:
    """A longitudinal survey whose yes/no and GRR questions carry an instantaneous layer."""
    data = survey_dict(survey_id="weekly", version=version, series="weekly-checkin")
    for q in data["questions"][:2]:
        q["instantaneous_epsilon"] = 0.5
    return data


@pytest.fixture(scope="module")
def deployed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("e2e")
    server = RealServer(root / "server.db")
    server.start()
    try:
        token = server.token()
        keys = run("keys", "generate", "--out", str(root / "keys"))
        assert keys.returncode == 0, keys.stderr
        surveys = [survey_dict(survey_id=s)
                   for s in ("scripted", "dry", "prompted", "closing", "invited")]
        surveys += [weekly(version) for version in (1, 2)]
        crossed = survey_dict(survey_id="crossed")
        crossed["crosstabs"] = [["smoker", "mood"]]
        surveys.append(crossed)
        for i, data in enumerate(surveys):
            path = root / f"survey-{i}.json"
            path.write_text(json.dumps(data))
            published = run("publish", str(path), "--server", server.url, "--token", token,
                            "--key", str(root / "keys" / "survey-signing.key"))
            assert published.returncode == 0, published.stderr
        answers = root / "answers.json"
        answers.write_text(json.dumps(TRUE_ANSWERS))
        yield {"server": server, "token": token, "root": root, "answers": answers,
               "pub": root / "keys" / "survey-signing.pub"}
    finally:
        server.stop()


def test_scripted_respond_end_to_end(deployed: dict[str, Any], tmp_path: Path) -> None:
    server, state = deployed["server"], tmp_path / "state"
    result = run("respond", "--server", server.url, "--survey", "scripted", "--answers",
                 str(deployed["answers"]), "--trust", str(deployed["pub"]), "--state", str(state),
                 "--yes")
    assert result.returncode == 0, result.stderr
    assert "sent submission" in result.stdout
    assert "nothing has been randomized yet" not in result.stdout  # --yes: no review
    [stored] = server.export("scripted", deployed["token"])
    [receipt] = (state / "receipts").iterdir()
    body = json.loads(receipt.read_text())["body"]
    assert stored["submission_id"] == body["submission_id"]
    assert stored["answers"] == body["answers"]
    # Every report is valid for its mechanism, and the skipped-nothing submission is complete.
    survey = Survey.from_dict(survey_dict(survey_id="scripted"))
    for q in survey.questions:
        mechanism_for(q).validate_report(stored["answers"][q.id])

    receipts = run("receipts", "--state", str(state))
    assert receipts.returncode == 0
    assert body["submission_id"] in receipts.stdout
    assert "scripted: ε = 3.5" in receipts.stdout
    # the reports in words, options by label (never the index sent, nor the true answer as
    # such: "great" appears only if the randomization sent it)
    said = json.loads(receipt.read_text())["said"]["reports"]
    for line in said:
        assert f"    {line['text']} -> {line['report']}\n" in receipts.stdout
    sent_mood = SURVEY_OPTIONS[body["answers"]["mood"]]
    assert f"the option “{sent_mood}”" in receipts.stdout
    assert "great" not in receipts.stdout or sent_mood == "great"

    again = run("respond", "--server", server.url, "--survey", "scripted", "--answers",
                str(deployed["answers"]), "--trust", str(deployed["pub"]), "--state", str(state),
                "--yes")
    assert again.returncode == 1
    assert again.stderr.strip().splitlines() == [
        line for line in again.stderr.strip().splitlines() if line.startswith("Error:")]
    assert "already answered survey 'scripted' version 1" in again.stderr
    assert len(server.export("scripted", deployed["token"])) == 1


BLOCKER = """
import importlib.abc, sys

class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"flask", "werkzeug", "waitress", "sqlite_utils", "orjson",
                                   "matplotlib"}:
            raise ImportError(f"{name} is not on a respondent's device")
        return None

sys.meta_path.insert(0, Blocker())
"""


def test_a_respondent_device_needs_no_server_or_plotting_libraries(
        deployed: dict[str, Any], tmp_path: Path) -> None:
    """`respond` and `receipts` run with Flask, waitress, sqlite-utils, orjson and matplotlib
    missing."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BLOCKER)
    env = {**os.environ, "PYTHONPATH": str(site)}
    state = tmp_path / "state"
    blocked = subprocess.run([sys.executable, "-c", "import flask"], env=env,
                             capture_output=True, text=True, timeout=TEST_TIMEOUT)
    assert "not on a respondent's device" in blocked.stderr  # the blocker is active
    for args in (("respond", "--server", deployed["server"].url, "--survey", "scripted",
                  "--answers", str(deployed["answers"]), "--trust", str(deployed["pub"]),
                  "--state", str(state), "--yes"),
                 ("receipts", "--state", str(state))):
        result = subprocess.run([sys.executable, "-m", "ldpsurvey.analyst.cli", *args], env=env,
                                capture_output=True, text=True, timeout=TEST_TIMEOUT)
        assert result.returncode == 0, result.stderr


def test_dry_run_shows_the_review_and_draws_records_and_sends_nothing(
        deployed: dict[str, Any], tmp_path: Path) -> None:
    """A dry run never prints a draw: a report shown and not sent could be re-rolled."""
    server, state = deployed["server"], tmp_path / "state"
    trust = fingerprint(load_public_key(deployed["pub"]))
    result = run("respond", "--server", server.url, "--survey", "dry", "--answers",
                 str(deployed["answers"]), "--trust", trust, "--state", str(state), "--dry-run")
    assert result.returncode == 0, result.stderr
    assert "nothing has been randomized yet" in result.stdout
    assert "‘yes’ (your real answer) with probability 73.1%" in result.stdout  # ε = 1
    assert "dry run: nothing was randomized, recorded or sent" in result.stderr
    assert "submission_id" not in result.stdout and "{" not in result.stdout
    assert server.export("dry", deployed["token"]) == []
    assert not (state / "ledger.json").exists()
    assert list(state.rglob("*.json")) == [tmp_path / "state" / "trust.json"]  # pinned only


def test_interactive_respond(deployed: dict[str, Any], tmp_path: Path) -> None:
    server = deployed["server"]
    # yes/no, then an invalid choice (re-asked), then option 4, then skip the optional one.
    result = CliRunner().invoke(
        cli, ["respond", "--server", server.url, "--survey", "prompted", "--state",
              str(tmp_path / "state"), "--yes"], input="yes\n9\n4\n\n")
    assert result.exit_code == 0, result.output
    # The page's plain words (client/web/js/form.js hintFor), not mechanism jargon.
    assert ("Privacy: anyone who sees what is sent can be at most 4.5 times more sure of this "
            "answer than before, for example from 50% to at most 82% sure (ε = 1.5).") \
        in result.output
    assert "Your privacy: your device randomizes every answer before sending it." \
        in result.output
    assert "costs ε" not in result.output and "only with probability" not in result.output
    assert "the server sees that you skipped it" in result.output
    assert "FIRST USE" in result.output  # no --trust: pinned with a loud warning
    [stored] = server.export("prompted", deployed["token"])
    assert set(stored["answers"]) == {"smoker", "mood"}


def test_unreachable_server_is_a_one_line_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["respond", "--server", f"http://127.0.0.1:{free_port()}",
                                      "--survey", "x", "--state", str(tmp_path), "--attempts",
                                      "1", "--yes"])
    assert result.exit_code == 1
    assert result.output.startswith("Error: fetching survey 'x':")
    assert len(result.output.strip().splitlines()) == 1


def test_unknown_survey_is_a_one_line_error(deployed: dict[str, Any], tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["respond", "--server", deployed["server"].url,
                                      "--survey", "nope", "--state", str(tmp_path), "--yes"])
    assert result.exit_code == 1
    assert "HTTP 404" in result.output and len(result.output.strip().splitlines()) == 1


def test_longitudinal_two_layer_survey_against_the_real_server(deployed: dict[str, Any],
                                                               tmp_path: Path) -> None:
    server, token = deployed["server"], deployed["token"]
    r = Respondent(server.url, state_dir=str(tmp_path / "state"),
                   trust=str(deployed["pub"]))
    # The server serves the latest version (2); version 1 is answered from its local copy.
    latest = r.fetch_survey("weekly")
    assert latest.survey.version == 2
    first = Survey.from_dict(weekly(1))
    for survey in (first, latest.survey):
        assert r.submit(r.answer(survey, TRUE_ANSWERS)).status == "sent"
    stored = server.export("weekly", token)
    assert sorted(e["version"] for e in stored) == [1, 2]
    entries = r.ledger.entries()
    assert [e["reused"] for e in entries if e["version"] == 2] == [True, True, True]
    mood = mechanism_for(latest.survey.question("mood"))
    assert entries[1]["report_epsilon"] == mood.realized_epsilon() < 0.5
    # The server estimates two-layer questions with the composite channel, unchanged.
    estimates = http_json("GET", f"{server.url}/api/surveys/weekly/estimates", token=token)
    names = {q["question"]: q["mechanism"] for q in estimates["questions"]}
    assert names["mood"] == "grr+instantaneous"


def test_closed_survey_is_not_answered(deployed: dict[str, Any], tmp_path: Path) -> None:
    server = deployed["server"]
    http_json("POST", f"{server.url}/api/surveys/closing/close", {}, token=deployed["token"])
    result = CliRunner().invoke(cli, ["respond", "--server", server.url, "--survey", "closing",
                                      "--answers", str(deployed["answers"]), "--state",
                                      str(tmp_path), "--yes"])
    assert result.exit_code == 1
    assert "survey 'closing' is closed" in result.output
    assert not (tmp_path / "ledger.json").exists()


def test_invite_only_survey_needs_the_code_once(deployed: dict[str, Any], tmp_path: Path) -> None:
    server = deployed["server"]
    created = run("invites", "create", "--db", str(server.db_path), "--survey", "invited",
                  "--count", "1")
    assert created.returncode == 0, created.stderr
    [code] = created.stdout.split()

    def respond(state: str, *extra: str) -> subprocess.CompletedProcess[str]:
        return run("respond", "--server", server.url, "--survey", "invited", "--answers",
                   str(deployed["answers"]), "--trust", str(deployed["pub"]), "--state",
                   str(tmp_path / state), "--attempts", "1", "--yes", *extra)

    refused = respond("no-code")
    assert refused.returncode != 0
    assert "invit" in refused.stderr.lower()
    assert server.export("invited", deployed["token"]) == []

    dry = respond("dry", "--invite", code, "--dry-run")
    assert dry.returncode == 0 and "invitation code is sent with the reports" in dry.stdout

    sent = respond("with-code", "--invite", code)
    assert sent.returncode == 0, sent.stderr
    assert len(server.export("invited", deployed["token"])) == 1

    reused = respond("reused", "--invite", code)
    assert reused.returncode != 0
    assert len(server.export("invited", deployed["token"])) == 1


def test_declared_crosstab_survey_end_to_end(deployed: dict[str, Any], tmp_path: Path) -> None:
    """A survey declaring a crosstab is published with the real CLI, verified and answered by
    real devices; the server's declared joint aggregate counts them, equals the ad-hoc pass,
    and `report --crosstab` reads it over HTTP. Two-layer questions cross too."""
    server, token = deployed["server"], deployed["token"]
    for i in range(3):
        r = Respondent(server.url, state_dir=str(tmp_path / f"state{i}"),
                       trust=str(deployed["pub"]))
        verified = r.fetch_survey("crossed")
        assert [c.key for c in verified.survey.crosstabs] == ["crosstab:smoker:mood"]
        assert r.submit(r.answer(verified.survey, TRUE_ANSWERS)).status == "sent"
    base = f"{server.url}/api/surveys/crossed/crosstab?rows=smoker&cols=mood"
    declared = http_json("GET", base + "&source=declared", token=token)
    adhoc = http_json("GET", base + "&source=reports", token=token)
    assert declared["n"] == adhoc["n"] == 3
    assert declared["joint"] == adhoc["joint"]
    res = CliRunner().invoke(cli, ["report", "--server", server.url, "--token", token,
                                   "--survey", "crossed", "--crosstab", "smoker", "mood"])
    assert res.exit_code == 0, res.output
    assert "declared crosstab aggregate" in res.output
    weekly_doc = http_json("GET", f"{server.url}/api/surveys/weekly/crosstab?rows=smoker&"
                           "cols=mood", token=token)
    assert weekly_doc["cols"]["mechanism"] == "grr+instantaneous"
