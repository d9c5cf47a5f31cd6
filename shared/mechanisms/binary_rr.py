"""Warner's randomized response for yes/no questions: tell the truth with p = e/(e + 1).

It is GRR with k = 2 on the wire as a JSON boolean (true: the report says "yes").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ReportError, SurveyError
from ..randomness import RandomSource
from .grr import GRR


class BinaryRR(GRR):
    name = "binary_rr"
    question_types = frozenset({"binary"})
    summary = "Warner's randomized response: answer truthfully with probability e^ε/(e^ε+1)."

    def __init__(self, epsilon: float, labels: Any = (False, True), **kwargs: Any) -> None:
        if tuple(labels) != (False, True):
            raise SurveyError("domain", "binary randomized response answers False/True")
        super().__init__(epsilon, labels, **kwargs)

    @classmethod
    def report_bytes(cls, k: int, epsilon: float) -> int:
        return len("false")

    def perturb_index(self, index: int, source: RandomSource) -> bool:
        return bool(super().perturb_index(index, source))

    def perturb_many(self, answers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        answers = np.asarray(answers).astype(bool)
        flip = rng.random(answers.size) >= float(self.p_star)
        return answers ^ flip

    def validate_report(self, report: Any) -> bool:
        if not isinstance(report, bool | np.bool_):
            raise ReportError(f"a yes/no report must be true or false, got {report!r}")
        return bool(report)

    def validate_reports(self, reports: Sequence[Any]) -> list[Any]:
        if all(type(r) is bool for r in reports):
            return list(reports)
        return [self.validate_report(r) for r in reports]
