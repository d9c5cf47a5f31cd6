"""The SQLite store's ingest transactions, run in a child process (`ldpsurvey serve`).

Why (issue 22's profile of a real server under single submissions): SQLite and the aggregate
updates cost the request threads far more than their own time. Every statement, and the fsync,
releases the GIL and must win it back from the threads parsing and validating requests; a
group's transaction took 1 ms under load against 70 µs alone, and the server process was bound
by one core. In a child process the same transaction runs on its own interpreter and GIL, on
the core the request threads leave free.

Concurrent requests still form groups (`group_commit.PipelinedCommitter`): a group (each job's
survey id, the versions' manifest hashes and the validated items) goes to the child, which
runs the in-process path's very transaction (`SqliteStore._ingest_group`) on its own store,
fsyncs the WAL, and answers one outcome per job. The thread that receives an answer sends the
next group before handing the answer out, so the child is never idle while request threads
are woken. A request is answered only after its group's answer, so what is acknowledged is
committed and on disk, exactly as in process. (Letting the parent fsync while the child runs
the next group, as the in-process path pipelines, measured no faster: it moved thread
handoffs into the request process.)

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
from multiprocessing.connection import Connection
from typing import Any

from ...shared.errors import LdpSurveyError
from ..errors import StoreError, StoreUnavailable
from ..group_commit import PipelinedCommitter
from .base import AggregateRules, IngestJob, PendingSubmission

# (store, survey id, version, manifest sha256) -> that version's aggregate rules: how the child
# rebuilds a job's rules (a module-level function, so that it pickles by name).
RulesFor = Callable[[Any, str, int, str], AggregateRules]
# One job on the wire: (survey id, latest, {version: manifest sha256}, [item tuples]).
_WireJob = tuple[str, int | None, dict[int, str], list[tuple[str, int, Any, str | None]]]
STOP_TIMEOUT_S = 10.0


class IngestProcess:
    """The parent's handle on the child: `ingest(job)` -> the job's IngestResult (or raises
    its refusal), as `SqliteStore.ingest` answers in process."""

    def __init__(self, path: str, rules_for: RulesFor) -> None:
        self._path = path
        self._rules_for = rules_for
        self._committer: PipelinedCommitter[IngestJob] = PipelinedCommitter()
        self._lock = threading.Lock()  # the pipe and the child (one group in flight anyway)
        self._process: Any = None
        self._conn: Connection | None = None
        self._sent: bytes | None = None  # the group in flight, resent to a new child if needed
        with self._lock:
            self._start()

    def ingest(self, job: IngestJob) -> Any:
        return self._committer.run(job, self._send, self._receive)

    def _start(self) -> None:
        # spawn, not fork: the server has threads (and SQLite connections) by now
        context = multiprocessing.get_context("spawn")
        parent, child = context.Pipe()
        process = context.Process(target=_child_main, args=(child, self._path, self._rules_for),
                                  name="ldpsurvey-ingest", daemon=True)
        process.start()
        child.close()
        self._process, self._conn = process, parent

    def _send(self, jobs: Sequence[IngestJob]) -> None:
        message = pickle.dumps([_wire(job) for job in jobs], pickle.HIGHEST_PROTOCOL)
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


def _wire(job: IngestJob) -> _WireJob:
    versions = {it.version for it in job.items}
    return (job.survey_id, job.latest, {v: job.rules[v].sha256 for v in versions},
            [(it.submission_id, it.version, it.reports, it.invite) for it in job.items])


def _child_main(conn: Connection, path: str, rules_for: RulesFor) -> None:
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
                conn.send_bytes(_run(store, pickle.loads(message), rules_for))  # noqa: S301
            except OSError:  # the server is gone: what it did not read was not acknowledged
                return
    finally:
        store.close()


def _run(store: Any, wire: list[_WireJob], rules_for: RulesFor) -> bytes:
    try:
        jobs = [IngestJob(sid, [PendingSubmission(*item) for item in items],
                          {v: rules_for(store, sid, v, sha) for v, sha in shas.items()}, latest)
                for sid, latest, shas, items in wire]
        outcomes = store._ingest_group(jobs)
        if not all(isinstance(o, BaseException) for o in outcomes):
            store._sync_wal()
    except Exception as exc:  # the whole transaction failed: every job fails with it
        outcomes = [exc] * len(wire)
    return pickle.dumps([_portable(o) for o in outcomes], pickle.HIGHEST_PROTOCOL)


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
