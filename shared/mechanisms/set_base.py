"""What every mechanism for a `multiselect` question (check all that apply) shares.

The true answer is a set S of the k options with required_min <= |S| <= max_selected = m
(required_min 0: the empty set is an answer; 1: at least one option). Exclusive options
("None of these", "Don't know") can only be selected alone: the allowed family is then the
sets of that size among the other k' = k − |E| options, plus each exclusive option alone
(docs/multiselect.md, "Exclusive options"). The neighbouring relation
every multiselect mechanism is proven for: ANY two allowed answer sets S, S' (not sets that
differ in one option): for every report y, P[y | S] <= e^ε · P[y | S'].

Inside a mechanism a set is an int bitmask (bit j: option j selected); `encode` turns the
answer, a list of distinct option labels in any order, into it and refuses anything else.
Simulation samplers take an (n, k) boolean matrix of true sets.

Every mechanism here is "pure" per option: a report supports option j with probability p* when
j is in S and q* when it is not, whatever else S holds, so f̂_j = (C_j/n − q*)/(p* − q*) is
unbiased for the share of respondents who selected j, with the per-option variance of
shared/reference/ldp-formulas.md. Shares need not sum to 1 (their sum is the mean number
selected, estimated with its own variance: `count_variance`); the consistent view clips each
share to [0, 1].

How options can differ between two allowed sets (`SetShape.pairs`): S \\ S' has a options,
S' \\ S has b, they share c; the pair exists iff some c >= 0 gives a + c <= m, b + c <= m,
a + b + c <= k and a + c, b + c >= required_min. Bitwise mechanisms (option_rr, set_ue) prove
their ε from the largest α^a·β^b over these pairs. With exclusive options the pairs are those of
the non-exclusive sets (k' options, at most m' = min(m, k') selected), plus (1, s) and (s, 1)
for an exclusive option against a non-exclusive set of s options (they are disjoint), plus
(1, 1) between two exclusive options: Δ = max(min(2m', k'), m' + 1) (for m' >= 1), and every
allowed set has at most m' options, which is what padding pads to.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from ..aggregates import Aggregate
from ..errors import AnswerError, SurveyError
from ..estimates import Estimate, MeanEstimate, empty_value_estimates, value_estimates, z_value
from ..exact import exp_lower, simplest_between
from ..question_types.words import CLIP, SHARES_NOTE
from .base import Mechanism

# Options of one multiselect question: a page of checkboxes, a k-bit report, a 64-bit mask.
MAX_SET_OPTIONS = 64
_ROUNDING = Fraction(1, 2**32)


def exp_floor(x: Fraction) -> Fraction:
    """A short rational <= e^x (x >= 0 exact): `exact.rational_exp_floor` for a rational x,
    such as ε/Δ, that no float holds exactly."""
    bound = exp_lower(x)
    return simplest_between(bound * (1 - _ROUNDING), bound)


@dataclass(frozen=True)
class SetShape:
    """The allowed answers: sets of `required_min` to `max_selected` of k options, where an
    `exclusive` option (an index, ascending) can only be selected alone."""

    k: int
    max_selected: int
    required_min: int = 0
    exclusive: tuple[int, ...] = ()

    def problem(self) -> tuple[str, str] | None:
        """(field, problem) when the shape is not a valid multiselect domain."""
        if not 2 <= self.k <= MAX_SET_OPTIONS:
            return "options", f"needs 2 to {MAX_SET_OPTIONS} options, got {self.k}"
        if not 1 <= self.max_selected <= self.k:
            return "max_selected", f"must be an integer from 1 to {self.k} (the options)"
        if self.required_min not in (0, 1):
            return "required_min", "must be 0 (nothing selected is an answer) or 1"
        if (list(self.exclusive) != sorted(set(self.exclusive))
                or any(not 0 <= j < self.k for j in self.exclusive)):
            return "exclusive", "must list distinct options of the question"
        if self.exclusive and self.free < 1:
            return "exclusive", ("leaves no option that can be selected with another: list "
                                 "only the options that must be selected alone")
        return None

    @property
    def free(self) -> int:
        """k': the options that may be selected together (not exclusive)."""
        return self.k - len(self.exclusive)

    @property
    def largest(self) -> int:
        """m': the most options an allowed set holds (min(m, k') with exclusive options)."""
        return min(self.max_selected, self.free) if self.exclusive else self.max_selected

    @property
    def exclusive_mask(self) -> int:
        return sum(1 << j for j in self.exclusive)

    def allows(self, mask: int) -> bool:
        """Whether the set with this bitmask is an allowed answer."""
        size = mask.bit_count()
        if not self.required_min <= size <= self.max_selected:
            return False
        return not mask & self.exclusive_mask or size == 1

    def allowed_masks(self) -> list[int]:
        """Every allowed set's bitmask, ascending (small k only: tests, exact channels)."""
        return [mask for mask in range(1 << self.k) if self.allows(mask)]

    def with_not_asked(self) -> SetShape:
        """The shape over the k options and a last "not asked" pseudo-option (skip logic): with
        exclusive options, "not asked" is one more (it is never selected with anything);
        without, the superset of every set of allowed size (shared/multiselect_not_asked.py)."""
        extra = (*self.exclusive, self.k) if self.exclusive else ()
        return SetShape(self.k + 1, self.max_selected, self.required_min, extra)

    def feasible(self, a: int, b: int) -> bool:
        """Whether two allowed sets can differ by a options one way and b the other."""
        if self.exclusive:
            sizes = range(self.required_min, self.largest + 1)  # the non-exclusive sets'
            return ((a, b) == (0, 0) or ((a, b) == (1, 1) and len(self.exclusive) >= 2)
                    or (a == 1 and b in sizes) or (b == 1 and a in sizes)
                    or SetShape(max(self.free, 1), self.largest,
                                self.required_min).feasible(a, b))
        c = max(0, self.required_min - min(a, b))  # the least overlap both sizes allow
        m = self.max_selected
        return a + c <= m and b + c <= m and a + b + c <= self.k

    def pairs(self) -> list[tuple[int, int]]:
        """For each a, (a, the largest b): every ratio α^a·β^b with α, β >= 1 is largest on
        these."""
        out = []
        for a in range(self.largest + 1):
            best = max((b for b in range(self.largest + 1) if self.feasible(a, b)),
                       default=None)
            if best is not None:
                out.append((a, best))
        return out

    def max_difference(self) -> int:
        """Δ: the most options two allowed sets differ in (min(2m, k); with exclusive options
        max(min(2m', k'), m' + 1); tests enumerate)."""
        return max(a + b for a, b in self.pairs())

    def to_dict(self) -> dict[str, Any]:
        return {"max_selected": self.max_selected, "required_min": self.required_min}


class SetMechanism(Mechanism):
    """A mechanism for a multiselect question; subclasses set `p_star`/`q_star`, the sampler,
    the report format and the variance of the number selected."""

    question_types: ClassVar[frozenset[str]] = frozenset({"multiselect"})
    max_options: ClassVar[int] = MAX_SET_OPTIONS
    p_star: Fraction
    q_star: Fraction

    def __init__(self, epsilon: float, labels: Any, *, max_selected: int | None = None,
                 required_min: int = 0, question_id: str = "",
                 groups: Mapping[str, Any] | None = None, exclusive: Iterable[str] = ()) -> None:
        self.question_id = question_id
        if not 2 <= len(labels) <= MAX_SET_OPTIONS:
            raise SurveyError(self._at("options"), f"needs 2 to {MAX_SET_OPTIONS} options, "
                              f"got {len(labels)}")
        super().__init__(epsilon, labels, question_id=question_id)
        if groups:
            raise SurveyError(self._at("groups"), "a multiselect question has no groups")
        m = self.k if max_selected is None else max_selected
        exclusive = list(exclusive)
        unknown = [x for x in exclusive if self._index.get(x) is None]
        if unknown or len(set(exclusive)) != len(exclusive):
            raise SurveyError(self._at("exclusive"), f"must list distinct options of the "
                              f"question, not {unknown[0] if unknown else exclusive!r}")
        self.shape = SetShape(self.k, m, required_min,
                              tuple(sorted(self._index[x] for x in exclusive)))
        problem = self.shape.problem() or self.shape_misfit(self.shape)
        if problem is not None:
            raise SurveyError(self._at(problem[0]), problem[1])
        self.max_selected, self.required_min = m, required_min

    def _at(self, field: str) -> str:
        return f"questions.{self.question_id}.{field}" if self.question_id else field

    @classmethod
    def from_question(cls, question: Any) -> Mechanism:
        shape = question.multiselect
        return cls(question.epsilon, question.labels, question_id=question.id,
                   max_selected=shape.max_selected, required_min=shape.required_min,
                   exclusive=[question.labels[j] for j in shape.exclusive])

    # --- limits and planning (per (k, m, required_min, ε): no mechanism is built) ---------

    @classmethod
    def shape_misfit(cls, shape: SetShape) -> tuple[str, str] | None:
        """(field, problem) when this mechanism does not serve sets of this shape."""
        return None

    @classmethod
    @abstractmethod
    def probabilities(cls, shape: SetShape, epsilon: float) -> tuple[Fraction, Fraction]:
        """(p*, q*): P[a report supports option j | j in S] and | j not in S], exactly."""

    @classmethod
    def set_variances(cls, shape: SetShape, epsilon: float) -> tuple[float, float]:
        """(worst, average): one report's variance of an option's share, worst case over the
        truth (the planner's margin), and averaged over the k options with the truth the worst
        for that average (the mean number selected anywhere in [required_min, m]): what `auto`
        minimizes, as for categorical questions (shared/mechanisms/__init__.py)."""
        p, q = (float(x) for x in cls.probabilities(shape, epsilon))
        v_in, v_out = p * (1 - p), q * (1 - q)
        scale = (p - q) ** 2
        worst = max(v_in, v_out) / scale
        selected = shape.largest if v_in > v_out else shape.required_min
        return worst, (shape.k * v_out + selected * (v_in - v_out)) / (shape.k * scale)

    @classmethod
    def describe_limits(cls) -> str:
        return (f"ε {cls.min_epsilon:g} to {cls.max_epsilon:g}; 2 to {MAX_SET_OPTIONS} options, "
                "sets of required_min..max_selected of them")

    @classmethod
    def worst_case_variance(cls, k: int, epsilon: float) -> float:
        """With every option allowed (m = k): see `set_variances` for any shape."""
        return cls.set_variances(SetShape(k, k), epsilon)[0]

    @classmethod
    def average_variance(cls, k: int, epsilon: float) -> float:
        return cls.set_variances(SetShape(k, k), epsilon)[1]

    # --- the respondent's side -------------------------------------------------------------

    def encode(self, answer: Any) -> int:
        """The bitmask of a true answer: a list (or tuple/set) of distinct option labels
        whose size the question allows; anything else is refused, never trimmed."""
        of = f" to {self.question_id!r}" if self.question_id else ""
        if isinstance(answer, str) or not isinstance(answer, list | tuple | set | frozenset):
            raise AnswerError(f"{answer!r} is not a list of options{of}: a multiselect answer "
                              f"lists the options selected ([] for none)")
        mask = 0
        for label in answer:
            index = self._index.get(label) if isinstance(label, str) else None
            if index is None:
                raise AnswerError(f"{label!r} is not one of the options{of}")
            if mask >> index & 1:
                raise AnswerError(f"{label!r} is listed twice{of}")
            mask |= 1 << index
        size = mask.bit_count()
        if size > self.max_selected:
            raise AnswerError(f"{size} options selected{of}: at most {self.max_selected} may be")
        if size < self.required_min:
            raise AnswerError(f"nothing selected{of}: select at least one option")
        alone = mask & self.shape.exclusive_mask
        if alone and size > 1:
            which = self.labels[members(alone, self.k)[0]]
            raise AnswerError(f"{which!r} can only be selected alone{of}: select it or the "
                              f"other options, not both")
        return mask

    def canonical(self, answer: Any) -> list[str]:
        """The answer as its labels in the options' order (what a memo or ledger keys on)."""
        return self.decode(self.encode(answer))

    def decode(self, mask: int) -> list[str]:
        return [label for j, label in enumerate(self.labels) if mask >> j & 1]

    def masks(self, sets: np.ndarray) -> list[int]:
        """Bitmasks of an (n, k) boolean matrix's rows (tests and vectors)."""
        weights = [1 << j for j in range(self.k)]
        return [sum(w for w, bit in zip(weights, row, strict=True) if bit) for row in sets]

    def check_sets(self, sets: np.ndarray) -> np.ndarray:
        """An (n, k) boolean matrix of allowed sets (simulation input), else AnswerError."""
        sets = np.asarray(sets, dtype=bool)
        if sets.ndim != 2 or sets.shape[1] != self.k:
            raise AnswerError(f"expected an (n, {self.k}) matrix of selected options")
        sizes = sets.sum(axis=1)
        if sizes.size and (sizes.max() > self.max_selected or sizes.min() < self.required_min):
            raise AnswerError(f"a set outside {self.required_min}..{self.max_selected} options")
        if self.shape.exclusive and sizes.size:
            with_exclusive = sets[:, list(self.shape.exclusive)].any(axis=1)
            if (with_exclusive & (sizes > 1)).any():
                raise AnswerError("a set with an exclusive option and another option")
        return sets

    @abstractmethod
    def perturb_many(self, answers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Reports for an (n, k) boolean matrix of true sets (simulation only)."""

    # --- the aggregator's side -------------------------------------------------------------

    @abstractmethod
    def support_counts(self, aggregate: Aggregate) -> np.ndarray:
        """C_j: how many reports support each of the k options."""

    @abstractmethod
    def count_variance(self, selected: float, n: int) -> float:
        """Variance of the estimated mean number selected when it truly is `selected`
        (n reports; for a fixed population, or an upper bound where so documented)."""

    def params(self) -> dict[str, Any]:
        return {"p": str(self.p_star), "q": str(self.q_star)}

    def option_variance(self, share: Any, n: int) -> Any:
        """Variance of an option's estimated share when its true share is `share`."""
        p, q = float(self.p_star), float(self.q_star)
        return (share * p * (1 - p) + (1 - share) * q * (1 - q)) / (n * (p - q) ** 2)

    def estimate(self, aggregate: Aggregate, confidence: float = 0.95) -> Estimate:
        """Each option's share of respondents who selected it (unbiased, may leave [0, 1]),
        with plug-in standard error, worst-case bound and interval, and the mean number of
        options selected."""
        z = z_value(confidence)
        n = aggregate.n
        result = Estimate(question=self.question_id, mechanism=self.name, epsilon=self.epsilon,
                          n=n, confidence=confidence, consistent_method=CLIP,
                          notes=[SHARES_NOTE])
        if n == 0:
            result.categories = empty_value_estimates(self.labels)
            result.mean = MeanEstimate(None, None, None, None, None)
            return result
        p, q = float(self.p_star), float(self.q_star)
        f_hat = (self.support_counts(aggregate).astype(float) / n - q) / (p - q)
        variance = self.option_variance(np.clip(f_hat, 0.0, 1.0), n)
        bound = np.full(self.k, max(self.option_variance(0.0, n), self.option_variance(1.0, n)))
        result.categories = value_estimates(self.labels, f_hat, variance, bound,
                                            np.clip(f_hat, 0.0, 1.0), z)
        total = float(f_hat.sum())
        low, high = self.required_min, self.shape.largest
        se = max(self.count_variance(min(max(total, low), high), n), 0.0) ** 0.5
        result.mean = MeanEstimate(total, se, self.count_variance_bound(n), total - z * se,
                                   total + z * se)
        return result

    def count_variance_bound(self, n: int) -> float:
        """Worst case over the mean number selected: on a fine grid of [required_min, m] (the
        variances are linear or concave in it, so the grid's ends and vertex are covered)."""
        grid = np.linspace(self.required_min, self.shape.largest, 65)
        return float(max(self.count_variance(float(x), n) for x in grid))


def members(mask: int, k: int) -> list[int]:
    """The option indices of a bitmask, ascending."""
    return [j for j in range(k) if mask >> j & 1]


def set_sizes(sets: np.ndarray) -> np.ndarray:
    return np.asarray(sets, dtype=bool).sum(axis=1)


def nth_selected(sets: np.ndarray, which: np.ndarray, selected: bool = True) -> np.ndarray:
    """Per row, the column of its `which`-th (0-based) True (or False) entry."""
    marks = np.asarray(sets, dtype=bool) if selected else ~np.asarray(sets, dtype=bool)
    running = np.cumsum(marks, axis=1)
    return np.argmax(running > np.asarray(which)[:, None], axis=1)


def labels_of(items: Iterable[int], labels: Any) -> list[Any]:
    return [labels[i] for i in items]
