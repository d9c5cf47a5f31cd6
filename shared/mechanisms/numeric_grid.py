"""What the mean mechanisms for numbers (duchi.py, piecewise.py, hybrid.py) share: the answer
grid, the report cells, the exact sampler and the mean estimator.

The answer grid. A question's answers are k grid values: `labels` is a range of integers
low..high (an integer question's min..max) and `unit` says what one step is worth on the
question's scale (1 for an integer question; a decimal question's resolution, so that
min..max at resolution r is range(min/r, max/r + 1) with unit r). Grid value j (label low + j)
is mapped affinely onto [-1, 1]:

    t_j = -1 + 2j/(k - 1),    answer = center + half·t,
    center = (low + (k - 1)/2)·unit,  half = (k - 1)/2·unit,

so the mechanisms, written in the papers for t in [-1, 1], see the exact rational t_j.

The report. No floating-point sampler runs on the device (Mironov, CCS 2012): each mechanism
has a finite list of output values v_0..v_{m} (on the [-1, 1] scale, exact rationals) and, for
every grid value j, integer weights w_j(i) with P[report i | answer j] = w_j(i)/Σ_i w_j(i),
drawn with one `randbelow(Σ w)` from the OS CSPRNG (`randomness.draw_weighted`). The weights of
every (grid value, output) pair are computed in integers when the mechanism is built and the
worst column ratio max_j P[i|j] / min_j P[i|j] is checked exactly against e^ε
(`exact.certify`). The report is the output index i, an int; the server sums a histogram of
indices (`CountAggregate`).

The estimate. Every mechanism here has E[v_I | answer j] = t_j exactly (checked in rationals by
the tests), so the mean of the reported values, mapped back by center + half·v, is unbiased for
the mean answer. Its variance with one report for answer j is Var_j = Σ_i P[i|j] v_i² - t_j²,
exact (`variance_at`); for a fixed population it is Σ Var_{j(r)} / n² on the [-1, 1] scale.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from ..aggregates import Aggregate, CountAggregate
from ..errors import AnswerError, SurveyError
from ..estimates import Estimate, MeanEstimate, z_value
from ..randomness import RandomSource, draw_weighted
from .base import IndexReports, JointReading, Mechanism, ReportValues, answer_sample

# The number types (shared/question_types/number_grid.py: decimal, and integer on min..max)
# take these mechanisms, on the grid's indices with its exact scale (numeric_scale.py). They
# are registered apart from MECHANISMS (registry.py), so `auto` ranks them only where the unit
# asks numeric_auto (a decimal; an integer given `estimate`): every other survey stays
# byte-identical.
NUMBER_TYPES = frozenset({"decimal", "integer"})
ROW_SAMPLE = 513  # a crosstab's channel rows: every answer up to this many, else a grid of it

STD_ERROR_NOTE = ("std_error is a plug-in for these respondents' answers (the randomization's "
                  "variance depends on how far answers lie from the middle of the range, "
                  "estimated from the reports); variance_bound is the exact worst case over "
                  "answers of the discretized channel")


def grid_point(j: int, k: int) -> Fraction:
    """t_j = -1 + 2j/(k - 1): grid value j on [-1, 1]."""
    return Fraction(2 * j - (k - 1), k - 1)


class GridMean(IndexReports, Mechanism):
    """A mean mechanism over a k-value answer grid with a finite list of report cells.

    Subclasses set `values` (the cells' values on [-1, 1]) and implement `weights(j)` (or
    `perturb_index` directly), `variance_at(j)` and the class-level `grid_variances`.
    """

    question_types: ClassVar[frozenset[str]] = NUMBER_TYPES
    values: tuple[Fraction, ...]
    # A crosstab reads each report's value (its mean among the other side's categories): no
    # unbiased per-report indicator of a grid value exists (Duchi's two outputs).
    joint_reports = JointReading.VALUE

    def __init__(self, epsilon: float, labels: range, *, unit: int | Fraction | Decimal = 1,
                 question_id: str = "", groups: Mapping[str, Sequence[int]] | None = None
                 ) -> None:
        if not isinstance(labels, range) or labels.step != 1:
            raise SurveyError("domain", f"{self.name} needs the answer grid as a contiguous "
                                        "range of integers (min..max in units)")
        if isinstance(unit, bool) or not isinstance(unit, int | Fraction | Decimal) \
                or not Fraction(unit) > 0:
            raise SurveyError("domain", "the grid unit must be an exact number > 0 "
                                        "(an int, Fraction or Decimal)")
        super().__init__(epsilon, labels, question_id=question_id, groups=groups)
        self.low = labels.start
        self.unit = Fraction(unit)

    @classmethod
    def from_question(cls, question: Any) -> Mechanism:
        """Built from a question's ε and its range of whole-number labels, one unit apart (an
        integer question's min..max; a decimal question builds on its grid's indices with its
        scale instead, numeric_scale.on_scale). A question's `unit` attribute is its type's
        unit (shared/question_types), not a grid step, so it is not read here."""
        return cls(question.epsilon, question.labels, question_id=question.id)

    # --- the grid ------------------------------------------------------------------------

    @property
    def center(self) -> Fraction:
        return (self.low + Fraction(self.k - 1, 2)) * self.unit

    @property
    def half(self) -> Fraction:
        """Half the answer range on the question's scale: [-1, 1] is stretched by this."""
        return Fraction(self.k - 1, 2) * self.unit

    def answer_value(self, index: int) -> Fraction:
        """Grid value `index` on the question's scale."""
        return (self.low + index) * self.unit

    @property
    def index_count(self) -> int:
        return len(self.values)

    @cached_property
    def values_float(self) -> np.ndarray:
        return np.array([float(v) for v in self.values])

    # --- choosing and planning -----------------------------------------------------------

    @classmethod
    @abstractmethod
    def grid_variances(cls, k: int, epsilon: float) -> np.ndarray:
        """Var_j with one report for each grid value j, on the [-1, 1] scale (floats of the
        exact values)."""

    @classmethod
    def scaled_worst_case_variance(cls, k: int, epsilon: float) -> float:
        """The largest Var_j on the [-1, 1] scale (the papers' scale)."""
        return float(cls.grid_variances(k, epsilon).max())

    @classmethod
    def worst_case_variance(cls, k: int, epsilon: float) -> float:
        """The largest Var_j in grid steps² (like Geometric's, whose reports are in steps):
        multiply by unit² for the question's scale and divide by n for the mean."""
        return cls.scaled_worst_case_variance(k, epsilon) * ((k - 1) / 2) ** 2

    @classmethod
    def average_variance(cls, k: int, epsilon: float) -> float:
        """Var_j averaged over the grid values, in grid steps² (what a typical answer sees;
        numeric_auto's default criterion)."""
        return float(cls.grid_variances(k, epsilon).mean()) * ((k - 1) / 2) ** 2

    @classmethod
    def report_bytes(cls, k: int, epsilon: float) -> int:
        return len(str(cls.output_count(k, epsilon) - 1))

    @classmethod
    @abstractmethod
    def output_count(cls, k: int, epsilon: float) -> int:
        """How many report cells the mechanism has at (k, ε)."""

    # --- the channel -----------------------------------------------------------------------

    def weights(self, index: int) -> list[int]:
        """Integer weights of the report cells for grid value `index` (proportional to
        P[i | index]); mechanisms drawn in one step implement it."""
        raise NotImplementedError(f"{self.name} draws in stages: see channel()")

    def row(self, index: int) -> list[Fraction]:
        """P[report i | answer index] for every cell, exact."""
        w = self.weights(index)
        total = sum(w)
        return [Fraction(x, total) for x in w]

    def float_row(self, index: int) -> list[float]:
        """The same row as floats (int / int is correctly rounded): simulation only."""
        w = self.weights(index)
        total = sum(w)
        return [x / total for x in w]

    def channel(self) -> list[list[Fraction]]:
        """P[report i | answer j] as exact fractions, every row (k·cells fractions: tests and
        small grids; building certifies the same numbers in integers)."""
        return [self.row(j) for j in range(self.k)]

    @abstractmethod
    def variance_at(self, index: int) -> Fraction:
        """Exact Var_j = Σ_i P[i|j] v_i² - t_j² with one report, on the [-1, 1] scale."""

    # --- the respondent's side -------------------------------------------------------------

    def encode(self, answer: Any) -> int:
        """The grid index of an answer: an int label when the unit is 1; else an exact number
        (int, Fraction, Decimal, or a float read as its shortest decimal) on the grid. Anything
        off the grid or outside the range is refused, not rounded or clamped."""
        where = f" for {self.question_id!r}" if self.question_id else ""
        if isinstance(answer, bool) or not isinstance(answer, int | float | Fraction | Decimal):
            raise AnswerError(f"the answer{where} must be a number")
        if self.unit == 1 and not isinstance(answer, int):
            raise AnswerError(f"the answer{where} must be an integer")
        try:
            exact = Fraction(Decimal(repr(answer))) if isinstance(answer, float) \
                else Fraction(answer)
        except (InvalidOperation, ValueError, OverflowError):
            raise AnswerError(f"the answer{where} must be a finite number") from None
        units = exact / self.unit
        if units.denominator != 1:
            raise AnswerError(f"{answer} is not a multiple of {self.unit}{where}")
        label = units.numerator
        if not self.labels.start <= label < self.labels.stop:
            raise AnswerError(f"{answer} is outside [{self.answer_value(0)}, "
                              f"{self.answer_value(self.k - 1)}]{where}; it is refused, "
                              "not clamped")
        return label - self.low

    def perturb_index(self, index: int, source: RandomSource) -> int:
        return draw_weighted(self.weights(index), source)

    @cached_property
    def _cumulative(self) -> np.ndarray:
        """Cumulative float channel rows, k x cells (simulation only)."""
        return np.cumsum(np.array([self.float_row(j) for j in range(self.k)]), axis=1)

    def perturb_many(self, answers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Report indices for answer indices, drawn from the float channel (simulation only:
        a numpy Generator is not a CSPRNG)."""
        answers = np.asarray(answers, dtype=np.int64)
        out = np.empty(answers.size, dtype=np.int64)
        cumulative = self._cumulative
        u = rng.random(answers.size)
        for start in range(0, answers.size, 4096):  # bounded memory: 4096 x cells at a time
            rows = cumulative[answers[start:start + 4096]]
            out[start:start + 4096] = (rows <= u[start:start + 4096, None]).sum(axis=1)
        return np.minimum(out, self.index_count - 1)

    # --- the aggregator's side ---------------------------------------------------------------

    def report_value(self, report: int) -> float:
        """A report's value on the question's scale (unbiased for the answer)."""
        return float(self.center + self.half * self.values[report])

    def sent_label(self, report: int) -> Fraction:
        """The number report cell `report` stands for, exactly, on the labels' scale."""
        return self.center / self.unit + self.half / self.unit * self.values[report]

    def report_values(self) -> ReportValues:
        """The report cells' values on the labels' scale (center + half·v_i, unbiased for
        the answer) with the float channel rows at `answer_sample`'s answers."""
        return self._report_values

    @cached_property
    def _report_values(self) -> ReportValues:
        # 513 answers at most: a channel row costs a pass over the cells (hybrid's in exact
        # rationals), and E[(v - r)² | x] is smooth in x (a + b·t² plus the rounding ripple)
        answers = answer_sample(self.k, ROW_SAMPLE)
        rows = np.array([self.float_row(int(j)) for j in answers])
        table = float(self.center) + float(self.half) * self.values_float
        labels = np.array([float((self.low + int(j)) * self.unit) for j in answers])
        return ReportValues(labels, rows, table)

    def pseudo_values(self, reports: Any) -> np.ndarray:
        """Each report's value on the question's scale, (n, 1): unbiased for the answer."""
        index = np.asarray(reports).astype(np.int64).reshape(-1)
        return (float(self.center) + float(self.half) * self.values_float[index]).reshape(-1, 1)

    def value_noise(self, reports: Any) -> np.ndarray:
        """The plug-in randomization variance the mean's std error uses (`plug_in_variance`,
        from these reports' mean and mean square), the same for every report, in the
        question's units: the variance depends on the answer, which one report cannot tell
        (for Duchi's two outputs no unbiased per-report estimate exists), so each report
        carries the respondents' average; with equal weights a design's std error is then
        the plain report's."""
        index = np.asarray(reports).astype(np.int64).reshape(-1)
        if index.size == 0:
            return np.zeros((0, 1))
        values = self.values_float[index]
        variance = self.plug_in_variance(float(values.mean()), float((values * values).mean()))
        return np.full((index.size, 1), variance * float(self.half) ** 2)

    @cached_property
    def _square_fit(self) -> tuple[float, float]:
        """(a, b) with E[v² | j] ≈ a + b·t_j² (least squares over the grid, from the exact
        Var_j + t_j²): Duchi's is exactly (B², 0), PM's about (A, s/(s - 1)) plus the rounding
        ripple, hybrid's their α-mix."""
        t2 = np.linspace(-1.0, 1.0, self.k) ** 2
        moments = self.grid_variances(self.k, self.epsilon) + t2
        if np.ptp(t2) == 0:
            return float(moments.mean()), 0.0
        b, a = np.polyfit(t2, moments, 1)
        return float(a), float(b)

    def plug_in_variance(self, mean_t: float, mean_square: float) -> float:
        """One report's variance averaged over the respondents, estimated on [-1, 1] from the
        mean report and the mean squared report: Var_j = E[v²|j] - t_j² ≈ a + (b - 1)·t_j², with
        the respondents' mean t² = (mean v² - a)/b, kept within [mean t², 1] (clipped); where
        E[v²|j] does not depend on the answer (b = 0: Duchi) mean t² is not identifiable and
        its smallest value (mean t)² gives the largest variance. Clipped to [0, worst case]."""
        a, b = self._square_fit
        floor = min(mean_t * mean_t, 1.0)
        t2 = floor if b < 1e-9 else min(max((mean_square - a) / b, floor), 1.0)
        worst = self.scaled_worst_case_variance(self.k, self.epsilon)
        return min(max(a + (b - 1) * t2, 0.0), worst)

    def fixed_population_variance(self, answer_counts: Sequence[int]) -> float:
        """Exact variance of the mean estimate (question's scale) for a fixed population with
        answer_counts[j] respondents at grid value j: Σ_j c_j Var_j / n² · half²."""
        n = sum(answer_counts)
        total = sum(c * self.variance_at(j) for j, c in enumerate(answer_counts) if c)
        return float(total * self.half**2 / n**2)

    def estimate(self, aggregate: Aggregate, confidence: float = 0.95) -> Estimate:
        assert isinstance(aggregate, CountAggregate)
        z = z_value(confidence)
        n = aggregate.n
        result = Estimate(question=self.question_id, mechanism=self.name, epsilon=self.epsilon,
                          n=n, confidence=confidence)
        if n == 0:
            result.mean = MeanEstimate(None, None, None, None, None)
            return result
        counts = aggregate.counts.astype(np.float64)
        values = self.values_float
        mean_t = float(counts @ values) / n
        half, center = float(self.half), float(self.center)
        bound = self.scaled_worst_case_variance(self.k, self.epsilon) * half**2 / n
        square = float(counts @ (values * values)) / n
        se = math.sqrt(self.plug_in_variance(mean_t, square) / n) * half
        mean = center + half * mean_t
        result.mean = MeanEstimate(estimate=mean, std_error=se, variance_bound=bound,
                                   ci_low=mean - z * se, ci_high=mean + z * se)
        result.notes.append(STD_ERROR_NOTE)
        return result
