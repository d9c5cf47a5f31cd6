"""The SQLite store's ingest transactions, run in a child process (`ldpsurvey serve`).

Why (issue 22's profile of a real server under single submissions): SQLite and the aggregate
updates cost the request threads far more than their own time. Every statement, and the fsync,
releases the GIL and must win it back from the threads parsing and validating requests; a
group's transaction took 1 ms under load against 70 µs alone, and the server process was bound
by one core. In a child process the same transaction runs on its own interpreter and GIL, on
the core the request threads leave free.

Each request thread has a channel of its own to the child (ingest_wire.py), a socketpair whose
other end reaches the child over its control socket (SCM_RIGHTS): the thread sends its request
and blocks reading the answer, and nothing else in the server runs for it. A request
is a request body's bytes (`ingest_body`), which the child parses and checks itself with the
server's own functions (`ChildPlan.prepare_body`), or a job checked in the server (`ingest`:
its survey id, the versions' manifest hashes and the validated items). The child waits for any
channel to be readable, takes every request that has arrived as one group, runs the in-process
path's very transaction (`SqliteStore._ingest_group`) on its own store, fsyncs the WAL, and
answers each channel. Requests arriving meanwhile form the next group. A body checked against
versions that the transaction finds outdated (SurveyChanged) is checked again on fresh
versions and stored in a further transaction, as `submissions.submit` does in process. A
request is answered only after its group's fsync, so what is acknowledged is committed and on
disk, exactly as in process.

(Issue 22, measured side by side under 8 clients of single submissions: before, one shared
pipe and a group committer in the server, which sent each group and handed its answers out,
cost the request threads locks and wake-ups of their own; the server's CPU per submission moved
between 207 and 280 µs from run to run and its rate between 2,780 and 3,700/s. With a channel
per thread the same runs gave 203-213 µs and 3,580-3,750/s; the child spends 10-27 µs more per
submission, since it now wakes each thread itself.)

If the child dies (killed, out of memory), a request it had read fails with StoreUnavailable
(503): nothing of it was acknowledged; a device that sends again gets its submission stored,
or acknowledged as a duplicate if the child had committed it. A request the child never read
(the channel refuses the write, or the child closed it unread) goes to a new child, started
for it (once). A child that takes in no part of a request, or answers none, within
ANSWER_TIMEOUT_S (the channels' kernel send and receive timeouts) is hung: it is killed, that
request fails with StoreUnavailable, and the next request starts a new child. A closed store
starts no child. The child ends when the server closes its store, or on its own when the server
process is gone (its control socket reads EOF). Starting it also starts multiprocessing's
resource tracker, a small process of its own that ends with the server too.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import selectors
import signal
import socket
import struct
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..common.errors import StoreUnavailable, SurveyChanged
from ..group_commit import MAX_GROUP
from .base import AggregateRules, IngestJob, IngestResult, PendingSubmission
from .ingest_wire import (
    Entry,
    answer_frame,
    answer_of,
    body_frame,
    entry_of,
    job_frame,
    read_frame,
)

STOP_TIMEOUT_S = 10.0
# A child that takes in no part of a request, or answers none, for this long is hung (a stalled
# disk, a stopped process): it is killed and the request fails with StoreUnavailable. Far past
# any group a working child runs (SQLite waits at most BUSY_TIMEOUT_MS, 30 s, for a lock).
ANSWER_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class ChildPlan:
    """What the child needs from the layers above the store: module-level functions (they
    pickle by name), so that the store does not import the server's survey and submission
    modules."""

    # (store, survey id, version, manifest sha256) -> that version's aggregate rules
    rules_for: Callable[[Any, str, int, str], AggregateRules]
    # (store, survey id, body bytes, max batch, fresh) -> the checked job; raises a refusal
    prepare_body: Callable[[Any, str, bytes, int, bool], IngestJob]
    attempts: int  # checks of one body against its survey's versions (SurveyChanged)


@dataclass
class _Channel:
    """A request thread's socket to one child (its generation: a newer child needs a new
    channel)."""

    generation: int
    sock: socket.socket


class _Unread(Exception):
    """The child is gone and never read the request: a new child may take it."""


class _Hung(Exception):
    """The child neither took the request nor answered it within ANSWER_TIMEOUT_S."""


class IngestProcess:
    """The parent's handle on the child: `ingest(job)` -> the job's IngestResult (or raises
    its refusal), as `SqliteStore.ingest` answers in process; `ingest_body` the same for a
    request body's bytes, as `submissions.submit` answers."""

    def __init__(self, path: str, plan: ChildPlan, open_store: Callable[..., Any]) -> None:
        self._path = path
        self._plan = plan
        self._open_store = open_store  # SqliteStore: the child's store (passed, not imported)
        self._lock = threading.Lock()  # the child, its control socket, generation, channels
        self._local = threading.local()  # this thread's _Channel
        self._channels: weakref.WeakSet[socket.socket] = weakref.WeakSet()
        self._generation = 0
        self._process: Any = None
        self._control: socket.socket | None = None
        self._closed = False  # by close(): no child is started again
        with self._lock:
            self._start()

    def ingest(self, job: IngestJob) -> IngestResult:
        return self._ask(job_frame(job))

    def ingest_body(self, survey_id: str, data: bytes, max_batch: int) -> IngestResult:
        return self._ask(body_frame(survey_id, data, max_batch))

    def _ask(self, frame: bytes) -> IngestResult:
        """Send the request on this thread's channel and read its answer; a request the child
        never read goes to a new child, once."""
        for attempt in range(2):
            channel = self._channel()
            try:
                answer = self._exchange(channel, frame)
            except _Unread:
                self._lost(channel)
                if attempt == 1:
                    raise self._stopped() from None
                continue
            except _Hung:
                self._lost(channel, hung=True)
                raise StoreUnavailable(
                    f"the database writer process did not answer within {ANSWER_TIMEOUT_S:g} s "
                    "and was ended; nothing in this request was acknowledged: send it "
                    "again") from None
            except (EOFError, OSError):  # gone after reading it: committed or not
                self._lost(channel)
                raise self._stopped() from None
            outcome = answer_of(answer)
            if isinstance(outcome, BaseException):
                raise outcome
            return outcome
        raise AssertionError("unreachable")

    @staticmethod
    def _exchange(channel: _Channel, frame: bytes) -> bytes:
        try:
            channel.sock.sendall(frame)
        except (BrokenPipeError, ConnectionResetError):  # refused: never read
            raise _Unread from None
        except BlockingIOError:  # the channel's send timeout
            raise _Hung from None
        try:
            answer = read_frame(channel.sock)
        except ConnectionResetError:  # closed with the request unread
            raise _Unread from None
        except BlockingIOError:  # the channel's receive timeout
            raise _Hung from None
        if answer is None:
            raise EOFError("the ingest process closed the channel")
        return answer

    def _channel(self) -> _Channel:
        """This thread's channel to the current child (started if there is none)."""
        channel: _Channel | None = getattr(self._local, "channel", None)
        if channel is not None and channel.generation == self._generation:
            return channel
        if channel is not None:
            channel.sock.close()
        mine, theirs = socket.socketpair()
        try:
            _bound(mine, ANSWER_TIMEOUT_S)
            with self._lock:
                if self._closed:
                    raise StoreUnavailable("the store is closed (its server is stopping); nothing "
                                           "in this request was stored")
                if self._control is None:
                    self._start()
                assert self._control is not None
                # a child found gone: the exchange finds the channel dead
                with contextlib.suppress(OSError):
                    socket.send_fds(self._control, [b"c"], [theirs.fileno()])
                channel = _Channel(self._generation, mine)
                self._channels.add(mine)
        except BaseException:
            mine.close()
            raise
        finally:
            theirs.close()
        self._local.channel = channel
        return channel

    def _start(self) -> None:
        # spawn, not fork: the server has threads (and SQLite connections) by now
        context = multiprocessing.get_context("spawn")
        control, child = socket.socketpair()
        process = context.Process(target=_child_main,
                                  args=(child, self._path, self._plan, self._open_store),
                                  name="ldpsurvey-ingest", daemon=True)
        process.start()
        child.close()
        self._process, self._control = process, control
        self._generation += 1

    def _lost(self, channel: _Channel, hung: bool = False) -> None:
        """The child behind `channel` is gone (or `hung`: killed first): reap it, unless a
        newer child already replaced it; the next request starts another."""
        with self._lock:
            if channel.generation == self._generation and self._control is not None:
                self._reap(kill=hung)

    def _reap(self, kill: bool = False) -> None:
        process = self._process
        self._disconnect()
        if process is not None:
            if kill:
                process.kill()
            process.join(STOP_TIMEOUT_S)
            if process.is_alive():
                process.kill()
                process.join()

    def _disconnect(self) -> None:
        """Leave the child: it reads EOF on its control socket once its current group (or its
        start) is done; every channel to it is retired."""
        control, self._control, self._process = self._control, None, None
        self._generation += 1
        if control is not None:
            control.close()

    @staticmethod
    def _stopped() -> StoreUnavailable:
        return StoreUnavailable("the database writer process stopped; nothing in this "
                                "request was acknowledged: send it again")

    def close(self) -> None:
        """Let the child end. Not waited for: a store closes quickly, and a child still
        starting needs a moment. A request still in flight, or sent later, fails with
        StoreUnavailable (a closed store starts no child)."""
        with self._lock:
            self._closed = True
            self._disconnect()
            channels = list(self._channels)
        for sock in channels:
            with contextlib.suppress(OSError):  # already closed
                sock.shutdown(socket.SHUT_RDWR)


def _bound(sock: socket.socket, seconds: float) -> None:
    """Kernel timeouts on the socket's sends and receives (SO_SNDTIMEO, SO_RCVTIMEO): a call
    blocked that long fails with BlockingIOError. Nothing is added to each call, as a Python
    socket timeout would (a poll before every send and receive)."""
    whole = int(seconds)
    value = struct.pack("@ll", whole, int((seconds - whole) * 1_000_000))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, value)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, value)


def _child_main(control: socket.socket, path: str, plan: ChildPlan,
                open_store: Callable[..., Any]) -> None:
    """The child: requests in, answers out, until the control socket closes. `open_store` is
    the SQLite store's class, sent by the parent (pickled by name), so that this module does
    not import sqlite.py, which imports it."""
    # Ctrl-C in a terminal reaches the whole process group: the parent decides when to stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    store = open_store(path, migrate=False)
    selector = selectors.DefaultSelector()
    selector.register(control, selectors.EVENT_READ)
    try:
        while True:
            group: list[tuple[socket.socket, Entry]] = []
            for key, _ in selector.select():
                if key.fileobj is control:
                    if not _new_channel(control, selector):
                        return  # the server closed its store, or is gone
                elif len(group) < MAX_GROUP:  # the rest stay readable for the next group
                    sock: Any = key.fileobj
                    entry = _request(sock)
                    if entry is None:
                        selector.unregister(sock)
                        sock.close()
                    else:
                        group.append((sock, entry))
            if group:
                _answer(group, _run(store, [entry for _, entry in group], plan))
    finally:
        store.close()


def _new_channel(control: socket.socket, selector: selectors.BaseSelector) -> bool:
    """Take a channel the server sent; False when the control socket has closed."""
    try:
        _, fds, _, _ = socket.recv_fds(control, 1, 1)
    except OSError:
        return False
    if not fds:
        return False
    selector.register(socket.socket(fileno=fds[0]), selectors.EVENT_READ)
    return True


def _request(sock: socket.socket) -> Entry | None:
    """A channel's next request; None when its thread is gone."""
    try:
        payload = read_frame(sock)
    except (EOFError, OSError):
        return None
    return None if payload is None else entry_of(payload)


def _answer(group: list[tuple[socket.socket, Entry]], outcomes: list[Any]) -> None:
    for (sock, _), outcome in zip(group, outcomes, strict=True):
        with contextlib.suppress(OSError):  # its thread is gone: nothing was acknowledged
            sock.sendall(answer_frame(outcome))


def _run(store: Any, entries: list[Entry], plan: ChildPlan) -> list[Any]:
    try:
        return _outcomes(store, entries, plan)
    except Exception as exc:  # nothing of the group can be answered: every entry fails
        return [exc] * len(entries)


def _outcomes(store: Any, entries: list[Entry], plan: ChildPlan) -> list[Any]:
    """A result or an error per entry. The entries go into one transaction; bodies that it
    refused with SurveyChanged are checked again on fresh versions, into the next one."""
    outcomes: list[Any] = [None] * len(entries)
    todo = list(range(len(entries)))
    for attempt in range(plan.attempts):
        jobs: list[IngestJob] = []
        where: list[int] = []
        for index in todo:
            try:
                jobs.append(_job(store, entries[index], plan, fresh=attempt > 0))
                where.append(index)
            except Exception as exc:  # a refusal found while checking a body
                outcomes[index] = exc
        if jobs:
            for index, outcome in zip(where, _commit(store, jobs), strict=True):
                outcomes[index] = outcome
        todo = [index for index in todo
                if entries[index][0] == "body" and isinstance(outcomes[index], SurveyChanged)]
        if not todo:
            break
    return outcomes


def _job(store: Any, entry: Entry, plan: ChildPlan, fresh: bool) -> IngestJob:
    if entry[0] == "body":
        _, survey_id, data, max_batch = entry
        return plan.prepare_body(store, survey_id, data, max_batch, fresh)
    _, survey_id, latest, shas, items = entry
    return IngestJob(survey_id, [PendingSubmission(*item) for item in items],
                     {v: plan.rules_for(store, survey_id, v, sha) for v, sha in shas.items()},
                     latest)


def _commit(store: Any, jobs: list[IngestJob]) -> list[Any]:
    """One transaction, made durable before anything of it is answered."""
    try:
        outcomes = store._ingest_group(jobs)
        if not all(isinstance(o, BaseException) for o in outcomes):
            store._sync_wal()
    except Exception as exc:  # the whole transaction failed: every job fails with it
        return [exc] * len(jobs)
    return outcomes


