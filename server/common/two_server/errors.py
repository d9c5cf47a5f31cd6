"""Typed refusals of the two-server protocol (leader and helper), each with its HTTP status."""

from __future__ import annotations

from ..errors import Conflict, NotFound, ServerError, ValidationFailed


class NotTwoServer(Conflict):
    code = "not_two_server"


class NoHpkeKey(Conflict):
    """This server has no HPKE key, or not the one the survey names for its role."""

    code = "hpke_key_mismatch"


class BatchTooSmall(ValidationFailed):
    code = "batch_too_small"


class ReportReplayed(Conflict):
    code = "report_replayed"


class BatchConflict(Conflict):
    """A batch id reused with other reports, or reports already in another batch."""

    code = "batch_conflict"


class BatchCollected(Conflict):
    code = "batch_already_collected"


class BatchNotReady(Conflict):
    code = "batch_not_aggregated"


class TaskMismatch(Conflict):
    """Another manifest or verify key than the one this survey version was provisioned with."""

    code = "task_mismatch"


class UnknownBatch(NotFound):
    code = "unknown_batch"


class HelperUnavailable(ServerError):
    """The helper did not answer: the work stays pending and resumes on the next run."""

    code = "helper_unavailable"
    status = 503


class HelperRefused(ServerError):
    """The helper answered with a refusal (its message is passed on)."""

    code = "helper_refused"
    status = 502
