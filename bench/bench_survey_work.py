"""The most work one survey definition can cause: parse (every device), verify and compile
(the server, on publish), and the first estimate of its costliest questions.

Run: `python bench/bench_survey_work.py [--quick]`. Prints numbers, asserts nothing. Each
survey is the worst of its kind within the schema's bounds (500 questions, 2^20 options in all,
each mechanism's declared limits); times are CPU seconds of this process (`time.process_time`),
so a loaded machine inflates them less than wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.server.surveys import compile_survey
from ldpsurvey.shared.manifest import sign_survey, verify_manifest
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.mechanisms.base import MIN_EPSILON
from ldpsurvey.shared.survey import MAX_QUESTIONS, MAX_TOTAL_OPTIONS, Survey


def cpu(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.process_time()
    result = fn()
    return time.process_time() - start, result


def question(i: int, qtype: str, k: int, epsilon: float, mechanism: str) -> dict[str, Any]:
    q: dict[str, Any] = {"id": f"q{i}", "text": "?", "type": qtype, "epsilon": epsilon,
                         "mechanism": mechanism}
    if qtype == "integer":
        q.update(min=0, max=k - 1)
    else:
        q["options"] = [f"o{j}" for j in range(k)]
    return q


def surveys(count: int) -> dict[str, list[dict[str, Any]]]:
    """Distinct ε per question, so no cache makes repeated questions free."""
    wide = MAX_TOTAL_OPTIONS // 65536
    return {
        f"ordinal_exp k=16 x{count}": [question(i, "ordinal", 16, MIN_EPSILON * (1 + i),
                                                "ordinal_exp") for i in range(count)],
        f"ordinal auto k=1024 x{count}": [question(i, "ordinal", 1024, 0.5 + i / 1000, "auto")
                                          for i in range(min(count, MAX_TOTAL_OPTIONS // 1024))],
        f"grr k=64 x{count}": [question(i, "categorical", 64, 0.5 + i / 1000, "grr")
                               for i in range(count)],
        f"hr k=63 x{count}": [question(i, "categorical", 63, 0.5 + i / 1000, "hr")
                              for i in range(count)],
        f"ss k=65536 x{wide}": [question(i, "categorical", 65536, MIN_EPSILON * (1 + i), "ss")
                                for i in range(wide)],
        f"auto categorical k=65536 x{wide}": [question(i, "categorical", 65536, 0.5 + i / 100,
                                                       "auto") for i in range(wide)],
        f"geometric 256 values x{count}": [question(i, "integer", 256, MIN_EPSILON * (1 + i),
                                                    "geometric") for i in range(count)],
    }


def first_estimates(survey: Survey, limit: int) -> float:
    """CPU seconds of the first estimate of up to `limit` questions (n = 1000 simulated)."""
    total = 0.0
    rng = np.random.default_rng(0)
    for q in survey.questions[:limit]:
        mech = mechanism_for(q)
        agg = mech.aggregate_many(mech.perturb_many(rng.integers(0, min(q.k, 2**31),
                                                                 size=1000), rng))
        seconds, _ = cpu(lambda mech=mech, agg=agg: mech.estimate(agg))
        total += seconds
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="50 questions instead of 500")
    args = parser.parse_args()
    count = 50 if args.quick else MAX_QUESTIONS
    key = Ed25519PrivateKey.generate()
    print(f"CPU seconds per survey; load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} CPUs")
    print(f"{'survey':<36} {'JSON MB':>8} {'parse':>7} {'verify':>7} {'compile':>8} "
          f"{'estimate 10':>12}")
    for name, questions in surveys(count).items():
        data = {"id": "s", "title": "t", "version": 1, "questions": questions}
        parse, survey = cpu(lambda data=data: Survey.from_dict(data))
        body = sign_survey(survey, key).to_dict()
        size = len(json.dumps(body)) / 1e6
        verify, signed = cpu(lambda body=body: verify_manifest(body))
        compiled, _ = cpu(lambda signed=signed: compile_survey(signed.sha256,
                                                               signed.survey.to_dict()))
        estimate = first_estimates(survey, 10)
        print(f"{name:<36} {size:>8.1f} {parse:>7.2f} {verify:>7.2f} {compiled:>8.2f} "
              f"{estimate:>12.2f}", flush=True)


if __name__ == "__main__":
    main()
