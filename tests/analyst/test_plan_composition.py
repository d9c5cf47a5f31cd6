"""`plan` states the totals over questions, repeats and a household, both ways."""

from __future__ import annotations

import math

import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import (
    cli,  # the group: a subcommand invoked alone caches a help option without -h
)
from ldpsurvey.analyst.plan_composition import format_composition, plan_composition
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


def test_the_text_marks_the_better_bound_per_case() -> None:
    text = format_composition(plan_composition(_survey([0.1, 0.2]), repeats=50))
    once, many = text.splitlines()[1:3]
    assert "plain sum ε = 0.3  <- better" in once
    assert many.endswith("at δ = 1e-06  <- better")


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
    assert "the survey answered 24 times (--repeat)" in out.output
    assert "household answering on 4 devices" in out.output
    assert "δ = 1e-09" in out.output
