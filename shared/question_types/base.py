"""The interface of a question-type unit: what every path may ask of a question's type.

One instance per type (`shared/question_types/__init__.py` registers them); every method takes
the parsed question (`shared/survey.Question`) it is asked about, so a unit holds no state.
Properties every unit handles the same way are arguments, not parallel types: a question may be
`disclosed` (sent as given, no mechanism) or have a "not asked" value (skip logic that reads a
randomized answer, the last of its `labels`).

Each path's part of the interface sits in its own section below, in the base class and in each
unit, so that the paths' needs stay readable side by side (Django's model `Field` does the
same for the database, forms and serialization).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

NOT_ASKED = "(not asked)"  # the domain value of a question that did not apply (skip logic)


class QuestionType:
    """One question type. Subclasses set the class attributes and override what differs."""

    name: ClassVar[str]
    """The `type` a survey definition names."""
    keys: ClassVar[frozenset[str]] = frozenset()
    """Definition keys this type takes beyond the common ones (id, text, epsilon, ...)."""
    domain_field: ClassVar[str] = "options"
    """The definition field a misfit of the answer domain names (`questions.<id>.<field>`)."""

    # --- definition and answers (the schema: shared/survey.py) -----------------------------
    # What a respondent may answer, and the canonical form that is signed.

    def values(self, question: Any) -> Sequence[Any]:
        """The answer values in domain order, without "not asked"."""
        return question.options

    def labels(self, question: Any) -> Sequence[Any]:
        """The values estimates name, in domain order: `values`, then NOT_ASKED where the
        question has a "not asked" value."""
        values = self.values(question)
        return (*values, NOT_ASKED) if question.not_asked else values

    def k(self, question: Any) -> int:
        """The size of the answer domain ("not asked" included)."""
        return len(self.labels(question))

    def canonical(self, question: Any) -> dict[str, Any]:
        """This type's keys of the canonical dict (shared/survey.Question.to_dict)."""
        return {}

    # --- estimates and reports (shared/estimand.py, the report paths) ---------------------
    # What the estimates mean, and the rows and notes every report shows.

    overlapping: ClassVar[bool] = False
    """The options' shares are shares of respondents that overlap (a set answer), not a
    distribution that sums to 1."""
    mean_label: ClassVar[str | None] = None
    """The extra row a report shows after the option rows (None: no extra row)."""

    def notes(self, question: Any, consistency: str) -> list[str]:
        """The type's notes every report shows for `question` (`consistency`: how its
        'consistent' column is made, shared/estimand.py)."""
        return []

    # --- plan and simulate (analyst/plan, analyst/simulate) -------------------------------

    # --- two-server measurement (shared/two_server) ---------------------------------------

    # --- on the device: answering and review words (client/) ------------------------------

    # --- XLSForm import (analyst/xlsform_import) ------------------------------------------
