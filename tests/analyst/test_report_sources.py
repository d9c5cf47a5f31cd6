"""`ldpsurvey report`: --db reads the same estimate document the HTTP endpoint serves, read-only."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from flask.testing import FlaskClient
from ldpsurvey.analyst.cli import cli
from ldpsurvey.analyst.reports.sources import db_report, fetch_report
from ldpsurvey.shared.errors import ReportRenderError
from support.server_data import snapshot, submission


@pytest.fixture()
def answered(client: FlaskClient, auth: dict[str, str], published: dict[str, Any]) -> str:
    body = {"submissions": [submission({"smoker": i % 3 == 0, "color": ["red", "blue"][i % 2],
                                        "age": 18 + i % 13}) for i in range(60)]}
    response = client.post("/api/surveys/health/submissions", json=body)
    assert response.status_code in (200, 201), response.get_json()
    return "health"


def test_db_report_equals_the_http_estimate_document(client: FlaskClient, auth: dict[str, str],
                                                     answered: str, db_path: Path) -> None:
    served = client.get(f"/api/surveys/{answered}/estimates?confidence=0.9", headers=auth)
    manifest = client.get(f"/api/surveys/{answered}").get_json()
    report = db_report(db_path, answered, confidence=0.9)
    assert report.estimates == served.get_json()
    assert report.survey == manifest["survey"]
    assert report.n_submissions == 60


def test_report_cli_from_db_in_every_format_leaves_the_db_unchanged(
        answered: str, db_path: Path, tmp_path: Path, client: FlaskClient,
        auth: dict[str, str]) -> None:
    before = snapshot(db_path)
    runner = CliRunner()
    res = runner.invoke(cli, ["report", "--db", str(db_path), "--survey", answered,
                              "--format", "json"])
    assert res.exit_code == 0, res.output
    served = client.get(f"/api/surveys/{answered}/estimates", headers=auth).get_json()
    assert json.loads(res.output) == served
    for fmt in ("table", "csv", "md", "html"):
        out = tmp_path / f"report.{fmt}"
        res = runner.invoke(cli, ["report", "--db", str(db_path), "--survey", answered,
                                  "--format", fmt, "--out", str(out)])
        assert res.exit_code == 0, res.output
        assert "Do you smoke?" in out.read_text(encoding="utf-8") or fmt == "csv"
    assert snapshot(db_path) == before


@pytest.mark.parametrize(("args", "message"), [
    (["--survey", "x"], "exactly one of --server"),
    (["--survey", "x", "--db", "a.db", "--server", "http://127.0.0.1:1"], "exactly one of"),
    (["--survey", "x", "--server", "http://127.0.0.1:1"], "--token"),
    (["--survey", "x", "--db", "missing.db"], "does not exist"),
    (["--survey", "x", "--db", "a.db", "--format", "pdf"], "pdf"),
    (["--survey", "x", "--db", "a.db", "--confidence", "1.5"], "confidence"),
])
def test_cli_errors_are_one_line(args: list[str], message: str, tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LDPSURVEY_TOKEN", raising=False)
    res = CliRunner().invoke(cli, ["report", *args])
    assert res.exit_code != 0
    assert message in res.output
    assert "Traceback" not in res.output


def test_unknown_survey_in_db_is_a_clean_error(answered: str, db_path: Path) -> None:
    res = CliRunner().invoke(cli, ["report", "--db", str(db_path), "--survey", "nope"])
    assert res.exit_code == 1
    assert "does not exist" in res.output and "Traceback" not in res.output


def test_unreachable_server_is_a_typed_error() -> None:
    with socket.socket() as s:  # a port nobody listens on once closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ReportRenderError, match="cannot reach"):
        fetch_report(f"http://127.0.0.1:{port}", "health", "token", timeout=2)
    with pytest.raises(ReportRenderError, match="http"):
        fetch_report("ftp://example", "health", "token")


def test_unwritable_out_file_is_a_clean_error(answered: str, db_path: Path,
                                             tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["report", "--db", str(db_path), "--survey", answered,
                                   "--out", str(tmp_path / "missing-dir" / "r.txt")])
    assert res.exit_code == 1
    assert "cannot write" in res.output and "Traceback" not in res.output
