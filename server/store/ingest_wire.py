"""What the server and its SQLite ingest process (ingest_process.py) say to each other.

Each request thread has a channel of its own to the child, a Unix stream socket on which it
sends one request and reads its answer. Both are frames: a 4-byte big-endian length, then the
payload. A request is a body (`B`, its max batch, its survey id and the body's bytes, sent as
they came, never parsed in the server) or a job checked in the server (`J` and a pickle). An
answer is the pickle of the request's IngestResult or of its refusal. The channels are
socketpairs private to the server and its own child, never a listening address: what a side
unpickles is what the other pickled.
"""

from __future__ import annotations

import pickle
import socket
import struct
from typing import Any

from ldpsurvey.shared.errors import LdpSurveyError

from ..common.errors import StoreError
from .base import IngestJob

_LENGTH = struct.Struct("!I")
_BODY = struct.Struct("!IH")  # max batch, length of the survey id
_FIRST_READ = 65536  # a single submission and its answer arrive whole in one read

# A request as the child runs it: ("job", survey id, latest, {version: manifest sha256},
# [item tuples]) or ("body", survey id, bytes, max batch).
Entry = tuple[Any, ...]


def body_frame(survey_id: str, data: bytes, max_batch: int) -> bytes:
    sid = survey_id.encode()
    head = b"B" + _BODY.pack(max_batch, len(sid)) + sid
    return _LENGTH.pack(len(head) + len(data)) + head + data  # a batch's bytes copied once


def job_frame(job: IngestJob) -> bytes:
    return _framed(b"J" + pickle.dumps(_job_entry(job), pickle.HIGHEST_PROTOCOL))


def _job_entry(job: IngestJob) -> Entry:
    """A job checked in the server, as the child rebuilds it: its rules by manifest hash."""
    versions = {it.version for it in job.items}
    return ("job", job.survey_id, job.latest,
            {v: job.rules[v].sha256 for v in versions},
            [(it.submission_id, it.version, it.reports, it.invite) for it in job.items])


def entry_of(payload: bytes) -> Entry:
    """A request frame's payload as the entry the child runs."""
    if payload[:1] == b"B":
        max_batch, length = _BODY.unpack_from(payload, 1)
        start = 1 + _BODY.size
        return ("body", payload[start:start + length].decode(), payload[start + length:],
                max_batch)
    return pickle.loads(payload[1:])  # noqa: S301 (pickled by the child's own server)


def answer_frame(outcome: Any) -> bytes:
    return _framed(pickle.dumps(_portable(outcome), pickle.HIGHEST_PROTOCOL))


def answer_of(payload: bytes) -> Any:
    return pickle.loads(payload)  # noqa: S301 (pickled by the server's own child)


def _portable(outcome: Any) -> Any:
    """An outcome that unpickles in the parent as what it is (library errors pickle whole; an
    exception that would not is replaced by a StoreError naming it)."""
    if not isinstance(outcome, BaseException) or isinstance(outcome, LdpSurveyError):
        return outcome
    try:
        pickle.loads(pickle.dumps(outcome))  # noqa: S301 (pickled right here)
    except Exception:
        return StoreError(f"ingest failed: {type(outcome).__name__}: {outcome}")
    return outcome


def read_frame(sock: socket.socket) -> bytes | None:
    """The next frame's payload; None at a clean end of the stream (before any byte of a
    frame). Raises EOFError for a stream that ends inside a frame, ConnectionResetError when
    the other side closed with bytes of ours unread. A channel carries one frame at a time
    each way, so nothing past this frame is read."""
    data = sock.recv(_FIRST_READ)
    if not data:
        return None
    while len(data) < _LENGTH.size:
        data += _received(sock.recv(_FIRST_READ))
    end = _LENGTH.size + _LENGTH.unpack_from(data)[0]
    if len(data) >= end:
        return data[_LENGTH.size:end]
    whole = bytearray(end)  # a batch: read straight into its place
    whole[:len(data)] = data
    view, filled = memoryview(whole), len(data)
    while filled < end:
        filled += _received(sock.recv_into(view[filled:]))
    return bytes(view[_LENGTH.size:])


def _received(got: Any) -> Any:
    if not got:
        raise EOFError("the stream ended inside a frame")
    return got


def _framed(payload: bytes) -> bytes:
    return _LENGTH.pack(len(payload)) + payload
