"""The `decimal` question type: a number in [min, max], kept on the device to a resolution.

    [questions.income]
    type = "decimal"
    text = "Your household's income last month, in dollars"
    min = 0
    max = 20000
    resolution = 10          # (max - min) / resolution is a whole number: k = that + 1 values
    estimate = ["mean"]      # default; or ["distribution"], or ["mean", "distribution"]
    bins = 20                # distribution only: equal-width bins, or a list of edges
    typical = [500, 6000]    # optional: most answers lie between these (auto's guess)
    mechanism = "auto"       # duchi | piecewise | hybrid | geometric | square_wave
    epsilon = 1.0            #   | one_bit_mean (a series: Ding et al.'s 1BitMean, by name)

The grid. The answer is rounded on the device to the nearest of min + j·resolution, j = 0..k-1
(half up), and the mechanism randomizes the index j; min, max and resolution are read exactly
(an int, a decimal string, or a number read by its shortest decimal: 0.1 is 1/10), so the grid
is exact rational arithmetic everywhere (`GridSpec`). The signed manifest carries them as
JSON numbers (an int when whole), which is why each has at most 15 significant digits: its
float's shortest decimal is then the number itself.

Mechanisms. `estimate = ["mean"]`: a mean mechanism on the grid, `auto` choosing among duchi,
piecewise, hybrid and geometric by the exact variance of the mean averaged over the grid values
(shared/mechanisms/numeric_auto.py), or, where the designer gives `typical = [a, b]` ("most
answers lie between a and b"), expected under equal weights on the grid values from a to b
(number_grid.py). `["distribution"]`: square_wave (EMS; the distribution over
the bins, median and quartiles with intervals, and an unbiased mean). Both: the answer is sent
twice, ε split in halves between the mean mechanism (`auto` choosing at ε/2) and square_wave
(mechanism "mean_and_distribution", shared/mechanisms/numeric_pair.py; its params name the mean
part and each part's ε). The mechanisms are built on the indices 0..k-1 and wrapped with the
grid's exact scale (shared/mechanisms/numeric_scale.py), so every estimate is in the
question's units.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from decimal import ROUND_FLOOR, Decimal, InvalidOperation
from fractions import Fraction
from typing import Any, ClassVar

from ..errors import AnswerError, SurveyError
from . import fields, number_grid
from .base import (
    ANY_ROW,
    BY_CHOICES,
    DISTRIBUTION,
    Definition,
    DeviceWords,
    QuestionType,
    TerminalWords,
    XLSFormConditions,
    XLSFormKeys,
    XLSFormRange,
    XLSFormRow,
)
from .number_grid import (
    DISTRIBUTION_ESTIMATE,
    DISTRIBUTION_MECHANISM,
    MEAN_ESTIMATE,
    PAIR_MECHANISM,
    PLAIN_DECIMAL,
    GridSpec,
    decimal_text,
    exact_decimal,
    json_number,
)
from .packed import PackedReports
from .words import MEAN

_RANDOMIZATION_KEYS = ("epsilon", "mechanism", "mechanism_choice", "params", "typical")
# The resolutions the XLSForm import chooses where the form says none: c·10^j.
_ROUND_STEPS = (1, 2, 5)
_NUMBERS = "numbers without a range"
NOT_ASKED_TYPICAL = ("guides auto's choice of a mean mechanism by the variance expected over "
                     "it; a question that depends on randomized answers sends asked_grid, "
                     "whose split is chosen for the worst case over answers: drop typical")
_PLAIN_DECIMAL = PLAIN_DECIMAL  # tests/web/decimal_vectors.py reads the typed-number pattern


class GridValues(Sequence[Any]):
    """A decimal question's grid values, min + j·resolution, as JSON numbers (lazy: a grid may
    hold tens of thousands)."""

    def __init__(self, spec: GridSpec) -> None:
        self.spec = spec

    def __len__(self) -> int:
        return self.spec.k

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if not -len(self) <= index < len(self):
            raise IndexError(index)
        return json_number(self.spec.value(index % len(self)))


class DecimalType(QuestionType):
    """A number on a grid min, min + resolution, ..., max (module docstring)."""

    name = "decimal"
    keys = frozenset({"min", "max", "resolution", "estimate", "bins", "typical"})
    domain_field = "resolution"

    # --- definition and answers (the schema: shared/survey.py) -----------------------------

    described = "a decimal question"
    numeric = True
    auto_criterion = "of the mean"
    # A "not asked" value: an asked bit and a grid mean report (shared/mechanisms/asked_grid).
    auto_not_asked = ("asked_grid",)
    named_not_asked = ("asked_grid",)

    def values(self, question: Any) -> Sequence[Any]:
        return GridValues(question.spec)

    def labels(self, question: Any) -> Sequence[Any]:
        return self.values(question)

    def k(self, question: Any) -> int:
        return int(question.spec.k)

    def canonical(self, question: Any) -> dict[str, Any]:
        spec: GridSpec = question.spec
        return {"min": json_number(spec.min), "max": json_number(spec.max),
                "resolution": json_number(spec.resolution), **spec.canonical_estimates()}

    def translatable_options(self, question: Any) -> tuple[str, ...]:
        return ()

    def parse(self, definition: Definition) -> Any:
        d = definition
        spec = self.parse_spec(d.data, d.where)
        optional = fields.optional(d.data, d.where)
        if "instantaneous_epsilon" in d.data:
            raise SurveyError(f"{d.where}.instantaneous_epsilon", "a decimal question has no "
                              "instantaneous layer (it needs a symmetric randomized response)")
        common = {"id": d.id, "text": d.text, "type": self.name, "min": json_number(spec.min),
                  "max": json_number(spec.max), "optional": optional, "spec": spec, **d.skip}
        if d.data.get("disclosed", False) is not False:
            if d.data["disclosed"] is not True:
                raise SurveyError(f"{d.where}.disclosed", "must be true or false")
            for key in _RANDOMIZATION_KEYS:
                if key in d.data:
                    raise SurveyError(f"{d.where}.{key}", "a disclosed question has no "
                                      "mechanism and no ε: its answer is sent as given, not "
                                      "randomized")
            return d.build(epsilon=0.0, mechanism="disclosed", disclosed=True, **common)
        epsilon = fields.epsilon(d.data.get("epsilon"), f"{d.where}.epsilon")
        requested, given_choice, given = fields.mechanism_request(d.data, d.where)
        if d.not_asked:
            return self.parse_not_asked(d, spec, epsilon, requested, given_choice, given,
                                        common)
        name, choice, mean = self.resolve_mechanism(spec, epsilon, requested, given or {},
                                                     d.where)
        question = d.build(epsilon=epsilon, mechanism=name,
                           mechanism_choice=given_choice if choice is None else choice,
                           params={"mean": mean} if name == PAIR_MECHANISM else {}, **common)
        params = self.plain_mechanism(question).params()
        if given is not None and given != {} and given != params:
            raise SurveyError(f"{d.where}.params",
                              f"do not match mechanism {name!r} at epsilon {epsilon!r} for this "
                              f"question: expected {json.dumps(params)}")
        return replace(question, params=params)

    def parse_not_asked(self, d: Definition, spec: GridSpec, epsilon: float,
                        requested: str, given_choice: Any, given: Any,
                        common: Mapping[str, Any]) -> Any:
        """A decimal that depends on randomized answers: asked_grid (an asked bit and a grid
        mean report, shared/mechanisms/asked_grid.py), its mean part and ε split chosen by
        `choose_split` unless params name them (a canonical survey re-read)."""
        from ..mechanisms.asked_grid import MEAN_PARTS, AskedGrid, choose_split

        where = d.where
        if DISTRIBUTION_ESTIMATE in spec.estimate:
            raise SurveyError(f"{where}.estimate", "a decimal that depends on randomized "
                              "answers estimates the mean among those asked (asked_grid): "
                              'write estimate = ["mean"], or ask the number of everyone')
        if spec.typical is not None:
            raise SurveyError(f"{where}.typical", NOT_ASKED_TYPICAL)
        if requested != "auto":
            self.check_not_asked_mechanism(None, requested, where)
        given = given or {}
        mean = given.get("mean")
        if mean is not None and mean not in MEAN_PARTS:
            raise SurveyError(f"{where}.params", f"asked_grid's params.mean must be one of "
                              f"{', '.join(MEAN_PARTS)}")
        try:
            name, share, reason = choose_split(spec.k, epsilon, mean)
        except ValueError as exc:
            raise SurveyError(f"{where}.epsilon", str(exc)) from None
        if "mean_share" in given:
            try:
                share = Fraction(str(given["mean_share"]))
            except (ValueError, ZeroDivisionError):
                raise SurveyError(f"{where}.params", "mean_share must be a fraction such as "
                                  '"1/2"') from None
        question = d.build(epsilon=epsilon, mechanism=AskedGrid.name,
                           mechanism_choice=(reason if requested == "auto"
                                             else given_choice),
                           params={"mean": name, "mean_share": str(share)}, not_asked=True,
                           **common)
        params = self.not_asked_mechanism(question).params()
        if given and given != params:
            raise SurveyError(f"{where}.params",
                              f"do not match mechanism {AskedGrid.name!r} at epsilon "
                              f"{epsilon!r} for this question: expected {json.dumps(params)}")
        return replace(question, params=params)

    def parse_spec(self, data: Mapping[str, Any], where: str) -> GridSpec:
        """min, max, resolution, estimate and bins (module docstring)."""
        from ..mechanisms.base import MAX_OPTIONS

        for key in ("min", "max", "resolution"):
            if key not in data:
                raise SurveyError(f"{where}.{key}", "is required for a decimal question")
        low = exact_decimal(data["min"], f"{where}.min")
        high = exact_decimal(data["max"], f"{where}.max")
        resolution = exact_decimal(data["resolution"], f"{where}.resolution")
        if low >= high:
            raise SurveyError(f"{where}.min", f"min ({low}) must be < max ({high})")
        if resolution <= 0:
            raise SurveyError(f"{where}.resolution", "must be > 0")
        steps = (high - low) / resolution
        if steps != steps.to_integral_value(rounding=ROUND_FLOOR):
            raise SurveyError(f"{where}.resolution", f"(max - min) / resolution must be a whole "
                              f"number: ({high} - {low}) / {resolution} = {steps.normalize()}")
        if int(steps) + 1 > MAX_OPTIONS:
            raise SurveyError(f"{where}.resolution", f"at most {MAX_OPTIONS} values from min to "
                              f"max: ({high} - {low}) / {resolution} + 1 = {int(steps) + 1}; "
                              f"use a coarser resolution")
        return GridSpec(low, high, resolution).with_estimates(data, where)

    def resolve_mechanism(self, spec: GridSpec, epsilon: float, requested: str,
                          params: Mapping[str, Any], where: str
                          ) -> tuple[str, str | None, str | None]:
        """(mechanism, auto's reason or None, the mean mechanism or None) for what `estimate`
        asks (number_grid.resolve_mechanism)."""
        return number_grid.resolve_mechanism(self, spec, epsilon, requested, params, where)

    def plain_mechanism(self, question: Any) -> Any:
        """The mechanism on the grid's indices, in the question's units (module docstring)."""
        return number_grid.grid_mechanism(question.spec, question)

    def candidates(self, k: int, epsilon: float, size_limit: int, low: int = 0,
                   layered: bool = False) -> list[tuple[float, str]]:
        """(variance of the mean with one report averaged over the grid, in grid steps², name)
        of the mean mechanisms that fit, best first (numeric_auto's ranking), then square_wave
        and the pair (the mean at ε/2), so that a plan lists every way to ask the mean."""
        from ..mechanisms.numeric_auto import mean_variances
        from ..mechanisms.registry import mechanism_class

        steps = ((k - 1) / 2) ** 2
        found = sorted((v * steps, name) for name, v in mean_variances(k, epsilon).items())
        for name in (DISTRIBUTION_MECHANISM, PAIR_MECHANISM):
            variance = self.margin_variance(mechanism_class(name), k, epsilon)
            if variance is not None:
                found.append((variance, name))
        return found

    def margin_variance(self, cls: Any, k: int, epsilon: float) -> float | None:
        """The worst case over answers of the mean's one-report variance, in grid steps²
        (times resolution² in the answer's units); the pair's is its mean part's at ε/2."""
        if cls.name == PAIR_MECHANISM:
            return number_grid.pair_margin_variance(k, epsilon)
        if cls.misfit(k, epsilon) is not None:
            return None
        return float(cls.worst_case_variance(k, epsilon))

    def choose_mechanism(self, question: Any, size_limit: int, where: str) -> tuple[str, str]:
        """For a plan's probe (k, ε): numeric_auto's choice of the mean mechanism."""
        from ..mechanisms.numeric_auto import choose_mean_mechanism

        try:
            chosen = choose_mean_mechanism(question.k, question.epsilon)
        except ValueError:
            return super().choose_mechanism(question, size_limit, where)
        return chosen.name, chosen.reason

    def not_asked_mechanism(self, question: Any) -> Any:
        """asked_grid (its own estimates: the share not asked, the mean among those asked)."""
        from ..mechanisms.asked_grid import AskedGrid

        try:
            return AskedGrid.from_question(question)
        except SurveyError as exc:
            raise SurveyError(f"questions.{question.id}.{exc.field}", exc.problem) from None

    def choose_not_asked_mechanism(self, question: Any, size_limit: int, where: str
                                   ) -> tuple[str, str]:
        from ..mechanisms.asked_grid import AskedGrid, choose_split

        return AskedGrid.name, choose_split(question.k, question.epsilon)[2]

    def asked_mean_variances(self, question: Any, asked: float
                             ) -> tuple[tuple[str, float], tuple[str, float]]:
        """asked_grid's worst case at its split (`split_variance`), and the best plain mean
        mechanism's worst case at ε with (Δ/2)² among those asked, in grid steps²."""
        from ..mechanisms.asked_grid import MEAN_PARTS, AskedGrid, choose_split, split_variance
        from ..mechanisms.numeric_auto import mean_variances

        k, epsilon = question.k, question.epsilon
        steps = ((k - 1) / 2) ** 2
        params = getattr(question, "params", None) or {}
        if question.mechanism == AskedGrid.name and "mean_share" in params:
            mean, share = params["mean"], Fraction(params["mean_share"])
        else:
            mean, share, _ = choose_split(k, epsilon)
        variance = split_variance(MEAN_PARTS[mean], k, epsilon, share, asked)
        plain = min((v, name) for name, v in mean_variances(k, epsilon,
                                                            worst_case=True).items())
        return ((AskedGrid.name, (variance or math.inf) * steps),
                (plain[1], (plain[0] * steps + steps) / asked))

    def disclosed_mechanism(self, question: Any) -> Any:
        """The identity channel on the grid's indices (the report is the index)."""
        from ..mechanisms.disclosed import DisclosedInteger
        from ..mechanisms.numeric_scale import on_scale

        spec: GridSpec = question.spec
        return on_scale(DisclosedInteger)(range(spec.k), scale=spec.scale,
                                          question_id=question.id)

    # --- estimates and reports (shared/estimand.py, the report paths) ---------------------

    mean_label = MEAN
    chart = DISTRIBUTION

    # --- plan and simulate (analyst/plan, analyst/simulate) -------------------------------

    answer_word = "value"

    def visit(self, question: Any, path: Any) -> Any:
        return path.number(question)

    def planned_auto(self, question: Any) -> tuple[str, str] | None:
        """On the grid: what auto picks for this question's estimates (and `typical` range,
        where given) at its ε (number_grid.auto_choice), not the probe's mean-only pick."""
        return number_grid.auto_choice(self, getattr(question, "spec", None), question.epsilon)

    def margin_unit(self, question: Any) -> str:
        """A mean's margin in grid steps: one step is the resolution (a plan from (k, ε)
        alone has no resolution; docs/decimal.md)."""
        spec = getattr(question, "spec", None)
        if spec is None:
            return "grid steps"
        return f"grid steps of {decimal_text(spec.resolution)}"

    def score_origin(self, question: Any) -> int | None:
        """Not None: the answers are numbers (their mean is `mean_of_indices`)."""
        return 0

    def default_truth(self, question: Any) -> Any:
        """P[index i] ∝ exp(-4·i/k): skewed toward min, as incomes are."""
        from .truth import TruncatedGeometric

        return TruncatedGeometric(question.k, math.exp(-4.0 / question.k))

    def mean_step(self, question: Any) -> float | None:
        """The resolution: the plan's margin on the mean is in grid steps (`margin_unit`)."""
        return float(question.spec.resolution)

    def distribution_mechanism(self, question: Any) -> Any:
        return number_grid.distribution_part(question.spec, question)

    def truth_index(self, question: Any, key: Any, where: str) -> int:
        """A grid value, as a string ("1230"): rounded to the grid, half up."""
        from ..errors import SimulationError

        try:
            return question.spec.round_index(str(key).strip(), question.id)
        except AnswerError as exc:
            raise SimulationError(f"{where}: {exc.message}") from None

    def simulated_answer(self, question: Any, drawn: Any) -> Any:
        return json_number(question.spec.value(int(drawn)))

    def condition_values(self, question: Any, index: Any) -> Any:
        import numpy as np

        return float(question.spec.min) + float(question.spec.resolution) * np.asarray(index)

    def row_shares(self, question: Any, shares: Any) -> Any:
        return number_grid.row_shares(question.spec, shares)

    def mean_of_indices(self, question: Any, mean_index: float) -> float | None:
        return float(question.spec.min) + float(question.spec.resolution) * mean_index

    # --- two-server measurement (shared/two_server) ---------------------------------------
    # The number is measured on its grid (shared/two_server/fixed_point.py): the mean as a
    # Prio3Sum of the grid index j, the distribution as a Prio3Histogram of its bin over the
    # designer's bins, both as the two under one key with the central ε split evenly; each
    # server adds its geometric noise as for every key. No local mechanism runs first (its
    # reports are not one bounded measurement).

    two_server_local_mechanisms = ()
    two_server_cross_refusal = (
        "a two-server crosstab of a decimal (its mean per category) is not built: no Prio3 "
        "circuit here proves each category's sum of grid indices belongs to that category's "
        "cell (a SumVec per category would let one upload add up to the range to every "
        "category); an LDP survey's crosstab gives it (docs/two-server.md, Not yet)")
    two_server_refused_keys: ClassVar[dict[str, str]] = {
        "local_epsilon": ("a decimal question in a two-server survey runs no local mechanism: "
                          "its number, kept to the resolution, is measured on its grid and each "
                          "server adds its own noise (central_epsilon); drop local_epsilon, or "
                          "ask it in an LDP survey for ε-LDP against colluding servers"),
        "typical": ("a decimal question in a two-server survey runs no local mechanism, so "
                    "auto has no mean mechanism to choose with the typical range: drop "
                    "typical"),
        "special": ("a two-server survey takes no special values on a decimal question (yet): "
                    "its grid measures a number only; ask it in an LDP survey")}

    def check_two_server_question(self, question: Any, where: str) -> None:
        """The bins must hold every answer: a histogram has no cell for one outside them."""
        if question.not_asked:
            raise SurveyError(f"{where}.relevant", "a decimal question that depends on "
                              "randomized answers is asked in an LDP survey only (asked_grid): "
                              "a two-server survey does not measure its 'not asked' value yet; "
                              "make the condition read disclosed answers only")
        spec: GridSpec = question.spec
        edges = spec.bin_edges()
        if edges and (edges[0] != Fraction(spec.min) or edges[-1] != Fraction(spec.max)):
            raise SurveyError(f"{where}.bins", f"a two-server survey measures the bin of every "
                              f"answer: the edges must start at min ({decimal_text(spec.min)}) "
                              f"and end at max ({decimal_text(spec.max)})")

    def two_server_encoding(self, question: Any, measure: Any) -> Any:
        """The grid min + j·resolution, j = 0..k-1: its mean and/or its distribution over the
        bins, as `estimate` asks."""
        spec: GridSpec = question.spec
        return measure.fixed_point(Fraction(spec.min), Fraction(spec.resolution), spec.k,
                                   spec.bin_edges(), MEAN_ESTIMATE in spec.estimate)

    def two_server_answer(self, question: Any, value: Any, measure: Any) -> Any:
        """The answer's grid index, rounded half up as on the device (AnswerError outside
        min..max or for a non-number: refused, never clamped); "not asked", where the question
        has that value, the encoding's last cell."""
        from .base import NOT_ASKED

        if question.not_asked and isinstance(value, str) and value == NOT_ASKED:
            return measure.grid_not_asked()
        return measure.on_grid(question.spec.round_index(value, question.id))

    # --- on the device: answering and review words (client/) ------------------------------

    def answer_words(self, question: Any, answer: Any, words: DeviceWords) -> str:
        return decimal_text(question.spec.rounded(answer, question.id))

    def device_chances(self, question: Any, mechanism: Any, answer: Any,
                       words: DeviceWords) -> str | None:
        """"Your device will send a number between A and B that depends on your answer"
        (number_grid.chances)."""
        return number_grid.chances(question.spec, mechanism, words)

    def report_words(self, question: Any, report: Any, words: DeviceWords) -> str | None:
        """The number a report stands for ("the number 1234.5"); the pair's two; a hidden
        follow-up's asked bit and number ("‘asked’ and the number 120")."""
        if question.not_asked:
            if not isinstance(report, list | tuple) or len(report) != 2:
                return None
            number = self.not_asked_mechanism(question).sent_value(int(report[1]))
            return (f"{'‘asked’' if report[0] == 1 else '‘not asked’'} and the number "
                    f"{words.number(number_grid.stated(question.spec, number))}")
        mechanism = (self.disclosed_mechanism(question) if question.disclosed
                     else self.plain_mechanism(question))
        return number_grid.report_words(question.spec, mechanism, report, words)

    def canonical_answer(self, question: Any, mechanism: Any, answer: Any) -> Any:
        """The answer rounded to the resolution, as the JSON number the device keeps ("not
        asked" as it is)."""
        return self.device_answer(question, answer)

    def device_answer(self, question: Any, answer: Any) -> Any:
        """Rounded to the resolution, half up (refused outside min..max): the grid value the
        mechanism randomizes; "not asked" (a hidden follow-up that did not apply) as it is."""
        from .base import NOT_ASKED

        if question.not_asked and isinstance(answer, str) and answer == NOT_ASKED:
            return answer
        return json_number(question.spec.rounded(answer, question.id))

    def terminal_prompt(self, question: Any, words: TerminalWords) -> tuple[list[str], str]:
        spec: GridSpec = question.spec
        return [], (f"a number from {decimal_text(spec.min)} to {decimal_text(spec.max)} "
                    f"(kept to the nearest {decimal_text(spec.resolution)})")

    def parse_typed(self, question: Any, typed: str, words: TerminalWords) -> Any:
        """A typed number (a decimal point, no thousands separators), rounded to the
        resolution; AnswerError for anything else or outside min..max."""
        text = typed.strip()
        if not _PLAIN_DECIMAL.fullmatch(text):
            raise AnswerError(f"{typed!r} is not a number (write it like 1234.5)")
        try:
            return json_number(question.spec.rounded(Decimal(text), question.id))
        except InvalidOperation:
            raise AnswerError(f"{typed!r} is not a number") from None

    # --- XLSForm import (analyst/xlsform_import) ------------------------------------------

    xlsform_types = ("decimal", "range")

    def xlsform_rank(self, row: XLSFormRow) -> int | None:
        """Every decimal row; a range row whose start, end or step is not a whole number
        (one that is stays an integer, as before decimals)."""
        written = row.range_parameters()
        if not written:
            return ANY_ROW
        return None if all(_whole_text(v) for v in written.values()) else BY_CHOICES

    def from_xlsform(self, row: XLSFormRow) -> XLSFormKeys:
        """min, max and resolution: a range row's start, end and step, or a decimal row's
        two-sided range constraint with a resolution chosen (`xlsform_resolution`) and said
        in a comment above the question."""
        found = row.number_range()
        resolution = found.step
        if resolution is None:
            resolution = self.xlsform_resolution(found)
            if resolution is None:
                row.refuse(f"its range {found.low} to {found.high} has no resolution of 1, 2 "
                           f"or 5 times a power of ten that divides it into at most "
                           f"{_max_options():,} values",
                           "a range whose width is a round number (e.g. . >= 0 and . <= "
                           "20000), or a range row with its step", _NUMBERS)
            row.comments.append(
                f"resolution {decimal_text(resolution)}: chosen by the import (the form says "
                f"none): the finest 1, 2 or 5 times a power of ten, no finer than the "
                f"{found.places} decimal(s) its constraint writes, that divides max - min into "
                f"at most {_max_options():,} values; the answer is rounded to it on the "
                f"device: change it to what the answer needs")
        keys = {"min": json_number(found.low), "max": json_number(found.high),
                "resolution": json_number(resolution)}
        try:
            self.parse_spec(keys, "the question")
        except SurveyError as exc:
            row.refuse(f"its range {found.low} to {found.high} in steps of "
                       f"{decimal_text(resolution)}: {exc.problem}",
                       "a step that divides the range into at most "
                       f"{_max_options():,} values", _NUMBERS)
        return XLSFormKeys(keys)

    @staticmethod
    def xlsform_resolution(found: XLSFormRange) -> Decimal | None:
        """The resolution of a decimal whose form says none: the finest c·10^j (c = 1, 2, 5;
        10^j no finer than the decimals the constraint writes, 10^-places) that divides
        max - min into at most MAX_OPTIONS values; None when none does (an odd width such as
        1234567: no round step divides it but 1, which leaves too many values)."""
        width = found.high - found.low
        power = Decimal(1).scaleb(-found.places)
        while power <= width:
            for c in _ROUND_STEPS:
                step = c * power
                steps = width / step
                if steps == steps.to_integral_value() and int(steps) + 1 <= _max_options():
                    return step
            power *= 10
        return None

    def xlsform_selected(self, target: Any, name: str, conditions: XLSFormConditions) -> Any:
        return conditions.not_selectable(target)

    def xlsform_compare(self, target: Any, op: str, value: Any,
                        conditions: XLSFormConditions) -> Any:
        """Refused: conditions cannot read a decimal's answer yet (docs/decimal.md)."""
        return conditions.refuse(f"a condition cannot read the decimal {target.id}'s answer "
                                 "yet (only whether it was answered)")

    # --- stored report columns (server/store, server/report_columns.py) -------------------

    def packed_reports(self, question: Any, mechanism: Any) -> PackedReports | None:
        """None: a decimal's reports stay in the JSON text (its mechanisms may report
        decimals)."""
        return None


def _whole_text(text: str) -> bool:
    """A whole number as written ("5", "-3"; not "5.0")."""
    return bool(re.fullmatch(r"-?\d+", text.strip()))


def _max_options() -> int:
    """The most values a grid may have (the mechanisms' limit)."""
    from ..mechanisms.base import MAX_OPTIONS

    return int(MAX_OPTIONS)
