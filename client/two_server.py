"""The device's side of a two-server survey: randomize (optional ε0), encode, shard, seal.

For every answered question (and declared crosstab) the answer, or the report of the local
mechanism at ε0 when the survey sets one, becomes a Prio3 measurement (shared/two_server/
encoding.py). It is split into two input shares with a validity proof; the leader's shares are
sealed to the leader's HPKE key and the helper's to the helper's, both keys taken only from the
signed manifest. One upload carries both sealed blobs to the leader, which cannot open the
helper's. The upload is stored in the outbox before it is sent and resent unchanged: it is
sharded once (fresh shares on a resend would let the two servers difference them).

True answers exist only inside `build_upload`.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.option_filter import check_shown
from ldpsurvey.shared.skip_logic import resolve_answers
from ldpsurvey.shared.survey import Survey, canonical_json
from ldpsurvey.shared.two_server import encoding, hpke, vdaf
from ldpsurvey.shared.two_server.config import b64url
from ldpsurvey.shared.two_server.guarantees import crosstabs_sent

from .ledger import Charge

UPLOAD_PATH = "two-server/uploads"


@dataclass(frozen=True)
class TwoServerSubmission:
    """A sealed two-server upload, ready to send to the leader. It holds no true answer."""

    submission_id: str
    survey_id: str
    version: int
    body: Mapping[str, Any]
    server_url: str | None          # the signed leader_url, or None: the respondent's server
    charges: tuple[Charge, ...] = field(default=(), repr=False)
    path: str = UPLOAD_PATH

    def wire(self) -> dict[str, Any]:
        return dict(self.body)


def check_answers(survey: Survey, answers: Mapping[str, Any]) -> dict[str, Any]:
    """The answers to encode, {question id: true answer}, checked without drawing anything:
    AnswerError for a missing required answer or one outside its question's domain."""
    checked: dict[str, Any] = {}
    # Skip logic: a question that does not apply is measured as "not asked" (every condition
    # of a two-server survey reads randomized answers: shared/skip_logic.py).
    values = resolve_answers(survey.questions, answers, check=_check_value)
    check_shown(survey.questions, values)  # a cascading option the page would not show
    for q in survey.questions:
        value = values.get(q.id)
        if value is None:
            continue
        _check_value(q, value)
        checked[q.id] = value
    return checked


def _check_value(question: Any, value: Any) -> None:
    """AnswerError for a value outside the question's domain (its local mechanism's, or its
    Prio3 measurement's)."""
    if question.local_epsilon is not None:
        mechanism_for(question).encode(value)
    else:
        encoding.question_index(question, value)


def build_upload(survey: Survey, answers: Mapping[str, Any],
                 invite: str | None = None) -> TwoServerSubmission:
    """Encode, shard and seal `answers` ({question id: true answer}) for a two-server survey.

    `invite` is the one-time invitation code of an invite-only survey: it goes to the leader
    in the clear beside the sealed shares (never to the helper), and links the upload to the
    code, and so to whatever the operator stored with it (a stratum, a random group)."""
    servers = survey.two_server
    assert servers is not None
    checked = check_answers(survey, answers)  # refuse before randomizing anything
    indices: dict[str, int] = {}
    charges: list[Charge] = []
    for q in survey.questions:
        if q.id not in checked:
            continue
        value = checked[q.id]
        if q.local_epsilon is not None:
            mechanism = mechanism_for(q)
            report = mechanism.validate_report(mechanism.perturb(value))
            indices[q.id] = encoding.report_measurement(q, report)
            local = mechanism.realized_epsilon()
        else:
            indices[q.id] = encoding.question_index(q, value)
            local = None
        assert q.central_epsilon is not None
        charges.append(Charge(question=q.id, epsilon=q.central_epsilon,
                              report_epsilon=local if local is not None else q.central_epsilon,
                              extra={"collection": "two-server",
                                     "central_epsilon": q.central_epsilon,
                                     "local_epsilon": local if local is not None else "none"}))
    for spec, epsilon in crosstabs_sent(survey, indices):  # its own noisy release
        # On collusion a crosstab shows the pair its two questions showed: nothing more (0.0)
        # if both were randomized on the device, the answers ("none") if one was not.
        exposed = any(survey.question(qid).local_epsilon is None
                      for qid in (spec.rows, spec.cols))
        charges.append(Charge(question=spec.key, epsilon=epsilon, report_epsilon=epsilon,
                              extra={"collection": "two-server", "central_epsilon": epsilon,
                                     "local_epsilon": "none" if exposed else 0.0,
                                     "crosstab": [spec.rows, spec.cols]}))
    report_id = os.urandom(16)
    encodings = encoding.encodings(survey)
    shards = {key: vdaf.shard(encodings[key], encoding.ctx(survey, key), measurement, report_id)
              for key, measurement in encoding.measurements(survey, indices).items()}
    body = seal_upload(survey, report_id, shards)
    if invite is not None:
        body["invite"] = invite
    submission_id = body["submission_id"]
    return TwoServerSubmission(submission_id=submission_id, survey_id=survey.id,
                               version=survey.version, body=body,
                               server_url=servers.leader_url, charges=tuple(charges))


def sent_lines(submission: TwoServerSubmission, words: Any = None) -> list[str]:
    """What `respond` prints once the upload is stored: never a share or a drawn report (in
    `words`' language, client/page_words.Words, when it is not English)."""
    keys = ", ".join(sorted(submission.body.get("public_shares", {})))
    if words is not None and not words.english:
        return [words.cli("cli.twoServerStored", id=submission.submission_id, keys=keys)]
    return [f"Shared, sealed and stored on this device as upload {submission.submission_id} "
            f"({keys}); it goes to the leader unchanged until acknowledged."]


def seal_upload(survey: Survey, report_id: bytes,
                shards: Mapping[str, vdaf.Shards]) -> dict[str, Any]:
    """The upload body: public shares in the clear, each server's input shares sealed to it."""
    servers = survey.two_server
    assert servers is not None
    public = {key: b64url(s.public_share) for key, s in shards.items()}
    halves = [{key: b64url(s.input_shares[i]) for key, s in shards.items()} for i in (0, 1)]
    sealed = {role: b64url(hpke.seal(key, canonical_json(half),
                                     hpke.info(survey.id, survey.version, report_id, role)))
              for role, key, half in (("leader", servers.leader_hpke_key, halves[0]),
                                      ("helper", servers.helper_hpke_key, halves[1]))}
    return {"submission_id": str(uuid.UUID(bytes=report_id)), "version": survey.version,
            "public_shares": public, "leader_share": sealed["leader"],
            "helper_share": sealed["helper"]}
