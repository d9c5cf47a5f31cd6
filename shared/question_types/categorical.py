"""The `categorical` question type: one of several unordered options, with optional groups
(named sets of options a report also estimates)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .packed import PackedReports
from .single import Domain, SingleAnswerType, options_and_groups


class CategoricalType(SingleAnswerType):
    """One option of an unordered list."""

    name = "categorical"
    keys = frozenset({"options", "groups", "filter"})  # filter: shared/option_filter.py

    # --- definition and answers (the schema: shared/survey.py) -----------------------------

    def canonical(self, question: Any) -> dict[str, Any]:
        return {"options": list(question.options),
                "groups": {name: list(members) for name, members in question.groups.items()}}

    described = "a categorical question"
    condition_operand = "text"
    filter_reads = True  # a later question's options may follow it (shared/option_filter.py)
    named_sets_key = "groups"

    def answer_domain(self, data: Mapping[str, Any], where: str) -> Domain:
        return options_and_groups(data, where)

    # --- estimates and reports (shared/estimand.py, the report paths) ---------------------

    def option_texts(self, question: Mapping[str, Any]) -> Sequence[str]:
        return tuple(question.get("options") or ())

    def group_texts(self, question: Mapping[str, Any]) -> Mapping[str, Sequence[str]]:
        return question.get("groups") or {}

    # --- plan and simulate (analyst/plan, analyst/simulate) -------------------------------

    # --- two-server measurement (shared/two_server) ---------------------------------------

    two_server_crossable = True

    # --- on the device: answering and review words (client/) ------------------------------

    # --- XLSForm import (analyst/xlsform_import) ------------------------------------------

    xlsform_types = ("select_one",)  # any select_one no other type takes (ANY_ROW)

    # --- stored report columns (server/store, server/report_columns.py) -------------------

    def packed_reports(self, question: Any, mechanism: Any) -> PackedReports | None:
        """An option's index in four bytes; a unary encoding's bits as one integer."""
        return PackedReports.integers(mechanism, "<i4")
