"""One-time invitation codes: an invite-only survey accepts one submission per code.

The analyst creates codes (`ldpsurvey invites create`), which are printed once; the server keeps
only their SHA-256. Codes carry 128 bits from the OS CSPRNG, so a plain hash lookup is safe.
Claiming happens inside the transaction that stores the submission, so a code is bound to
exactly one submission id; resending that same submission id with the same code stays an
idempotent duplicate, and any other use of the code is refused (403). See docs/poisoning.md.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .errors import Forbidden, NotFound

if TYPE_CHECKING:
    from .store import InviteCounts, Store

PREFIX = "inv_"
MAX_CODE_LENGTH = 64
MAX_COUNT = 1_000_000


class InviteRefused(Forbidden):
    """The invitation code is missing, unknown, or already used by another submission."""

    code = "invite_refused"


def digest(code: str) -> str:
    return hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()


def create(store: Store, survey_id: str, count: int) -> list[str]:
    """`count` new codes for a stored survey, which becomes invite-only; returned once."""
    if not 1 <= count <= MAX_COUNT:
        raise ValueError(f"count must be between 1 and {MAX_COUNT}")
    codes = [PREFIX + secrets.token_urlsafe(16) for _ in range(count)]
    if not store.add_invites(survey_id, [digest(c) for c in codes]):
        raise NotFound(f"survey {survey_id!r} does not exist", {"id": survey_id})
    return codes


def counts(store: Store, survey_id: str) -> InviteCounts:
    return store.invite_counts(survey_id)


def check_shape(raw: Mapping[str, Any], problems: list[dict[str, str]]) -> str | None:
    """The item's code if it is present and shaped like a code (else a listed problem)."""
    code = raw.get("invite")
    if code is None:
        return None
    if not isinstance(code, str) or not code or len(code) > MAX_CODE_LENGTH:
        problems.append({"field": "invite", "message": "must be an invitation code string"})
        return None
    return code


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
        problem = None
        if code is None:
            problem = "this survey is invite-only: send your invitation code"
        else:
            key = digest(code)
            if key not in bound:
                problem = "unknown invitation code"
            elif sid not in new:
                if bound[key] != sid:
                    problem = "this invitation code was already used"
            elif bound[key] is not None or bound_here.get(key, sid) != sid \
                    or code_of.get(sid, key) != key:
                problem = "this invitation code was already used"
            else:
                bound_here[key] = sid
                code_of[sid] = key
        if problem is not None:
            refused.append({"index": index, "submission_id": sid, "message": problem})
    if refused:
        raise InviteRefused(f"{len(refused)} of {len(items)} submission(s) refused: invitation "
                            "code missing, unknown or already used; nothing was stored",
                            {"refused": len(refused), "total": len(items),
                             "items": refused[:100]})
    return bound_here
