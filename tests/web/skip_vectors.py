"""Test vectors for questions with a "not asked" value (skip logic): the browser's randomizers
must reproduce the Python client's reports for the options and for NOT_ASKED itself.

Each vector's survey has a randomized yes/no gate and the question under test, `relevant =
"gate"`, so the question depends on a randomized answer and its domain ends with "not asked"
(shared/skip_logic.py). As in vectors.py, a case holds the canonical question, an answer, the
tape of draws the Python client requested (a seeded recording source: tests only) and the
report it sent; memoized cases come from the client's HAZMAT memo with the fixed test secret.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ldpsurvey.client.hazmat_memo import SECRET_FILE, Memoizer
from ldpsurvey.client.state import StateDir
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.skip_logic import NOT_ASKED
from ldpsurvey.shared.survey import Survey
from vectors import MEMO_SECRET, SEEDS, SERIES, _answers, _memoized, _perturb

GATE = {"id": "gate", "text": "Gate?", "type": "binary", "mechanism": "binary_rr",
        "epsilon": 1.0}
EPSILONS = (0.01, 1.0, 50.0)
RANGES = ((0, 1), (0, 2), (0, 3), (0, 30), (-5, 10), (0, 1000), (-2**30, 2**30))


def survey_of(spec: dict[str, Any], series: str | None = None) -> dict[str, Any]:
    """The canonical survey: the gate, then the question (`relevant = "gate"`)."""
    data = {"id": "skip-vectors", "title": "Skip vectors", "version": 1,
            "questions": [GATE, {"id": "q", "text": "Then?", "relevant": "gate", **spec}]}
    if series is not None:
        data["series"] = series
    return Survey.from_dict(data).to_dict()


def _specs() -> Iterator[dict[str, Any]]:
    for epsilon in EPSILONS:
        yield {"type": "binary", "epsilon": epsilon}  # auto
        yield {"type": "binary", "mechanism": "hr", "epsilon": epsilon}
        for k in (2, 3, 16):
            options = [f"option {i}" for i in range(k)]
            for name in ("grr", "hr"):
                yield {"type": "categorical", "mechanism": name, "epsilon": epsilon,
                       "options": options, "groups": {"first two": options[:2]}}
        yield {"type": "ordinal", "mechanism": "ordinal_exp", "epsilon": epsilon,
               "options": ["low", "mid", "high"]}
        yield {"type": "ordinal", "epsilon": epsilon, "options": [f"s{i}" for i in range(16)]}
        for low, high in RANGES:
            yield {"type": "integer", "epsilon": epsilon, "min": low, "max": high}
    for name in ("option_rr", "set_ue", "psfo_grr"):  # check all that apply
        for m in (1, 2, 4):
            if name == "set_ue" and 2 * m > 5:
                continue
            yield {"type": "multiselect", "mechanism": name, "epsilon": 2.0,
                   "options": ["a", "b", "c", "d"], "max_selected": m}
    # with exclusive options: "not asked" is one more (SetShape.with_not_asked)
    for name, m in (("option_rr", 5), ("psfo_grr", 5), ("psfo_grr", 2), ("set_ue", 1)):
        yield {"type": "multiselect", "mechanism": name, "epsilon": 2.0, "max_selected": m,
               "options": ["a", "b", "c", "none", "dk"], "exclusive": ["none", "dk"]}
    yield {"type": "categorical", "mechanism": "grr", "epsilon": 1e-6, "options": ["a", "b"]}
    yield {"type": "integer", "epsilon": 1e-6, "min": 0, "max": 10}


def _series_specs() -> Iterator[tuple[dict[str, Any], bool]]:
    """(spec, memoized) of series questions: layered GRR, and memo-only ones."""
    for permanent, instantaneous in ((1.0, 0.5), (2.0, 2.0)):
        yield {"type": "binary", "epsilon": permanent,
               "instantaneous_epsilon": instantaneous}, False
        yield {"type": "categorical", "mechanism": "grr", "epsilon": permanent,
               "instantaneous_epsilon": instantaneous, "options": ["a", "b", "c"]}, True
    yield {"type": "integer", "epsilon": 0.5, "min": -3, "max": 40}, True
    yield {"type": "ordinal", "mechanism": "ordinal_exp", "epsilon": 2.0,
           "options": ["low", "mid", "high"]}, True


def build_skip_vectors() -> list[dict[str, Any]]:
    """Every case, JSON-ready (big integers and tape entries as strings)."""
    cases: list[dict[str, Any]] = []

    def add(spec: dict[str, Any], series: str | None, memo: Memoizer | None) -> None:
        survey = survey_of(spec, series)
        question = survey["questions"][1]
        mech = mechanism_for(Survey.from_dict(survey).questions[1])
        for answer in [*_answers(question, every=memo is not None), NOT_ASKED]:
            for seed in SEEDS if memo is None else SEEDS[:1]:
                result = (_perturb(mech, answer, seed) if memo is None
                          else _memoized(mech, question, answer, seed, memo))
                cases.append({"survey": survey, "question": question, "answer": answer,
                              **result})

    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / SECRET_FILE).write_bytes(MEMO_SECRET)
        memo = Memoizer(StateDir(tmp))
        for spec in _specs():
            add(spec, None, None)
        for spec, memoized in _series_specs():
            add(spec, SERIES, memo if memoized else None)
    for case in cases:
        case["tape"] = [[hex(n), hex(v)] for n, v in case["tape"]]
        if case["question"]["type"] == "integer" and case["answer"] != NOT_ASKED:
            case["answer"] = str(case["answer"])
    return cases
