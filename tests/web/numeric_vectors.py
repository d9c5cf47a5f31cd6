"""Test vectors proving the page's mean mechanisms (client/web/js/numeric_mechanisms.js) equal
shared/mechanisms' duchi, piecewise and hybrid draw for draw.

A case is (mechanism, ε, k grid values, the params Python derives, a grid index, the tape of
(n, value) draws a seeded recording source handed out while Python perturbed it, the report
index). Refused cases hold descriptions the page must refuse (tampered params, limits).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from ldpsurvey.shared.mechanisms import MEAN_MECHANISMS
from support.sources import RecordingSource

# Tiny (rationals grow long), below and above the hybrid's ε* ≈ 0.61, ordinary, the cell-count
# steps (16, 32, 64, 128, 4096 cells) and the largest ε the schema allows.
EPSILONS = (1e-6, 0.3, 0.6, 0.62, 1.0, 4.0, 8.0, 14.0, 50.0)
SIZES = (2, 3, 101, 4097)
SEEDS = (1, 2)


def _indices(k: int) -> tuple[int, ...]:
    return tuple(sorted({0, k // 2, k - 1}))


def build_cases() -> list[dict[str, Any]]:
    cases = []
    for name, cls in sorted(MEAN_MECHANISMS.items()):
        for epsilon in EPSILONS:
            for k in SIZES:
                mech = cls(epsilon, range(k))
                params = mech.params()
                for index in _indices(k):
                    for seed in SEEDS:
                        source = RecordingSource(seed + index)
                        report = mech.perturb(index, source)
                        assert mech.validate_report(report) == report
                        cases.append({"mechanism": name, "epsilon": epsilon, "k": k,
                                      "params": params, "index": index, "report": report,
                                      "tape": [[hex(n), hex(v)] for n, v in source.tape]})
    return cases


def refused() -> Iterator[tuple[str, dict[str, Any]]]:
    """(why, description) the page must refuse with ManifestMismatch."""
    def described(name: str, epsilon: float, k: int) -> dict[str, Any]:
        mech = MEAN_MECHANISMS[name](epsilon, range(k))
        return {"mechanism": name, "epsilon": epsilon, "k": k, "params": mech.params()}

    pm = described("piecewise", 1.0, 11)
    fewer = copy.deepcopy(pm)
    fewer["params"]["cells"] = 16
    yield "fewer cells than derived", fewer
    bolder = copy.deepcopy(pm)
    bolder["params"]["exp_half_epsilon"] = "2"
    yield "a larger e^(ε/2)", bolder
    raised = copy.deepcopy(pm)
    raised["epsilon"] = 2.0
    yield "ε raised without new parameters", raised
    duchi = described("duchi", 1.0, 11)
    keen = copy.deepcopy(duchi)
    keen["params"]["exp_epsilon"] = "3"
    yield "a larger e^ε for duchi", keen
    hybrid = described("hybrid", 1.0, 11)
    mixed = copy.deepcopy(hybrid)
    mixed["params"]["alpha"] = "1/2"
    yield "another mix", mixed
    missing = copy.deepcopy(hybrid)
    del missing["params"]["alpha"]
    yield "a parameter missing", missing
    yield "a grid beyond 65536 values", {**duchi, "k": 65537}
    yield "ε above the schema's maximum", {**duchi, "epsilon": 51.0}
    yield "an unknown mechanism", {**duchi, "mechanism": "laplace"}
