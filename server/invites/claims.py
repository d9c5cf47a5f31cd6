"""Claiming invitation codes: the rules the store runs inside the transaction that stores a
request's submissions (server/store/), and the two-server leader inside the one storing an
upload. A code is kept only as its SHA-256 (`digest`); `plan_claims` binds each new submission
id to one unused code, or refuses the whole request (InviteRefused, 403, each refused item with
its reason). Creating and counting codes is the package's (server/invites/__init__.py).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..common.errors import Forbidden

# Why a code was refused: `reason` of each refused item (a device says it in its own words,
# e.g. the page's js/messages/<lang>/invite.js), and the English message beside it.
REFUSALS = {
    "missing": "this survey is invite-only: send your invitation code",
    "unknown": "unknown invitation code",
    "used": "this invitation code was already used",
    "other_code": "this submission is stored already, and not with this invitation code",
}


class InviteRefused(Forbidden):
    """The invitation code is missing, unknown, or already used by another submission."""

    code = "invite_refused"


def digest(code: str) -> str:
    return hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()


def plan_claims(items: Sequence[tuple[str, str | None]], new_ids: Iterable[str],
                bound: Mapping[str, str | None]) -> dict[str, str]:
    """The (code hash -> submission id) bindings of one request, or InviteRefused (none bound).

    The store calls this inside the storing transaction with `bound`: every known code hash of
    the request -> the submission id it is bound to (None: unused), read under a row lock.
    `new_ids` are the submission ids this request stores; any other id is a resend of a stored
    submission and passes only with the code already bound to it (idempotent). A new id needs
    an unused code, and one code binds one id."""
    new = set(new_ids)
    refused: list[dict[str, Any]] = []
    bound_here: dict[str, str] = {}     # code hash -> the new submission id it binds
    code_of: dict[str, str] = {}        # new submission id -> its code hash
    for index, (sid, code) in enumerate(items):
        reason = None
        if code is None:
            reason = "missing"
        else:
            key = digest(code)
            if key not in bound:
                reason = "unknown"
            elif sid not in new:
                if bound[key] != sid:
                    reason = "used" if bound[key] is not None else "other_code"
            elif bound[key] is not None or bound_here.get(key, sid) != sid \
                    or code_of.get(sid, key) != key:
                reason = "used"
            else:
                bound_here[key] = sid
                code_of[sid] = key
        if reason is not None:
            refused.append({"index": index, "submission_id": sid, "reason": reason,
                            "message": REFUSALS[reason]})
    if refused:
        raise InviteRefused(f"{len(refused)} of {len(items)} submission(s) refused: invitation "
                            "code missing, unknown or already used; nothing was stored",
                            {"refused": len(refused), "total": len(items),
                             "items": refused[:100]})
    return bound_here
