"""A batch entry as every two-server estimator reads it: its report count, the noise plan its
servers used and that noise's variance, the measurement it holds, and the estimate document
every estimator fills (`TwoServerEstimate`, with the notes they share).

The estimators (shared/two_server/estimates.py: shares, means, crosstabs; multiselect.py: sets;
asked_pair.py: an integer's local pair) import this module and not each other's, so the one
that chooses among them (`estimates.estimate_two_server`) can import them all.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ..errors import EstimateError
from ..estimates import Estimate
from .noise import NoisePlan

COLLECTION = "two-server"
SAMPLING_NOTE = ("standard errors count sampling (respondents as a random sample), "
                 "both servers' noise{local}")
TOO_NOISY_NOTE = ("too noisy: at n = {n:,} the two servers' noise alone spreads the "
                  "{confidence:.0%} interval {what} over more than {span}, so this estimate "
                  "says almost nothing yet; the noise's part shrinks in proportion to 1/n "
                  "(about {needed:,} respondents would make it a tenth of that)")


class BatchEntry(Protocol):
    """One question's (or crosstab's) part of a collected batch (the contract's fields;
    shared/two_server/results.py's `BatchEntry` has them, its `noise_plan` being a method)."""

    noisy_sums: Sequence[int]
    n: int
    rejected: int


class CollectedBatchLike(Protocol):
    survey_id: str
    version: int
    batch_id: str
    entries: Mapping[str, BatchEntry]


@dataclass
class TwoServerEstimate(Estimate):
    """An `Estimate` of the two-server mode: the central ε, the local ε0 (if any), the noise
    each server added and the reports preparation rejected."""

    central_epsilon: float = 0.0
    local_epsilon: float | None = None
    local_mechanism: str | None = None
    rejected: int = 0
    noise: NoisePlan | None = None

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d.update({"collection": COLLECTION, "central_epsilon": self.central_epsilon,
                  "local_epsilon": self.local_epsilon, "local_mechanism": self.local_mechanism,
                  "rejected": self.rejected,
                  "noise": None if self.noise is None else self.noise.to_dict()})
        return d


def too_noisy_notes(noise_se: float, span: float, n: int, z: float, confidence: float,
                    what: str, span_words: str) -> list[str]:
    """The too-noisy note when the servers' noise dominates: its part of the interval alone,
    ±z times the noise's standard error, is wider than every value the estimate can take
    (`span`: 1 for a share, max - min for a mean). Then no two possible truths can be told
    apart from the noise, whatever the sampling. The noise's standard error falls as 1/n, so
    n·20·z·se/span respondents bring its part to a tenth of the span. ([] otherwise.)"""
    if n == 0 or span <= 0 or 2 * z * noise_se < span:
        return []
    return [TOO_NOISY_NOTE.format(n=n, confidence=confidence, what=what, span=span_words,
                                  needed=math.ceil(n * 20 * z * noise_se / span))]


def entry_n(entry: BatchEntry) -> int:
    """The entry's report count (EstimateError unless an integer >= 0 with a noise plan)."""
    n = entry.n
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 0:
        raise EstimateError(f"a batch's report count must be an integer >= 0, got {n!r}")
    entry_plan(entry)
    return int(n)


def noise_variance(entry: Any) -> float:
    """One server's noise variance per coordinate in this entry's totals: the plan's σ², times
    the number of batches added up into the entry (each batch carries its own draws)."""
    batches = getattr(entry, "batches", 1)
    if isinstance(batches, bool) or not isinstance(batches, int | np.integer) or batches < 1:
        raise EstimateError(f"an entry adds up a positive number of batches, got {batches!r}")
    return entry_plan(entry).variance * int(batches)


def entry_plan(entry: Any) -> NoisePlan:
    """The NoisePlan the servers used for an entry (an attribute, or a method computing it)."""
    plan = getattr(entry, "noise_plan", None)
    if callable(plan) and not isinstance(plan, NoisePlan):
        plan = plan()
    if not isinstance(plan, NoisePlan):
        raise EstimateError("a batch entry needs the NoisePlan its servers used")
    return plan


def check_kind(key: str, entry: Any, kind: str) -> None:
    """The entry's Prio3 measurement must be the one this estimator reads."""
    found = getattr(entry, "kind", None) or entry_plan(entry).kind
    if found != kind and not (kind == "histogram" and found == "crosstab"):
        raise EstimateError(f"{key}: the batch holds a {found} where the estimator reads a "
                            f"{kind}")


def mechanism_label(question: Any) -> str:
    """An estimate's `mechanism`: the mode, and the local mechanism where ε0 is set."""
    if getattr(question, "local_epsilon", None) is None:
        return COLLECTION
    return f"{COLLECTION}+{question.mechanism}"
