"""The planner: n for a margin and the margin for n, from the estimator's own variance code."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.analyst.plan.rows import margin_for, respondents_needed
from ldpsurvey.analyst.plan.survey import plan_k, plan_survey
from ldpsurvey.shared import mechanisms
from ldpsurvey.shared.errors import PlanError
from ldpsurvey.shared.estimates import z_value
from ldpsurvey.shared.mechanisms import MECHANISMS, candidates
from ldpsurvey.shared.mechanisms.grr import GRR
from ldpsurvey.shared.survey import Survey, load_survey

SAMPLE = Path(__file__).resolve().parents[2] / "shared" / "samples" / "sensitive.toml"


@pytest.mark.parametrize(("k", "eps", "margin"), [(16, 1.0, 0.02), (2, 0.5, 0.05), (5, 2.0, 0.01)])
def test_n_is_the_smallest_that_meets_the_margin_by_the_estimators_bound(k, eps, margin):
    # The estimator reports variance_bound = worst-case variance with n reports; the planner's n
    # must be the smallest n whose z·sqrt(bound) is within the margin.
    plan = plan_k(k, eps, margin=margin)
    z = z_value(0.95)
    labels = [f"o{i}" for i in range(k)]
    for row in plan.rows:
        mech = MECHANISMS[row.mechanism](eps, labels if row.mechanism != "binary_rr"
                                         else (False, True))
        for n, ok in ((row.n, True), (row.n - 1, False)):
            agg = mech.aggregate_many(mech.perturb_many(np.zeros(n, dtype=np.int64),
                                                        np.random.default_rng(1)))
            est = mech.estimate(agg)
            half = z * math.sqrt(est.categories[0].variance_bound)
            assert (half <= margin * (1 + 1e-9)) is ok, (row.mechanism, n, half)


def test_margin_for_n_inverts_respondents_needed():
    v = GRR.worst_case_variance(16, 1.0)
    assert v == next(r.variance_one for r in plan_k(16, 1.0, n=100).rows if r.mechanism == "grr")
    n = respondents_needed(v, 0.02, 0.95)
    assert margin_for(v, n, 0.95) <= 0.02 < margin_for(v, n - 1, 0.95)


def test_plan_marks_autos_choice_and_lists_every_fitting_mechanism():
    plan = plan_k(2, 1.0, n=1000, question_type="binary")
    names = [r.mechanism for r in plan.rows]
    assert names == [name for _, name in candidates("binary", 2, 1.0)]
    assert sum(r.auto for r in plan.rows) == 1
    survey = Survey.from_dict({"id": "s", "title": "t", "version": 1, "questions": [
        {"id": "q", "text": "?", "type": "binary", "epsilon": 1.0}]})
    auto = next(r for r in plan.rows if r.auto)
    assert auto.mechanism == survey.questions[0].mechanism


def test_a_newly_registered_mechanism_is_planned_without_planner_changes(monkeypatch):
    best = candidates("categorical", 16, 1.0)[0][0]

    class Halved(GRR):
        name = "halved_test"

        @classmethod
        def average_variance(cls, k, epsilon):
            return best / 2  # what auto ranks by: better than every registered mechanism

        @classmethod
        def worst_case_variance(cls, k, epsilon):
            return best / 2  # what the margin is computed from

    monkeypatch.setitem(mechanisms.MECHANISMS, "halved_test", Halved)
    plan = plan_k(16, 1.0, margin=0.02)
    rows = {r.mechanism: r for r in plan.rows}
    assert rows["halved_test"].auto
    assert rows["halved_test"].n == respondents_needed(best / 2, 0.02, 0.95)


def test_integer_margin_is_on_the_mean_in_answer_units():
    # Geometric noise: Var[mean] = Var[Z]/n; the estimator's mean std_error is that square root.
    plan = plan_k(31, 1.0, n=5000, question_type="integer")  # the sample's drinks_last_week
    (row,) = plan.rows
    assert row.mechanism == "geometric"
    survey = load_survey(SAMPLE)
    q = survey.question("drinks_last_week")
    mech = mechanisms.mechanism_for(q)
    agg = mech.aggregate_many(mech.perturb_many(np.zeros(5000, dtype=np.int64),
                                                np.random.default_rng(2)))
    est = mech.estimate(agg)
    assert row.margin == pytest.approx(z_value(0.95) * est.mean.std_error, rel=1e-12)


def test_survey_plan_uses_each_questions_epsilon_and_configured_mechanism():
    survey = load_survey(SAMPLE)
    splan = plan_survey(survey, margin=0.03, mean_margin=1.0)
    assert splan.total_epsilon == pytest.approx(survey.total_epsilon)
    for q, qp in zip(survey.questions, splan.questions, strict=True):
        assert qp.epsilon == q.epsilon and qp.k == q.k
        (conf,) = [r for r in qp.rows if r.configured]
        assert conf.mechanism == q.mechanism
        assert conf.margin == (1.0 if q.type == "integer" else 0.03)
    assert splan.n_needed == max(next(r.n for r in qp.rows if r.configured)
                                 for qp in splan.questions)


@pytest.mark.parametrize("kwargs", [
    {"k": 1, "epsilon": 1.0, "n": 10},
    {"k": 3, "epsilon": 0.0, "n": 10},
    {"k": 3, "epsilon": -1.0, "n": 10},
    {"k": 3, "epsilon": float("inf"), "n": 10},
    {"k": 3, "epsilon": 1.0},
    {"k": 3, "epsilon": 1.0, "n": 10, "margin": 0.1},
    {"k": 3, "epsilon": 1.0, "margin": 0.0},
    {"k": 3, "epsilon": 1.0, "n": 0},
    {"k": 3, "epsilon": 1.0, "n": 10, "confidence": 1.0},
    {"k": 3, "epsilon": 1.0, "n": 10, "question_type": "binary"},
])
def test_bad_input_is_a_typed_error(kwargs):
    with pytest.raises(PlanError):
        plan_k(**kwargs)


def test_cli_prints_every_mechanism_and_marks_auto():
    res = CliRunner().invoke(cli, ["plan", "--k", "16", "--epsilon", "1", "--margin", "0.02"])
    assert res.exit_code == 0, res.output
    plan = plan_k(16, 1.0, margin=0.02)
    for row in plan.rows:
        assert row.mechanism in res.output and f"{row.n:,}" in res.output
    header, _rule, *rows = res.output.splitlines()[1:]
    picked = header.index("picked by")
    assert [r[picked:].strip() for r in rows].count("auto") == 1


def test_every_column_has_a_header_and_numbers_are_written_out(tmp_path):
    """Issue 32: the marks column had no header and a variance printed as 2e+08."""
    path = tmp_path / "s.json"
    path.write_text('{"id": "s", "title": "S", "version": 1, "questions": [{"id": "income", '
                    '"text": "?", "type": "integer", "min": 0, "max": 10000, "epsilon": 1}]}')
    res = CliRunner().invoke(cli, ["plan", str(path), "--n", "1000"])
    assert res.exit_code == 0, res.output
    assert "e+" not in res.output and "e-" not in res.output
    assert "200,000,000" in res.output  # the geometric mechanism's one-report variance
    lines = res.output.splitlines()
    rule = next(i for i, line in enumerate(lines) if set(line) <= {"-", " "} and line)
    header, dashes = lines[rule - 1], lines[rule]
    # one header word group above every dashed column
    starts = [i for i, c in enumerate(dashes) if c == "-" and (i == 0 or dashes[i - 1] == " ")]
    assert len(starts) == 5
    assert all(header[i] != " " for i in starts), header


def test_cli_survey_file_and_errors():
    runner = CliRunner()
    res = runner.invoke(cli, ["plan", str(SAMPLE), "--n", "5000"])
    assert res.exit_code == 0, res.output
    for q in load_survey(SAMPLE).questions:
        assert q.id in res.output
    assert "total ε per respondent 5 (the sum over its 4 questions)" in res.output
    for args in (["--k", "1", "--epsilon", "1", "--n", "5"],
                 ["--k", "3", "--epsilon", "1"],
                 ["--k", "3", "--epsilon", "-2", "--n", "5"]):
        res = runner.invoke(cli, ["plan", *args])
        assert res.exit_code != 0
        assert res.output.startswith("Error:") or "Error" in res.output
        assert "Traceback" not in res.output


def test_ordinal_margin_is_on_the_mean_score_as_the_estimator_bounds_it():
    # auto ranks ordinal mechanisms by the mean score's worst-case variance; the planner's V1
    # for the mechanism auto picks equals the estimator's mean variance_bound times n.
    plan = plan_k(5, 1.0, n=5000, question_type="ordinal")
    assert plan.margin_unit == "score"
    auto = next(r for r in plan.rows if r.auto)
    survey = Survey.from_dict({"id": "o", "title": "t", "version": 1, "questions": [
        {"id": "q", "text": "?", "type": "ordinal", "epsilon": 1.0, "options": list("abcde")}]})
    mech = mechanisms.mechanism_for(survey.questions[0])
    assert mech.name == auto.mechanism
    agg = mech.aggregate_many(mech.perturb_many(np.zeros(5000, dtype=np.int64),
                                                np.random.default_rng(3)))
    bound = mech.estimate(agg).mean.variance_bound
    assert auto.variance_one == pytest.approx(bound * 5000, rel=1e-9)


def test_a_margin_too_small_to_count_is_a_plan_error() -> None:
    """m² underflows below ~1e-154: the planner says so instead of dividing by zero."""
    with pytest.raises(PlanError, match="respondents"):
        plan_k(5, 1.0, margin=1e-300)
    tiny = plan_k(2, 1e-6, margin=0.01, question_type="binary")
    assert tiny.rows[0].n > 10**16  # ε = 1e-6: ~z²/(ε²m²), counted, not refused
