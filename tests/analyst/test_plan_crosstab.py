"""`ldpsurvey plan --crosstab`: respondents for a margin on every joint cell, in plain words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.analyst.plan.crosstab import plan_crosstab
from ldpsurvey.analyst.plan.rows import margin_for
from ldpsurvey.shared.crosstab import worst_cell_variance
from ldpsurvey.shared.errors import PlanError
from ldpsurvey.shared.joint_features import encoder_for
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Survey

SURVEY = {"id": "p", "title": "P", "version": 1, "questions": [
    {"id": "party", "text": "Party?", "type": "categorical", "epsilon": 2.0,
     "options": ["a", "b", "c", "d"], "mechanism": "oue"},
    {"id": "smoker", "text": "Smoke?", "type": "binary", "epsilon": 1.0},
    {"id": "age", "text": "Age?", "type": "integer", "epsilon": 4.0, "min": 18, "max": 30}]}


def test_n_is_the_smallest_meeting_the_margin_with_the_estimators_bound() -> None:
    survey = Survey.from_dict(SURVEY)
    plan = plan_crosstab(survey, "party", "smoker", margin=0.05)
    bound = worst_cell_variance(encoder_for(mechanism_for(survey.question("party"))),
                                encoder_for(mechanism_for(survey.question("smoker"))))
    assert plan.joint_variance_one == bound
    assert margin_for(bound, plan.n, 0.95) <= 0.05 < margin_for(bound, plan.n - 1, 0.95)
    assert plan.n > max(plan.rows_n, plan.cols_n)  # a joint cell needs more than a marginal
    back = plan_crosstab(survey, "party", "smoker", n=plan.n)
    assert back.margin == pytest.approx(margin_for(bound, plan.n, 0.95))


def test_bins_and_errors() -> None:
    survey = Survey.from_dict(SURVEY)
    binned = plan_crosstab(survey, "party", "age", n=1000, col_bins=(22, 26))
    assert binned.cells == 12
    with pytest.raises(PlanError, match="no question"):
        plan_crosstab(survey, "party", "nope", n=10)
    with pytest.raises(PlanError, match="do not split"):
        plan_crosstab(survey, "party", "age", n=10, col_bins=(99,))
    with pytest.raises(PlanError):
        plan_crosstab(survey, "party", "age")  # neither margin nor n


def test_cli_says_it_in_plain_words(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(SURVEY), encoding="utf-8")
    res = CliRunner().invoke(cli, ["plan", str(path), "--crosstab", "party", "smoker",
                                   "--margin", "0.05"])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "you need" in text and "times as many" in text and "No extra privacy" in text
    res = CliRunner().invoke(cli, ["plan", "--crosstab", "party", "smoker", "--margin", "0.05"])
    assert res.exit_code != 0 and "SURVEY_FILE" in res.output


def test_bins_on_two_option_questions_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(SURVEY), encoding="utf-8")
    res = CliRunner().invoke(cli, ["plan", str(path), "--crosstab", "party", "smoker",
                                   "--n", "1000", "--bins", "1,2"])
    assert res.exit_code != 0
    assert "bins apply to integer questions" in res.output
    assert "Traceback" not in res.output and len(res.output.strip().splitlines()) == 1
