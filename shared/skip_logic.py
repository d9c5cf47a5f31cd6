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
from .question_types.base import NOT_ASKED  # the value of a question that did not apply

# Options of a question with a "not asked" value, that value included: its share among those
# asked is computed from the k x K estimator matrix of its index reports.
MAX_NOT_ASKED_OPTIONS = 1025
MAX_RELEVANT = 2000  # characters of a condition (as of every text of a survey)
# Mechanisms a question with a "not asked" value may name; `auto` picks among the first group.
# Their reports are one index, so the share of an option among those asked is a ratio whose
# delta-method variance is read from the report counts alone (shared/among_asked.py).
AUTO_NOT_ASKED = {"binary": ("grr", "hr"), "categorical": ("grr", "hr"),
                  "ordinal": ("grr", "hr"), "integer": ("asked_geometric",)}
NAMED_NOT_ASKED = {"binary": ("grr", "hr"), "categorical": ("grr", "hr"),
                   "ordinal": ("grr", "hr", "ordinal_exp"), "integer": ("asked_geometric",)}


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
            raise SurveyError(at, f"an optional question cannot depend on randomized answers "
                              f"({reads}): a declined answer sends nothing, which would reveal "
                              "that the question was asked. Drop optional")
        if qtype == "location":
            raise SurveyError(at, f"a location question cannot depend on randomized answers "
                              f"({reads}): its grid has no 'not asked' cell")
    return Relevance(text, condition, hidden)


def check_not_asked_domain(options: Sequence[str], where: str) -> None:
    """A question with a "not asked" value: the value is not one of its labels, and the
    domain stays within MAX_NOT_ASKED_OPTIONS."""
    if NOT_ASKED in options:
        raise SurveyError(f"{where}.options", f"{NOT_ASKED!r} is the value a question that did "
                          "not apply is sent as: rename this option")
    if len(options) + 1 > MAX_NOT_ASKED_OPTIONS:
        raise SurveyError(f"{where}.options", f"a question that depends on randomized answers "
                          f"takes at most {MAX_NOT_ASKED_OPTIONS - 1} options")


def choose_mechanism(question: Any, size_limit: int, where: str) -> tuple[str, str]:
    """(name, reason) `auto` picks for a question with a "not asked" value: among the index
    mechanisms of AUTO_NOT_ASKED, the lowest variance averaged over the k + 1 values."""
    from .mechanisms import MECHANISMS

    if question.type == "integer":
        return "asked_geometric", ("auto: a question that depends on randomized answers sends "
                                   "an asked bit and a noisy number (asked_geometric)")
    layered = question.instantaneous_epsilon is not None
    ranked = []
    for name in AUTO_NOT_ASKED[question.type]:
        cls = MECHANISMS[name]
        if (cls.misfit(question.k, question.epsilon) is None
                and cls.report_bytes(question.k, question.epsilon) <= size_limit
                and (cls.supports_instantaneous_layer or not layered)):
            ranked.append((cls.average_variance(question.k, question.epsilon), name))
    if not ranked:
        raise SurveyError(f"{where}.epsilon", f"no mechanism for a question with a 'not asked' "
                          f"value fits k={question.k} at epsilon={question.epsilon:g}")
    ranked.sort()
    best_var, best = ranked[0]
    others = ", ".join(f"{name} {var:.4g}" for var, name in ranked[1:])
    return best, (f"auto: a question that depends on randomized answers has a 'not asked' "
                  f"value; lowest variance averaged over its k={question.k} values at "
                  f"epsilon={question.epsilon:g}: {best} {best_var:.4g}"
                  + (f" (vs {others})" if others else ""))


def choose_set_mechanism(question: Any, requested: str, size_limit: int, where: str) -> Any:
    """A multiselect question with a "not asked" value: its set mechanism runs over the
    options + "not asked" (shared/multiselect_not_asked.py); `auto` ranks those that carry it
    by the average variance per option over that shape."""
    from dataclasses import replace

    from .mechanisms.set_base import SetShape
    from .mechanisms.set_choice import set_candidates
    from .multiselect_not_asked import NOT_ASKED_SET_MECHANISMS, check_set_mechanism

    shape = question.multiselect
    check_not_asked_domain(question.options, where)
    check_set_mechanism(requested if requested != "auto" else "option_rr", shape.k, where)
    if requested != "auto":
        return question
    wider = SetShape(shape.k + 1, shape.max_selected, shape.required_min)
    ranked = [(var, name) for var, _, name in set_candidates(wider, question.epsilon,
                                                             size_limit)
              if name in NOT_ASKED_SET_MECHANISMS]
    if not ranked:
        raise SurveyError(f"{where}.mechanism", "no multiselect mechanism that carries a "
                          f"'not asked' value fits k={shape.k} at epsilon={question.epsilon:g}")
    best_var, best = min(ranked)
    return replace(question, mechanism=best, mechanism_choice=(
        f"auto: a question that depends on randomized answers has a 'not asked' value; lowest "
        f"variance averaged over options at k={shape.k}+1, max_selected={shape.max_selected}, "
        f"epsilon={question.epsilon:g}: {best} {best_var:.4g}"))


def check_mechanism(question: Any, name: str, where: str) -> None:
    """A named mechanism must carry a "not asked" value (NAMED_NOT_ASKED)."""
    fits = NAMED_NOT_ASKED[question.type]
    if name not in fits:
        raise SurveyError(f"{where}.mechanism", f"{name!r} cannot carry the 'not asked' value "
                          f"this question has (it depends on randomized answers); use auto or "
                          f"one of: {', '.join(fits)}")


def local_not_asked(question: Any, plain: Mapping[str, Any], where: str, local: float,
                    parse: Any) -> Any:
    """A two-server question with a local ε0 and a "not asked" value: its local report must be
    one index of the options + "not asked" (a Prio3 Histogram): `auto` takes grr there. A
    multiselect one keeps its set mechanism over the options + "not asked" (shared/two_server/
    multiselect.py), an integer one asked_geometric's pair (shared/two_server/asked_pair.py)."""
    if question.type in ("multiselect", "integer"):
        return question
    if plain.get("mechanism", "auto") == "auto" and question.mechanism != "grr":
        return parse({**plain, "epsilon": local, "mechanism": "grr"})
    return question


MAX_TWO_SERVER_INTEGER = 256  # values of an integer follow-up measured as a Histogram


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
    """A disclosed question's answer from its (normalized) report."""
    if question.type == "binary":
        return bool(report)
    if question.type == "integer":
        return int(report)
    return question.options[int(report)]


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
