"""Helpers for the client tests: a scripted fake HTTP server and a real `ldpsurvey serve`.

The fake server answers from a script and records every request, so trust tests can assert
that nothing was POSTed. The real server runs as a subprocess on a free port; readiness is
bounded polling of /healthz (never a fixed sleep).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.shared.manifest import sign_survey
from ldpsurvey.shared.survey import Survey

from support.timeouts import TEST_TIMEOUT


def survey_dict(survey_id: str = "checkin", version: int = 1, series: str | None = None,
                **question_changes: Any) -> dict[str, Any]:
    """A small survey: a yes/no question, a categorical one (GRR) and an optional integer."""
    d: dict[str, Any] = {
        "id": survey_id, "title": "Check-in", "version": version,
        "questions": [
            {"id": "smoker", "text": "Do you smoke?", "type": "binary", "epsilon": 1.0},
            {"id": "mood", "text": "How is your mood?", "type": "categorical", "epsilon": 1.5,
             "options": ["awful", "low", "fine", "good", "great"], "mechanism": "grr"},
            {"id": "drinks", "text": "Drinks last week?", "type": "integer", "epsilon": 1.0,
             "min": 0, "max": 30, "mechanism": "geometric", "optional": True},
        ],
    }
    if series is not None:
        d["series"] = series
    for qid, changes in question_changes.items():
        for q in d["questions"]:
            if q["id"] == qid:
                q.update(changes)
    return d


def signed(data: dict[str, Any], key: Ed25519PrivateKey) -> dict[str, Any]:
    """The GET /api/surveys/<id> body for this survey signed with `key`."""
    body = sign_survey(Survey.from_dict(data), key).to_dict()
    body["status"] = "open"
    return body


@dataclass
class Recorded:
    method: str
    path: str
    body: Any


@dataclass
class FakeServer:
    """A loopback HTTP server whose answers come from `handler(method, path, body)`."""

    handler: Callable[[str, str, Any], tuple[int, Any]]
    port: int = 0
    requests: list[Recorded] = field(default_factory=list)

    def __post_init__(self) -> None:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                outer.requests.append(Recorded(self.command, self.path, body))
                status, reply = outer.handler(self.command, self.path, body)
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _serve

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,),
                                       daemon=True)
        self.thread.start()

    def posts(self) -> list[Recorded]:
        return [r for r in self.requests if r.method == "POST"]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@contextmanager
def serving(manifest: Any) -> Iterator[FakeServer]:
    """A FakeServer that serves `manifest` to every GET and accepts every POSTed submission
    (201, none a duplicate): the aggregator a respondent's device talks to in client tests."""

    def answer(method: str, path: str, body: Any) -> tuple[int, Any]:
        if method == "GET":
            return 200, manifest
        return 201, {"accepted": [body["submission_id"]], "duplicates": []}

    fake = FakeServer(answer)
    try:
        yield fake
    finally:
        fake.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ldpsurvey_exe() -> list[str]:
    exe = shutil.which("ldpsurvey", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-m", "ldpsurvey.analyst.cli"]


class RealServer:
    """`ldpsurvey serve` in a subprocess on a given port (start/stop may repeat)."""

    def __init__(self, db_path: Path, port: int | None = None,
                 extra_args: tuple[str, ...] = ()) -> None:
        self.db_path = db_path
        self.extra_args = extra_args  # more `serve` options, e.g. --allow-origin URL
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = TEST_TIMEOUT) -> None:
        self.proc = subprocess.Popen(
            [*ldpsurvey_exe(), "serve", "--db", str(self.db_path), "--port", str(self.port),
             "--threads", "2", *self.extra_args],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {self.proc.stderr.read().decode()}")
            try:
                with urllib.request.urlopen(self.url + "/healthz", timeout=1) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                time.sleep(0.05)  # polling interval, bounded by the deadline
        self.stop()
        raise RuntimeError("server did not become healthy in time")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=TEST_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc is not None and self.proc.stderr is not None:
            self.proc.stderr.close()
        self.proc = None

    def token(self) -> str:
        from ldpsurvey.server.auth import create_token
        from ldpsurvey.server.store import open_store

        store = open_store(self.db_path)
        try:
            return create_token(store, "client-tests")[1]
        finally:
            store.close()

    def publish(self, data: dict[str, Any], key: Ed25519PrivateKey, token: str) -> Any:
        body = signed(data, key)
        body.pop("status")
        return http_json("POST", self.url + "/api/surveys", body, token)

    def export(self, survey_id: str, token: str) -> list[dict[str, Any]]:
        req = urllib.request.Request(f"{self.url}/api/surveys/{survey_id}/submissions.jsonl",
                                     headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(req, timeout=TEST_TIMEOUT) as r:
            return [json.loads(line) for line in r.read().decode().splitlines() if line]


def http_json(method: str, url: str, body: Any = None, token: str | None = None) -> Any:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url, data=None if body is None else json.dumps(body).encode(),
                                 method=method, headers=headers)
    with urllib.request.urlopen(req, timeout=TEST_TIMEOUT) as r:
        return json.loads(r.read())
