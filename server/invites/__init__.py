"""One-time invitation codes: an invite-only survey accepts one submission per code.

The analyst creates codes (`ldpsurvey invites create`), which are printed once; the server keeps
only their SHA-256. Codes carry 128 bits from the OS CSPRNG, so a plain hash lookup is safe.
Claiming happens inside the transaction that stores the submission (claims.py), so a code is
bound to exactly one submission id; resending that same submission id with the same code stays
an idempotent duplicate, and any other use of the code is refused (403). See docs/poisoning.md.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from ldpsurvey.shared.design_frame import FPC, PSU, STRATUM, Frame, FrameError, check_design
from ldpsurvey.shared.invite_codes import MAX_CODE_LENGTH, PREFIX

from ..common.errors import NotFound
from .claims import digest

if TYPE_CHECKING:
    from ldpsurvey.shared.survey import Survey

    from ..store import InviteCounts, Store, StoredDesigns

MAX_COUNT = 1_000_000


def create(store: Store, survey_id: str, count: int) -> list[str]:
    """`count` new codes for a stored survey, which becomes invite-only; returned once."""
    if not 1 <= count <= MAX_COUNT:
        raise ValueError(f"count must be between 1 and {MAX_COUNT}")
    codes = [PREFIX + secrets.token_urlsafe(16) for _ in range(count)]
    if not store.add_invites(survey_id, [digest(c) for c in codes], None, _no_design):
        raise NotFound(f"survey {survey_id!r} does not exist", {"id": survey_id})
    return codes


def _no_design(stored: StoredDesigns) -> None:
    if stored.carried:
        raise FrameError(f"the survey's invitation codes carry {', '.join(stored.carried)} "
                         "(--from-export): every code of a survey carries the same values, so "
                         "new codes need --from-export with --carry too")
    if stored.designed:
        raise FrameError("the survey's invitation codes carry a design (weight, stratum, PSU): "
                         "every respondent needs one, so new codes need --design too")


def create_designed(store: Store, survey_id: str, frame: Frame, groups: int | None = None,
                    allow_lonely_psu: bool = False) -> list[tuple[str, str]]:
    """One new code per unit of a checked sampling frame, each stored with its unit's design
    (weight, stratum, PSU, fpc; with `groups`, a random group drawn per PSU); returns (unit
    id, code) pairs once, in frame order. The unit ids are not stored. Refused (FrameError,
    nothing stored) when the survey's codes made before carry no design, or another one
    (other columns, another fpc for a stratum), or the union has a single-PSU stratum."""
    from ..store import InviteDesign

    if len(frame.rows) > MAX_COUNT:
        raise FrameError(f"{frame.source}: more than {MAX_COUNT:,} units")
    group_of = random_groups(frame, groups) if groups is not None else {}
    designs = [InviteDesign(r.weight, r.stratum, r.psu, r.fpc,
                            group_of.get((r.stratum, r.psu if r.psu is not None else r.id)))
               for r in frame.rows]
    codes = [PREFIX + secrets.token_urlsafe(16) for _ in frame.rows]

    def check(stored: StoredDesigns) -> None:
        check_stored(frame, stored, groups is not None, allow_lonely_psu)

    if not store.add_invites(survey_id, [digest(c) for c in codes], designs, check):
        raise NotFound(f"survey {survey_id!r} does not exist", {"id": survey_id})
    return [(r.id, c) for r, c in zip(frame.rows, codes, strict=True)]


def check_stored(frame: Frame, stored: StoredDesigns, grouped: bool,
                 allow_lonely_psu: bool) -> None:
    """The frame's designs fit the codes the survey has already (inside the storing
    transaction): all codes carry a design or none does, with the same columns, one fpc per
    stratum, and no single-PSU stratum in the union unless allowed."""
    if stored.plain:
        raise FrameError(f"{frame.source}: the survey already has {stored.plain:,} invitation "
                         "code(s) without a design; a design-based estimate needs every "
                         "respondent's design (make the design codes for a new survey id)")
    if stored.designed and (grouped or stored.grouped):
        raise FrameError(f"{frame.source}: the survey already has invitation codes with a "
                         "design; random groups are dealt once over the whole sample: create "
                         "every code of a design with --groups in one call")
    if stored.designed:
        before = {STRATUM: any(s is not None for s, _, _, _ in stored.designed),
                  PSU: any(p is not None for _, p, _, _ in stored.designed),
                  FPC: any(f is not None for _, _, f, _ in stored.designed)}
        for column, had in before.items():
            if had != (column in frame.columns):
                raise FrameError(f"{frame.source}: the survey's invitation codes made before "
                                 f"{'have' if had else 'have no'} {column!r}; every code of a "
                                 "survey carries the same design columns")
    check_design(frame.rows, frame.source, allow_lonely_psu=allow_lonely_psu,
                 stored=stored.designed)


def random_groups(frame: Frame, groups: int) -> dict[tuple[str | None, str], int]:
    """(stratum, PSU) -> random group in 1..groups, so that a whole PSU (a cluster) falls in
    one group, as the random-group variance estimator needs (Wolter 2007, ch. 2): the PSUs of
    each stratum shuffled with the OS CSPRNG, the strata one after the other, and the list
    dealt in turn from a random start (Kott 2001, the delete-a-group jackknife). Group sizes
    differ by at most one PSU, and each stratum's PSUs are spread over the groups as evenly
    as they can be (a stratum with at least `groups` PSUs has one in every group)."""
    by_stratum: dict[str | None, dict[tuple[str | None, str], None]] = {}
    for r in frame.rows:  # each stratum's PSUs, in frame order, once
        by_stratum.setdefault(r.stratum, {})[(r.stratum, r.psu if r.psu is not None
                                              else r.id)] = None
    count = sum(len(members) for members in by_stratum.values())
    if not 2 <= groups <= count:
        raise FrameError(f"{frame.source}: --groups must be between 2 and the number of PSUs "
                         f"({count:,}), got {groups}")
    draw = secrets.SystemRandom()
    dealt: list[tuple[str | None, str]] = []
    for members in by_stratum.values():
        psus = list(members)
        draw.shuffle(psus)
        dealt += psus
    start = secrets.randbelow(groups)
    return {psu: 1 + (start + i) % groups for i, psu in enumerate(dealt)}


LINK_KEY = "invite"  # the page reads its code from the URL fragment #invite=CODE


def page_address(url: str, survey_id: str) -> str:
    """The survey page's address for invitation links, from what the operator gives: the
    page's address as respondents open it (the aggregator's /s/<survey>, or an exported
    page's), or a bare server address (no path), whose page is <url>/s/<survey>. ValueError
    says what is wrong: not http(s), a fragment already, or another survey's /s/ page."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"{url!r} is not an http(s) address")
    if parts.fragment or url.strip().endswith("#"):
        raise ValueError(f"{url!r} has a fragment (#...): give the page's address without one; "
                         f"the links add #{LINK_KEY}=CODE")
    path = parts.path
    if path in ("", "/"):
        path = f"/s/{quote(survey_id, safe='')}"
    else:
        segments = path.rstrip("/").split("/")
        if len(segments) >= 2 and segments[-2] == "s" and unquote(segments[-1]) != survey_id:
            raise ValueError(f"{url!r} is the page of survey {unquote(segments[-1])!r}, "
                             f"not {survey_id!r}")
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def invite_link(page: str, code: str) -> str:
    """The link to send one respondent: the page with the code in its fragment, which the
    browser does not send when it asks for the page (docs/web.md, "Invitation links")."""
    return f"{page}#{LINK_KEY}={quote(code, safe='')}"


def counts(store: Store, survey_id: str) -> InviteCounts:
    return store.invite_counts(survey_id)


def carried_problems(store: Store, survey_id: str, survey: Survey, reports: Mapping[str, Any],
                     code: str | None) -> list[dict[str, str]]:
    """A submission's problems with its carried questions (`carried = true`): each one's
    report must be the value its invitation carries from the main survey's export, so a
    submission without a code, or with a code carrying no or another value, is refused (422,
    nothing stored). A code the survey does not have is left to the claim (403 unknown)."""
    carried = [q for q in survey.questions if q.carried]
    if not carried:
        return []
    if code is None:
        return [{"field": "invite", "message": f"{carried[0].id!r} is the value an invitation "
                 f"carries: send the invitation code that carries it"}]
    found, text = store.invite_carried(survey_id, digest(code))
    if not found:
        return []  # refused by the claim, as any unknown code
    values = json.loads(text) if text else {}
    problems = []
    for q in carried:
        if q.id not in values:
            problems.append({"field": f"answers.{q.id}", "message": "the invitation carries "
                             f"no value for {q.id!r}"})
        elif str(reports.get(q.id)) != values[q.id]:
            problems.append({"field": f"answers.{q.id}", "message": "not the value the "
                             "invitation carries: a carried value is sent as the invitation "
                             "holds it"})
    return problems


def check_shape(raw: Mapping[str, Any], problems: list[dict[str, str]]) -> str | None:
    """The item's code if it is present and shaped like a code (else a listed problem)."""
    code = raw.get("invite")
    if code is None:
        return None
    if not isinstance(code, str) or not code or len(code) > MAX_CODE_LENGTH:
        problems.append({"field": "invite", "message": "must be an invitation code string"})
        return None
    return code
