"""What the number types share: an answer grid min, min + step, ..., max, the estimates a
designer asks of it (`estimate`, `bins`), the mechanism `auto` picks for them, the mechanism
built on the grid, and the words a device says of what it sends (issue 41).

Two units use it: `decimal` (shared/question_types/decimal.py: any exact resolution) and
`integer` (shared/question_types/integer.py: a grid of resolution 1 over min..max, when the
survey gives `estimate` or `bins`, or names a mean mechanism). Nothing here names a type: each
unit passes its `GridSpec`, and its own name where a message needs it.

    estimate = ["mean"]      # default; or ["distribution"], or ["mean", "distribution"]
    bins = 20                # distribution only: equal-width bins, or a list of edges
    typical = [a, b]         # optional, with the mean: "most answers lie between a and b"

Mechanisms. `["mean"]`: duchi, piecewise, hybrid or geometric, `auto` choosing the lowest exact
variance of the mean averaged over the grid (shared/mechanisms/numeric_auto.py), or, with the
designer's `typical` range, the lowest variance expected under a uniform prior over the grid
values from a to b (numeric_auto's `prior`): duchi where answers sit near an end of the range
(a skewed income), piecewise where they sit in the middle. `typical` changes only that choice
(written in `mechanism_choice`); it is written in the manifest where given, so a survey without
it keeps its bytes.
`["distribution"]`: square_wave (EMS: the bins, median and quartiles with intervals, and an
unbiased mean). Both: the answer sent twice, ε split in halves between the mean mechanism and
square_wave ("mean_and_distribution", shared/mechanisms/numeric_pair.py). Every mechanism is
built on the grid's indices 0..k-1 and wrapped with the grid's exact scale
(shared/mechanisms/numeric_scale.py), so every estimate is in the question's units.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from decimal import Decimal
from fractions import Fraction
from typing import Any

from ..errors import AnswerError, SurveyError
from .base import DeviceWords
from .words import say

MEAN_ESTIMATE, DISTRIBUTION_ESTIMATE = "mean", "distribution"
ESTIMATES = (MEAN_ESTIMATE, DISTRIBUTION_ESTIMATE)
MEAN_MECHANISMS = ("duchi", "piecewise", "hybrid", "geometric")
DISTRIBUTION_MECHANISM = "square_wave"
PAIR_MECHANISM = "mean_and_distribution"
DEFAULT_BINS = 20
MAX_BINS = 200
MAX_DIGITS = 15          # significant digits of min, max and resolution (decimal.py)
MAX_MAGNITUDE = Decimal(10) ** 15
PLAIN_DECIMAL = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)$")


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
    elif isinstance(value, str) and PLAIN_DECIMAL.fullmatch(value.strip()):
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


@dataclass(frozen=True)
class GridSpec:
    """A number question's grid and what is estimated of it, parsed exactly."""

    min: Decimal
    max: Decimal
    resolution: Decimal
    estimate: tuple[str, ...] = (MEAN_ESTIMATE,)
    bins: int | tuple[Decimal, ...] | None = None  # None without the distribution
    typical: tuple[Decimal, Decimal] | None = None  # the designer's guess: most answers here

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

    def canonical_estimates(self) -> dict[str, Any]:
        """`estimate`, `bins` with the distribution, and `typical` where given, as the
        manifest writes them."""
        found: dict[str, Any] = {"estimate": list(self.estimate)}
        if self.bins is not None:
            found["bins"] = (self.bins if isinstance(self.bins, int)
                             else [json_number(edge) for edge in self.bins])
        if self.typical is not None:
            found["typical"] = [json_number(end) for end in self.typical]
        return found

    def typical_indices(self) -> range:
        """The grid indices whose values lie in the `typical` range (every index without
        it)."""
        if self.typical is None:
            return range(self.k)
        low, high = (Fraction(end - self.min) / Fraction(self.resolution)
                     for end in self.typical)
        return range(math.ceil(low), math.floor(high) + 1)

    def typical_prior(self) -> Any:
        """`auto`'s prior over the grid from the designer's `typical` range: equal weights on
        the grid values from a to b, none elsewhere (numeric_auto's `prior`); None without
        it (auto then averages over every grid value)."""
        import numpy as np

        if self.typical is None:
            return None
        prior = np.zeros(self.k)
        inside = self.typical_indices()
        prior[inside.start:inside.stop] = 1.0 / len(inside)
        return prior

    def typical_words(self) -> str:
        """How auto's reason names the prior: "the designer's typical range 10000 to 60000,
        its 251 grid values equally likely"."""
        assert self.typical is not None
        a, b = (decimal_text(end) for end in self.typical)
        count = len(self.typical_indices())
        return (f"the designer's typical range {a} to {b}, its {count} grid value"
                f"{'s' if count != 1 else ''} equally likely")

    def with_estimates(self, data: Mapping[str, Any], where: str) -> GridSpec:
        """This grid with `estimate` and `bins` read from `data` (module docstring): bins only
        with the distribution, 20 by default (one per value on a shorter grid)."""
        estimate = _estimate(data.get("estimate", [MEAN_ESTIMATE]), f"{where}.estimate")
        spec = replace(self, estimate=estimate, bins=None)
        if "typical" in data:
            spec = replace(spec, typical=_typical(spec, data["typical"], f"{where}.typical"))
        bins = data.get("bins")
        if DISTRIBUTION_ESTIMATE not in estimate:
            if bins is not None:
                raise SurveyError(f"{where}.bins", 'bins are of the distribution: add '
                                  '"distribution" to estimate, or drop bins')
            return spec
        if bins is None:  # the default, capped by the grid: a 6-value grid has 6 bins, not 20
            bins = min(DEFAULT_BINS, spec.k)
        return replace(spec, bins=_bins(spec, bins, f"{where}.bins"))


def _estimate(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or any(
            not isinstance(v, str) or v not in ESTIMATES for v in value) \
            or len(set(value)) != len(value):
        raise SurveyError(where, 'must be ["mean"], ["distribution"] or '
                          '["mean", "distribution"]')
    return tuple(e for e in ESTIMATES if e in value)


def _typical(spec: GridSpec, value: Any, where: str) -> tuple[Decimal, Decimal]:
    """[a, b]: min <= a < b <= max, with at least one grid value between them, on a question
    that estimates the mean (`auto` ranks the mean mechanisms with it)."""
    if MEAN_ESTIMATE not in spec.estimate:
        raise SurveyError(where, "is the designer's guess that guides auto's choice of the "
                          'mean mechanism: add "mean" to estimate, or drop typical')
    if not isinstance(value, list) or len(value) != 2:
        raise SurveyError(where, 'must be two numbers [a, b]: "most answers lie between a '
                          'and b", in the answer\'s units')
    low, high = (exact_decimal(v, f"{where}[{i}]") for i, v in enumerate(value))
    if low >= high:
        raise SurveyError(where, f"a ({decimal_text(low)}) must be < b ({decimal_text(high)})")
    if low < spec.min or high > spec.max:
        raise SurveyError(where, f"must lie within min..max ({decimal_text(spec.min)} to "
                          f"{decimal_text(spec.max)})")
    found = replace(spec, typical=(low, high))
    if not found.typical_indices():
        raise SurveyError(where, f"holds no grid value (min + j·{decimal_text(spec.resolution)}"
                          f"): widen it")
    return low, high


def _bins(spec: GridSpec, value: Any, where: str) -> int | tuple[Decimal, ...]:
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


# --- the mechanism ------------------------------------------------------------------------


def resolve_mechanism(unit: Any, spec: GridSpec, epsilon: float, requested: str,
                      params: Mapping[str, Any], where: str
                      ) -> tuple[str, str | None, str | None]:
    """(mechanism, auto's reason or None, the mean mechanism or None) for what `estimate`
    asks (module docstring); `unit` is the question's type unit (which mechanisms it takes,
    its name and the field a grid misfit names in a message)."""
    from ..mechanisms.registry import mechanism_class

    estimate = spec.estimate
    if requested != "auto":
        cls = mechanism_class(requested, f"{where}.mechanism")
        if not unit.takes_mechanism(cls):
            raise SurveyError(f"{where}.mechanism", f"{requested!r} does not fit {unit.described} "
                              f"(it fits: {', '.join(sorted(cls.question_types))})")
    if estimate == (DISTRIBUTION_ESTIMATE,):
        if requested not in ("auto", DISTRIBUTION_MECHANISM):
            raise SurveyError(f"{where}.mechanism", f"the distribution is estimated by "
                              f"{DISTRIBUTION_MECHANISM}, not {requested!r}: write "
                              f"mechanism = \"auto\" or \"{DISTRIBUTION_MECHANISM}\"")
        check_fits(unit, DISTRIBUTION_MECHANISM, spec.k, epsilon, where)
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

        prior = spec.typical_prior()
        try:
            chosen = choose_mean_mechanism(spec.k, mean_epsilon, prior,
                                           prior_words=None if prior is None
                                           else spec.typical_words())
        except ValueError:
            raise SurveyError(f"{where}.epsilon", f"no mean mechanism can be built for "
                              f"k={spec.k} at epsilon={mean_epsilon:g}") from None
        mean, reason = chosen.name, chosen.reason
        if both:
            reason = (f"auto: epsilon {epsilon:g} split in halves, the mean by "
                      f"{mean} and the distribution by {DISTRIBUTION_MECHANISM}; "
                      f"the mean's " + chosen.reason.removeprefix("auto: "))
    check_fits(unit, str(mean), spec.k, mean_epsilon, where)
    if both:
        check_fits(unit, DISTRIBUTION_MECHANISM, spec.k, epsilon / 2, where)
        return PAIR_MECHANISM, reason, str(mean)
    return str(mean), reason, str(mean)


def auto_choice(unit: Any, spec: GridSpec | None, epsilon: float) -> tuple[str, str] | None:
    """(mechanism, reason) `auto` picks for a question on this grid at ε, exactly as the
    survey resolves `mechanism = "auto"` (`resolve_mechanism`): the mean mechanism of least
    variance averaged over the grid, or expected under the designer's `typical` range; the
    mean at ε/2 beside square_wave when the distribution is asked too; square_wave alone for
    the distribution. A plan marks it among its rows. None off a grid (no `spec`) or where no
    mechanism fits (the survey refuses such a question anyway)."""
    if spec is None:
        return None
    try:
        name, reason, _ = resolve_mechanism(unit, spec, epsilon, "auto", {}, "plan")
    except SurveyError:
        return None
    assert reason is not None  # auto always says why
    return name, reason


def check_fits(unit: Any, name: str, k: int, epsilon: float, where: str) -> None:
    """SurveyError naming ε or the unit's grid field where mechanism `name` cannot be built."""
    from ..mechanisms.registry import mechanism_class

    misfit = mechanism_class(name).misfit(k, epsilon)
    if misfit is not None:
        field = "epsilon" if misfit.field == "epsilon" else unit.domain_field
        raise SurveyError(f"{where}.{field}", f"{misfit.problem} (mechanism {name!r})")


def grid_mechanism(spec: GridSpec, question: Any) -> Any:
    """The question's mechanism on the grid's indices, in the question's units: a mean
    mechanism or square_wave (with the bins), or the pair of the two at halves of ε."""
    from ..mechanisms.numeric_pair import MeanAndDistribution
    from ..mechanisms.numeric_scale import distribution_on_scale, on_scale
    from ..mechanisms.registry import mechanism_class

    def build(name: str, epsilon: float) -> Any:
        cls = mechanism_class(name)
        if name == DISTRIBUTION_MECHANISM:  # its estimate: the bins and the quartiles
            return distribution_on_scale(cls)(epsilon, range(spec.k), scale=spec.scale,
                                              edges=spec.bin_edges(), question_id=question.id)
        return on_scale(cls)(epsilon, range(spec.k), scale=spec.scale, question_id=question.id)

    if question.mechanism != PAIR_MECHANISM:
        return build(question.mechanism, question.epsilon)
    mean = question.params["mean"]  # parse puts the resolved name there first
    half = question.epsilon / 2
    return MeanAndDistribution(build(str(mean), half), build(DISTRIBUTION_MECHANISM, half),
                               question_id=question.id)


def distribution_part(spec: GridSpec | None, question: Any) -> Any:
    """square_wave, on its own or as the pair's second part (at ε/2), where `estimate` asks
    for the distribution; None for the mean alone, a disclosed question or a hidden follow-up
    (it estimates the mean among those asked)."""
    if (spec is None or DISTRIBUTION_ESTIMATE not in spec.estimate or question.disclosed
            or question.not_asked):
        return None
    mechanism = grid_mechanism(spec, question)
    parts = getattr(mechanism, "parts", None)
    return mechanism if parts is None else parts[1]


def pair_margin_variance(k: int, epsilon: float) -> float | None:
    """The pair's worst case of the mean's one-report variance, in grid steps²: its best
    mean part's at ε/2."""
    from ..mechanisms.numeric_auto import mean_variances

    found = mean_variances(k, epsilon / 2, worst_case=True)
    return min(found.values()) * ((k - 1) / 2) ** 2 if found else None


def row_shares(spec: GridSpec | None, shares: Any) -> Any:
    """The bins' true shares: the grid values in [e_i, e_(i+1)) (the last bin closed); the
    values' own shares without bins."""
    import numpy as np

    edges = () if spec is None else spec.bin_edges()
    if spec is None or not edges:
        return shares
    shares = np.asarray(shares)
    steps = [(edge - Fraction(spec.min)) / Fraction(spec.resolution) for edge in edges]
    first = [max(0, math.ceil(s)) for s in steps]  # the first index at or past each edge
    first[-1] = spec.k if edges[-1] >= Fraction(spec.max) else first[-1]
    return np.array([shares[a:b].sum() for a, b in itertools.pairwise(first)])


# --- on the device: what is sent, in words ------------------------------------------------


def stated(spec: GridSpec, value: Fraction) -> str:
    """A number a report stands for as the words state it: rounded half away from zero to
    the resolution's decimal places ("-2.3", "31640")."""
    places = max(0, -int(spec.resolution.normalize().as_tuple().exponent))
    scaled = abs(Fraction(value)) * 10**places
    units = math.floor(scaled + Fraction(1, 2))
    return decimal_text(Fraction(units if value >= 0 else -units, 10**places))


def chances(spec: GridSpec, mechanism: Any, words: DeviceWords) -> str:
    """"Your device will send a number between A and B that depends on your answer" (the
    numbers the reports can stand for, in the question's units); the pair's two parts."""
    parts = getattr(mechanism, "parts", None)
    if parts is not None:
        mean, distribution = (_part_chances(spec, part, words) for part in parts)
        return say(words, "decimal.pair", mean=mean, distribution=distribution)
    return _part_chances(spec, mechanism, words)


def _part_chances(spec: GridSpec, mechanism: Any, words: DeviceWords) -> str:
    from ..wording import to_precision

    rate = getattr(mechanism, "rate", None)
    if rate is not None:  # geometric noise on the grid: unbounded, so its chances
        factor = math.exp(float(rate))
        step = (words.t("review.stepSlightly") if factor < 1.0001 else
                words.t("review.stepTimes", factor=words.number(to_precision(factor, 3))))
        return say(words, "decimal.geometric", p=words.percent(math.tanh(float(rate) / 2)),
                   resolution=words.number(decimal_text(spec.resolution)), step=step)
    low, high = mechanism.sent_range()
    return say(words, "decimal.describe", low=words.number(stated(spec, low)),
               high=words.number(stated(spec, high)))


def report_words(spec: GridSpec, mechanism: Any, report: Any, words: DeviceWords
                 ) -> str | None:
    """The number a report stands for ("the number 1234.5"); the pair's two."""
    parts = getattr(mechanism, "parts", None)
    if parts is not None and isinstance(report, list | tuple) and len(report) == 2:
        mean, distribution = (words.number(stated(spec, part.sent_value(r)))
                              for part, r in zip(parts, report, strict=True))
        return say(words, "decimal.numbers", mean=mean, distribution=distribution)
    if isinstance(report, bool) or not isinstance(report, int) or parts is not None:
        return None
    try:
        number = mechanism.sent_value(report)
    except IndexError:  # not one of a mean mechanism's cells
        return None
    return words.t("mech.number", n=words.number(stated(spec, number)))
