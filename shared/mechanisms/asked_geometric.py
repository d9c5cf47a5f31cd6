"""An integer question that depends on randomized answers: an asked bit and a noisy number.

Skip logic (shared/skip_logic.py) must not let the server learn whether such a question was
asked, so the device always sends a report pair [b, y]:

- b, the asked bit: 1 with probability p when the question was asked, with q = 1 - p when not
  (binary randomized response, p = e₁/(e₁ + 1) for a short rational e₁ <= e^ε₁);
- y = v + Z, two-sided geometric noise (P[Z = z] ∝ e^(-λ|z|), a rational rate λ, drawn exactly)
  on v = the answer when asked, and on the default d = min + ⌊Δ/2⌋ (the middle of the range)
  when not, Δ = max - min.

Privacy, exactly. The true answer is a value of {not asked} ∪ [min, max]. For two answers
both asked, b has the same law and y's ratio is at most e^(λ|x - x'|) <= e^(λΔ). For an asked x
against "not asked", b's ratio is at most e₁ and y's at most e^(λ|x - d|) <= e^(λh), h = Δ - ⌊Δ/2⌋
(d is the middle, so h is about Δ/2). The parts are drawn independently, so the report's worst
ratio is max(e^(λΔ), e₁·e^(λh)), reached at x = the range end farther from d: that is the
certified loss (`WorstOfLosses`), each term decided in rational arithmetic. Because the default
sits in the middle, "not asked" is only about half the range away from any answer: the number
keeps λΔ = t·ε' (ε' a short rational <= ε) and the bit gets ε₁ = ε - λh, about ε/2. The share
t = min(1, 5Δ/(9h)) minimizes the small-ε worst-case variance of the mean among those asked
(below), 2Δ²/(tε)² + h²/(ε - tεh/Δ)², whose optimum 1/(r(1 + 2^(-1/3))) (r = h/Δ) is rounded
to 5/(9r): t = 1 for every range but the smallest (Δ = 1 gives t = 5/9, Δ = 3 gives 5/6).

Special values ("Don't know", "Prefer not to say": the question's `special`) are further values
beyond the range, handled as "not asked" is: the asked bit becomes a status code randomized by
GRR over m = 1 + (extra values) codes (the answer, each special value, "not asked" where the
question has it; p = e₁/(e₁ + m - 1), q = 1/(e₁ + m - 1), ratio p/q = e₁ again), and every extra
value puts the number's noise on the default d. Two extra values differ in the code alone (ratio
e₁ <= e₁·e^(λh)); an answer against an extra value as above: the certified loss is the same
max(e^(λΔ), e₁·e^(λh)). Codes: 1 is the answer and 0 the first extra value, as the asked bit
has them, then 2, 3, ... the others in domain order; with one extra value ("not asked" alone)
the pair and its aggregate are exactly the asked bit's. With special values the aggregate keeps
per code its count and Σy (`StatusMomentsAggregate`), and each extra value's share and the mean
among those who gave an answer are the GRR indicator estimates and the same ratio (`estimate`).

Estimates, per report: Z = (b - q)/(p - q) is unbiased for the asked indicator A, and
E[y - d] = E[A·(x - d)]. So π̂ = mean Z estimates the share asked (1 - π̂ the share not asked,
with the sample variance of Z), and the mean among those asked is the ratio
μ̂ = d + mean(y - d)/π̂. Its delta-method variance is the sample variance of the linearized
u = (y - d) - (μ̂ - d)·Z over n·π̂² (numerator, denominator and their covariance, per respondent):
Var ≈ [Var Z_noise... ] written out in `estimate`. The aggregate keeps the exact integer sums
that takes: n, Σb, Σy, Σy², Σb·y.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from ..aggregates import Aggregate, _count, _mapping
from ..errors import AggregateError, AnswerError, ReportError, SurveyError
from ..estimates import AmongAsked, Estimate, MeanEstimate, ValueEstimate, z_value
from ..exact import WorstOfLosses, rational_exp_floor_of, rational_floor
from ..question_types.base import NOT_ASKED, extra_values
from ..randomness import RandomSource, bernoulli, choice_except, discrete_laplace
from .base import AskedNumber, Mechanism, Misfit, reject_bool
from .geometric import MAX_ABS_REPORT

_REPORT_TAIL_BITS = 64  # as geometric.py: honest reports beyond the tail have chance < 2^-64
NOTE = ("an asked bit and a noisy number are sent for every respondent; the mean among those "
        "asked is a ratio of estimates (delta-method standard error)")


STATUS_NOTE = ("a randomized status code (an answer, a special value or 'not asked') and a noisy "
               "number are sent for every respondent; the mean among those who gave an answer "
               "is a ratio of estimates (delta-method standard error)")


def value_share(span: int) -> Fraction:
    """t: the share of ε' the number's noise takes, min(1, 5Δ/(9h)) (module docstring)."""
    half = span - span // 2
    return min(Fraction(1), Fraction(5 * span, 9 * half))


class AskedMomentsAggregate(Aggregate):
    """The exact integer sums the estimator takes: n, Σb (reports saying "asked"), Σy, Σy², Σb·y."""

    kind = "asked_moments"
    FIELDS = ("asked", "total", "squares", "asked_total")

    def __init__(self) -> None:
        self.n = 0
        self.asked = 0
        self.total = 0
        self.squares = 0
        self.asked_total = 0

    def add(self, report: Any) -> None:
        b, y = int(report[0]), int(report[1])
        self.n += 1
        self.asked += b
        self.total += y
        self.squares += y * y
        self.asked_total += b * y

    def add_many(self, reports: Any) -> None:
        pairs = np.asarray(reports, dtype=np.int64).reshape(-1, 2)
        if not pairs.size:
            return
        bits, values = pairs[:, 0], pairs[:, 1].astype(object)  # Python ints: sums are exact
        self.n += int(pairs.shape[0])
        self.asked += int(bits.sum())
        self.total += int(values.sum())
        self.squares += int((values * values).sum())
        self.asked_total += int(values[bits == 1].sum()) if bits.any() else 0

    def merge(self, other: Aggregate) -> None:
        self._check_kind(other)
        assert isinstance(other, AskedMomentsAggregate)
        self.n += other.n
        for name in self.FIELDS:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "n": self.n, **{name: getattr(self, name)
                                                    for name in self.FIELDS}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AskedMomentsAggregate:
        agg = cls()
        agg._check_kind(_mapping(data))
        agg.n = _count(data.get("n"), "n")
        for name in cls.FIELDS:
            value = data.get(name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise AggregateError(f"{name} must be an integer")
            setattr(agg, name, value)
        if not 0 <= agg.asked <= agg.n or agg.squares < 0:
            raise AggregateError("asked must lie in [0, n] and squares be >= 0")
        return agg

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AskedMomentsAggregate) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]


class StatusMomentsAggregate(Aggregate):
    """The exact integer sums of report pairs [code, y] over m status codes (special values,
    module docstring): per code its count and Σy, and Σy, Σy² over all."""

    kind = "status_moments"

    def __init__(self, codes: int = 2) -> None:
        self.n = 0
        self.counts = [0] * codes
        self.totals = [0] * codes
        self.total = 0
        self.squares = 0

    def add(self, report: Any) -> None:
        code, y = int(report[0]), int(report[1])
        self.n += 1
        self.counts[code] += 1
        self.totals[code] += y
        self.total += y
        self.squares += y * y

    def add_many(self, reports: Any) -> None:
        pairs = np.asarray(reports, dtype=np.int64).reshape(-1, 2)
        for code, y in pairs.tolist():
            self.add((code, y))

    def merge(self, other: Aggregate) -> None:
        self._check_kind(other)
        assert isinstance(other, StatusMomentsAggregate)
        if len(other.counts) != len(self.counts):
            raise AggregateError("the aggregates have different numbers of status codes")
        self.n += other.n
        self.counts = [a + b for a, b in zip(self.counts, other.counts, strict=True)]
        self.totals = [a + b for a, b in zip(self.totals, other.totals, strict=True)]
        self.total += other.total
        self.squares += other.squares

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "n": self.n, "counts": list(self.counts),
                "totals": list(self.totals), "total": self.total, "squares": self.squares}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StatusMomentsAggregate:
        agg = cls()
        agg._check_kind(_mapping(data))
        agg.n = _count(data.get("n"), "n")
        counts, totals = data.get("counts"), data.get("totals")
        if (not isinstance(counts, list) or not isinstance(totals, list)
                or len(counts) != len(totals) or len(counts) < 2):
            raise AggregateError("counts and totals must be lists of one integer per code")
        for value in (*counts, *totals, data.get("total"), data.get("squares")):
            if isinstance(value, bool) or not isinstance(value, int):
                raise AggregateError("counts, totals, total and squares must be integers")
        if any(c < 0 for c in counts) or sum(counts) != agg.n or data["squares"] < 0:
            raise AggregateError("the counts must be >= 0 and add up to n; squares >= 0")
        agg.counts, agg.totals = list(counts), list(totals)
        agg.total, agg.squares = data["total"], data["squares"]
        return agg

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StatusMomentsAggregate) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]


class AskedGeometric(Mechanism):
    """The report pair of an integer question with a "not asked" value (module docstring)."""

    name = "asked_geometric"
    # Never offered by `auto` for a plain question (no question type): skip_logic.py names it
    # for integer questions that depend on randomized answers.
    question_types: frozenset[str] = frozenset()
    summary = ("an asked bit by randomized response and geometric noise on the number (or on "
               "the middle of the range when not asked), for integer follow-up questions")
    max_options = 2 * MAX_ABS_REPORT + 1

    def __init__(self, epsilon: float, labels: range, *, extra: Sequence[Any] = (NOT_ASKED,),
                 **kwargs: Any) -> None:
        if not isinstance(labels, range) or labels.step != 1:
            raise SurveyError("domain", "an integer question needs a contiguous integer range")
        kwargs.pop("groups", None)
        super().__init__(epsilon, labels, **kwargs)
        self.extra = tuple(extra)  # the values beyond the range: special values, "not asked"
        self.codes = 1 + len(self.extra)
        # "not asked" alone: the asked bit's aggregate and estimate; else the status codes'
        self.status = self.extra != (NOT_ASKED,)
        self.low, self.high = labels.start, labels.stop - 1
        self.span = self.high - self.low
        self.default = self.low + self.span // 2
        self.half = self.span - self.span // 2
        self.rate = self.rate_for(self.k, self.epsilon)
        self.asked_epsilon = Fraction(self.epsilon) - self.rate * self.half
        e1 = rational_exp_floor_of(self.asked_epsilon)
        self.p_star = e1 / (e1 + self.codes - 1)
        self.q_star = 1 / (e1 + self.codes - 1)
        self._ratio = e1
        self._certify()

    @classmethod
    def from_question(cls, question: Any) -> AskedGeometric:
        """The pair over the question's range and its extra values (special values, then "not
        asked" where it has it)."""
        return cls(question.epsilon, question.labels, question_id=question.id,
                   extra=extra_values(question))

    def code_of(self, index: int) -> int:
        """The status code of a domain index (module docstring): 1 an answer, 0 the first extra
        value, 2, 3, ... the others."""
        if index < self.k:
            return 1
        extra = index - self.k
        return 0 if extra == 0 else extra + 1

    # --- limits and parameters -----------------------------------------------------------------

    @staticmethod
    def rate_for(k: int, epsilon: float) -> Fraction:
        """λ = t·ε'/Δ for k = Δ + 1 values (t: `value_share`)."""
        span = k - 1
        return rational_floor(epsilon) * value_share(span) / span

    @classmethod
    def report_tail(cls, k: int, epsilon: float) -> int:
        return math.ceil(_REPORT_TAIL_BITS * math.log(2) / float(cls.rate_for(k, epsilon))) + 1

    @classmethod
    def misfit(cls, k: int, epsilon: float, low: int = 0) -> Misfit | None:
        found = super().misfit(k, epsilon, low)
        if found is not None:
            return found
        high = low + k - 1
        if max(abs(low), abs(high)) > MAX_ABS_REPORT:
            return Misfit("domain", "bounds must lie within ±(2^53 - 1), the integers JSON "
                                    "carries exactly")
        tail = cls.report_tail(k, epsilon)
        if low - tail < -MAX_ABS_REPORT or high + tail > MAX_ABS_REPORT:
            return Misfit("domain", f"at epsilon {epsilon:g} the noise on [{low}, {high}] "
                                    f"reaches {tail:.3g} beyond it, past ±(2^53 - 1): narrow the "
                                    "range or raise epsilon")
        return None

    @classmethod
    def noise_variance(cls, k: int, epsilon: float) -> float:
        """Var[Z] = 2α/(α - 1)² of the number's noise, α = e^λ."""
        am1 = math.expm1(float(cls.rate_for(k, epsilon)))
        return 2 * (am1 + 1) / am1**2

    @classmethod
    def bit_variance(cls, k: int, epsilon: float, codes: int = 2) -> float:
        """pq/(p - q)²: the variance the asked bit's randomization adds to Z; with m = `codes`
        status codes (special values) GRR's at its worst over the answer code's share,
        max(q(1 - q), p(1 - p))/(p - q)²."""
        span = k - 1
        x = Fraction(epsilon) - cls.rate_for(k, epsilon) * (span - span // 2)
        e1 = float(rational_exp_floor_of(x))
        if codes == 2:
            return e1 / (e1 - 1) ** 2
        p, q = e1 / (e1 + codes - 1), 1 / (e1 + codes - 1)
        return max(q * (1 - q), p * (1 - p)) / (p - q) ** 2

    @classmethod
    def mean_variance(cls, k: int, epsilon: float, asked: float, codes: int = 2) -> float:
        """An upper bound over the answers of the one-report variance of the mean among those
        asked, when a share `asked` of respondents is asked: [Var Z_noise + π·σ² + h²·V_bit]/π²
        with σ² <= (Δ/2)² and |μ - d| <= h. The linearized u = (y - d) - (μ - d)·Z has exactly
        Var u = π·σ² + Var Z_noise + (μ - d)²·V_bit: the asked indicator's own spread
        π(1 - π)(μ - d)² enters y and Z alike and cancels (their covariance)."""
        span = k - 1
        half = span - span // 2
        return (cls.noise_variance(k, epsilon) + asked * (span / 2) ** 2
                + half**2 * cls.bit_variance(k, epsilon, codes)) / asked**2

    @classmethod
    def worst_case_variance(cls, k: int, epsilon: float) -> float:
        """The share not asked, one report: pq/(p - q)² + 1/4."""
        return cls.bit_variance(k, epsilon) + 0.25

    @classmethod
    def report_bytes(cls, k: int, epsilon: float) -> int:
        return 21

    def params(self) -> dict[str, Any]:
        return {"default": self.default, "rate": str(self.rate), "p": str(self.p_star),
                "q": str(self.q_star)}

    def privacy_loss(self) -> WorstOfLosses:
        # Two asked answers at the ends of the range; an asked answer at the end farther from
        # the default against "not asked" (module docstring).
        return WorstOfLosses(((Fraction(1), self.rate * self.span),
                              (self._ratio, self.rate * self.half)))

    def deniability(self) -> str:
        return ("your device sends a randomized yes/no for whether you were asked, and your "
                "number with random noise added, so no single report reveals either")

    # --- the respondent's side -------------------------------------------------------------------

    def encode(self, answer: Any) -> int:
        if isinstance(answer, str) and answer in self.extra:
            return self.k + self.extra.index(answer)
        if isinstance(answer, bool) or not isinstance(answer, int):
            raise AnswerError(f"the answer to {self.question_id!r} must be an integer")
        if not self.low <= answer <= self.high:
            raise AnswerError(f"{answer} is outside [{self.low}, {self.high}] for "
                              f"{self.question_id!r}; it is refused, not clamped")
        return answer - self.low

    def perturb_index(self, index: int, source: RandomSource) -> list[int]:
        asked = index < self.k
        if self.codes == 2:
            bit = int(bernoulli(self.p_star if asked else self.q_star, source))
        else:  # GRR over the status codes
            code = self.code_of(index)
            bit = (code if bernoulli(self.p_star, source)
                   else choice_except(self.codes, code, source))
        value = self.low + index if asked else self.default
        return [int(bit), value + discrete_laplace(self.rate, source)]

    def perturb_many(self, answers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        answers = np.asarray(answers, dtype=np.int64)
        asked = answers < self.k
        if self.codes == 2:
            bits = rng.random(answers.size) < np.where(asked, float(self.p_star),
                                                       float(self.q_star))
        else:
            codes = np.where(asked, 1, np.where(answers == self.k, 0, answers - self.k + 1))
            keep = rng.random(answers.size) < float(self.p_star)
            other = rng.integers(0, self.codes - 1, size=answers.size)
            bits = np.where(keep, codes, other + (other >= codes))
        values = np.where(asked, self.low + answers, self.default)
        success = -math.expm1(-float(self.rate))
        noise = rng.geometric(success, answers.size) - rng.geometric(success, answers.size)
        return np.stack([bits.astype(np.int64), values + noise], axis=1)

    # --- the aggregator's side -------------------------------------------------------------------

    def asked_number(self, reports: Any) -> AskedNumber:
        """Pairs as a design weights them: Z = (b − q)/(p − q) of the asked bit (1 − Z "not
        asked"), or with status codes Z_c = ([code = c] − q)/(p − q) per code (GRR's unbiased
        indicator: an answer's, each extra value's); the number minus the default; the
        geometric noise's known variance."""
        pairs = np.asarray(reports, dtype=np.float64).reshape(-1, 2)
        p, q = float(self.p_star), float(self.q_star)

        def indicator(code: int | None) -> np.ndarray:
            hit = pairs[:, 0] if code is None else (pairs[:, 0] == code).astype(np.float64)
            return (hit - q) / (p - q)

        if self.status:
            asked = indicator(1)
            extras = np.column_stack([indicator(self.code_of(self.k + j))
                                      for j in range(len(self.extra))])
        else:
            asked = indicator(None)
            extras = (1.0 - asked)[:, None]
        centred = pairs[:, 1] - self.default
        return AskedNumber(asked=asked, extras=extras, labels=tuple(self.extra),
                           centred=centred,
                           noise=np.full(centred.size, self.noise_variance(self.k, self.epsilon)),
                           default=float(self.default),
                           note=STATUS_NOTE if self.status else NOTE)

    @property
    def report_bounds(self) -> tuple[int, int]:
        tail = self.report_tail(self.k, self.epsilon)
        return max(self.low - tail, -MAX_ABS_REPORT), min(self.high + tail, MAX_ABS_REPORT)

    def validate_report(self, report: Any) -> list[int]:
        if not isinstance(report, list | tuple | np.ndarray) or len(report) != 2:
            raise ReportError("a report is a pair [asked bit, number]")
        bit, value = report[0], report[1]
        reject_bool(bit, "the asked bit")
        reject_bool(value, "the number")
        if not isinstance(bit, int | np.integer) or not 0 <= int(bit) < self.codes:
            raise ReportError("the asked bit must be 0 or 1" if self.codes == 2 else
                              f"the status code must be 0 to {self.codes - 1}")
        if not isinstance(value, int | np.integer):
            raise ReportError(f"the number must be an integer, got {type(value).__name__}")
        low, high = self.report_bounds
        if not low <= int(value) <= high:
            raise ReportError(f"report {int(value)} is outside [{low}, {high}], where honest "
                              f"reports fall with probability above 1 - 2^-{_REPORT_TAIL_BITS}")
        return [int(bit), int(value)]

    def validate_reports(self, reports: Sequence[Any]) -> list[Any]:
        return [self.validate_report(r) for r in reports]

    @property
    def report_width(self) -> int:
        return 2

    def new_aggregate(self) -> Aggregate:
        if self.status:
            return StatusMomentsAggregate(self.codes)
        return AskedMomentsAggregate()

    def aggregate_from_dict(self, data: Mapping[str, Any]) -> Aggregate:
        if self.status:
            agg = StatusMomentsAggregate.from_dict(data)
            if len(agg.counts) != self.codes:
                raise AggregateError(f"this question's aggregate has {self.codes} status codes")
            return agg
        return AskedMomentsAggregate.from_dict(data)

    def estimate(self, aggregate: Aggregate, confidence: float = 0.95) -> Estimate:
        if self.status:
            return self._status_estimate(aggregate, confidence)
        assert isinstance(aggregate, AskedMomentsAggregate)
        z = z_value(confidence)
        n = aggregate.n
        result = Estimate(question=self.question_id, mechanism=self.name, epsilon=self.epsilon,
                          n=n, confidence=confidence, notes=[NOTE])
        empty = MeanEstimate(None, None, None, None, None)
        result.among_asked = AmongAsked(mean=empty)
        if n == 0:
            result.not_asked = ValueEstimate(NOT_ASKED, None, None, None, None, None, None)
            return result
        p, q = float(self.p_star), float(self.q_star)
        gap = p - q
        d = self.default
        asked = (aggregate.asked / n - q) / gap  # π̂ = mean Z
        z_square = (aggregate.asked * (1 - q) ** 2 + (n - aggregate.asked) * q**2) / (gap**2 * n)
        var_z = max(z_square - asked**2, 0.0) * n / max(n - 1, 1)
        se_na = math.sqrt(var_z / n)
        bound = self.worst_case_variance(self.k, self.epsilon) / n
        share = 1 - asked
        result.not_asked = ValueEstimate(NOT_ASKED, share, se_na, bound, share - z * se_na,
                                         share + z * se_na, min(max(share, 0.0), 1.0))
        if asked <= 0:
            result.notes.append("the estimated share asked is not positive: too few respondents "
                                "to estimate the mean among those asked")
            return result
        # Moments of (y - d) and Z from the exact sums (all divided by n).
        s1, s2, sb = aggregate.total, aggregate.squares, aggregate.asked_total
        yy = (s2 - 2 * d * s1 + n * d * d) / n
        yz = (sb - d * aggregate.asked - q * (s1 - d * n)) / (gap * n)
        ratio = (s1 / n - d) / asked  # μ̂ - d
        var_u = max(yy - 2 * ratio * yz + ratio**2 * z_square, 0.0) * n / max(n - 1, 1)
        se = math.sqrt(var_u / n) / asked
        mean = d + ratio
        result.among_asked = AmongAsked(mean=MeanEstimate(mean, se, None, mean - z * se,
                                                          mean + z * se))
        return result

    def _status_estimate(self, aggregate: Aggregate, confidence: float) -> Estimate:
        """Status codes with special values: each extra value's share of everyone (GRR's
        unbiased indicator Z_j = ([code = j] - q)/(p - q), its sample variance over n), and
        the mean among those who gave an answer, μ̂ = d + mean(y - d)/π̂ with π̂ the answer
        code's share, its delta-method variance the sample variance of u = (y - d) - (μ̂ - d)·Z₁
        over n·π̂² (module docstring)."""
        from ..among_asked import special_note

        assert isinstance(aggregate, StatusMomentsAggregate)
        z = z_value(confidence)
        n = aggregate.n
        special = [v for v in self.extra if v != NOT_ASKED]
        result = Estimate(question=self.question_id, mechanism=self.name, epsilon=self.epsilon,
                          n=n, confidence=confidence,
                          notes=[STATUS_NOTE, special_note(special)] if special else [NOTE])
        result.among_asked = AmongAsked(mean=MeanEstimate(None, None, None, None, None))
        empty = [ValueEstimate(v, None, None, None, None, None, None) for v in self.extra]
        if n == 0:
            result.special = empty[:len(special)]
            result.not_asked = empty[-1] if NOT_ASKED in self.extra else None
            return result
        p, q = float(self.p_star), float(self.q_star)
        gap = p - q
        counts = np.asarray(aggregate.counts, dtype=float)
        f = (counts / n - q) / gap  # each code's share

        def share(code: int, value: Any) -> ValueEstimate:
            z_sq = (counts[code] * (1 - q) ** 2 + (n - counts[code]) * q**2) / (gap**2 * n)
            se = math.sqrt(max(z_sq - f[code] ** 2, 0.0) / max(n - 1, 1))
            est = float(f[code])
            return ValueEstimate(value, est, se, None, est - z * se, est + z * se,
                                 min(max(est, 0.0), 1.0))

        rows = [share(self.code_of(self.k + i), v) for i, v in enumerate(self.extra)]
        result.special = rows[:len(special)] or None
        result.not_asked = rows[-1] if NOT_ASKED in self.extra else None
        answered = float(f[1])
        if answered <= 0:
            result.notes.append("the estimated share who gave an answer is not positive: too "
                                "few respondents to estimate the mean among them")
            return result
        d = self.default
        # Z₁ per code: (1 - q)/gap for code 1, -q/gap for the others.
        z1 = np.full(self.codes, -q / gap)
        z1[1] = (1 - q) / gap
        totals = np.asarray(aggregate.totals, dtype=float)
        yy = (aggregate.squares - 2 * d * aggregate.total + n * d * d) / n
        yz = float(z1 @ (totals - d * counts)) / n
        z_square = float((z1 * z1) @ counts) / n
        ratio = (aggregate.total / n - d) / answered  # μ̂ - d
        var_u = max(yy - 2 * ratio * yz + ratio**2 * z_square, 0.0) * n / max(n - 1, 1)
        se = math.sqrt(var_u / n) / answered
        mean = d + ratio
        result.among_asked = AmongAsked(mean=MeanEstimate(mean, se, None, mean - z * se,
                                                          mean + z * se))
        return result
