"""What submissions add to a survey version's declared crosstabs: one joint aggregate per pair,
kept under the key "crosstab:rows:cols" next to the per-question aggregates.

`joint_deltas` gives the store what one batch adds, applied in the transaction that stores
the batch (surveys.CompiledSurvey.deltas); `PairCollector` rebuilds each joint aggregate from
the stored reports (`recompute`, aggregation.py). It needs only a version's declared pairs and
required questions (`DeclaredCrosstabs`, which surveys.CompiledSurvey is), so the compiled
survey can use it without this module depending on surveys.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np
from ldpsurvey.shared.crosstab import JointAggregate, gram, gram_features
from ldpsurvey.shared.joint_encoder import Encoder
from ldpsurvey.shared.survey import CrosstabSpec


class DeclaredCrosstabs(Protocol):
    """A survey version's declared crosstabs by aggregate key (spec, row and column encoders)
    and the questions answered in every submission."""

    @property
    def crosstabs(self) -> Mapping[str, tuple[CrosstabSpec, Encoder, Encoder]]: ...

    @property
    def required(self) -> frozenset[str]: ...


def _spec(compiled: DeclaredCrosstabs, key: str) -> tuple[Encoder, Encoder]:
    _, rows, cols = compiled.crosstabs[key]
    return rows, cols


class Batch:
    """The submissions of one storing transaction, with each question's report features
    computed once for every declared crosstab that uses them."""

    def __init__(self, reports: Sequence[Mapping[str, Any]],
                 required: frozenset[str] = frozenset()) -> None:
        self.reports = reports
        self.required = required  # answered in every submission: no need to look
        self._features: dict[tuple[str, tuple[Any, ...]], tuple[np.ndarray, np.ndarray]] = {}

    def features(self, encoder: Encoder) -> tuple[np.ndarray, np.ndarray]:
        """(which submissions answered the question, the features of those answers)."""
        key = (encoder.question_id, encoder.cells)
        found = self._features.get(key)
        if found is None:
            qid = encoder.question_id
            if qid in self.required:
                present = np.ones(len(self.reports), dtype=bool)
                given = [answers[qid] for answers in self.reports]
            else:
                present = np.fromiter((qid in answers for answers in self.reports),
                                      dtype=bool, count=len(self.reports))
                given = [answers[qid] for answers in self.reports if qid in answers]
            found = self._features[key] = (present, encoder.featurize(given))
        return found


def joint_deltas(compiled: DeclaredCrosstabs, reports: Sequence[Mapping[str, Any]]
                 ) -> dict[str, JointAggregate]:
    """key -> what these submissions add to each declared crosstab (absent: nobody answered
    both). The store merges them into the stored rows in the transaction storing the reports."""
    if not compiled.crosstabs:
        return {}
    batch = Batch(reports, compiled.required)  # each question's features computed once
    found: dict[str, JointAggregate] = {}
    for key in compiled.crosstabs:
        rows, cols = _spec(compiled, key)
        present1, features1 = batch.features(rows)
        present2, features2 = batch.features(cols)
        both = present1 & present2
        if both.any():
            delta = JointAggregate(rows.width, cols.width)
            delta.add_gram(gram_features(rows, cols, features1[both[present1]],
                                         features2[both[present2]]))
            found[key] = delta
    return found


class PairCollector:
    """The (row, column) reports of every declared crosstab, one submission at a time (for
    `recompute`), then each joint aggregate rebuilt from them."""

    def __init__(self, compiled: DeclaredCrosstabs) -> None:
        self.compiled = compiled
        self.pairs = {key: ([], []) for key in compiled.crosstabs}

    def add(self, answers: Mapping[str, Any]) -> None:
        if not self.pairs:
            return
        for key, (first, second) in self.pairs.items():
            spec = self.compiled.crosstabs[key][0]
            if spec.rows in answers and spec.cols in answers:
                first.append(answers[spec.rows])
                second.append(answers[spec.cols])

    def aggregates(self) -> dict[str, JointAggregate]:
        out = {}
        for key, (first, second) in self.pairs.items():
            rows, cols = _spec(self.compiled, key)
            aggregate = JointAggregate(rows.width, cols.width)
            if first:
                aggregate.add_gram(gram(rows, cols, first, second))
            out[key] = aggregate
        return out
