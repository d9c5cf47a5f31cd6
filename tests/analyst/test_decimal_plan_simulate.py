"""`plan` and `simulate` of a `decimal` question through its unit (issue 41): a plan lists every
way to ask the mean with its worst-case margin in grid steps and marks auto's choice and the
survey's; a simulation draws grid indices, compares the mean in the question's units with the
truth and the bins with their true shares; a series re-sends the report kept for an answer."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.analyst.plan.survey import plan_survey
from ldpsurvey.analyst.simulate.survey import simulate_survey
from ldpsurvey.client.respondent import Respondent
from ldpsurvey.shared.mechanisms.numeric_auto import choose_mean_mechanism
from ldpsurvey.shared.survey import Survey, load_survey

SAMPLE = Path(__file__).resolve().parents[2] / "shared" / "samples" / "income.toml"


def test_a_plan_lists_the_mean_mechanisms_and_the_pair() -> None:
    plan = plan_survey(load_survey(SAMPLE), margin=0.05, mean_margin=50)
    income = next(q for q in plan.questions if q.question == "income")
    names = [r.mechanism for r in income.rows]
    assert set(names) == {"duchi", "piecewise", "hybrid", "geometric", "square_wave",
                          "mean_and_distribution"}
    # auto sends both estimates asked (the pair), its mean part the mean mechanism at ε/2
    assert next(r for r in income.rows if r.auto).mechanism == "mean_and_distribution"
    assert f"the mean by {choose_mean_mechanism(2001, 1.0).name} " in income.auto_reason
    configured = next(r for r in income.rows if r.configured)
    assert configured.mechanism == "mean_and_distribution"
    # halving ε costs the pair's mean: it needs more respondents than its mean part alone
    assert configured.n > min(r.n for r in income.rows if r.mechanism != configured.mechanism)
    assert income.margin_unit == "grid steps"


def test_plan_by_type_is_one_line_of_output_per_mechanism() -> None:
    result = CliRunner().invoke(cli, ["plan", "--type", "decimal", "--k", "101", "--epsilon",
                                      "1", "--margin", "5"])
    assert result.exit_code == 0, result.output
    assert "margin on the mean, in grid steps" in result.output


def test_a_simulation_compares_the_mean_and_the_bins_with_the_truth() -> None:
    result = simulate_survey(load_survey(SAMPLE), 3000, np.random.default_rng(1))
    by_id = {q.question.id: q for q in result.questions}
    gambling = by_id["gambling"]
    assert [v.value for v in gambling.values] == ["0 to 10", "10 to 50", "50 to 100",
                                                  "100 to 250", "250 to 500"]
    assert abs(sum(v.truth for v in gambling.values) - 1) < 1e-9
    for qid in ("income", "hours", "gambling"):
        mean = by_id[qid].mean
        assert mean is not None
        assert load_survey(SAMPLE).question(qid).spec.min <= mean.truth
    assert 0 < by_id["hours"].mean.truth <= 80


def test_a_series_resends_the_report_kept_for_the_same_grid_value() -> None:
    """Memoized per distinct answer on the grid (client/hazmat_memo): the same income in a
    later round re-sends the same report, so rounds cannot be averaged to remove the noise; a
    different one is drawn afresh (and charged ε: the ledger)."""
    data = {"id": "s", "title": "t", "series": "monthly", "questions": [
        {"id": "inc", "type": "decimal", "text": "Income?", "min": 0, "max": 2000,
         "resolution": 10, "epsilon": 1.0, "estimate": ["mean", "distribution"]}]}
    state = tempfile.mkdtemp()
    reports = []
    for version, answer in ((1, 1234.5), (2, 1230), (3, 1500)):
        survey = Survey.from_dict({**data, "version": version})
        reports.append(Respondent("https://x.example", state_dir=state).answer(
            survey, {"inc": answer}).reports["inc"])
    assert reports[0] == reports[1]  # 1234.5 and 1230 are the same grid value


def test_simulate_crosstab_states_the_true_mean_per_category_in_the_answers_units() -> None:
    """`simulate --crosstab income region`-style: the decimal's true mean among each category
    is in dollars (min + resolution · index), as its estimate is, so intervals can cover it."""
    from ldpsurvey.analyst.simulate.crosstab import simulate_crosstab

    survey = Survey.from_dict({"id": "s", "title": "S", "version": 1, "questions": [
        {"id": "party", "type": "categorical", "text": "?", "options": ["a", "b"],
         "epsilon": 3.0},
        {"id": "amount", "type": "decimal", "text": "?", "min": 100, "max": 200,
         "resolution": 0.5, "epsilon": 3.0}]})
    result = simulate_crosstab(survey, "amount", "party", 4000, np.random.default_rng(2))
    doc = result.report.document
    truth = result.report.truth.tables["rows_mean_given_col"]
    for cell, true in zip(doc["rows_mean_given_col"], truth, strict=True):
        assert 100 <= true <= 200
        # within 4.42 s.e. of the truth (two-sided false-alarm rate 1e-5)
        assert abs(cell["estimate"] - true) < 4.42 * cell["std_error"], (cell, true)


def test_plan_crosstab_of_a_decimal_side_plans_its_mean_per_category() -> None:
    """A decimal's side of a crosstab is one cell and its mean: the plan gives the mean among
    each category (analyst/plan/among_category.py; main refused it, and before that printed
    '1 respondent'), never a joint share's '1 respondent'."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.toml"
        path.write_text(SAMPLE.read_text())
        result = CliRunner().invoke(cli, ["plan", str(path), "--crosstab", "hours", "region",
                                          "--margin", "2"])
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if line.startswith("  region = ")]
    assert [line.split(":")[0].split("= ")[1] for line in rows] == ["north", "south", "east",
                                                                    "west"]
    assert all("mean within ±2 needs" in line for line in rows)
    assert " 1 respondent" not in result.output


def test_plan_marks_auto_s_choice_under_the_typical_range(tmp_path: Path) -> None:
    """`plan` ranks a probe of (type, k, ε); a question with `typical` has auto's mark moved to
    the mechanism auto picks under it, with auto's sentence; without it nothing changes."""
    def survey(base: dict, **keys: object) -> Survey:
        return Survey.from_dict({"id": "s", "title": "t", "version": 1,
                                 "questions": [{**base, **keys}]})

    income = {"id": "x", "type": "decimal", "text": "Income?", "min": 0, "max": 200000,
              "resolution": 200, "epsilon": 1.0}
    amount = {"id": "x", "type": "integer", "text": "Spent?", "min": 0, "max": 1000,
              "epsilon": 1.0, "estimate": ["mean"]}
    guided = survey(income, typical=[10000, 60000])
    plan = plan_survey(guided, margin=0.05).questions[0]
    assert [r.mechanism for r in plan.rows if r.auto] == ["duchi"]
    assert [r.mechanism for r in plan.rows if r.configured] == ["duchi"]
    assert plan.auto_reason == guided.questions[0].mechanism_choice
    plain = plan_survey(survey(income), margin=0.05).questions[0]
    assert [r.mechanism for r in plain.rows if r.auto] == ["piecewise"]
    assert plain.auto_reason == survey(income).questions[0].mechanism_choice  # auto's own
    integer = plan_survey(survey(amount, typical=[50, 300]), margin=0.05).questions[0]
    assert [r.mechanism for r in integer.rows if r.auto] == ["duchi"]

    path = tmp_path / "s.toml"
    path.write_text('id = "s"\ntitle = "t"\nversion = 1\n[[questions]]\nid = "x"\n'
                    'type = "decimal"\ntext = "Income?"\nmin = 0\nmax = 200000\n'
                    'resolution = 200\nepsilon = 1.0\ntypical = [10000, 60000]\n',
                    encoding="utf-8")
    result = CliRunner().invoke(cli, ["plan", str(path), "--margin", "0.05"])
    assert result.exit_code == 0, result.output
    assert "(auto: lowest expected (under the designer's typical range 10000 to 60000" \
        in result.output
    duchi_row = next(line for line in result.output.splitlines() if line.startswith("duchi"))
    assert duchi_row.rstrip().endswith("auto, this survey")


SIMULATED_QUARTILES = {"id": "s", "title": "S", "version": 1, "questions": [
    {"id": "party", "type": "categorical", "text": "?", "options": ["a", "b"], "epsilon": 3.0,
     "mechanism": "grr"},
    {"id": "spent", "type": "decimal", "text": "?", "min": 0, "max": 200, "resolution": 2,
     "epsilon": 3.0, "estimate": ["distribution"], "bins": 4},
    {"id": "hours", "type": "decimal", "text": "?", "min": 0, "max": 80, "resolution": 0.5,
     "epsilon": 3.0, "mechanism": "piecewise"}]}


def test_simulate_crosstab_gives_a_square_waves_quartiles_per_category_with_their_truth(
        ) -> None:
    """`simulate --crosstab spent party` with spent answered by square_wave: each party's
    quartiles of spent (EM over both channels, as `report --crosstab` gives them), beside the
    drawn sample's own quartiles in dollars; each median is within Z bootstrap s.e. plus one
    grid step of its truth (Z = 4.42: a two-sided false-alarm rate of 1e-5 per number), and
    its interval is judged in the coverage count."""
    from ldpsurvey.analyst.reports.crosstab_view import QUANTILES
    from ldpsurvey.analyst.simulate.crosstab import simulate_crosstab

    survey = Survey.from_dict(SIMULATED_QUARTILES)
    result = simulate_crosstab(survey, "spent", "party", 4000, np.random.default_rng(3),
                               dependence=0.8)
    found = result.report.document[QUANTILES]
    truth = result.report.truth.tables[QUANTILES]
    assert found["method"] == "joint_ems" and found["by"] == "party"
    assert [c["category"] for c in found["categories"]] == ["a", "b"]
    assert len(truth) == 2 and truth[0][1] < truth[1][1]  # dependence: b's answers are higher
    for category, true in zip(found["categories"], truth, strict=True):
        for q, t in zip(category["quantiles"], true, strict=True):
            assert 0 <= t <= 200
            assert q["ci_low"] <= q["estimate"] <= q["ci_high"]
            if q["name"] == "median":
                assert abs(q["estimate"] - t) < 4.42 * q["std_error"] + 2.0, (q, t)
    quiet = simulate_crosstab(survey, "spent", "party", 4000, np.random.default_rng(3),
                              dependence=0.8)
    assert quiet.total == result.total
    without = dict(result.report.document)
    del without[QUANTILES]
    from ldpsurvey.analyst.simulate.crosstab import coverage

    assert coverage(without, result.report.truth.tables)[1] == result.total - 6


def test_simulate_crosstab_shows_the_quartiles_and_says_why_a_mean_mechanism_has_none(
        tmp_path) -> None:
    """The CLI shows the quartiles table with the truth beside each; a piecewise decimal's
    table says in each category that its mechanism estimates the mean only."""
    from ldpsurvey.analyst.survey_toml import to_toml

    path = tmp_path / "s.toml"
    path.write_text(to_toml(SIMULATED_QUARTILES), encoding="utf-8")
    result = CliRunner().invoke(cli, ["simulate", str(path), "--crosstab", "spent", "party",
                                      "--n", "3000", "--seed", "5"])
    assert result.exit_code == 0, result.output
    assert "Quartiles of" in result.output and "median spent" in result.output
    assert result.output.count("(true ") >= 6
    result = CliRunner().invoke(cli, ["simulate", str(path), "--crosstab", "hours", "party",
                                      "--n", "3000", "--seed", "5"])
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert flat.count("this question's mechanism estimates the mean only") == 2
