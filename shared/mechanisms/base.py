"""The interface every mechanism implements, and the privacy check that runs when one is built.

A mechanism is one object holding its parameters, its exact channel (or exact worst-case ratio),
a secure sampler, a vectorized simulation sampler, report validation, an aggregate and the
estimator that matches it. Subclasses compute their parameters in `__init__` and end it by
calling `self._certify()`: a claimed ε that the exact check refutes raises `PrivacyCheckError`.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar

import numpy as np

from ..aggregates import Aggregate, CountAggregate
from ..errors import AnswerError, DesignError, ReportError, SurveyError
from ..estimates import Estimate
from ..exact import PrivacyLoss, certify
from ..randomness import RandomSource, resolve

# Limits every mechanism shares unless it declares its own (class attributes below).
# Below MIN_EPSILON the rational stand-in for e^ε (within 2^-32, see exact.py) loses more than
# 0.02% of ε and one report's variance passes 10^12: nothing is measurable, and estimators
# divide by p - q ~ ε/k. Beyond MAX_EPSILON a report is the answer in all but name.
MIN_EPSILON = 1e-6
MAX_EPSILON = 50.0
# The largest finite domain (options) a mechanism is built for: it bounds the work one question
# causes on a device and on the server (a k-bit report, a k-entry aggregate).
MAX_OPTIONS = 65536


@dataclass(frozen=True)
class Misfit:
    """Why a mechanism cannot be built for a domain at an ε. `field` is "epsilon" or "domain"
    (the options of a categorical/ordinal question, the min/max of an integer one)."""

    field: str
    problem: str


@dataclass(frozen=True)
class AskedNumber:
    """A number's reports sent as pairs ([asked bit, number], or [status code, number] with
    special values) as what a design weights (the hook `Mechanism.asked_number`;
    shared/design/among_asked.py): per report, `asked` Z, unbiased for the indicator of an
    answer; `extras` (n, E), unbiased for the indicators of the extra values named `labels`
    (special values, then "not asked"); `centred`, unbiased for answered·(x − default) in the
    question's units; `noise`, an estimate of `centred`'s randomization variance (the code and
    the number are drawn independently, so they have no randomization covariance); `default`,
    the number randomized when there is no answer, in the question's units; `note`, what the
    report says of the method."""

    asked: np.ndarray
    extras: np.ndarray
    labels: tuple[str, ...]
    centred: np.ndarray
    noise: np.ndarray
    default: float
    note: str


EXACT_ANSWERS_MAX = 4096  # wider grids state a number's report moments on a sample of answers


def answer_sample(k: int, limit: int = EXACT_ANSWERS_MAX) -> np.ndarray:
    """Answer indices at which a number's report moments are stated: every one up to `limit`,
    else both ends and 1,025 (at most `limit`) evenly spaced ones."""
    if k <= limit:
        return np.arange(k, dtype=np.int64)
    return np.unique(np.linspace(0, k - 1, min(1025, limit)).round().astype(np.int64))


@dataclass(frozen=True)
class ReportValues:
    """How a crosstab reads a report of a number (joint_reports "value"): each report has an
    integer key (`JointReports.value_keys`) and an unbiased value of its answer, v(key) with
    E[v | answer x] = x, on the labels' scale (a scale wrapper states it in the question's
    units, `scaled`).

    - finite keys 0..S-1 (`table` given): v(key) = table[key], and `expected[i]` is the
      channel row P[key | answers[i]] (S columns);
    - integer keys (`table` None): v(key) = offset + slope·key, and `expected[i]` is
      (E[key | answers[i]], E[key² | answers[i]]).
    `answers` are the answer values the rows of `expected` are of (every answer, or on a wide
    grid `answer_sample`'s)."""

    answers: np.ndarray
    expected: np.ndarray
    table: np.ndarray | None = None
    offset: float = 0.0
    slope: float = 1.0

    def scaled(self, origin: float, step: float) -> ReportValues:
        """The same reports with values origin + step·v (the keys, so `expected`, unchanged)."""
        if self.table is not None:
            return ReportValues(origin + step * self.answers, self.expected,
                                origin + step * self.table)
        return ReportValues(origin + step * self.answers, self.expected, None,
                            origin + step * self.offset, step * self.slope)


class JointReports:
    """What a crosstab needs of a mechanism beyond its marginal estimator (defaults: none)."""

    def report_values(self) -> ReportValues:
        """For "value" reports: how each report's unbiased value of the answer is read
        (`ReportValues`)."""
        raise NotImplementedError(f"{type(self).__name__} reports are not numbers")

    def value_keys(self, reports: Any) -> np.ndarray:
        """For "value" reports: the integer key of each of n reports (stored columns)."""
        return np.asarray(reports).astype(np.int64).reshape(-1)

    @property
    def report_width(self) -> int:
        """How many integers one stored report holds once lists are flattened."""
        return 1

    def index_channel(self) -> tuple[np.ndarray, np.ndarray]:
        """(A, M) for "index" reports: the float channel A[x][y] (answer x, report index y) and
        the rows M[a][y] of the per-report unbiased estimator of 1[answer = a]."""
        raise NotImplementedError(f"{type(self).__name__} reports are not one index")

    def window_reports(self) -> Any:
        """For a number whose reports carry a square wave's cell (alone or as a pair's
        distribution part): a shared/numeric/joint_ems.WindowReports, from which a crosstab
        estimates the number's quartiles within each category of the other side; None (the
        default): the reports carry none."""
        return None

    def support_bits(self, reports: np.ndarray) -> np.ndarray:
        """For "support_bits" reports: the (n, k) 0/1 float matrix of which answers each report
        supports, from n flattened reports of `report_width` integers."""
        raise NotImplementedError(f"{type(self).__name__} reports are not support bits")




class JointReading(StrEnum):
    """How a crosstab (shared/joint_features.py), a regression and the design-based
    pseudo-values read one report of a mechanism: a property of its reports, whatever the
    question's type."""

    NONE = ""
    """No joint estimator reads them."""
    INDEX = "index"
    """One output index (see `index_channel`): a one-hot of the report."""
    SUPPORT_BITS = "support_bits"
    """k support bits (see `support_bits`): unary encodings, subset selection, local hashing."""
    WHOLE_NUMBER = "whole_number"
    """A whole number with integer noise or none (geometric noise, a disclosed number): binned
    by a one-hot over a finite partition of the integers, plus y and y²."""
    VALUE = "value"
    """A number's unbiased value, no unbiased indicator of each answer (see `report_values`):
    its mean among each category of the other side."""

class Mechanism(JointReports, ABC):
    """An ε-LDP randomizer for one question, with the estimator that debiases its reports.

    Answers are the question's own values (`labels`): False/True for binary questions, a label
    for categorical ones, an int for integer ones. `perturb_many` works on answer *indices*.
    """

    name: ClassVar[str]
    question_types: ClassVar[frozenset[str]]
    summary: ClassVar[str] = ""
    # The limits this mechanism is built within; `misfit` checks them, and the survey parser,
    # `auto` and the constructor all ask `misfit`, so each limit is stated here only.
    min_epsilon: ClassVar[float] = MIN_EPSILON
    max_epsilon: ClassVar[float] = MAX_EPSILON
    max_options: ClassVar[int] = MAX_OPTIONS
    # True for symmetric k-ary randomized response, whose channel stays symmetric when RAPPOR's
    # instantaneous layer is composed on top (see longitudinal.py).
    supports_instantaneous_layer: ClassVar[bool] = False
    # How a crosstab reads one report (shared/joint_features.py): JointReading above.
    joint_reports: ClassVar[JointReading] = JointReading.NONE
    # A report is the index of one of the question's answers (the answer randomized among
    # them, forced, or sent as given): a respondent's review names that answer (client/review).
    reports_an_answer: ClassVar[bool] = False

    def __init__(self, epsilon: float, labels: Sequence[Any], *, question_id: str = "",
                 groups: Mapping[str, Sequence[int]] | None = None) -> None:
        # Integer questions pass a range: their domain may be far too large to list.
        self.labels = labels if isinstance(labels, range) else tuple(labels)
        self.k = len(self.labels)
        low = self.labels.start if isinstance(self.labels, range) else 0
        misfit = self.misfit(self.k, epsilon, low)
        if misfit is not None:
            where = f"questions.{question_id}." if question_id else ""
            raise SurveyError(where + misfit.field, misfit.problem)
        self.epsilon = float(epsilon)
        self.question_id = question_id
        self.groups = {name: tuple(members) for name, members in (groups or {}).items()}
        self._index = ({} if isinstance(self.labels, range)
                       else {label: i for i, label in enumerate(self.labels)})
        self._loss: PrivacyLoss | None = None

    @classmethod
    def from_question(cls, question: Any) -> Mechanism:
        """Build the mechanism for a `Question` (its ε, domain and groups)."""
        groups = question.group_indices() if question.groups else None
        return cls(question.epsilon, question.labels, question_id=question.id, groups=groups)

    # --- limits ----------------------------------------------------------------------------

    @classmethod
    def misfit(cls, k: int, epsilon: float, low: int = 0) -> Misfit | None:
        """Why this mechanism cannot be built for k answers (integers from `low`, for integer
        questions) at ε; None when it can. Cheap: no channel is built."""
        if (isinstance(epsilon, bool) or not isinstance(epsilon, float | int)
                or not math.isfinite(epsilon) or epsilon <= 0):
            return Misfit("epsilon", "must be a finite number > 0")
        if not cls.min_epsilon <= epsilon <= cls.max_epsilon:
            return Misfit("epsilon", f"must lie between {cls.min_epsilon:g} and "
                                     f"{cls.max_epsilon:g}, got {epsilon!r}")
        if k < 2:
            return Misfit("domain", "needs at least 2 possible answers")
        if k > cls.max_options:
            return Misfit("domain", f"at most {cls.max_options} possible answers, got {k}")
        return None

    @classmethod
    def describe_limits(cls) -> str:
        """The limits `misfit` checks, in a few words (README's mechanism table)."""
        return f"ε {cls.min_epsilon:g} to {cls.max_epsilon:g}; up to {cls.max_options:,} answers"

    # --- choosing and planning -----------------------------------------------------------

    @classmethod
    @abstractmethod
    def worst_case_variance(cls, k: int, epsilon: float) -> float:
        """Per-option variance of the estimate with one report (divide by n), worst case over
        the truth: the planner's margin of error is guaranteed with it."""

    @classmethod
    def average_variance(cls, k: int, epsilon: float) -> float:
        """Variance with one report averaged over the k options, worst case over the truth:
        the expected squared error per option, what `auto` minimizes (default: the per-option
        worst case, for mechanisms that estimate one number)."""
        return cls.worst_case_variance(k, epsilon)

    @classmethod
    def mean_score_variance(cls, k: int, epsilon: float) -> float | None:
        """Worst-case variance (over the truth) of the mean score, options scored 1..k, with
        one report: what `auto` minimizes and the planner plans for ordinal questions. None:
        not derived for this mechanism (it is then not offered for ordinal questions)."""
        return None

    @classmethod
    def report_bytes(cls, k: int, epsilon: float) -> int:
        """Size of one report as compact JSON, for the report size limit in auto selection."""
        return len(str(k))

    # --- privacy ---------------------------------------------------------------------------

    @abstractmethod
    def privacy_loss(self) -> PrivacyLoss | None:
        """The exact worst-case privacy loss of what `perturb` samples (None: unbounded)."""

    def _certify(self) -> None:
        self._loss = certify(self.privacy_loss(), self.epsilon, self.name)

    def realized_epsilon(self) -> float:
        """The exact ε of the channel this mechanism samples from; <= `epsilon`."""
        if self._loss is None:
            self._certify()
        assert self._loss is not None
        return float(self._loss)

    def params(self) -> dict[str, Any]:
        """Parameters written into the signed manifest (JSON-safe, exact values as strings)."""
        return {}

    @property
    def longitudinal_epsilon(self) -> float:
        """Exact ε over unboundedly many rounds of one true answer in a series: each round
        re-sends the memoized `permanent_layer` value (post-processed), so its ε."""
        return self.permanent_layer.realized_epsilon()

    def deniability(self) -> str:
        """One line for a respondent on why a single report cannot be held against them: the
        fallback of client/review.py `chances`, which words every known mechanism's exact
        chances itself (a new mechanism should be added there)."""
        return "your device randomizes your answer before sending it, so no single report " \
               "reveals it"

    # --- the respondent's side -------------------------------------------------------------

    def encode(self, answer: Any) -> int:
        """The index of a true answer; refuses anything outside the question's domain."""
        try:
            index = self._index.get(answer)
        except TypeError:  # unhashable
            index = None
        if index is None or type(answer) is not type(self.labels[index]):
            raise AnswerError(f"{answer!r} is not one of the possible answers"
                              + (f" to {self.question_id!r}" if self.question_id else ""))
        return index

    def perturb(self, answer: Any, source: RandomSource | None = None) -> Any:
        """One report for a true answer, drawn exactly with the OS CSPRNG (or `source`)."""
        return self.perturb_index(self.encode(answer), resolve(source))

    @abstractmethod
    def perturb_index(self, index: int, source: RandomSource) -> Any:
        """One report for the answer with this index, drawn exactly from `source`."""

    # In a series, the device memoizes a value drawn from `permanent_layer` for each distinct
    # true answer (client/hazmat_memo.py) and sends `rerandomize(value)` each round.

    @property
    def permanent_layer(self) -> Mechanism:
        """The mechanism whose report is memoized in a series (itself, for one-layer ones)."""
        return self

    def series_answer(self, answer: Any, source: RandomSource) -> Any:
        """The answer a series memoizes (and the ledger tags) for a true answer: the answer
        itself, one permanent value per distinct answer; a mechanism that rounds first draws
        from `source`, the question's own keyed stream (the same every round, whatever the
        answer: one_bit_mean's α-point)."""
        return answer

    def rerandomize(self, permanent_value: Any, source: RandomSource | None = None) -> Any:
        """This round's report from the memoized permanent value (one layer: unchanged)."""
        return permanent_value

    @abstractmethod
    def perturb_many(self, answers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Reports for an array of answer indices, same distribution as `perturb`.

        Simulation and benchmarks only: a numpy Generator is not a CSPRNG.
        """

    # --- the aggregator's side -------------------------------------------------------------

    @abstractmethod
    def validate_report(self, report: Any) -> Any:
        """The normalized report, or ReportError for anything outside the report domain."""

    @abstractmethod
    def new_aggregate(self) -> Aggregate:
        """Empty sufficient statistics for this mechanism's reports."""

    @abstractmethod
    def aggregate_from_dict(self, data: Mapping[str, Any]) -> Aggregate:
        """An aggregate read back from `to_dict()`, checked against this mechanism's shape."""

    def validate_reports(self, reports: Sequence[Any]) -> list[Any]:
        """Many reports of this question at once (a batch's column): the normalized reports as
        plain JSON values, or ReportError for the first one outside the report domain."""
        return [plain(self.validate_report(r)) for r in reports]

    def aggregate_many(self, reports: np.ndarray) -> Aggregate:
        """An aggregate of many reports at once (simulation and recomputation)."""
        agg = self.new_aggregate()
        agg.add_many(reports)
        return agg

    @abstractmethod
    def estimate(self, aggregate: Aggregate, confidence: float = 0.95) -> Estimate:
        """Unbiased estimates with plug-in std errors, worst-case bounds and intervals."""

    def value_noise(self, reports: Any) -> np.ndarray | None:
        """For a mechanism of numbers (`pseudo_values` of width 1): each report's estimate of
        its pseudo-value's randomization variance, (n, 1), in the pseudo-values' units (what a
        design's finite-population correction adds back and its design effect's privacy part
        reads; shared/design/pseudo.py). None: the mechanism states none (the default; a
        mechanism of options needs none: its indicators' z² − z is unbiased)."""
        return None

    def asked_number(self, reports: Any) -> AskedNumber | None:
        """A number's stored pairs ([asked bit, number], [status code, number]) as a design
        weights them (`AskedNumber`); None: the mechanism sends no such pair (the default)."""
        return None

    def distribution_columns(self, reports: Any) -> Any:
        """A number's distribution as linear pseudo-values: a
        shared/numeric/linear_inverse.DistributionColumns (the bins' shares and the CDF at the
        bins' edges, each report's unbiased estimate of them) for a mechanism whose
        distribution a design can weight; None (the default): it has none."""
        return None

    def pseudo_values(self, reports: Any) -> np.ndarray:
        """Each respondent's unbiased estimate of their answer's indicators (contract 5):
        an (n, k) float array z with E[z_i | answer a] = e_a, from n reports as stored columns
        or `perturb_many` returns them ((n,) or (n, report_width)). Integer questions return
        (n, 1): an unbiased estimate of the value. Their mean is the mechanism's own unbiased
        estimate; design-based estimators weight them (shared/design/).

        Default, from how a crosstab reads a report: an index report y gives row y of the
        channel inverse's transpose (GRR: (1[y = a] - q)/(p - q)); support bits give
        (bit_a - q*)/(p* - q*). DesignError where the mechanism has no linear debias."""
        if self.joint_reports == JointReading.INDEX:
            _, inverse = self.index_channel()  # (k, m): M[a][y]
            index = np.asarray(reports).astype(np.int64, copy=False).reshape(-1)
            # np.take of whole rows: 5x faster than fancy indexing at 10^6 reports
            return np.take(np.ascontiguousarray(inverse.T), index, axis=0)
        if self.joint_reports == JointReading.SUPPORT_BITS:
            p, q = float(self.p_star), float(self.q_star)  # type: ignore[attr-defined]
            bits = self.support_bits(np.asarray(reports).reshape(-1, self.report_width))
            bits -= q
            bits /= p - q
            return bits
        raise DesignError(f"{self.name} has no linear debias, so no per-respondent "
                          f"pseudo-values" + (f" for {self.question_id!r}"
                                              if self.question_id else ""))

    def pseudo_value_rows(self, reports: Any) -> tuple[np.ndarray, np.ndarray] | None:
        """(table, codes): `pseudo_values(reports)` as a lookup, row i being table[codes[i]]
        exactly (the same operations make each row), so that a design-based estimator sums
        over n respondents once per report value (one bincount of the codes) instead of once
        per column (shared/design/estimators.py). Default: an index report's row of the
        channel inverse's transpose, the report being its code; None (also for a mechanism
        that makes its pseudo-values otherwise): not a lookup."""
        if self.joint_reports != JointReading.INDEX or type(self).pseudo_values is not \
                Mechanism.pseudo_values:
            return None
        _, inverse = self.index_channel()
        index = np.asarray(reports).astype(np.int64, copy=False).reshape(-1)
        return np.ascontiguousarray(inverse.T), index

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} k={self.k} epsilon={self.epsilon!r}>"


def plain(value: Any) -> Any:
    """A JSON-safe copy of a normalized report (numpy scalars/arrays and tuples become Python
    values and lists)."""
    if isinstance(value, np.generic | np.ndarray):
        return value.tolist()
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def ints_within(reports: Sequence[Any], low: int, high: int) -> bool:
    """True when every report is a Python int (not a bool) in [low, high]: the common case of a
    batch, checked in one pass so that only a batch holding a bad report pays per report."""
    return all(type(r) is int for r in reports) and (
        not reports or (low <= min(reports) and max(reports) <= high))


def reject_bool(report: Any, what: str) -> None:
    """Python's bool is an int: refuse it where an integer report belongs."""
    if isinstance(report, bool):
        raise ReportError(f"{what} must be an integer, not a boolean")


def check_index(report: Any, k: int) -> int:
    """A report that is one value index in [0, k)."""
    reject_bool(report, "report")
    if not isinstance(report, int | np.integer):
        raise ReportError(f"report must be an integer in [0, {k}), got {type(report).__name__}")
    value = int(report)
    if not 0 <= value < k:
        raise ReportError(f"report {value} is outside [0, {k})")
    return value


class IndexReports:
    """A report that is one value index in [0, size), aggregated as per-value counts (GRR, the
    ordinal and location exponential mechanisms: size = k; PSFO-GRR's padded values and
    Hadamard response's rows: more indices than options)."""

    k: int

    @property
    def index_count(self) -> int:
        """How many indices a report can name."""
        return self.k

    def validate_report(self, report: Any) -> int:
        return check_index(report, self.index_count)

    def validate_reports(self, reports: Sequence[Any]) -> list[Any]:
        if ints_within(reports, 0, self.index_count - 1):
            return list(reports)
        return [check_index(r, self.index_count) for r in reports]

    def new_aggregate(self) -> CountAggregate:
        return CountAggregate(self.index_count)

    def aggregate_from_dict(self, data: Mapping[str, Any]) -> CountAggregate:
        return CountAggregate.from_dict(data, size=self.index_count)
