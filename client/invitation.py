"""Invitation codes on the respondent's device: the CLI's twin of client/web/js/invite.js.

An invite-only survey (its public document says `invite_only`) takes a submission only with an
unused one-time code (server/invites/). On this device:

- `respond` refuses such a survey without a code before anything is randomized or charged
  (or asks for the code where it asks for the answers);
- the code is stored in the outbox record beside the randomized body, not in it, and sent
  beside it with every attempt (client/outbox.py);
- a code the server refuses (403 `invite_refused`: `unknown`, `used`, `missing`) leaves the
  stored submission waiting in status AWAITING_CODE (the page's status `invite`): it was never
  accepted, so the SAME randomized body may be sent with another code, and nothing is drawn
  or charged again (`respond --invite CODE` does it);
- `other_code` (the server holds this very submission id, bound to another code) means that
  an earlier attempt was delivered;
- the code is forgotten once the server acknowledged the submission.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

from ldpsurvey.shared.invite_codes import MAX_CODE_LENGTH, PREFIX
from ldpsurvey.shared.survey import Survey

from .errors import InvitationError
from .transport import Refused

AWAITING_CODE = "invite"  # an outbox status: refused code, the body waits for another one
REFUSED_CODE = "invite_refused"
DELIVERED = "other_code"  # the server holds this submission id already (with another code)

# Why the server refused a code, in this device's words (the page: js/messages/<lang>/invite.js).
REFUSED_WORDS = {
    "unknown": "the server does not know this invitation code (mistyped?)",
    "used": "this invitation code was already used for another submission",
    "missing": "the survey takes invited answers only, and no invitation code was sent",
}
_IN_LINK = re.compile(r"[#&]invite=([^&\s]*)")
_PRINTABLE = re.compile(r"^[\x21-\x7e]+$")


def normalized(text: str) -> str | None:
    """What a respondent typed, as a code: trimmed, a pasted link's code taken out of it, the
    prefix's case mended; None if it cannot be a code (the page's `normalized`)."""
    code = str(text).strip()
    in_link = _IN_LINK.search(code)
    if in_link:
        code = unquote(in_link.group(1))
    if code[:len(PREFIX)].lower() == PREFIX:
        code = PREFIX + code[len(PREFIX):]
    fits = len(PREFIX) < len(code) <= MAX_CODE_LENGTH and code.startswith(PREFIX)
    return code if fits and _PRINTABLE.match(code) else None


def checked_code(text: str) -> str:
    """The code in `text`, or InvitationError (before anything is randomized)."""
    code = normalized(text)
    if code is None:
        raise InvitationError(f"{_shown(text)} is not an invitation code (they look like "
                              f"{PREFIX}… with no spaces); nothing was randomized, recorded "
                              f"or sent")
    return code


def required(survey_id: str) -> InvitationError:
    """The refusal of an invite-only survey answered without a code."""
    return InvitationError(f"survey {survey_id!r} takes invited answers only: pass your "
                           f"invitation code with --invite CODE; nothing was randomized, "
                           f"recorded or sent")


def carried_questions(survey: Survey) -> list[str]:
    """The ids of the survey's questions whose value the invitation carries (carried = true)."""
    return [q.id for q in survey.questions if q.carried]


def carried_answers(survey: Survey, carries: Mapping[str, Any]) -> dict[str, int]:
    """The answers of the survey's carried questions: the values the invitation carries from
    the main survey's export (what POST .../invitation says), each an integer in its
    question's range; InvitationError (before anything is drawn) when one is missing or is
    not such a value (docs/sensitive-module.md, "Values a condition reads")."""
    answers: dict[str, int] = {}
    for qid in carried_questions(survey):
        q = survey.question(qid)
        value = carries.get(qid)
        if value is None:
            raise InvitationError(f"survey {survey.id!r} takes {qid!r} from your invitation, "
                                  f"and your invitation carries no value for it: ask whoever "
                                  f"invited you for the right code; nothing was randomized, "
                                  f"recorded or sent")
        try:
            number = int(str(value))
        except ValueError:
            number = None
        if number is None or q.min is None or q.max is None or not q.min <= number <= q.max:
            raise InvitationError(f"your invitation carries {qid} = {value!r}, not a whole "
                                  f"number from {q.min} to {q.max}: ask whoever invited you; "
                                  f"nothing was randomized, recorded or sent")
        answers[qid] = number
    return answers


def carried_required(survey_id: str, names: list[str]) -> InvitationError:
    """The refusal of a survey with carried questions answered without a code."""
    return InvitationError(f"survey {survey_id!r} takes {', '.join(map(repr, names))} from "
                           f"your invitation (a value of your interview in the main survey): "
                           f"pass your invitation code with --invite CODE; nothing was "
                           f"randomized, recorded or sent")


def merged_answers(carried: Mapping[str, int], answers: Mapping[str, Any]) -> dict[str, Any]:
    """The answers with the carried values filled in; AnswerError when an answer given for a
    carried question is another value (it is the invitation's, not the respondent's)."""
    from ldpsurvey.shared.errors import AnswerError

    for qid, value in carried.items():
        if qid in answers and answers[qid] != value:
            raise AnswerError(f"{qid!r} is the value your invitation carries ({value}); it "
                              f"cannot be answered otherwise ({answers[qid]!r} given)")
    return {**answers, **carried}


def refusal_reason(exc: Refused) -> str | None:
    """The reason of a 403 invite_refused (`unknown`, `used`, `missing`, `other_code`), or
    None for any other refusal."""
    if exc.status != 403 or exc.error_code != REFUSED_CODE:
        return None
    error = exc.details.get("error") if isinstance(exc.details, dict) else None
    details = error.get("details") if isinstance(error, dict) else None
    items = details.get("items") if isinstance(details, dict) else None
    first = items[0] if isinstance(items, list) and items else None
    reason = first.get("reason") if isinstance(first, dict) else None
    return reason if isinstance(reason, str) and reason else "?"  # said in general words


def waiting_words(record: dict[str, Any]) -> str:
    """One line: why a stored submission waits for a code, and how to send it with another."""
    reason = record.get("refused")
    why = REFUSED_WORDS.get(reason, "the server refused the invitation code") \
        if isinstance(reason, str) else "the server refused the invitation code"
    server = record.get("survey_server") or record["server"]
    return (f"survey {record['survey_id']!r}: {why}; your answers are kept on this device as "
            f"they were randomized (submission {record['submission_id']}), and nothing will "
            f"be drawn or charged again: send them with your invitation code by running "
            f"`ldpsurvey respond --server {server} --survey {record['survey_id']} "
            f"--invite CODE`")


def awaits_code(record: dict[str, Any]) -> bool:
    """Whether a stored submission waits for a code: status AWAITING_CODE, or a submission
    that an earlier version of this client marked failed on a 403 invite_refused."""
    if record.get("status") == AWAITING_CODE:
        return True
    return (record.get("status") == "failed" and record.get("http_status") == 403
            and f"({REFUSED_CODE})" in str(record.get("last_error") or ""))


def _shown(text: str) -> str:
    return repr(text if len(text) <= 80 else text[:80] + "…")
