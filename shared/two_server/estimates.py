"""Estimates from a collected two-server batch: noisy totals in, today's estimate documents out.

A batch entry (one question, or one declared crosstab) holds the released aggregate
`noisy_sums` = true totals + both servers' noise (signed, after `decode_signed`), the number n
of reports that passed preparation, and the `NoisePlan` each server used. Respondents are
treated as a random sample of the population the survey is about, so every standard error
counts three independent sources:

- sampling: which n people answered (f(1 - f)/n for a share, σ²/n for a mean);
- local randomization, when the question sets a local ε0: the device ran today's mechanism
  first, and the estimate debiases through its channel exactly as the LDP estimators do;
- central noise: each of the two servers added independent two-sided geometric noise of
  variance σ² = 2α/(1 - α)² per coordinate, so the total carries 2σ².

Shares (options, groups, the mean score of an ordinal question, crosstab cells) are linear in
the report-cell counts C̃ (K cells): f̂ = c·C̃/n for a coefficient vector c over report cells.
With the local channel A (answers x by report cells y) and its unbiased rows M (M·Aᵀ = I; both
the identity without a local mechanism), a functional w·f of the answer distribution has
c = w·M, and one respondent's term c_y is unbiased for w_x. Its variance over a random
respondent is f·u - (w·f)² with u = A·(c∘c), so

    Var[f̂] = (f·u - (w·f)²)/n + 2σ²·‖c·B‖²/n²,

B mapping the noise coordinates onto report cells (the identity for a Histogram; a Count
releases only the "yes" total, and "no" = n - "yes" carries the same noise with the opposite
sign). Standard errors plug in the consistent (Norm-Sub) distribution; the worst case over
every truth maximizes the concave f·u - (w·f)² over the simplex, which is attained on an edge
between two answers (`_worst_case`). Without a local mechanism u = w∘w and the first term is
the familiar f(1 - f).

A number kept on a grid (a decimal) is measured and estimated by
shared/two_server/fixed_point.py: its mean on the fixed-point scale, its bins, CDF and
quantiles. Integer questions are Prio3 Sums: only the mean is estimated (a Sum carries no
squares, so the sampling variance plugs in the Bhatia-Davis bound σ² <= (max - μ)(μ - min),
the variance of answers all at min or max with mean μ: a conservative interval). When the
servers' noise alone spreads an interval over more than every value the estimate can take, a
note says the estimate is too noisy to read (`too_noisy_notes`). With a local ε0 the device's
geometric report, clipped to the mechanism's accepted report range, is summed; its noise
variance is added per respondent.

This module reads the contract's fields duck-typed (`BatchEntry`, `CollectedBatchLike`):
entries by question id, and by `CrosstabSpec.key` ("crosstab:<rows>:<cols>") for crosstabs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import EstimateError
from ..estimand import MEAN_SCORE, estimand
from ..estimates import (
    GroupEstimate,
    MeanEstimate,
    ValueEstimate,
    empty_value_estimates,
    finite_or_none,
    norm_sub,
    value_estimates,
    z_value,
)
from ..mechanisms.base import JointReading
from ..question_types.base import extra_values
from .among_asked import add_among_asked
from .asked_pair import estimate_pair
from .encoding import clip_bounds, question_encoding
from .entry import (
    COLLECTION,
    SAMPLING_NOTE,
    BatchEntry,
    CollectedBatchLike,
    TwoServerEstimate,
    check_kind,
    entry_n,
    entry_plan,
    mechanism_label,
    noise_variance,
    too_noisy_notes,
)
from .fixed_point import estimate_grid
from .multiselect import estimate_set_two_server
from .noise import SERVERS

MEAN_SAMPLING_NOTE = ("mean: the servers add up the answers but not their squares, so how "
                      "much the answers differ from person to person is not known; the "
                      "interval assumes the widest spread this mean allows, as if every answer "
                      "were the lowest or the highest possible (the Bhatia-Davis bound on the "
                      "variance, (max - mean)(mean - min)): it may be wider than needed, never "
                      "narrower")
# A crosstab is refused past this many joint cells (its worst case is O(cells²)).
MAX_CROSSTAB_CELLS = 4096


# --- the linear design of a question ---------------------------------------------------------


@dataclass(frozen=True)
class Design:
    """How one question's (or crosstab's) report cells relate to its answers.

    Three structures, so that a question with thousands of options costs O(k) per estimate,
    never a k x k matrix: the identity (no local mechanism: the report is the answer), a
    symmetric channel (`symmetric` = (p, q): GRR / binary RR keep the answer with p, report
    each other value with q, K = k cells), or a dense channel `channel[x, y]` = P[cell y |
    answer x] with `inverse[a, y]` the per-report unbiased estimator of 1[answer = a] (ordinal
    exp., HR). A crosstab's design is the product of its two questions' (`factors`). The noise
    enters each released coordinate; a Count releases only "yes", and "no" = n - "yes".
    """

    labels: tuple[Any, ...]
    kind: str  # the Prio3 measurement: "count" or "histogram"
    cells: int  # K, report cells
    local: str | None = None  # the local mechanism's name, if any
    symmetric: tuple[float, float] | None = None
    channel: np.ndarray | None = None
    inverse: np.ndarray | None = None
    factors: tuple[Design, Design] | None = None

    @property
    def k(self) -> int:
        return len(self.labels)

    @property
    def identity(self) -> bool:
        return self.symmetric is None and self.channel is None and self.factors is None

    @property
    def released(self) -> int:
        """How many totals the servers release for it."""
        return 1 if self.kind == "count" else self.cells

    def counts(self, noisy_sums: Sequence[int], n: int) -> np.ndarray:
        """C̃ over report cells from the released totals."""
        sums = np.asarray([int(s) for s in noisy_sums], dtype=float)
        if sums.size != self.released:
            raise EstimateError(f"the batch holds {sums.size} totals where this question's "
                                f"{self.kind} has {self.released}")
        if self.kind == "count":  # cells (no, yes): only "yes" is released
            return np.array([n - sums[0], sums[0]])
        return sums

    def unbiased(self, counts: np.ndarray, n: int) -> np.ndarray:
        """f̂ = M·C̃/n, unbiased for the answer distribution."""
        if self.identity:
            return counts / n
        if self.symmetric is not None:
            p, q = self.symmetric
            return (counts / n - q) / (p - q)
        if self.factors is not None:
            d1, d2 = self.factors
            grid = counts.reshape(d1.cells, d2.cells)
            return (d1.dense_inverse() @ grid @ d2.dense_inverse().T).ravel() / n
        assert self.inverse is not None
        return self.inverse @ counts / n

    def cell_probabilities(self, f: np.ndarray) -> np.ndarray:
        """P[report cell] when answers follow f (simulations)."""
        if self.identity:
            return np.asarray(f, dtype=float)
        if self.symmetric is not None:
            p, q = self.symmetric
            return q + (p - q) * np.asarray(f, dtype=float)
        if self.factors is not None:
            d1, d2 = self.factors
            grid = np.asarray(f, dtype=float).reshape(d1.k, d2.k)
            return (d1.dense_channel().T @ grid @ d2.dense_channel()).ravel()
        assert self.channel is not None
        return f @ self.channel

    def dense_channel(self) -> np.ndarray:
        if self.channel is not None:
            return self.channel
        if self.symmetric is not None:
            p, q = self.symmetric
            return np.full((self.k, self.k), q) + (p - q) * np.eye(self.k)
        if self.factors is not None:
            return np.kron(self.factors[0].dense_channel(), self.factors[1].dense_channel())
        return np.eye(self.k)

    def dense_inverse(self) -> np.ndarray:
        if self.inverse is not None:
            return self.inverse
        if self.symmetric is not None:
            p, q = self.symmetric
            return (np.eye(self.k) - q) / (p - q)
        if self.factors is not None:
            return np.kron(self.factors[0].dense_inverse(), self.factors[1].dense_inverse())
        return np.eye(self.k)

    def _noise(self, c: np.ndarray) -> float:
        """‖c·B‖²: a Count's single total moves "yes" by +N and "no" by -N."""
        if self.kind == "count":
            return float((c[1] - c[0]) ** 2)
        return float(c @ c)

    def functional(self, weights: np.ndarray) -> Functional:
        """The estimator of weights·f (weights over answers): O(k) for the identity and
        symmetric structures."""
        w = np.asarray(weights, dtype=float)
        if self.identity:
            c, second = w, w * w
        elif self.symmetric is not None:
            p, q = self.symmetric
            c = (w - q * w.sum()) / (p - q)
            second = q * float(c @ c) + (p - q) * c * c
        else:
            c = w @ self.dense_inverse()
            second = self.dense_channel() @ (c * c)
        return Functional(weights=w, coef=c, second=second, noise=self._noise(c))

    def option_stats(self, f: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For every answer a at once: (per-report variance at f, its worst case over every
        truth, the noise factor ‖c_a·B‖²) of the share estimate f̂_a."""
        f = np.asarray(f, dtype=float)
        if self.identity:
            return f - f * f, np.full(self.k, 0.25), np.ones(self.k)
        if self.symmetric is not None:
            p, q = self.symmetric
            d = p - q
            inside = ((1 - q) ** 2 * p + q * q * (1 - p)) / d**2  # E[c_a² | answer a]
            outside = q * (1 - q) / d**2  # E[c_a² | another answer]
            noise = (1 / d**2 if self.kind == "count"
                     else ((1 - q) ** 2 + (self.cells - 1) * q * q) / d**2)
            return (f * inside + (1 - f) * outside - f * f,
                    _share_worst(np.full(self.k, inside), np.full(self.k, outside)),
                    np.full(self.k, noise))
        if self.factors is not None:
            d1, d2 = self.factors
            u1, u2 = d1.second_matrix(), d2.second_matrix()
            grid = f.reshape(d1.k, d2.k)
            per = (u1 @ grid @ u2.T).ravel() - f * f
            diag1, diag2 = np.diag(u1), np.diag(u2)
            off1, off2 = _off_diagonal_max(u1), _off_diagonal_max(u2)
            inside = np.outer(diag1, diag2).ravel()
            outside = np.maximum(np.outer(diag1, off2),
                                 np.outer(off1, np.maximum(diag2, off2))).ravel()
            noise = np.outer(d1.row_norms(), d2.row_norms()).ravel()
            return per, _share_worst(inside, outside), noise
        u = self.second_matrix()
        c = self.dense_inverse()
        noise = (c[:, 1] - c[:, 0]) ** 2 if self.kind == "count" else np.sum(c * c, axis=1)
        return (u @ f - f * f, _share_worst(np.diag(u), _off_diagonal_max(u)), noise)

    def second_matrix(self) -> np.ndarray:
        """U[a, x] = E[c_a² | answer x]: (M∘M)·Aᵀ (dense; crosstab factors and dense designs)."""
        if self.identity:
            return np.eye(self.k)
        m = self.dense_inverse()
        return (m * m) @ self.dense_channel().T

    def row_norms(self) -> np.ndarray:
        """‖M[a]‖² per answer: the noise factor of each share inside a crosstab's histogram."""
        if self.identity:
            return np.ones(self.k)
        m = self.dense_inverse()
        return np.sum(m * m, axis=1)


def _off_diagonal_max(u: np.ndarray) -> np.ndarray:
    masked = u.copy()
    np.fill_diagonal(masked, -np.inf)
    return masked.max(axis=1)


def _share_worst(inside: np.ndarray, outside: np.ndarray) -> np.ndarray:
    """max over t in [0, 1] of t·inside + (1 - t)·outside - t²: the worst case of a share's
    per-report variance (t = the share; see `_worst_case`)."""
    t = np.clip((inside - outside) / 2, 0.0, 1.0)
    return np.maximum(t * inside + (1 - t) * outside - t * t, 0.0)


@dataclass(frozen=True)
class Functional:
    """w·f estimated by c·C̃/n: `second` u_x = E[c_y² | x], `noise` = ‖c·B‖²."""

    weights: np.ndarray
    coef: np.ndarray
    second: np.ndarray
    noise: float

    def estimate(self, counts: np.ndarray, n: int) -> float:
        return float(self.coef @ counts) / n

    def per_report(self, f: np.ndarray) -> float:
        """Variance of one random respondent's term at the answer distribution f."""
        return max(float(f @ self.second) - float(f @ self.weights) ** 2, 0.0)

    def worst_per_report(self) -> float:
        return _worst_case(self.second, self.weights)

    def variance(self, per_report: float, n: int, noise_variance: float) -> float:
        """Sampling + local randomization (per_report/n) + both servers' noise."""
        return per_report / n + SERVERS * noise_variance * self.noise / n**2


def _worst_case(u: np.ndarray, w: np.ndarray) -> float:
    """max over distributions f of f·u - (f·w)².

    Concave in f and a function of the point (f·w, f·u) of the convex hull of the answers'
    points (w_x, u_x); its gradient in the u direction is 1, so the maximum lies on the hull's
    boundary, an edge between two answers: max over pairs (i, j) and t in [0, 1] of
    t·u_i + (1 - t)·u_j - (w_j + t(w_i - w_j))², and only the edges of the upper hull can
    hold it. For 0/1 weights (a share) the best pair is the largest u inside and the largest u
    outside the set.
    """
    if np.all((w == 0) | (w == 1)):
        inside, outside = u[w == 1], u[w == 0]
        if not outside.size:
            return max(float(inside.max()) - 1.0, 0.0)
        if not inside.size:
            return max(float(outside.max()), 0.0)
        a, b = float(inside.max()), float(outside.max())
        t = min(max((a - b) / 2, 0.0), 1.0)
        return max(t * a + (1 - t) * b - t * t, 0.0)
    # U - W² grows with U, so only the hull's upper boundary matters: its edges join
    # consecutive vertices of the upper convex hull of the points sorted by w (O(k log k)).
    order = np.lexsort((u, w))
    xs, ys = w[order], u[order]
    hull: list[int] = []
    for i in range(xs.size):
        if hull and xs[hull[-1]] == xs[i]:
            hull.pop()  # the same w: keep the larger u (sorted last)
        while len(hull) >= 2 and ((xs[hull[-1]] - xs[hull[-2]]) * (ys[i] - ys[hull[-2]])
                                  - (ys[hull[-1]] - ys[hull[-2]]) * (xs[i] - xs[hull[-2]])) >= 0:
            hull.pop()
        hull.append(i)
    hx, hy = xs[hull], ys[hull]
    best = float(np.max(hy - hx**2))
    if len(hull) > 1:
        wi, wj, ui, uj = hx[1:], hx[:-1], hy[1:], hy[:-1]
        d = wi - wj  # > 0 on the hull
        t = np.clip(((ui - uj) / (2 * d) - wj) / d, 0.0, 1.0)
        best = max(best, float(np.max(t * ui + (1 - t) * uj - (wj + t * d) ** 2)))
    return max(best, 0.0)


def local_mechanism(question: Any) -> Any | None:
    """The question's local mechanism at ε0, or None when no local ε0 is set."""
    if getattr(question, "local_epsilon", None) is None:
        return None
    from ..mechanisms import mechanism_for

    return mechanism_for(question)


def design_for(question: Any) -> Design:
    """The design of a question measured as one index (a Count or a Histogram: binary,
    categorical, ordinal, an integer's values with "not asked"); a Sum is not one (an integer
    question's: only its mean is estimated, `sum_design`)."""
    measured = question_encoding(question).kind
    if measured == "sum":
        raise EstimateError(f"{question.id}: an integer question is a Prio3 Sum; only its mean "
                            "is estimated")
    labels = question.unit.two_server_labels(question)
    kind = "count" if measured == "count" else "histogram"
    mechanism = local_mechanism(question)
    if mechanism is None:
        return Design(labels, kind, len(labels))
    if getattr(mechanism, "joint_reports", JointReading.NONE) != JointReading.INDEX:
        raise EstimateError(f"{question.id}: local mechanism {mechanism.name!r} does not report "
                            "one index, so its report cannot be one Prio3 measurement")
    return local_design(mechanism, labels, kind)


def local_design(mechanism: Any, labels: tuple[Any, ...], kind: str) -> Design:
    """The design of reports randomized on the device by an index-report `mechanism`."""
    from ..mechanisms.grr import GRR

    if isinstance(mechanism, GRR):  # and binary RR: the symmetric channel, O(k)
        return Design(labels, kind, len(labels), mechanism.name,
                      symmetric=(float(mechanism.p_star), float(mechanism.q_star)))
    channel, inverse = mechanism.index_channel()
    if kind == "count" and channel.shape[1] != 2:
        raise EstimateError(f"a yes/no report has 2 cells, got {channel.shape[1]}")
    return Design(labels, kind, channel.shape[1], mechanism.name, channel=channel,
                  inverse=inverse)


# --- one question -----------------------------------------------------------------------------


def estimate_two_server(question: Any, entry: BatchEntry,
                        confidence: float = 0.95) -> TwoServerEstimate:
    """A question's estimates from one batch entry, by what it measured: overlapping shares
    and the mean number selected (multiselect.py), the mean of a Sum, the share not asked and
    the mean among those asked of an asked pair (asked_pair.py), or the shares of a Count or
    Histogram (with groups, the mean score where the question has one, and among those asked
    for a question with a "not asked" value)."""
    if question.unit.overlapping:  # shares that overlap: shared/two_server/multiselect.py
        return estimate_set_two_server(question, entry, confidence)  # type: ignore[no-any-return]
    z = z_value(confidence)
    n = entry_n(entry)
    plan = entry_plan(entry)
    local = getattr(question, "local_epsilon", None)
    result = TwoServerEstimate(
        question=question.id, mechanism=mechanism_label(question), epsilon=plan.epsilon, n=n,
        confidence=confidence, central_epsilon=plan.epsilon, local_epsilon=local,
        local_mechanism=question.mechanism if local is not None else None,
        rejected=int(getattr(entry, "rejected", 0) or 0), noise=plan)
    result.notes.append(SAMPLING_NOTE.format(
        local=f" and the local {question.mechanism} randomization at ε0 = {local:g}"
        if local is not None else ""))
    encoding = question_encoding(question)
    if encoding.grid is not None:  # a number on a grid: its mean and/or its bins
        return estimate_grid(question, entry, result,  # type: ignore[no-any-return]
                             confidence, encoding)
    if encoding.kind == "asked_pair":  # skip logic: the device's [bit, number] pair
        return estimate_pair(question, entry, result, confidence,  # type: ignore[no-any-return]
                             encoding)
    if encoding.kind == "sum":
        result.mean = _integer_mean(question, entry, n, z)
        result.notes.append(MEAN_SAMPLING_NOTE)
        if n:
            result.notes += too_noisy_notes(
                math.sqrt(SERVERS * noise_variance(entry)) / n, question.max - question.min, n, z,
                confidence, "of the mean", f"the whole range a respondent could give "
                f"({question.min} to {question.max})")
        return result
    design = design_for(question)
    check_kind(question.id, entry, design.kind)
    groups = question.group_indices() if getattr(question, "groups", None) else {}
    meaning = estimand(question)  # what its rows mean, as in every other path
    if n == 0:
        result.categories = empty_value_estimates(design.labels)
        result.groups = [GroupEstimate(name, [design.labels[i] for i in members],
                                       None, None, None, None, None, None)
                         for name, members in groups.items()]
        if MEAN_SCORE in (meaning.mean, meaning.asked_mean):
            result.mean = MeanEstimate(None, None, None, None, None)
        return result
    counts = design.counts(entry.noisy_sums, n)
    f_hat = design.unbiased(counts, n)
    consistent = meaning.consistent(f_hat)
    k = design.k
    result.categories, noise_se = _share_rows(design, f_hat, consistent, n,
                                              noise_variance(entry), z)
    result.notes += too_noisy_notes(noise_se, 1.0, n, z, confidence, "of a share",
                                    "100 percentage points (every share there is)")
    for name, members in groups.items():
        w = np.zeros(k)
        w[list(members)] = 1.0
        row = _linear(design.functional(w), counts, n, consistent, noise_variance(entry), z)
        result.groups.append(GroupEstimate(
            name=name, options=[design.labels[i] for i in members], **row,
            consistent=float(consistent[list(members)].sum())))
    if meaning.mean == MEAN_SCORE:
        scores = np.arange(1, k + 1, dtype=float)
        result.mean = MeanEstimate(**_linear(design.functional(scores), counts, n, consistent,
                                             noise_variance(entry), z))
    result.notes = meaning.with_notes(result.notes)
    if extra_values(question):  # special values, "not asked": among those who answered
        add_among_asked(question, design, counts, n, f_hat, consistent, noise_variance(entry), z,
                        result)
    return result


def _share_rows(design: Design, f_hat: np.ndarray, consistent: np.ndarray, n: int,
                noise_variance: float, z: float) -> tuple[list[ValueEstimate], float]:
    """Every answer's share at once (`Design.option_stats`), and the largest part of a share's
    standard error that is the servers' noise."""
    per, worst, noise = design.option_stats(consistent)
    extra = SERVERS * noise_variance * noise / n**2
    variance = np.maximum(per, 0.0) / n + extra
    bound = worst / n + extra
    return (value_estimates(design.labels, f_hat, variance, bound, consistent, z),
            math.sqrt(float(np.max(extra))))


def _linear(fn: Functional, counts: np.ndarray, n: int, consistent: np.ndarray,
            noise_variance: float, z: float) -> dict[str, float]:
    value = fn.estimate(counts, n)
    var = fn.variance(fn.per_report(consistent), n, noise_variance)
    se = math.sqrt(var)
    return {"estimate": value, "std_error": se,
            "variance_bound": fn.variance(fn.worst_per_report(), n, noise_variance),
            "ci_low": value - z * se, "ci_high": value + z * se}


@dataclass(frozen=True)
class SumDesign:
    """An integer question as a Prio3 Sum: the value summed is (report - offset) in
    [0, sensitivity]; `local_variance` is the local noise's per-report variance (0 without)."""

    low: int
    high: int
    offset: int
    sensitivity: int
    local_variance: float

    def worst_per_report(self) -> float:
        """Popoviciu: a variable in [min, max] has variance <= (max - min)²/4."""
        return (self.high - self.low) ** 2 / 4 + self.local_variance

    def per_report(self, mean: float) -> float:
        """Bhatia-Davis at the (clipped) mean, plus the local noise."""
        mu = min(max(mean, self.low), self.high)
        return (self.high - mu) * (mu - self.low) + self.local_variance


def sum_design(question: Any) -> SumDesign:
    """How an integer question is summed: the answer offset by min, or (local ε0) the device's
    geometric report clipped to `encoding.clip_bounds`, offset by its low end (the clip's bias,
    at most `encoding.clip_bias_bound`, is below 0.1% of the standard error up to n = 10^6)."""
    low, high = int(question.min), int(question.max)
    mechanism = local_mechanism(question)
    if mechanism is None:
        return SumDesign(low, high, low, high - low, 0.0)
    if not hasattr(mechanism, "report_bounds"):
        raise EstimateError(f"{question.id}: local mechanism {mechanism.name!r} does not report "
                            "an integer")
    lo, hi = clip_bounds(mechanism)
    return SumDesign(low, high, lo, hi - lo,
                     mechanism.noise_variance(mechanism.k, mechanism.epsilon))


def _integer_mean(question: Any, entry: BatchEntry, n: int, z: float) -> MeanEstimate:
    design = sum_design(question)
    sums = list(entry.noisy_sums)
    if len(sums) != 1:
        raise EstimateError(f"{question.id}: a Prio3 Sum releases 1 total, got {len(sums)}")
    if n == 0:
        return MeanEstimate(None, None, None, None, None)
    check_kind(question.id, entry, "sum")
    if getattr(entry, "offset", design.offset) != design.offset:
        raise EstimateError(f"{question.id}: the batch measured values from "
                            f"{entry.offset}, the question's encoding from {design.offset}")
    noise = SERVERS * noise_variance(entry) / n**2
    mean = design.offset + int(sums[0]) / n
    se = math.sqrt(design.per_report(mean) / n + noise)
    return MeanEstimate(estimate=mean, std_error=se,
                        variance_bound=design.worst_per_report() / n + noise,
                        ci_low=mean - z * se, ci_high=mean + z * se)


# --- declared crosstabs -----------------------------------------------------------------------


@dataclass
class CellEstimate:
    """One joint cell (row answer, column answer): the share of respondents giving both."""

    row: Any
    col: Any
    estimate: float | None
    std_error: float | None
    variance_bound: float | None
    ci_low: float | None
    ci_high: float | None
    consistent: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"row": self.row, "col": self.col,
                **{k: finite_or_none(getattr(self, k)) for k in
                   ("estimate", "std_error", "variance_bound", "ci_low", "ci_high",
                    "consistent")}}


@dataclass
class CrosstabEstimate:
    """Joint shares of a declared crosstab, from its noisy k1 x k2 histogram."""

    rows: str
    cols: str
    row_labels: list[Any]
    col_labels: list[Any]
    n: int
    confidence: float
    central_epsilon: float
    rejected: int
    cells: list[CellEstimate] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"rows": self.rows, "cols": self.cols, "row_labels": list(self.row_labels),
                "col_labels": list(self.col_labels), "n": self.n,
                "confidence": self.confidence, "central_epsilon": self.central_epsilon,
                "rejected": self.rejected, "collection": COLLECTION,
                "cells": [c.to_dict() for c in self.cells], "notes": list(self.notes)}


def crosstab_design(rows: Any, cols: Any) -> Design:
    """The joint design of two binary/categorical/ordinal questions (two-server crosstabs join
    no integer question): cell index i·K2 + j, channel A1⊗A2, inverse M1⊗M2 (the two local
    reports are randomized independently given the true pair)."""
    d1, d2 = design_for(rows), design_for(cols)
    if d1.k * d2.k > MAX_CROSSTAB_CELLS:
        raise EstimateError(f"a crosstab of {d1.k} x {d2.k} cells is over the "
                            f"{MAX_CROSSTAB_CELLS}-cell limit")
    labels = tuple((a, b) for a in d1.labels for b in d2.labels)
    local = "+".join(x for x in (d1.local, d2.local) if x) or None
    if d1.identity and d2.identity:
        return Design(labels, "histogram", d1.cells * d2.cells)
    return Design(labels, "histogram", d1.cells * d2.cells, local, factors=(d1, d2))


def estimate_crosstab(rows: Any, cols: Any, entry: BatchEntry,
                      confidence: float = 0.95) -> CrosstabEstimate:
    """Every joint cell's share with sampling + local + noise standard errors."""
    z = z_value(confidence)
    n = entry_n(entry)
    design = crosstab_design(rows, cols)
    check_kind(f"crosstab:{rows.id}:{cols.id}", entry, "histogram")
    k2 = len({b for _, b in design.labels})
    row_labels = list(dict.fromkeys(a for a, _ in design.labels))
    col_labels = list(dict.fromkeys(b for _, b in design.labels))
    plan = entry_plan(entry)
    result = CrosstabEstimate(rows.id, cols.id, row_labels, col_labels, n, confidence,
                              plan.epsilon, int(getattr(entry, "rejected", 0) or 0))
    result.notes.append("joint: share of respondents giving both answers; "
                        + SAMPLING_NOTE.format(local=" and local randomization"
                                               if design.local else ""))
    if n == 0:
        result.cells = [CellEstimate(a, b, None, None, None, None, None, None)
                        for a, b in design.labels]
        return result
    counts = design.counts(entry.noisy_sums, n)
    f_hat = design.unbiased(counts, n)
    consistent = norm_sub(f_hat)
    rows_, noise_se = _share_rows(design, f_hat, consistent, n, noise_variance(entry), z)
    result.notes += too_noisy_notes(noise_se, 1.0, n, z, confidence, "of a joint share",
                                    "100 percentage points (every share there is)")
    result.cells = [CellEstimate(a, b, r.estimate, r.std_error, r.variance_bound, r.ci_low,
                                 r.ci_high, r.consistent)
                    for (a, b), r in zip(design.labels, rows_, strict=True)]
    assert len(result.cells) == len(row_labels) * k2
    return result


# --- a whole batch ----------------------------------------------------------------------------


def estimate_batch(survey: Any, batch: CollectedBatchLike,
                   confidence: float = 0.95) -> dict[str, Any]:
    """The estimate document of one collected batch: the shape of today's
    (`GET /api/surveys/<id>/estimates`) plus the mode, the batch, rejected reports, crosstabs
    and the guarantees in plain words."""
    from .guarantees import survey_guarantees

    if batch.survey_id != survey.id or int(batch.version) != int(survey.version):
        raise EstimateError(f"the batch is of survey {batch.survey_id!r} v{batch.version}, "
                            f"not {survey.id!r} v{survey.version}")
    questions = []
    for q in survey.questions:
        entry = batch.entries.get(q.id)
        if entry is None:
            raise EstimateError(f"the batch has no totals for question {q.id!r}")
        questions.append(estimate_two_server(q, entry, confidence).to_dict())
    crosstabs = []
    for spec in getattr(survey, "crosstabs", ()):
        entry = batch.entries.get(spec.key)
        if entry is None:
            raise EstimateError(f"the batch has no totals for the crosstab {spec.key!r}")
        crosstabs.append(estimate_crosstab(survey.question(spec.rows),
                                           survey.question(spec.cols), entry,
                                           confidence).to_dict())
    entries = [batch.entries[q.id] for q in survey.questions]
    return {"survey": survey.id, "version": survey.version, "collection": COLLECTION,
            "batch": batch.batch_id, "confidence": confidence,
            "n_submissions": max((int(e.n) for e in entries), default=0),
            "rejected": sum(int(getattr(e, "rejected", 0) or 0) for e in entries),
            "questions": questions, "crosstabs": crosstabs,
            "guarantees": survey_guarantees(survey).to_dict()}


__all__ = ["BatchEntry", "CellEstimate", "CollectedBatchLike", "CrosstabEstimate", "Design",
           "Functional", "SumDesign", "TwoServerEstimate", "crosstab_design", "design_for",
           "estimate_batch", "estimate_crosstab", "estimate_two_server", "sum_design"]
