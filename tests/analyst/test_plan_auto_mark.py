"""`plan` marks as `auto` what auto picks for the question as written (issue 41's gaps): a
number on a grid (a decimal, an integer with `estimate`) is resolved by its estimates and its
`typical` range, not by a probe of (type, k, ε) that knows neither; and `plan --type decimal
--typical A B` (or integer) gives the bare plan the survey field `typical = [A, B]` on the grid
0..k-1, with the same checks and the same pick as a survey question on that grid."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.analyst.plan.survey import plan_survey
from ldpsurvey.shared.survey import Survey, load_survey

SAMPLE = Path(__file__).resolve().parents[2] / "shared" / "samples" / "income.toml"
NUMBERS = [
    {"id": "age", "type": "integer", "text": "?", "min": 0, "max": 100, "epsilon": 1.0,
     "estimate": ["mean"]},
    {"id": "age_typical", "type": "integer", "text": "?", "min": 0, "max": 100,
     "epsilon": 1.0, "estimate": ["mean"], "typical": [20, 60]},
    {"id": "age_both", "type": "integer", "text": "?", "min": 0, "max": 100, "epsilon": 2.0,
     "estimate": ["mean", "distribution"], "bins": 4},
    {"id": "spent", "type": "decimal", "text": "?", "min": 0, "max": 500, "resolution": 1,
     "epsilon": 1.0, "estimate": ["distribution"]},
    {"id": "income", "type": "decimal", "text": "?", "min": 0, "max": 20000,
     "resolution": 10, "epsilon": 2.0, "estimate": ["mean", "distribution"],
     "typical": [0, 3000]},
]


def _marks(plan) -> tuple[list[str], str | None]:
    return [r.mechanism for r in plan.rows if r.auto], plan.auto_reason


@pytest.mark.parametrize("survey", [
    Survey.from_dict({"id": "s", "title": "t", "version": 1, "questions": NUMBERS}),
    load_survey(SAMPLE)], ids=["numbers", "income.toml"])
def test_auto_s_mark_is_the_mechanism_auto_resolved_for_the_question(survey: Survey) -> None:
    """Every question here has mechanism "auto": the row marked auto is the one the survey
    resolved (the pair, square_wave or the mean mechanism at the question's estimates), and
    the reason printed is the survey's `mechanism_choice`. Main marked the probe's mean-only
    pick (piecewise) on the pair, square_wave and integer questions."""
    plan = plan_survey(survey, margin=0.05, mean_margin=50)
    questions = [q for q in survey.questions if not q.disclosed]
    assert len(questions) == len(plan.questions) >= 3
    for q, qp in zip(questions, plan.questions, strict=True):
        assert _marks(qp) == ([q.mechanism], q.mechanism_choice), q.id
        assert [r.mechanism for r in qp.rows if r.configured] == [q.mechanism], q.id


def _bare(*args: str) -> list[str]:
    result = CliRunner().invoke(cli, ["plan", *args])
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


def _auto_row(lines: list[str]) -> str:
    return next(line.split()[0] for line in lines if line.rstrip().endswith("auto"))


@pytest.mark.parametrize(("question_type", "k", "typical", "picked"), [
    ("decimal", "2001", ("0", "500"), "duchi"),     # answers near an end: Duchi
    ("decimal", "2001", ("500", "1500"), "piecewise"),  # in the middle: piecewise
    ("integer", "101", ("20", "60"), "piecewise"),
])
def test_plan_type_typical_picks_as_the_survey_field_does(question_type: str, k: str,
                                                          typical: tuple[str, str],
                                                          picked: str) -> None:
    """`--typical A B` on the bare grid 0..k-1 marks the mechanism and prints the reason a
    survey question with min 0, resolution 1, max k - 1, estimate ["mean"] and
    `typical = [A, B]` gets (main had no such option: click refused it)."""
    lines = _bare("--type", question_type, "--k", k, "--epsilon", "1", "--margin", "5",
                  "--typical", *typical)
    question = {"id": "x", "type": question_type, "text": "?", "min": 0,
                "max": int(k) - 1, "epsilon": 1.0, "estimate": ["mean"],
                "typical": [int(t) for t in typical]}
    if question_type == "decimal":
        question["resolution"] = 1
    resolved = Survey.from_dict({"id": "s", "title": "t", "version": 1,
                                 "questions": [question]}).questions[0]
    assert _auto_row(lines) == resolved.mechanism == picked
    assert f"({resolved.mechanism_choice})" in lines


def test_plan_type_without_typical_keeps_auto_s_average_pick() -> None:
    lines = _bare("--type", "decimal", "--k", "2001", "--epsilon", "1", "--margin", "5")
    assert _auto_row(lines) == "piecewise"
    assert not any(line.startswith("(auto:") for line in lines)


@pytest.mark.parametrize(("args", "message"), [
    (["--type", "categorical", "--k", "3", "--epsilon", "1", "--typical", "0", "1"],
     "Error: --typical goes with --type integer or decimal and --k/--epsilon"),
    (["--type", "decimal", "--k", "2001", "--epsilon", "1", "--typical", "0", "5000"],
     "Error: --typical: must lie within min..max (0 to 2000)"),
    (["--type", "decimal", "--k", "2001", "--epsilon", "1", "--typical", "9", "3"],
     "Error: --typical: a (9) must be < b (3)"),
    (["--type", "decimal", "--k", "2001", "--epsilon", "1", "--typical", "x", "3"],
     "Error: --typical: must be a number"),
])
def test_plan_typical_refusals_are_one_line(args: list[str], message: str) -> None:
    result = CliRunner().invoke(cli, ["plan", *args])
    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1].startswith(message), result.output
