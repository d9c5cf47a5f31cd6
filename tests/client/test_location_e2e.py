"""Done when (issue 21): a designer publishes a location survey, respondents pick cells, the
analyst reads region shares with intervals and a heatmap, and a respondent's receipts show
ε_geo beside the booked ε and the total both ways. Real server, the real CLI."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from support.clients import RealServer, ldpsurvey_exe

SURVEY = {"id": "where", "title": "Where do you live?", "version": 1, "questions": [
    {"id": "home", "type": "location", "text": "Which cell is your home in?", "epsilon_geo": 1.0,
     "grid": {"rows": 4, "cols": 4, "cell_km": 0.5},
     "regions": {"west": ["1-4,1-2"], "east": ["1-4,3-4"]}}]}


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ldpsurvey_exe(), *args], capture_output=True, text=True,
                          timeout=120, check=False)


def test_location_survey_from_publish_to_heatmap(tmp_path: Path) -> None:
    server = RealServer(tmp_path / "server.db")
    server.start()
    try:
        token = server.token()
        assert run("keys", "generate", "--out", str(tmp_path / "keys")).returncode == 0
        path = tmp_path / "where.json"
        path.write_text(json.dumps(SURVEY))
        published = run("publish", str(path), "--server", server.url, "--token", token,
                        "--key", str(tmp_path / "keys" / "survey-signing.key"))
        assert published.returncode == 0, published.stderr
        state = tmp_path / "state"
        for i, answer in enumerate(["1,1", "west", [4, 4]]):
            answers = tmp_path / f"answers-{i}.json"
            answers.write_text(json.dumps({"home": answer}))
            result = run("respond", "--server", server.url, "--survey", "where", "--answers",
                         str(answers), "--trust", str(tmp_path / "keys" / "survey-signing.pub"),
                         "--state", str(tmp_path / f"state-{i}" if i else state), "--yes")
            assert result.returncode == 0, result.stderr
        stored = server.export("where", token)
        assert len(stored) == 3 and all(0 <= s["answers"]["home"] < 16 for s in stored)
        receipts = run("receipts", "--state", str(state))
        assert "(ε_geo = 1 per km)" in receipts.stdout and "advanced bound" in receipts.stdout
        # the report as the page and `respond` say it (issue 32: receipts showed `21`)
        sent = json.loads(run("receipts", "--state", str(state), "--json").stdout)
        index = sent["receipts"][0]["body"]["answers"]["home"]
        row, col = divmod(index, 4)
        assert f" -> the cell in row {row + 1}, column {col + 1}\n" in receipts.stdout
        assert f'"home": {index}' not in receipts.stdout
        report = run("report", "--server", server.url, "--survey", "where", "--token", token,
                     "--format", "json")
        assert report.returncode == 0, report.stderr
        [question] = json.loads(report.stdout)["questions"]
        assert question["consistent_method"] == "em"
        assert [g["name"] for g in question["groups"]] == ["west", "east"]
        assert all(g["ci_low"] <= g["estimate"] <= g["ci_high"] for g in question["groups"])
        html = run("report", "--server", server.url, "--survey", "where", "--token", token,
                   "--format", "html")
        assert 'alt="chart of the estimates for home"' in html.stdout
    finally:
        server.stop()
