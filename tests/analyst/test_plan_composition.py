"""`plan` states the totals over questions, repeats and a household, both ways."""

from __future__ import annotations

import math

import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import (
    cli,  # the group: a subcommand invoked alone caches a help option without -h
)
from ldpsurvey.analyst.plan.composition import format_composition, plan_composition
from ldpsurvey.shared.composition import compose
from ldpsurvey.shared.errors import PlanError
from ldpsurvey.shared.survey import Survey


def _survey(epsilons: list[float]) -> Survey:
    return Survey.from_dict({"id": "panel", "title": "Panel", "version": 1, "questions": [
        {"id": f"q{i}", "text": "?", "type": "binary", "epsilon": e}
        for i, e in enumerate(epsilons)]})


def test_repeats_compose_every_report_with_the_heterogeneous_form() -> None:
    p = plan_composition(_survey([0.1, 0.2]), repeats=50, household=3, delta=1e-6)
    assert p.questions == compose([0.1, 0.2], 1e-6)
    assert p.repeated == compose([0.1, 0.2] * 50, 1e-6)
    expected = math.sqrt(2 * math.log(1e6) * 50 * (0.01 + 0.04)) + 50 * (
        0.1 * math.expm1(0.1) + 0.2 * math.expm1(0.2))
    assert p.repeated.advanced == pytest.approx(expected, rel=1e-12)
    assert p.repeated.best == "advanced"  # 100 small reports: the √k bound wins
    assert p.questions.best == "basic"    # 2 reports: the plain sum wins
    assert p.household_epsilon == pytest.approx(3 * 0.3)
    assert p.household_repeated == pytest.approx(3 * p.repeated.advanced)


def test_the_advanced_bound_is_shown_where_it_is_smaller_or_when_asked() -> None:
    p = plan_composition(_survey([0.1, 0.2]), repeats=50)
    text = format_composition(p, repeat=True)
    once, many = text.splitlines()[1:3]
    assert once.endswith("ε = 0.3 (plain sum)")  # the plain sum wins: no advanced bound shown
    assert "smaller by the advanced composition bound" in many and "at δ = 1e-06" in many
    asked = format_composition(p, advanced=True).splitlines()[1]
    assert "the advanced bound at δ = 1e-06 is larger here" in asked


def test_nothing_is_added_unasked_unless_the_advanced_bound_changes_the_answer() -> None:
    """Issue 32: plan printed 'advanced bound ε = 33.87' and --repeat 12 / --household lines
    nobody asked for."""
    assert format_composition(plan_composition(_survey([1.0, 2.0, 1.5]))) == ""
    many_small = format_composition(plan_composition(_survey([0.05] * 200)))
    assert "advanced composition bound is smaller: ε = 4.23 at δ = 1e-06" in many_small
    assert "household" not in many_small and "answered" not in many_small


@pytest.mark.parametrize("kw", [{"repeats": 0}, {"household": 0}, {"repeats": True}])
def test_bad_counts_are_refused(kw) -> None:
    with pytest.raises(PlanError):
        plan_composition(_survey([1.0]), **kw)


def test_plan_cli_prints_the_composition(tmp_path) -> None:
    path = tmp_path / "s.json"
    path.write_text('{"id": "s", "title": "S", "version": 1, "questions": ['
                    '{"id": "a", "text": "?", "type": "binary", "epsilon": 0.5}]}')
    out = CliRunner().invoke(cli, ["plan", str(path), "--n", "1000", "--repeat", "24",
                                    "--household", "4", "--delta", "1e-9"])
    assert out.exit_code == 0, out.output
    assert "its one randomized question once: ε = 0.5 (plain sum); the advanced bound at " \
           "δ = 1e-09 is larger here" in out.output
    assert "the survey answered 24 times: ε = 12 (plain sum)" in out.output
    assert "household answering on 4 devices, about what they share: ε = 2 per answering, " \
           "48 over 24 answerings" in out.output


def test_plan_cli_says_only_what_was_asked_in_the_right_number(tmp_path) -> None:
    path = tmp_path / "s.json"
    path.write_text('{"id": "s", "title": "S", "version": 1, "questions": ['
                    '{"id": "a", "text": "?", "type": "binary", "epsilon": 0.5}]}')
    out = CliRunner().invoke(cli, ["plan", str(path), "--n", "1000"])
    assert out.exit_code == 0, out.output
    assert out.output.startswith("survey s v1 (S): total ε per respondent 0.5 (the ε of its one "
                                 "question)\n\n")
    for unasked in ("advanced", "δ", "--repeat", "--household", "household", "1 questions"):
        assert unasked not in out.output
    household = CliRunner().invoke(cli, ["plan", str(path), "--n", "10", "--household", "3"])
    assert "ε = 1.5 per answering (group privacy" in household.output
    assert "answered" not in household.output
    refused = CliRunner().invoke(cli, ["plan", "--k", "3", "--epsilon", "1", "--n", "9",
                                       "--repeat", "2"])
    assert refused.exit_code == 2 and "go with SURVEY_FILE" in refused.output
