"""`ldpsurvey demo`: a real server and real client devices end to end, then nothing left over."""

from __future__ import annotations

import math
import re
import socket
from dataclasses import replace
from pathlib import Path

from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.analyst.demo import run_demo
from ldpsurvey.analyst.reports.model import DISTRIBUTION
from support.timeouts import TEST_TIMEOUT


def refuses_connections(url: str) -> bool:
    host, port = url.removeprefix("http://").rstrip("/").split(":")
    try:
        with socket.create_connection((host, int(port)), timeout=2):
            return False
    except OSError:
        return True


def test_demo_end_to_end_matches_the_truth_and_cleans_up(tmp_path: Path) -> None:
    messages: list[str] = []
    n = 200
    result = run_demo(n, None, tmp_path, seed=7, workers=2, echo=messages.append,
                      show_progress=False)
    assert result.n_sent == n
    assert result.report.n_submissions == n
    # Every estimate is unbiased for the respondents' true share (or mean) with standard
    # deviation at most sqrt(variance_bound), the worst case over the truth. By the normal
    # approximation, |estimate - truth| > 5 sd has probability ~6e-7 per row, so a failure
    # here means a real bias (wrong mapping of answers, reports or estimates), not bad luck.
    truth = result.report.truth
    assert truth is not None
    checked = 0
    for q in result.report.questions():
        for row in q.rows:
            if row.kind == DISTRIBUTION:
                continue
            true = truth.of(q.id, row.kind, row.label)
            assert true is not None and row.estimate is not None and row.variance_bound
            assert abs(row.estimate - true) <= 5 * math.sqrt(row.variance_bound), (q.id, row)
            checked += 1
    # yes/no, 5 options + 1 group, the mean; 5 checkboxes and the mean number selected
    assert checked == 2 + 6 + 1 + 6
    html = result.html_path.read_text(encoding="utf-8")
    assert result.html_path.parent == tmp_path.resolve()
    assert all(q.text in html for q in result.survey.questions)
    assert "true" in result.table and "rx_misuse" in result.table
    # The server is stopped and the temporary directory (database, keys, devices) is gone.
    assert refuses_connections(result.url)
    db_line = next(m for m in messages if "database" in m)
    temp_db = Path(re.search(r"database (\S+)\)", db_line).group(1))
    assert not temp_db.parent.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [result.html_path.name]


def test_demo_with_db_keeps_it_and_a_rerun_publishes_the_next_version(tmp_path: Path) -> None:
    db = tmp_path / "kept.db"
    first = run_demo(20, db, tmp_path / "out", seed=1, workers=2, echo=lambda m: None,
                     show_progress=False)
    second = run_demo(20, db, tmp_path / "out", seed=2, workers=2, echo=lambda m: None,
                      show_progress=False)
    assert db.is_file()
    assert (first.survey.version, second.survey.version) == (1, 2)
    assert second.report.n_submissions == 20  # the new version counts only its own
    res = CliRunner().invoke(cli, ["report", "--db", str(db), "--survey", first.survey.id,
                                   "--survey-version", "1", "--format", "csv"])
    assert res.exit_code == 0, res.output
    assert ",1,rx_misuse," in res.output


def test_demo_cli_prints_the_table_and_the_report_path(tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["demo", "--n", "25", "--out", str(tmp_path), "--seed", "3"])
    assert res.exit_code == 0, res.output
    assert "25 submissions acknowledged" in res.output
    path = Path(res.output.split("HTML report: ")[1].split()[0])
    assert path.is_file() and path.parent == tmp_path.resolve()
    # Without --serve the server is gone when the demo ends: no address to open, and no
    # "Server stopped." right after one.
    assert "/s/wellbeing-2026" not in res.output and "Server stopped." not in res.output
    assert "ldpsurvey demo --serve" in res.output


def test_demo_writes_nothing_where_it_runs_and_prints_where_the_report_is(
        tmp_path: Path, monkeypatch) -> None:
    """Issue 32: `demo` left wellbeing-2026-v1-report.html untracked in the checkout."""
    import tempfile

    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    here = tmp_path / "checkout"
    here.mkdir()
    monkeypatch.chdir(here)
    res = CliRunner().invoke(cli, ["demo", "--n", "5", "--workers", "2", "--seed", "3"])
    assert res.exit_code == 0, res.output
    assert list(here.iterdir()) == []
    path = Path(res.output.split("HTML report: ")[1].split()[0])
    assert path.is_file() and path.parent.parent == temp
    assert path.parent.name.startswith("ldpsurvey-demo-")


def test_without_allow_origin_the_demo_says_stop_rerun_then_export() -> None:
    """The export command is printed only when its copy can reach this server: without
    --allow-origin a copy could never call it, and a restart makes a new key and port."""
    from ldpsurvey.analyst.demo import DemoResult, sample_survey, serving_notes

    result = DemoResult(url="http://127.0.0.1:4321", survey=sample_survey(), n_sent=1,
                        seconds=1.0, html_path=Path("/tmp/x/report.html"), table="",
                        report=None, token="ldp_t", public_key=Path("/tmp/k/s.pub"),
                        private_key=Path("/tmp/k/s.key"), fingerprint="ab" * 32)
    notes = serving_notes(result)
    assert "page export" not in notes.replace("`page export` command", "")
    assert "stop this demo (Ctrl-C), rerun it" in notes
    assert "ldpsurvey demo --serve --allow-origin http://127.0.0.1:8081" in notes
    assert "then export" in notes
    allowed = serving_notes(replace(result, allow_origins=("http://127.0.0.1:8081",)))
    assert "--out /tmp/x/page-copy" in allowed
    assert "python3 -m http.server 8081 --bind 127.0.0.1 --directory /tmp/x/page-copy" in allowed


def test_demo_off_a_terminal_writes_nothing_stray_on_stderr(tmp_path: Path) -> None:
    import subprocess

    from support.clients import ldpsurvey_exe

    done = subprocess.run([*ldpsurvey_exe(), "demo", "--n", "10", "--workers", "2", "--out",
                           str(tmp_path)], capture_output=True, text=True, timeout=TEST_TIMEOUT)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # the progress bar is for terminals; a log got "respondents"
    assert "10 submissions acknowledged" in done.stdout


def test_demo_allow_origin_needs_serve(tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["demo", "--n", "5", "--allow-origin", "http://x.example"])
    assert res.exit_code == 2 and "--allow-origin needs --serve" in res.output


def test_demo_refuses_an_unusable_output_directory_before_starting_anything(
        tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    res = CliRunner().invoke(cli, ["demo", "--n", "5", "--out", str(blocker / "sub")])
    assert res.exit_code == 1
    assert res.output.startswith("Error: cannot create") and "Traceback" not in res.output


def test_demo_serve_prints_the_page_and_serves_until_interrupted(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import threading
    import urllib.request

    from support.clients import ldpsurvey_exe

    origin = "http://127.0.0.1:9"
    proc = subprocess.Popen([*ldpsurvey_exe(), "demo", "--n", "10", "--workers", "2", "--serve",
                             "--allow-origin", origin, "--out", str(tmp_path)],
                            stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    watchdog = threading.Timer(120, proc.kill)
    watchdog.start()
    try:
        assert proc.stdout is not None
        url = None
        notes = []
        for line in proc.stdout:
            notes.append(line)
            found = re.search(r"in a browser: (http://\S+/s/wellbeing-2026)$", line.strip())
            if found:
                url = found.group(1)
            if line.startswith("Serving until Ctrl-C"):
                break
        assert url is not None, "the demo prints the page's URL"
        with urllib.request.urlopen(url, timeout=TEST_TIMEOUT) as response:  # still serving
            assert response.status == 200
            assert "default-src 'self'" in response.headers["Content-Security-Policy"]
        # The signing key is where it says, and the exported-page mode works against it: the
        # printed `page export` command, and CORS for the allowed origin.
        text = "".join(notes)
        private = Path(re.search(r"Signing key \(temporary[^)]*\): (\S+)", text).group(1))
        assert private.is_file()
        command = re.search(r"  ldpsurvey (page export .*)", text).group(1).split()
        exported = subprocess.run([*ldpsurvey_exe(), *command], cwd=tmp_path,
                                  capture_output=True, text=True, timeout=TEST_TIMEOUT)
        assert exported.returncode == 0, exported.stderr
        assert (tmp_path / "page-copy" / "index.html").is_file()
        assert f"at {origin}" in text
        base = url.split("/s/")[0]
        request = urllib.request.Request(f"{base}/api/surveys/wellbeing-2026",
                                         headers={"Origin": origin})
        with urllib.request.urlopen(request, timeout=TEST_TIMEOUT) as response:
            assert response.headers["Access-Control-Allow-Origin"] == origin
        proc.send_signal(signal.SIGINT)
        rest = proc.stdout.read()
        assert proc.wait(timeout=TEST_TIMEOUT) == 0
        assert "Server stopped." in rest
        assert refuses_connections(url.split("/s/")[0])
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
