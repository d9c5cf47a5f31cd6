"""Collected two-server batches simulated from true answers (tests only: numpy noise).

`simulate(survey, answers, parts, rng)` gives one `CollectedBatch` per part of the sample
(cell, group), as the leader forms them from the invitation codes: each key's true totals plus
two independent two-sided geometric draws per coordinate (one per server) of the plan's α,
exactly the noise `shared/two_server/noise.add_noise` adds over the CSPRNG. Questions without a
local ε0 only (the report is the answer); skipped questions leave their keys out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from ldpsurvey.shared.two_server import encoding
from ldpsurvey.shared.two_server.noise import noise_plan
from ldpsurvey.shared.two_server.plans import key_epsilon
from ldpsurvey.shared.two_server.results import BatchEntry, CollectedBatch


def geometric(alpha: float, size: int, rng: np.random.Generator) -> np.ndarray:
    """Two-sided geometric draws: the difference of two geometric counts of failures."""
    if alpha <= 0:
        return np.zeros(size, dtype=np.int64)
    p = 1.0 - alpha
    return rng.geometric(p, size) - rng.geometric(p, size)


def true_totals(survey: Any, answers: Sequence[Mapping[str, Any]]) -> dict[str, tuple[list[int],
                                                                                    int]]:
    """Per key (question, crosstab) the true aggregate and how many answered."""
    from ldpsurvey.client.two_server import check_answers

    encs = encoding.encodings(survey)
    measured_all = []
    for a in answers:  # skip logic resolved as the device does ("not asked" is a value)
        checked = check_answers(survey, a)
        measured_all.append(encoding.measurements(survey, {
            q.id: encoding.question_index(q, checked[q.id]) for q in survey.questions
            if q.id in checked}))
    out: dict[str, tuple[list[int], int]] = {}
    for key, enc in encs.items():
        total = [0] * enc.length
        n = 0
        for measured in measured_all:
            if key not in measured:
                continue
            n += 1
            m = measured[key]
            if enc.kind == "histogram":
                total[m] += 1
            elif enc.kind == "multihot":  # a multiselect question's bits
                total = [t + b for t, b in zip(total, m, strict=True)]
            elif enc.kind == "histogram_sum":  # a number's [bin, [j]]: the bin scaled, then j
                total[m[0]] += enc.scale
                total[-1] += m[1][0]
            else:
                total[0] += m
        out[key] = (total, n)
    return out


def collected(survey: Any, answers: Sequence[Mapping[str, Any]], batch_id: str,
              rng: np.random.Generator | None, cell: str | None = None,
              group: int | None = None) -> CollectedBatch:
    """One collected batch of these respondents (rng None: no noise)."""
    encs = encoding.encodings(survey)
    entries = {}
    for key, (total, n) in true_totals(survey, answers).items():
        enc = encs[key]
        epsilon = key_epsilon(survey, key)
        plan = noise_plan(enc.kind, epsilon, enc.sensitivity)
        noisy = np.asarray(total, dtype=np.int64)
        if rng is not None:
            for _ in range(2):
                noisy = noisy + geometric(plan.alpha, enc.length, rng)
        entries[key] = BatchEntry(key=key, kind=enc.kind, noisy_sums=tuple(int(v) for v in noisy),
                                  n=n, rejected=0, central_epsilon=epsilon,
                                  sensitivity=enc.sensitivity, offset=enc.offset)
    return CollectedBatch(survey.id, survey.version, batch_id, entries, cell, group)


def simulate(survey: Any, answers: Sequence[Mapping[str, Any]],
             parts: Sequence[tuple[str | None, int | None]],
             rng: np.random.Generator | None) -> list[CollectedBatch]:
    """One batch per distinct part (cell, group) of the respondents."""
    by_part: dict[tuple[str | None, int | None], list[Mapping[str, Any]]] = {}
    for a, part in zip(answers, parts, strict=True):
        by_part.setdefault(part, []).append(a)
    return [collected(survey, members, f"b{i}", rng, cell, group)
            for i, ((cell, group), members) in enumerate(sorted(
                by_part.items(), key=lambda item: (str(item[0][0]), item[0][1] or 0)))]
