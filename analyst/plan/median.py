"""The plan of a median: respondents for a margin on the median of a number's distribution (the
square wave with EMS), or the margin n respondents give, by a short seeded simulation.

Why a simulation. The median is read off the EMS distribution (shared/numeric/distribution.py),
and EMS is not linear in the reports: no variance formula carries its smoothing and stopping
(its reports' estimate is also biased toward smooth shapes). The only unbiased linear CDF
estimator of the window channel has a standard deviation past 1 at n = 2,000 on a fine grid, so
the asymptotic s.e. var(F̂(median))^(1/2)/density from it would plan for an estimator nobody
uses. So the plan measures the estimator the reports use.

The method, for an assumed truth (the unit's default simulation truth: for a decimal,
P[grid index i] ∝ exp(-4i/k), skewed toward min as incomes are):
- the exact report distribution A·f: f the truth on the mechanism's grid points, A its exact
  window channel (`p_cell`, `q_cell` as floats, the channel EMS itself uses);
- `RUNS` report-count vectors of n reports, multinomial from A·f (a numpy generator with a
  fixed seed: analysis only, no report is drawn for a respondent; the same question plans the
  same); EMS on each and its interpolated median (`Cells.quantile`);
- the margin at n is the `confidence` quantile of |median estimate - true median| over the
  runs (the true median the same interpolation of f), in the question's units (the mechanism's
  `scale`): the half-width that holds the truth in that share of surveys, bias included;
- the respondents for a margin m: margin(n) ∝ 1/sqrt(n) once n is large (EMS's bias shrinks
  with n too, about as fast), so from a pilot n0 = 2,000 the next n is n0·(margin(n0)/m)², and
  once more from there (`STEPS` = 2 simulations), rounded up to two significant figures (a
  simulated n is no finer). A margin that would need more than `LARGEST` is refused.
EMS runs with SQUAREM (`accelerate`): the same fixed points in far fewer iterations (the
report path stops plain EMS at its likelihood tolerance; the test below measures the two
together). The simulated quantile's own error at RUNS = 200 is a binomial sd of 0.015 in
coverage. tests/analyst/test_plan_median.py checks the planned n and margin against the report
path (answers drawn from the truth, the mechanism's own sampler, `distribution_estimate`'s
EMS and median).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from ldpsurvey.shared.errors import PlanError
from ldpsurvey.shared.numeric.distribution import Cells, window_channel
from ldpsurvey.shared.numeric.ems import ems

from .rows import MedianPlan

RUNS = 200
SEED = 41  # the issue: every plan of one question draws the same runs
START = 2_000
STEPS = 2
LARGEST = 10**8  # respondents beyond any survey: a margin needing more is refused


def plan_median(question: Any, *, margin: float | None, n: int | None,
                confidence: float) -> MedianPlan | None:
    """The median's plan of `question` (module docstring), or None where its unit has no
    distribution mechanism for it."""
    mech = question.unit.distribution_mechanism(question)
    if mech is None:
        return None
    truth = question.unit.default_truth(question).probabilities()
    step = float(mech.scale.spread(1.0))  # one index step in the question's units
    if n is not None:
        return MedianPlan(mech.name, mech.epsilon, n,
                          median_margin(mech, truth, n, confidence) * step, RUNS, TRUTH_WORDS)
    assert margin is not None
    needed = median_respondents(mech, truth, margin / step, confidence)
    if needed is None:
        raise PlanError(f"{question.id}: a margin of {margin:g} on the median needs more than "
                        f"{LARGEST:,} respondents (EMS's smoothing bias may exceed it): widen "
                        f"it")
    return MedianPlan(mech.name, mech.epsilon, needed, margin, RUNS, TRUTH_WORDS)


TRUTH_WORDS = "the default simulation truth"


def median_errors(mech: Any, truth: np.ndarray, n: int, runs: int = RUNS,
                  seed: int = SEED) -> np.ndarray:
    """|EMS median - true median| (answer index units) of `runs` simulated surveys of n reports
    drawn from the exact report distribution (module docstring)."""
    channel = window_channel(mech)
    cells = Cells.of(mech)
    f = np.add.reduceat(np.asarray(truth, dtype=float), cells.first.astype(np.int64))
    reports = channel.reports(f[None, :])[0]
    counts = np.random.default_rng(seed).multinomial(n, reports / reports.sum(), size=runs)
    fits = ems(channel, counts, accelerate=True)
    return np.abs(cells.quantile(fits, 0.5) - cells.quantile(f[None, :], 0.5)[0])


def median_margin(mech: Any, truth: np.ndarray, n: int, confidence: float) -> float:
    """The `confidence` quantile of the median's error with n reports (index units)."""
    return float(np.quantile(median_errors(mech, truth, n), confidence))


def median_respondents(mech: Any, truth: np.ndarray, margin: float,
                       confidence: float) -> int | None:
    """The respondents whose median's error is within `margin` (index units) at `confidence`
    (module docstring: n ∝ margin(n)², from START, STEPS times, to two significant figures);
    None beyond LARGEST."""
    n = START
    for _ in range(STEPS):
        found = median_margin(mech, truth, n, confidence)
        n = max(10, math.ceil(n * (found / margin) ** 2))
        if n > LARGEST:
            return None
    return _two_figures(n)


def _two_figures(n: int) -> int:
    """n rounded up to two significant figures (a simulated n is no finer)."""
    unit = 10 ** max(0, len(str(n)) - 2)
    return -(-n // unit) * unit
