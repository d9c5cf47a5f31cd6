"""Two-server surveys for the estimator tests (parsed by shared/survey.py), and a vectorized
batch simulator of many repetitions. The batch entry and the servers' simulated noise are the
library's (analyst/simulate/two_server.py, which `ldpsurvey simulate` runs).

Simulation only (numpy generators): nothing here can send a report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from ldpsurvey.analyst.simulate.two_server import Entry, geometric_noise, servers_noise
from ldpsurvey.shared.survey import Question, Survey
from ldpsurvey.shared.two_server.noise import NoisePlan


def question_data(qtype: str, central: float, local: float | None = None, *, qid: str = "q",
                  mechanism: str | None = None, **spec: Any) -> dict[str, Any]:
    """One two-server question as the designer writes it; with ε0 the local mechanism defaults
    to binary_rr / grr / geometric."""
    data: dict[str, Any] = {"id": qid, "text": f"{qid}?", "type": qtype,
                            "central_epsilon": central, **spec}
    if local is not None:
        data["local_epsilon"] = local
        data["mechanism"] = mechanism or {"binary": "binary_rr",
                                          "integer": "geometric"}.get(qtype, "grr")
    return data


def question(qtype: str, central: float, local: float | None = None, *, qid: str = "q",
             mechanism: str | None = None, **spec: Any) -> Question:
    """A parsed two-server `Question` (shared/survey.py, the contract's fields)."""
    data = question_data(qtype, central, local, qid=qid, mechanism=mechanism, **spec)
    return Survey.from_dict(two_server_survey_dict([data])).questions[0]


def survey_of(questions: Sequence[dict[str, Any]], crosstabs: Sequence[Any] = (),
              version: int = 1, delta: float = 1e-6, survey_id: str = "s") -> Survey:
    """A parsed two-server survey of these question dicts (`question_data`)."""
    data = two_server_survey_dict(list(questions), list(crosstabs))
    data["two_server"]["delta"] = delta
    data.update(id=survey_id, version=version)
    return Survey.from_dict(data)


@dataclass(frozen=True)
class Batch:
    survey_id: str
    version: int
    batch_id: str
    entries: Mapping[str, Entry]


def simulate_cells(rng: np.random.Generator, n: int, cell_probs: np.ndarray, plan: NoisePlan,
                   reps: int, count: bool = False) -> np.ndarray:
    """`reps` released totals: report-cell counts of n i.i.d. respondents plus both servers'
    noise. `count`: a yes/no Count (only cell 1's total is released)."""
    counts = rng.multinomial(n, cell_probs / cell_probs.sum(), size=reps)
    if count:
        counts = counts[:, 1:2]
    return counts + servers_noise(rng, plan, counts.shape)


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
    return sums + servers_noise(rng, plan, reps)


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


__all__ = ["Batch", "Entry", "entries", "geometric_noise", "question", "question_data",
           "simulate_cells", "simulate_sums", "survey_of", "two_server_survey_dict"]
