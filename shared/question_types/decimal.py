"""The `decimal` question type: a number in [min, max], kept on the device to a resolution.

    [questions.income]
    type = "decimal"
    text = "Your household's income last month, in dollars"
    min = 0
    max = 20000
    resolution = 10          # (max - min) / resolution is a whole number: k = that + 1 values
    estimate = ["mean"]      # default; or ["distribution"], or ["mean", "distribution"]
    bins = 20                # distribution only: equal-width bins, or a list of edges
    mechanism = "auto"       # duchi | piecewise | hybrid | geometric | square_wave
    epsilon = 1.0            #   | one_bit_mean (a series: Ding et al.'s 1BitMean, by name)

The grid. The answer is rounded on the device to the nearest of min + j·resolution, j = 0..k-1
(half up), and the mechanism randomizes the index j; min, max and resolution are read exactly
(an int, a decimal string, or a number read by its shortest decimal: 0.1 is 1/10), so the grid
is exact rational arithmetic everywhere (`DecimalSpec`). The signed manifest carries them as
JSON numbers (an int when whole), which is why each has at most 15 significant digits: its
float's shortest decimal is then the number itself.

Mechanisms. `estimate = ["mean"]`: a mean mechanism on the grid, `auto` choosing among duchi,
piecewise, hybrid and geometric by the exact variance of the mean averaged over the grid values
(shared/mechanisms/numeric_auto.py). `["distribution"]`: square_wave (EMS; the distribution over
the bins, median and quartiles with intervals, and an unbiased mean). Both: the answer is sent
twice, ε split in halves between the mean mechanism (`auto` choosing at ε/2) and square_wave
(mechanism "mean_and_distribution", shared/mechanisms/numeric_pair.py; its params name the mean
part and each part's ε). The mechanisms are built on the indices 0..k-1 and wrapped with the
grid's exact scale (shared/mechanisms/numeric_scale.py), so every estimate is in the
question's units.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import ROUND_FLOOR, Decimal, InvalidOperation
from fractions import Fraction
from typing import Any, ClassVar

from ..errors import AnswerError, SurveyError
from . import fields
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
from .words import MEAN, say

MEAN_ESTIMATE, DISTRIBUTION_ESTIMATE = "mean", "distribution"
ESTIMATES = (MEAN_ESTIMATE, DISTRIBUTION_ESTIMATE)
MEAN_MECHANISMS = ("duchi", "piecewise", "hybrid", "geometric")
DISTRIBUTION_MECHANISM = "square_wave"
PAIR_MECHANISM = "mean_and_distribution"
DEFAULT_BINS = 20
MAX_BINS = 200
MAX_DIGITS = 15          # significant digits of min, max and resolution (module docstring)
MAX_MAGNITUDE = Decimal(10) ** 15
_PLAIN_DECIMAL = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)$")
_RANDOMIZATION_KEYS = ("epsilon", "mechanism", "mechanism_choice", "params")
# The resolutions the XLSForm import chooses where the form says none: c·10^j.
_ROUND_STEPS = (1, 2, 5)
_NUMBERS = "numbers without a range"


def exact_decimal(value: Any, where: str) -> Decimal:
    """An exact decimal from an int, a decimal string ("0.1") or a float read by its shortest
    decimal; SurveyError naming `where` for anything else, beyond ±10^15, or with more than
    MAX_DIGITS significant digits."""
    if isinstance(value, bool):
        raise SurveyError(where, "must be a number")
    if isinstance(value, int):
        found = Decimal(value)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise SurveyError(where, "must be a finite number")
        found = Decimal(repr(value))
    elif isinstance(value, str) and _PLAIN_DECIMAL.fullmatch(value.strip()):
        found = Decimal(value.strip())
    else:
        raise SurveyError(where, 'must be a number (an integer, a decimal such as 0.5, or a '
                          'decimal string such as "0.1")')
    if abs(found) > MAX_MAGNITUDE:
        raise SurveyError(where, f"must lie within ±{MAX_MAGNITUDE:.0e}")
    if found != 0 and len(found.normalize().as_tuple().digits) > MAX_DIGITS:
        raise SurveyError(where, f"at most {MAX_DIGITS} significant digits")
    return found + 0  # -0 is 0


def json_number(value: Decimal | Fraction) -> int | float:
    """An exact decimal as the manifest writes it: an int when whole, else the float whose
    shortest decimal it is (MAX_DIGITS guarantees one)."""
    value = Fraction(value)
    if value.denominator == 1:
        return value.numerator
    return float(Decimal(value.numerator) / Decimal(value.denominator))


def decimal_text(value: Decimal | Fraction) -> str:
    """An exact grid value as plain decimal text ("0.1", "20000", "-2.3")."""
    value = Fraction(value)
    text = format((Decimal(value.numerator) / Decimal(value.denominator)).normalize(), "f")
    return "0" if text in ("-0", "0") else text


# The page's words for what a decimal's device sends, and `say`, are in words.py (a leaf:
# the integer's mean mechanisms say the same sentences).


@dataclass(frozen=True)
class DecimalSpec:
    """A decimal question's own keys, parsed exactly (module docstring)."""

    min: Decimal
    max: Decimal
    resolution: Decimal
    estimate: tuple[str, ...] = (MEAN_ESTIMATE,)
    bins: int | tuple[Decimal, ...] | None = None  # None without the distribution

    @property
    def k(self) -> int:
        """How many grid values: (max - min)/resolution + 1."""
        return int((self.max - self.min) / self.resolution) + 1

    def value(self, index: int) -> Decimal:
        """Grid value `index`: min + index·resolution, exact."""
        return self.min + index * self.resolution

    @property
    def scale(self) -> Any:
        from ..mechanisms.numeric_scale import AnswerScale

        return AnswerScale(Fraction(self.min), Fraction(self.resolution), self.k)

    def round_index(self, answer: Any, question_id: str = "") -> int:
        """The grid index of an answer rounded to the resolution, half up (what the device
        sends); AnswerError for a non-number or one outside [min, max]."""
        from ..mechanisms.numeric_scale import exact_number

        exact = exact_number(answer, f"the answer to {question_id!r}" if question_id
                             else "the answer")
        if not Fraction(self.min) <= exact <= Fraction(self.max):
            raise AnswerError(f"{decimal_text(exact)} is outside {decimal_text(self.min)} to "
                              f"{decimal_text(self.max)}" + (f" for {question_id!r}"
                                                             if question_id else ""))
        steps = (exact - Fraction(self.min)) / Fraction(self.resolution)
        return min(math.floor(steps + Fraction(1, 2)), self.k - 1)

    def rounded(self, answer: Any, question_id: str = "") -> Decimal:
        """An answer rounded to the grid (half up), as an exact decimal."""
        return self.value(self.round_index(answer, question_id))

    def bin_edges(self) -> tuple[Fraction, ...]:
        """The bins' edges in the question's units: `bins` equal widths over [min, max], or
        the edges given."""
        if self.bins is None:
            return ()
        if isinstance(self.bins, int):
            low, width = Fraction(self.min), Fraction(self.max - self.min) / self.bins
            return tuple(low + i * width for i in range(self.bins + 1))
        return tuple(Fraction(edge) for edge in self.bins)

    def canonical(self) -> dict[str, Any]:
        found: dict[str, Any] = {"min": json_number(self.min), "max": json_number(self.max),
                                 "resolution": json_number(self.resolution),
                                 "estimate": list(self.estimate)}
        if self.bins is not None:
            found["bins"] = (self.bins if isinstance(self.bins, int)
                             else [json_number(edge) for edge in self.bins])
        return found


class GridValues(Sequence[Any]):
    """A decimal question's grid values, min + j·resolution, as JSON numbers (lazy: a grid may
    hold tens of thousands)."""

    def __init__(self, spec: DecimalSpec) -> None:
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
    keys = frozenset({"min", "max", "resolution", "estimate", "bins"})
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
        return question.spec.canonical()

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
        requested = d.data.get("mechanism", "auto")
        if not isinstance(requested, str):
            raise SurveyError(f"{d.where}.mechanism", "must be a mechanism name")
        given_choice = d.data.get("mechanism_choice")
        if given_choice is not None and (not isinstance(given_choice, str)
                                         or requested == "auto"):
            raise SurveyError(f"{d.where}.mechanism_choice",
                              "is written by auto selection next to a concrete mechanism")
        given = d.data.get("params")
        if given is not None and not isinstance(given, dict):
            raise SurveyError(f"{d.where}.params", "must be a table (an object of parameters)")
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

    def parse_not_asked(self, d: Definition, spec: DecimalSpec, epsilon: float,
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

    def parse_spec(self, data: Mapping[str, Any], where: str) -> DecimalSpec:
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
        estimate = self._estimate(data.get("estimate", [MEAN_ESTIMATE]), f"{where}.estimate")
        spec = DecimalSpec(low, high, resolution, estimate)
        bins = data.get("bins")
        if DISTRIBUTION_ESTIMATE not in estimate:
            if bins is not None:
                raise SurveyError(f"{where}.bins", 'bins are of the distribution: add '
                                  '"distribution" to estimate, or drop bins')
            return spec
        if bins is None:  # the default, capped by the grid: a 6-value grid has 6 bins, not 20
            bins = min(DEFAULT_BINS, spec.k)
        return replace(spec, bins=self._bins(spec, bins, f"{where}.bins"))

    @staticmethod
    def _estimate(value: Any, where: str) -> tuple[str, ...]:
        if not isinstance(value, list) or not value or any(
                not isinstance(v, str) or v not in ESTIMATES for v in value) \
                or len(set(value)) != len(value):
            raise SurveyError(where, 'must be ["mean"], ["distribution"] or '
                              '["mean", "distribution"]')
        return tuple(e for e in ESTIMATES if e in value)

    @staticmethod
    def _bins(spec: DecimalSpec, value: Any, where: str) -> int | tuple[Decimal, ...]:
        if isinstance(value, int) and not isinstance(value, bool):
            if not 2 <= value <= min(MAX_BINS, spec.k):
                raise SurveyError(where, f"must be between 2 and {min(MAX_BINS, spec.k)} "
                                  f"(equal-width bins over min..max)")
            return value
        if not isinstance(value, list) or not 3 <= len(value) <= MAX_BINS + 1:
            raise SurveyError(where, f"must be a number of bins (2 to {MAX_BINS}) or a list of "
                              f"3 to {MAX_BINS + 1} increasing edges")
        edges = tuple(exact_decimal(v, f"{where}[{i}]") for i, v in enumerate(value))
        for i, (a, b) in enumerate(itertools.pairwise(edges)):
            if b <= a:
                raise SurveyError(f"{where}[{i + 1}]", "edges must increase")
        if edges[0] < spec.min or edges[-1] > spec.max:
            raise SurveyError(where, f"edges must lie within min..max ({spec.min} to "
                              f"{spec.max})")
        return edges

    def resolve_mechanism(self, spec: DecimalSpec, epsilon: float, requested: str,
                          params: Mapping[str, Any], where: str
                          ) -> tuple[str, str | None, str | None]:
        """(mechanism, auto's reason or None, the mean mechanism or None) for what `estimate`
        asks (module docstring)."""
        from ..mechanisms.registry import mechanism_class

        estimate = spec.estimate
        if requested != "auto":
            cls = mechanism_class(requested, f"{where}.mechanism")
            if self.name not in cls.question_types:
                raise SurveyError(f"{where}.mechanism", f"{requested!r} does not fit a decimal "
                                  f"question (it fits: {', '.join(sorted(cls.question_types))})")
        if estimate == (DISTRIBUTION_ESTIMATE,):
            if requested not in ("auto", DISTRIBUTION_MECHANISM):
                raise SurveyError(f"{where}.mechanism", f"the distribution is estimated by "
                                  f"{DISTRIBUTION_MECHANISM}, not {requested!r}: write "
                                  f"mechanism = \"auto\" or \"{DISTRIBUTION_MECHANISM}\"")
            self._misfit(DISTRIBUTION_MECHANISM, spec.k, epsilon, where)
            reason = (f"auto: the distribution (median, quartiles, bins) is estimated by "
                      f"{DISTRIBUTION_MECHANISM} with EMS" if requested == "auto" else None)
            return DISTRIBUTION_MECHANISM, reason, None
        if requested == DISTRIBUTION_MECHANISM:
            raise SurveyError(f"{where}.mechanism", f"{DISTRIBUTION_MECHANISM} estimates the "
                              f"distribution: write estimate = [\"distribution\"] (its report "
                              f"has an unbiased mean too), or pick a mean mechanism")
        both = estimate == ESTIMATES
        if requested == PAIR_MECHANISM:
            if not both:
                raise SurveyError(f"{where}.mechanism", f"{PAIR_MECHANISM!r} sends the mean "
                                  f"and the distribution: write estimate = [\"mean\", "
                                  f"\"distribution\"]")
            mean = params.get("mean")
            if mean not in MEAN_MECHANISMS:
                raise SurveyError(f"{where}.params", f"{PAIR_MECHANISM} needs params.mean, one "
                                  f"of {', '.join(MEAN_MECHANISMS)}")
        elif requested != "auto":
            mean = requested
            if both and mean not in MEAN_MECHANISMS:  # one_bit_mean: its memo keys on an end
                raise SurveyError(f"{where}.mechanism", f"{requested!r} sends the mean alone "
                                  f"(a series memoizes its bit per end of the range): write "
                                  f"estimate = [\"mean\"], or name {PAIR_MECHANISM!r} with "
                                  f"params.mean one of {', '.join(MEAN_MECHANISMS)}")
        mean_epsilon = epsilon / 2 if both else epsilon
        reason = None
        if requested == "auto":
            from ..mechanisms.numeric_auto import choose_mean_mechanism

            try:
                chosen = choose_mean_mechanism(spec.k, mean_epsilon)
            except ValueError:
                raise SurveyError(f"{where}.epsilon", f"no mean mechanism can be built for "
                                  f"k={spec.k} at epsilon={mean_epsilon:g}") from None
            mean, reason = chosen.name, chosen.reason
            if both:
                reason = (f"auto: epsilon {epsilon:g} split in halves, the mean by "
                          f"{mean} and the distribution by {DISTRIBUTION_MECHANISM}; "
                          f"the mean's " + chosen.reason.removeprefix("auto: "))
        self._misfit(str(mean), spec.k, mean_epsilon, where)
        if both:
            self._misfit(DISTRIBUTION_MECHANISM, spec.k, epsilon / 2, where)
            return PAIR_MECHANISM, reason, str(mean)
        return str(mean), reason, str(mean)

    @staticmethod
    def _misfit(name: str, k: int, epsilon: float, where: str) -> None:
        from ..mechanisms.registry import mechanism_class

        misfit = mechanism_class(name).misfit(k, epsilon)
        if misfit is not None:
            field = "epsilon" if misfit.field == "epsilon" else "resolution"
            raise SurveyError(f"{where}.{field}", f"{misfit.problem} (mechanism {name!r})")

    def plain_mechanism(self, question: Any) -> Any:
        """The mechanism on the grid's indices, in the question's units (module docstring)."""
        from ..mechanisms.numeric_pair import MeanAndDistribution
        from ..mechanisms.numeric_scale import distribution_on_scale, on_scale
        from ..mechanisms.registry import mechanism_class

        spec: DecimalSpec = question.spec

        def build(name: str, epsilon: float) -> Any:
            cls = mechanism_class(name)
            if name == DISTRIBUTION_MECHANISM:  # its estimate: the bins and the quartiles
                return distribution_on_scale(cls)(epsilon, range(spec.k), scale=spec.scale,
                                                  edges=spec.bin_edges(),
                                                  question_id=question.id)
            return on_scale(cls)(epsilon, range(spec.k), scale=spec.scale,
                                 question_id=question.id)

        if question.mechanism != PAIR_MECHANISM:
            return build(question.mechanism, question.epsilon)
        mean = question.params["mean"]  # parse puts the resolved name there first
        half = question.epsilon / 2
        return MeanAndDistribution(build(str(mean), half), build(DISTRIBUTION_MECHANISM, half),
                                   question_id=question.id)

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
        from ..mechanisms.numeric_auto import mean_variances

        if cls.name == PAIR_MECHANISM:
            found = mean_variances(k, epsilon / 2, worst_case=True)
            return min(found.values()) * ((k - 1) / 2) ** 2 if found else None
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

        spec: DecimalSpec = question.spec
        return on_scale(DisclosedInteger)(range(spec.k), scale=spec.scale,
                                          question_id=question.id)

    # --- estimates and reports (shared/estimand.py, the report paths) ---------------------

    mean_label = MEAN
    chart = DISTRIBUTION

    # --- plan and simulate (analyst/plan, analyst/simulate) -------------------------------

    answer_word = "value"

    def visit(self, question: Any, path: Any) -> Any:
        return path.number(question)

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
        """square_wave, on its own or as the pair's second part (at ε/2), where `estimate` asks
        for the distribution; None for the mean alone, a disclosed or a hidden follow-up
        (asked_grid estimates the mean only)."""
        spec: DecimalSpec = question.spec
        if (DISTRIBUTION_ESTIMATE not in spec.estimate or question.disclosed
                or question.not_asked):
            return None
        mechanism = self.plain_mechanism(question)
        parts = getattr(mechanism, "parts", None)
        return mechanism if parts is None else parts[1]

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
        """The bins' true shares: the grid values in [e_i, e_(i+1)) (the last bin closed)."""
        import numpy as np

        spec: DecimalSpec = question.spec
        edges = spec.bin_edges()
        if not edges:
            return shares
        shares = np.asarray(shares)
        steps = [(edge - Fraction(spec.min)) / Fraction(spec.resolution) for edge in edges]
        first = [max(0, math.ceil(s)) for s in steps]  # the first index at or past each edge
        first[-1] = spec.k if edges[-1] >= Fraction(spec.max) else first[-1]
        return np.array([shares[a:b].sum() for a, b in itertools.pairwise(first)])

    def mean_of_indices(self, question: Any, mean_index: float) -> float | None:
        return float(question.spec.min) + float(question.spec.resolution) * mean_index

    # --- two-server measurement (shared/two_server) ---------------------------------------
    # The number is measured on its grid (shared/two_server/fixed_point.py): the mean as a
    # Prio3Sum of the grid index j, the distribution as a Prio3Histogram of its bin over the
    # designer's bins, both as the two under one key with the central ε split evenly; each
    # server adds its geometric noise as for every key. No local mechanism runs first (its
    # reports are not one bounded measurement).

    two_server_local_mechanisms = ()
    two_server_refused_keys: ClassVar[dict[str, str]] = {
        "local_epsilon": ("a decimal question in a two-server survey runs no local mechanism: "
                          "its number, kept to the resolution, is measured on its grid and each "
                          "server adds its own noise (central_epsilon); drop local_epsilon, or "
                          "ask it in an LDP survey for ε-LDP against colluding servers"),
        "special": ("a two-server survey takes no special values on a decimal question (yet): "
                    "its grid measures a number only; ask it in an LDP survey")}

    def check_two_server_question(self, question: Any, where: str) -> None:
        """The bins must hold every answer: a histogram has no cell for one outside them."""
        if question.not_asked:
            raise SurveyError(f"{where}.relevant", "a decimal question that depends on "
                              "randomized answers is asked in an LDP survey only (asked_grid): "
                              "a two-server survey does not measure its 'not asked' value yet; "
                              "make the condition read disclosed answers only")
        spec: DecimalSpec = question.spec
        edges = spec.bin_edges()
        if edges and (edges[0] != Fraction(spec.min) or edges[-1] != Fraction(spec.max)):
            raise SurveyError(f"{where}.bins", f"a two-server survey measures the bin of every "
                              f"answer: the edges must start at min ({decimal_text(spec.min)}) "
                              f"and end at max ({decimal_text(spec.max)})")

    def two_server_encoding(self, question: Any, measure: Any) -> Any:
        """The grid min + j·resolution, j = 0..k-1: its mean and/or its distribution over the
        bins, as `estimate` asks."""
        spec: DecimalSpec = question.spec
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
        """"Your device will send a number between A and B that depends on your answer" (the
        numbers the reports can stand for, in the question's units); the pair's two parts."""
        parts = getattr(mechanism, "parts", None)
        if parts is not None:
            mean, distribution = (self._part_chances(question, part, words) for part in parts)
            return say(words, "decimal.pair", mean=mean, distribution=distribution)
        return self._part_chances(question, mechanism, words)

    def _part_chances(self, question: Any, mechanism: Any, words: DeviceWords) -> str:
        from ..wording import to_precision

        rate = getattr(mechanism, "rate", None)
        if rate is not None:  # geometric noise on the grid: unbounded, so its chances
            factor = math.exp(float(rate))
            step = (words.t("review.stepSlightly") if factor < 1.0001 else
                    words.t("review.stepTimes", factor=words.number(to_precision(factor, 3))))
            return say(words, "decimal.geometric", p=words.percent(math.tanh(float(rate) / 2)),
                           resolution=words.number(decimal_text(question.spec.resolution)),
                           step=step)
        low, high = mechanism.sent_range()
        return say(words, "decimal.describe", low=words.number(self.stated(question, low)),
                       high=words.number(self.stated(question, high)))

    def stated(self, question: Any, value: Fraction) -> str:
        """A number a report stands for as the words state it: rounded half away from zero to
        the resolution's decimal places ("-2.3", "31640")."""
        places = max(0, -int(question.spec.resolution.normalize().as_tuple().exponent))
        scaled = abs(Fraction(value)) * 10**places
        units = math.floor(scaled + Fraction(1, 2))
        return decimal_text(Fraction(units if value >= 0 else -units, 10**places))

    def report_words(self, question: Any, report: Any, words: DeviceWords) -> str | None:
        """The number a report stands for ("the number 1234.5"); the pair's two; a hidden
        follow-up's asked bit and number ("‘asked’ and the number 120")."""
        if question.not_asked:
            if not isinstance(report, list | tuple) or len(report) != 2:
                return None
            number = self.not_asked_mechanism(question).sent_value(int(report[1]))
            return (f"{'‘asked’' if report[0] == 1 else '‘not asked’'} and the number "
                    f"{words.number(self.stated(question, number))}")
        mechanism = (self.disclosed_mechanism(question) if question.disclosed
                     else self.plain_mechanism(question))
        parts = getattr(mechanism, "parts", None)
        if parts is not None and isinstance(report, list | tuple) and len(report) == 2:
            mean, distribution = (words.number(self.stated(question, part.sent_value(r)))
                                  for part, r in zip(parts, report, strict=True))
            return say(words, "decimal.numbers", mean=mean, distribution=distribution)
        if isinstance(report, bool) or not isinstance(report, int) or parts is not None:
            return None
        return words.t("mech.number", n=words.number(
            self.stated(question, mechanism.sent_value(report))))

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
        spec: DecimalSpec = question.spec
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


def _whole_text(text: str) -> bool:
    """A whole number as written ("5", "-3"; not "5.0")."""
    return bool(re.fullmatch(r"-?\d+", text.strip()))


def _max_options() -> int:
    """The most values a grid may have (the mechanisms' limit)."""
    from ..mechanisms.base import MAX_OPTIONS

    return int(MAX_OPTIONS)
