"""Planning a location question: the margin n respondents buy on its regions (and on a cell).

A location question's estimate is EM over the grid's channel (shared/location_estimate.py), not
a linear estimator with a closed-form variance, so its plan is simulated: n reports from a
uniform truth over the grid (seeded), estimated as the server would, and the bootstrap spread
of each region's share (and the median cell's) turned into a one-report variance V1 = SD²·n.
As for other questions a margin m then needs n = z²·V1/m² respondents: for EM this √n scaling
is an approximation (its spread depends on the truth and shrinks a little faster than 1/√n
while the fit is smoothing), so `simulate` is the check for a given design.
"""

from __future__ import annotations

import numpy as np

from ..shared.location_estimate import fit, operator
from ..shared.mechanisms import mechanism_for
from ..shared.survey import Question
from .planner import PlanRow, QuestionPlan, _row

PILOT_N = 20_000
_SEED = 21


def plan_location(question: Question, *, margin: float | None = None, n: int | None = None,
                  confidence: float = 0.95) -> QuestionPlan:
    """Rows per region (configured: they decide n) and one for a single cell (not planned:
    at survey sizes it is noise)."""
    mechanism = mechanism_for(question)
    pilot = n if n is not None else PILOT_N
    rng = np.random.default_rng(_SEED)  # simulation only
    answers = rng.integers(0, mechanism.k, size=pilot)
    counts = np.bincount(mechanism.perturb_many(answers, rng), minlength=mechanism.k)
    fitted = fit(operator(mechanism.geo), counts)
    rows: list[PlanRow] = []
    for name, members in mechanism.groups.items():
        spread = fitted.replicates[:, list(members)].sum(axis=1).std(ddof=1)
        rows.append(_row(f"region {name}", float(spread) ** 2 * pilot, margin, n, confidence,
                         False, True))
    cell = float(np.median(fitted.replicates.std(axis=0, ddof=1)))
    rows.append(_row("one cell (median)", cell**2 * pilot, margin, n, confidence, False, False))
    return QuestionPlan(question=question.id, question_type="location", k=question.k,
                        epsilon=question.epsilon, confidence=confidence, rows=rows,
                        margin_unit="proportion")


def describe_location(question: Question) -> str:
    grid = question.location
    return (f"location, {grid.rows} x {grid.cols} cells of {grid.cell_km:g} km, epsilon_geo="
            f"{grid.epsilon_geo:g}/km (plain epsilon {question.epsilon:g}), "
            f"{len(question.groups)} region(s); EM shares simulated at a uniform truth "
            f"(bootstrap spread of a {PILOT_N:,}-report pilot, or of --n reports)")
