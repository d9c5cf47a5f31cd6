"""The outbox: randomized submissions are stored before they are sent, and sent until acked.

A submission is written to `outbox/<uuid>.json` before the first attempt. A 2xx from the server
(including "duplicate": an earlier attempt did arrive) moves it to `receipts/<uuid>.json`; a 4xx
marks it failed and keeps it, with the server's reason; connection errors and 5xx leave it
pending for `ldpsurvey outbox flush`. Resending always sends the stored bytes: a submission is
randomized once, because fresh noise on a resend would let the server average it away. The
server deduplicates by submission id, so each submission is counted exactly once.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from .state import StateDir, fsync_dir
from .transport import Refused, Transport, Unavailable

OUTBOX_DIR = "outbox"
RECEIPTS_DIR = "receipts"
PENDING, FAILED, SENT = "pending", "failed", "sent"


@dataclass(frozen=True)
class Delivery:
    """What happened to one submission on one flush."""

    submission_id: str
    survey_id: str
    status: str                    # sent | pending | failed
    message: str = ""


class Outbox:
    """Pending and failed submissions, and the receipts of delivered ones."""

    def __init__(self, state: StateDir) -> None:
        self.state = state
        self.outbox = state.subdir(OUTBOX_DIR)
        self.receipts = state.subdir(RECEIPTS_DIR)

    def put(self, server_url: str, survey_id: str, wire: dict[str, Any],
            path: str = "submissions") -> dict[str, Any]:
        """Store a new submission (wire = exactly the JSON body that will be POSTed to the
        survey's `path`: submissions, or a two-server survey's two-server/uploads)."""
        record = {"submission_id": wire["submission_id"], "survey_id": survey_id,
                  "server": server_url, "body": wire, "status": PENDING, "attempts": 0,
                  "created": _now(), "last_error": None}
        if path != "submissions":
            record["path"] = path
        self.state.write_json(f"{OUTBOX_DIR}/{_name(wire['submission_id'])}", record)
        return record

    def pending(self, include_failed: bool = False) -> list[dict[str, Any]]:
        wanted = {PENDING, FAILED} if include_failed else {PENDING}
        return [r for r in self._records(OUTBOX_DIR) if r["status"] in wanted]

    def all_outbox(self) -> list[dict[str, Any]]:
        return self._records(OUTBOX_DIR)

    def all_receipts(self) -> list[dict[str, Any]]:
        return self._records(RECEIPTS_DIR)

    def _records(self, folder: str) -> list[dict[str, Any]]:
        out = []
        for path in sorted((self.state.path / folder).glob("*.json")):
            record = self.state.read_json(path, None)
            if record is None:
                continue
            if folder == OUTBOX_DIR and (self.receipts / path.name).exists():
                continue  # delivered; a crash came between writing the receipt and unlinking
            out.append(record)
        return sorted(out, key=lambda r: (r["created"], r["submission_id"]))

    def deliver(self, record: dict[str, Any], transport: Transport) -> Delivery:
        """Send one stored submission (its stored body, never re-randomized)."""
        sid, survey_id = record["submission_id"], record["survey_id"]
        name = _name(sid)
        what = f"submission {sid} to survey {survey_id!r}"
        try:
            path = transport.survey_path(survey_id, record.get("path", "submissions"))
            response = transport.request("POST", path, record["body"], what=what)
        except Refused as exc:
            with self.state.lock():
                record.update(status=FAILED, attempts=record["attempts"] + 1,
                              last_error=exc.message, http_status=exc.status)
                self.state.write_json(f"{OUTBOX_DIR}/{name}", record)
            return Delivery(sid, survey_id, FAILED, exc.message)
        except Unavailable as exc:
            with self.state.lock():
                record.update(attempts=record["attempts"] + transport.policy.attempts,
                              last_error=exc.message)
                self.state.write_json(f"{OUTBOX_DIR}/{name}", record)
            return Delivery(sid, survey_id, PENDING, exc.message)
        body = response.body if isinstance(response.body, dict) else {}
        duplicate = bool(body.get("duplicate") or body.get("duplicates"))
        with self.state.lock():
            receipt = {**record, "status": SENT, "delivered": _now(), "http_status":
                       response.status, "duplicate": duplicate, "last_error": None}
            self.state.write_json(f"{RECEIPTS_DIR}/{name}", receipt)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.outbox / name)
            fsync_dir(self.outbox)
        return Delivery(sid, survey_id, SENT,
                        "delivered (the server already had it)" if duplicate else "delivered")

    def flush(self, transport_for: Callable[[str], Transport],
              include_failed: bool = False) -> list[Delivery]:
        """Send every pending submission; `transport_for(server_url)` gives a Transport."""
        return [self.deliver(r, transport_for(r["server"]))
                for r in self.pending(include_failed=include_failed)]


def _name(submission_id: str) -> str:
    # Submission ids are UUIDs made here; refuse anything that could escape the folder.
    if not all(c in "0123456789abcdef-" for c in submission_id):
        raise ValueError(f"not a submission id: {submission_id!r}")
    return f"{submission_id}.json"


def _now() -> str:
    return datetime.now(UTC).isoformat()
