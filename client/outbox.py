"""The outbox: randomized submissions are stored before they are sent, and sent until acked.

A submission is written to `outbox/<uuid>.json` before the first attempt. A 2xx from the server
(including "duplicate": an earlier attempt did arrive) moves it to `receipts/<uuid>.json`; a 4xx
marks it failed and keeps it, with the server's reason; connection errors and 5xx leave it
pending for `ldpsurvey outbox flush`. Resending always sends the stored bytes: a submission is
randomized once, because fresh noise on a resend would let the server average it away. The
server deduplicates by submission id, so each submission is counted exactly once.

An invitation code is stored in the record beside the body (`invite`), not in it, and sent
beside it. A code the server refuses leaves the record waiting in status `invite` for another
code (`with_code`), which sends the same body; a receipt forgets the code (client/invitation.py).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from .errors import InvitationError
from .invitation import AWAITING_CODE, DELIVERED, awaits_code, refusal_reason, waiting_words
from .state import StateDir, fsync_dir
from .transport import Refused, Transport, Unavailable

OUTBOX_DIR = "outbox"
RECEIPTS_DIR = "receipts"
PENDING, FAILED, SENT = "pending", "failed", "sent"
# What every stored record holds (a file without them is damaged, and says so).
RECORD_KEYS: dict[str, type | tuple[type, ...]] = {
    "submission_id": str, "survey_id": str, "server": str, "body": dict, "status": str,
    "attempts": int, "created": str}
RECEIPT_KEYS = {**RECORD_KEYS, "delivered": str}


@dataclass(frozen=True)
class Delivery:
    """What happened to one submission on one flush."""

    submission_id: str
    survey_id: str
    status: str                    # sent | pending | failed | invite (waits for a code)
    message: str = ""


class Outbox:
    """Pending and failed submissions, and the receipts of delivered ones."""

    def __init__(self, state: StateDir) -> None:
        self.state = state
        self.outbox = state.subdir(OUTBOX_DIR)
        self.receipts = state.subdir(RECEIPTS_DIR)

    def put(self, server_url: str, survey_id: str, wire: dict[str, Any],
            path: str = "submissions", survey_server: str | None = None,
            said: dict[str, Any] | None = None) -> dict[str, Any]:
        """Store a new submission (wire = exactly the JSON body that will be POSTed to the
        survey's `path`: submissions, or a two-server survey's two-server/uploads). Its
        invitation code, if any, is kept beside the body. `survey_server` is the server the
        survey was fetched from, when the body goes elsewhere (a two-server leader_url).
        `said`: the reports in the respondent's words, for `receipts` (which has no survey to
        read an option index with): {"language": tag, "reports": [{question, text, report}]}."""
        body = {k: v for k, v in wire.items() if k != "invite"}
        record = {"submission_id": wire["submission_id"], "survey_id": survey_id,
                  "server": server_url, "body": body, "status": PENDING, "attempts": 0,
                  "created": _now(), "last_error": None}
        if wire.get("invite") is not None:
            record["invite"] = wire["invite"]
        if path != "submissions":
            record["path"] = path
        if survey_server is not None and survey_server != server_url:
            record["survey_server"] = survey_server
        if said is not None:
            record["said"] = said
        self.state.write_json(f"{OUTBOX_DIR}/{_name(wire['submission_id'])}", record)
        return record

    def pending(self, include_failed: bool = False) -> list[dict[str, Any]]:
        """What a flush sends: pending submissions (and failed ones with include_failed).
        One waiting for an invitation code is not among them: its code was refused, and only
        another code (`with_code`) can get it accepted."""
        wanted = {PENDING, FAILED} if include_failed else {PENDING}
        return [r for r in self._records(OUTBOX_DIR)
                if r["status"] in wanted and not awaits_code(r)]

    def awaiting_code(self) -> list[dict[str, Any]]:
        """Stored submissions whose invitation code the server refused."""
        return [r for r in self._records(OUTBOX_DIR) if awaits_code(r)]

    def find(self, submission_id: str) -> dict[str, Any] | None:
        """The outbox record of a submission not yet delivered, or None."""
        return next((r for r in self._records(OUTBOX_DIR)
                     if r["submission_id"] == submission_id), None)

    def with_code(self, record: dict[str, Any], code: str) -> dict[str, Any]:
        """A submission waiting for a code, given another one and made pending again: the
        stored body is kept as it is (never randomized again); only the code beside it
        changes. Returns the stored record, ready for `deliver`."""
        with self.state.lock():
            current = self.find(record["submission_id"])
            if current is None or not awaits_code(current):
                raise InvitationError(
                    f"submission {record['submission_id']} does not wait for an invitation "
                    f"code any more (delivered, or sent by another command meanwhile)")
            # a record from an earlier client held its refused code inside the body
            body = {k: v for k, v in current["body"].items() if k != "invite"}
            current.update(body=body, invite=code, status=PENDING, refused=None)
            self.state.write_json(f"{OUTBOX_DIR}/{_name(current['submission_id'])}", current)
            return current

    def all_outbox(self) -> list[dict[str, Any]]:
        return self._records(OUTBOX_DIR)

    def all_receipts(self) -> list[dict[str, Any]]:
        return self._records(RECEIPTS_DIR)

    def _records(self, folder: str) -> list[dict[str, Any]]:
        """Every record in `folder`; a file that cannot be read or is damaged is a StateError.

        Listed under the state lock, so a delivery (receipt written, then the outbox file
        removed, under the same lock) is never seen half done.
        """
        keys = RECEIPT_KEYS if folder == RECEIPTS_DIR else RECORD_KEYS
        out = []
        with self.state.lock():
            receipts = set(self.state.list_json(RECEIPTS_DIR)) if folder == OUTBOX_DIR else set()
            for name in self.state.list_json(folder):
                if f"{RECEIPTS_DIR}/{name.rsplit('/', 1)[1]}" in receipts:
                    continue  # delivered; a crash came between writing the receipt and unlinking
                out.append(self.state.read_object(name, keys=keys))
        return sorted(out, key=lambda r: (r["created"], r["submission_id"]))

    def deliver(self, record: dict[str, Any], transport: Transport) -> Delivery:
        """Send one stored submission (its stored body, never re-randomized)."""
        sid, survey_id = record["submission_id"], record["survey_id"]
        name = _name(sid)
        what = f"submission {sid} to survey {survey_id!r}"
        # The code beside the body (an earlier client's record holds it inside the body).
        body = {k: v for k, v in record["body"].items() if k != "invite"}
        code = record.get("invite", record["body"].get("invite"))
        try:
            path = transport.survey_path(survey_id, record.get("path", "submissions"))
            response = transport.request("POST", path,
                                         body if code is None else {**body, "invite": code},
                                         what=what)
        except Refused as exc:
            reason = refusal_reason(exc)
            if reason == DELIVERED:  # stored already, under its earlier code
                return self._delivered(record, body, code, exc.status, True)
            with self.state.lock():
                record.update(attempts=record["attempts"] + 1, last_error=exc.message,
                              http_status=exc.status)
                if reason is not None:  # kept for another code: it was never accepted
                    record.update(status=AWAITING_CODE, refused=reason)
                else:
                    record.update(status=FAILED)
                self.state.write_json(f"{OUTBOX_DIR}/{name}", record)
            if reason is not None:
                return Delivery(sid, survey_id, AWAITING_CODE,
                                waiting_words(record))
            return Delivery(sid, survey_id, FAILED, exc.message)
        except Unavailable as exc:
            with self.state.lock():
                record.update(attempts=record["attempts"] + transport.policy.attempts,
                              last_error=exc.message)
                self.state.write_json(f"{OUTBOX_DIR}/{name}", record)
            return Delivery(sid, survey_id, PENDING, exc.message)
        reply = response.body if isinstance(response.body, dict) else {}
        duplicate = bool(reply.get("duplicate") or reply.get("duplicates"))
        return self._delivered(record, body, code, response.status, duplicate)

    def _delivered(self, record: dict[str, Any], body: dict[str, Any], code: str | None,
                   http_status: int, duplicate: bool) -> Delivery:
        """The receipt: exactly the body sent, and whether a code went beside it; the code
        itself is forgotten (it links the submission to the invitation)."""
        sid, name = record["submission_id"], _name(record["submission_id"])
        with self.state.lock():
            receipt = {k: v for k, v in record.items() if k not in ("invite", "refused")}
            receipt.update(body=body, status=SENT, delivered=_now(), http_status=http_status,
                           duplicate=duplicate, last_error=None)
            if code is not None:
                receipt["invited"] = True
            self.state.write_json(f"{RECEIPTS_DIR}/{name}", receipt)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.outbox / name)
            fsync_dir(self.outbox)
        return Delivery(sid, record["survey_id"], SENT,
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
