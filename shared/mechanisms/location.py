"""Location questions: geo-indistinguishability on a designer's grid (shared/location_channel.py).

The true answer is a cell of the grid; the report is a cell index in [0, rows·cols), drawn from
the exact channel P(z | x) = W_D(x,z)/Z_x (exponential mechanism with rounded-up distances).
Two privacy numbers: ε_geo per km (cells d km apart are e^(ε_geo·d)-indistinguishable) and the
plain LDP ε, the exact largest log-ratio between any two cells, which the ledger books and
which the question's `epsilon` must cover. Estimation: the unbiased linear estimate through the
channel with its exact worst-case variance for the numbers, EM for the map
(shared/location_estimate.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..aggregates import Aggregate, CountAggregate
from ..errors import DesignError, PrivacyCheckError
from ..estimates import Estimate
from ..exact import PrivacyLoss
from ..location_channel import QUANTUM, GeoChannel, GridShape, geo_channel
from ..randomness import RandomSource
from ..wording import js_number, pct, to_precision
from .base import IndexReports, JointReading, Mechanism

MAX_CELLS = 1024  # certification ~0.5 s at 32 x 32 (bench/bench_location.py)


def cell_label(row: int, col: int) -> str:
    """The answer label of a cell: 1-based "row,col"."""
    return f"{row},{col}"


class GeoExp(IndexReports, Mechanism):
    name = "geo_exp"
    question_types = frozenset({"location"})
    summary = ("Exponential mechanism over grid cells (geo-indistinguishability): near cells "
               "likelier than far ones.")
    max_options = MAX_CELLS
    joint_reports = JointReading.NONE

    def __init__(self, epsilon: float, labels: Sequence[Any], *, rows: int, cols: int,
                 cell_km: float, epsilon_geo: float, **kwargs: Any) -> None:
        super().__init__(epsilon, labels, **kwargs)
        shape = GridShape(rows, cols, float(cell_km))
        floor = GeoChannel.plain_epsilon_floor(shape, epsilon_geo)
        if floor > self.max_epsilon or floor > 1.1 * self.epsilon:
            raise PrivacyCheckError(
                f"{self.name}: the plain ε of this grid is at least {floor:.4g}, above the "
                f"claimed {self.epsilon!r}", {"claimed": self.epsilon, "realized": floor})
        self.rows, self.cols = rows, cols
        self.cell_km, self.epsilon_geo = float(cell_km), float(epsilon_geo)
        self.geo: GeoChannel = geo_channel(rows, cols, self.cell_km, self.epsilon_geo)
        self._certify()

    @classmethod
    def from_question(cls, question: Any) -> Mechanism:
        grid = question.location
        return cls(question.epsilon, question.labels, question_id=question.id,
                   groups=question.group_indices() if question.groups else None,
                   rows=grid.rows, cols=grid.cols, cell_km=grid.cell_km,
                   epsilon_geo=grid.epsilon_geo)

    # --- planning (a grid is more than k: analyst/plan/location.py plans these) ------------

    @classmethod
    def worst_case_variance(cls, k: int, epsilon: float) -> float:
        raise NotImplementedError("a location question is planned from its grid "
                                  "(analyst/plan/location.py), not from k and ε")

    @classmethod
    def report_bytes(cls, k: int, epsilon: float) -> int:
        return len(str(k - 1))

    def params(self) -> dict[str, Any]:
        return {"base": str(self.geo.base), "quantum": QUANTUM}

    # --- privacy ---------------------------------------------------------------------------

    def privacy_loss(self) -> PrivacyLoss | None:
        return self.geo.certify()

    def deniability(self) -> str:
        return describe_spread(self)

    # --- the respondent's side -------------------------------------------------------------

    def encode(self, answer: Any) -> int:
        """A cell as "row,col" (1-based) or [row, col], or a region's name (its central cell,
        `central_cell`); anything else is refused."""
        if isinstance(answer, list | tuple) and len(answer) == 2 and all(
                isinstance(v, int) and not isinstance(v, bool) for v in answer):
            answer = cell_label(*answer)
        if isinstance(answer, str) and answer in self.groups:
            return self.central_cell(answer)
        if isinstance(answer, str):
            answer = answer.replace(" ", "")
        return super().encode(answer)

    def central_cell(self, region: str) -> int:
        """The member of a region nearest its centroid (the first in row order on a tie): a
        respondent who names a region answers "around here" in the designer's words."""
        members = np.array(self.groups[region])
        r, c = np.divmod(members, self.cols)
        far = (r - r.mean()) ** 2 + (c - c.mean()) ** 2
        return int(members[int(np.argmin(far))])

    def perturb_index(self, index: int, source: RandomSource) -> int:
        weights = self.geo.row_weights(index)
        draw = source.randbelow(self.geo.totals[index])
        for z, w in enumerate(weights):
            if draw < w:
                return z
            draw -= w
        raise AssertionError("unreachable: the draw is below the total weight")

    def perturb_many(self, answers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        answers = np.asarray(answers, dtype=np.int64)
        dense = self.geo.dense
        out = np.empty(answers.size, dtype=np.int64)
        u = rng.random(answers.size)
        for x in np.unique(answers):
            at = answers == x
            cdf = np.cumsum(dense[x])
            out[at] = np.minimum(np.searchsorted(cdf, u[at], side="right"), self.k - 1)
        return out

    # --- the aggregator's side -------------------------------------------------------------

    def estimate(self, aggregate: Aggregate, confidence: float = 0.95) -> Estimate:
        from ..location_estimate import estimate_location

        assert isinstance(aggregate, CountAggregate)
        return estimate_location(self, aggregate.counts, confidence)

    def consistent_distribution(self, f_hat: np.ndarray) -> np.ndarray:
        """EM's maximum-likelihood map for the report frequencies that unbiased cell
        estimates `f_hat` imply (f̂·A): the plain estimate's 'consistent' for its own counts,
        and a weighted (pseudo-likelihood) one for design-based estimates (shared/estimand.py)."""
        from ..location_estimate import em, operator

        channel = operator(self.geo)
        observed = np.maximum(channel.reports(np.atleast_2d(np.asarray(f_hat, dtype=float))),
                              0.0)
        return em(channel, observed / observed.sum()).f[0]

    def pseudo_values(self, reports: Any) -> np.ndarray:
        """Row z of the channel's inverse for each report z (contract 5): the per-respondent
        terms of the unbiased linear estimate the report's intervals stand on
        (shared/location_linear.py); E[row | true cell x] = e_x."""
        from ..location_linear import unbiased_weights

        weights = unbiased_weights(self.geo.dense, np.eye(self.k))
        if weights is None:
            raise DesignError(f"{self.name}: this grid's channel cannot be inverted in floating "
                              f"point (ε_geo·cell size too small), so no pseudo-values")
        return weights[np.asarray(reports).astype(np.int64).reshape(-1)]

    def aggregate_from_dict(self, data: Mapping[str, Any]) -> CountAggregate:
        return CountAggregate.from_dict(data, size=self.k)


def describe_spread(mechanism: GeoExp, x: int | None = None) -> str:
    """The randomization in words for true cell x (default: a corner, the least favoured): the
    page's sentence (client/web/js/mechanisms.js geoCore.describe), character for character."""
    x = 0 if x is None else x
    radius, near = spread_km(mechanism, x)
    geo = js_number(mechanism.epsilon_geo)
    return (f"Your device will send a cell near yours (possibly yours): within "
            f"{to_precision(radius, 3)} km of it with probability {pct(near)} (your own cell "
            f"with probability {pct(mechanism.geo.dense[x][x])}). A report is at most "
            f"e^({geo}·d) times likelier from one place than from another d km away "
            f"(ε_geo = {geo} per km).")


def _radius_for(geo: GeoChannel, x: int, mass: float) -> float:
    """The smallest centre distance (km) within which reports fall with at least `mass`."""
    distances = geo.shape.centre_distance_km()[x]
    order = np.argsort(distances, kind="stable")
    cumulative = np.cumsum(geo.dense[x][order])
    i = int(np.searchsorted(cumulative, mass))
    return float(distances[order][min(i, len(order) - 1)])


def spread_km(mechanism: GeoExp, x: int, mass: float = 0.5) -> tuple[float, float]:
    """(radius km, probability within it) for the review's words."""
    radius = _radius_for(mechanism.geo, x, mass)
    return radius, mechanism.geo.within_km(x, radius)
