"""The `integer` question type: a whole number in [min, max]."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .base import QuestionType

MEAN = "mean"


class IntegerType(QuestionType):
    """A whole number in a declared range."""

    name = "integer"
    keys = frozenset({"min", "max"})
    domain_field = "min/max"

    # --- definition and answers (the schema: shared/survey.py) -----------------------------

    def values(self, question: Any) -> Sequence[Any]:
        assert question.min is not None and question.max is not None
        return range(question.min, question.max + 1)

    def labels(self, question: Any) -> Sequence[Any]:
        """The range alone: a "not asked" value is the mechanism's, beyond the range
        (shared/mechanisms/asked_geometric.py)."""
        return self.values(question)

    def canonical(self, question: Any) -> dict[str, Any]:
        return {"min": question.min, "max": question.max}

    # --- estimates and reports (shared/estimand.py, the report paths) ---------------------

    mean_label = MEAN

    # --- plan and simulate (analyst/plan, analyst/simulate) -------------------------------

    # --- two-server measurement (shared/two_server) ---------------------------------------

    # --- on the device: answering and review words (client/) ------------------------------

    # --- XLSForm import (analyst/xlsform_import) ------------------------------------------
