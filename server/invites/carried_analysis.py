"""Subgroups and regressions on the covariates invitation codes carry (`invites create
--from-export --carry`; docs/sensitive-module.md).

A carried value is known exactly for each respondent, as a disclosed answer is, so it is
treated as a disclosed categorical question (carried.carried_question): `report --by region`
gives each randomized question's estimate among the respondents whose code carried each
region, by the question's own LDP estimator, and `regress --covariates region` enters it as
dummies against its first value. Each submission is joined to its code's values through the
invitation (Store.submission_carried), as design-based reports join the design row.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from ldpsurvey.shared.errors import AnalysisError
from ldpsurvey.shared.estimand import plain_estimate

from .carried import carried_question, submission_values

PAGE = 50_000  # stored submissions per read


def is_carried(store: Any, survey_id: str, name: str) -> bool:
    """Whether `name` is a covariate the survey's invitation codes carry."""
    return name in store.invite_carried_names(survey_id)


def _submissions(store: Any, survey_id: str, version: int) -> Iterator[tuple[str, dict]]:
    """(submission id, reports) of every stored submission of the version, in arrival order."""
    after = 0
    while True:
        rows = store.export_rows(survey_id, version, after, PAGE)
        for _seq, _version, sid, _hour, reports in rows:
            yield sid, json.loads(reports)
        if len(rows) < PAGE:
            return
        after = rows[-1][0]


def carried_subgroups(store: Any, record: Any, compiled: Any, by: str, confidence: float,
                      bins: Sequence[int] | None) -> dict[str, Any]:
    """The subgroup document (server/subgroups.py's shape) of carried covariate `by`: per
    value its exact number of respondents and every randomized question's estimate among
    them. Submissions whose code carries nothing (none, when every code carries) are out."""
    if bins is not None:
        raise AnalysisError(f"bins apply to integer questions; {by!r} is a carried covariate "
                            "(text values)", {"question": by})
    values = submission_values(store, record.id, record.version, by)
    labels = sorted(set(values.values()))
    group = {label: g for g, label in enumerate(labels)}
    randomized = [q for q in compiled.survey.questions if not q.disclosed]
    found: dict[str, list[list[Any]]] = {q.id: [[] for _ in labels] for q in randomized}
    sizes = np.zeros(len(labels), dtype=np.int64)
    for sid, reports in _submissions(store, record.id, record.version):
        value = values.get(sid)
        if value is None:
            continue
        g = group[value]
        sizes[g] += 1
        for q in randomized:
            if q.id in reports:
                found[q.id][g].append(reports[q.id])
    per_group: list[list[dict[str, Any]]] = [[] for _ in labels]
    for q in randomized:
        mechanism = compiled.mechanisms[q.id]
        for g, reports in enumerate(found[q.id]):
            aggregate = (mechanism.aggregate_many(np.asarray(mechanism.validate_reports(reports)))
                         if reports else mechanism.new_aggregate())
            per_group[g].append(plain_estimate(q, mechanism, aggregate, confidence).to_dict())
    return {"survey": record.id, "version": record.version, "sha256": record.sha256,
            "confidence": confidence, "by": by, "carried": True,
            "n_submissions": record.n_submissions,
            "subgroups": [{"value": label, "n": int(sizes[g]), "questions": per_group[g]}
                          for g, label in enumerate(labels)]}


def carried_covariates(store: Any, record: Any, compiled: Any, names: Sequence[str]
                       ) -> tuple[dict[str, Any], dict[str, Any], dict[str, dict[str, str]]]:
    """For a regression whose covariates include the carried `names`: the survey's questions
    and mechanisms with each carried covariate added as a disclosed categorical question
    (options: the values seen, sorted; no mechanism), and per name submission id -> value."""
    values = {name: submission_values(store, record.id, record.version, name)
              for name in names}
    questions = {q.id: q for q in compiled.survey.questions}
    mechanisms: dict[str, Any] = dict(compiled.mechanisms)
    for name in names:
        questions[name] = carried_question(name, values[name].values())
        mechanisms[name] = None  # a disclosed covariate needs no mechanism
    return questions, mechanisms, values


def carried_columns(store: Any, record: Any, compiled: Any, qids: Sequence[str],
                    questions: dict[str, Any], values: dict[str, dict[str, str]]
                    ) -> tuple[list[np.ndarray], int]:
    """The regression's columns (server/regression.py `fit_columns`) of the submissions that
    hold every question of `qids` and every carried value: a carried covariate as the index
    of its value among the options; and how many submissions were left out."""
    columns: list[list[Any]] = [[] for _ in qids]
    dropped = 0
    for sid, reports in _submissions(store, record.id, record.version):
        row = []
        for qid in qids:
            if qid in values:
                value = values[qid].get(sid)
                row.append(None if value is None else questions[qid].options.index(value))
            else:
                row.append(reports.get(qid))
        if any(v is None for v in row):
            dropped += 1
            continue
        for j, v in enumerate(row):
            columns[j].append(v)
    arrays = []
    for qid, column in zip(qids, columns, strict=True):
        if qid not in values:
            column = compiled.mechanisms[qid].validate_reports(column)
        arrays.append(np.asarray(column))
    return arrays, dropped
