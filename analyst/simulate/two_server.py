"""A two-server question as `simulate` runs it: what the two servers would release.

For each simulated respondent the device first runs the question's local ε0 mechanism where
the question sets one (its `perturb_many`), then measures the report (or the answer) as the
Prio3 measurement the leader would aggregate (shared/two_server/encoding.py). Prio3 itself is
not run for n respondents: its aggregate is the sum of the measurements, which is what is
added up here (`measured_totals`). When the batch is read, each of the two servers adds its
own two-sided geometric noise from the question's NoisePlan (shared/two_server/plans.py) and
the released totals are estimated by `estimate_two_server`, as the analyst's report does.

`TwoServerRelease` has the mechanism methods the simulators call (new_aggregate,
perturb_many, aggregate_many, estimate), so survey.py, skip.py and multiselect.py draw the
truth, skip respondents and compare the estimates for a two-server survey exactly as for an
LDP one: `release_factory` chooses, once, which of the two a survey's questions get.

Simulation only: every draw here (the local randomization and the servers' noise) comes from
a seeded numpy generator, never from the path that sends a report or adds real noise.
Declared crosstabs are not simulated yet: the simulators draw each question on its own, and
`simulate --crosstab` is refused with a one-line error (`check_crosstab_simulated`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from ldpsurvey.shared.errors import SimulationError
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Question, Survey
from ldpsurvey.shared.two_server.encoding import Encoding, question_encoding
from ldpsurvey.shared.two_server.entry import COLLECTION, mechanism_label
from ldpsurvey.shared.two_server.estimates import estimate_two_server
from ldpsurvey.shared.two_server.fixed_point import grid_measurement
from ldpsurvey.shared.two_server.noise import SERVERS, NoisePlan
from ldpsurvey.shared.two_server.plans import question_noise_plan


@dataclass(frozen=True)
class Entry:
    """A simulated batch entry as the estimators read it (shared/two_server/entry.py's
    `BatchEntry`): the released totals (true totals + both servers' noise), the report count
    and the noise plan each server used."""

    noisy_sums: list[int]
    n: int
    noise_plan: NoisePlan
    rejected: int = 0


def geometric_noise(rng: np.random.Generator, plan: NoisePlan, size: Any) -> np.ndarray:
    """One server's two-sided geometric noise per coordinate (simulation: numpy, not the
    exact sampler the servers use)."""
    success = 1.0 - plan.alpha
    return rng.geometric(success, size) - rng.geometric(success, size)


def servers_noise(rng: np.random.Generator, plan: NoisePlan, size: Any) -> np.ndarray:
    """The noise in a released total: each of the two servers' own draw, added up."""
    noise = geometric_noise(rng, plan, size)
    for _ in range(SERVERS - 1):
        noise = noise + geometric_noise(rng, plan, size)
    return noise


def is_two_server(survey: Survey) -> bool:
    """Whether `survey` is collected by two servers (the one place simulate asks)."""
    return getattr(survey, "collection", None) == COLLECTION


def release_factory(survey: Survey, rng: np.random.Generator) -> Callable[[Question], Any]:
    """What each question of `survey` is simulated through: its LDP mechanism
    (`mechanism_for`), or for a two-server survey its `TwoServerRelease` (whose servers'
    noise comes from `rng`)."""
    if not is_two_server(survey):
        return mechanism_for
    return lambda question: TwoServerRelease(question, rng)


def check_crosstab_simulated(survey: Survey) -> None:
    """SimulationError for `simulate --crosstab` on a two-server survey: its crosstabs are
    the declared joint histograms, which simulate does not draw yet."""
    if is_two_server(survey):
        raise SimulationError("simulate --crosstab takes an LDP survey; a two-server survey's "
                              "declared crosstabs are not simulated yet (its questions are: "
                              "run simulate without --crosstab)")


def simulation_notes(survey: Survey) -> list[str]:
    """What a simulation of `survey` leaves out: a two-server survey's declared crosstabs."""
    if not is_two_server(survey) or not getattr(survey, "crosstabs", ()):
        return []
    keys = ", ".join(f"{spec.rows} by {spec.cols}" for spec in survey.crosstabs)
    return [f"declared crosstabs ({keys}) are not simulated yet: each question is drawn on "
            "its own"]


@dataclass
class Totals:
    """What the leader aggregates for one question: the sum of the measurements of `n`
    reports (an `aggregate` the simulators merge chunk by chunk)."""

    totals: np.ndarray
    n: int = 0

    def merge(self, other: Totals) -> None:
        self.totals = self.totals + other.totals
        self.n += other.n


@dataclass
class TwoServerRelease:
    """One two-server question's path from a device to the estimate (module docstring)."""

    question: Question
    rng: np.random.Generator
    encoding: Encoding = field(init=False)
    plan: NoisePlan = field(init=False)
    local: Any = field(init=False)

    def __post_init__(self) -> None:
        q = self.question
        self.encoding = question_encoding(q)
        self.plan = question_noise_plan(q)
        self.local = mechanism_for(q) if getattr(q, "local_epsilon", None) is not None else None

    @property
    def name(self) -> str:
        local = getattr(self.question, "local_epsilon", None)
        label = mechanism_label(self.question)
        return label if local is None else f"{label} (ε0 = {local:g} on the device)"

    @property
    def epsilon(self) -> float:
        """The central ε (against either server alone)."""
        return self.plan.epsilon

    def realized_epsilon(self) -> float:
        """The certified λ·Δ of each server's noise (a hair below the declared ε)."""
        return float(self.plan.privacy_loss().log)

    def new_aggregate(self) -> Totals:
        return Totals(np.zeros(self.encoding.length, dtype=np.int64))

    def perturb_many(self, answers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The device's report: the local ε0 mechanism's, or the answer itself."""
        return answers if self.local is None else self.local.perturb_many(answers, rng)

    def aggregate_many(self, reports: np.ndarray) -> Totals:
        return Totals(measured_totals(self.question, self.encoding, reports,
                                      self.local is not None), len(reports))

    def estimate(self, aggregate: Totals, confidence: float = 0.95) -> Any:
        """The estimate from the released totals: both servers' noise added to the sums."""
        released = aggregate.totals + servers_noise(self.rng, self.plan, aggregate.totals.shape)
        entry = Entry([int(v) for v in released], aggregate.n, self.plan)
        return estimate_two_server(self.question, entry, confidence)


def measured_totals(question: Question, encoding: Encoding, reports: np.ndarray,
                    local: bool) -> np.ndarray:
    """The sum, over these reports, of their Prio3 measurements (the leader's aggregate of
    `encoding`): answers are the simulators' indices (an option, value - min, a grid index, a
    boolean set matrix); local reports are the local mechanism's `perturb_many` output."""
    kind, length = encoding.kind, encoding.length
    reports = np.asarray(reports)
    if encoding.grid is not None:
        if local:
            raise SimulationError(f"{question.id}: simulating a two-server number on a grid "
                                  "with a local ε0 is not supported")
        return _grid_totals(encoding, reports)
    if kind == "count":
        return np.array([int(reports.astype(np.int64).sum())], dtype=np.int64)
    if kind == "histogram":
        return np.bincount(reports.astype(np.int64), minlength=length).astype(np.int64)
    if kind == "sum":  # the answer's index is value - min; a local report is a value
        low = encoding.offset
        values = reports.astype(np.int64) if local else reports.astype(np.int64) + low
        clipped = np.clip(values, low, low + encoding.max_measurement) - low
        return np.array([int(clipped.sum())], dtype=np.int64)
    if kind == "asked_pair":  # asked_geometric's [bit, number]; the bit scaled by s
        bits, numbers = reports[:, 0].astype(np.int64), reports[:, 1].astype(np.int64)
        low = encoding.offset
        clipped = np.clip(numbers, low, low + encoding.max_measurement) - low
        return np.array([encoding.scale * int(bits.sum()), int(clipped.sum())], dtype=np.int64)
    if kind == "multihot":
        if local:  # 32-bit words, option j at bit j & 31 of word j >> 5
            words = reports.astype(np.uint64)
            j = np.arange(length)
            bits = (words[:, j >> 5] >> (j & 31).astype(np.uint64)) & np.uint64(1)
            return bits.sum(axis=0).astype(np.int64)
        return reports.astype(np.int64).sum(axis=0)
    raise SimulationError(f"{question.id}: simulating a two-server {kind} is not supported")


def _grid_totals(encoding: Encoding, indices: np.ndarray) -> np.ndarray:
    """A number on a grid: each grid index's measurement (shared/two_server/fixed_point.py)
    weighted by how many answers fell on it; a pair's histogram scaled by s."""
    grid = encoding.grid
    assert grid is not None
    counts = np.bincount(indices.astype(np.int64), minlength=grid.top + 1).astype(np.int64)
    j = np.arange(grid.top + 1, dtype=np.int64)
    if encoding.kind == "sum":
        return np.array([int(counts @ j)], dtype=np.int64)
    cells = np.array([_cell(grid_measurement(encoding, int(i))) for i in j], dtype=np.int64)
    histogram = np.bincount(cells, weights=counts,
                            minlength=grid.cells).astype(np.int64)
    if encoding.kind == "histogram":
        return histogram
    return np.append(encoding.scale * histogram, int(counts @ j))


def _cell(measurement: Any) -> int:
    """The histogram cell of a grid measurement (a cell, or [cell, [j]])."""
    return int(measurement[0] if isinstance(measurement, list) else measurement)


__all__ = ["Entry", "Totals", "TwoServerRelease", "check_crosstab_simulated", "geometric_noise",
           "measured_totals", "release_factory", "servers_noise", "simulation_notes"]
