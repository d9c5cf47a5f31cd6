"""The `multiselect` question type (check all that apply): a set of options."""

from __future__ import annotations

from typing import Any

from .base import QuestionType

MEAN_SELECTED = "mean number selected"
SHARES_NOTE = ("each option's estimate is the share of respondents who selected it: shares "
               "need not sum to 1 (their sum is the mean number selected); 'consistent' clips "
               "each share to [0, 1]")


class MultiselectType(QuestionType):
    """Any allowed set of options (shared/mechanisms/set_base.SetShape)."""

    name = "multiselect"
    keys = frozenset({"options", "max_selected", "required_min", "groups"})

    # --- definition and answers (the schema: shared/survey.py) -----------------------------

    def canonical(self, question: Any) -> dict[str, Any]:
        return {"options": list(question.options), **question.multiselect.to_dict()}

    # --- estimates and reports (shared/estimand.py, the report paths) ---------------------

    overlapping = True
    mean_label = MEAN_SELECTED

    def notes(self, question: Any, consistency: str) -> list[str]:
        return [SHARES_NOTE]

    # --- plan and simulate (analyst/plan, analyst/simulate) -------------------------------

    # --- two-server measurement (shared/two_server) ---------------------------------------

    # --- on the device: answering and review words (client/) ------------------------------

    # --- XLSForm import (analyst/xlsform_import) ------------------------------------------
