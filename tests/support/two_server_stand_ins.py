"""Stand-ins for the two-server survey fields (central_epsilon, local_epsilon, collection,
two_server) until shared/survey.py parses them, and a vectorized batch simulator.

Simulation only (numpy generators): nothing here can send a report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np
from ldpsurvey.shared.survey import CrosstabSpec, Question, Survey
from ldpsurvey.shared.two_server.noise import NoisePlan


@dataclass(frozen=True)
class TwoServerQuestion:
    """A `Question` with the contract's two-server fields. `base` is built at the local ε0
    (its mechanism is the local one); without ε0 `mechanism` reads "none"."""

    base: Question
    central_epsilon: float
    local_epsilon: float | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.base, name)

    @property
    def mechanism(self) -> str:
        return self.base.mechanism if self.local_epsilon is not None else "none"

    @property
    def epsilon(self) -> float:
        return self.local_epsilon if self.local_epsilon is not None else self.central_epsilon


def question(qtype: str, central: float, local: float | None = None, *, qid: str = "q",
             mechanism: str | None = None, **spec: Any) -> TwoServerQuestion:
    data = {"id": qid, "text": f"{qid}?", "type": qtype,
            "epsilon": local if local is not None else 1.0, **spec}
    if mechanism is not None:
        data["mechanism"] = mechanism
    elif qtype == "binary":
        data["mechanism"] = "binary_rr"
    elif qtype != "integer":
        data["mechanism"] = "grr"
    base = Survey.from_dict({"id": "s", "title": "s", "version": 1,
                             "questions": [data]}).questions[0]
    return TwoServerQuestion(base, central, local)


@dataclass(frozen=True)
class StandInSurvey:
    id: str
    version: int
    questions: tuple[TwoServerQuestion, ...]
    crosstabs: tuple[CrosstabSpec, ...] = ()
    title: str = "A two-server survey"
    description: str = ""
    collection: str = "two-server"
    two_server: Any = field(default_factory=lambda: SimpleNamespace(delta=1e-6))

    def question(self, qid: str) -> TwoServerQuestion:
        for q in self.questions:
            if q.id == qid:
                return q
        raise KeyError(qid)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "version": self.version,
                "description": self.description,
                "questions": [dict(q.base.to_dict(), epsilon=q.central_epsilon,
                                   mechanism=q.mechanism, central_epsilon=q.central_epsilon,
                                   local_epsilon=q.local_epsilon) for q in self.questions]}


@dataclass(frozen=True)
class Entry:
    noisy_sums: list[int]
    n: int
    noise_plan: NoisePlan
    rejected: int = 0


@dataclass(frozen=True)
class Batch:
    survey_id: str
    version: int
    batch_id: str
    entries: Mapping[str, Entry]


def geometric_noise(rng: np.random.Generator, plan: NoisePlan, size: Any) -> np.ndarray:
    """One server's two-sided geometric noise (simulation: numpy, not the exact sampler)."""
    success = 1.0 - plan.alpha
    return rng.geometric(success, size) - rng.geometric(success, size)


def simulate_cells(rng: np.random.Generator, n: int, cell_probs: np.ndarray, plan: NoisePlan,
                   reps: int, count: bool = False) -> np.ndarray:
    """`reps` released totals: report-cell counts of n i.i.d. respondents plus both servers'
    noise. `count`: a yes/no Count (only cell 1's total is released)."""
    counts = rng.multinomial(n, cell_probs / cell_probs.sum(), size=reps)
    if count:
        counts = counts[:, 1:2]
    return counts + geometric_noise(rng, plan, counts.shape) + geometric_noise(rng, plan,
                                                                                counts.shape)


def entries(totals: np.ndarray, n: int, plan: NoisePlan) -> list[Entry]:
    return [Entry([int(v) for v in row], n, plan) for row in totals]


def simulate_sums(rng: np.random.Generator, values: Sequence[int], probs: np.ndarray,
                  n: int, plan: NoisePlan, reps: int, offset: int,
                  local: Any = None) -> np.ndarray:
    """`reps` released Sum totals of (report - offset) for n i.i.d. respondents."""
    answers = rng.choice(np.asarray(values), size=(reps, n), p=probs)
    if local is not None:
        lo, hi = local.report_bounds
        noisy = local.perturb_many(answers.ravel() - local.low, rng).reshape(reps, n)
        answers = np.clip(noisy, lo, hi)
    sums = (answers - offset).sum(axis=1)
    return sums + geometric_noise(rng, plan, reps) + geometric_noise(rng, plan, reps)


def two_server_survey_dict(questions: list[dict[str, Any]],
                           crosstabs: list[Any] | None = None) -> dict[str, Any]:
    """A two-server survey as the designer writes it (shared/two_server/config.py's table)."""
    from ldpsurvey.shared.two_server.config import b64url

    data: dict[str, Any] = {
        "id": "ts", "title": "Two servers", "version": 1, "collection": "two-server",
        "two_server": {"helper_url": "https://helper.example",
                       "helper_hpke_key": b64url(bytes(range(32))),
                       "leader_hpke_key": b64url(bytes(range(1, 33))),
                       "min_batch_size": 10, "delta": 1e-6},
        "questions": questions}
    if crosstabs:
        data["crosstabs"] = crosstabs
    return data
