"""The SQLite store's ingest transactions, run in a child process (`ldpsurvey serve`).

Why (issue 22's profile of a real server under single submissions): SQLite and the aggregate
updates cost the request threads far more than their own time. Every statement, and the fsync,
releases the GIL and must win it back from the threads parsing and validating requests; a
group's transaction took 1 ms under load against 70 µs alone, and the server process was bound
by one core. In a child process the same transaction runs on its own interpreter and GIL, on
the core the request threads leave free.

Concurrent requests still form groups (`group_commit.PipelinedCommitter`). A group goes to the
child, which runs the in-process path's very transaction (`SqliteStore._ingest_group`) on its
own store, fsyncs the WAL, and answers one outcome per entry. An entry is either a job checked
in the server (its survey id, the versions' manifest hashes and the validated items) or a
request body's bytes (`ingest_body`), which the child parses and checks itself with the
server's own functions (`ChildPlan.prepare_body`): the request threads then only read bytes
and write answers, and the parsing and checking run on the child's uncontended GIL (issue 22,
measured side by side against the body parsed in the server: single submissions +3 to +13 %
per second). A body checked
against versions that the transaction finds outdated (SurveyChanged) is checked again on fresh
versions and stored in a further transaction, as `submissions.submit` does in process.

The thread that receives an answer sends the next group before handing the answer out, so the
child is never idle while request threads are woken. A request is answered only after its
group's answer, so what is acknowledged is committed and on disk, exactly as in process.
(Letting the parent fsync while the child runs the next group, as the in-process path
pipelines, measured no faster: it moved thread handoffs into the request process.)

If the child dies (killed, out of memory), the groups in flight fail with StoreUnavailable
(503): nothing of them was acknowledged; a device that sends again gets its submission stored,
or acknowledged as a duplicate if the child had committed it. A child found gone before it
read a group (the socket refuses the write, or resets) is replaced and takes the group. The
child ends when the server closes its store, or on its own when the server process is gone
(its end of the pipe reads EOF). Starting it also starts multiprocessing's resource tracker,
a small process of its own that ends with the server too.

The two sides exchange pickles over a socketpair private to the server and its own child
(never a listening address): what arrives is what the other side pickled.
"""

from __future__ import annotations

import multiprocessing
import pickle
import signal
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from ...shared.errors import LdpSurveyError
from ..errors import StoreError, StoreUnavailable, SurveyChanged
from ..group_commit import PipelinedCommitter
from .base import AggregateRules, IngestJob, IngestResult, PendingSubmission

STOP_TIMEOUT_S = 10.0


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


@dataclass(frozen=True)
class _Body:
    """A request body the child parses, checks and stores."""

    survey_id: str
    data: bytes
    max_batch: int


# An entry on the wire: ("job", survey id, latest, {version: manifest sha256}, [item tuples])
# or ("body", survey id, bytes, max batch).
_Wire = tuple[Any, ...]


class IngestProcess:
    """The parent's handle on the child: `ingest(job)` -> the job's IngestResult (or raises
    its refusal), as `SqliteStore.ingest` answers in process; `ingest_body` the same for a
    request body's bytes, as `submissions.submit` answers."""

    def __init__(self, path: str, plan: ChildPlan) -> None:
        self._path = path
        self._plan = plan
        self._committer: PipelinedCommitter[IngestJob | _Body] = PipelinedCommitter()
        self._lock = threading.Lock()  # the pipe and the child (one group in flight anyway)
        self._process: Any = None
        self._conn: Connection | None = None
        self._sent: bytes | None = None  # the group in flight, resent to a new child if needed
        with self._lock:
            self._start()

    def ingest(self, job: IngestJob) -> IngestResult:
        return self._committer.run(job, self._send, self._receive)

    def ingest_body(self, survey_id: str, data: bytes, max_batch: int) -> IngestResult:
        return self._committer.run(_Body(survey_id, data, max_batch), self._send,
                                   self._receive)

    def _start(self) -> None:
        # spawn, not fork: the server has threads (and SQLite connections) by now
        context = multiprocessing.get_context("spawn")
        parent, child = context.Pipe()
        process = context.Process(target=_child_main, args=(child, self._path, self._plan),
                                  name="ldpsurvey-ingest", daemon=True)
        process.start()
        child.close()
        self._process, self._conn = process, parent

    def _send(self, entries: Sequence[IngestJob | _Body]) -> None:
        message = pickle.dumps([_wire(entry) for entry in entries], pickle.HIGHEST_PROTOCOL)
        with self._lock:
            self._sent = message
            self._deliver()

    def _deliver(self) -> None:
        """The group in flight to the child; a child found gone (the socket refuses the write)
        never read it, so a new child takes it."""
        assert self._sent is not None
        for attempt in range(2):
            if self._conn is None:
                self._start()
            assert self._conn is not None
            try:
                self._conn.send_bytes(self._sent)
                return
            except (BrokenPipeError, ConnectionResetError):
                self._reap()
                if attempt == 1:
                    raise self._stopped() from None

    def _receive(self) -> list[Any]:
        with self._lock:
            try:
                for attempt in range(2):
                    if self._conn is None:  # closed meanwhile
                        break
                    try:
                        return pickle.loads(self._conn.recv_bytes())  # noqa: S301 (own child)
                    except ConnectionResetError:  # dropped unread: none of the group ran
                        unread = True
                    except (EOFError, OSError):  # gone after reading it: committed or not
                        unread = False
                    self._reap()
                    if not unread or attempt == 1:
                        break
                    self._deliver()  # a new child takes the group
                raise self._stopped()
            finally:
                self._sent = None

    @staticmethod
    def _stopped() -> StoreUnavailable:
        return StoreUnavailable("the database writer process stopped; nothing in this "
                                "request was acknowledged: send it again")

    def _reap(self) -> None:
        """Forget a dead (or stuck) child; the next group starts another."""
        process = self._process
        self._disconnect()
        if process is not None:
            process.join(STOP_TIMEOUT_S)
            if process.is_alive():
                process.kill()
                process.join()

    def _disconnect(self) -> None:
        conn, self._conn, self._process = self._conn, None, None
        if conn is not None:
            conn.close()

    def close(self) -> None:
        """Let the child end: it reads EOF once its current group (or its start) is done.
        Not waited for: a store closes quickly, and a child still starting needs a moment."""
        with self._lock:
            self._disconnect()


def _wire(entry: IngestJob | _Body) -> _Wire:
    if isinstance(entry, _Body):
        return ("body", entry.survey_id, entry.data, entry.max_batch)
    versions = {it.version for it in entry.items}
    return ("job", entry.survey_id, entry.latest,
            {v: entry.rules[v].sha256 for v in versions},
            [(it.submission_id, it.version, it.reports, it.invite) for it in entry.items])


def _child_main(conn: Connection, path: str, plan: ChildPlan) -> None:
    """The child: groups in, outcomes out, until the pipe closes."""
    from .sqlite import SqliteStore

    # Ctrl-C in a terminal reaches the whole process group: the parent decides when to stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    store = SqliteStore(path, migrate=False)
    try:
        while True:
            try:
                message = conn.recv_bytes()
            except EOFError:  # the server closed its store, or is gone
                return
            try:
                conn.send_bytes(_run(store, pickle.loads(message), plan))  # noqa: S301
            except OSError:  # the server is gone: what it did not read was not acknowledged
                return
    finally:
        store.close()


def _run(store: Any, wire: list[_Wire], plan: ChildPlan) -> bytes:
    try:
        outcomes = _outcomes(store, wire, plan)
    except Exception as exc:  # nothing of the group can be answered: every entry fails
        outcomes = [exc] * len(wire)
    return pickle.dumps([_portable(o) for o in outcomes], pickle.HIGHEST_PROTOCOL)


def _outcomes(store: Any, wire: list[_Wire], plan: ChildPlan) -> list[Any]:
    """A result or an error per entry. The entries go into one transaction; bodies that it
    refused with SurveyChanged are checked again on fresh versions, into the next one."""
    outcomes: list[Any] = [None] * len(wire)
    todo = list(range(len(wire)))
    for attempt in range(plan.attempts):
        jobs: list[IngestJob] = []
        where: list[int] = []
        for index in todo:
            try:
                jobs.append(_job(store, wire[index], plan, fresh=attempt > 0))
                where.append(index)
            except Exception as exc:  # a refusal found while checking a body
                outcomes[index] = exc
        if jobs:
            for index, outcome in zip(where, _commit(store, jobs), strict=True):
                outcomes[index] = outcome
        todo = [index for index in todo
                if wire[index][0] == "body" and isinstance(outcomes[index], SurveyChanged)]
        if not todo:
            break
    return outcomes


def _job(store: Any, entry: _Wire, plan: ChildPlan, fresh: bool) -> IngestJob:
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
