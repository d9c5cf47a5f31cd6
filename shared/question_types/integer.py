"""The `integer` question type: a whole number in [min, max].

By default an integer's answer gets geometric noise over its range (`auto`) and its mean is
reported. A wide range (an amount in currency, an age in days) takes the number grid's
estimates and mechanisms as a decimal of resolution 1 does (shared/question_types/
number_grid.py; docs/decimal.md, "Wide integer ranges"):

    estimate = ["mean"]      # or ["distribution"] (median, quartiles, bins), or both
    bins = 20                # with the distribution
    typical = [20, 60]       # optional, with estimate and the mean: most answers lie here
    mechanism = "auto"       # duchi | piecewise | hybrid | geometric | square_wave

`auto` then ranks duchi, piecewise, hybrid and geometric (or takes square_wave, or the pair at
halves of ε) exactly as for a decimal, with the designer's `typical` range where given. The
keys are absent unless given, so a survey written without them keeps its mechanism (geometric)
and its canonical bytes; duchi, piecewise and hybrid may also be named without them.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np

from ..errors import AnswerError, SurveyError
from . import fields, number_grid
from .base import (
    DISTRIBUTION,
    Definition,
    DeviceWords,
    TerminalWords,
    XLSFormConditions,
    XLSFormKeys,
    XLSFormRow,
    extra_values,
)
from .number_grid import DISTRIBUTION_ESTIMATE, PAIR_MECHANISM, GridSpec
from .single import Domain, SingleAnswerType
from .words import MEAN

# The number grid's mechanisms (number_grid.py) an integer takes, on its values min..max one
# unit apart: by name, or by `auto` where the survey gives `estimate` or `bins`. Without those
# keys `auto` ranks geometric only, so every survey written before them keeps its mechanism
# and its canonical bytes (docs/decimal.md, "Wide integer ranges"). Geometric on its own stays
# the registry's, on the labels min..max (its report is the answer plus noise).
# one_bit_mean (a series: 1BitMean) by name only, never as the pair's part.
GRID_MECHANISMS = ("duchi", "piecewise", "hybrid", "one_bit_mean", "square_wave", PAIR_MECHANISM)
GRID_KEYS = ("estimate", "bins")

# Values of an integer follow-up (skip logic) a two-server survey measures as a Histogram of its
# values and "not asked" (shared/two_server/asked_pair.py).
MAX_TWO_SERVER_INTEGER = 256
OUTSIDE = (" (outside {low} to {high}: that is the random noise, as expected; it is what keeps "
           "your real number private, and the survey's results allow for it)")


def whole_answer(question: Any, answer: Any) -> int:
    """An integer question's answer as an int: a whole number given as an integer (a JSON
    integer, 3; a library's numpy integer too), never 3.0 or "3", on every path that takes a
    true answer (the device, the two-server upload), as the HTTP API reads a disclosed one
    (an integer report) and the page sends one; AnswerError naming `questions.<id>`
    otherwise. One form, so that the same answer is one answer (a series memoizes, and the
    ledger charges, per answer)."""
    if isinstance(answer, bool) or not isinstance(answer, numbers.Integral):
        raise AnswerError(f"questions.{question.id}: {answer!r} is not a whole number: the "
                          f"answer to an integer question is a JSON integer (3, not 3.0 or "
                          f'"3")')
    return int(answer)


class IntegerType(SingleAnswerType):
    """A whole number in a declared range."""

    name = "integer"
    keys = frozenset({"min", "max", *GRID_KEYS, "typical"})
    domain_field = "min/max"

    # --- definition and answers (the schema: shared/survey.py) -----------------------------

    described = "an integer question"
    condition_operand = "int"
    numeric = True
    carriable = True  # a count from the main survey's export (carried = true)
    auto_criterion = "of the mean"
    # A "not asked" value: an asked bit and a noisy number (shared/mechanisms/asked_geometric).
    auto_not_asked = ("asked_geometric",)
    named_not_asked = ("asked_geometric",)

    def parse(self, definition: Definition) -> Any:
        """As every single-answer type, unless the survey gives `estimate` or `bins` or names
        a number grid mechanism: then the grid's (number_grid.py), with `spec` holding the
        keys given (written back by `canonical`)."""
        d = definition
        given = any(key in d.data for key in GRID_KEYS)
        if "typical" in d.data and not given:
            raise SurveyError(f"{d.where}.typical", "guides auto's choice among the number "
                              "grid's mean mechanisms, which an integer takes with "
                              'estimate = ["mean"]: add it, or drop typical')
        if not given and d.data.get("mechanism") not in GRID_MECHANISMS:
            return super().parse(d)
        if d.data.get("disclosed", False) is not False or d.extended:
            question = super().parse(d)
            spec = self.grid_spec(d.data, d.where) if given else None
            if spec is not None and spec.typical is not None:
                raise SurveyError(f"{d.where}.typical", "guides auto's choice of a mean "
                                  "mechanism on the grid; " + (
                                      "a disclosed question sends its answer as given"
                                      if question.disclosed else "this question sends "
                                      "asked_geometric (special values or skip logic)")
                                  + ": drop typical")
            if spec is not None and not question.disclosed \
                    and DISTRIBUTION_ESTIMATE in spec.estimate:
                raise SurveyError(f"{d.where}.estimate", "an integer question with special "
                                  "values or one that depends on randomized answers estimates "
                                  "its mean (asked_geometric): write estimate = [\"mean\"], or "
                                  "ask the number of everyone without special values")
            return replace(question, spec=spec)
        return self._parse_on_grid(d, given)

    def grid_spec(self, data: Mapping[str, Any], where: str) -> GridSpec:
        """min..max one unit apart, with `estimate` and `bins` (at most MAX_OPTIONS values:
        the grid mechanisms' limit)."""
        from decimal import Decimal

        from ..mechanisms.base import MAX_OPTIONS

        domain = self.answer_domain(data, where)
        assert domain.min is not None and domain.max is not None
        if domain.max - domain.min + 1 > MAX_OPTIONS:
            raise SurveyError(f"{where}.{self.domain_field}", f"at most {MAX_OPTIONS} values from "
                              f"min to max "
                              f"with estimate, bins or a number grid mechanism: "
                              f"{domain.max} - {domain.min} + 1 = {domain.max - domain.min + 1}"
                              f"; ask a decimal with a coarser resolution")
        return GridSpec(Decimal(domain.min), Decimal(domain.max), Decimal(1)).with_estimates(
            data, where)

    def _parse_on_grid(self, d: Definition, given: bool) -> Any:
        """A randomized integer asked on the number grid (number_grid.resolve_mechanism)."""
        import json

        from ..mechanisms.registry import mechanism_for

        where = d.where
        if "instantaneous_epsilon" in d.data:
            raise SurveyError(f"{where}.instantaneous_epsilon", "an integer asked with estimate, "
                              "bins or a number grid mechanism has no instantaneous layer (it "
                              "needs a symmetric randomized response)")
        spec = self.grid_spec(d.data, where)
        epsilon = fields.epsilon(d.data.get("epsilon"), f"{where}.epsilon")
        requested, given_choice, params = fields.mechanism_request(d.data, where)
        name, choice, mean = number_grid.resolve_mechanism(self, spec, epsilon, requested,
                                                           params or {}, where)
        question = d.build(id=d.id, text=d.text, type=self.name, epsilon=epsilon,
                           mechanism=name, min=int(spec.min), max=int(spec.max),
                           optional=fields.optional(d.data, where),
                           mechanism_choice=given_choice if choice is None else choice,
                           params={"mean": mean} if name == PAIR_MECHANISM else {},
                           spec=spec if given else None, **d.skip)
        expected = mechanism_for(question).params()
        if params is not None and params != {} and params != expected:
            raise SurveyError(f"{where}.params",
                              f"do not match mechanism {name!r} at epsilon {epsilon!r} for this "
                              f"question: expected {json.dumps(expected)}")
        return replace(question, params=expected)

    def grid(self, question: Any) -> GridSpec:
        """The question's number grid: its `spec`, or min..max for the mean (a mean mechanism
        named without `estimate`)."""
        if question.spec is not None:
            return question.spec
        from decimal import Decimal

        return GridSpec(Decimal(question.min), Decimal(question.max), Decimal(1))

    def plain_mechanism(self, question: Any) -> Any:
        """A number grid mechanism on the indices of min..max with the scale min + j
        (number_grid.grid_mechanism: the channel, certificate and estimates of a decimal of
        resolution 1); None for geometric (the registry builds it on the labels)."""
        if question.mechanism not in GRID_MECHANISMS:
            return None
        return number_grid.grid_mechanism(self.grid(question), question)

    def margin_variance(self, cls: Any, k: int, epsilon: float) -> float | None:
        """The pair's is its mean part's at ε/2 (number_grid); the others' worst case."""
        if cls.name == PAIR_MECHANISM:
            return number_grid.pair_margin_variance(k, epsilon)
        return super().margin_variance(cls, k, epsilon)

    def distribution_mechanism(self, question: Any) -> Any:
        return number_grid.distribution_part(question.spec, question)

    def row_shares(self, question: Any, shares: Any) -> Any:
        return number_grid.row_shares(question.spec, shares)

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
        """min and max; `estimate` and `bins` only where the survey gave them."""
        found = {"min": question.min, "max": question.max}
        spec = getattr(question, "spec", None)
        return found if spec is None else {**found, **spec.canonical_estimates()}

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

    def planned_auto(self, question: Any) -> tuple[str, str] | None:
        """On the grid: what auto picks for this question's estimates (and `typical` range,
        where given) at its ε (number_grid.auto_choice), not the probe's mean-only pick."""
        return number_grid.auto_choice(self, getattr(question, "spec", None), question.epsilon)

    def margin_unit(self, question: Any) -> str:
        return "answer units"

    def score_origin(self, question: Any) -> int | None:
        return question.min

    def default_truth(self, question: Any) -> Any:

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
    two_server_refused_keys: ClassVar[dict[str, str]] = {**dict.fromkeys(GRID_KEYS, (
        "a two-server survey measures an integer's mean as a Prio3 Sum: estimate and bins "
        "(the number grid's mechanisms) are LDP only; drop them, or ask a decimal "
        "(its two-server mode measures the distribution too)")), "typical": (
        "a two-server survey measures an integer's mean as a Prio3 Sum, with no mechanism "
        "for auto to choose with the typical range: drop typical")}

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
            value = whole_answer(question, value)
            if not question.min <= value <= question.max:
                raise AnswerError(f"{value!r} is not an answer to {question.id!r}")
            return value - question.min
        value = whole_answer(question, value)
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
        """A number grid mechanism's words, as a decimal's: "Your device will send a number
        between A and B that depends on your answer" (the numbers its reports stand for,
        rounded to whole numbers), the pair's two parts; None for geometric (the client says
        its chances)."""
        if question.mechanism not in GRID_MECHANISMS:
            return None
        return number_grid.chances(self.grid(question), mechanism, words)

    def report_words(self, question: Any, report: Any, words: DeviceWords) -> str | None:
        """The number sent (a mean mechanism's: the number its report cell stands for); in
        the command line's English, why one outside the range is as expected (the page says
        it apart)."""
        if question.mechanism in GRID_MECHANISMS and not question.not_asked:
            return number_grid.report_words(self.grid(question), self.plain_mechanism(question),
                                            report, words)
        if isinstance(report, bool) or not isinstance(report, int):
            return None
        said = words.t("mech.number", n=report)
        if words.english and not question.min <= report <= question.max:
            said += OUTSIDE.format(low=question.min, high=question.max)
        return said

    def terminal_prompt(self, question: Any, words: TerminalWords) -> tuple[list[str], str]:
        return [], (f"a whole number from {question.min} to {question.max}" if words.english
                    else words.t("form.number", min=question.min, max=question.max))

    def device_answer(self, question: Any, answer: Any) -> Any:
        """A whole number as given, a special value or "not asked" as it is; AnswerError
        naming `questions.<id>` for anything else (`whole_answer`)."""
        if isinstance(answer, str) and answer in extra_values(question):
            return answer
        return whole_answer(question, answer)

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

