"""What `respond` shows a respondent, in plain words: before sending, the exact chances of what
each answer will be sent as (nothing is drawn yet); after storing, the reports it sent.

The twin of client/web/js/review.js. Nothing here draws randomness: a review can be shown and
declined without any report existing, so a respondent can never see a draw and ask for another
(issue 17, docs/web.md "a report, once seen, is never replaced by a fresh draw").
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from ldpsurvey.shared.mechanisms import Mechanism
from ldpsurvey.shared.mechanisms.set_choice import SET_MECHANISMS as SET_MECHANISM_CLASSES
from ldpsurvey.shared.survey import Question, Survey
from ldpsurvey.shared.wording import epsilon_text, odds_factor, pct, percent_sure, to_precision

from . import multiselect_words
from .page_words import ENGLISH
from .skip_review import (
    not_applying,
    not_asked_chances,
    not_asked_report_words,
    skipped_lines,
    two_server_skipped_lines,
)

SET_MECHANISMS = tuple(SET_MECHANISM_CLASSES)  # a check-all-that-apply answer's (its words:
# client/multiselect_words.py)
LIST_ALL_UP_TO = 8  # an ordinal question with at most this many options: every chance listed


def reach_text(epsilon: float) -> str:
    """Where someone who thought something 50/50 can end up after seeing a report of this ε,
    for the sentences that say "from 50% to …": "at most 74% sure", or "almost certain" past
    99.9999% (the page's reachText, the same strings)."""
    sure = percent_sure(epsilon)
    return "almost certain" if sure is None else f"at most {sure} sure"


def odds_sentence(epsilon: float) -> str:
    """The privacy of ε in odds words anchored in a probability, for a respondent
    (client/web/js/odds.js oddsSentence, the same string; callers add the ε where it is shown)."""
    if epsilon == 0:
        return "what your device sends reveals nothing new about your answers"
    return (f"anyone who sees what your device sends can be at most {odds_factor(epsilon)} "
            f"times more sure of your real answers than before, for example from 50% to "
            f"{reach_text(epsilon)}")


def question_privacy(q: Question) -> str:
    """One question's privacy in odds words, shown with the question before it is answered
    (the page's hint, client/web/js/form.js and odds.js; two-server: twoserver/flow.js)."""
    if q.disclosed:
        return "Disclosed: sent as you answer it, not randomized. It costs no ε, but it can " \
               "help identify you."
    if q.central_epsilon is not None:
        local = (f" Your device also randomizes it first (local ε0 = "
                 f"{epsilon_text(q.local_epsilon)})." if q.local_epsilon is not None else "")
        return ("Only the noisy total of all answers to this question is revealed (central "
                f"ε = {epsilon_text(q.central_epsilon)}).{local} "
                + two_server_collusion(q, "both organizations together"))
    return (f"Privacy: anyone who sees what is sent can be at most {odds_factor(q.epsilon)} "
            f"times more sure of this answer than before, for example from 50% to "
            f"{reach_text(q.epsilon)} (ε = {epsilon_text(q.epsilon)}).")


def survey_privacy(survey: Survey) -> str:
    """The whole survey's privacy in odds words, before the first question (the page's
    first screen)."""
    if survey.two_server is not None:
        return ("Your answers are split on this device into two sealed halves before anything "
                "is sent. Neither organization alone ever sees a true answer.")  # page's LEAD
    sentence = odds_sentence(survey.total_epsilon)
    return (f"Your privacy: your device randomizes every answer before sending it. "
            f"{sentence[0].upper()}{sentence[1:]}, even if you answer every question "
            f"(ε = {epsilon_text(survey.total_epsilon)} in total).")


def answer_text(q: Question, answer: Any) -> str:
    """A true answer as the respondent chose it (the page's answerText, client/web/js/form.js):
    its unit names it."""
    return q.unit.answer_words(q, answer, ENGLISH)


def _quote(text: Any) -> str:
    return f"“{text}”"


DISCLOSED_CHANCES = ("Disclosed: sent as you answer it, not randomized. The server sees this "
                     "answer as you give it.")
DISCLOSED_COST = "Disclosed: no ε, because it is not randomized; it can help identify you."


def _design_reports(q: Question, name: str, size: int) -> list[str]:
    """A named design's reports in words (client/web/js/designs.js, the same words)."""
    if name == "crosswise":
        return ["‘differ’", "‘same’"]
    if name == "matrix":
        return [f"report {y}" for y in range(size)]
    return [q.unit.value_words(q, value, ENGLISH) for value in q.unit.values(q)]


def chances(q: Question, mechanism: Mechanism, answer: Any) -> str:
    """What the device will send for this answer, with the exact chances, in plain words: the
    page's sentence (client/web/js/review.js `chances`), character for character."""
    name = mechanism.name
    p = getattr(mechanism, "p_star", None)
    qs = getattr(mechanism, "q_star", None)
    if q.disclosed:
        return DISCLOSED_CHANCES
    if q.not_asked:  # skip logic: options + "not asked" (skip_review.py)
        said = not_asked_chances(q, mechanism, answer)
        if said is not None:
            return said
        return describe(q, mechanism)
    said = q.unit.device_chances(q, mechanism, answer, ENGLISH)  # a decimal's grid
    if said is not None:
        return said
    if name in SET_MECHANISMS:  # a check-all-that-apply answer
        return multiselect_words.chances(q, mechanism, answer)
    if getattr(mechanism, "designed", False):  # a named design: its exact row, listed
        index = mechanism.encode(answer)
        row = mechanism.channel()[index]
        mine = -1 if name in ("crosswise", "matrix") else index  # their reports name no answer
        listed = ", ".join(f"{label}{' (your real answer)' if y == mine else ''} {pct(pr)}"
                           for y, (label, pr) in enumerate(zip(
                               _design_reports(q, name, len(row)), row, strict=True)))
        return (f"Your device will send one of these at random "
                f"({mechanism.known_as or name}): {listed}.")
    if name in ("binary_rr", "grr"):  # layered (a series): both stages, in describe()
        return q.unit.randomized_response_chances(q, answer, p, qs, ENGLISH)
    if name == "geometric":
        return _number_chances(q, mechanism, answer)
    if name == "geo_exp":  # location: the spread around this very cell (docs/location.md)
        from ldpsurvey.shared.mechanisms.location import describe_spread

        return describe_spread(mechanism, mechanism.encode(answer))
    if name == "ordinal_exp" and len(q.options) <= LIST_ALL_UP_TO:
        at = q.options.index(answer)
        step = float(mechanism.base)  # type: ignore[attr-defined]
        weights = [step ** -abs(at - y) for y in range(len(q.options))]
        total = sum(weights)
        listed = ", ".join(f"{_quote(o)}{' (yours)' if y == at else ''} {pct(weights[y] / total)}"
                           for y, o in enumerate(q.options))
        return ("Your device will send one of the options, the nearer to your real answer the "
                f"likelier: {listed}.")
    return describe(q, mechanism)


def sends_yes_no(mechanism: Any) -> bool:
    """Whether randomized response sends one of yes and no (a yes/no question's values,
    without "not asked"): it "says" them rather than "picks an option"."""
    labels = mechanism.labels
    return len(labels) == 2 and all(isinstance(v, bool) for v in labels)


def describe(q: Question, mechanism: Any, truth: str = "your real answer") -> str:
    """How the mechanism randomizes, in plain words with its exact chances: the page's
    `describe().text` (client/web/js/mechanisms.js), character for character."""
    name = mechanism.name
    if name in SET_MECHANISMS:
        return multiselect_words.describe(q, mechanism)
    if name in ("binary_rr", "grr"):
        k = len(mechanism.labels)
        choice = "says ‘yes’ or ‘no’" if sends_yes_no(mechanism) else "picks an option"
        others = (f"the other one with probability {pct(mechanism.q_star)}" if k == 2 else
                  f"otherwise one of the other {k - 1} options, each with probability "
                  f"{pct(mechanism.q_star)}")
        return (f"Your device {choice} at random: {truth} with probability "
                f"{pct(mechanism.p_star)}, {others}. The server cannot tell which happened.")
    if name.endswith("+instantaneous"):
        first = describe(q, mechanism.permanent).removesuffix(
            " The server cannot tell which happened.")
        second = describe(q, mechanism.instantaneous, "that kept answer")
        return (f"Your answer is randomized twice. Once, your{first.removeprefix('Your')} This "
                "device keeps that result and reuses it whenever you give the same answer "
                f"again. Then, for this round, your{second.removeprefix('Your')}")
    k = mechanism.k if q.not_asked else (len(q.options) if q.options else 0)
    if name in ("oue", "sue"):
        return (f"Your device sets one yes/no mark for each of the {k} options at random: the "
                f"mark of your real answer is ‘yes’ with probability {pct(mechanism.p_star)}, "
                f"every other mark with probability {pct(mechanism.q_star)}, each drawn on its "
                "own.")
    if name == "ss":
        return (f"Your device picks a set of {mechanism.subset_size} of the {k} options at "
                f"random: your real answer is in it with probability {pct(mechanism.p_star)}, "
                "and the rest of the set are other options picked at random.")
    if name == "olh":
        return (f"Your device picks a random code that sorts the {k} options into "
                f"{mechanism.g} buckets, and sends the code with the bucket of your real answer "
                f"with probability {pct(mechanism.p_bucket)}, otherwise with one of the other "
                f"{mechanism.g - 1} buckets picked at random. Many options share each bucket.")
    if name == "hr":
        return (f"Your device picks a number from 0 to {mechanism.size - 1} at random: with "
                f"probability {pct(mechanism.p_star)} from the half of the numbers that your "
                "real answer’s code marks, otherwise from the other half.")
    if name == "ordinal_exp":
        b = float(mechanism.base)
        mid = (k - 1) // 2
        z = sum(b ** -abs(mid - y) for y in range(k))
        return (f"Your device picks your real option or one near it at random: each step "
                f"further away is {to_precision(b, 4)} times less likely (for an option in the "
                f"middle, your real one is sent with probability {pct(1 / z)}).")
    return mechanism.deniability()


def _number_chances(q: Question, mechanism: Any, x: int) -> str:
    rate = float(mechanism.rate)
    same = math.tanh(rate / 2)
    step = math.exp(rate)
    near = 2 * same / step  # one step up or down, together
    further = max(0.0, 1 - same - near)
    factor = "very slightly" if step < 1.0001 else f"{to_precision(step, 3)} times"
    return (f"Your device will add random noise to your number and send the result: {x} "
            f"itself with probability {pct(same)}, {x - 1} or {x + 1} with probability "
            f"{pct(near)}, a number further away with probability {pct(further)} (each further "
            f"step is {factor} less likely than the one before). The number sent can be below "
            f"{q.min} or above {q.max}: that is the noise, as expected.")


def review_lines(survey: Survey, answers: Mapping[str, Any],
                 mechanisms: Mapping[str, Mechanism]) -> list[str]:
    """The review before anything is drawn: per question the answer, what sending it means,
    and its ε; then the total in odds words."""
    lines = [f"Before sending {survey.title!r} (version {survey.version}): nothing has been "
             "randomized yet. If you send, your device randomizes each answer once, stores the "
             "result and sends only that; your true answers never leave this device."]
    total = 0.0
    for i, q in enumerate(survey.questions, 1):
        if not_applying(q, answers):  # skip logic: said after the list (skip_review.py)
            total += q.epsilon if answers.get(q.id) is not None else 0.0
            continue
        lines.append(f"{i}. {q.text}")
        answer = answers.get(q.id)
        if answer is None:
            lines.append("   Skipped: nothing is sent for this question (the server sees that "
                         "it was skipped). Privacy spent: ε = 0.")
            continue
        if q.disclosed:
            lines.append(f"   Your answer (sent as you give it): {answer_text(q, answer)}")
            lines.append(f"   {chances(q, mechanisms[q.id], answer)}")
            lines.append(f"   {DISCLOSED_COST}")
            continue
        total += q.epsilon
        lines.append(f"   Your answer (stays on this device): {answer_text(q, answer)}")
        lines.append(f"   {chances(q, mechanisms[q.id], answer)}")
        lines.append(f"   {question_privacy(q)}")
    lines.extend(skipped_lines(survey.questions, answers))
    lines.append(f"In total, {odds_sentence(total)} (ε = {epsilon_text(total)} in total).")
    if survey.series:
        lines.append(f"(Series {survey.series!r}: an answer the same as in an earlier round "
                     "re-sends the report kept for it and costs no more.)")
    return lines


def host(url: str) -> str:
    """A server as the page names it (`new URL(url).host`: no scheme, no default port)."""
    parts = urlsplit(url)
    default = {"http": 80, "https": 443}.get(parts.scheme)
    name = parts.hostname or ""
    if ":" in name:
        name = f"[{name}]"
    return name if parts.port in (None, default) else f"{name}:{parts.port}"


def two_server_collusion(q: Question, together: str) -> str:
    """What the two organizations could learn of this one answer if they worked together:
    read it, when the device does not randomize it first (the page's collusion,
    client/web/js/twoserver/flow.js, the same words)."""
    if q.local_epsilon is not None:
        return (f"Even {together} could be at most {odds_factor(q.local_epsilon)} times more "
                f"sure of this answer, for example from 50% to {reach_text(q.local_epsilon)}.")
    return f"But {together} could put the two halves back together and read this answer."


def two_server_review_lines(survey: Survey, answers: Mapping[str, Any],
                            server_url: str) -> list[str]:
    """The review of a two-server survey: per question the answer and what happens to it, the
    page's sentences (client/web/js/twoserver/flow.js reviewList)."""
    servers = survey.two_server
    assert servers is not None
    leader, helper = host(servers.leader_url or server_url), host(servers.helper_url)
    lines = [f"Before sending {survey.title!r} (version {survey.version}): nothing has been "
             "split or sealed yet."]
    for i, q in enumerate(survey.questions, 1):
        if not_applying(q, answers):  # skip logic: said after the list (skip_review.py)
            continue
        lines.append(f"{i}. {q.text}")
        answer = answers.get(q.id)
        if answer is None:
            lines.append("   Skipped: nothing is sent for this question (the organizations see "
                         "that it was skipped).")
            continue
        lines.append(f"   Your answer: {answer_text(q, answer)}")
        assert q.central_epsilon is not None
        if q.local_epsilon is not None:
            lines.append(f"   Your device will first randomize it, then split it into two "
                         f"halves, one for {leader} and one for {helper}. Even if both "
                         f"conspired, they could be at most {odds_factor(q.local_epsilon)} "
                         f"times more sure of your answer, for example from 50% to "
                         f"{reach_text(q.local_epsilon)} (ε0 = {epsilon_text(q.local_epsilon)}); "
                         f"apart, they see only a noisy total (central ε = "
                         f"{epsilon_text(q.central_epsilon)}).")
        else:
            lines.append(f"   Your device will split it into two meaningless halves, one for "
                         f"{leader} and one for {helper}; only a noisy total over everyone is "
                         f"revealed (central ε = {epsilon_text(q.central_epsilon)}). "
                         + two_server_collusion(q, f"{leader} and {helper} together"))
    return lines + two_server_skipped_lines(survey.questions, answers)


def report_words(q: Question, mechanism: Mechanism, report: Any) -> str:
    """A stored report in plain words (what the server receives for this question): the page's
    words after "Your device sent: " (mechanisms.js explain and review.js outsideNote)."""
    name = mechanism.name
    if q.extended:  # "not asked" or special values: indices past the options
        said = not_asked_report_words(q, mechanism, report)
        if said is not None:
            return said
    if name in SET_MECHANISMS:
        return multiselect_words.report_words(q, mechanism, report)
    if name == "crosswise":
        return "‘same’" if report else "‘differ’"
    if name == "matrix":
        return f"report {report}"
    said = q.unit.report_words(q, report, ENGLISH)  # a yes or no, a number
    if said is not None:
        return said
    if isinstance(report, int) and mechanism.reports_an_answer:
        return q.unit.value_words(q, q.options[report], ENGLISH, as_report=True)
    if name in ("oue", "sue", "ss") and isinstance(report, list):
        marked = [q.options[v] for v in range(len(q.options))
                  if (report[v >> 5] >> (v & 31)) & 1]
        return ("the options marked: " + ", ".join(_quote(o) for o in marked)) if marked \
            else "no option marked"
    if name == "olh" and isinstance(report, list):
        return f"the random code {report[0]} and bucket {report[1]}"
    if name == "hr":
        return f"the number {report}"
    if name == "geo_exp" and isinstance(report, int):
        return location_cell_words(report, q.location.cols)
    return repr(report)


def location_cell_words(report: int, cols: int) -> str:
    """A location report (a cell index, row-major) in the words of the page's receipt
    (mechanisms.js geoCore.explain): "the cell in row 3, column 2"."""
    row, col = divmod(report, cols)
    return f"the cell in row {row + 1}, column {col + 1}"
