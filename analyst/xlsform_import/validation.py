"""The assembled survey checked by `Survey.from_dict` (the check `publish` makes), its
refusals said as row problems: the row of the question a SurveyError names, the column of the
field, and what to change. Every refused question is found, one check at a time, leaving out
each one refused and the questions whose conditions read it."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from typing import Any

from ...shared.errors import SurveyError
from ...shared.survey import Survey
from .assembly import assemble, toml
from .errors import INVALID, ImportRefused, RowProblem, XlsFormError
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
              filename: str) -> tuple[Survey, dict[str, Any]]:
    """The survey and its table (checked through its TOML, as `plan` and `publish` will read
    it); ImportRefused for the rows Survey.from_dict refuses (all of them), XlsFormError for a
    survey-level refusal."""
    remaining = list(questions)
    invalid: list[RowProblem] = []
    while True:
        data = assemble(remaining, settings, languages)
        try:
            survey = Survey.from_dict(tomllib.loads(toml(data, filename, questions, ())))
            break
        except SurveyError as exc:
            failed = _question_of(exc.field, remaining)
            if failed is None:
                raise XlsFormError(f"{filename}: {_SETTING_OF.get(exc.field, exc.field)}: "
                                   f"{exc.problem}") from None
            invalid.append(RowProblem(failed.row, failed.name, failed.xls_type,
                                      _reason(exc, failed), _remedy(exc), INVALID,
                                      _topic(exc)))
            remaining = _without(failed, remaining)
            if not remaining:
                raise ImportRefused(invalid) from None
    if invalid:
        raise ImportRefused(invalid)
    return survey, data


def _without(failed: Question, questions: Sequence[Question]) -> list[Question]:
    """The questions but `failed` and those that read it (which cannot be checked without
    it), in order."""
    gone = {failed.data["id"]}
    for q in questions:
        if gone & set(q.reads):
            gone.add(q.data["id"])
    return [q for q in questions if q.data["id"] not in gone]


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


OPTIONAL_FOLLOW_UP = "optional follow-ups of randomized answers"


def _topic(exc: SurveyError) -> str:
    if exc.problem.startswith("an optional question cannot depend"):
        return OPTIONAL_FOLLOW_UP
    return "refused by the survey's check"


def _remedy(exc: SurveyError) -> str:
    """What to change on the row."""
    if exc.problem.startswith("an optional question cannot depend"):
        return "set required = yes on this row (a follow-up of a randomized answer is sent " \
               "by everyone, as 'not asked' when it does not apply)"
    if exc.field.endswith(".epsilon") or exc.field.endswith("_epsilon"):
        return "change its ε"
    if exc.field.endswith(".mechanism"):
        return "change ldp_mechanism (or leave it empty for auto)"
    if exc.field.endswith(".relevant"):
        return "change its relevant"
    return "change the row"
