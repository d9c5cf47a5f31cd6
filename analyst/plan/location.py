"""Planning a location question: the margin n respondents buy on its regions (and on a cell).

A location question's numbers are the unbiased linear estimates through the grid's channel
(shared/location_linear.py), whose worst-case variance over every truth is exact and known
before any report arrives: one report's V1 per region (and for the median cell), and, as for
every other question, a margin m needs n = z²·V1/m² respondents. The report uses the same
variance, so a plan's margin is the half-width the report will show. EM's map has no margin;
`simulate` shows it against a clustered truth.
"""

from __future__ import annotations

import numpy as np
from ldpsurvey.shared.location_linear import indicators, unbiased_weights, worst_variance_one
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Question
from ldpsurvey.shared.wording import epsilon_text

from .rows import PlanRow, QuestionPlan, plan_row


def plan_location(question: Question, *, margin: float | None = None, n: int | None = None,
                  confidence: float = 0.95) -> QuestionPlan:
    """Rows per region (configured: they decide n) and one for a single cell (not planned:
    at survey sizes it is noise)."""
    mechanism = mechanism_for(question)
    k = mechanism.k
    regions = [list(members) for members in mechanism.groups.values()]
    targets = np.concatenate([indicators(k, regions), np.eye(k)], axis=1)
    channel = mechanism.geo.dense
    weights = unbiased_weights(channel, targets)
    one = (worst_variance_one(channel, weights, targets) if weights is not None
           else np.full(targets.shape[1], np.inf))
    rows: list[PlanRow] = [plan_row(f"region {name}", float(v), margin, n, confidence, False, True)
                           for name, v in zip(mechanism.groups, one[:len(regions)],
                                              strict=True)]
    rows.append(plan_row("one cell (median)", float(np.median(one[len(regions):])), margin, n,
                     confidence, False, False))
    return QuestionPlan(question=question.id, question_type=question.type, k=question.k,
                        epsilon=question.epsilon, confidence=confidence, rows=rows,
                        margin_unit="proportion", row_label="estimate")


def describe_location(question: Question) -> str:
    grid = question.location
    return (f"location, {grid.rows} x {grid.cols} cells of {grid.cell_km:g} km, epsilon_geo="
            f"{grid.epsilon_geo:g}/km (plain epsilon {epsilon_text(question.epsilon)}), "
            f"{len(question.groups)} region(s); unbiased shares, worst-case variance over "
            f"every truth")
