"""Group commit: concurrent requests share one write transaction (and one fsync).

Each request thread queues its job and either becomes the leader, which takes every queued job,
runs them in one transaction and wakes their threads, or waits. When a leader's transaction has
committed and jobs queued meanwhile, it promotes the first waiting thread to lead the next
group, and only then makes its own group durable (`sync`): the next transaction runs while this
one's fsync is in flight. A thread answers only after the transaction holding its job has
committed and been synced, so nothing acknowledged is lost.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

J = TypeVar("J")
MAX_GROUP = 64  # jobs per transaction: bounds how long one group holds the write lock


class _Ticket(Generic[J]):
    """A queued job. A ticket is woken at most once (to lead a group, or because its group is
    done), so a lock taken at creation and released by the waker serves as its signal: a C
    call, where an Event's wait and set run Python code with the GIL held."""

    __slots__ = ("_signal", "done", "error", "job", "lead", "result")

    def __init__(self, job: J) -> None:
        self.job = job
        self._signal = threading.Lock()
        self._signal.acquire()
        self.lead = False
        self.done = False
        self.result: Any = None
        self.error: BaseException | None = None

    def wait(self) -> None:
        self._signal.acquire()

    def wake(self) -> None:
        self._signal.release()


class GroupCommitter(Generic[J]):
    """Runs jobs through `commit(jobs) -> [result or exception per job]`, grouping concurrent
    ones. `commit` runs on the leader's thread with the leader's `context`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: list[_Ticket[J]] = []
        self._leading = False

    def run(self, job: J, commit: Callable[[Sequence[J]], list[Any]],
            sync: Callable[[], None] | None = None) -> Any:
        ticket: _Ticket[J] = _Ticket(job)
        with self._lock:
            self._queue.append(ticket)
            if not self._leading:
                self._leading = ticket.lead = True
        if not ticket.lead:
            ticket.wait()
            if ticket.done:
                return self._outcome(ticket)
        self._lead(commit, sync)
        return self._outcome(ticket)

    def _lead(self, commit: Callable[[Sequence[J]], list[Any]],
              sync: Callable[[], None] | None) -> None:
        with self._lock:
            group, self._queue = self._queue[:MAX_GROUP], self._queue[MAX_GROUP:]
        try:
            outcomes = commit([t.job for t in group])
        except BaseException as exc:  # the whole transaction failed: every job fails with it
            outcomes = [exc] * len(group)
        with self._lock:  # hand over before syncing: the next group need not wait for it
            if self._queue:
                successor = self._queue[0]
                successor.lead = True
                successor.wake()
            else:
                self._leading = False
        if sync is not None and not all(isinstance(o, BaseException) for o in outcomes):
            try:
                sync()
            except BaseException as exc:  # committed but maybe not on disk: acknowledge none
                outcomes = [exc] * len(group)
        for ticket, outcome in zip(group, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                ticket.error = outcome
            else:
                ticket.result = outcome
            ticket.done = True
        for ticket in group[1:]:  # group[0] is the leader's own: it is not waiting
            ticket.wake()

    @staticmethod
    def _outcome(ticket: _Ticket[J]) -> Any:
        if ticket.error is not None:
            raise ticket.error
        return ticket.result


_committers: dict[str, GroupCommitter[Any]] = {}
_registry_lock = threading.Lock()


def committer_for(key: str) -> GroupCommitter[Any]:
    """The process-wide committer for one database file."""
    with _registry_lock:
        found = _committers.get(key)
        if found is None:
            found = _committers[key] = GroupCommitter()
        return found
