"""Test vectors that prove the page's Square Wave port (client/web/js/square_wave.js) equals
shared/mechanisms/square_wave.py: for each (ε, range, answer, seed) the tape of (n, value)
draws Python requested, the report it sent and the parameters it derived. `refused` holds
parameters the page must refuse (a manifest's, tampered). No question type takes square_wave
yet (issue 41), so these are built from the mechanism, not through a survey.
"""

from __future__ import annotations

import math
from typing import Any

from ldpsurvey.shared.mechanisms.square_wave import SquareWave
from support.sources import RecordingSource

# Tiny (series branch of b), the branch's edge, ordinary, ln 3, large, the schema's largest.
EPSILONS = (1e-6, 0.001, 0.03124999, 0.03125, 0.5, 1.0, math.log(3), 4.0, 8.0, 50.0)
# Two values, a few, one grid point per value (1024), bucketed (1025 and beyond), JSON's limit.
RANGES = ((0, 1), (0, 4), (-5, 10), (0, 1023), (0, 1024), (-2**30, 2**30),
          (-(2**53 - 1), 2**53 - 1))
SEEDS = (1, 2)


def _answers(low: int, high: int) -> list[int]:
    return sorted({low, (low + high) // 2, high, min(high, low + 1)})


def build_square_wave_vectors() -> dict[str, Any]:
    """Cases and refusals, JSON-ready (big integers as strings, tape entries as hex)."""
    cases = []
    for epsilon in EPSILONS:
        for low, high in RANGES:
            mech = SquareWave(epsilon, range(low, high + 1))
            for answer in _answers(low, high):
                for seed in SEEDS:
                    source = RecordingSource(seed)
                    report = mech.validate_report(mech.perturb(answer, source))
                    cases.append({"epsilon": epsilon, "min": str(low), "max": str(high),
                                  "params": mech.params(), "answer": str(answer),
                                  "report": report,
                                  "tape": [[hex(n), hex(v)] for n, v in source.tape]})
    base = SquareWave(1.0, range(0, 100)).params()
    refused = [
        {"why": "half window widened", "params": {**base, "half_window": base["half_window"] + 1,
                                                  "cells": base["cells"] + 2}},
        {"why": "e raised", "params": {**base, "e": "3/1"}},
        {"why": "grid changed", "params": {**base, "grid": 50}},
        {"why": "a parameter missing", "params": {k: v for k, v in base.items() if k != "e"}},
        {"why": "an extra parameter", "params": {**base, "p": "1/2"}},
        {"why": "a number as a string", "params": {**base, "cells": str(base["cells"])}},
    ]
    for item in refused:
        item.update(epsilon=1.0, min="0", max="99")
    return {"cases": cases, "refused": refused}
