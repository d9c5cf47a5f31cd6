"""The assembled survey checked by `Survey.from_dict` (the check `publish` makes), its
refusals said as row problems: the row of the question a SurveyError names, the column of the
field, and what to change. Every refused question is found, one check at a time, leaving out
each one refused and the questions whose conditions read it.

An optional row whose condition reads randomized answers is imported as required, with a note
(`required_follow_up`), in the check that meets it (Survey.from_dict's `amend`): the check goes
on from that question, so one check makes every such row of the form required (it took one
check each, 83 for a 710-row form). A declined answer would send nothing, and a report that
is missing tells the server that the question was asked, i.e. something of the randomized
answers its condition read. Required, it is sent by every respondent (randomized, "not
asked" where it does not apply), so nothing about the condition leaves the device; a
respondent who would decline picks the form's "prefer not to say" choice, which is randomized
like any answer."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ldpsurvey.shared.errors import SurveyError
from ldpsurvey.shared.skip_logic import OptionalFollowUpError
from ldpsurvey.shared.survey import Survey

from .assembly import assemble, toml
from .errors import FIX, ImportRefused, RowProblem, XlsFormError
from .languages import Languages
from .questions import Question
from .settings import SurveySettings

# A question's field as its XLSForm column, for messages.
_COLUMN_OF = {"epsilon": "ldp_epsilon", "mechanism": "ldp_mechanism",
              "local_epsilon": "ldp_local_epsilon", "central_epsilon": "ldp_central_epsilon",
              "disclosed": "ldp_disclosed", "text": "label", "min": "constraint",
              "max": "constraint", "max_selected": "constraint", "required_min": "required",
              "options": "choices"}
_SETTING_OF = {"id": "settings form_id", "title": "settings form_title",
               "version": "settings version"}


def validated(questions: Sequence[Question], settings: SurveySettings, languages: Languages,
              filename: str, skip_unsupported: bool = False, notes: list[str] | None = None
              ) -> tuple[Survey, dict[str, Any], list[RowProblem], list[Question]]:
    """The survey, its table (checked through its TOML, as `plan` and `publish` will read it),
    the rows Survey.from_dict refuses (every one, with the questions whose conditions read
    it), left out with `skip_unsupported` (without it ImportRefused for them), and the
    questions as imported (an optional follow-up of randomized answers made required, said in
    `notes` and in its TOML comment). XlsFormError for a survey-level refusal;
    ImportRefused(nothing_left) when no question remains."""
    remaining = list(questions)
    refused: list[RowProblem] = []
    while True:
        data = assemble(remaining, settings, languages)
        survey, error, made = _checked(remaining, data, filename)
        if made:
            remaining = [made.get(i, q) for i, q in enumerate(remaining)]
            if notes is not None:
                notes += [q.comments[-1] for _, q in sorted(made.items())]
        if survey is not None:
            if made:  # the table of the questions as imported
                data = assemble(remaining, settings, languages)
            break
        assert error is not None
        failed = _question_of(error.field, remaining)
        if failed is None:
            raise XlsFormError(f"{filename}: {_SETTING_OF.get(error.field, error.field)}: "
                               f"{error.problem}") from None
        problem = _problem(error, failed)
        refused.append(problem)
        remaining, readers = _without(failed, remaining)
        refused += [_reads_refused(q, problem) for q in readers]
        if not remaining:
            raise ImportRefused(refused, nothing_left=skip_unsupported) from None
    if refused and not skip_unsupported:
        raise ImportRefused(refused)
    return survey, data, refused, remaining


def _checked(questions: Sequence[Question], data: dict[str, Any], filename: str
             ) -> tuple[Survey | None, SurveyError | None, dict[int, Question]]:
    """One pass of the survey's check on the table `data` of `questions`, read back from its
    TOML: (the survey, None) or (None, its first other refusal), and the optional follow-ups
    of randomized answers made required on the way, by index: the check refuses each as such
    (OptionalFollowUpError), and it is made required and checked again in place
    (Survey.from_dict's `amend`), so that the pass goes on."""
    made: dict[int, Question] = {}

    def required(index: int, raw: Mapping[str, Any], exc: SurveyError
                 ) -> Mapping[str, Any] | None:
        q = made.get(index, questions[index])
        if not isinstance(exc, OptionalFollowUpError) or q.data.get("optional") is not True:
            return None
        made[index] = required_follow_up(q, exc.reads)
        return {key: value for key, value in raw.items() if key != "optional"}

    try:
        survey = Survey.from_dict(tomllib.loads(toml(data, filename, questions, ())),
                                  amend=required)
    except SurveyError as exc:
        return None, exc, made
    return survey, None, made


def required_follow_up(q: Question, reads: str) -> Question:
    """The optional question `q`, whose condition reads randomized answers (`reads`, their ids
    as the check names them), as a required one: its note (the last comment) says why."""
    note = (f"row {q.row} ({q.name}, {q.xls_type}): optional in the form, imported as "
            f"required: its condition reads randomized answers ({reads}), and a declined "
            "answer would send nothing, which would tell the server that it was asked; every "
            "respondent sends it, randomized ('not asked' where it does not apply). For a "
            "respondent who would rather not answer, offer a 'prefer not to say' choice: it is "
            "randomized like any answer")
    data = {key: value for key, value in q.data.items() if key != "optional"}
    return replace(q, data=data, comments=[*q.comments, note])


def _problem(exc: SurveyError, failed: Question) -> RowProblem:
    """The refused question as a row problem: what the check refuses needs the designer's
    fix (an optional follow-up of randomized answers is made required instead)."""
    return RowProblem(failed.row, failed.name, failed.xls_type, _reason(exc, failed),
                      _remedy(exc), FIX, "refused by the survey's check")


def _reads_refused(q: Question, refused: RowProblem) -> RowProblem:
    """A question whose condition reads (or whose text shows) a question the check refused:
    it goes with it, said as the walk says a condition on a row left out (conditions.py)."""
    fix = refused.kind == FIX
    if refused.name in q.pipes and refused.name not in q.reads:
        return RowProblem(q.row, q.name, q.xls_type,
                          f"its text shows ${{{refused.name}}} (row {refused.row}, "
                          f"{refused.type}), which {'needs fixing' if fix else 'is not imported'}",
                          "fix that row first; this text then shows its answer" if fix else
                          "it is left out with that row (import that row, or write the text "
                          f"without ${{{refused.name}}})", refused.kind,
                          "texts that show a row that needs fixing" if fix else
                          "texts that show a row left out")
    return RowProblem(q.row, q.name, q.xls_type,
                      f"its relevant reads ${{{refused.name}}} (row {refused.row}, "
                      f"{refused.type}), which {'needs fixing' if fix else 'is not imported'}",
                      "fix that row first; this condition is then read" if fix else
                      "it is left out with that row (import that row, or write the condition "
                      "without it)", refused.kind,
                      "conditions on rows that need fixing" if fix else
                      "conditions on rows left out")


def _without(failed: Question, questions: Sequence[Question]
             ) -> tuple[list[Question], list[Question]]:
    """(the questions but `failed` and those that read it, which cannot be checked without
    it; those that read it), in order."""
    gone = {failed.data["id"]}
    readers = []
    for q in questions:
        if gone & (set(q.reads) | set(q.pipes)):
            gone.add(q.data["id"])
            readers.append(q)
    return [q for q in questions if q.data["id"] not in gone], readers


def _question_of(field_name: str, questions: Sequence[Question]) -> Question | None:
    """The question a SurveyError names (questions.<id>... or translations.<tag>.questions.
    <id>...), None for a survey-level field."""
    for q in sorted(questions, key=lambda q: -len(q.data["id"])):
        qid = q.data["id"]
        if field_name == f"questions.{qid}" or field_name.startswith(f"questions.{qid}."):
            return q
        m = re.match(r"^translations\.[^.]+\.questions\.(.*)$", field_name)
        if m and (m[1] == qid or m[1].startswith(qid + ".")):
            return q
    return None


def _reason(exc: SurveyError, q: Question) -> str:
    """The problem, after the column it is in."""
    prefix = f"questions.{q.data['id']}"
    rest = exc.field[len(prefix) + 1:] if exc.field.startswith(prefix + ".") else ""
    field_name = _COLUMN_OF.get(rest, rest)
    return f"{field_name + ': ' if field_name else ''}{exc.problem}"


def _remedy(exc: SurveyError) -> str:
    """What to change on the row."""
    if exc.field.endswith(".epsilon") or exc.field.endswith("_epsilon"):
        return "change its ε"
    if exc.field.endswith(".mechanism"):
        return "change ldp_mechanism (or leave it empty for auto)"
    if exc.field.endswith(".relevant"):
        return "change its relevant"
    return "change the row"
