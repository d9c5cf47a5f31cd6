"""The device's ledger totals both ways, `receipts` shows them, and the ceiling follows the rule."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import (
    cli,  # the group: a subcommand invoked alone caches a help option without -h
)
from ldpsurvey.client.budget import Budget
from ldpsurvey.client.errors import PolicyError
from ldpsurvey.client.ledger import Charge, Ledger
from ldpsurvey.client.state import StateDir
from ldpsurvey.client.trust import check_policy
from ldpsurvey.shared.composition import compose
from ldpsurvey.shared.errors import CompositionError
from ldpsurvey.shared.survey import Survey


def _panel(state: StateDir, months: int, epsilon: float) -> Ledger:
    """A monthly panel: one report of `epsilon` per month."""
    ledger = Ledger(state)
    for month in range(1, months + 1):
        ledger.record("panel", month, f"sub-{month}", [Charge("q", epsilon, epsilon)])
    return ledger


def _survey(n_questions: int, epsilon: float) -> Survey:
    return Survey.from_dict({"id": "many", "title": "Many", "version": 1, "questions": [
        {"id": f"q{i}", "text": "?", "type": "binary", "epsilon": epsilon}
        for i in range(n_questions)]})


def test_ledger_composition_equals_the_shared_bound(tmp_path: Path) -> None:
    ledger = _panel(StateDir(str(tmp_path)), 12, 0.1)
    total = ledger.composition(1e-6)
    assert total == compose([0.1] * 12, 1e-6)
    assert total.basic == pytest.approx(1.2)


def test_reused_series_answers_cost_nothing_in_either_total(tmp_path: Path) -> None:
    ledger = Ledger(StateDir(str(tmp_path)))
    ledger.record("s", 1, "a", [Charge("q", 0.5, 0.2, series="w", tag="t1")])
    ledger.record("s", 2, "b", [Charge("q", 0.5, 0.2, series="w", tag="t1")])
    assert ledger.charged_epsilons() == [0.5]
    assert ledger.composition().k == 1


def test_receipts_show_both_totals_and_mark_the_better(tmp_path: Path) -> None:
    _panel(StateDir(str(tmp_path)), 200, 0.05)
    out = CliRunner().invoke(cli, ["receipts", "--state", str(tmp_path), "--delta", "1e-5"])
    assert out.exit_code == 0, out.output
    expected = compose([0.05] * 200, 1e-5)
    assert expected.best == "advanced"
    assert f"plain sum:       ε = {expected.basic:.4g}\n" in out.output
    assert (f"advanced bound:  ε = {expected.advanced:.4g} at δ = 1e-05  <- the better bound"
            in out.output)
    data = json.loads(CliRunner().invoke(
        cli, ["receipts", "--state", str(tmp_path), "--json", "--delta", "1e-5"]).output)
    assert data["composition"] == expected.to_dict()


def test_receipts_mark_the_plain_sum_for_few_reports(tmp_path: Path) -> None:
    _panel(StateDir(str(tmp_path)), 1, 1.0)
    out = CliRunner().invoke(cli, ["receipts", "--state", str(tmp_path)])
    assert "plain sum:       ε = 1  <- the better bound" in out.output


@pytest.mark.parametrize("delta", ["0", "1", "-1", "x"])
def test_receipts_refuse_a_bad_delta(tmp_path: Path, delta: str) -> None:
    out = CliRunner().invoke(cli, ["receipts", "--state", str(tmp_path), "--delta", delta])
    assert out.exit_code != 0 and "--delta" in out.output


def test_the_default_ceiling_is_the_plain_sum() -> None:
    survey = _survey(100, 0.05)  # plain sum 5.0001..., advanced bound below 4
    both = compose([0.05] * 100)
    assert both.best == "advanced" and both.advanced < 4.0
    with pytest.raises(PolicyError, match="plain sum"):
        check_policy(survey, 4.0)
    check_policy(survey, Budget(4.0, "advanced"))  # the advanced bound fits under 4


def test_the_advanced_rule_never_measures_more_than_the_plain_sum() -> None:
    survey = _survey(2, 1.0)  # few large ε: the plain sum is the better bound
    assert compose([1.0, 1.0]).best == "basic"
    check_policy(survey, Budget(2.0, "advanced"))
    with pytest.raises(PolicyError):
        check_policy(survey, Budget(1.99, "advanced"))


def test_the_lifetime_ceiling_counts_what_the_device_already_spent() -> None:
    survey = _survey(1, 0.5)
    spent = [0.5] * 9
    check_policy(survey, Budget(5.0, "basic", max_total=5.0), spent)
    with pytest.raises(PolicyError, match="--max-total-epsilon"):
        check_policy(survey, Budget(5.0, "basic", max_total=4.9), spent)
    advanced = compose([0.5] * 10).best_epsilon
    assert math.isclose(advanced, 5.0)  # 10 reports of 0.5: the plain sum is still better
    check_policy(survey, Budget(5.0, "advanced", max_total=5.0), spent)


def test_a_bad_budget_is_refused() -> None:
    with pytest.raises(PolicyError):
        Budget(rule="median")
    with pytest.raises(CompositionError):
        Budget(delta=1.5)


def test_a_location_answer_books_plain_epsilon_with_epsilon_geo_beside(tmp_path: Path) -> None:
    from ldpsurvey.client.respondent import Respondent

    survey = Survey.from_dict({"id": "where", "title": "Where", "version": 1, "questions": [
        {"id": "home", "type": "location", "text": "Where?", "epsilon_geo": 1.0,
         "grid": {"rows": 3, "cols": 3, "cell_km": 1.0}}]})
    device = Respondent("http://127.0.0.1:9", state_dir=str(tmp_path))
    submission = device.answer(survey, {"home": "2,2"})
    assert 0 <= submission.reports["home"] < 9
    device.ledger.record(survey.id, 1, submission.submission_id, submission.charges)
    [entry] = device.ledger.location_entries()
    assert entry["epsilon"] == pytest.approx(survey.questions[0].epsilon, rel=1e-5)
    assert entry["epsilon_geo"] == 1.0
    out = CliRunner().invoke(cli, ["receipts", "--state", str(tmp_path)])
    assert "(ε_geo = 1 per km)" in out.output
