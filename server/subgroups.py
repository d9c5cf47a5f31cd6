"""Estimates of every randomized question within each subgroup of a disclosed question.

A disclosed answer is exact, so the subgroup of respondents who gave it is known exactly; within
it, each randomized question's reports are aggregated and estimated by the question's own LDP
estimator (the same `Mechanism.estimate` as the whole-survey estimates). The reports come from
one pass per question over the stored reports (`Store.question_reports`: the grouping answer
and the question's report of every submission that gave both).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
from ldpsurvey.shared.errors import AnalysisError
from ldpsurvey.shared.estimand import plain_estimate
from ldpsurvey.shared.joint_features import encoder_for
from ldpsurvey.shared.mechanisms import Mechanism
from ldpsurvey.shared.mechanisms.base import JointReading

from . import surveys
from .store import Store
from .surveys import randomized_reports

PAGE = 200_000  # submissions per SQL page


def grouping_question(compiled: Any, by: str) -> Any:
    """The disclosed question `by` of a compiled survey; AnalysisError otherwise."""
    if by not in compiled.mechanisms:
        raise AnalysisError(f"survey {compiled.id!r} has no question {by!r}", {"question": by})
    question = compiled.survey.question(by)
    if not question.disclosed:
        raise AnalysisError(f"subgroups are of a disclosed question; {by!r} is randomized (its "
                            "answers are not known one by one)", {"question": by})
    return question


def grouping(question: Any, mechanism: Mechanism, bins: Sequence[int] | None
             ) -> tuple[list[Any], Callable[[Any], int]]:
    """The subgroup labels of a disclosed question and the subgroup of one answer: its option,
    or for an integer question its bin (`bins`: inner edges as in crosstabs; default: one bin
    per value up to 10 values, else four of equal width)."""
    if not question.unit.numeric:
        if bins is not None:
            raise AnalysisError(f"bins apply to integer questions; {question.id!r} is not one",
                                {"question": question.id})
        return list(question.labels), int
    if mechanism.joint_reports == JointReading.VALUE:  # a number on its own grid: bins in its units
        return value_groups(question, mechanism, bins)
    encoder = encoder_for(mechanism, bins)  # the crosstab's bins: the same edges, same labels
    edges = np.asarray(encoder.bins)
    return list(encoder.cells), lambda value: int(np.searchsorted(edges, value, side="right"))


def value_groups(question: Any, mechanism: Mechanism, bins: Sequence[int] | None
                 ) -> tuple[list[Any], Callable[[Any], int]]:
    """The groups of a disclosed number read by its value (a decimal on its grid): bins
    [e_i, e_(i+1)) in the answer's units, the last closed at max, labelled "a to b" as the
    number's own bins are; `bins` are inner edges (default: four of the grid's values about
    equally far apart)."""
    values = np.asarray(mechanism.report_values().answers, dtype=float)
    low, high = float(values.min()), float(values.max())
    if bins is None:
        edges = sorted({float(values[(values.size * i) // 4]) for i in (1, 2, 3)})
    else:
        edges = sorted({float(e) for e in bins if low < e < high})
        if not edges:
            raise AnalysisError(f"bins {','.join(map(str, bins))} do not split {question.id!r}'s "
                                f"range [{low:.15g}, {high:.15g}]: give an edge strictly "
                                "inside it", {"question": question.id})
    bounds = [low, *edges, high]
    labels = [f"{a:.15g} to {b:.15g}" for a, b in itertools.pairwise(bounds)]
    cut = np.asarray(edges)

    def group_of(report: Any) -> int:
        value = float(mechanism.pseudo_values(np.asarray([report]))[0, 0])
        return int(np.searchsorted(cut, value, side="right"))

    return labels, group_of


def paired(store: Store, survey_id: str, version: int, first: str, second: str
           ) -> Iterable[list[Any]]:
    """[answer of `first`, report of `second`] of every submission that holds both."""
    for text, _ in store.question_reports(survey_id, version, (first, second), PAGE):
        yield from json.loads(f"[{text}]")


def group_reports(store: Store, record: Any, by: str, group_of: Callable[[Any], int],
                  mechanism: Mechanism, question_id: str, k: int) -> list[list[Any]]:
    """Per subgroup of `by`, the validated reports of `question_id` in that subgroup."""
    groups: list[list[Any]] = [[] for _ in range(k)]
    for value, report in paired(store, record.id, record.version, by, question_id):
        groups[group_of(value)].append(mechanism.validate_report(report))
    return groups


def subgroups(store: Store, survey_id: str, version: int | None, by: str,
              confidence: float = 0.95, bins: Sequence[int] | None = None) -> dict[str, Any]:
    """The subgroup document: per value of `by`, its exact size and every randomized
    question's estimate among the respondents who gave that value."""
    record = surveys.get(store, survey_id, version)
    compiled = randomized_reports(record)
    if by not in compiled.mechanisms and by in store.invite_carried_names(record.id):
        from .invites.carried_analysis import carried_subgroups  # docs/sensitive-module.md

        return carried_subgroups(store, record, compiled, by, confidence, bins)
    question = grouping_question(compiled, by)
    labels, group_of = grouping(question, compiled.mechanisms[by], bins)
    sizes = np.zeros(len(labels), dtype=np.int64)
    for value, _ in paired(store, record.id, record.version, by, by):
        sizes[group_of(value)] += 1
    per_group: list[list[dict[str, Any]]] = [[] for _ in labels]
    for q in compiled.survey.questions:
        if q.disclosed:
            continue
        mechanism = compiled.mechanisms[q.id]
        reports = group_reports(store, record, by, group_of, mechanism, q.id, len(labels))
        for g, found in enumerate(reports):
            aggregate = (mechanism.aggregate_many(np.asarray(found)) if found
                         else mechanism.new_aggregate())
            per_group[g].append(plain_estimate(q, mechanism, aggregate, confidence).to_dict())
    return {"survey": record.id, "version": record.version, "sha256": record.sha256,
            "confidence": confidence, "by": by, "n_submissions": record.n_submissions,
            "subgroups": [{"value": label, "n": int(sizes[g]), "questions": per_group[g]}
                          for g, label in enumerate(labels)]}
