"""The `binary` question type: a yes/no answer (False, True)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from ..errors import AnalysisError, AnswerError
from .base import (
    BY_CHOICES,
    DeviceWords,
    TerminalWords,
    XLSFormConditions,
    XLSFormKeys,
    XLSFormRow,
    extra_values,
)
from .packed import PackedReports
from .single import SingleAnswerType


class BinaryType(SingleAnswerType):
    """Yes or no: the domain is (False, True)."""

    name = "binary"
    domain_field = "type"

    # --- definition and answers (the schema: shared/survey.py) -----------------------------

    def values(self, question: Any) -> Sequence[Any]:
        return (False, True)

    described = "a yes/no question"
    condition_operand = "bool"

    def disclosed_value(self, question: Any, report: Any) -> Any:
        return bool(report)

    def disclosed_mechanism(self, question: Any) -> Any:
        from ..mechanisms.disclosed import DisclosedBinary

        return DisclosedBinary.from_question(question)

    # --- estimates and reports (shared/estimand.py, the report paths) ---------------------

    headline_option = "yes"

    def value_label(self, question: Any, value: Any) -> str:
        if isinstance(value, bool):  # not NOT_ASKED (skip logic)
            return "yes" if value else "no"
        return str(value)

    def data_value(self, question: Any, report: Any) -> Any:
        return "yes" if report else "no"

    def disclosed_texts(self, question: Any, reports: np.ndarray) -> np.ndarray:
        return np.where(np.asarray(reports).astype(bool), "yes", "no")

    def modelled_level(self, question: Any, level: str | None) -> tuple[int, str]:
        """A yes/no outcome models "yes"."""
        if level not in (None, "yes", "true", "True"):
            raise AnalysisError(f"a yes/no outcome is modelled as 'yes'; level {level!r} is "
                                "not needed")
        return 1, "yes"

    # --- plan and simulate (analyst/plan, analyst/simulate) -------------------------------

    fixed_k = 2
    truth_yes: ClassVar[float] = 0.3
    """The built-in truth: the share answering yes."""

    def default_truth(self, question: Any) -> Any:
        import numpy as np

        from .truth import Truth

        return Truth(np.array([0, 1]), np.array([1 - self.truth_yes, self.truth_yes]))

    def truth_index(self, question: Any, key: Any, where: str) -> int:
        """yes/true or no/false, in any case."""
        from ..errors import SimulationError

        word = str(key).strip().lower()
        if word in ("yes", "true"):
            return 1
        if word in ("no", "false"):
            return 0
        raise SimulationError(f"{where}: unknown answer; a binary question takes yes or no")

    def simulated_answer(self, question: Any, drawn: Any) -> Any:
        return bool(drawn)

    def condition_values(self, question: Any, index: Any) -> Any:
        return index == 1

    # --- two-server measurement (shared/two_server) ---------------------------------------

    two_server_crossable = True

    def two_server_encoding(self, question: Any, measure: Any) -> Any:
        """A Prio3Count of the answer (0/1), or (extra values: special values, "not asked")
        a Histogram over no, yes and the extra values."""
        return measure.histogram(self.k(question)) if extra_values(question) else measure.count()

    def two_server_answer(self, question: Any, value: Any, measure: Any) -> Any:
        extra = self.two_server_extra_cell(question, value)
        if extra is not None:
            return extra
        if not isinstance(value, bool):
            raise AnswerError(f"the answer to {question.id!r} must be true or false")
        return int(value)

    # --- on the device: answering and review words (client/) ------------------------------

    def answer_words(self, question: Any, answer: Any, words: DeviceWords) -> str:
        return words.t("word.yes" if answer else "word.no")

    def value_words(self, question: Any, value: Any, words: DeviceWords,
                    as_report: bool = False) -> str:
        if as_report:
            return words.t("word.yesReport" if value else "word.noReport")
        return words.t("word.yesQuoted" if value else "word.noQuoted")

    def randomized_response_chances(self, question: Any, answer: Any, p: float, q: float,
                                    words: DeviceWords) -> str:
        return words.t("review.binary", answer=self.value_words(question, answer, words),
                       other=self.value_words(question, not answer, words),
                       p=words.percent(p), q=words.percent(q))

    def report_words(self, question: Any, report: Any, words: DeviceWords) -> str | None:
        """binary_rr sends true/false, grr and the designs the index of [false, true]."""
        if isinstance(report, bool | int):
            return self.value_words(question, bool(report), words, as_report=True)
        return None

    def terminal_prompt(self, question: Any, words: TerminalWords) -> tuple[list[str], str]:
        return [], words.yes_no_hint()

    def parse_typed(self, question: Any, typed: str, words: TerminalWords) -> Any:
        said = words.yes_no(typed)
        if said is not None:
            return said
        raise AnswerError("answer yes or no" if words.english
                          else f"{words.t('form.choose')} ({words.yes_no_hint()})")

    # --- XLSForm import (analyst/xlsform_import) ------------------------------------------

    xlsform_types = ("select_one",)

    def xlsform_rank(self, row: XLSFormRow) -> int | None:
        """A select_one of a yes/no list (yes and no, y/n, true/false, 1/0)."""
        return BY_CHOICES if row.yes_no() is not None else None

    def xlsform_misfit(self, row: XLSFormRow) -> tuple[str, str] | None:
        if row.yes_no() is None:
            return ("ldp_type binary needs a yes/no list (two choices named yes and no)",
                    "use categorical, or a yes/no list")
        return None

    def from_xlsform(self, row: XLSFormRow) -> XLSFormKeys:
        """No options: the list's yes is true, its no false (said in the comments)."""
        names = row.yes_no()
        assert names is not None, "a binary question without a yes/no list"
        yes, no = names
        row.comments[:] = [c for c in row.comments if not c.startswith("XLSForm choice names")]
        row.comments.append(f"the yes/no list {row.list_name!r}: {yes!r} is true, {no!r} is "
                            "false")
        return XLSFormKeys(row.no_constraint(), yes=yes, no=no)

    def xlsform_selected(self, target: Any, name: str, conditions: XLSFormConditions) -> Any:
        return conditions.yes_no(target, "==", name)

    def xlsform_compare(self, target: Any, op: str, value: Any,
                        conditions: XLSFormConditions) -> Any:
        name = conditions.name(value)
        if op in ("==", "!="):
            return conditions.yes_no(target, op, name)
        return conditions.refuse(f"{target.id} is yes/no: compare it with = or !=")

    # --- stored report columns (server/store, server/report_columns.py) -------------------

    def packed_reports(self, question: Any, mechanism: Any) -> PackedReports | None:
        """A yes/no report (or its index with a "not asked" value) in one byte."""
        return PackedReports.integers(mechanism, "<i1")
