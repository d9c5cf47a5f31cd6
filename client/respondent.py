"""The respondent's device: fetch and verify a survey, randomize answers locally, deliver.

    r = Respondent("https://surveys.example", state_dir="~/.ldpsurvey")
    verified = r.fetch_survey("wellbeing-2026")
    submission = r.answer(verified, {"rx_misuse": False, "drinks_last_week": 3})
    r.submit(submission)

True answers exist only inside `answer()`: the returned `Submission` holds perturbed reports
only. Skipping an optional question is visible to the server (its report is simply absent).
"""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ldpsurvey.shared.errors import AnswerError
from ldpsurvey.shared.mechanisms import Mechanism, mechanism_for
from ldpsurvey.shared.option_filter import check_shown
from ldpsurvey.shared.skip_logic import resolve_answers
from ldpsurvey.shared.survey import Question, Survey

from .budget import Budget, as_budget
from .errors import DeliveryError, InvitationError
from .hazmat_memo import Memoizer
from .invitation import (
    REFUSED_WORDS,
    carried_answers,
    carried_questions,
    carried_required,
    checked_code,
    required,
)
from .ledger import Charge, Ledger
from .outbox import Delivery, Outbox
from .state import StateDir
from .transport import Refused, RetryPolicy, Transport
from .trust import DEFAULT_MAX_EPSILON, TrustStore, VerifiedSurvey, check_policy
from .two_server import build_upload
from .two_server import check_answers as check_two_server_answers


@dataclass(frozen=True)
class Submission:
    """A randomized submission, ready to send. It holds no true answer."""

    submission_id: str
    survey_id: str
    version: int
    reports: Mapping[str, Any]
    charges: tuple[Charge, ...] = field(default=(), repr=False)
    # A one-time invitation code for invite-only surveys: it links this submission to the
    # code, so it is only as anonymous as the way the code was handed out.
    invite: str | None = None

    def wire(self) -> dict[str, Any]:
        """Exactly the JSON body POSTed to /api/surveys/<id>/submissions."""
        body = {"submission_id": self.submission_id, "version": self.version,
                "answers": dict(self.reports)}
        if self.invite is not None:
            body["invite"] = self.invite
        return body


class Respondent:
    """One device answering surveys on one server."""

    def __init__(self, server_url: str, state_dir: str | None = None, trust: str | None = None,
                 max_epsilon: float | Budget = DEFAULT_MAX_EPSILON,
                 retry: RetryPolicy | None = None,
                 sleep: Callable[[float], None] = time.sleep,
                 warn: Callable[[str], None] | None = None) -> None:
        self.server_url = server_url.rstrip("/")
        self.state = StateDir(state_dir)
        self.trust = trust
        self.budget = as_budget(max_epsilon)  # a number: --max-epsilon on the plain sum
        self.max_epsilon = self.budget.max_epsilon
        self.transport = Transport(self.server_url, retry, sleep)
        self._retry, self._sleep = retry, sleep
        self.trust_store = TrustStore(self.state, warn or _stderr)
        self.ledger = Ledger(self.state)
        self.outbox = Outbox(self.state)
        self.memo = Memoizer(self.state)
        self._mechanisms: dict[tuple[str, str], Mechanism] = {}

    def fetch_survey(self, survey_id: str) -> VerifiedSurvey:
        """GET the manifest and run every trust and policy check on it."""
        response = self.transport.request("GET", self.transport.survey_path(survey_id),
                                          what=f"fetching survey {survey_id!r}")
        verified = self.trust_store.check(response.body, server_url=self.server_url,
                                          survey_id=survey_id, trust=self.trust,
                                          max_epsilon=self.budget)
        status = response.body.get("status", "open") if isinstance(response.body, dict) else None
        if status != "open":
            raise DeliveryError(f"survey {survey_id!r} is {status}: it takes no more answers "
                                f"(nothing was answered or spent)")
        return replace(verified, invite_only=response.body.get("invite_only") is True)

    def check_invite(self, survey: VerifiedSurvey | Survey, invite: str | None) -> str | None:
        """The invitation code to send (normalized as the page does), checked before anything
        is drawn: InvitationError for a code that cannot be one, or for no code when the
        survey's document says it is invite-only."""
        if invite is not None:
            return checked_code(invite)
        if isinstance(survey, VerifiedSurvey) and survey.invite_only:
            raise required(survey.survey.id)
        return None

    def invitation_answers(self, survey: VerifiedSurvey | Survey, invite: str | None
                           ) -> dict[str, int]:
        """The answers the invitation carries for the survey's carried questions (carried =
        true), asked of the server (POST .../invitation, the code in the body as the page
        sends it); {} for a survey without them. InvitationError, before anything is drawn,
        without a code, for a code the server does not know, or one carrying no such value."""
        survey = survey.survey if isinstance(survey, VerifiedSurvey) else survey
        names = carried_questions(survey)
        if not names:
            return {}
        if invite is None:
            raise carried_required(survey.id, names)
        try:
            response = self.transport.request(
                "POST", self.transport.survey_path(survey.id, "invitation"),
                {"invite": checked_code(invite)}, what="reading what your invitation carries")
        except Refused as exc:
            if exc.status == 404:
                raise InvitationError(f"{REFUSED_WORDS['unknown']}; nothing was randomized, "
                                      f"recorded or sent") from None
            raise
        body = response.body if isinstance(response.body, dict) else {}
        carries = body.get("carries")
        return carried_answers(survey, carries if isinstance(carries, dict) else {})

    def awaiting_code(self, survey: VerifiedSurvey | Survey) -> dict[str, Any] | None:
        """This device's stored submission to this survey that waits for an invitation code
        (the server refused the one it was sent with), else None: the one the ledger records
        for this version, or one stored for this survey on this server (a version before)."""
        survey = survey.survey if isinstance(survey, VerifiedSurvey) else survey
        answered = self.ledger.answered(survey.id, survey.version)
        mine = answered["submission_id"] if answered is not None else None
        return next((r for r in self.outbox.awaiting_code() if r["survey_id"] == survey.id and (
            r["submission_id"] == mine
            or r.get("survey_server", r["server"]) == self.server_url)), None)

    def send_with_code(self, record: dict[str, Any], invite: str) -> Delivery:
        """Send a stored submission that waits for a code with `invite`: the SAME randomized
        body (or sealed upload), never drawn again, the ledger not charged again."""
        stored = self.outbox.with_code(record, checked_code(invite))
        return self.outbox.deliver(stored, self._transport_for(stored["server"]))

    def check_answers(self, survey: VerifiedSurvey | Survey,
                      answers: Mapping[str, Any]) -> dict[str, Any]:
        """The answers to randomize, {question id: true answer}, checked without drawing.

        Invalid answers are refused (AnswerError), never clamped. A required question must be
        answered; an optional one may be left out (or None), which the server can see. A
        question whose `relevant` condition does not hold must be left out: it is then sent as
        a randomized "not asked" when its condition reads randomized answers, else not at all.
        An option that a question's `filter` hides after the earlier answer is refused, as
        the page and the prompts never offer it (shared/option_filter.py).
        Also refuses a survey version this device already answered, or one above its ε limit.
        """
        survey = survey.survey if isinstance(survey, VerifiedSurvey) else survey
        check_policy(survey, self.budget, self.ledger.charged_epsilons())
        self.ledger.check_not_answered(survey.id, survey.version)
        if not isinstance(answers, Mapping):
            raise AnswerError("answers must be an object {question_id: answer}")
        known = {q.id for q in survey.questions}
        unknown = sorted(str(k) for k in answers if k not in known)
        if unknown:
            raise AnswerError(f"survey {survey.id!r} has no question {unknown[0]!r}")
        if survey.two_server is not None:
            return check_two_server_answers(survey, answers)
        # Skip logic: only questions that apply are answered; one that does not and depends
        # on randomized answers is sent as a randomized "not asked" (shared/skip_logic.py).
        checked = resolve_answers(survey.questions, answers,
                                  check=lambda q, value: self.mechanism(survey, q).encode(
                                      q.unit.device_answer(q, value)))
        check_shown(survey.questions, checked)  # a cascading option the page would not show
        for q in survey.questions:
            if q.id in checked:  # refuse before randomizing anything
                mechanism = self.mechanism(survey, q)
                checked[q.id] = q.unit.device_answer(q, checked[q.id])  # a decimal: its grid
                mechanism.encode(checked[q.id])
                # the same answer, however given (a set in any order), is one answer (a
                # series memoizes and the ledger charges per distinct answer)
                checked[q.id] = q.unit.canonical_answer(q, mechanism, checked[q.id])
        return checked

    def answer(self, survey: VerifiedSurvey | Survey, answers: Mapping[str, Any],
               invite: str | None = None) -> Submission:
        """Randomize `answers` ({question id: true answer}) on this device: one draw per
        answered question (check_answers first).

        `invite` is the one-time invitation code an invite-only survey requires (refused,
        before anything is drawn, when a verified survey says it is invite-only and there is
        none: check_invite). Show a respondent the draws only once `submit` stored them: a
        draw shown and then replaced by another would let the respondent choose the report
        (docs/web.md).
        """
        invite = self.check_invite(survey, invite)
        survey = survey.survey if isinstance(survey, VerifiedSurvey) else survey
        checked = self.check_answers(survey, answers)
        if survey.two_server is not None:
            return build_upload(survey, checked, invite)  # type: ignore[return-value]
        reports: dict[str, Any] = {}
        charges: list[Charge] = []
        for q in survey.questions:
            if q.id not in checked:
                continue
            value = checked[q.id]
            mechanism = self.mechanism(survey, q)
            if q.disclosed:  # sent as given; the ledger lists it apart from ε
                reports[q.id] = _plain(mechanism.validate_report(mechanism.perturb(value)))
                charges.append(Charge(question=q.id, epsilon=0.0, report_epsilon=0.0,
                                      disclosed=True))
                continue
            report_epsilon = mechanism.realized_epsilon()
            if survey.series is not None:
                report = self.memo.report(mechanism, survey.series, q.id, value)
                tag = self.memo.answer_tag(mechanism, survey.series, q.id, value)
                epsilon = mechanism.longitudinal_epsilon
            else:
                report, tag, epsilon = mechanism.perturb(value), None, report_epsilon
            reports[q.id] = _plain(mechanism.validate_report(report))
            charges.append(Charge(question=q.id, epsilon=epsilon, report_epsilon=report_epsilon,
                                  series=survey.series, tag=tag,
                                  epsilon_geo=getattr(mechanism, "epsilon_geo", None),
                                  grid_cols=getattr(mechanism, "cols", None)))
        return Submission(submission_id=str(uuid.uuid4()), survey_id=survey.id,
                          version=survey.version, reports=reports, charges=tuple(charges),
                          invite=invite)

    def mechanism(self, survey: Survey, question: Question) -> Mechanism:
        """The question's mechanism, built (and its ε proven) once per survey content."""
        key = (survey.sha256, question.id)
        if key not in self._mechanisms:
            self._mechanisms[key] = mechanism_for(question)
        return self._mechanisms[key]

    def submit(self, submission: Submission, said: dict[str, Any] | None = None) -> Delivery:
        """Charge the ledger, store in the outbox, then send (retrying transient failures).

        The result is `sent`, `failed` (the server refused it: kept, with the reason) or
        `pending` (unreachable: `flush()` later sends the very same submission). `said` is
        kept with it: the reports in the respondent's words (Outbox.put).
        """
        with self.state.lock():
            self.ledger.record(submission.survey_id, submission.version,
                               submission.submission_id, submission.charges)
            # A two-server upload goes to the signed leader_url (when set) and its own path.
            server_url = getattr(submission, "server_url", None) or self.server_url
            record = self.outbox.put(server_url, submission.survey_id, submission.wire(),
                                     getattr(submission, "path", "submissions"),
                                     survey_server=self.server_url, said=said)
        if server_url != self.server_url:
            return self.outbox.deliver(record, self._transport_for(server_url))
        return self.outbox.deliver(record, self.transport)

    def flush(self, include_failed: bool = False) -> list[Delivery]:
        """Send every pending submission in this state directory (to the server it was for);
        one waiting for an invitation code waits for `send_with_code`."""
        return self.outbox.flush(self._transport_for, include_failed=include_failed)

    def _transport_for(self, server_url: str) -> Transport:
        if server_url == self.server_url:
            return self.transport
        return Transport(server_url, self._retry, self._sleep)


def flush_outbox(state_dir: str | None = None, retry: RetryPolicy | None = None,
                 sleep: Callable[[float], None] = time.sleep,
                 include_failed: bool = False) -> list[Delivery]:
    """Send what is pending in a state directory, each submission to its own server."""
    outbox = Outbox(StateDir(state_dir))
    return outbox.flush(lambda url: Transport(url, retry, sleep), include_failed=include_failed)


def _plain(report: Any) -> Any:
    """A report as plain JSON types (numpy scalars and tuples from a mechanism)."""
    if hasattr(report, "tolist"):
        return report.tolist()
    if isinstance(report, tuple):
        return list(report)
    return report


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)
