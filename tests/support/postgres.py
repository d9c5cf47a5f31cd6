"""A throwaway PostgreSQL server for tests and benchmarks: initdb + pg_ctl in a temp directory.

initdb and pg_ctl refuse to run as root, so as root they run as the `postgres` system user
(runuser); as anyone else they run directly. The server listens on 127.0.0.1 on a free port
with trust authentication for one user, `ldp`. Databases are made per test (`fresh_database`).
"""

from __future__ import annotations

import atexit
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from pathlib import Path

from support.timeouts import TEST_TIMEOUT

USER = "ldp"


def bin_dir() -> Path | None:
    """Where initdb lives: PATH first, then Debian's /usr/lib/postgresql/<major>/bin."""
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent  # Debian links initdb into /usr/local/bin
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                        key=lambda p: int(Path(p).parent.parent.name)
                        if Path(p).parent.parent.name.isdigit() else 0)
    return Path(candidates[-1]).parent if candidates else None


def unavailable_reason() -> str | None:
    """Why no throwaway server can start here, or None."""
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError:
        return "psycopg / psycopg_pool are not installed (pip install -e '.[postgres]')"
    if bin_dir() is None:
        return "PostgreSQL server binaries (initdb) not found; apt-get install postgresql"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root without runuser to start PostgreSQL as the postgres user"
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class PgServer:
    """initdb + pg_ctl start in a fresh directory; `stop()` removes it."""

    def __init__(self, *, durable: bool = False) -> None:
        bindir = bin_dir()
        assert bindir is not None, unavailable_reason()
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="ldpsurvey-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self._as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self._as:
            shutil.chown(self.root, "postgres")
        settings = ["-c", "listen_addresses=127.0.0.1", "-c", f"port={self.port}",
                    "-c", f"unix_socket_directories={self.root}", "-c", "max_connections=200"]
        if not durable:  # tests: the database server itself is never crashed
            settings += ["-c", "fsync=off", "-c", "full_page_writes=off"]
        self._run([str(bindir / "initdb"), "-D", str(self.data), "-U", USER, "-A", "trust",
                   "-E", "UTF8", "--no-sync"])
        self._run([str(bindir / "pg_ctl"), "-D", str(self.data), "-l",
                   str(self.root / "server.log"), "-w", "-t", "60", "-o",
                   " ".join(settings), "start"])
        self.url = f"postgresql://{USER}@127.0.0.1:{self.port}/postgres"

    def _run(self, args: list[str]) -> None:
        done = subprocess.run([*self._as, *args], capture_output=True, text=True, check=False,
                              timeout=TEST_TIMEOUT)
        if done.returncode != 0:
            raise RuntimeError(f"{Path(args[0]).name} failed: {done.stdout}\n{done.stderr}")

    def url_for(self, dbname: str) -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{dbname}"

    def create_database(self) -> str:
        """A new empty namespace for one test: its URL (a fresh schema, first on the search
        path; much faster than CREATE DATABASE, and just as separate for our tables)."""
        import psycopg

        name = "t_" + uuid.uuid4().hex[:16]
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{name}"')
        return f"{self.url}?options=-csearch_path%3D{name}"

    def drop_database(self, url: str) -> None:
        import psycopg

        name = url.rsplit("%3D", 1)[1]
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')

    def stop(self) -> None:
        try:
            self._run([str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate",
                       "-w", "stop"])
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


_shared: list[PgServer] = []


def shared_server() -> PgServer:
    """The process's one throwaway server for tests (skips outside CI when there is none,
    fails under CI=true); stopped when the process exits."""
    import pytest

    reason = unavailable_reason()
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"PostgreSQL tests must run under CI: {reason}")
        pytest.skip(f"PostgreSQL tests skipped: {reason}")
    if not _shared:
        server = PgServer()
        _shared.append(server)
        atexit.register(server.stop)
    return _shared[0]


def lock_wait_or_end(url: str, thread: threading.Thread) -> str:
    """'waiting' once a session of the database waits for a row lock, 'done' if `thread`
    ends first (polled on both conditions, bounded by TEST_TIMEOUT): whether a
    transaction started in `thread` waits for another's lock, without a delay."""
    import psycopg

    deadline = time.monotonic() + TEST_TIMEOUT
    with psycopg.connect(url, autocommit=True) as conn:
        while time.monotonic() < deadline:
            if conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = "
                            "current_database() AND wait_event_type = 'Lock'").fetchone()[0]:
                return "waiting"
            thread.join(timeout=0.02)  # the other condition: the thread ended
            if not thread.is_alive():
                return "done"
    raise AssertionError("neither a lock wait nor the end of the thread")
