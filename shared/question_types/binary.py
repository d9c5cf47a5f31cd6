"""The `binary` question type: a yes/no answer (False, True)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .base import QuestionType


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

    # --- on the device: answering and review words (client/) ------------------------------

    # --- XLSForm import (analyst/xlsform_import) ------------------------------------------
