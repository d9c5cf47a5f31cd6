"""The `multiselect` question type (check all that apply): a set of options."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ..errors import AnswerError, SurveyError
from .base import (
    DESIGN_CROSSTAB_REFUSAL,
    NOT_ASKED,
    OPTIONS_SUM,
    Definition,
    DeviceWords,
    QuestionType,
    TerminalWords,
    XLSFormConditions,
    XLSFormKeys,
    XLSFormRow,
)
from .words import MEAN_SELECTED, SHARES_NOTE

NONE_WORDS = {"none", "-"}  # typed for no option checked


class MultiselectType(QuestionType):
    """Any allowed set of options (shared/mechanisms/set_base.SetShape)."""

    name = "multiselect"
    keys = frozenset({"options", "max_selected", "required_min", "exclusive", "groups"})

    # --- definition and answers (the schema: shared/survey.py) -----------------------------

    def canonical(self, question: Any) -> dict[str, Any]:
        shape = question.multiselect
        exclusive = {"exclusive": [question.options[j] for j in shape.exclusive]
                     } if shape.exclusive else {}  # absent unless given: older bytes unchanged
        return {"options": list(question.options), **shape.to_dict(), **exclusive}

    described = "a multiselect question"
    condition_operand = "set"  # selected(q, "option"), count_selected(q)
    filter_reads = True  # options ticked: a later question's options may follow any of them
    # "Don't know" / "Prefer not to say" on a check-all-that-apply question is an option that
    # is checked alone: an `exclusive` option, randomized with the sets and estimated as any
    # option's share (docs/survey-definition.md, "Don't know and prefer not to say").
    special_refusal = ("a multiselect question offers don't know / prefer not to say as "
                       "options checked alone: add them to options and list them in exclusive "
                       '(exclusive = ["Don\'t know", "Prefer not to say"])')

    def parse(self, definition: Definition) -> Any:
        """Options, the allowed sets (max_selected, required_min) and a set mechanism
        (shared/multiselect_question.py)."""
        from ..multiselect_question import parse_multiselect_question

        return parse_multiselect_question(definition)

    def choose_mechanism(self, question: Any, size_limit: int, where: str) -> tuple[str, str]:
        from ..mechanisms.set_choice import choose_set_mechanism

        return choose_set_mechanism(question, size_limit, where)

    def not_asked_mechanism(self, question: Any) -> Any:
        """Its set mechanism over the options + "not asked" (shared/multiselect_not_asked)."""
        from ..multiselect_not_asked import not_asked_set_mechanism

        return not_asked_set_mechanism(question)

    # --- estimates and reports (shared/estimand.py, the report paths) ---------------------

    overlapping = True
    mean_label = MEAN_SELECTED

    def notes(self, question: Any, consistency: str) -> list[str]:
        return [SHARES_NOTE]

    design_mean = OPTIONS_SUM

    def mean_row_label(self, question: Any) -> str:
        return MEAN_SELECTED

    def option_texts(self, question: Mapping[str, Any]) -> Sequence[str]:
        return tuple(question.get("options") or ())

    def regression_refusal(self, question: Any) -> str | None:
        """Shares that overlap: no one answer per person."""
        return (f"{question.id!r} is a multiselect question: a respondent may select several "
                "options, so it is neither an outcome nor a covariate of this regression")

    def design_crosstab_refusal(self, question: Any) -> str | None:
        return DESIGN_CROSSTAB_REFUSAL.format(qid=question.id, type=self.name)

    def crosstab_group_note(self, qid: str, group: str) -> str:
        """A side is one option, selected or not (shared/joint_sets.py)."""
        return (f"{qid}:{group}: respondents who selected {group!r}, against those who did not "
                "(they may have selected other options too)")

    # --- plan and simulate (analyst/plan, analyst/simulate) -------------------------------

    truth_size_decay: ClassVar[float] = 0.5
    """The built-in truth: P(s + 1 options selected) = 0.5 · P(s options)."""
    truth_min_acceptance: ClassVar[float] = 0.01
    """A --truth file's independent probabilities must give an allowed set at least this
    often (sets of a size the question does not allow are drawn again)."""

    def visit(self, question: Any, path: Any) -> Any:
        return path.option_set(question)

    def default_truth(self, question: Any) -> Any:
        """How many options a respondent selects falls off by half with each extra option
        (sizes required_min..max_selected), and which ones follows Zipf-like weights, so a few
        options are common and most are rare, as in check-all-that-apply questions."""
        import numpy as np

        from .truth import ZIPF_EXPONENT, SetTruth

        shape = question.multiselect
        weights = 1.0 / np.arange(1, question.k + 1) ** ZIPF_EXPONENT
        sizes = np.zeros(shape.max_selected + 1)
        span = np.arange(shape.required_min, shape.max_selected + 1)
        sizes[span] = self.truth_size_decay ** span
        return SetTruth(weights / weights.sum(), sizes / sizes.sum(), shape.exclusive)

    def parse_truth(self, question: Any, dist: Any, where: str) -> Any:
        """{option: probability of selecting it}: each option selected independently, a set
        of a size the question does not allow drawn again (refused when fewer than 1 in 100
        sets would be allowed)."""
        from collections.abc import Mapping

        import numpy as np

        from ..errors import SimulationError
        from .truth import IndependentSetTruth

        if not isinstance(dist, Mapping) or not dist:
            raise SimulationError(f"{where}: must be an object {{option: probability of "
                                  f"selecting it}} (each option selected independently)")
        probabilities = np.zeros(question.k)
        for key, p in dist.items():
            if key not in question.options:
                raise SimulationError(f"{where}.{key}: unknown option; expected one of: "
                                      f"{', '.join(question.options)}")
            if isinstance(p, bool) or not isinstance(p, int | float) or not 0 <= p <= 1:
                raise SimulationError(f"{where}.{key}: the probability of selecting it must "
                                      f"be a number from 0 to 1")
            probabilities[question.options.index(key)] = float(p)
        shape = question.multiselect
        truth = IndependentSetTruth(probabilities, shape.required_min, shape.max_selected,
                                    shape.exclusive)
        if truth.acceptance() < self.truth_min_acceptance:
            raise SimulationError(f"{where}: with these probabilities fewer than "
                                  f"{self.truth_min_acceptance:.0%} of sets have "
                                  f"{shape.required_min} to {shape.max_selected} options (what "
                                  f"the question allows)")
        return truth

    def simulated_answer(self, question: Any, drawn: Any) -> Any:
        """A row of 0/1 per option, given as the list of the selected options' labels."""
        return [label for label, chosen in zip(question.options, drawn, strict=True) if chosen]

    # --- two-server measurement (shared/two_server) ---------------------------------------

    two_server_refused_keys: ClassVar[dict[str, str]] = {
        "exclusive": "a two-server survey has no exclusive options (yet): the Prio3 "
                     "MultihotCountVec proof checks only that each option is 0 or 1 and at most "
                     "max_selected are set, so it cannot refuse an exclusive option sent with "
                     "others; ask the question in an LDP survey (docs/multiselect.md)"}
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

    def answer_words(self, question: Any, answer: Any, words: DeviceWords) -> str:
        """The options checked, in the order given (the page lists them the same)."""
        if not answer:
            return words.t("multi.none")
        return ", ".join(words.option(question, label) for label in answer)

    def canonical_answer(self, question: Any, mechanism: Any, answer: Any) -> Any:
        """A set in the options' order (its set mechanism's `canonical`)."""
        return mechanism.canonical(answer) if isinstance(answer, list | tuple) else answer

    def terminal_prompt(self, question: Any, words: TerminalWords) -> tuple[list[str], str]:
        """The options listed, then: numbers or options separated by commas ("none" for
        none, where none may be checked; an exclusive option only alone)."""
        listed, _ = super().terminal_prompt(question, words)
        shape = question.multiselect
        most = ("" if shape.largest == question.k - len(shape.exclusive)
                else f", at most {shape.largest}")
        none = "" if shape.required_min else ', or "none"'
        alone = "".join(f"; {question.options[j]!r} only alone" for j in shape.exclusive)
        return listed, f"numbers or options separated by commas{most}{none}{alone}"

    def parse_typed(self, question: Any, typed: str, words: TerminalWords) -> Any:
        """The labels of what was typed; AnswerError for a part that names no option.
        Whether the set is allowed (size, duplicates) is the mechanism's check
        (`SetMechanism.encode`)."""
        if typed in question.options:  # a label that itself holds a comma, or named "none"
            return [typed]
        if typed.lower() in NONE_WORDS:
            return []
        chosen = []
        for part in (p.strip() for p in typed.split(",")):
            if part in question.options:
                chosen.append(part)
            elif part.isdigit() and 1 <= int(part) <= len(question.options):
                chosen.append(question.options[int(part) - 1])
            else:
                raise AnswerError(f"{part!r} is not an option: type numbers "
                                  f"1-{len(question.options)} or options exactly, separated "
                                  "by commas")
        return chosen

    # --- XLSForm import (analyst/xlsform_import) ------------------------------------------

    xlsform_types = ("select_multiple",)

    def from_xlsform(self, row: XLSFormRow) -> XLSFormKeys:
        """The options, and max_selected/required_min from a count-selected constraint and
        required."""
        return XLSFormKeys({"options": list(row.labels.values()), **row.count_bounds()},
                           choices=row.labels)

    def xlsform_optional(self, required: bool) -> bool:
        """Never: nothing checked is an answer (required_min says whether one must be)."""
        return False

    def xlsform_selected(self, target: Any, name: str, conditions: XLSFormConditions) -> Any:
        return conditions.selected(target, name)

    def xlsform_compare(self, target: Any, op: str, value: Any,
                        conditions: XLSFormConditions) -> Any:
        return conditions.refuse(f"${{{target.id}}} is a select_multiple: read it with "
                                 f"selected(${{{target.id}}}, 'choice') or count-selected()")

    def xlsform_count_selected(self, target: Any, op: str, value: Any,
                               conditions: XLSFormConditions) -> Any:
        return conditions.count(target, op, value)

    def xlsform_answered(self, target: Any, op: str, conditions: XLSFormConditions) -> Any:
        """Nothing checked is '' in XLSForm."""
        return conditions.count_answered(target, op)
