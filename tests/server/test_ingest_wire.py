"""The frames between the server and its SQLite ingest process (server/store/ingest_wire.py):
what one side sends is what the other reads, whole, however the stream cuts it."""

from __future__ import annotations

import socket
import threading

import pytest
from ldpsurvey.server.common.errors import StoreError, SurveyClosed
from ldpsurvey.server.store import IngestResult, ingest_wire
from support.timeouts import TEST_TIMEOUT


def sent_and_read(frame: bytes) -> bytes | None:
    """`frame` written by one thread and read by another: a frame larger than the socket's
    buffers arrives in many pieces."""
    ours, theirs = socket.socketpair()
    with ours, theirs:
        writer = threading.Thread(target=ours.sendall, args=(frame,))
        writer.start()
        payload = ingest_wire.read_frame(theirs)
        writer.join(TEST_TIMEOUT)
        assert not writer.is_alive()
        return payload


@pytest.mark.parametrize("size", [0, 10, 65_536, 5_000_000])
def test_a_body_arrives_whole_as_the_entry_the_child_runs(size: int) -> None:
    body = bytes(i % 251 for i in range(size))
    payload = sent_and_read(ingest_wire.body_frame("health-2026", body, 250))
    assert payload is not None
    assert ingest_wire.entry_of(payload) == ("body", "health-2026", body, 250)


def test_answers_arrive_as_what_they_were() -> None:
    result = IngestResult(accepted=["a", "b"], duplicates=["c"])
    assert ingest_wire.answer_of(sent_and_read(ingest_wire.answer_frame(result))) == result
    refusal = ingest_wire.answer_of(sent_and_read(ingest_wire.answer_frame(
        SurveyClosed("survey health is closed"))))
    assert isinstance(refusal, SurveyClosed) and str(refusal) == "survey health is closed"


def test_an_error_that_cannot_cross_becomes_a_store_error_naming_it() -> None:
    class Local(Exception):  # a class defined here does not unpickle by name
        pass

    answer = ingest_wire.answer_of(sent_and_read(ingest_wire.answer_frame(Local("boom"))))
    assert isinstance(answer, StoreError)
    assert str(answer) == "ingest failed: Local: boom"


def test_a_stream_that_ends_between_frames_reads_none_and_inside_one_raises() -> None:
    ours, theirs = socket.socketpair()
    with theirs:
        ours.close()
        assert ingest_wire.read_frame(theirs) is None
    frame = ingest_wire.body_frame("health", b"x" * 100, 10)
    for cut in (2, 40):  # inside the length, inside the payload
        ours, theirs = socket.socketpair()
        with theirs:
            ours.sendall(frame[:cut])
            ours.close()
            with pytest.raises(EOFError):
                ingest_wire.read_frame(theirs)
