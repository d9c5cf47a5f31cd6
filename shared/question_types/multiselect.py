"""The `multiselect` question type (check all that apply): a set of options."""

from __future__ import annotations

from typing import Any

from ..errors import SurveyError
from .base import NOT_ASKED, QuestionType

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

    two_server_local_mechanisms = ("option_rr", "set_ue", "psfo_grr")

    def check_two_server_local_mechanism(self, mechanism: str, where: str,
                                         not_asked: bool) -> None:
        if mechanism not in self.two_server_local_mechanisms:
            raise SurveyError(f"{where}.mechanism", f"{mechanism!r} cannot run before a "
                              f"two-server upload: its report is not one vector of counts; use "
                              f"one of {', '.join(self.two_server_local_mechanisms)}")

    @staticmethod
    def two_server_not_asked_delta(shape: Any) -> int:
        """Δ of the answer's bits with a "not asked" entry: max(min(2m, k), m + 1) for `shape`
        the question's own (two answers differ in `max_difference` options; "not asked"
        against a set of s <= m options in s + 1 entries, and a set of m options is an
        answer)."""
        return max(shape.max_difference(), shape.max_selected + 1)

    def two_server_encoding(self, question: Any, measure: Any) -> Any:
        """No local ε0: the answer's k bits as Prio3MultihotCountVec(k, max weight m), Δ the
        most options two allowed sets differ in; psfo_grr's index among k + m - required_min
        values as a Histogram; option_rr's or set_ue's k bits, any number set, as
        MultihotCountVec(k, k). A "not asked" value is one more entry (pseudo-option) of the
        measured vector (shared/two_server/multiselect.py)."""
        shape = question.multiselect
        measured = shape.k + 1 if question.not_asked else shape.k
        if question.local_epsilon is None:
            delta = (self.two_server_not_asked_delta(shape) if question.not_asked
                     else shape.max_difference())
            return measure.multihot(measured, shape.max_selected, delta)
        if question.mechanism == "psfo_grr":
            return measure.histogram(measured + shape.max_selected - shape.required_min)
        return measure.multihot(measured, measured, measured)

    def two_server_answer(self, question: Any, value: Any, measure: Any) -> Any:
        """The answer's k bits, and a last "not asked" bit for a question that has that value
        (AnswerError for a set the question does not allow)."""
        k = question.multiselect.k
        if question.not_asked and isinstance(value, str) and value == NOT_ASKED:
            return [0] * k + [1]
        return measure.set_bits(value) + ([0] if question.not_asked else [])

    # --- on the device: answering and review words (client/) ------------------------------

    # --- XLSForm import (analyst/xlsform_import) ------------------------------------------
