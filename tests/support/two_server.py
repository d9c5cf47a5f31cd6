"""Two real processes for the two-server tests: a leader (`ldpsurvey serve --hpke-key`) and a
helper (`ldpsurvey helper serve`), each with its own database, on loopback ports.

Readiness is bounded polling of /healthz, never a fixed sleep.
"""

from __future__ import annotations

import os
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.server.common.two_server import helper_token
from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.two_server.config import b64url
from ldpsurvey.shared.two_server.hpke import generate_keypair

from support.clients import RealServer, free_port, ldpsurvey_exe, signed


def two_server_survey(helper_url: str, helper_key: bytes, leader_key: bytes,
                      survey_id: str = "pulse", version: int = 1, min_batch: int = 5,
                      local: bool = False) -> dict[str, Any]:
    """A survey with a yes/no, a 4-option, an integer question and a declared crosstab."""
    extra = {"local_epsilon": 2.0} if local else {}
    return {
        "id": survey_id, "title": "Pulse", "version": version, "collection": "two-server",
        "two_server": {"helper_url": helper_url, "helper_hpke_key": b64url(helper_key),
                       "leader_hpke_key": b64url(leader_key), "min_batch_size": min_batch},
        "questions": [
            {"id": "smoker", "text": "Do you smoke?", "type": "binary", "central_epsilon": 1.0,
             **extra},
            {"id": "mood", "text": "Mood?", "type": "categorical", "central_epsilon": 1.0,
             "options": ["low", "mid", "high", "great"], **extra},
            {"id": "hours", "text": "Hours slept?", "type": "integer", "min": 0, "max": 12,
             "central_epsilon": 1.0, "optional": True},
        ],
        "crosstabs": [["smoker", "mood"]],
    }


def signed_survey(data: dict[str, Any], key: Ed25519PrivateKey) -> dict[str, Any]:
    body = signed(Survey.from_dict(data).to_dict(), key)
    body.pop("status", None)
    return body


class HelperProcess:
    """`ldpsurvey helper serve` in a subprocess (start/stop may repeat, same port)."""

    def __init__(self, db: str, key_path: Path, port: int | None = None,
                 leader_token: Path | None = None) -> None:
        self.db, self.key_path, self.leader_token = db, key_path, leader_token
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 30.0) -> None:
        self.proc = subprocess.Popen(
            [*ldpsurvey_exe(), "helper", "serve", "--db", self.db, "--port", str(self.port),
             "--hpke-key", str(self.key_path), "--threads", "2",
             *(["--leader-token", str(self.leader_token)] if self.leader_token else [])],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})
        wait_healthy(self.url, self.proc, timeout)

    def kill(self) -> None:
        """SIGKILL: no cleanup, as a crash."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._close()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._close()

    def _close(self) -> None:
        if self.proc is not None and self.proc.stderr is not None:
            self.proc.stderr.close()
        self.proc = None


def wait_healthy(url: str, proc: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"process exited: {proc.stderr.read().decode()}")
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=1) as r:
                if r.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            time.sleep(0.05)  # polling interval, bounded by the deadline
    raise RuntimeError(f"{url} did not become healthy in time")


@dataclass
class Pair:
    leader: RealServer
    helper: HelperProcess
    leader_key: bytes
    helper_key: bytes
    token: str              # an analyst token of the leader
    helper_token: str = ""  # what the leader presents to the helper (helper token)

    def stop(self) -> None:
        self.leader.stop()
        self.helper.stop()

    def publish(self, data: dict[str, Any], min_batch: int) -> Survey:
        """Point a two-server survey at this pair (helper address, both HPKE keys, the batch
        minimum), sign it with a fresh key and publish it on the leader."""
        from support.clients import http_json

        data["two_server"].update(helper_url=self.helper.url, min_batch_size=min_batch,
                                  helper_hpke_key=b64url(self.helper_key),
                                  leader_hpke_key=b64url(self.leader_key))
        http_json("POST", self.leader.url + "/api/surveys",
                  signed_survey(data, Ed25519PrivateKey.generate()), self.token)
        return Survey.from_dict(data)


def start_pair(tmp: Path, leader_db: str | None = None, helper_db: str | None = None,
               leader_args: tuple[str, ...] = ()) -> Pair:
    """Keys, a helper and a leader (each its own database), both healthy."""
    (hpaths, helper_key) = generate_keypair(tmp / "keys", "helper")
    (lpaths, leader_key) = generate_keypair(tmp / "keys", "leader")
    token = tmp / "keys" / "helper-token.txt"  # only the leader may run the helper's batches
    if not token.exists():
        helper_token.generate(token)
    helper = HelperProcess(helper_db or str(tmp / "helper.db"), hpaths.private,
                           leader_token=token)
    helper.start()
    leader = RealServer(leader_db or tmp / "leader.db",  # type: ignore[arg-type]
                        extra_args=("--hpke-key", str(lpaths.private),
                                    "--helper-token", str(token), *leader_args))
    leader.start()
    return Pair(leader, helper, leader_key, helper_key, leader.token(), helper_token.read(token))
