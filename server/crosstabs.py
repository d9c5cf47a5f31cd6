"""Crosstabs on the server: declared ones kept as one more aggregate key per pair
("crosstab:rows:cols", next to the per-question keys; joint_aggregates.py gives the store what
a batch adds, applied in the same transaction), and ad-hoc ones computed from the stored
reports in one vectorized pass.

The estimator is `shared.crosstab.estimate_crosstab` in both cases, so a declared crosstab and
an ad-hoc one over the same reports give the same numbers.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from ldpsurvey.shared.crosstab import Crosstab, JointAggregate, estimate_crosstab, gram
from ldpsurvey.shared.errors import CrosstabError
from ldpsurvey.shared.joint_features import (
    NUMBER_REPORTS,
    Encoder,
    bins_for_pair,
    encoder_for_question,
    group_encoder,
)
from ldpsurvey.shared.mechanisms import Mechanism
from ldpsurvey.shared.numeric.joint_ems import (
    JointQuantiles,
    joint_counts,
    not_estimated,
    quartiles_refusal,
)
from ldpsurvey.shared.numeric.joint_ems import category_quantiles as joint_quantiles

from .report_columns import report_pages

if TYPE_CHECKING:
    from .store import Store
    from .surveys import CompiledSurvey, SurveyRecord

PREFIX = "crosstab:"


# --- answering a crosstab request --------------------------------------------------------


GROUP_SEPARATOR = ":"  # "question:group name" (question ids never contain ':')


@dataclass(frozen=True)
class Side:
    """One side of a requested crosstab: a question, or one of its declared groups vs the rest
    (written "question:group name")."""

    question: str
    group: str | None = None

    @classmethod
    def parse(cls, text: str) -> Side:
        question, sep, group = text.partition(GROUP_SEPARATOR)
        return cls(question, group if sep else None)


def crosstab(store: Store, survey_id: str, version: int | None, rows_q: str,
             cols_q: str, row_bins: Sequence[int] | None = None,
             col_bins: Sequence[int] | None = None, confidence: float = 0.95,
             source: str = "auto", bins: Sequence[int] | None = None) -> dict[str, Any]:
    """The crosstab document of two sides, each a question id or "question:group": from the
    declared aggregate of the two questions when the survey declares this pair with these bins
    (and `source` allows), else from the stored reports. A group side uses its question's
    features, so a declared crosstab of the question serves its groups too. `bins` applies to
    whichever of the two is an integer question without its own bins; it is refused when
    neither is one."""
    from . import surveys

    if source not in ("auto", "declared", "reports"):
        raise CrosstabError("source must be auto, declared or reports")
    record = surveys.get(store, survey_id, version)
    compiled = surveys.randomized_reports(record)
    sides = Side.parse(rows_q), Side.parse(cols_q)
    for side in sides:
        if side.question not in compiled.mechanisms:
            raise CrosstabError(f"survey {record.id!r} has no question {side.question!r}",
                                {"question": side.question})
    rows_q, cols_q = sides[0].question, sides[1].question
    if rows_q == cols_q:
        raise CrosstabError("a crosstab needs two different questions")
    shared_row, shared_col = bins_for_pair(
        bins, (rows_q, cols_q),
        (_reports_numbers(compiled.mechanisms[rows_q]),
         _reports_numbers(compiled.mechanisms[cols_q])))
    row_bins = shared_row if row_bins is None else row_bins
    col_bins = shared_col if col_bins is None else col_bins
    rows = encoder_for_question(compiled.survey.question(rows_q), compiled.mechanisms[rows_q],
                                row_bins)
    cols = encoder_for_question(compiled.survey.question(cols_q), compiled.mechanisms[cols_q],
                                col_bins)
    for side, encoder in zip(sides, (rows, cols), strict=True):
        if encoder.sets:  # a multiselect side names its option: refused before any counting
            _grouped(compiled, side, encoder)
    key = f"{PREFIX}{rows_q}:{cols_q}"
    declared = compiled.crosstabs.get(key)
    matches = declared is not None and declared[1].cells == rows.cells \
        and declared[2].cells == cols.cells
    if source == "declared" and not matches:
        raise CrosstabError(f"survey {record.id!r} declares no crosstab {rows_q} x {cols_q}"
                            + ("" if declared is None else " with these bins"))
    if matches and source != "reports":
        joint = JointAggregate(rows.width, cols.width)
        for text in store.aggregates(record.id, record.version).texts.get(key, ()):  # shards
            joint.merge(JointAggregate.from_dict(json.loads(text), (rows.width, cols.width)))
        counts, used = joint.counts, "declared"
    else:
        counts = adhoc_counts(store, record.id, record.version, compiled.mechanisms[rows_q], rows,
                              compiled.mechanisms[cols_q], cols)
        used = "reports"
    rows, cols = (_grouped(compiled, side, encoder) for side, encoder in zip(sides, (rows, cols),
                                                                             strict=True))
    result = estimate_crosstab(rows, cols, counts, confidence, source=used)
    result.set_quantiles(category_quantiles(store, record.id, record.version, compiled, sides,
                                            (rows, cols), result, confidence))
    result.notes += group_notes(compiled, sides)
    return document(record, result)


def category_quantiles(store: Store, survey_id: str, version: int, compiled: CompiledSurvey,
                       sides: Sequence[Side], encoders: Sequence[Encoder], result: Crosstab,
                       confidence: float) -> JointQuantiles | None:
    """A number's quartiles among each category of the other side (shared/numeric/joint_ems.py),
    where the number's reports carry a square wave's cell (`window_reports`) and the other is a
    whole question with one report index each; for any other number read by its mean, each
    category says why it has none (`not_estimated`); None without a number side. The joint
    counts N[a, s] are not part of G (the number's features there are its key and key²), so
    they are counted from the stored report pairs in one pass, declared crosstab or not."""
    cells = (result.rows, result.cols)
    for i, encoder in enumerate(encoders):
        if not encoder.mean_only:
            continue
        number, other = sides[i], sides[1 - i]
        windows = compiled.mechanisms[number.question].window_reports()
        by = compiled.mechanisms[other.question]
        reason = quartiles_refusal(
            windows, by, whole_question=other.group is None,
            disclosed=bool(compiled.survey.question(number.question).disclosed))
        if reason is not None:
            return not_estimated(number.question, other.question,
                                 [_label(v) for v in cells[1 - i]], result.n, confidence,
                                 reason)
        assert windows is not None
        channel, _ = by.index_channel()
        shape = (channel.shape[1], windows.mechanism.m)
        counts = np.zeros(shape, dtype=np.int64)
        for (first, second), _ in report_pages(store, survey_id, version,
                                                (other.question, number.question),
                                                (by.report_width,
                                                 compiled.mechanisms[number.question]
                                                 .report_width), PAGE):
            index = np.asarray(first).astype(np.int64).reshape(-1)
            counts += joint_counts(index, windows.keys(second), shape)
        return joint_quantiles(windows, channel, [_label(v) for v in by.labels], counts,
                               question=number.question, by=other.question,
                               confidence=confidence)
    return None


def _label(value: Any) -> Any:
    return value if isinstance(value, str | int | bool) else str(value)


def _reports_numbers(mechanism: Mechanism) -> bool:
    """Whether a side's reports are numbers (a side that `bins` is meant for): an integer
    question's geometric or disclosed reports, which take bins, and a number read by its mean
    ("value"), which refuses them naming the question; a "not asked" one's [bit, number]
    pairs are neither."""
    return mechanism.joint_reports in NUMBER_REPORTS


def _grouped(compiled: CompiledSurvey, side: Side, encoder: Encoder) -> Encoder:
    """The side's encoder: the question's, or its group vs the rest (a multiselect question:
    one of its options vs not selecting it, shared/joint_sets.py)."""
    if encoder.sets:
        from ldpsurvey.shared.joint_sets import option_encoder, whole_question_refused

        if side.group is None:
            raise whole_question_refused(side.question, encoder.cells)
        return option_encoder(encoder, compiled.mechanisms[side.question], side.group)
    if side.group is None:
        return encoder
    groups = compiled.survey.question(side.question).groups
    if side.group not in groups:
        offered = ", ".join(repr(g) for g in groups) or "none"
        raise CrosstabError(f"question {side.question!r} has no group {side.group!r} "
                            f"(its groups: {offered})", {"question": side.question})
    labels = list(encoder.cells)
    return group_encoder(encoder, side.group, [labels.index(o) for o in groups[side.group]])


def group_notes(compiled: CompiledSurvey, sides: Sequence[Side]) -> list[str]:
    """Say which declared groups could be a side, and how to ask for them."""
    notes = []
    for side in sides:
        if side.group is not None:  # the unit says what one of its groups against the rest is
            notes.append(compiled.survey.question(side.question).unit.crosstab_group_note(
                side.question, side.group))
            continue
        groups = compiled.survey.question(side.question).groups
        if groups:
            names = ", ".join(f"'{side.question}:{g}'" for g in groups)
            notes.append(f"{side.question} declares groups; each can be a crosstab side: {names}")
    return notes


def document(record: SurveyRecord, result: Crosstab) -> dict[str, Any]:
    return {"survey": record.id, "version": record.version, "sha256": record.sha256,
            "n_submissions": record.n_submissions, **result.to_dict()}


PAGE = 500_000  # submissions per SQL page: bounds the memory of one ad-hoc pass


def adhoc_counts(store: Store, survey_id: str, version: int, m1: Mechanism,
                 rows: Encoder, m2: Mechanism, cols: Encoder) -> np.ndarray:
    """G over the stored reports of one survey version, in one pass: the database extracts both
    reports of each submission that answered both (`Store.question_reports`), which numpy
    parses in C (no Python object per report; server/report_columns.py)."""
    total = JointAggregate(rows.width, cols.width).counts
    for (first, second), _ in report_pages(store, survey_id, version,
                                            (rows.question_id, cols.question_id),
                                            (m1.report_width, m2.report_width), PAGE):
        total = total + gram(rows, cols, first, second)
    return total


