"""The longitudinal (RAPPOR) layer: a memoized permanent randomized response, then fresh
instantaneous randomized response on it each round, for finite-domain questions in a series.

In a longitudinal survey (a `series`), a device reports the same true answer round after round.
The *permanent* layer (the question's own GRR or binary RR at its `epsilon`) is drawn once per
distinct true answer and memoized on the device (client/hazmat_memo.py), so averaging many
rounds never recovers more than one permanent value. Re-sending that identical value each round
would make it a fingerprint linking a device's submissions, so each round the *instantaneous*
layer applies GRR at `instantaneous_epsilon` to the permanent value with fresh CSPRNG noise.

Both layers are symmetric k-ary channels, so their composition is one too:
    P[y = x | x]  = p1·p2 + (k-1)·q1·q2             (= p*)
    P[y = v | x]  = p1·q2 + q1·p2 + (k-2)·q1·q2     (= q*, v != x)
and the server estimates with the pure-protocol estimator at (p*, q*), unchanged.

Privacy accounting:
- one report: ε₁ = ln(p*/q*), exact (`realized_epsilon()`); ε₁ < min(ε_perm, ε_inst).
- unboundedly many reports of the same true answer: the permanent layer's ε
  (`longitudinal_epsilon`), because every report is post-processing of one permanent value.
  Each *distinct* true answer ever given draws a new permanent value and costs that ε again.
`instantaneous_epsilon` may be any positive ε: smaller means less linkable rounds and a more
private single report, at the price of more variance; larger than the permanent ε adds little.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np

from ..aggregates import Aggregate
from ..errors import SurveyError
from ..exact import PrivacyLoss, channel_ratio
from ..randomness import RandomSource
from .base import JointReading, Mechanism
from .grr import GRR
from .pure import PureProtocol, symmetric_index_channel

_EXPLICIT_CHANNEL_MAX_K = 16  # as in grr.py


class Longitudinal(PureProtocol):
    """A permanent symmetric randomized response (GRR, binary RR) memoized on the device,
    followed by a fresh instantaneous layer of the same kind each round."""

    name = "longitudinal"
    question_types = frozenset({"binary", "categorical", "ordinal"})
    summary = ("RAPPOR-style: a memoized permanent randomized response, re-randomized "
               "with fresh noise each round.")
    joint_reports = JointReading.INDEX
    reports_an_answer = True  # the permanent value's index, re-randomized

    def __init__(self, permanent: Mechanism, instantaneous_epsilon: float) -> None:
        if not (permanent.supports_instantaneous_layer and isinstance(permanent, PureProtocol)):
            raise SurveyError(f"questions.{permanent.question_id}.instantaneous_epsilon",
                              f"an instantaneous layer needs a symmetric randomized response, "
                              f"not {permanent.name!r}")
        groups = {name: tuple(members) for name, members in permanent.groups.items()}
        super().__init__(permanent.epsilon, permanent.labels, question_id=permanent.question_id,
                         groups=groups)
        self.permanent = permanent
        self.instantaneous = type(permanent)(instantaneous_epsilon, permanent.labels,
                                             question_id=permanent.question_id)
        # Estimates name what was run: e.g. "grr+instantaneous".
        self.name = f"{permanent.name}+instantaneous"  # type: ignore[misc]
        p1, q1 = permanent.p_star, permanent.q_star
        p2, q2 = self.instantaneous.p_star, self.instantaneous.q_star
        k = self.k
        self.p_star = p1 * p2 + (k - 1) * q1 * q2
        self.q_star = p1 * q2 + q1 * p2 + (k - 2) * q1 * q2
        self._certify()

    @property
    def instantaneous_epsilon(self) -> float:
        return self.instantaneous.epsilon

    @property
    def permanent_layer(self) -> Mechanism:
        """The layer memoized on the device; its ε bounds unboundedly many rounds."""
        return self.permanent

    def rerandomize(self, permanent_value: Any, source: RandomSource | None = None) -> Any:
        """One round's report: fresh GRR noise (OS CSPRNG by default) on the permanent value."""
        index = self.permanent.validate_report(permanent_value)
        return self.instantaneous.perturb(self.labels[int(index)], source=source)

    @classmethod
    def support_probabilities(cls, k: int, epsilon: float) -> tuple[float, float]:
        raise NotImplementedError("a two-layer channel depends on both epsilons: build one and "
                                  "read p_star/q_star")

    @classmethod
    def worst_case_variance(cls, k: int, epsilon: float) -> float:
        raise NotImplementedError("a two-layer channel depends on both epsilons")

    @classmethod
    def set_support_variances(cls, p: float, q: float, k: int, g: int) -> tuple[float, float]:
        # One value supported per report, as in GRR.
        return GRR.set_support_variances(p, q, k, g)

    def channel(self) -> list[list[Fraction]]:
        """The composite P[report y | answer x] as exact fractions."""
        return [[self.p_star if y == x else self.q_star for y in range(self.k)]
                for x in range(self.k)]

    def composed_channel(self) -> list[list[Fraction]]:
        """The same channel computed as the matrix product of the two layers (a cross-check)."""
        a, b = self.permanent.channel(), self.instantaneous.channel()
        k = self.k
        return [[sum((a[x][m] * b[m][y] for m in range(k)), Fraction(0)) for y in range(k)]
                for x in range(k)]

    def privacy_loss(self) -> PrivacyLoss | None:
        if self.k <= _EXPLICIT_CHANNEL_MAX_K:
            ratio = channel_ratio(self.channel())
        else:
            if self.p_star + (self.k - 1) * self.q_star != 1:
                return None
            ratio = max(self.p_star / self.q_star, self.q_star / self.p_star)
        return None if ratio is None else PrivacyLoss(ratio=ratio)

    def params(self) -> dict[str, Any]:
        return {"p": str(self.p_star), "q": str(self.q_star),
                "permanent": self.permanent.params(),
                "instantaneous": self.instantaneous.params()}

    # --- the respondent's side -------------------------------------------------------------

    def perturb_index(self, index: int, source: RandomSource) -> Any:
        # Without memoization: both layers freshly (used by callers outside a series).
        permanent_value = self.permanent.perturb_index(index, source)
        return self.instantaneous.perturb_index(int(permanent_value), source)

    def perturb_many(self, answers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        permanent_values = np.asarray(self.permanent.perturb_many(answers, rng))
        return self.instantaneous.perturb_many(permanent_values.astype(np.int64), rng)

    # --- the aggregator's side: reports look exactly like the permanent mechanism's ----------

    def validate_report(self, report: Any) -> Any:
        return self.permanent.validate_report(report)

    def new_aggregate(self) -> Aggregate:
        return self.permanent.new_aggregate()

    def aggregate_from_dict(self, data: Mapping[str, Any]) -> Aggregate:
        return self.permanent.aggregate_from_dict(data)

    def support_counts(self, aggregate: Aggregate) -> np.ndarray:
        return self.permanent.support_counts(aggregate)

    def index_channel(self) -> tuple[np.ndarray, np.ndarray]:
        """Both layers compose into one symmetric channel over the k answers (p*, q*)."""
        return symmetric_index_channel(self.k, float(self.p_star), float(self.q_star))
