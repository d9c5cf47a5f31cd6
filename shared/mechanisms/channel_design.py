"""Designs given by their channel: a survey researcher's P(report | answer), in rationals.

Every randomized-response design survey researchers know (Warner, forced response, unrelated
question, crosswise) is a finite channel A[x][y] = P(report y | answer x); the general `matrix`
design takes A from the designer directly. Unlike the ε-calibrated mechanisms, a design's
parameters are its inputs: its ε is *computed* from the channel, exactly, in rationals
(ln of the worst column ratio max_y max_x A[x][y] / min_x A[x][y]). A survey may state ε (it
must be at least the exact one) or leave it out (it is then the exact ε, rounded up to the next
float that `exact.certify` accepts).

Estimator (all designs): with λ̂ = report counts / n, E[λ̂] = Aᵀ f, so f̂ = M λ̂ with M the
(pseudo-)inverse of Aᵀ is unbiased (A must have full row rank k). Its variance, one option or a
group's sum m·f̂, is (Σ_y m_y² λ_y - (m·f)²)/n (multinomial λ̂), estimated by plugging λ̂ in:
for Warner this is λ̂(1-λ̂)/(n(2p-1)²), for forced response and the unrelated question
λ̂(1-λ̂)/(n p²), the textbook forms. The worst case over the truth (`variance_bound`) maximizes
Σ_x f_x b_x - f_G² over the simplex (b = A (m∘m)), a one-variable concave problem.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from ..aggregates import Aggregate, CountAggregate
from ..errors import ReportError, SurveyError
from ..estimates import (
    Estimate,
    GroupEstimate,
    fill_unanswered,
    norm_sub,
    value_estimates,
    z_value,
)
from ..exact import PrivacyLoss, channel_ratio
from ..randomness import RandomSource
from .base import JointReading, Mechanism, check_index

# Bounds on what a designer may write: a rational's numerator and denominator, and the channel's
# size (k x m fractions are proven at build, on every device).
MAX_DENOMINATOR = 10**12
MAX_DESIGN_OPTIONS = 64
MAX_DESIGN_REPORTS = 256


def rational(value: Any, where: str) -> Fraction:
    """A designer's probability: an int, a decimal number or a "a/b" string, as an exact
    Fraction in [0, 1]. Floats are read by their decimal spelling (0.7 is 7/10)."""
    if isinstance(value, bool):
        raise SurveyError(where, "must be a probability (a number or \"a/b\"), not a boolean")
    try:
        if isinstance(value, int):
            result = Fraction(value)
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise ValueError
            result = Fraction(repr(value))
        elif isinstance(value, str) and 0 < len(value) <= 40:
            result = Fraction(value.strip())
        else:
            raise ValueError
    except (ValueError, ZeroDivisionError):
        raise SurveyError(where, f"must be a probability: a number or a fraction \"a/b\", got "
                          f"{value!r}") from None
    if not 0 <= result <= 1:
        raise SurveyError(where, f"must lie between 0 and 1, got {result}")
    if result.denominator > MAX_DENOMINATOR:
        raise SurveyError(where, f"denominator {result.denominator} is over {MAX_DENOMINATOR}")
    return result


def exact_epsilon(loss: PrivacyLoss) -> float:
    """The smallest float ε that `loss` is certified within (ε stated when a survey omits it)."""
    eps = float(loss)
    while not loss.within(eps):
        eps = math.nextafter(eps, math.inf)
    return eps


def option_names(labels: Sequence[Any]) -> list[str]:
    """How params name answers: "no"/"yes" for a binary question, else the option labels."""
    return [("yes" if label else "no") if isinstance(label, bool) else str(label)
            for label in labels]


def per_option(value: Any, labels: Sequence[Any], where: str) -> list[Fraction]:
    """A table {option: probability} with every option named once, in option order."""
    names = option_names(labels)
    if not isinstance(value, Mapping):
        raise SurveyError(where, f"must be a table of option = probability for {names}")
    unknown = sorted(set(map(str, value)) - set(names))
    if unknown:
        raise SurveyError(f"{where}.{unknown[0]}", f"is not an answer (answers: {names})")
    missing = [name for name in names if name not in value]
    if missing:
        raise SurveyError(where, f"gives no probability for {missing[0]!r}")
    return [rational(value[name], f"{where}.{name}") for name in names]


def fraction_table(values: Sequence[Fraction], labels: Sequence[Any]) -> dict[str, str]:
    """The canonical form of a per-option table: exact fractions as strings."""
    return {name: str(v) for name, v in zip(option_names(labels), values, strict=True)}


def resolve_design(question: Any, given: Any, cls: type[ChannelDesign]) -> Any:
    """The question with its design's canonical params and its ε (the exact one when the survey
    leaves ε out); SurveyError naming the parameter or ε the design refuses. `cls`: the design
    the question names (shared/mechanisms/registry.mechanism_class)."""
    from dataclasses import replace

    if not isinstance(given, Mapping):
        raise SurveyError(f"questions.{question.id}.params",
                          f"{question.mechanism} needs its parameters as a table")
    groups = question.group_indices() if question.groups else None
    design = cls(question.epsilon, question.labels, question_id=question.id, groups=groups,
                 params=given)
    return replace(question, epsilon=design.epsilon, params=design.params())


class ChannelDesign(Mechanism):
    """A design whose exact channel the subclass derives from its params (`build_channel`)."""

    designed: ClassVar[bool] = True
    joint_reports = JointReading.INDEX
    max_options = MAX_DESIGN_OPTIONS
    # What the design is known as, for the respondent's one line and the docs.
    known_as: ClassVar[str] = ""

    def __init__(self, epsilon: float | None, labels: Any, *, question_id: str = "",
                 groups: Mapping[str, Sequence[int]] | None = None,
                 params: Mapping[str, Any] | None = None) -> None:
        labels = tuple(labels)
        self._where = f"questions.{question_id}.params" if question_id else "params"
        given = dict(params or {})
        self._design_labels = labels
        self.rows = self.build_channel(given, labels)
        self.m = len(self.rows[0])
        ratio = channel_ratio(self.rows)
        if ratio is None:
            y = self._revealing_report()
            raise SurveyError(self._where, f"{self.name} is not differentially private with "
                              f"these parameters: report {y} is impossible under some answer, "
                              "so it proves which answer was not given")
        if ratio == 1:
            raise SurveyError(self._where, "the report would not depend on the answer (ε = 0): "
                              "nothing could be estimated")
        loss = PrivacyLoss(ratio=ratio)
        if epsilon is None:
            epsilon = exact_epsilon(loss)
        elif (isinstance(epsilon, float | int) and not isinstance(epsilon, bool)
              and math.isfinite(epsilon) and epsilon > 0 and not loss.within(epsilon)):
            where = f"questions.{question_id}.epsilon" if question_id else "epsilon"
            raise SurveyError(where, f"the {self.name} design's exact ε is {float(loss):.6g} "
                              f"= {loss.describe()}, more than the stated {epsilon!r} (state "
                              f"at least {exact_epsilon(loss)!r}, or leave epsilon out)")
        super().__init__(epsilon, labels, question_id=question_id, groups=groups)
        a = np.array([[float(p) for p in row] for row in self.rows])
        if np.linalg.matrix_rank(a) < self.k:
            raise SurveyError(self._where, "two answers' report distributions are linearly "
                              "dependent, so no estimator can tell the answers apart")
        self._a = a
        self._m_inv = np.linalg.pinv(a.T)  # k x m: f̂ = M λ̂
        self._cumulative = [self._cumulate(row) for row in self.rows]
        self._certify()

    # --- what subclasses define ----------------------------------------------------------

    def build_channel(self, params: dict[str, Any], labels: tuple[Any, ...]
                      ) -> list[list[Fraction]]:
        """Check the params, keep their canonical form in `self._params`, return A[x][y]."""
        raise NotImplementedError

    @classmethod
    def from_question(cls, question: Any) -> Mechanism:
        groups = question.group_indices() if question.groups else None
        return cls(question.epsilon, question.labels, question_id=question.id, groups=groups,
                   params=question.params)

    def params(self) -> dict[str, Any]:
        return dict(self._params)

    def _check_keys(self, params: Mapping[str, Any], required: set[str],
                    optional: set[str] = frozenset()) -> None:  # type: ignore[assignment]
        unknown = sorted(set(params) - required - optional)
        if unknown:
            raise SurveyError(f"{self._where}.{unknown[0]}", f"is not a parameter of "
                              f"{self.name} (it takes: {', '.join(sorted(required | optional))})")
        missing = sorted(required - set(params))
        if missing:
            raise SurveyError(f"{self._where}.{missing[0]}", f"{self.name} needs this parameter")

    def _revealing_report(self) -> int:
        for y in range(len(self.rows[0])):
            column = [row[y] for row in self.rows]
            if max(column) > 0 and min(column) == 0:
                return y
        return 0

    # --- planning (instance-level: the variance depends on the params) ------------------

    @classmethod
    def worst_case_variance(cls, k: int, epsilon: float) -> float:
        raise NotImplementedError(f"{cls.name}'s variance depends on its parameters: "
                                  "use design_worst_case_variance()")

    def design_worst_case_variance(self) -> float:
        """For planning: one report's variance of one option's estimate given the respondent's
        answer, worst case over options and answers, Var(m_a(report) | x) = b_x - 1[x = a]².
        This is the randomization's noise alone, the convention of every other mechanism's
        `worst_case_variance` (a pure protocol's V_in, V_out), so `plan` compares a design
        with binary_rr/grr at its ε like for like: Warner with p = e^ε/(1 + e^ε) is binary_rr's
        channel and plans the same n. (The estimates' `variance_bound` also counts the spread
        of the answers themselves, f(1 - f).)"""
        worst = 0.0
        for a in range(self.k):
            b = self._a @ (self._m_inv[a] * self._m_inv[a])
            b[a] -= 1.0
            worst = max(worst, float(b.max()))
        return worst

    def _worst_variance(self, m: np.ndarray, members: Sequence[int]) -> float:
        """max over the truth of Σ_y m_y² λ_y - f_G², λ = Aᵀ f, G = `members` (docstring)."""
        b = self._a @ (m * m)
        inside = np.zeros(self.k, dtype=bool)
        inside[list(members)] = True
        b_in = float(b[inside].max()) if inside.any() else -math.inf
        b_out = float(b[~inside].max()) if (~inside).any() else -math.inf
        if b_out == -math.inf:
            return b_in - 1.0
        t = min(max((b_in - b_out) / 2, 0.0), 1.0)
        return t * b_in + (1 - t) * b_out - t * t

    # --- privacy ---------------------------------------------------------------------------

    def channel(self) -> list[list[Fraction]]:
        """P[report y | answer x] as exact fractions."""
        return [list(row) for row in self.rows]

    def privacy_loss(self) -> PrivacyLoss | None:
        ratio = channel_ratio(self.rows)
        return None if ratio is None else PrivacyLoss(ratio=ratio)

    def deniability(self) -> str:
        return (f"{self.known_as or self.name}: your device draws your report at random from a "
                f"distribution that every answer shares, so any single report is deniable")

    # --- the respondent's side -------------------------------------------------------------

    @staticmethod
    def _cumulate(row: Sequence[Fraction]) -> tuple[int, list[int]]:
        denominator = math.lcm(*(p.denominator for p in row))
        bounds, total = [], 0
        for p in row:
            total += p.numerator * (denominator // p.denominator)
            bounds.append(total)
        return denominator, bounds

    def perturb_index(self, index: int, source: RandomSource) -> Any:
        denominator, bounds = self._cumulative[index]
        u = source.randbelow(denominator)
        y = next(i for i, bound in enumerate(bounds) if u < bound)
        return self._report(y)

    def _report(self, y: int) -> Any:
        """The wire form of report index y (an int; binary designs send a boolean)."""
        return y

    def perturb_many(self, answers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        answers = np.asarray(answers, dtype=np.int64)
        cdf = np.cumsum(self._a, axis=1)
        cdf[:, -1] = 1.0
        u = rng.random(answers.size)
        y = (u[:, None] >= cdf[answers]).sum(axis=1)
        return np.array([self._report(int(v)) for v in range(self.m)])[y]

    # --- the aggregator's side -------------------------------------------------------------

    def validate_report(self, report: Any) -> Any:
        return check_index(report, self.m)

    def new_aggregate(self) -> CountAggregate:
        return CountAggregate(self.m)

    def aggregate_from_dict(self, data: Mapping[str, Any]) -> CountAggregate:
        return CountAggregate.from_dict(data, size=self.m)

    def index_channel(self) -> tuple[np.ndarray, np.ndarray]:
        return self._a.copy(), self._m_inv.copy()

    def estimate(self, aggregate: Aggregate, confidence: float = 0.95) -> Estimate:
        assert isinstance(aggregate, CountAggregate)
        z = z_value(confidence)
        n = aggregate.n
        result = Estimate(question=self.question_id, mechanism=self.name, epsilon=self.epsilon,
                          n=n, confidence=confidence)
        if n == 0:
            fill_unanswered(result, self.labels, self.groups)
            return result
        shares = aggregate.counts.astype(float) / n
        f_hat = self._m_inv @ shares
        variance = ((self._m_inv ** 2) @ shares - f_hat ** 2) / n
        bound = np.array([self._worst_variance(self._m_inv[a], [a]) for a in range(self.k)]) / n
        consistent = norm_sub(f_hat)
        result.categories = value_estimates(self.labels, f_hat, variance, bound, consistent, z)
        for name, members in self.groups.items():
            idx = list(members)
            row = self._m_inv[idx].sum(axis=0)
            total = float(row @ shares)
            se = max(float((row ** 2) @ shares) - total ** 2, 0.0) ** 0.5 / n ** 0.5
            result.groups.append(GroupEstimate(
                name=name, options=[self.labels[i] for i in idx], estimate=total, std_error=se,
                variance_bound=self._worst_variance(row, idx) / n, ci_low=total - z * se,
                ci_high=total + z * se, consistent=float(consistent[idx].sum())))
        return result


class BinaryReports:
    """A yes/no design whose report is a JSON boolean (true: the report says "yes")."""

    def _report(self, y: int) -> bool:
        return bool(y)

    def validate_report(self, report: Any) -> bool:
        if not isinstance(report, bool | np.bool_):
            raise ReportError(f"a yes/no report must be true or false, got {report!r}")
        return bool(report)


class Matrix(ChannelDesign):
    """The general design: `matrix` lists, for each answer in option order (binary: no, yes),
    the probabilities of reports 0..m-1. Reports are the column index."""

    name = "matrix"
    question_types = frozenset({"binary", "categorical"})
    summary = "a designer-given P(report | answer) matrix in rationals; ε computed exactly."
    known_as = "a randomized-response design"

    def build_channel(self, params: dict[str, Any], labels: tuple[Any, ...]
                      ) -> list[list[Fraction]]:
        self._check_keys(params, {"matrix"})
        where = f"{self._where}.matrix"
        raw = params["matrix"]
        if not isinstance(raw, list) or len(raw) != len(labels):
            raise SurveyError(where, f"must list one row per answer ({len(labels)} rows, in "
                              f"option order: {option_names(labels)})")
        rows = []
        for x, row in enumerate(raw):
            if (not isinstance(row, list) or not 2 <= len(row) <= MAX_DESIGN_REPORTS
                    or (rows and len(row) != len(rows[0]))):
                raise SurveyError(f"{where}[{x}]", f"must list the same number (2 to "
                                  f"{MAX_DESIGN_REPORTS}) of report probabilities in every row")
            probs = [rational(p, f"{where}[{x}][{y}]") for y, p in enumerate(row)]
            if sum(probs) != 1:
                raise SurveyError(f"{where}[{x}]", f"must sum to exactly 1, sums to {sum(probs)}")
            rows.append(probs)
        self._params = {"matrix": [[str(p) for p in row] for row in rows]}
        return rows
