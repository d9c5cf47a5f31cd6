"""Skip logic that does not leak: which questions apply, and what a device sends for the others.

A question with `relevant = "<condition>"` (shared/conditions.py) is asked only when its
condition holds on the earlier answers. Whether it was asked is itself a function of those
answers, so the privacy rule (docs/skip-logic.md) is:

- A condition that reads a randomized answer, directly or through another question whose own
  condition does ("hidden"): the question's report is ALWAYS sent. When the condition does not
  hold, the true answer is NOT_ASKED, a value of that question's domain, randomized like any
  other value (its mechanism runs over the options plus "not asked"; a binary question becomes
  no / yes / not asked; an integer one sends an asked bit and a number, shared/mechanisms/
  asked_geometric.py). The server sees the same report shape whatever was answered, and the
  report costs the question's ε either way.
- A condition that reads only disclosed answers ("public", which the server sees anyway): a
  skipped question sends nothing and costs nothing, and the server checks that a report is
  present exactly when the condition holds on the disclosed reports it received.
- Refused at publish: a disclosed question with a hidden condition (its presence would reveal
  the answers its condition reads), an optional question with a hidden condition (declining it
  would send nothing, which reveals that it was asked), a location question with a hidden
  condition (its grid has no "not asked" cell), and a named design with a "not asked" value.

A two-server survey has no disclosed questions: every condition there is hidden.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .conditions import Condition, ConditionError, QuestionInfo, parse_condition
from .errors import AnswerError, SurveyError
from .question_types import REGISTRY, unit_for, units

# The value of a question that did not apply, and the limits of a "not asked" value (the
# units' "not asked" extension; imported from here by the two-server code and the planner).
from .question_types.base import MAX_NOT_ASKED_OPTIONS as MAX_NOT_ASKED_OPTIONS
from .question_types.base import NOT_ASKED
from .question_types.base import check_not_asked_domain as check_not_asked_domain
from .question_types.integer import MAX_TWO_SERVER_INTEGER as MAX_TWO_SERVER_INTEGER

MAX_RELEVANT = 2000  # characters of a condition (as of every text of a survey)
# Mechanisms a question with a "not asked" value may name (by type); `auto` picks among the
# first group. Their reports are one index, so the share of an option among those asked is a
# ratio whose delta-method variance is read from the report counts alone
# (shared/among_asked.py). Each unit holds its own (`auto_not_asked`, `named_not_asked`);
# these tables gather them for callers that have a type's name.
AUTO_NOT_ASKED = {u.name: u.auto_not_asked for u in units() if u.auto_not_asked}
NAMED_NOT_ASKED = {u.name: u.named_not_asked for u in units() if u.named_not_asked}


class OptionalFollowUpError(SurveyError):
    """An optional question whose condition reads randomized answers (`reads`, their ids
    joined by ", "): refused, since a declined answer would send nothing, which reveals that
    it was asked. Its own type so that a caller that can make the question required (the
    XLSForm import) knows this refusal from every other."""

    def __init__(self, field: str, reads: str) -> None:
        super().__init__(field, f"an optional question cannot depend on randomized answers "
                         f"({reads}): a declined answer sends nothing, which would reveal "
                         "that the question was asked. Drop optional")
        self.reads = reads


@dataclass(frozen=True)
class Relevance:
    """A question's parsed `relevant` and whether it reads a randomized answer (`hidden`)."""

    text: str
    condition: Condition
    hidden: bool


def parse_relevance(data: Mapping[str, Any], where: str, qid: str, qtype: str,
                    earlier: Sequence[Any], later_ids: Sequence[str]) -> Relevance | None:
    """The `relevant` of one question (None when it has none); SurveyError naming
    `questions.<id>.relevant` for a condition that does not parse, reads an unknown or later
    question, mismatches types, or breaks the privacy rule (module docstring)."""
    text = data.get("relevant")
    if text is None:
        return None
    at = f"questions.{qid}.relevant"
    if not isinstance(text, str) or not text.strip():
        raise SurveyError(at, "must be a non-empty condition, e.g. \"used == true\"")
    if len(text) > MAX_RELEVANT:
        raise SurveyError(at, f"at most {MAX_RELEVANT} characters")
    infos = [*earlier, QuestionInfo(qid, qtype), *(QuestionInfo(i, "") for i in later_ids)]
    try:
        condition = parse_condition(text, infos, len(earlier))
    except ConditionError as exc:
        raise SurveyError(at, f"{exc.message} (at character {exc.position + 1})") from None
    by_id = {q.id: q for q in earlier}
    # Transitively: a question whose own condition is hidden has a "not asked" value (or is
    # refused below), and a disclosed question never has one, so reading any randomized
    # question is what makes a condition hidden.
    hidden = any(not getattr(by_id[ref], "disclosed", False) or getattr(by_id[ref], "not_asked",
                                                                        False)
                 for ref in condition.references)
    if hidden:
        reads = ", ".join(condition.references)
        if data.get("disclosed", False) is True:
            raise SurveyError(at, f"a disclosed question cannot depend on randomized answers "
                              f"({reads}): whether it is sent would reveal them. Randomize it, "
                              "or make its condition read disclosed questions only")
        if data.get("optional", False) is True:
            raise OptionalFollowUpError(at, reads)
        if qtype in REGISTRY:
            REGISTRY[qtype].check_hidden_condition(at, reads)
    return Relevance(text, condition, hidden)


def choose_mechanism(question: Any, size_limit: int, where: str) -> tuple[str, str]:
    """(name, reason) `auto` picks for a question with a "not asked" value: its unit's
    `choose_not_asked_mechanism` (among the index mechanisms of its `auto_not_asked`, the
    lowest variance averaged over the k + 1 values; an integer's asked_geometric)."""
    return unit_for(question.type).choose_not_asked_mechanism(question, size_limit, where)


def check_mechanism(question: Any, name: str, where: str) -> None:
    """A named mechanism must carry a "not asked" value (the unit's `named_not_asked`)."""
    unit_for(question.type).check_not_asked_mechanism(question, name, where)


def local_not_asked(question: Any, plain: Mapping[str, Any], where: str, local: float,
                    parse: Any) -> Any:
    """A two-server question with a local ε0 and a "not asked" value: its local report must be
    one index of the options + "not asked" (a Prio3 Histogram): `auto` takes grr there. A
    multiselect one keeps its set mechanism over the options + "not asked" (shared/two_server/
    multiselect.py), an integer one asked_geometric's pair (shared/two_server/asked_pair.py):
    the unit's `local_not_asked`."""
    return question.unit.local_not_asked(question, plain, where, local, parse)


# --- what a device sends ---------------------------------------------------------------------


def applies(question: Any, answers: Mapping[str, Any]) -> bool:
    """Whether a question is asked, given the answers so far (not asked ones absent)."""
    condition = getattr(question, "condition", None)
    return condition is None or condition.evaluate(answers)


def resolve_answers(questions: Sequence[Any], answers: Mapping[str, Any],
                    check: Callable[[Any, Any], None] | None = None) -> dict[str, Any]:
    """The values a device randomizes, {question id: value}: each applicable question's answer
    (None or absent for a skipped optional one: left out), NOT_ASKED for each question that does
    not apply and has a "not asked" value, and nothing for one that does not apply otherwise.

    AnswerError for an answer given to a question that does not apply, a required applicable
    question left unanswered, or NOT_ASKED given as an answer to one that applies (given for one
    that does not, it is accepted: what this function returned before, checked again). `check`
    (question, answer) refuses an answer outside its question's domain (the device passes its
    mechanism's check): it runs on each answer before a later condition reads it, so an invalid
    answer is named itself, not through a condition it made hold (a string "cannabis" holds
    selected(substances, 'cannabis') as a substring)."""
    known: dict[str, Any] = {}
    out: dict[str, Any] = {}
    for q in questions:
        value = answers.get(q.id)
        if not applies(q, known):
            resolved = getattr(q, "not_asked", False) and _is_not_asked(value)
            if value is not None and not resolved:  # NOT_ASKED: resolved here before
                raise AnswerError(f"question {q.id!r} does not apply to these answers (its "
                                  f"condition {q.relevant!r} does not hold): leave it out")
            if getattr(q, "not_asked", False):
                out[q.id] = NOT_ASKED
            continue
        if value is None:
            if q.optional:
                continue
            raise AnswerError(f"question {q.id!r} is required")
        if _is_not_asked(value):
            raise AnswerError(f"{NOT_ASKED!r} is not an answer: it is what a device sends for a "
                              f"question that does not apply ({q.id!r} applies here)")
        if check is not None:
            check(q, value)
        out[q.id] = value
        known[q.id] = value
    return out


def _is_not_asked(value: Any) -> bool:
    return isinstance(value, str) and value == NOT_ASKED


def asked_values(values: Mapping[str, Any]) -> dict[str, Any]:
    """The values with NOT_ASKED left out: what conditions read (not asked = missing)."""
    return {k: v for k, v in values.items() if not _is_not_asked(v)}


# --- what a server checks ----------------------------------------------------------------------


def public_skips(survey: Any) -> tuple[Any, ...]:
    """Questions whose condition reads disclosed answers only: present exactly when it holds."""
    return tuple(q for q in survey.questions
                 if getattr(q, "condition", None) is not None and not q.not_asked)


def disclosed_value(question: Any, report: Any) -> Any:
    """A disclosed question's answer from its (normalized) report (its unit's)."""
    return question.unit.disclosed_value(question, report)


def presence_problems(survey: Any, skips: Sequence[Any],
                      reports: Mapping[str, Any]) -> list[dict[str, str]]:
    """Problems with which questions a submission answered, given its disclosed reports: a
    report for a question that does not apply, or a required one missing where it applies."""
    if not skips:
        return []
    by_id = {q.id: q for q in survey.questions}
    known = {qid: disclosed_value(by_id[qid], report) for qid, report in reports.items()
             if by_id.get(qid) is not None and by_id[qid].disclosed}
    problems = []
    for q in skips:
        holds = q.condition.evaluate(known)
        if not holds and q.id in reports:
            problems.append({"field": f"answers.{q.id}", "message": "this question does not "
                             f"apply to this submission's disclosed answers ({q.relevant}): its "
                             "report must be left out"})
        elif holds and q.id not in reports and not q.optional:
            problems.append({"field": f"answers.{q.id}", "message": "required question missing "
                             f"(its condition {q.relevant} holds)"})
    return problems
