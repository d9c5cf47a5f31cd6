"""A check-all-that-apply survey end to end with the real CLI against a real `ldpsurvey serve`:
published signed, answered with --answers lists and interactively, the review in plain words,
receipts and the ledger, and the analyst's report in every format."""

from __future__ import annotations

import csv
import io
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from support.clients import RealServer, ldpsurvey_exe
from support.timeouts import TEST_TIMEOUT

OPTIONS = ["cannabis", "cocaine", "ecstasy", "opioids"]


def survey(survey_id: str, mechanism: str = "auto", series: str | None = None,
           max_selected: int = 3) -> dict:
    data: dict[str, Any] = {"id": survey_id, "title": "Substances", "version": 1, "questions": [
        {"id": "smoker", "text": "Do you smoke?", "type": "binary", "epsilon": 1.0},
        {"id": "substances", "type": "multiselect", "epsilon": 2.0, "mechanism": mechanism,
         "text": "Which of these have you used in the past 12 months? (check all that apply)",
         "options": OPTIONS, "max_selected": max_selected}]}
    if series:
        data["series"] = series
    return data


def run(*args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ldpsurvey_exe(), *args], capture_output=True, text=True,
                          input=input, timeout=TEST_TIMEOUT, check=False)


@pytest.fixture(scope="module")
def deployed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("multiselect")
    server = RealServer(root / "server.db")
    server.start()
    try:
        token = server.token()
        assert run("keys", "generate", "--out", str(root / "keys")).returncode == 0
        surveys = [survey("scripted", "psfo_grr"), survey("prompted", "option_rr"),
                   survey("weekly", "set_ue", series="weekly", max_selected=2)]
        for data in surveys:
            path = root / f"{data['id']}.json"
            path.write_text(json.dumps(data))
            published = run("publish", str(path), "--server", server.url, "--token", token,
                            "--key", str(root / "keys" / "survey-signing.key"))
            assert published.returncode == 0, published.stderr
        yield {"server": server, "token": token, "root": root,
               "pub": str(root / "keys" / "survey-signing.pub")}
    finally:
        server.stop()


def respond(deployed: dict[str, Any], survey_id: str, answers: dict, state: Path,
            *extra: str) -> subprocess.CompletedProcess[str]:
    path = state.parent / f"answers-{state.name}.json"
    path.write_text(json.dumps(answers))
    return run("respond", "--server", deployed["server"].url, "--survey", survey_id,
               "--answers", str(path), "--trust", deployed["pub"], "--state", str(state), *extra)


def test_answers_file_review_send_receipts_and_report(deployed: dict[str, Any],
                                                      tmp_path: Path) -> None:
    server, token = deployed["server"], deployed["token"]
    dry = respond(deployed, "scripted", {"smoker": False, "substances": ["opioids", "cannabis"]},
                  tmp_path / "dry", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "Your answer (stays on this device): cannabis, opioids" in dry.stdout
    assert ("Your device will send one item out of the 4 options and 3 blanks: 2 options you "
            "checked and 1 blank with probability") in dry.stdout
    assert server.export("scripted", token) == []
    for i, chosen in enumerate([["opioids", "cannabis"], [], ["ecstasy"]]):
        sent = respond(deployed, "scripted", {"smoker": True, "substances": chosen},
                       tmp_path / f"device-{i}", "--yes")
        assert sent.returncode == 0, sent.stderr
        assert " -> the option “" in sent.stdout or " -> a blank" in sent.stdout
    stored = server.export("scripted", token)
    assert len(stored) == 3 and all(0 <= s["answers"]["substances"] < 7 for s in stored)
    receipts = run("receipts", "--state", str(tmp_path / "device-0"))
    assert receipts.returncode == 0 and "scripted: ε = 3" in receipts.stdout
    too_many = respond(deployed, "scripted", {"smoker": True, "substances": OPTIONS},
                       tmp_path / "device-x", "--yes")
    assert too_many.returncode != 0 and "at most 3 may be" in too_many.stderr
    assert len(server.export("scripted", token)) == 3  # refused on the device: nothing sent

    base = ["report", "--server", server.url, "--survey", "scripted", "--token", token]
    table = run(*base)
    assert table.returncode == 0, table.stderr
    assert "mean number selected" in table.stdout and "need not sum to 1" in table.stdout
    doc = json.loads(run(*base, "--format", "json").stdout)
    [q] = [q for q in doc["questions"] if q["question"] == "substances"]
    assert [c["value"] for c in q["categories"]] == OPTIONS and q["n"] == 3
    rows = list(csv.DictReader(io.StringIO(run(*base, "--format", "csv").stdout)))
    assert {r["option"] for r in rows if r["question"] == "substances"} == \
        {*OPTIONS, "mean number selected"}
    html = run(*base, "--format", "html").stdout
    assert 'alt="chart of the estimates for substances"' in html


def test_interactive_checkboxes_by_number_and_name(deployed: dict[str, Any],
                                                   tmp_path: Path) -> None:
    server = deployed["server"]
    # yes; an unknown option (asked again); too many (asked again); then 1 and "opioids".
    result = CliRunner().invoke(
        cli, ["respond", "--server", server.url, "--survey", "prompted", "--trust",
              deployed["pub"], "--state", str(tmp_path / "state"), "--yes"],
        input="yes\nheroin\n1,2,3,4\n1, opioids\n")
    assert result.exit_code == 0, result.output
    assert "[4] opioids" in result.output
    assert "numbers or options separated by commas, at most 3, or \"none\"" in result.output
    assert "'heroin' is not an option" in result.output
    assert "4 options selected to 'substances': at most 3 may be" in result.output
    [stored] = server.export("prompted", deployed["token"])
    assert isinstance(stored["answers"]["substances"], list)  # option_rr: bitmap words
    assert "the options marked" in result.output or "no option marked" in result.output


def test_a_series_charges_the_same_set_once_however_listed(deployed: dict[str, Any],
                                                           tmp_path: Path) -> None:
    """set_ue in a longitudinal survey: the report is memoized per distinct set, and the
    ledger counts one distinct answer for the same set listed in another order."""
    server, token, state = deployed["server"], deployed["token"], tmp_path / "state"
    first = respond(deployed, "weekly", {"smoker": True, "substances": ["cocaine", "cannabis"]},
                    state, "--yes")
    assert first.returncode == 0, first.stderr
    [round_one] = server.export("weekly", token)
    data = survey("weekly", "set_ue", series="weekly", max_selected=2)
    data["version"] = 2
    path = tmp_path / "weekly-2.json"
    path.write_text(json.dumps(data))
    root = deployed["root"]
    assert run("publish", str(path), "--server", server.url, "--token", token, "--key",
               str(root / "keys" / "survey-signing.key")).returncode == 0
    second = respond(deployed, "weekly", {"smoker": True, "substances": ["cannabis", "cocaine"]},
                     state, "--yes")
    assert second.returncode == 0, second.stderr
    exported = server.export("weekly", token)  # both versions
    [round_two] = [s for s in exported if s["submission_id"] != round_one["submission_id"]]
    # the memoized permanent value, for the same set listed the other way round
    assert round_one["answers"]["substances"] == round_two["answers"]["substances"]
    receipts = json.loads(run("receipts", "--state", str(state), "--json").stdout)
    info = receipts["series"]["weekly"]["substances"]
    assert info["distinct_answers"] == 1 and info["rounds"] == 2
