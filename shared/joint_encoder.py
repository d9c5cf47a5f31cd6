"""One question's side of a crosstab, as every joint estimator reads it: the Encoder (its cells,
the integer features φ̃(y) = (1, φ(y)) of a report and the linear maps B, D, m, s that turn them
into unbiased per-report estimators and their exact squares; joint_features.py's docstring
derives them) and the features' constant column.

Its own module so that the modules building encoders import it one way: joint_features.py (every
mechanism's encoder, and the dispatch by mechanism) and joint_sets.py (a multiselect question's,
one option at a time), which joint_features.py calls.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Encoder:
    """One question's side of a crosstab: cells, features, estimator and moment maps."""

    question_id: str
    mechanism: str
    cells: tuple[Any, ...]  # option labels, or "lo-hi" bin labels
    estimator: np.ndarray  # B (cells, F)
    square: np.ndarray  # D (cells, F)
    expected: np.ndarray  # E[φ̃ | x] (F, answers)
    membership: np.ndarray  # (cells, answers): 1 where answer x falls in cell a
    featurize: Callable[[Any], np.ndarray]  # reports (array or list) -> (n, F) integer features
    cell_of: Callable[[np.ndarray], np.ndarray]  # true answer indices -> cell indices
    mean: np.ndarray | None = None  # m (F,): Y = m·φ̃ (integer questions)
    mean_square: np.ndarray | None = None  # s (F,): Y² = s·φ̃
    answers: np.ndarray | None = None  # the true answer of each `expected` column
    bins: tuple[int, ...] | None = None  # bin edges of an integer question
    moment_columns: tuple[int, ...] = ()  # feature columns that are not 0/1 (y, y²)
    mean_note: str | None = None  # what the mean is of, when not the answer itself
    index_reports: bool = False  # one-hot features: every function of a report is linear
    group: str | None = None  # a declared group of the question vs the rest (`group_encoder`)
    # A multiselect question's options (shared/joint_sets.py): they overlap, so this encoder
    # only carries the features; its sides are one option at a time (`option_encoder`).
    sets: bool = False
    # A number read by its mean only (shared/joint_values.py): one cell, everyone, and `mean`.
    mean_only: bool = False

    @property
    def width(self) -> int:
        return int(self.estimator.shape[1])

    def second_moments(self) -> np.ndarray:
        """V[a, x] = E[X_a² | x]: the per-report second moment for each cell and answer."""
        return self.square @ self.expected


def with_constant(features: np.ndarray) -> np.ndarray:
    """The feature rows with the constant 1 put first: φ̃ = (1, φ)."""
    out = np.empty((features.shape[0], features.shape[1] + 1), dtype=features.dtype)
    out[:, 0] = 1
    out[:, 1:] = features
    return out
