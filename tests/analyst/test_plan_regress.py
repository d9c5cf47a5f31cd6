"""`plan --regress`: the asymptotic respondents for an odds ratio at 80% power.

The formula reduces to the textbook two-group logistic one on true answers; a simulation at the
planned n (seeded numpy, R fits through the channel) rejects at about the planned power: the
number of rejections is Binomial(R, 0.8) up to the asymptotic approximation, and the test allows
the central 1 - 1e-4 range of that binomial widened by 0.05 for the approximation.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.analyst.plan.regress import plan_regress
from ldpsurvey.shared.errors import PlanError
from ldpsurvey.shared.regression import expit, fit_logistic


def test_true_answers_give_the_textbook_formula() -> None:
    plan = plan_regress(0.0, 1.0, odds_ratio=2.0, baseline=0.2, exposed=0.5)
    mu1 = 1 / 3  # odds 0.25 · 2 = 0.5
    var = 1 / (0.5 * 0.2 * 0.8) + 1 / (0.5 * mu1 * (1 - mu1))
    z = 1.959963984540054 + 0.8416212335729143
    assert plan.n == math.ceil(z * z * var / math.log(2) ** 2) == plan.n_true_answers


def test_privacy_multiplies_the_respondents() -> None:
    p = math.e / (math.e + 1)
    plan = plan_regress(1 - p, p, odds_ratio=2.0)
    assert plan.n > 5 * plan.n_true_answers
    with pytest.raises(PlanError):
        plan_regress(0.5, 0.5, odds_ratio=2.0)
    with pytest.raises(PlanError):
        plan_regress(0.2, 0.8, odds_ratio=1.0)


def test_cli() -> None:
    result = CliRunner().invoke(cli, ["plan", "--regress", "yes", "--epsilon", "1",
                                      "--odds-ratio", "2"])
    assert result.exit_code == 0, result.output
    assert "2,136 respondents" in result.output and "Asymptotic Wald formula" in result.output
    missing = CliRunner().invoke(cli, ["plan", "--regress", "yes", "--odds-ratio", "2"])
    assert missing.exit_code != 0 and "--epsilon" in missing.output


@pytest.mark.slow
def test_simulated_power_at_the_planned_n() -> None:
    from scipy.stats import binom

    p = math.exp(2.0) / (math.exp(2.0) + 1)
    channel = np.array([[p, 1 - p], [1 - p, p]])
    plan = plan_regress(1 - p, p, odds_ratio=2.0, baseline=0.2, exposed=0.3)
    rng = np.random.default_rng(31)
    reps, rejections = 200, 0
    for _ in range(reps):
        x1 = (rng.random(plan.n) < 0.3).astype(float)
        x = np.column_stack([np.ones(plan.n), x1])
        y = (rng.random(plan.n) < expit(math.log(0.25) + math.log(2.0) * x1)).astype(int)
        s = np.where(rng.random(plan.n) < p, y, 1 - y)
        fit = fit_logistic(x, ["(intercept)", "x"], s, channel, outcome="y",
                           outcome_level="yes")
        rejections += fit.coefficients[1].p_value < 0.05
    low, high = binom.ppf(5e-5, reps, 0.8), binom.isf(5e-5, reps, 0.8)
    assert low - 0.05 * reps <= rejections <= high + 0.05 * reps, rejections
