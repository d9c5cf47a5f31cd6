"""The `binary` question type: a yes/no answer (False, True)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import AnswerError
from .base import NOT_ASKED, QuestionType


class BinaryType(QuestionType):
    """Yes or no: the domain is (False, True)."""

    name = "binary"
    domain_field = "type"

    # --- definition and answers (the schema: shared/survey.py) -----------------------------

    def values(self, question: Any) -> Sequence[Any]:
        return (False, True)

    # --- estimates and reports (shared/estimand.py, the report paths) ---------------------

    # --- plan and simulate (analyst/plan, analyst/simulate) -------------------------------

    # --- two-server measurement (shared/two_server) ---------------------------------------

    two_server_crossable = True

    def two_server_encoding(self, question: Any, measure: Any) -> Any:
        """A Prio3Count of the answer (0/1), or (a "not asked" value) a Histogram over
        no, yes and "not asked"."""
        return measure.histogram(self.k(question)) if question.not_asked else measure.count()

    def two_server_answer(self, question: Any, value: Any, measure: Any) -> Any:
        if question.not_asked and isinstance(value, str) and value == NOT_ASKED:
            return measure.last_cell()
        if not isinstance(value, bool):
            raise AnswerError(f"the answer to {question.id!r} must be true or false")
        return int(value)

    # --- on the device: answering and review words (client/) ------------------------------

    # --- XLSForm import (analyst/xlsform_import) ------------------------------------------
