"""What a simulation draws true answers from: distributions over a question's answer indices
(or sets of options), which the units' `default_truth` and `parse_truth` build.

Simulation only (`ldpsurvey simulate`, the simulated report, the demo's respondents): every
draw here comes from the seeded numpy Generator a simulation passes in, never from the path
that sends a report, which randomizes with the OS CSPRNG. The units import this module inside
their simulation methods, so a device that imports them does not load it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import SimulationError

PROBABILITY_TOLERANCE = 1e-9
ZIPF_EXPONENT = 1.1  # the built-in truth of options: P[option i] ∝ 1 / i^1.1


@dataclass(frozen=True)
class Truth:
    """A distribution of true answers over a question's answer indices (a sparse support)."""

    indices: np.ndarray
    probabilities: np.ndarray

    def draw(self, size: int, rng: np.random.Generator) -> np.ndarray:
        return self.indices[rng.choice(self.indices.size, size=size, p=self.probabilities)]


@dataclass(frozen=True)
class TruncatedGeometric:
    """P[i] ∝ ρ^i over [0, k), sampled by inverting its CDF: no array of size k needed."""

    k: int
    rho: float

    def draw(self, size: int, rng: np.random.Generator) -> np.ndarray:
        u = rng.random(size)
        top = -math.expm1(self.k * math.log(self.rho))  # 1 - ρ^k
        i = np.floor(np.log1p(-u * top) / math.log(self.rho)).astype(np.int64)
        return np.minimum(i, self.k - 1)

    def probabilities(self) -> np.ndarray:
        """P[i] for i = 0..k-1 (a plan's exact report distribution, analyst/plan/median.py)."""
        weights = np.exp(np.arange(self.k) * math.log(self.rho))
        return weights / weights.sum()


@dataclass(frozen=True)
class SetTruth:
    """Sets of options: sizes from `sizes` (P[s], s = 0..m) and options drawn without
    replacement with probability proportional to `weights` (the Gumbel top-s trick); each
    draw is an (n, k) boolean matrix. A set that drew an `exclusive` option (an index) with
    others is that option alone (the first drawn), as the question allows."""

    weights: np.ndarray
    sizes: np.ndarray
    exclusive: tuple[int, ...] = ()

    def draw(self, count: int, rng: np.random.Generator) -> np.ndarray:
        k = self.weights.size
        size = rng.choice(self.sizes.size, size=count, p=self.sizes)
        with np.errstate(divide="ignore"):
            keys = np.log(self.weights)[None, :] + rng.gumbel(size=(count, k))
        rank = np.argsort(np.argsort(-keys, axis=1), axis=1)  # 0 = the largest key
        sets = rank < size[:, None]
        if self.exclusive:
            alone = list(self.exclusive)
            first = np.where(sets[:, alone], rank[:, alone], k).argmin(axis=1)
            mixed = sets[:, alone].any(axis=1) & (sets.sum(axis=1) > 1)
            sets[mixed] = False
            sets[mixed, np.asarray(alone)[first[mixed]]] = True
        return sets


@dataclass(frozen=True)
class IndependentSetTruth:
    """Sets of options, each selected independently with `probabilities[j]`; sets of a size
    outside [low, high], or with an `exclusive` option (an index) and another, drawn again."""

    probabilities: np.ndarray
    low: int
    high: int
    exclusive: tuple[int, ...] = ()

    def draw(self, count: int, rng: np.random.Generator) -> np.ndarray:
        out = np.empty((count, self.probabilities.size), dtype=bool)
        todo = np.arange(count)
        while todo.size:
            sets = rng.random((todo.size, self.probabilities.size)) < self.probabilities
            sizes = sets.sum(axis=1)
            ok = (sizes >= self.low) & (sizes <= self.high)
            if self.exclusive:
                ok &= ~(sets[:, list(self.exclusive)].any(axis=1) & (sizes > 1))
            out[todo[ok]] = sets[ok]
            todo = todo[~ok]
        return out

    def acceptance(self) -> float:
        """P[the set is allowed]: low <= |S| <= high (a Poisson-binomial, by dynamic
        programming) with no exclusive option, or an exclusive option alone."""
        alone = set(self.exclusive)
        dist = np.zeros(self.probabilities.size + 1)
        dist[0] = 1.0
        for j, p in enumerate(self.probabilities):
            if j in alone:
                continue
            dist[1:] = dist[1:] * (1 - p) + dist[:-1] * p
            dist[0] *= 1 - p
        none_alone = math.prod(1 - float(self.probabilities[j]) for j in alone)
        allowed = none_alone * float(dist[self.low:self.high + 1].sum())
        if alone and self.low <= 1 <= self.high:
            for e in alone:
                p_e = float(self.probabilities[e])
                others = none_alone / (1 - p_e) if p_e < 1 else math.prod(
                    1 - float(self.probabilities[j]) for j in alone if j != e)
                allowed += p_e * others * float(dist[0])
        return allowed


def zipf_truth(k: int) -> Truth:
    """The built-in skewed truth over k options: a few common, most rare."""
    weights = 1.0 / np.arange(1, k + 1) ** ZIPF_EXPONENT
    return Truth(np.arange(k), weights / weights.sum())


def index_truth(dist: Any, index_of: Callable[[Any, str], int], where: str) -> Truth:
    """A --truth file's {answer: probability} over answer indices; `index_of(key, where)` is
    the unit's reading of one key (a label, yes/no, a value). SimulationError naming
    `where.<key>` for a bad entry, `where` for probabilities that do not sum to 1."""
    if not isinstance(dist, Mapping) or not dist:
        raise SimulationError(f"{where}: must be a non-empty object {{label: probability}}")
    indices: list[int] = []
    probabilities: list[float] = []
    for key, p in dist.items():
        at = f"{where}.{key}"
        index = index_of(key, at)
        if index in indices:
            raise SimulationError(f"{at}: the same answer is listed twice")
        if isinstance(p, bool) or not isinstance(p, int | float) or not math.isfinite(p):
            raise SimulationError(f"{at}: probability must be a finite number")
        if p < 0:
            raise SimulationError(f"{at}: probability must be >= 0, got {p}")
        indices.append(index)
        probabilities.append(float(p))
    total = math.fsum(probabilities)
    if abs(total - 1.0) > PROBABILITY_TOLERANCE:
        raise SimulationError(f"{where}: probabilities sum to {total!r}, not 1 "
                              f"(within {PROBABILITY_TOLERANCE:g})")
    probs = np.array(probabilities)
    return Truth(np.array(indices, dtype=np.int64), probs / probs.sum())


def option_index(options: tuple[str, ...] | list[str], key: Any, where: str) -> int:
    """The index of option `key`; SimulationError naming the options otherwise."""
    try:
        return list(options).index(key)
    except ValueError:
        raise SimulationError(f"{where}: unknown option; expected one of: "
                              f"{', '.join(options)}") from None
