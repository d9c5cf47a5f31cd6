"""The device's state directory: atomic, private JSON files and a cross-process lock.

Everything the client remembers (pinned keys, the privacy ledger, the outbox, receipts, the
memoization secret) lives here. Files are written atomically: a temp file in the same directory,
fsync, rename over the target, fsync the directory; so a crash leaves the old or the new file,
never a torn one. Files are mode 0600 and the directory 0700: the ledger and the memo secret are
as sensitive as the answers themselves.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .errors import StateError

STATE_ENV = "LDPSURVEY_STATE"
DEFAULT_STATE_DIR = "~/.ldpsurvey"
FILE_MODE = 0o600
DIR_MODE = 0o700


def default_state_dir() -> Path:
    """$LDPSURVEY_STATE, else ~/.ldpsurvey."""
    return Path(os.environ.get(STATE_ENV) or DEFAULT_STATE_DIR).expanduser()


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes) -> None:
    """Replace `path` with `data` atomically and durably, mode 0600."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, FILE_MODE)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def dumps(value: Any) -> bytes:
    return (json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False,
                       allow_nan=False) + "\n").encode("utf-8")


_REQUIRED = object()


class StateDir:
    """One state directory. `lock()` serializes read-modify-write across processes.

    The path is made absolute once, here: every file is then named relative to it, so a
    relative `--state` (or $LDPSURVEY_STATE) behaves exactly like the absolute one.
    """

    def __init__(self, path: str | Path | None = None) -> None:
        chosen = Path(path) if path is not None else default_state_dir()
        self.path = chosen.expanduser().absolute()
        try:
            self.path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
            mode = stat.S_IMODE(self.path.stat().st_mode)
        except OSError as exc:
            raise StateError(f"cannot use state directory {self.path}: "
                             f"{exc.strerror or exc}") from exc
        if mode & 0o077:
            # An existing directory others can read: never silently change its mode.
            raise StateError(f"state directory {self.path} is accessible by other users "
                             f"(mode {mode:o}); use a private directory or `chmod 700` it")
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._lock_fd: int | None = None

    def subdir(self, name: str) -> Path:
        path = self.path / name
        try:
            path.mkdir(mode=DIR_MODE, exist_ok=True)
        except FileExistsError as exc:
            raise StateError(f"{path} is not a directory; the state directory is "
                             f"damaged") from exc
        except OSError as exc:
            raise StateError(f"cannot use {path}: {exc.strerror or exc}") from exc
        return path

    def list_json(self, folder: str) -> list[str]:
        """The names, relative to the state directory, of the JSON files in `folder`, sorted.

        A folder that cannot be listed is an error, never an empty list.
        """
        path = self.path / folder
        try:
            names = sorted(entry.name for entry in os.scandir(path)
                           if entry.name.endswith(".json") and not entry.name.startswith("."))
        except OSError as exc:
            raise StateError(f"cannot list {path}: {exc.strerror or exc}") from exc
        return [f"{folder}/{name}" for name in names]

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Exclusive lock on the state (re-entrant within this object)."""
        with self._thread_lock:
            if self._depth == 0:
                fd = os.open(self.path / ".lock", os.O_RDWR | os.O_CREAT, FILE_MODE)
                fcntl.flock(fd, fcntl.LOCK_EX)
                self._lock_fd = fd
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0 and self._lock_fd is not None:
                    fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
                    os.close(self._lock_fd)
                    self._lock_fd = None

    def read_json(self, name: str, default: Any = _REQUIRED) -> Any:
        """The JSON file `name` (relative to the state directory).

        A missing file gives `default`, or a StateError when no default is given (a file that
        was listed must be readable). Anything unreadable or unparsable is a StateError.
        """
        if Path(name).is_absolute():
            raise ValueError(f"state files are named relative to the state directory: {name}")
        path = self.path / name
        try:
            raw = path.read_bytes()
        except FileNotFoundError as exc:
            if default is _REQUIRED:
                raise StateError(f"cannot read {path}: it vanished or was never written") from exc
            return default
        except OSError as exc:
            raise StateError(f"cannot read {path}: {exc.strerror or exc}") from exc
        try:
            return json.loads(raw)
        except ValueError as exc:
            raise StateError(f"{path} is not valid JSON; it was not written by ldpsurvey "
                             f"or the disk is damaged") from exc

    def read_object(self, name: str, default: Any = _REQUIRED, *,
                    keys: dict[str, type | tuple[type, ...]]) -> dict[str, Any]:
        """Like read_json, for a JSON object that must hold `keys` with values of those types."""
        value = self.read_json(name, default)
        return require_object(self.path / name, value, keys)

    def write_json(self, name: str, value: Any) -> None:
        atomic_write(self.path / name, dumps(value))


def require_object(path: Path, value: Any, keys: dict[str, type | tuple[type, ...]]
                   ) -> dict[str, Any]:
    """`value` if it is a dict with each of `keys` of its type; a StateError naming `path`."""
    if not isinstance(value, dict):
        raise StateError(f"{path} is not a JSON object; it was not written by ldpsurvey "
                         f"or the disk is damaged")
    for key, kind in keys.items():
        if not isinstance(value.get(key), kind):
            raise StateError(f"{path} is damaged: {key!r} is missing or of the wrong type")
    return value
