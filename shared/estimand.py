"""What a question's estimates mean: decided here, once per question, for every path that
estimates it (the plain report, the design-based report, `--by` subgroups, crosstab margins,
two-server batches; docs/multiselect.md, docs/design-based.md).

A path asks `estimand(question, mechanism)` and follows the answer; it does not decide by the
question's type itself, so the same question cannot mean one thing in the plain report and
another once weighted (issue 39: a check-all-that-apply question's weighted shares were
Norm-Sub'd as if they were one choice). Per question:

- the option rows: a distribution over the options (binary, categorical, ordinal: the shares
  sum to 1) or each option's share of respondents (multiselect: shares overlap, their sum is
  the mean number selected);
- the consistency rule of the 'consistent' column: "norm-sub" for a distribution, "em" where
  the mechanism has a maximum-likelihood distribution (the ordinal exponential mechanism),
  "clip" (each share to [0, 1]) for overlapping shares;
- the extra row, `mean`: "mean number selected" (multiselect), "mean score" (ordinal, options
  scored 1..k), "mean" (integer); a question with a "not asked" value has it among those asked
  only (over everyone it would count "not asked" as an option);
- the notes that say so (the type's, not a path's: a path adds its own, such as the design's).

What differs by type (overlapping shares, the extra row, the type's notes) the question's
unit says (shared/question_types); this module turns it into the rule every path follows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .aggregates import CountAggregate
from .estimates import MeanEstimate, norm_sub, z_value
from .mechanisms.base import JointReading
from .question_types import REGISTRY
from .question_types.words import (
    CLIP,
    DISCLOSED_NOTE,
    EM,
    EM_NOTE,
    MEAN,
    MEAN_SCORE,
    MEAN_SELECTED,
    NORM_SUB,
    SHARES_NOTE,
    score_note,
)

__all__ = ["CLIP", "DISCLOSED_NOTE", "EM", "EM_NOTE", "MEAN", "MEAN_SCORE", "MEAN_SELECTED",
           "NORM_SUB", "SHARES_NOTE", "Estimand", "estimand", "mean_label", "plain_estimate",
           "score_note"]


@dataclass(frozen=True)
class Estimand:
    """What one question's estimates mean (module docstring)."""

    question: str
    overlapping: bool          # options' shares of respondents (multiselect), not a distribution
    consistency: str           # NORM_SUB, EM or CLIP: how the 'consistent' column is made
    mean: str | None           # the extra row over everyone: MEAN_SELECTED, MEAN_SCORE, MEAN
    asked_mean: str | None     # the extra row among those asked (a "not asked" question)
    notes: tuple[str, ...]     # the question type's notes, in every path

    def consistent(self, estimates: Sequence[float] | np.ndarray,
                   mechanism: Any = None) -> np.ndarray:
        """The 'consistent' column of the option rows from their unbiased estimates: each
        clipped to [0, 1], Norm-Sub, or the mechanism's maximum-likelihood distribution."""
        f = np.asarray(estimates, dtype=float)
        if self.consistency == CLIP:
            return np.clip(f, 0.0, 1.0)
        if self.consistency == EM and mechanism is not None:
            return np.asarray(mechanism.consistent_distribution(f), dtype=float)
        return norm_sub(f)

    def asked_consistent(self, ratios: Sequence[float] | np.ndarray) -> np.ndarray:
        """The 'consistent' column among those asked (ratios of estimates, no channel to fit:
        Norm-Sub for a distribution, clipped shares for overlapping ones)."""
        f = np.asarray(ratios, dtype=float)
        return np.clip(f, 0.0, 1.0) if self.overlapping else norm_sub(f)

    @property
    def method(self) -> str:
        """`consistent_method` of an estimate document."""
        return self.consistency

    def with_notes(self, notes: Sequence[str]) -> list[str]:
        """This question's type notes (every path shows them, in this order), then a path's
        own `notes`."""
        return [*self.notes, *(n for n in notes if n not in self.notes)]


def estimand(question: Any, mechanism: Any = None) -> Estimand:
    """What `question`'s estimates mean; `mechanism` (None: two-server noise on sums, which
    has no likelihood to maximize) decides only between Norm-Sub and EM for a distribution."""
    unit = question.unit
    disclosed = bool(getattr(question, "disclosed", False))
    hidden = bool(getattr(question, "not_asked", False) or getattr(question, "special", None))
    notes: list[str] = [DISCLOSED_NOTE] if disclosed else []
    overlapping = unit.overlapping
    if overlapping:
        consistency = CLIP
    elif mechanism is not None and hasattr(mechanism, "consistent_distribution"):
        consistency = EM  # the ordinal exponential and the location mechanisms
    else:
        consistency = NORM_SUB
    notes.extend(unit.notes(question, consistency))
    mean = unit.mean_label
    return Estimand(question=question.id, overlapping=overlapping, consistency=consistency,
                    mean=None if hidden else mean, asked_mean=mean if hidden else None,
                    notes=tuple(notes))


def mean_label(question: Any) -> str:
    """How a report names a question's extra row ("mean" for a question without one)."""
    name = question["type"] if isinstance(question, dict) else question.type
    unit = REGISTRY.get(name)  # a report's crosstab view has no unit
    return (unit.mean_label if unit is not None else None) or MEAN


def plain_estimate(question: Any, mechanism: Any, aggregate: Any,
                   confidence: float = 0.95) -> Any:
    """A question's estimate from its aggregate (the plain report, `--by` subgroups, the
    simulations): the mechanism's estimate with this module's consistency rule, notes and
    extra row. An ordinal question whose mechanism gives no mean score (GRR) gets it here
    (`_score_from_counts`), as the ordinal exponential mechanism and every other path give it."""
    result = mechanism.estimate(aggregate, confidence)
    meaning = estimand(question, mechanism)
    result.consistent_method = meaning.method
    result.notes = meaning.with_notes(result.notes)
    if meaning.mean == MEAN_SCORE and result.mean is None:
        rows = result.categories or []
        result.mean = (_score_from_counts(mechanism, aggregate, rows, confidence)
                       if aggregate.n and rows and rows[0].estimate is not None
                       else MeanEstimate(None, None, None, None, None))
    return result


# The largest k·k dense channel the mean score of index reports is computed from (2^24 cells,
# 128 MiB of float64 each for the channel and its inverse): an ordinal question of 65,536
# options through GRR asked for 32 GiB (simulate's fuzz test: MemoryError).
MAX_SCORE_CHANNEL = 1 << 24


def _score_from_counts(mechanism: Any, aggregate: Any, rows: Sequence[Any],
                       confidence: float) -> Any:
    """The mean score s·f̂ (options scored s = 1..k) of index reports, with the plain
    report's variance, the randomization's given the respondents' answers as for its shares:
    Σ_x f_x·Var_x(s·z)/n, each report's unbiased score d_y = s·z_y (z: the channel inverse's
    row), Var_x(s·z) = Σ_y A[x][y]·d_y² − s_x², plugged in at the consistent distribution f
    (a disclosed question, whose channel is the identity: 0). The bound is the mechanism's
    worst case over the truth."""
    if (getattr(mechanism, "joint_reports", JointReading.NONE) != JointReading.INDEX
            or not isinstance(aggregate, CountAggregate)):
        return None  # no mechanism offered for ordinal questions reports otherwise
    if len(rows) ** 2 > MAX_SCORE_CHANNEL:
        return None  # the dense (k, m) channel would not fit in memory: no mean score row
    channel, inverse = mechanism.index_channel()  # (k, m) each
    k = channel.shape[0]
    scores = np.arange(1, k + 1, dtype=float)
    f_hat = np.array([r.estimate for r in rows], dtype=float)
    f = np.array([r.consistent for r in rows], dtype=float)
    mean = float(scores @ f_hat)
    d = inverse.T @ scores  # (m,)
    n = aggregate.n
    variance = float(f @ np.maximum(channel @ (d * d) - scores * scores, 0.0)) / n
    worst = type(mechanism).mean_score_variance(k, mechanism.epsilon)
    bound = 0.0 if variance == 0.0 and worst is None else (
        None if worst is None else float(worst) / n)
    se = variance ** 0.5
    z = z_value(confidence)
    return MeanEstimate(mean, se, bound, mean - z * se, mean + z * se)
