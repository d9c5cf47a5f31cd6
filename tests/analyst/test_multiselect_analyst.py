"""A multiselect question through plan, simulate and every report format."""

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
from ldpsurvey.analyst.plan.multiselect import DOC, multiselect_table, plan_set, updated_doc
from ldpsurvey.analyst.plan.rows import respondents_needed
from ldpsurvey.analyst.reports.model import render
from ldpsurvey.analyst.reports.simulated import simulated_report
from ldpsurvey.analyst.simulate.multiselect import default_set_truth
from ldpsurvey.analyst.simulate.survey import simulate_survey
from ldpsurvey.analyst.simulate.truth import parse_truth
from ldpsurvey.shared.errors import SimulationError
from ldpsurvey.shared.mechanisms.set_base import SetShape
from ldpsurvey.shared.mechanisms.set_choice import SET_MECHANISMS
from ldpsurvey.shared.survey import Survey
from scipy import stats

ROOT = Path(__file__).resolve().parents[2]
OPTIONS = ["cannabis", "cocaine", "ecstasy", "opioids", "sedatives", "stimulants"]
SURVEY = {"id": "drugs", "title": "Drugs", "version": 1, "questions": [
    {"id": "substances", "type": "multiselect", "text": "Which have you used?",
     "options": OPTIONS, "max_selected": 3, "epsilon": 2.0}]}


def test_the_doc_table_is_current() -> None:
    text = (ROOT / DOC).read_text(encoding="utf-8")
    assert updated_doc(text) == text, "run: python -m ldpsurvey.analyst.plan.multiselect --write"
    assert "**" in multiselect_table()


def test_plan_rows_follow_auto_and_the_worst_case_formula() -> None:
    shape = SetShape(10, 3)
    plan = plan_set(shape, 2.0, margin=0.03)
    assert plan.rows[0].auto and sum(r.auto for r in plan.rows) == 1
    assert {r.mechanism for r in plan.rows} == set(SET_MECHANISMS)
    for row in plan.rows:
        worst, _ = SET_MECHANISMS[row.mechanism].set_variances(shape, 2.0)
        assert row.variance_one == worst
        assert row.n == respondents_needed(worst, 0.03, 0.95)


def test_plan_cli(tmp_path: Path) -> None:
    out = CliRunner().invoke(cli, ["plan", "--type", "multiselect", "--k", "6",
                                   "--max-selected", "2", "--epsilon", "1", "--n", "4000"])
    assert out.exit_code == 0, out.output
    assert "multiselect, k=6 options, at most 2 selected, epsilon=1" in out.output
    [auto_row] = [line for line in out.output.splitlines() if line.endswith(" auto")]
    assert auto_row.startswith("psfo_grr") and "set_ue" in out.output
    bad = CliRunner().invoke(cli, ["plan", "--k", "6", "--max-selected", "2", "--epsilon", "1",
                                   "--n", "10"])
    assert bad.exit_code != 0 and "--max-selected goes with --type multiselect" in bad.output
    path = tmp_path / "drugs.json"
    path.write_text(json.dumps(SURVEY))
    out = CliRunner().invoke(cli, ["plan", str(path), "--margin", "0.05"])
    assert out.exit_code == 0, out.output
    assert "substances: multiselect, k=6 options, at most 3 selected" in out.output
    assert "auto, this survey" in out.output


def test_plan_compare_modes_of_one_multiselect_question() -> None:
    """`plan --compare-modes --type multiselect --k K` compares the modes as a survey file's
    multiselect question does (compare_set_modes); it said "no mechanism fits a multiselect
    question with k=5 at epsilon=1"."""
    from ldpsurvey.analyst.plan.multiselect import compare_set_modes

    out = CliRunner().invoke(cli, ["plan", "--compare-modes", "--type", "multiselect", "--k",
                                   "5", "--max-selected", "2", "--epsilon", "1", "--n", "2000",
                                   "--local-epsilon", "2"])
    assert out.exit_code == 0, out.output
    expected = compare_set_modes(SetShape(5, 2), 1.0, local_epsilon=2.0, n=2000)
    assert [r.mode for r in expected.rows] == ["ldp", "two-server", "two-server + local"]
    lines = out.output.splitlines()[3:6]
    assert [line.startswith(r.mode + " ") for line, r in zip(lines, expected.rows,
                                                             strict=True)] == [True] * 3
    for row in expected.rows:
        assert f"±{100 * row.margin:.2f} pp" in out.output
    bad = CliRunner().invoke(cli, ["plan", "--compare-modes", "--k", "5", "--max-selected",
                                   "2", "--epsilon", "1", "--n", "10"])
    assert bad.exit_code == 2 and "--max-selected goes with --type multiselect" in bad.output


def test_simulation_covers_the_shares_and_the_mean() -> None:
    """Seeded: 6 option intervals and the mean's, each at 95%; all of them missing by chance
    is far below 1e-6, and the estimates are within 5 standard errors (two-sided 6e-7)."""
    result = simulate_survey(Survey.from_dict(SURVEY), 20_000, np.random.default_rng(8))
    [q] = result.questions
    assert [v.value for v in q.values] == OPTIONS
    assert q.mean is not None
    assert math.isclose(sum(v.truth for v in q.values), q.mean.truth)
    z = float(stats.norm.isf(1e-6 / 2))
    for v in [*q.values, q.mean]:
        assert abs(v.estimate - v.truth) <= z * v.std_error


def test_default_truth_respects_the_shape() -> None:
    survey = Survey.from_dict({**SURVEY, "questions": [{**SURVEY["questions"][0],
                                                        "required_min": 1}]})
    q = survey.questions[0]
    sets = default_set_truth(q).draw(5000, np.random.default_rng(1))
    sizes = sets.sum(axis=1)
    assert sizes.min() >= 1 and sizes.max() <= 3
    shares = sets.mean(axis=0)
    assert shares[0] > shares[-1]  # Zipf-like: the first option is the most common


def test_truth_file_takes_each_options_probability() -> None:
    survey = Survey.from_dict(SURVEY)
    truth = parse_truth({"substances": {"cannabis": 0.4, "opioids": 0.05}}, survey)
    result = simulate_survey(survey, 5000, np.random.default_rng(2), truth)
    [q] = result.questions
    assert q.values[2].truth == 0 and 0.3 < q.values[0].truth < 0.5
    for bad, words in (({"heroin": 0.1}, "unknown option"), ({"cannabis": 1.5}, "from 0 to 1"),
                       ({o: 0.95 for o in OPTIONS}, "fewer than 1%"), ([0.1], "object")):
        with pytest.raises(SimulationError, match=words):
            parse_truth({"substances": bad}, survey)


def test_simulate_cli_prints_shares_and_the_mean(tmp_path: Path) -> None:
    path = tmp_path / "drugs.json"
    path.write_text(json.dumps(SURVEY))
    out = CliRunner().invoke(cli, ["simulate", str(path), "--n", "3000", "--seed", "4"])
    assert out.exit_code == 0, out.output
    assert "substances (multiselect)" in out.output and "mean: truth" in out.output
    assert "need not sum to 1" in out.output


@pytest.fixture(scope="module")
def report():
    return simulated_report(Survey.from_dict(SURVEY), 4000, seed=6)


def test_every_format_shows_shares_and_the_mean_number_selected(report) -> None:
    table = render(report, "table")
    assert "mean number selected" in table and "need not sum to 1" in table
    md = render(report, "md")
    assert "mean number selected" in md
    rows = list(csv.DictReader(io.StringIO(render(report, "csv"))))
    assert [r["option"] for r in rows if r["kind"] == "option"] == OPTIONS
    [mean] = [r for r in rows if r["kind"] == "mean"]
    assert mean["option"] == "mean number selected" and float(mean["estimate"]) > 0
    doc = json.loads(render(report, "json"))
    [q] = doc["questions"] if "questions" in doc else doc["estimates"]["questions"]
    assert q["consistent_method"] == "clip"
    assert all(0 <= c["consistent"] <= 1 for c in q["categories"])
    html = render(report, "html")
    assert 'alt="chart of the estimates for substances"' in html
    assert "mean number selected" in html


def test_the_doc_quotes_the_reviews_own_words() -> None:
    from ldpsurvey.client.multiselect_words import chances
    from ldpsurvey.shared.mechanisms import mechanism_for
    from ldpsurvey.shared.survey import load_survey

    q = load_survey(ROOT / "shared" / "samples" / "sensitive.toml").question("substances")
    said = chances(q, mechanism_for(q), ["opioids"])
    doc = " ".join((ROOT / DOC).read_text(encoding="utf-8").split())
    assert f'"{said}"' in doc


def test_plan_crosstab_of_one_option_and_simulate_refuses_sets(tmp_path: Path) -> None:
    data = {**SURVEY, "questions": [*SURVEY["questions"],
                                    {"id": "age", "type": "categorical", "text": "Age?",
                                     "options": ["<30", "30+"], "epsilon": 1.0}]}
    path = tmp_path / "drugs.json"
    path.write_text(json.dumps(data))
    out = CliRunner().invoke(cli, ["plan", str(path), "--crosstab", "substances:cannabis",
                                   "age", "--margin", "0.05"])
    assert out.exit_code == 0, out.output
    whole = CliRunner().invoke(cli, ["plan", str(path), "--crosstab", "substances", "age",
                                     "--n", "1000"])
    assert whole.exit_code != 0 and "crossed one option at a time" in whole.output
    sim = CliRunner().invoke(cli, ["simulate", str(path), "--crosstab", "substances", "age",
                                   "--n", "1000"])
    assert sim.exit_code != 0 and "does not draw sets" in sim.output
