"""A decimal question that depends on randomized answers: an asked bit and a grid mean report.

Skip logic (shared/skip_logic.py) must not let the server learn whether such a question was
asked ("Do you gamble? If yes: how much did you lose?"), so the device always sends a report
pair [b, i]:

- b, the asked bit: 1 with probability p when the question was asked, q = 1 - p when not
  (binary randomized response, p = e₁/(e₁ + 1) for a short rational e₁);
- i, a report cell of a grid mean mechanism (duchi, piecewise or hybrid, numeric_grid.py) at
  ε₂ on the grid index j of the answer when asked, and on the default grid index
  d = ⌊(k - 1)/2⌋ (the middle of the grid) when not.

Privacy, exactly. The true answer is a value of {0..k-1} ∪ {not asked}. The parts are drawn
independently, so for two values the worst ratio of a report pair is the product of the parts'
worst ratios for those two values. Two asked answers: b has the same law, i's worst ratio is
R₂ = max over cells and answers of P[i|j]/P[i|j'] (the mean part's certified channel ratio).
An answer j against "not asked": e₁ · R_d, R_d = max over cells and j of the ratios between
P[i|j] and P[i|d] either way, computed from the part's exact integer weights over every j
(an exact upper bound R_d = R₂ is taken when k·cells exceeds EXACT_CELLS, which only makes the
claim larger). The certified loss is max(R₂, e₁·R_d) (`WorstOfLosses`), decided in rational
arithmetic; e₁ is the short rational just below e^ε / R_d, so the bit takes whatever ε the
mean part leaves unused against the middle of the grid.

The ε split (`choose_split`). ε₂ = t·ε for a share t in {1/10, ..., 9/10} and the mean part
among duchi, piecewise and hybrid, both chosen to minimize the worst-case one-report variance
of the mean among those asked on the [-1, 1] scale at a share π = 1/2 asked,
[V₂ + π·1 + 1·V_b]/π² (V₂ the part's worst Var_j at ε₂, σ² <= 1 and |t_j - t_d| <= 1,
V_b = e₁/(e₁ - 1)² with e₁ = e^((1 - t)ε)); `params` carry the part, t and ε₂ so that the
signed manifest states the split.

Estimates, per report (as asked_geometric.py, on the [-1, 1] scale of the grid): y = v_i is
unbiased for the grid point t of what the part randomized, Z = (b - q)/(p - q) for the asked
indicator A, and E[y - t_d] = E[A·(t_x - t_d)]. So π̂ = mean Z (1 - π̂ the share not asked) and
the mean among those asked is μ̂ = t_d + mean(y - t_d)/π̂, its delta-method variance the sample
variance of u = (y - t_d) - (μ̂ - t_d)·Z over n·π̂²; both are mapped to the question's units by
the grid's scale. The aggregate keeps the exact counts of each (bit, cell).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np

from ..aggregates import Aggregate, _count, _mapping
from ..errors import AggregateError, AnswerError, ReportError, SurveyError
from ..estimates import AmongAsked, Estimate, MeanEstimate, ValueEstimate, z_value
from ..exact import WorstOfLosses, channel_ratio, exp_lower, rational_floor, simplest_between
from ..question_types.base import NOT_ASKED
from ..randomness import RandomSource, bernoulli
from .base import AskedNumber, Mechanism, reject_bool
from .duchi import Duchi
from .hybrid import Hybrid
from .numeric_grid import GridMean, grid_point
from .piecewise import Piecewise

MEAN_PARTS: dict[str, type[GridMean]] = {cls.name: cls for cls in (Duchi, Piecewise, Hybrid)}
SHARES = tuple(Fraction(i, 10) for i in range(1, 10))  # the ε₂ shares `choose_split` weighs
PLAN_ASKED = 0.5  # the share asked at which the split is chosen
EXACT_CELLS = 40_000  # k·cells up to which R_d is computed over every answer (a second or two)
_ROUNDING = Fraction(1, 10**6)  # e₁ lies within this relative distance below e^ε / R_d
NOTE = ("an asked bit and a grid mean report are sent for every respondent; the mean among "
        "those asked is a ratio of estimates (delta-method standard error)")


def bit_variance(e1: float) -> float:
    """pq/(p - q)² of the asked bit for p/q = e₁: e₁/(e₁ - 1)²."""
    return e1 / (e1 - 1) ** 2


def split_variance(cls: type[GridMean], k: int, epsilon: float, share: Fraction,
                   asked: float = PLAN_ASKED) -> float | None:
    """The worst-case one-report variance of the mean among those asked, [-1, 1] scale (module
    docstring); None when the part does not fit (k, ε₂)."""
    mean_epsilon = float(share) * epsilon
    if cls.misfit(k, mean_epsilon) is not None:
        return None
    e1 = math.exp((1 - float(share)) * epsilon)
    return (cls.scaled_worst_case_variance(k, mean_epsilon) + asked
            + bit_variance(e1)) / asked**2


def choose_split(k: int, epsilon: float, mean: str | None = None) -> tuple[str, Fraction, str]:
    """(mean part, share t of ε for it, reason): the lowest `split_variance` over SHARES and the
    mean parts (or the one named); ValueError when none fits."""
    names = [mean] if mean is not None else list(MEAN_PARTS)
    found = []
    for name in names:
        for share in SHARES:
            value = split_variance(MEAN_PARTS[name], k, epsilon, share)
            if value is not None:
                found.append((value, name, share))
    if not found:
        raise ValueError(f"no mean mechanism fits k={k} at a share of epsilon={epsilon:g}")
    value, name, share = min(found)
    reason = (f"auto: a question that depends on randomized answers sends an asked bit and a "
              f"grid mean report (asked_grid): epsilon {epsilon:g} split {share} to the mean "
              f"by {name} and the rest to the asked bit, the lowest worst-case variance of the "
              f"mean among those asked with half asked ({value:.4g} on [-1, 1] per report)")
    return name, share, reason


@lru_cache(maxsize=64)
def _default_ratio(name: str, k: int, mean_epsilon: float) -> Fraction:
    """R_d of mean part `name` on k grid values at ε₂ (cached: every build of the question's
    mechanism asks it)."""
    part = MEAN_PARTS[name](mean_epsilon, range(k))
    d = part.row((k - 1) // 2)
    worst = Fraction(1)
    for j in range(k):
        found = channel_ratio([part.row(j), d])
        if found is None:
            raise SurveyError("params", f"{name} has a report impossible under one answer and "
                                        "possible under another")
        worst = max(worst, found)
    return worst


class AskedCellsAggregate(Aggregate):
    """The exact count of each (asked bit, report cell) pair."""

    kind = "asked_cells"

    def __init__(self, cells: int = 2) -> None:
        self.n = 0
        self.counts = [[0] * cells, [0] * cells]

    def add(self, report: Any) -> None:
        self.n += 1
        self.counts[int(report[0])][int(report[1])] += 1

    def add_many(self, reports: Any) -> None:
        pairs = np.asarray(reports, dtype=np.int64).reshape(-1, 2)
        cells = len(self.counts[0])
        for bit in (0, 1):
            found = np.bincount(pairs[pairs[:, 0] == bit, 1], minlength=cells)
            self.counts[bit] = [a + int(b) for a, b in zip(self.counts[bit], found, strict=True)]
        self.n += int(pairs.shape[0])

    def merge(self, other: Aggregate) -> None:
        self._check_kind(other)
        assert isinstance(other, AskedCellsAggregate)
        if len(other.counts[0]) != len(self.counts[0]):
            raise AggregateError("the aggregates have different numbers of report cells")
        self.n += other.n
        self.counts = [[a + b for a, b in zip(mine, theirs, strict=True)]
                       for mine, theirs in zip(self.counts, other.counts, strict=True)]

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "n": self.n, "counts": [list(row) for row in self.counts]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], cells: int = 2) -> AskedCellsAggregate:
        agg = cls(cells)
        agg._check_kind(_mapping(data))
        agg.n = _count(data.get("n"), "n")
        counts = data.get("counts")
        if (not isinstance(counts, list) or len(counts) != 2
                or any(not isinstance(row, list) or len(row) != cells for row in counts)):
            raise AggregateError(f"counts must be two lists of {cells} integers (asked bit 0, 1)")
        for row in counts:
            for value in row:
                if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                    raise AggregateError("counts must be integers >= 0")
        if sum(map(sum, counts)) != agg.n:
            raise AggregateError("the counts must add up to n")
        agg.counts = [list(row) for row in counts]
        return agg

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AskedCellsAggregate) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]


class AskedGrid(Mechanism):
    """The report pair of a decimal question with a "not asked" value (module docstring)."""

    name = "asked_grid"
    # Never offered by `auto` for a plain question: the decimal unit names it for a decimal that
    # depends on randomized answers.
    question_types: frozenset[str] = frozenset()
    summary = ("an asked bit by randomized response and a grid mean report of the number (or "
               "of the middle of the grid when not asked), for decimal follow-up questions")

    def __init__(self, epsilon: float, labels: range, *, scale: Any, mean: str,
                 share: Fraction, question_id: str = "", **kwargs: Any) -> None:
        if not isinstance(labels, range) or labels.step != 1 or labels.start != 0:
            raise SurveyError("domain", "asked_grid runs on a grid's indices 0..k-1")
        if mean not in MEAN_PARTS:
            raise SurveyError("params", f"asked_grid's mean part must be one of "
                                        f"{', '.join(MEAN_PARTS)}, not {mean!r}")
        if not (isinstance(share, Fraction) and 0 < share < 1):
            raise SurveyError("params", "asked_grid's mean_share must lie strictly between 0 "
                                        "and 1")
        kwargs.pop("groups", None)
        super().__init__(epsilon, labels, question_id=question_id, **kwargs)
        self.scale = scale
        self.share = share
        self.mean_epsilon = float(rational_floor(epsilon) * share)
        self.part = MEAN_PARTS[mean](self.mean_epsilon, range(self.k), question_id=question_id)
        self.default = (self.k - 1) // 2
        self.default_point = grid_point(self.default, self.k)
        self.cells = self.part.index_count
        part_loss = self.part.privacy_loss()
        if part_loss is None or part_loss.ratio is None:
            raise SurveyError("params", f"{mean}'s channel has no finite ratio")
        self.mean_ratio: Fraction = part_loss.ratio
        self.default_ratio = self.ratio_against_default()
        bound = exp_lower(Fraction(self.epsilon)) / self.default_ratio
        if bound * (1 - _ROUNDING) <= 1:
            raise SurveyError("epsilon", f"at epsilon {self.epsilon:g} the mean part leaves "
                                         "nothing for the asked bit")
        self._ratio = simplest_between(bound * (1 - _ROUNDING), bound)  # e₁
        self.p_star = self._ratio / (self._ratio + 1)
        self.q_star = 1 / (self._ratio + 1)
        self._certify()

    @classmethod
    def from_question(cls, question: Any) -> AskedGrid:
        """Built from a decimal question's grid and its params (mean part and share)."""
        spec = question.spec
        return cls(question.epsilon, range(spec.k), scale=spec.scale,
                   mean=question.params["mean"], share=Fraction(question.params["mean_share"]),
                   question_id=question.id)

    def ratio_against_default(self) -> Fraction:
        """R_d: the worst ratio between an answer's row and the default's, either way, exact
        from the part's channel (module docstring; R₂ beyond EXACT_CELLS)."""
        if self.k * self.cells > EXACT_CELLS:
            return self.mean_ratio
        return _default_ratio(self.part.name, self.k, self.mean_epsilon)

    # --- limits and parameters -----------------------------------------------------------------

    @classmethod
    def worst_case_variance(cls, k: int, epsilon: float) -> float:
        """The share not asked, one report, at the chosen split: pq/(p - q)² + 1/4."""
        _, share, _ = choose_split(k, epsilon)
        return bit_variance(math.exp((1 - float(share)) * epsilon)) + 0.25

    @classmethod
    def report_bytes(cls, k: int, epsilon: float) -> int:
        return 8 + len(str(k))

    def params(self) -> dict[str, Any]:
        return {"mean": self.part.name, "mean_share": str(self.share),
                "mean_epsilon": self.mean_epsilon, "default": self.default,
                "p": str(self.p_star), "q": str(self.q_star)}

    def privacy_loss(self) -> WorstOfLosses:
        # Two asked answers (the part's worst ratio); an asked answer against "not asked".
        return WorstOfLosses(((self.mean_ratio, Fraction(0)),
                              (self._ratio * self.default_ratio, Fraction(0))))

    def deniability(self) -> str:
        return ("your device sends a randomized yes/no for whether you were asked, and a "
                "randomized version of your number, so no single report reveals either")

    # --- the respondent's side -------------------------------------------------------------------

    def encode(self, answer: Any) -> int:
        if isinstance(answer, str) and answer == NOT_ASKED:
            return self.k
        if self.scale is None:
            raise AnswerError("asked_grid needs the grid's scale to read an answer")
        return int(self.scale.index(answer, self.question_id))

    def perturb_index(self, index: int, source: RandomSource) -> list[int]:
        asked = index < self.k
        bit = int(bernoulli(self.p_star if asked else self.q_star, source))
        cell = self.part.perturb_index(index if asked else self.default, source)
        return [bit, int(cell)]

    def perturb_many(self, answers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Simulation only (a numpy Generator is not a CSPRNG)."""
        answers = np.asarray(answers, dtype=np.int64)
        asked = answers < self.k
        bits = rng.random(answers.size) < np.where(asked, float(self.p_star),
                                                   float(self.q_star))
        cells = self.part.perturb_many(np.where(asked, answers, self.default), rng)
        return np.stack([bits.astype(np.int64), np.asarray(cells, dtype=np.int64)], axis=1)

    # --- the aggregator's side -------------------------------------------------------------------

    def validate_report(self, report: Any) -> list[int]:
        if not isinstance(report, list | tuple | np.ndarray) or len(report) != 2:
            raise ReportError("a report is a pair [asked bit, report cell]")
        bit, cell = report[0], report[1]
        reject_bool(bit, "the asked bit")
        reject_bool(cell, "the report cell")
        if not isinstance(bit, int | np.integer) or not 0 <= int(bit) <= 1:
            raise ReportError("the asked bit must be 0 or 1")
        if not isinstance(cell, int | np.integer) or not 0 <= int(cell) < self.cells:
            raise ReportError(f"the report cell must be an integer from 0 to {self.cells - 1}")
        return [int(bit), int(cell)]

    def validate_reports(self, reports: Sequence[Any]) -> list[Any]:
        return [self.validate_report(r) for r in reports]

    @property
    def report_width(self) -> int:
        return 2

    def new_aggregate(self) -> Aggregate:
        return AskedCellsAggregate(self.cells)

    def aggregate_from_dict(self, data: Mapping[str, Any]) -> Aggregate:
        return AskedCellsAggregate.from_dict(data, self.cells)

    def sent_value(self, cell: int) -> Fraction:
        """The number a report cell stands for, in the question's units (unbiased for what the
        part randomized)."""
        index = Fraction(self.k - 1, 2) * (1 + self.part.values[cell])
        return Fraction(self.scale.origin) + Fraction(self.scale.step) * index

    def asked_number(self, reports: Any) -> AskedNumber:
        """[bit, cell] pairs as a design weights them (module docstring, in the question's
        units): Z = (b − q)/(p − q); the cell's value minus the default's; the mean part's
        plug-in randomization variance (its `value_noise`: one report cannot tell the
        variance of a grid mean report, which depends on the answer)."""
        pairs = np.asarray(reports, dtype=np.int64).reshape(-1, 2)
        p, q = float(self.p_star), float(self.q_star)
        step, half = float(self.scale.step), (self.k - 1) / 2
        cells = pairs[:, 1]
        centred = step * half * (self.part.values_float[cells] - float(self.default_point))
        noise = step * step * self.part.value_noise(cells).reshape(-1)
        asked = (pairs[:, 0] - q) / (p - q)
        return AskedNumber(asked=asked, extras=(1.0 - asked)[:, None], labels=(NOT_ASKED,),
                           centred=centred, noise=noise,
                           default=float(self.scale.value(self.default)), note=NOTE)

    def estimate(self, aggregate: Aggregate, confidence: float = 0.95) -> Estimate:
        assert isinstance(aggregate, AskedCellsAggregate)
        z = z_value(confidence)
        n = aggregate.n
        result = Estimate(question=self.question_id, mechanism=self.name, epsilon=self.epsilon,
                          n=n, confidence=confidence, notes=[NOTE])
        result.among_asked = AmongAsked(mean=MeanEstimate(None, None, None, None, None))
        if n == 0:
            result.not_asked = ValueEstimate(NOT_ASKED, None, None, None, None, None, None)
            return result
        p, q = float(self.p_star), float(self.q_star)
        gap = p - q
        d = float(self.default_point)
        values = self.part.values_float
        counts = np.asarray(aggregate.counts, dtype=float)
        asked_reports = float(counts[1].sum())
        asked = (asked_reports / n - q) / gap  # π̂ = mean Z
        z_square = (asked_reports * (1 - q) ** 2 + (n - asked_reports) * q**2) / (gap**2 * n)
        var_z = max(z_square - asked**2, 0.0) * n / max(n - 1, 1)
        se_na = math.sqrt(var_z / n)
        bound = (bit_variance(float(self._ratio)) + 0.25) / n
        share = 1 - asked
        result.not_asked = ValueEstimate(NOT_ASKED, share, se_na, bound, share - z * se_na,
                                         share + z * se_na, min(max(share, 0.0), 1.0))
        if asked <= 0:
            result.notes.append("the estimated share asked is not positive: too few respondents "
                                "to estimate the mean among those asked")
            return result
        centred = values - d  # y - t_d per cell
        by_cell = counts.sum(axis=0)
        yy = float(by_cell @ centred**2) / n
        s1 = float(by_cell @ centred) / n
        yz = (float(counts[1] @ centred) - q * s1 * n) / (gap * n)
        ratio = s1 / asked  # μ̂ - t_d
        var_u = max(yy - 2 * ratio * yz + ratio**2 * z_square, 0.0) * n / max(n - 1, 1)
        se_t = math.sqrt(var_u / n) / asked
        half = (self.k - 1) / 2
        mean = self.scale.to_units(half * (1 + d + ratio))
        se = self.scale.spread(half * se_t)
        result.among_asked = AmongAsked(mean=MeanEstimate(mean, se, None, mean - z * se,
                                                          mean + z * se))
        return result
