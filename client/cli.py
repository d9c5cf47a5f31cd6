"""`ldpsurvey respond`, `ldpsurvey receipts` and `ldpsurvey outbox`: the respondent's commands."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from ldpsurvey.shared.cli_help import FullHelpGroup, language_tag
from ldpsurvey.shared.composition import DEFAULT_DELTA, Composition
from ldpsurvey.shared.errors import AnswerError
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.option_filter import shown_for
from ldpsurvey.shared.skip_logic import applies
from ldpsurvey.shared.survey import Question, Survey
from ldpsurvey.shared.translations import SurveyText

from . import invitation, review_words
from .budget import BUDGET_RULES, DEFAULT_MAX_EPSILON, Budget
from .errors import DeliveryError, InvitationError
from .invitation import AWAITING_CODE
from .ledger import Ledger
from .outbox import FAILED, PENDING, Delivery, Outbox
from .page_words import Words, words_for
from .review import (
    location_cell_words,
    question_privacy,
    review_lines,
    survey_privacy,
    two_server_review_lines,
)
from .state import STATE_ENV, StateDir
from .survey_language import (
    Terminal,
    fallback_line,
    piped_texts,
    piping,
    said,
    shown_survey,
    survey_text,
)

if TYPE_CHECKING:  # imported by the commands that send: the HTTP client, cryptography
    from .respondent import Respondent

state_option = click.option(
    "--state", "state_dir", type=click.Path(file_okay=False), default=None,
    help=f"State directory (default ${STATE_ENV} or ~/.ldpsurvey).")
delta_option = click.option(
    "--delta", type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=DEFAULT_DELTA, show_default=True,
    help="δ of the advanced composition bound (the chance that bound fails).")


def budget_options(command: Any) -> Any:
    """--budget-rule, --delta and --max-total-epsilon (client/budget.py)."""
    command = click.option(
        "--max-total-epsilon", type=click.FloatRange(min=0, min_open=True), default=None,
        help="Also refuse a survey if everything this device answered, with it, would cost "
             "more ε (measured by --budget-rule).")(command)
    command = delta_option(command)
    return click.option(
        "--budget-rule", type=click.Choice(BUDGET_RULES), default="basic", show_default=True,
        help="How totals are held against the ceilings: basic = plain sum of ε; advanced = "
             "the better of the plain sum and the advanced composition bound at --delta.")(
        command)


attempts_option = click.option("--attempts", type=click.IntRange(1, 100), default=5,
                               show_default=True, help="Tries per submission.")


@click.command()
@click.option("--server", required=True, help="Survey server URL, e.g. http://127.0.0.1:8000")
@click.option("--survey", "survey_id", required=True, help="Survey id.")
@click.option("--answers", "answers_file", type=click.Path(dir_okay=False, exists=True),
              help="JSON file {question_id: answer} instead of interactive prompts.")
@click.option("--trust", default=None,
              help="Designer's public key file, or its SHA-256 fingerprint (64 hex digits). "
                   "Without it the key is pinned on first use.")
@state_option
@click.option("--max-epsilon", type=click.FloatRange(min=0, min_open=True),
              default=DEFAULT_MAX_EPSILON, show_default=True,
              help="Refuse surveys costing more ε in total (or per question).")
@budget_options
@click.option("--invite", default=None, metavar="CODE",
              help="One-time invitation code, for surveys that accept only invited respondents "
                   "(asked for with the questions when --answers is not given). If the server "
                   "refused the code this device sent, the answers stored then are sent with "
                   "this one: nothing is drawn or charged again.")
@click.option("--dry-run", is_flag=True,
              help="Show the review (answers and the exact chances of what would be sent); "
                   "randomize, record and send nothing.")
@click.option("--yes", "-y", "assume_yes", is_flag=True,
              help="Send without asking to confirm the review (for scripts; needed when stdin "
                   "is not a terminal).")
@click.option("--refuse-disclosed", is_flag=True,
              help="Refuse surveys with disclosed questions (answers sent as given, not "
                   "randomized).")
@attempts_option
@click.option("--lang", default=None, metavar="TAG", callback=language_tag,
              help="Show the survey's text in this language (a BCP 47 tag such as es or "
                   "pt-BR; default: LANGUAGE, LC_ALL, LC_MESSAGES or LANG, else the survey's "
                   "own). The prompts and the review speak it too where the page does (en, "
                   "es, fr: yes/no is then also sí/no, oui/non); other messages stay English.")
def respond(server: str, survey_id: str, answers_file: str | None, trust: str | None,
            state_dir: str | None, max_epsilon: float, budget_rule: str, delta: float,
            max_total_epsilon: float | None, invite: str | None, dry_run: bool,
            assume_yes: bool, refuse_disclosed: bool, attempts: int,
            lang: str | None) -> None:
    """Answer a survey: verify it, randomize each answer on this device, send the reports.

    Before anything is randomized, it shows your answers and, in plain words, the exact chances
    of what each will be sent as, and asks you to confirm. Only then does it draw each report
    once, store it in the outbox and print it; a report, once drawn, is never drawn again.
    An invite-only survey needs your invitation code first; if the server refuses it, the
    randomized answers wait on this device until the same command is run with --invite and
    another code, which sends them as they were drawn.
    """
    if not (assume_yes or dry_run or stdin_is_terminal()):
        raise click.ClickException("stdin is not a terminal, so respond cannot ask you to "
                                   "confirm before randomizing: pass --yes to send without "
                                   "the review")
    from .respondent import Respondent
    from .transport import RetryPolicy
    from .trust import check_no_disclosed

    budget = Budget(max_epsilon, budget_rule, delta, max_total_epsilon)
    respondent = Respondent(server, state_dir=state_dir, trust=trust, max_epsilon=budget,
                            retry=RetryPolicy(attempts=attempts),
                            warn=lambda m: click.secho(m, err=True, fg="yellow", bold=True))
    verified = respondent.fetch_survey(survey_id)
    survey = verified.survey
    text = survey_text(survey, lang, lambda m: click.secho(m, err=True, fg="yellow"))
    shown = shown_survey(survey, text)  # printed text only: answers use the labels
    words = words_for(text.language)  # the page's catalogue: prompts and review (en, es, fr)
    if refuse_disclosed:
        check_no_disclosed(survey)
    code = None if invite is None else respondent.check_invite(verified, invite)
    waiting = respondent.awaiting_code(verified)
    if waiting is not None:  # randomized before, its code refused: send it, never redraw it
        _send_waiting(respondent, waiting, code, dry_run, prompt=answers_file is None)
        return
    respondent.ledger.check_not_answered(survey.id, survey.version)
    if verified.invite_only and code is None and not dry_run:
        if answers_file is not None:  # refused before anything is drawn or charged
            raise invitation.required(survey.id)
        code = _ask_code(survey.id)
    # values the invitation carries from the main survey (carried = true): filled in, shown
    carried = respondent.invitation_answers(verified, code)
    if carried:
        click.echo("Your invitation carries these values from your interview. The survey "
                   "server links them, as they are (not randomized), to your answers: "
                   + ", ".join(f"{qid}: {value}" for qid, value in carried.items()))
    if answers_file is not None:
        answers = invitation.merged_answers(carried, _read_answers(Path(answers_file)))
    else:
        answers = prompt_answers(survey, text, words, carried)
    checked = respondent.check_answers(verified, answers)
    if dry_run or not assume_yes:
        click.echo()
        reviewed = piped_texts(shown, piping(survey, text, words, answers))  # shown only
        for line in _review(respondent, survey, checked, reviewed, text, words):
            click.echo(line)
        if code is not None:
            click.echo("The invitation code is sent with the reports: it links them to the code.")
        elif verified.invite_only:
            click.echo("This survey takes invited answers only: sending needs your invitation "
                       "code (--invite CODE).")
    if dry_run:
        click.echo("dry run: nothing was randomized, recorded or sent", err=True)
        return
    if not assume_yes and not _confirm(words):
        raise click.ClickException("not sent: nothing was randomized, recorded or sent")
    submission = respondent.answer(verified, checked, invite=code)
    said = None if survey.two_server is not None else said_reports(
        survey, respondent, submission.reports, text, words)
    delivery = respondent.submit(submission, said)  # stored in the ledger and outbox first
    if said is None:
        from .two_server import sent_lines
        click.echo("\n".join(sent_lines(submission, words)))  # type: ignore[arg-type]
    else:
        _print_sent(said, words)
    _report_delivery(delivery, words)


def _ask_code(survey_id: str) -> str:
    """The invitation code, asked for where the answers are asked for (re-asked while it
    cannot be a code; an empty entry refuses)."""
    click.echo(f"Survey {survey_id!r} takes invited answers only. Your invitation code is sent "
               f"with your answers: whoever sent the invitations can tell which invitation a "
               f"response came with; the randomization protects the answers all the same.")
    while True:
        typed = click.prompt("Invitation code", default="", show_default=False)
        if not typed.strip():
            raise invitation.required(survey_id)
        code = invitation.normalized(typed)
        if code is not None:
            return code
        click.secho(f"   not an invitation code (they look like {invitation.PREFIX}… with no "
                    f"spaces)", fg="red", err=True)


def _send_waiting(respondent: Respondent, record: dict[str, Any], code: str | None,
                  dry_run: bool, prompt: bool) -> None:
    """Send this device's stored submission whose code the server refused with another code:
    the body stored then (the same randomized reports or sealed halves, the same submission
    id), never a new draw; the ledger was charged once, when it was drawn."""
    if code is None and dry_run:
        click.echo(invitation.waiting_words(record))
        click.echo("dry run: nothing was sent", err=True)
        return
    if code is None and not prompt:
        raise InvitationError(invitation.waiting_words(record))
    stored = record["created"][:19].replace("T", " ")
    click.echo(f"Your answers to survey {record['survey_id']!r} were randomized and stored on "
               f"this device on {stored} UTC (submission {record['submission_id']}); the server "
               f"refused the invitation code sent with them. They are sent as they are: nothing "
               f"is drawn or charged again.")
    if code is None:
        code = _ask_code(record["survey_id"])
    if dry_run:
        click.echo("dry run: nothing was sent", err=True)
        return
    _report_delivery(respondent.send_with_code(record, code))


def _sent_words(body: dict[str, Any], cells: Mapping[str, int] | None = None) -> str:
    """A receipt's content: the randomized reports, or a two-server upload's sealed keys.
    `cells` maps a location question to its grid's columns: its report, a cell index, is said
    as the page and `respond` say it ("the cell in row 3, column 2"), not as 21."""
    if "answers" in body:
        answers = dict(body["answers"])
        for qid, cols in (cells or {}).items():
            report = answers.get(qid)
            if isinstance(report, int) and not isinstance(report, bool) and report >= 0:
                answers[qid] = location_cell_words(report, cols)
        return json.dumps(answers, sort_keys=True, ensure_ascii=False)
    keys = ", ".join(sorted(body.get("public_shares", {})))
    return f"two-server upload, sealed shares of: {keys}"


def _review(respondent: Respondent, survey: Survey, checked: dict[str, Any],
            shown: Survey | None = None, text: SurveyText | None = None,
            words: Words | None = None) -> list[str]:
    """The review before anything is drawn (a two-server survey states both guarantees);
    `shown` is the survey with its text in the respondent's language, `words` the page's
    sentences in it (client/review_words.py; English: client/review.py)."""
    shown = shown or survey
    words = words or Words()
    if survey.two_server is not None:  # the page's sentences, then both guarantees
        from ldpsurvey.shared.two_server.guarantees import survey_guarantees

        guarantees = survey_guarantees(survey)
        if not words.english:
            return [*review_words.two_server_review_lines(shown, checked,
                                                          respondent.server_url, words),
                    *review_words.guarantee_lines(guarantees, words)]
        return [*two_server_review_lines(shown, checked, respondent.server_url),
                *guarantees.statements]
    mechanisms = {q.id: respondent.mechanism(survey, q) for q in survey.questions}
    # Special values are said in the page's sentences in every language, English included
    # (client/review.py has no English twin of them).
    if not words.english or any(q.special for q in survey.questions):
        return review_words.review_lines(shown, checked, mechanisms, text, words,
                                         respondent.max_epsilon)
    return review_lines(shown, checked, mechanisms)


def _confirm(words: Words) -> bool:
    """Ask before randomizing; in another language, its own yes/no words answer ("sí")."""
    if words.english:
        return click.confirm("Randomize and send now?", default=False)
    while True:
        typed = click.prompt(f"{words.t('review.send')} [{words.yes_no_hint()}]",
                             default="", show_default=False, prompt_suffix=" ")
        if not typed.strip():
            return False
        said = words.yes_no(typed)
        if said is not None:
            return said
        click.secho(f"   {words.yes_no_hint()}", fg="red", err=True)


def stdin_is_terminal() -> bool:
    """Whether a person can be asked to confirm (tests replace this)."""
    return sys.stdin.isatty()


def said_reports(survey: Survey, respondent: Respondent, reports: dict[str, Any],
                 text: SurveyText | None = None, words: Words | None = None
                 ) -> dict[str, Any]:
    """The reports in the respondent's words, kept with the submission for `receipts`: each
    question's text and its report with option labels (their text in the language shown),
    never an index."""
    text = text or SurveyText(survey)
    words = words or Words()
    return {"language": text.language, "reports": [
        {"question": q.id, "text": said(text.question(q.id), text),
         "report": review_words.report_words(q, respondent.mechanism(survey, q),
                                             reports[q.id], text, words)}
        for q in survey.questions if q.id in reports]}


def _print_sent(said: Mapping[str, Any], words: Words | None = None) -> None:
    """The stored reports in plain words: printed only once they are in the outbox."""
    words = words or Words()
    click.echo("Randomized and stored on this device; it sends:" if words.english
               else words.cli("cli.stored"))
    for line in said_lines(said):
        click.echo(line)


def said_lines(said: Any, indent: str = "  ") -> list[str]:
    """A submission's kept words as lines ("question -> report"); none for anything else."""
    reports = said.get("reports") if isinstance(said, Mapping) else None
    return [f"{indent}{r['text']} -> {r['report']}" for r in reports or []
            if isinstance(r, Mapping) and isinstance(r.get("text"), str)
            and isinstance(r.get("report"), str)]


def _read_answers(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise AnswerError(f"cannot read answers from {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise AnswerError(f"{path}: answers must be a JSON object {{question_id: answer}}")
    return data


def prompt_answers(survey: Survey, text: SurveyText | None = None,
                   words: Words | None = None, carried: Mapping[str, Any] | None = None
                   ) -> dict[str, Any]:
    """Ask each question on the terminal, in `text`'s language (default: the survey's own),
    with the page's words in it where its catalogue has them (`words`, default: the
    language's); returns {question_id: true answer} (option labels, whatever the language).
    `carried` are the answers the invitation carries (carried = true): shown, not asked."""
    text = text or SurveyText(survey)
    words = words or words_for(text.language)
    click.echo(f"{said(text.title(), text)} (version {survey.version})")
    note = fallback_line(text)
    if note:
        click.echo(note)
    if text.description().text:
        click.echo(said(text.description(), text))
    click.echo(survey_privacy(survey) if words.english
               else review_words.survey_privacy(survey, words))
    disclosed = sum(q.disclosed for q in survey.questions)
    if disclosed and words.english:  # the page's privacy.disclosed says it in the others
        click.echo(f"{disclosed} question(s) marked disclosed are sent as you answer them, not "
                   f"randomized: they cost no ε but can help identify you.")
    if survey.series:
        click.echo(f"Part of the series {survey.series!r}: the same answer as last time costs "
                   f"no extra privacy; a changed answer costs its ε again.")
    answers: dict[str, Any] = {}
    pipe = piping(survey, text, words, answers)  # `${id}`: an earlier answer, shown only
    for i, q in enumerate(survey.questions, 1):
        if not applies(q, answers):  # skip logic: asked only when its condition holds
            continue
        click.echo()
        click.secho(f"{i}. {pipe(said(text.question(q.id), text))}", bold=True)
        if carried and q.id in carried:  # the invitation's value, sent as it is
            answers[q.id] = carried[q.id]
            click.echo(f"   {carried[q.id]}  (carried by your invitation from your interview; "
                       f"disclosed: sent as it is, not randomized)")
            continue
        hint = text.hint(q.id)
        if hint is not None:
            click.echo(f"   {pipe(said(hint, text))}")
        click.echo("   " + (question_privacy(q) if words.english
                              else review_words.question_privacy(q, words)))
        if q.optional:
            click.echo("   optional: leave empty to skip (the server sees that you skipped it)"
                       if words.english else f"   {words.t('form.optionalEmpty')}")
        asked = _shown(q, survey, answers)  # a filter narrows what is shown, not the domain
        while True:
            typed = click.prompt("   " + _hint(asked, text, words, pipe),
                                 default="" if q.optional else None, show_default=False)
            if q.optional and not typed.strip():
                break
            try:
                answers[q.id] = parse_answer(asked, typed, text, words)
                check_answer(q, answers[q.id])
                break
            except AnswerError as exc:
                answers.pop(q.id, None)
                click.secho(f"   {exc.message}", fg="red", err=True)
    return answers


def _shown(q: Question, survey: Survey, answers: Mapping[str, Any]) -> Question:
    """The question as `respond` lists and reads it: with a filter (shared/option_filter.py),
    only the options that go with the earlier answer, numbered 1..m; the answer stays an
    option of the full list, which its mechanism randomizes over (`check_answer(q, ...)`)."""
    if q.option_filter is None:
        return q
    shown = shown_for(q, {p.id: p for p in survey.questions}, answers)
    return q if shown == q.options else replace(q, options=shown, groups={})


def check_answer(q: Question, value: Any) -> None:
    """AnswerError if `value` does not fit the question (nothing is randomized here)."""
    if q.mechanism == "none":  # a two-server question without a local mechanism
        from ldpsurvey.shared.two_server.encoding import question_index
        question_index(q, value)
    else:
        mechanism_for(q).encode(value)


def _hint(q: Question, text: SurveyText | None = None, words: Words | None = None,
          pipe: Any = None) -> str:
    """Print what the question's unit lists before asking (its options, piped texts written
    with `pipe`) and return the hint it asks with."""
    listed, hint = q.unit.terminal_prompt_with_special(q, Terminal(words or Words(), text, pipe))
    for line in listed:
        click.echo(f"   {line}")
    return hint


def parse_answer(q: Question, text: str, shown: SurveyText | None = None,
                 words: Words | None = None) -> Any:
    """A typed answer from what was typed (a number, an option label, or an option's text in
    the language shown; yes/no also in the words of `words`' language, "sí", "oui");
    AnswerError if it does not parse (the question's unit reads it)."""
    return q.unit.parse_typed_or_special(q, text.strip(), Terminal(words or Words(), shown))


SAID_DELIVERED = {"delivered": "no", "delivered (the server already had it)": "yes"}


def _report_delivery(delivery: Delivery, words: Words | None = None) -> None:
    if delivery.status == PENDING:
        raise DeliveryError(f"not delivered yet: {delivery.message}; the randomized submission "
                            f"{delivery.submission_id} is kept in the outbox; run `ldpsurvey "
                            f"outbox flush` to send it")
    if delivery.status == FAILED:
        raise DeliveryError(f"{delivery.message} (kept in the outbox, marked failed)")
    if delivery.status == AWAITING_CODE:  # the message says how to send it with another code
        raise InvitationError(delivery.message)
    duplicate = SAID_DELIVERED.get(delivery.message)
    if words is None or words.english or duplicate is None:
        click.echo(f"sent submission {delivery.submission_id}: {delivery.message}")
    else:
        click.echo(words.cli("cli.sent", id=delivery.submission_id, duplicate=duplicate))


@click.command()
@state_option
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@delta_option
def receipts(state_dir: str | None, as_json: bool, delta: float) -> None:
    """What this device has sent (randomized reports only) and the ε spent per survey."""
    state = StateDir(state_dir)
    ledger, outbox = Ledger(state), Outbox(state)
    sent = outbox.all_receipts()
    waiting = outbox.all_outbox()
    spend = ledger.spend_by_survey()
    series = ledger.spend_by_series()
    total = ledger.composition(delta)
    if as_json:
        click.echo(json.dumps({
            "receipts": [{**{k: r[k] for k in ("submission_id", "survey_id", "server",
                                               "delivered", "duplicate", "body")},
                          "invited": bool(r.get("invited")),
                          **({"said": r["said"]} if r.get("said") else {})} for r in sent],
            "outbox": [{**{k: r[k] for k in ("submission_id", "survey_id", "status", "body")},
                        **({"said": r["said"]} if r.get("said") else {})} for r in waiting],
            "epsilon_by_survey": [asdict(s) for s in spend],
            "series": series, "total_epsilon": ledger.total_epsilon(),
            "disclosed": [{k: e[k] for k in ("survey", "version", "question", "submission_id")}
                          for e in ledger.disclosed()],
            "composition": total.to_dict()}, indent=2))
        return
    if not sent and not waiting and not spend:
        click.echo("nothing sent from this device yet")
        return
    disclosed = ledger.disclosed()
    click.secho("Sent (randomized reports, and the disclosed answers listed at the end as you "
                "gave them; your true answers to randomized questions never left this device):"
                if disclosed else
                "Sent (randomized reports; your true answers never left this device):", bold=True)
    cells: dict[tuple[str, int], dict[str, int]] = {}
    for e in ledger.location_entries():
        if isinstance(e.get("grid_cols"), int):
            cells.setdefault((e["survey"], e["version"]), {})[e["question"]] = e["grid_cols"]
    for r in sent:
        body = r["body"]
        head = (f"  {r['delivered'][:19]}  {r['survey_id']} v{body['version']}  "
                f"{r['submission_id']}"
                + ("  (with an invitation code, not kept on this device)"
                   if r.get("invited") else ""))
        if r.get("said"):  # the reports in the respondent's words, options by label
            click.echo(head)
            for line in said_lines(r["said"], "    "):
                click.echo(line)
        else:  # stored before the words were kept with it
            click.echo(f"{head}  "
                       f"{_sent_words(body, cells.get((r['survey_id'], body['version'])))}")
    if waiting:
        click.secho("Not delivered (ldpsurvey outbox list):", bold=True)
        for r in waiting:
            click.echo(f"  {r['status']:8} {r['survey_id']}  {r['submission_id']}"
                       + ("  (waiting for an invitation code: ldpsurvey outbox list)"
                          if invitation.awaits_code(r) else ""))
            for line in said_lines(r.get("said"), "    "):
                click.echo(line)
    click.secho("Privacy spent (ε):", bold=True)
    for s in spend:
        versions = ", ".join(f"v{v}" for v in s.versions)
        click.echo(f"  {s.survey}: ε = {s.epsilon:.4g} ({versions})")
    for name, questions in sorted(series.items()):
        click.echo(f"  series {name!r} over all rounds so far:")
        for qid, info in sorted(questions.items()):
            click.echo(f"    {qid}: ε = {info['epsilon']:.4g} for {info['distinct_answers']} "
                       f"distinct answer(s) in {info['rounds']} round(s)")
    for e in ledger.location_entries():
        click.echo(f"  location {e['survey']} v{e['version']} {e['question']}: ε = "
                   f"{e['epsilon']:.4g} (ε_geo = {e['epsilon_geo']:g} per km)")
    click.echo(format_total(total))
    if disclosed:
        click.secho("Disclosed answers (sent as you answered them, not randomized; no ε):",
                    bold=True)
        for e in disclosed:
            click.echo(f"  {e['survey']} v{e['version']}  {e['question']}")


def format_total(total: Composition) -> str:
    """The device's total both ways, the better one marked (shared/composition.py)."""
    better = {"basic": "  <- the better bound", "advanced": ""}
    lines = [f"  total over {total.k} report(s):",
             f"    plain sum:       ε = {total.basic:.4g}{better[total.best]}",
             f"    advanced bound:  ε = {total.advanced:.4g} at δ = {total.delta:g}"
             + ("  <- the better bound" if total.best == "advanced" else "")]
    if total.best == "basic" and total.k:
        lines.append("    (the advanced bound only pays off over many small-ε reports)")
    return "\n".join(lines)


@click.group(cls=FullHelpGroup)
def outbox() -> None:
    """Submissions stored on this device that are not delivered yet."""


@outbox.command("list")
@state_option
def outbox_list(state_dir: str | None) -> None:
    """List pending and failed submissions."""
    records = Outbox(StateDir(state_dir)).all_outbox()
    if not records:
        click.echo("outbox is empty")
    for r in records:
        line = f"{r['status']:8} {r['survey_id']}  {r['submission_id']}  {r['server']}"
        if invitation.awaits_code(r):
            line += f"  ({invitation.waiting_words(r)})"
        elif r.get("last_error"):
            line += f"  ({r['last_error']})"
        click.echo(line)


@outbox.command("flush")
@state_option
@attempts_option
@click.option("--include-failed", is_flag=True,
              help="Also retry submissions the server refused (e.g. after it was fixed); not "
                   "those whose invitation code it refused (see respond --invite).")
def outbox_flush(state_dir: str | None, attempts: int, include_failed: bool) -> None:
    """Send every pending submission (the stored randomized reports, never new ones).

    A submission whose invitation code the server refused is not sent again with that code:
    `ldpsurvey respond --invite CODE` sends it with another (it says how).
    """
    from .respondent import flush_outbox
    from .transport import RetryPolicy

    waiting = Outbox(StateDir(state_dir)).awaiting_code()
    deliveries = flush_outbox(state_dir, RetryPolicy(attempts=attempts),
                              include_failed=include_failed)
    for r in waiting:
        click.echo(f"{r['status']:8} {r['survey_id']}  {r['submission_id']}  "
                   f"not sent: {invitation.waiting_words(r)}")
    if not deliveries:
        click.echo("nothing else to send" if waiting else "nothing to send")
        return
    for d in deliveries:
        click.echo(f"{d.status:8} {d.survey_id}  {d.submission_id}  {d.message}")
    left = [d for d in deliveries if d.status != "sent"]
    if left:
        raise DeliveryError(f"{len(left)} of {len(deliveries)} submission(s) not delivered")
