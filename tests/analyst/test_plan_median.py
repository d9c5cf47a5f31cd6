"""`plan` of a decimal's median (issue 41, analyst/plan/median.py): the respondents for a margin
on the median, in the question's units, by a seeded simulation of EMS on the exact report
distribution; checked here against the report path itself (the mechanism's own sampler and
`distribution_estimate`, on independently drawn answers)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.analyst.plan.survey import plan_survey
from ldpsurvey.shared.errors import PlanError
from ldpsurvey.shared.numeric.distribution import Cells, distribution_estimate, window_channel
from ldpsurvey.shared.numeric.ems import ems
from ldpsurvey.shared.survey import Survey, load_survey

SAMPLE = Path(__file__).resolve().parents[2] / "shared" / "samples" / "income.toml"


def _survey(resolution: str, high: str, estimate: list[str], epsilon: float = 1.0) -> Survey:
    return Survey.from_dict({"id": "s", "title": "t", "version": 1, "questions": [
        {"id": "spent", "type": "decimal", "text": "Spent?", "min": 0, "max": high,
         "resolution": resolution, "epsilon": epsilon, "estimate": estimate}]})


def _coverage(question, n: int, margin: float, runs: int, seed: int) -> float:
    """The share of `runs` simulated surveys of n respondents whose reported median (the
    report path: answers drawn from the unit's default truth, the mechanism's own sampler,
    `distribution_estimate`) lies within `margin` (question's units) of the true median."""
    mech = question.unit.distribution_mechanism(question)
    truth = question.unit.default_truth(question)
    cells = Cells.of(mech)
    f = np.add.reduceat(truth.probabilities(), cells.first.astype(np.int64))
    true_median = float(mech.scale.to_units(cells.quantile(f[None, :], 0.5)[0]))
    rng = np.random.default_rng(seed)
    counts = np.array([np.bincount(mech.perturb_many(truth.draw(n, rng), rng),
                                   minlength=mech.m) for _ in range(runs)])
    # distribution_estimate's median, all runs at once: its EMS (plain, the report path's
    # stopping rule) and its interpolated quantile, as the first run confirms
    medians = cells.quantile(ems(window_channel(mech), counts), 0.5)
    first = distribution_estimate(mech, counts[0], quantiles=(0.5,), cdf_at=(), resamples=0)
    assert first.median.estimate == pytest.approx(medians[0])  # index scale, as the mechanism
    errors = np.abs(np.array([mech.scale.to_units(m) for m in medians]) - true_median)
    return float(np.mean(errors <= margin))


def test_the_planned_respondents_hold_the_median_within_its_margin_at_95_percent() -> None:
    """The plan's n for a margin of ±20 dollars (resolution 1, 0..500, ε = 1): 300 surveys of
    that n through the report path put the median within ±20 of the truth in 95% of them, up to
    the simulations' error: the test's 300 runs (binomial sd 0.0126) and the plan's 200
    (0.0154), combined sd 0.020; 3 sd = 0.06 (false alarm about 0.3%). The plan's n is rounded
    up to two figures, which can only raise the coverage."""
    survey = _survey("1", "500", ["distribution"])
    plan = plan_survey(survey, margin=0.05, median_margin=20).questions[0]
    assert plan.median is not None and plan.median.margin == 20
    coverage = _coverage(survey.questions[0], plan.median.n, 20, runs=300, seed=7)
    print(plan.median.n, coverage)
    assert abs(coverage - 0.95) <= 0.06, (plan.median.n, coverage)


def test_the_margin_n_respondents_give_holds_the_median_at_95_percent() -> None:
    """--n: the margin 2,000 respondents give (the pair's square wave at ε/2 = 1), checked as
    above: 95% ± 0.06 of the report path's surveys within it."""
    survey = _survey("10", "5000", ["mean", "distribution"], epsilon=2.0)
    plan = plan_survey(survey, n=2000).questions[0]
    assert plan.median is not None and plan.median.epsilon == 1.0
    coverage = _coverage(survey.questions[0], 2000, plan.median.margin, runs=300, seed=11)
    print(plan.median.margin, coverage)
    assert abs(coverage - 0.95) <= 0.06, (plan.median.margin, coverage)


def test_the_margin_is_in_the_question_s_units() -> None:
    """The same grid (501 values) at resolution 1 and 10: ±200 on the second is ±20 on the
    first, the same respondents; the margin --n gives is ten times as wide."""
    ones, tens = _survey("1", "500", ["distribution"]), _survey("10", "5000", ["distribution"])
    assert (plan_survey(ones, margin=0.05, median_margin=20).questions[0].median.n
            == plan_survey(tens, margin=0.05, median_margin=200).questions[0].median.n)
    at_ones = plan_survey(ones, n=3000).questions[0].median.margin
    assert plan_survey(tens, n=3000).questions[0].median.margin == pytest.approx(10 * at_ones)


def test_only_a_question_that_estimates_the_distribution_has_a_median_plan() -> None:
    plan = plan_survey(load_survey(SAMPLE), margin=0.05, mean_margin=50, median_margin=500)
    medians = {q.question: q.median for q in plan.questions}
    assert medians["hours"] is None  # estimate = ["mean"]
    assert medians["income"] is not None and medians["gambling"] is not None
    assert plan.n_needed >= max(medians["income"].n, medians["gambling"].n)
    # without --median-margin a margin plan has no median
    assert all(q.median is None for q in plan_survey(load_survey(SAMPLE), margin=0.05).questions)


def test_the_command_prints_the_median_line_and_refuses_it_without_a_survey() -> None:
    result = CliRunner().invoke(cli, ["plan", str(SAMPLE), "--margin", "0.05", "--mean-margin",
                                      "50", "--median-margin", "500"])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("median (")]
    assert len(lines) == 2  # income (the pair's square wave at ε/2) and gambling
    assert "square_wave at ε=1, EMS" in lines[0] and "±500 on the median" in lines[0]
    refused = CliRunner().invoke(cli, ["plan", "--k", "11", "--epsilon", "1", "--margin", "0.1",
                                       "--median-margin", "5"])
    assert refused.exit_code == 2 and "--median-margin goes with SURVEY_FILE" in refused.output
    with pytest.raises(PlanError, match="--median-margin goes with --margin"):
        plan_survey(load_survey(SAMPLE), n=100, median_margin=5)


def test_the_mean_s_margin_in_grid_steps_is_also_said_in_the_answer_s_units() -> None:
    result = CliRunner().invoke(cli, ["plan", str(SAMPLE), "--margin", "0.05", "--mean-margin",
                                      "50"])
    assert result.exit_code == 0, result.output
    said = [line for line in result.output.splitlines() if line.startswith("(on the mean")]
    assert said == ["(on the mean, one grid step is 10 in the answer's units: ±50 steps is ±500)",
                    "(on the mean, one grid step is 0.5 in the answer's units: ±50 steps is ±25)",
                    "(on the mean, one grid step is 1 in the answer's units: ±50 steps is ±50)"]
