"""`demo --serve`: the advice it prints about the exported page is true when followed.

Issue 32: without --allow-origin the demo said to restart with it, but a restart makes a new
key and port, so the copy exported from the printed command could never work. Now it says
"stop, rerun with --allow-origin, then export", and this test does exactly what a run with
--allow-origin prints: the `page export` command, the `python3 -m http.server` command, then
opens the copy in Chromium, which must load the survey from the demo server across origins.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from support.clients import free_port, ldpsurvey_exe
from support.timeouts import TEST_TIMEOUT

SETTLED = ("body[data-state=ready], body[data-state=refused], body[data-state=error], "
           "body[data-state=cors], body[data-state=offline]")


def wait_until_listening(origin: str, proc: subprocess.Popen) -> None:
    """Until the static server accepts connections (it binds a moment after it starts)."""
    host, port = origin.removeprefix("http://").split(":")
    deadline = time.monotonic() + TEST_TIMEOUT
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the printed http.server command exited"
        try:
            with socket.create_connection((host, int(port)), timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"nothing listens at {origin}")


def test_following_the_printed_export_advice_gives_a_working_page(page, tmp_path: Path) -> None:
    origin = f"http://127.0.0.1:{free_port()}"
    out = tmp_path / "out"
    demo = subprocess.Popen([*ldpsurvey_exe(), "demo", "--n", "5", "--workers", "2", "--serve",
                             "--allow-origin", origin, "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    watchdog = threading.Timer(10 * TEST_TIMEOUT, demo.kill)
    watchdog.start()
    site = None
    try:
        assert demo.stdout is not None
        notes = []
        for line in demo.stdout:
            notes.append(line)
            if line.startswith("Serving until Ctrl-C"):
                break
        text = "".join(notes)
        export = re.search(r"^  ldpsurvey (page export .*)$", text, re.M).group(1)
        host = re.search(r"^  (python3 -m http\.server .*)$", text, re.M).group(1)
        opened = re.search(r"^  and open (\S+) in a browser$", text, re.M).group(1)
        assert opened == f"{origin}/"
        done = subprocess.run([*ldpsurvey_exe(), *shlex.split(export)], cwd=tmp_path,
                              capture_output=True, text=True, timeout=TEST_TIMEOUT)
        assert done.returncode == 0, done.stderr
        assert str(out) in export  # the copy goes beside the report, not into the cwd
        # this interpreter stands in for the reader's python3
        site = subprocess.Popen([sys.executable, *shlex.split(host)[1:]], cwd=tmp_path,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_until_listening(origin, site)
        page.goto(opened)
        page.wait_for_selector(SETTLED)
        state = page.evaluate("document.body.dataset.state")
        assert state == "ready", (state, page.locator("body").inner_text()[:500])
        # ready: the survey came from the demo server across origins, verified
        assert "Health and wellbeing 2026" in page.locator("body").inner_text()
        assert page.problems == []
        demo.send_signal(signal.SIGINT)
        demo.stdout.read()
        assert demo.wait(timeout=TEST_TIMEOUT) == 0
    finally:
        watchdog.cancel()
        for proc in (demo, site):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
