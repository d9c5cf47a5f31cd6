"""The `ordinal` question type: one of several options in a meaningful order (scored 1..k
for its mean score)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .base import BY_APPEARANCE, SCORES, XLSFormRow
from .packed import PackedReports
from .single import Domain, SingleAnswerType, options_and_groups
from .words import EM_NOTE, MEAN_SCORE, score_note


class OrdinalType(SingleAnswerType):
    """One option of an ordered list."""

    name = "ordinal"
    keys = frozenset({"options", "groups"})

    # --- definition and answers (the schema: shared/survey.py) -----------------------------

    def canonical(self, question: Any) -> dict[str, Any]:
        return {"options": list(question.options),
                "groups": {name: list(members) for name, members in question.groups.items()}}

    described = "an ordinal question"
    condition_operand = "text"  # an option's label, which a condition also orders:
    ordered = True
    filter_reads = True  # a later question's options may follow it (shared/option_filter.py)
    named_sets_key = "groups"
    # An ordered scale is read for its mean score: `auto` and a plan's margin compare the
    # mean score's worst-case variance (mechanisms without one derived are left out).
    auto_criterion = "of the mean score (1..k)"
    named_not_asked = ("grr", "hr", "ordinal_exp")

    def answer_domain(self, data: Mapping[str, Any], where: str) -> Domain:
        return options_and_groups(data, where)

    def scores(self, question: Any) -> Sequence[float]:
        """Options scored 1..k in order."""
        return tuple(float(s) for s in range(1, len(question.options) + 1))

    def selection_variance(self, cls: Any, k: int, epsilon: float) -> float | None:
        return cls.mean_score_variance(k, epsilon)

    def margin_variance(self, cls: Any, k: int, epsilon: float) -> float | None:
        return cls.mean_score_variance(k, epsilon)

    # --- estimates and reports (shared/estimand.py, the report paths) ---------------------

    mean_label = MEAN_SCORE

    def notes(self, question: Any, consistency: str) -> list[str]:
        notes = [score_note(len(question.options))]
        if consistency == "em":
            notes.append(EM_NOTE)
        return notes

    design_mean = SCORES

    def asked_mean_row_label(self, question: Any, options: Sequence[str]) -> str:
        """The mean score among those asked, with the scores of the options asked."""
        if not options:
            return MEAN_SCORE
        return f"{MEAN_SCORE} ({options[0]} = 1 ... {options[-1]} = {len(options)})"

    def option_texts(self, question: Mapping[str, Any]) -> Sequence[str]:
        return tuple(question.get("options") or ())

    def group_texts(self, question: Mapping[str, Any]) -> Mapping[str, Sequence[str]]:
        return question.get("groups") or {}

    # --- plan and simulate (analyst/plan, analyst/simulate) -------------------------------

    def margin_unit(self, question: Any) -> str:
        """The mean score; among those asked ("not asked"), each option's share."""
        return "proportion" if question.not_asked else "score"

    def shares_planned_as(self) -> str:
        """Its own ranking is on the mean score: its shares rank as a categorical one's."""
        return "categorical"

    def score_origin(self, question: Any) -> int | None:
        return 1  # options scored 1..k in order

    # --- two-server measurement (shared/two_server) ---------------------------------------

    two_server_crossable = True

    def two_server_asked_functionals(self, question: Any
                                     ) -> list[tuple[str, Any, list[float]]]:
        """The options and groups, and the mean score (options scored 1..k) among those
        asked."""
        k = len(question.options)
        return [*super().two_server_asked_functionals(question),
                ("mean", None, [float(s) for s in range(1, k + 1)])]

    # --- on the device: answering and review words (client/) ------------------------------

    # --- XLSForm import (analyst/xlsform_import) ------------------------------------------

    xlsform_types = ("select_one",)

    def xlsform_rank(self, row: XLSFormRow) -> int | None:
        """A select_one with appearance likert."""
        appearance = str(row.cells.get("appearance", "")).split()
        return BY_APPEARANCE if "likert" in appearance else None

    # --- stored report columns (server/store, server/report_columns.py) -------------------

    def packed_reports(self, question: Any, mechanism: Any) -> PackedReports | None:
        """An option's index in four bytes; a unary encoding's bits as one integer."""
        return PackedReports.integers(mechanism, "<i4")
