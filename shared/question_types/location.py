"""The `location` question type: a cell of a grid (shared/location_question.py), with
regions (named sets of cells) a report also estimates."""

from __future__ import annotations

from typing import Any

from .base import QuestionType


class LocationType(QuestionType):
    """A cell of a grid; `options` are its cells ("row,col"), `groups` its regions."""

    name = "location"
    keys = frozenset({"epsilon_geo", "grid", "regions", "background"})

    # --- definition and answers (the schema: shared/survey.py) -----------------------------

    def canonical(self, question: Any) -> dict[str, Any]:
        return {**question.location.to_dict(),
                "regions": {name: list(members) for name, members in question.groups.items()}}

    # --- estimates and reports (shared/estimand.py, the report paths) ---------------------

    # --- plan and simulate (analyst/plan, analyst/simulate) -------------------------------

    # --- two-server measurement (shared/two_server) ---------------------------------------

    # --- on the device: answering and review words (client/) ------------------------------

    # --- XLSForm import (analyst/xlsform_import) ------------------------------------------
