"""The simulation library and `ldpsurvey simulate`."""

from __future__ import annotations

import importlib.resources
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.analyst.simulate.survey import simulate_question, simulate_survey
from ldpsurvey.analyst.simulate.truth import (
    TruncatedGeometric,
    Truth,
    chunk_size,
    default_truth,
    parse_truth,
)
from ldpsurvey.shared.errors import SimulationError
from ldpsurvey.shared.survey import Survey, load_survey


def sample_path() -> Path:
    resource = importlib.resources.files("ldpsurvey.shared") / "samples" / "sensitive.toml"
    assert resource.is_file()
    return Path(str(resource))


@pytest.fixture(scope="module")
def survey() -> Survey:
    return load_survey(sample_path())


def wide_survey(k: int = 16) -> Survey:
    return Survey.from_dict({
        "id": "wide", "title": "Wide", "version": 1,
        "questions": [{"id": "q", "text": "Which?", "type": "categorical", "epsilon": 1.0,
                       "options": [f"o{i}" for i in range(k)]}],
    })


# --- truth distributions -----------------------------------------------------------------------


def test_default_truths_are_distributions(survey: Survey) -> None:
    for q in survey.questions:
        dist = default_truth(q)
        draws = dist.draw(5000, np.random.default_rng(0))
        assert draws.min() >= 0 and draws.max() < q.k
        if isinstance(dist, Truth):
            assert math.isclose(dist.probabilities.sum(), 1.0)
            assert np.all(np.diff(dist.probabilities) <= 0) or q.type == "binary"


def test_truncated_geometric_matches_its_pmf() -> None:
    dist = TruncatedGeometric(10, 0.7)
    draws = dist.draw(200_000, np.random.default_rng(1))
    pmf = 0.7 ** np.arange(10)
    pmf /= pmf.sum()
    freq = np.bincount(draws, minlength=10) / draws.size
    # Binomial standard error per value; 5 sigma.
    assert np.all(np.abs(freq - pmf) <= 5 * np.sqrt(pmf * (1 - pmf) / draws.size))


def test_truncated_geometric_handles_huge_ranges() -> None:
    draws = TruncatedGeometric(2**50, math.exp(-4 / 2**50)).draw(1000, np.random.default_rng(2))
    assert draws.min() >= 0 and draws.max() < 2**50


def test_parse_truth_accepts_labels_values_and_yes_no(survey: Survey) -> None:
    truth = parse_truth({
        "rx_misuse": {"yes": 0.2, "no": 0.8},
        "cannabis_frequency": {"never": 0.5, "daily": 0.5},
        "drinks_last_week": {"0": 0.25, "7": 0.75},
    }, survey)
    assert truth["rx_misuse"].indices.tolist() == [1, 0]
    assert truth["cannabis_frequency"].indices.tolist() == [0, 4]
    assert truth["drinks_last_week"].indices.tolist() == [0, 7]


@pytest.mark.parametrize("data, match", [
    ([], "must be an object"),
    ({"nope": {"yes": 1}}, "unknown question"),
    ({"cannabis_frequency": {"hourly": 1.0}}, "unknown option"),
    ({"rx_misuse": {"maybe": 1.0}}, "yes or no"),
    ({"drinks_last_week": {"31": 1.0}}, "outside"),
    ({"drinks_last_week": {"three": 1.0}}, "not an integer"),
    ({"rx_misuse": {"yes": 0.5, "no": 0.4}}, "sum to"),
    ({"rx_misuse": {"yes": 0.5 + 2e-9, "no": 0.5}}, "sum to"),
    ({"rx_misuse": {"yes": 1.5, "no": -0.5}}, ">= 0"),
    ({"rx_misuse": {"yes": True, "no": 0}}, "finite number"),
    ({"rx_misuse": {"yes": "1", "no": 0}}, "finite number"),
    ({"rx_misuse": {"yes": math.nan, "no": 1}}, "finite number"),
    ({"rx_misuse": {}}, "non-empty"),
    ({"rx_misuse": {"yes": 0.5, "true": 0.5}}, "twice"),
])
def test_bad_truth_is_refused(survey: Survey, data: Any, match: str) -> None:
    with pytest.raises(SimulationError, match=match):
        parse_truth(data, survey)


def test_sum_within_tolerance_is_accepted(survey: Survey) -> None:
    parse_truth({"rx_misuse": {"yes": 0.1 + 5e-10, "no": 0.9}}, survey)


# --- the simulation ----------------------------------------------------------------------------


def test_simulation_compares_estimates_with_the_sample_truth(survey: Survey) -> None:
    done: list[int] = []
    result = simulate_survey(survey, 10_000, np.random.default_rng(3), progress=done.append)
    assert sum(done) == 10_000 * len(survey.questions)
    for q in result.questions:
        assert q.n == 10_000
        assert q.realized_epsilon <= q.epsilon
        truths = [v.truth for v in q.values]
        if q.question.type == "multiselect":  # shares of respondents: several per person
            assert q.mean is not None and math.isclose(sum(truths), q.mean.truth)
        else:
            assert math.isclose(sum(truths), 1.0)
        for v in [*q.values, *q.groups]:
            assert v.covered == (v.ci_low <= v.truth <= v.ci_high)
    binary = result.questions[0]
    assert [v.value for v in binary.values] == [False, True]
    grouped = result.questions[1]
    assert grouped.groups and grouped.groups[0].value == "at least monthly"
    members = grouped.question.groups["at least monthly"]
    expected = sum(v.truth for v in grouped.values if v.value in members)
    assert math.isclose(grouped.groups[0].truth, expected)
    integer = result.questions[2]
    assert integer.mean is not None and integer.values
    values = np.array([v.value for v in integer.values])
    truth = [v.truth for v in integer.values]
    assert math.isclose(integer.mean.truth, float(np.dot(values, truth)))
    covered, total = result.coverage
    assert total == sum(len(q.intervals) for q in result.questions) and covered <= total


def test_seed_makes_runs_reproducible(survey: Survey) -> None:
    a = simulate_survey(survey, 3000, np.random.default_rng(9))
    b = simulate_survey(survey, 3000, np.random.default_rng(9))
    assert [q.estimate.to_dict() for q in a.questions if q.estimate] == \
        [q.estimate.to_dict() for q in b.questions if q.estimate]


def test_chunking_does_not_change_totals() -> None:
    q = wide_survey(16).questions[0]
    n = 2 * chunk_size(16) + 17  # several chunks and a ragged last one
    seen: list[int] = []
    result = simulate_question(q, n, np.random.default_rng(4), progress=seen.append)
    assert sum(seen) == n and len(seen) == 3
    assert result.estimate is not None and result.estimate.n == n


def test_given_truth_is_used(survey: Survey) -> None:
    truth = parse_truth({"cannabis_frequency": {"weekly": 1.0}}, survey)
    result = simulate_survey(survey, 2000, np.random.default_rng(5), truth)
    freq = {v.value: v.truth for v in result.questions[1].values}
    assert freq["weekly"] == 1.0 and freq["never"] == 0.0


@pytest.mark.parametrize("n", [0, -5, 1.5, True])
def test_bad_n_is_refused(survey: Survey, n: Any) -> None:
    with pytest.raises(SimulationError):
        simulate_survey(survey, n, np.random.default_rng(0))


def test_wide_integer_range_estimates_only_the_mean() -> None:
    wide = Survey.from_dict({
        "id": "income", "title": "Income", "version": 1,
        "questions": [{"id": "income", "text": "Income", "type": "integer", "epsilon": 1.0,
                       "min": 0, "max": 1_000_000}],
    })
    result = simulate_survey(wide, 5000, np.random.default_rng(6))
    q = result.questions[0]
    assert q.mean is not None and not q.values


def test_ordinal_mean_score_is_compared() -> None:
    survey = Survey.from_dict({
        "id": "likert", "title": "Likert", "version": 1,
        "questions": [{"id": "agree", "text": "Agree?", "type": "ordinal", "epsilon": 2.0,
                       "mechanism": "ordinal_exp",
                       "options": ["strongly disagree", "disagree", "neutral", "agree",
                                   "strongly agree"]}],
    })
    q = simulate_survey(survey, 4000, np.random.default_rng(8)).questions[0]
    assert q.mean is not None
    scores = np.arange(1, 6)
    assert math.isclose(q.mean.truth, float(np.dot(scores, [v.truth for v in q.values])))


@pytest.mark.slow
def test_a_million_respondents_on_sixteen_options() -> None:
    result = simulate_survey(wide_survey(16), 1_000_000, np.random.default_rng(7))
    q = result.questions[0]
    assert q.n == 1_000_000 and len(q.values) == 16


# --- the command -------------------------------------------------------------------------------


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, ["simulate", *args], catch_exceptions=False)


def test_cli_prints_the_table(survey: Survey) -> None:
    result = run(str(sample_path()), "--n", "20000", "--seed", "1")
    assert result.exit_code == 0, result.output
    out = result.output
    for q in survey.questions:
        assert q.id in out
    for word in ("truth", "estimate", "95% CI", "covered", "binary_rr", "grr", "geometric",
                 "at least monthly", "mean: truth", "coverage:", "n = 20,000", "seed 1"):
        assert word in out
    again = run(str(sample_path()), "--n", "20000", "--seed", "1")
    assert again.output == out


def test_cli_truth_file_and_confidence(tmp_path: Path) -> None:
    path = tmp_path / "truth.json"
    path.write_text(json.dumps({"rx_misuse": {"yes": 0.1, "no": 0.9}}))
    result = run(str(sample_path()), "--n", "5000", "--seed", "2", "--truth", str(path),
                 "--confidence", "0.9", "--rows", "3")
    assert result.exit_code == 0, result.output
    assert "90% CI" in result.output and "more not shown" in result.output


@pytest.mark.parametrize("content", ['{"rx_misuse": {"yes": 0.1, "no": 0.8}}', "{", "[]"])
def test_cli_bad_truth_is_one_line(tmp_path: Path, content: str) -> None:
    path = tmp_path / "truth.json"
    path.write_text(content)
    result = CliRunner().invoke(cli, ["simulate", str(sample_path()), "--truth", str(path)])
    assert result.exit_code == 1
    assert result.output.startswith("Error: ") and result.output.count("\n") == 1


def test_cli_bad_survey_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('id = "x"\n')
    result = CliRunner().invoke(cli, ["simulate", str(path)])
    assert result.exit_code == 1 and result.output.count("\n") == 1


@pytest.mark.parametrize("args", [["--n", "0"], ["--confidence", "1"], ["--seed", "-1"]])
def test_cli_bad_options(args: list[str]) -> None:
    result = CliRunner().invoke(cli, ["simulate", str(sample_path()), *args])
    assert result.exit_code == 2


@pytest.mark.parametrize("extra", [[], ["--crosstab", "rx_misuse", "cannabis_frequency"]])
def test_cli_off_a_terminal_writes_nothing_stray_on_stderr(extra: list[str]) -> None:
    """Enough answers for a progress bar, but stderr is no terminal: click would still print
    its "simulating" label there, a stray line in a log (issue 17)."""
    result = CliRunner().invoke(cli, ["simulate", str(sample_path()), "--n", "100000",
                                      "--seed", "3", *extra], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "simulating" not in result.stderr
    assert "coverage" in result.stdout


def test_cli_counts_one_question_and_rounds_a_derived_epsilon_up(tmp_path: Path) -> None:
    """A location question's plain ε (ε_geo × the grid's diameter, 4.88713...) is shown as
    the page and `plan` show ε: three significant digits rounded up; one question is singular."""
    path = tmp_path / "loc.toml"
    path.write_text('id = "loc"\nversion = 1\ntitle = "t"\n[[questions]]\nid = "home"\n'
                    'type = "location"\ntext = "Where?"\nepsilon_geo = 1.0\n'
                    'grid = { rows = 8, cols = 8, cell_km = 1.0 }\n')
    result = run(str(path), "--n", "200", "--seed", "3", "--rows", "2")
    assert result.exit_code == 0, result.output
    assert "1 question," in result.output and "1 questions" not in result.output
    assert "total ε = 4.89" in result.output and "ε = 4.89 (realized" in result.output
    assert "4.88713" not in result.output
