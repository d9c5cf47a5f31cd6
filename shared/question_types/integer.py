"""The `integer` question type: a whole number in [min, max]."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from ..errors import AnswerError, SurveyError
from . import fields
from .base import (
    DISTRIBUTION,
    DeviceWords,
    TerminalWords,
    XLSFormConditions,
    XLSFormKeys,
    XLSFormRow,
    extra_values,
)
from .single import Domain, SingleAnswerType
from .words import MEAN, say

# The mean mechanisms of numbers (shared/mechanisms/numeric_grid.py: duchi, piecewise, hybrid)
# an integer question takes by name, on its values min..max one unit apart (issue 41: a wide
# range, such as an amount in currency, is served as a decimal grid of resolution 1). `auto`
# does not rank them for an integer, so every survey written before them keeps its mechanism
# and its canonical bytes (docs/decimal.md, "Wide integer ranges").
NAMED_MEAN_MECHANISMS = ("duchi", "piecewise", "hybrid", "one_bit_mean")

# Values of an integer follow-up (skip logic) a two-server survey measures as a Histogram of its
# values and "not asked" (shared/two_server/asked_pair.py).
MAX_TWO_SERVER_INTEGER = 256
OUTSIDE = (" (outside {low} to {high}: that is the random noise, as expected; it is what keeps "
           "your real number private, and the survey's results allow for it)")


class IntegerType(SingleAnswerType):
    """A whole number in a declared range."""

    name = "integer"
    keys = frozenset({"min", "max"})
    domain_field = "min/max"

    # --- definition and answers (the schema: shared/survey.py) -----------------------------

    described = "an integer question"
    condition_operand = "int"
    numeric = True
    auto_criterion = "of the mean"
    # A "not asked" value: an asked bit and a noisy number (shared/mechanisms/asked_geometric).
    auto_not_asked = ("asked_geometric",)
    named_not_asked = ("asked_geometric",)

    def takes_mechanism(self, cls: Any) -> bool:
        """geometric (the types it serves) and, by name only, the mean mechanisms of numbers
        (NAMED_MEAN_MECHANISMS)."""
        return super().takes_mechanism(cls) or cls.name in NAMED_MEAN_MECHANISMS

    def plain_mechanism(self, question: Any) -> Any:
        """A named mean mechanism on the labels min..max, one unit apart (numeric_grid's
        GridMean.from_question: the same channel, certificate and estimates as a decimal grid
        of resolution 1); None for geometric (the registry builds it)."""
        if question.mechanism not in NAMED_MEAN_MECHANISMS:
            return None
        from ..mechanisms.registry import mechanism_class

        return mechanism_class(question.mechanism).from_question(question)

    def answer_domain(self, data: Mapping[str, Any], where: str) -> Domain:
        lo = fields.integer(data, "min", f"{where}.min")
        hi = fields.integer(data, "max", f"{where}.max")
        if lo >= hi:
            raise SurveyError(f"{where}.min", f"min ({lo}) must be < max ({hi})")
        return Domain(min=lo, max=hi)

    def translatable_options(self, question: Any) -> tuple[str, ...]:
        return ()

    def disclosed_value(self, question: Any, report: Any) -> Any:
        return int(report)

    def disclosed_mechanism(self, question: Any) -> Any:
        from ..mechanisms.disclosed import DisclosedInteger

        return DisclosedInteger.from_question(question)

    def not_asked_mechanism(self, question: Any) -> Any:
        """asked_geometric (its own estimates among those asked)."""
        from ..mechanisms.registry import mechanism_class

        return mechanism_class(question.mechanism).from_question(question)

    def choose_not_asked_mechanism(self, question: Any, size_limit: int, where: str
                                   ) -> tuple[str, str]:
        if getattr(question, "special", None):  # special values: a status code, not a bit
            return "asked_geometric", ("auto: a question with special values sends a "
                                       "randomized status code (an answer, a special value"
                                       + (", not asked" if question.not_asked else "")
                                       + ") and a noisy number (asked_geometric)")
        return "asked_geometric", ("auto: a question that depends on randomized answers sends "
                                   "an asked bit and a noisy number (asked_geometric)")

    def local_not_asked(self, question: Any, plain: Mapping[str, Any], where: str,
                        local: float, parse: Any) -> Any:
        """asked_geometric's pair (shared/two_server/asked_pair.py); special values with a
        local ε0 are refused: the pair measures an asked bit, not a status code."""
        if getattr(question, "special", None):
            raise SurveyError(f"{where}.special", "a two-server integer question with a local "
                              "ε0 takes no special values: its report pair measures an asked "
                              "bit and a number, not which special value; drop local_epsilon "
                              "(the servers then count the special values in a Histogram)")
        return question

    def check_two_server_question(self, question: Any, where: str) -> None:
        extras = len(extra_values(question))
        if question.extended and question.k + extras > MAX_TWO_SERVER_INTEGER:
            raise SurveyError(f"{where}.max", f"an integer question with special values or "
                              f"that depends on randomized answers is measured over its values "
                              f"and its {extras} extra value(s) in a two-server survey: at most "
                              f"{MAX_TWO_SERVER_INTEGER - extras} values")

    def asked_mean_variances(self, question: Any, asked: float
                             ) -> tuple[tuple[str, float], tuple[str, float]]:
        """asked_geometric's bound, and geometric's noise with (Δ/2)² among those asked."""
        from ..mechanisms.asked_geometric import AskedGeometric
        from ..mechanisms.geometric import Geometric

        k = question.k
        codes = 1 + len(extra_values(question))
        return ((AskedGeometric.name,
                 AskedGeometric.mean_variance(k, question.epsilon, asked, codes)),
                (Geometric.name,
                 (Geometric.noise_variance(k, question.epsilon) + ((k - 1) / 2) ** 2) / asked))

    def values(self, question: Any) -> Sequence[Any]:
        assert question.min is not None and question.max is not None
        return range(question.min, question.max + 1)

    def k(self, question: Any) -> int:
        """The range's size, computed (a range past sys.maxsize has no len(); its mechanism
        refuses it with a misfit naming min/max)."""
        assert question.min is not None and question.max is not None
        return question.max - question.min + 1

    def labels(self, question: Any) -> Sequence[Any]:
        """The range alone: a "not asked" value is the mechanism's, beyond the range
        (shared/mechanisms/asked_geometric.py)."""
        return self.values(question)

    def canonical(self, question: Any) -> dict[str, Any]:
        return {"min": question.min, "max": question.max}

    # --- estimates and reports (shared/estimand.py, the report paths) ---------------------

    mean_label = MEAN

    chart = DISTRIBUTION

    def data_value(self, question: Any, report: Any) -> Any:
        return int(report)

    def disclosed_texts(self, question: Any, reports: np.ndarray) -> np.ndarray:
        return np.asarray(reports).astype(np.int64).astype(str)

    # --- plan and simulate (analyst/plan, analyst/simulate) -------------------------------

    answer_word = "value"
    truth_decay: ClassVar[float] = 4.0
    """The built-in truth: P[min + i] ∝ exp(-4·i/k), a mean about a quarter of the range."""

    def visit(self, question: Any, path: Any) -> Any:
        return path.number(question)

    def margin_unit(self, question: Any) -> str:
        return "answer units"

    def score_origin(self, question: Any) -> int | None:
        return question.min

    def default_truth(self, question: Any) -> Any:
        import math

        from .truth import TruncatedGeometric

        return TruncatedGeometric(question.k, math.exp(-self.truth_decay / question.k))

    def truth_index(self, question: Any, key: Any, where: str) -> int:
        """A value of the range, as a string ("3")."""
        from ..errors import SimulationError

        assert question.min is not None and question.max is not None
        try:
            value = int(str(key).strip())
        except ValueError:
            raise SimulationError(f"{where}: not an integer value") from None
        if not question.min <= value <= question.max:
            raise SimulationError(f"{where}: {value} is outside [{question.min}, "
                                  f"{question.max}]")
        return value - question.min

    def simulated_answer(self, question: Any, drawn: Any) -> Any:
        assert question.min is not None
        return question.min + int(drawn)

    def condition_values(self, question: Any, index: Any) -> Any:
        assert question.min is not None
        return question.min + index

    # --- two-server measurement (shared/two_server) ---------------------------------------

    two_server_value_rows = "distribution"

    def two_server_encoding(self, question: Any, measure: Any) -> Any:
        """A Prio3Sum of answer - min; with a local ε0 the geometric report clipped and summed;
        with extra values ("not asked", special values) a Histogram over the range's values
        and those values (at most MAX_TWO_SERVER_INTEGER cells in all), or with ε0 and "not
        asked" asked_geometric's [bit, number] pair."""
        assert question.min is not None and question.max is not None
        if question.extended:
            if question.local_epsilon is not None:
                return measure.asked_pair()
            return measure.histogram(self.k(question) + len(extra_values(question)))
        if question.local_epsilon is not None and question.mechanism == "geometric":
            return measure.local_sum()
        return measure.sum(question.min, question.max)

    def check_two_server_local_mechanism(self, mechanism: str, where: str,
                                         not_asked: bool) -> None:
        if not_asked and mechanism == "asked_geometric":
            return  # skip logic: its [bit, number] pair (shared/two_server/asked_pair.py)
        super().check_two_server_local_mechanism(mechanism, where, not_asked)

    def two_server_answer(self, question: Any, value: Any, measure: Any) -> Any:
        assert question.min is not None and question.max is not None
        if question.extended:
            extra = self.two_server_extra_cell(question, value)
            if extra is not None:
                return extra
            if isinstance(value, bool) or not isinstance(value, int) or not (
                    question.min <= value <= question.max):
                raise AnswerError(f"{value!r} is not an answer to {question.id!r}")
            return value - question.min
        if isinstance(value, bool) or not isinstance(value, int):
            raise AnswerError(f"the answer to {question.id!r} must be an integer")
        if not question.min <= value <= question.max:
            raise AnswerError(f"{value} is outside [{question.min}, {question.max}] for "
                              f"{question.id!r}; it is refused, not clamped")
        return value - question.min

    def two_server_labels(self, question: Any) -> tuple[Any, ...]:
        """The range's values, then the special values and "not asked" (a Histogram's last
        cells) where the question has them."""
        return (*self.values(question), *extra_values(question))

    def two_server_asked_functionals(self, question: Any
                                     ) -> list[tuple[str, Any, list[float]]]:
        """The mean among those asked (the values' shares are the distribution over
        everyone)."""
        return [("mean", None, [float(v) for v in self.values(question)])]

    # --- on the device: answering and review words (client/) ------------------------------

    def answer_words(self, question: Any, answer: Any, words: DeviceWords) -> str:
        return str(answer)

    def device_chances(self, question: Any, mechanism: Any, answer: Any,
                       words: DeviceWords) -> str | None:
        """A mean mechanism's words, as a decimal's: "Your device will send a number between
        A and B that depends on your answer" (the numbers its report cells stand for, rounded
        to whole numbers); None for geometric (the client says its chances)."""
        if question.mechanism not in NAMED_MEAN_MECHANISMS:
            return None
        cells = [mechanism.sent_label(y) for y in range(mechanism.index_count)]
        return say(words, "decimal.describe", low=words.number(_whole(min(cells))),
                   high=words.number(_whole(max(cells))))

    def report_words(self, question: Any, report: Any, words: DeviceWords) -> str | None:
        """The number sent (a mean mechanism's: the number its report cell stands for); in
        the command line's English, why one outside the range is as expected (the page says
        it apart)."""
        if isinstance(report, bool) or not isinstance(report, int):
            return None
        if question.mechanism in NAMED_MEAN_MECHANISMS:
            mechanism = self.plain_mechanism(question)
            if not 0 <= report < mechanism.index_count:
                return None
            return words.t("mech.number", n=words.number(_whole(mechanism.sent_label(report))))
        said = words.t("mech.number", n=report)
        if words.english and not question.min <= report <= question.max:
            said += OUTSIDE.format(low=question.min, high=question.max)
        return said

    def terminal_prompt(self, question: Any, words: TerminalWords) -> tuple[list[str], str]:
        return [], (f"a whole number from {question.min} to {question.max}" if words.english
                    else words.t("form.number", min=question.min, max=question.max))

    def parse_typed(self, question: Any, typed: str, words: TerminalWords) -> Any:
        try:
            return int(typed)
        except ValueError:
            raise AnswerError(f"{typed!r} is not a whole number" if words.english
                              else words.t("form.whole")) from None

    # --- XLSForm import (analyst/xlsform_import) ------------------------------------------

    xlsform_types = ("integer", "range")

    def from_xlsform(self, row: XLSFormRow) -> XLSFormKeys:
        """min and max: a range row's start and end, or an integer row's range constraint."""
        low, high = row.integer_range()
        return XLSFormKeys({"min": low, "max": high})

    def xlsform_selected(self, target: Any, name: str, conditions: XLSFormConditions) -> Any:
        return conditions.not_selectable(target)

    def xlsform_compare(self, target: Any, op: str, value: Any,
                        conditions: XLSFormConditions) -> Any:
        return conditions.number(target, op, value)

    def mean_range(self, question: Any) -> int | None:
        return question.max - question.min


def _whole(value: Any) -> str:
    """A number a report stands for, rounded half away from zero to a whole number (the
    words a review and a receipt say it in, as a decimal of resolution 1 states it)."""
    from fractions import Fraction

    units = math.floor(abs(Fraction(value)) + Fraction(1, 2))
    return str(units if value >= 0 else -units)
