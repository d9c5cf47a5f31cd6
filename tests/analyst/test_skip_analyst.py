"""Skip logic for the analyst: `simulate` draws respondents whole (conditions on earlier
answers, vectorized with the same rules as shared/conditions.py) and checks coverage against
the truth among those asked; `plan` shows what the "not asked" value costs; every report format
shows the share not asked and the shares among those asked."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.analyst.reports.model import Report, render
from ldpsurvey.analyst.simulate.cli import format_result
from ldpsurvey.analyst.simulate.skip import Column, condition_mask
from ldpsurvey.analyst.simulate.survey import simulate_survey
from ldpsurvey.shared.conditions import ConditionError, parse_condition
from ldpsurvey.shared.survey import Survey
from scipy import stats
from support.skip import skip_survey

SURVEY = Survey.from_dict(skip_survey("analyst-skip"))


def test_vectorized_conditions_agree_with_the_parser_respondent_by_respondent() -> None:
    """Every valid shared vector expression over random answers (some missing), evaluated on
    whole arrays and one respondent at a time."""
    from web.condition_vectors import AT, EXPRESSIONS, QUESTIONS

    questions = [q for q in QUESTIONS if q["type"] != "location"]
    survey_like = Survey.from_dict({"id": "v", "title": "v", "version": 1, "questions": [
        {**q, "text": q["id"], **({"epsilon": 1.0} if q["type"] != "integer" else
                                  {"epsilon": 1.0, "min": -9, "max": 9})}
        for q in questions if q["type"] != "multiselect" and q["id"] != "x"
        and q["id"] != "later"]})
    by_id = {q.id: q for q in survey_like.questions}
    rng = np.random.default_rng(3)
    n = 300
    columns, answers = {}, [{} for _ in range(n)]
    for q in survey_like.questions:
        values = rng.integers(0, q.k, size=n)
        present = rng.random(n) < 0.8
        columns[q.id] = Column(q, values, present)
        for i in range(n):
            if present[i]:
                answers[i][q.id] = (bool(values[i]) if q.type == "binary" else
                                    int(q.min + values[i]) if q.type == "integer" else
                                    q.options[values[i]])
    subs = next(q for q in QUESTIONS if q["type"] == "multiselect")
    sets = rng.random((n, len(subs["options"]))) < 0.4
    present = rng.random(n) < 0.8
    columns["subs"] = Column(_SubsQuestion(subs), sets, present)
    for i in range(n):
        if present[i]:
            answers[i]["subs"] = [o for j, o in enumerate(subs["options"]) if sets[i, j]]
    checked = 0
    for text in EXPRESSIONS:
        try:
            condition = parse_condition(text, QUESTIONS, AT)
        except ConditionError:  # refused expressions have no values to compare
            continue
        if any(ref not in columns for ref in condition.references):
            continue
        mask = condition_mask(condition.tree, columns, n)
        assert mask.tolist() == [condition.evaluate(a) for a in answers], text
        checked += 1
    assert checked > 40
    assert by_id  # the survey parsed


class _SubsQuestion:
    def __init__(self, data: dict) -> None:
        self.id, self.type, self.options = data["id"], data["type"], tuple(data["options"])


def test_simulated_intervals_cover_the_truth_among_those_asked_at_their_rate() -> None:
    """Over 30 seeds of the skip survey (n = 4000), every interval's coverage, pooled: within
    Z binomial standard deviations (false alarm 1e-6) plus 2 points of slack for the normal
    approximation of ratios and the correlation of intervals within one run."""
    covered = total = 0
    asked_seen = 0
    for seed in range(30):
        result = simulate_survey(SURVEY, 4000, np.random.default_rng(seed), seed=seed)
        for q in result.questions:
            flags = q.intervals
            covered += sum(flags)
            total += len(flags)
            asked_seen += len(q.asked_values) + (q.asked_mean is not None)
    z = float(stats.norm.isf(1e-6 / 2))
    rate = covered / total
    assert abs(rate - 0.95) <= z * math.sqrt(0.95 * 0.05 / total) + 0.02, rate
    assert asked_seen == 30 * (3 + 1)  # freq's three options, days' mean


def test_simulate_prints_the_shares_among_those_asked(tmp_path: Path) -> None:
    path = tmp_path / "skip.json"
    path.write_text(json.dumps(skip_survey("sim-skip")))
    out = CliRunner().invoke(cli, ["simulate", str(path), "--n", "5000", "--seed", "1"])
    assert out.exit_code == 0, out.output
    assert "among those asked:" in out.output
    assert "mean among those asked: truth" in out.output
    assert "coverage:" in out.output


def test_plan_shows_what_the_not_asked_value_costs(tmp_path: Path) -> None:
    path = tmp_path / "skip.json"
    path.write_text(json.dumps(skip_survey("plan-skip")))
    out = CliRunner().invoke(cli, ["plan", str(path), "--margin", "0.05", "--mean-margin", "2",
                                   "--asked", "0.4"])
    assert out.exit_code == 0, out.output
    assert "40% of respondents asked (--asked)" in out.output
    block = out.output.split("freq:")[1].split("days:")[0]
    lines = [line for line in block.splitlines() if line.startswith(("grr", "hr"))]
    rows = {line.split("  ")[0]: line for line in lines}
    grr_n = int(rows["grr"].split()[2].replace(",", ""))
    public = next(v for k, v in rows.items() if "disclosed answers only" in k)
    public_n = int(public.split("only")[1].split()[1].replace(",", ""))
    assert grr_n > public_n  # hiding the skip pattern costs respondents


@pytest.fixture(scope="module")
def report() -> Report:
    from ldpsurvey.shared.mechanisms import mechanism_for

    rng = np.random.default_rng(0)
    questions = []
    for q in SURVEY.questions:
        m = mechanism_for(q)
        size = q.k + (1 if q.not_asked and q.type == "integer" else 0)
        truth = rng.integers(0, size, size=4000)
        questions.append(m.estimate(m.aggregate_many(m.perturb_many(truth, rng))).to_dict())
    doc = {"survey": SURVEY.id, "version": 1, "confidence": 0.95, "n_submissions": 4000,
           "questions": questions}
    return Report(SURVEY.to_dict(), doc)


def test_every_report_format_shows_not_asked_and_among_those_asked(report: Report) -> None:
    table = render(report, "table")
    assert "among those asked:" in table and "(not asked)" in table
    rows = list(csv.DictReader(io.StringIO(render(report, "csv"))))
    kinds = {(r["question"], r["kind"]) for r in rows}
    assert {("freq", "asked_option"), ("days", "asked_mean"), ("days", "option")} <= kinds
    assert any(r["question"] == "freq" and r["option"] == "(not asked)" for r in rows)
    doc = json.loads(render(report, "json"))
    freq = next(q for q in doc["questions"] if q["question"] == "freq")
    assert len(freq["among_asked"]["categories"]) == 3 and "not_asked" in freq
    md = render(report, "md")
    assert "| asked_option | weekly |" in md and "| asked_mean | mean |" in md
    html = render(report, "html")
    assert html.count("<h3>Among those asked</h3>") == 2


@pytest.mark.parametrize("epsilon", [0.5, 2.0, 20.0])
def test_plan_of_a_hidden_integer_compares_like_with_like(epsilon: float) -> None:
    """The public-condition row of a hidden integer question carries the same sampling spread
    ((Δ/2)² among those asked) as asked_geometric's bound: hiding the skip pattern costs its
    extra noise and asked bit, never less than nothing, and almost nothing at a large ε (where
    both are the sampling spread alone)."""
    from ldpsurvey.analyst.plan.skip import plan_not_asked
    from ldpsurvey.shared.mechanisms.geometric import Geometric

    survey = Survey.from_dict({"id": "s", "title": "S", "version": 1, "questions": [
        {"id": "gate", "text": "Gate?", "type": "binary", "epsilon": 1.0},
        {"id": "days", "text": "Days?", "type": "integer", "min": 0, "max": 30,
         "epsilon": epsilon, "relevant": "gate"}]})
    plan = plan_not_asked(survey.questions[1], margin=None, n=1000, confidence=0.95,
                          asked=0.4)
    hidden, public = (row.variance_one for row in plan.rows)
    assert public == pytest.approx((Geometric.noise_variance(31, epsilon) + 15**2) / 0.4)
    assert hidden >= public
    if epsilon == 20.0:
        assert hidden / public < 1.05


def test_simulated_report_draws_skip_logic_and_gives_the_truth_among_those_asked() -> None:
    """simulated_report drew every question on its own: a gated multiselect question failed
    with a zip length error, and the other follow-ups' truths ignored their conditions. Now
    respondents are drawn whole, the report renders, the share not asked is the gate's, and
    every row with a truth (everyone's and among those asked) covers it within 4.5 standard
    errors (two-sided 6.8e-6 per row; about 25 rows: a false alarm below 1 in 5,000)."""
    from ldpsurvey.analyst.reports.simulated import simulated_report

    data = skip_survey("analyst-skip")
    data["questions"].append({"id": "which", "text": "Which?", "type": "multiselect",
                              "epsilon": 1.0, "options": ["a", "b", "c"], "relevant": "used"})
    report = simulated_report(Survey.from_dict(data), 20_000, seed=3)
    for fmt in ("table", "json", "csv", "md"):
        assert render(report, fmt)
    truth = report.truth
    assert truth is not None
    not_used = truth.shares["used"]["no"]
    for qid in ("freq", "which"):
        assert truth.shares[qid]["(not asked)"] == pytest.approx(not_used, abs=1e-12)
        assert sum(truth.asked_shares[qid][o] for o in ("rarely", "monthly", "weekly")
                   if o in truth.asked_shares[qid]) in (0, pytest.approx(1))
    checked = 0
    for view in report.questions():
        for row in view.rows:
            true = truth.of(view.id, row.kind, row.label)
            if true is None or row.std_error is None or row.estimate is None:
                continue
            assert abs(row.estimate - true) <= 4.5 * row.std_error + 1e-12, (view.id, row)
            checked += 1
    assert checked >= 20


def test_skip_simulation_compares_an_integers_values_as_the_plain_one_does() -> None:
    """An integer question asked on a condition on disclosed answers (geometric, sent by
    those asked alone) had only its mean compared with skip logic, while the plain simulation
    also compares each value's share: now both do, over those asked. With a "not asked" value
    (asked_geometric: no per-value estimate) only the share not asked and the mean among those
    asked are compared, as before."""
    data = skip_survey("analyst-skip")
    visit = {"id": "visits", "text": "Visits?", "type": "integer", "epsilon": 1.0,
             "min": 0, "max": 5}
    data["questions"].append({**visit, "relevant": "region == 'north'"})
    result = simulate_survey(Survey.from_dict(data), 5000, np.random.default_rng(1))
    visits, days = result.questions[-1], result.questions[2]
    plain = simulate_survey(Survey.from_dict({**data, "questions": [visit]}), 5000,
                            np.random.default_rng(1)).questions[0]
    assert [v.value for v in visits.values] == [v.value for v in plain.values] == [*range(6)]
    assert sum(v.truth for v in visits.values) == pytest.approx(1)
    counts = [v.truth * visits.n for v in visits.values]  # shares of the n asked
    assert all(c == pytest.approx(round(c), abs=1e-6) for c in counts)
    assert visits.mean is not None
    assert days.values == [] and days.not_asked is not None and days.asked_mean is not None
    text = format_result(result)
    assert "visits (integer)" in text and text.split("visits (integer)")[1].count("\n  5 ") == 1
