"""Planning across modes: n for a margin with Var = a/n + b/n², the per-report worst cases,
the issue's accuracy target, and the CLI."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.analyst.plan.modes import (
    compare_modes,
    compare_question,
    ldp_share_per_report,
    respondents_per_mode,
)
from ldpsurvey.analyst.plan.rows import (
    LDP,
    TWO_SERVER,
    TWO_SERVER_LOCAL,
    margin_at,
    respondents_for,
)
from ldpsurvey.shared.errors import PlanError
from ldpsurvey.shared.mechanisms import MECHANISMS
from ldpsurvey.shared.two_server.estimates import design_for
from ldpsurvey.shared.two_server.noise import noise_plan
from ldpsurvey.shared.two_server.plans import question_noise_plan
from support.two_server_stand_ins import question

SAMPLE = Path(__file__).resolve().parents[2] / "shared" / "samples" / "sensitive.toml"


@pytest.mark.parametrize(("a", "b", "margin"), [(0.25, 15.7, 0.02), (0.25, 0.0, 0.05),
                                                (3.0, 4000.0, 0.01), (100.0, 1e6, 1.0)])
def test_n_is_the_smallest_that_meets_the_margin(a: float, b: float, margin: float) -> None:
    n = respondents_for(a, b, margin, 0.95)
    assert margin_at(a, b, n, 0.95) <= margin * (1 + 1e-12)
    assert n == 1 or margin_at(a, b, n - 1, 0.95) > margin


@pytest.mark.parametrize("name", ["grr", "oue", "olh", "ss", "hr"])
def test_ldp_per_report_is_the_worst_case_with_sampling(name: str) -> None:
    cls = MECHANISMS[name]
    p, q = cls.support_probabilities(5, 1.0)
    f = np.linspace(0, 1, 10_001)
    total = cls.variance_at(p, q, 5, f, 1, 1) + f * (1 - f)
    assert ldp_share_per_report(name, 5, 1.0) == pytest.approx(float(total.max()), rel=1e-7)


def test_two_server_rows_use_the_estimators_design() -> None:
    c = compare_modes("categorical", 5, 1.0, local_epsilon=2.0, n=1000)
    rows = {r.mode: r for r in c.rows}
    assert rows[TWO_SERVER].per_report == 0.25
    assert rows[TWO_SERVER].noise == pytest.approx(2 * noise_plan("histogram", 1.0).variance)
    local = rows[TWO_SERVER_LOCAL]
    q = question("categorical", 1.0, 2.0, options=list("abcde"), mechanism=local.mechanism)
    design = design_for(q)
    fn = design.functional(np.eye(5)[0])
    assert local.per_report == pytest.approx(fn.worst_per_report())
    assert local.noise == pytest.approx(2 * question_noise_plan(q).variance * fn.noise)


def test_issue_target_two_server_within_a_third_of_ldp() -> None:
    # n = 1,000, ε = 1, a 5-option share: the two-server s.e. is <= 1/3 of the best LDP's.
    c = compare_modes("categorical", 5, 1.0, n=1000)
    rows = {r.mode: r for r in c.rows}
    ratio = math.sqrt(rows[TWO_SERVER].variance(1000) / rows[LDP].variance(1000))
    assert ratio <= 1 / 3


def test_integer_modes() -> None:
    c = compare_modes("integer", 31, 1.0, local_epsilon=2.0, margin=1.0)
    rows = {r.mode: r for r in c.rows}
    assert rows[TWO_SERVER].per_report == pytest.approx(30**2 / 4)
    assert rows[TWO_SERVER].n < rows[LDP].n
    # The local report range (±44·Δ/ε0 tails) is the Sum's sensitivity: the central noise
    # is then larger than with the answer itself.
    assert rows[TWO_SERVER_LOCAL].noise > rows[TWO_SERVER].noise
    q = question("integer", 1.0, 2.0, min=0, max=30)
    assert compare_question(q, margin=1.0).rows == c.rows


def test_bad_inputs() -> None:
    with pytest.raises(PlanError):
        compare_modes("categorical", 5, 0.0, n=10)
    with pytest.raises(PlanError):
        compare_modes("categorical", 5, 1.0, local_epsilon=-1.0, n=10)
    with pytest.raises(PlanError):
        compare_modes("binary", 3, 1.0, n=10)
    with pytest.raises(PlanError):
        compare_modes("categorical", 5, 1.0)


def test_cli_compare_modes() -> None:
    runner = CliRunner()
    out = runner.invoke(cli, ["plan", "--compare-modes", "--k", "5", "--epsilon", "1",
                              "--local-epsilon", "2", "--n", "1000"])
    assert out.exit_code == 0, out.output
    assert "two-server + local" in out.output and "ldp" in out.output
    out = runner.invoke(cli, ["plan", "--compare-modes", str(SAMPLE), "--margin", "0.05",
                              "--mean-margin", "2"])
    assert out.exit_code == 0, out.output
    assert "epsilon 5 (the sum over 4 questions)" in " ".join(out.output.split())
    assert "drinks_last_week" in out.output and "substances: multiselect" in out.output
    out = runner.invoke(cli, ["plan", "--local-epsilon", "2", "--k", "5", "--epsilon", "1",
                              "--n", "10"])
    assert out.exit_code != 0 and "--compare-modes" in out.output


def test_plan_of_a_two_server_survey_file(tmp_path: Path) -> None:
    import json

    from support.two_server import two_server_survey

    data = two_server_survey("https://helper.example", bytes(range(32)), bytes(range(1, 33)),
                             local=True)
    path = tmp_path / "survey.json"
    path.write_text(json.dumps(data))
    out = CliRunner().invoke(cli, ["plan", str(path), "--margin", "0.05", "--mean-margin", "1"])
    assert out.exit_code == 0, out.output
    text = " ".join(out.output.split())
    assert "Against the leader, the helper or the analyst alone" in text
    assert "central epsilon 4" in text and "your answers to hours are exposed" in text
    # The hybrid row uses the question's own local mechanism (auto at ε0 for mood).
    from ldpsurvey.shared.survey import Survey

    mood = Survey.from_dict(data).question("mood")
    c = compare_question(mood, margin=0.05)
    assert c.rows[-1].mechanism == mood.mechanism
    survey = Survey.from_dict(data)
    needed = respondents_per_mode([compare_question(
        q, margin=1.0 if q.type == "integer" else 0.05) for q in survey.questions])
    assert ("respondents needed so that every question meets its margin: "
            + "; ".join(f"{m} {v:,}" for m, v in needed.items())) in text


MIXED = {"id": "mixed", "title": "Mixed", "version": 1, "questions": [
    {"id": "region", "text": "Region?", "type": "categorical", "options": ["north", "south"],
     "disclosed": True},
    {"id": "mood", "text": "Mood?", "type": "ordinal", "options": ["low", "mid", "high"],
     "epsilon": 1.0},
    {"id": "days", "text": "Days?", "type": "integer", "min": 0, "max": 10, "epsilon": 1.0},
    {"id": "home", "text": "Where?", "type": "location", "epsilon_geo": 2.0,
     "grid": {"rows": 4, "cols": 4, "cell_km": 0.5}}]}


def _compare_mixed(tmp_path: Path, *args: str, only: tuple[str, ...] = ()) -> str:
    import json

    path = tmp_path / "mixed.json"
    path.write_text(json.dumps({**MIXED, "questions": [
        q for q in MIXED["questions"] if not only or q["id"] in only]}))
    out = CliRunner().invoke(cli, ["plan", "--compare-modes", str(path), *args])
    assert out.exit_code == 0, out.output
    return out.output


def test_compare_modes_names_disclosed_and_location_questions_without_rows(tmp_path) -> None:
    """A disclosed question (no ε: 'epsilon must be a finite number > 0, got 0.0') and a
    location one ('no mechanism fits') stopped the command; each now says why it has no rows,
    and the others are compared as before."""
    text = _compare_mixed(tmp_path, "--margin", "0.05")
    assert "region: categorical, disclosed: sent as given" in text
    assert "home: location, not comparable: a two-server survey has no location" in text
    assert "mood: ordinal, k=3" in text and "days: integer, k=11" in text
    from ldpsurvey.shared.survey import Survey

    survey = Survey.from_dict(MIXED)
    for qid in ("region", "home"):
        c = compare_question(survey.question(qid), margin=0.05)
        assert c.rows == [] and c.not_compared
    needed = respondents_per_mode([compare_question(q, margin=0.05)
                                   for q in survey.questions])
    assert ("respondents needed so that every question meets its margin: "
            + "; ".join(f"{m} {v:,}" for m, v in needed.items())) in text


def test_mean_margin_applies_to_means_not_to_ordinal_shares(tmp_path) -> None:
    """--mean-margin 1 gave the ordinal question's share rows a margin of ±100 pp; shares keep
    --margin, the integer's mean takes --mean-margin, and the output says so."""
    text = _compare_mixed(tmp_path, "--margin", "0.05", "--mean-margin", "1",
                          only=("mood", "days"))
    mood = text.split("mood: ordinal")[1].split("\n\n")[0]
    days = text.split("days: integer")[1].split("\n\n")[0]
    assert "±5.00 pp" in mood and "±100" not in mood
    assert days.count("±1\n") + days.endswith("±1") == 2
    assert "--mean-margin is the margin on the mean of each integer question" in text
