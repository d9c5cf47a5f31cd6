"""The drug-use sample collected by two servers (shared/samples/drug-use-two-server.toml), end
to end from the CLI: a real leader and helper, the sample published with its keys filled in,
five respondents with `respond --answers` (a check-all-that-apply answer, follow-ups that apply
to some), the batch aggregated and reported: per-substance shares and the shares among those
asked; every upload the leader stored has the same keys and sizes whatever was answered."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

from ldpsurvey.shared.two_server.config import b64url
from support.clients import http_json, ldpsurvey_exe
from support.timeouts import TEST_TIMEOUT
from support.two_server import start_pair

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ldpsurvey_exe(), *args], capture_output=True, text=True,
                          timeout=TEST_TIMEOUT, check=False)

SID = "drug-use-two-server"
ANSWERS = [
    {"substances": ["cannabis", "ecstasy"], "cannabis_frequency": "weekly", "days_used": 6},
    {"substances": []},
    {"substances": ["cocaine"], "days_used": 2},
    {"substances": ["cannabis"], "cannabis_frequency": "daily", "days_used": 30},
    {"substances": []},
]


def test_the_two_server_sample_end_to_end(tmp_path: Path) -> None:
    pair = start_pair(tmp_path)
    try:
        text = (ROOT / "shared" / "samples" / "drug-use-two-server.toml").read_text()
        text = (text.replace("LEADER_HPKE_KEY", b64url(pair.leader_key))
                .replace("HELPER_HPKE_KEY", b64url(pair.helper_key))
                .replace("HELPER_URL", pair.helper.url))
        survey = tmp_path / "survey.toml"
        survey.write_text(text)
        assert run("keys", "generate", "--out", str(tmp_path / "keys")).returncode == 0
        published = run("publish", str(survey), "--server", pair.leader.url, "--token",
                        pair.token, "--key", str(tmp_path / "keys" / "survey-signing.key"))
        assert published.returncode == 0, published.stderr
        for i, answers in enumerate(ANSWERS):
            path = tmp_path / f"a{i}.json"
            path.write_text(json.dumps(answers))
            done = run("respond", "--server", pair.leader.url, "--survey", SID, "--trust",
                       str(tmp_path / "keys" / "survey-signing.pub"), "--answers", str(path),
                       "--state", str(tmp_path / f"d{i}"), "--yes")
            assert done.returncode == 0, done.stderr
        db = sqlite3.connect(pair.leader.db_path)
        try:
            bodies = [json.loads(r[0]) for r in db.execute(
                "SELECT body FROM ts_uploads WHERE survey_id = ?", (SID,))]
        finally:
            db.close()
        shapes = [({k: len(v) for k, v in b["public_shares"].items()}, len(b["leader_share"]),
                   len(b["helper_share"])) for b in bodies]
        assert len(shapes) == 5 and all(shape == shapes[0] for shape in shapes)
        http_json("POST", pair.leader.url + f"/api/surveys/{SID}/two-server/aggregate", {},
                  pair.token)
        [batch] = http_json("GET", pair.leader.url + f"/api/surveys/{SID}/two-server/batches",
                            None, pair.token)["batches"]
        report = run("report", "--server", pair.leader.url, "--token", pair.token, "--survey",
                     SID, "--batch", batch["batch_id"])
        assert report.returncode == 0, report.stderr
        table = report.stdout
        assert "cannabis" in table and "ecstasy" in table
        assert table.count("among those asked") >= 2 and "(not asked)" in table
    finally:
        pair.stop()

