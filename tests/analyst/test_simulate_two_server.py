"""`ldpsurvey simulate` on two-server surveys (analyst/simulate/two_server.py): the sample
surveys run, and over seeded repetitions every interval covers the drawn sample's truth at the
nominal rate.

The coverage check, per interval row (question, kind, value), over R independent seeded runs:
the number of runs covering the truth is Binomial(R, p) with p >= the nominal 95% when the
standard errors are right (they count sampling, the local randomization and both servers'
noise; an integer's mean is conservative by construction, so p may exceed 95%: the check is
one-sided). A row fails when its count is below the lower binomial quantile at a false-alarm
rate of 1e-3 split (Bonferroni) over all rows, so the whole test raises a false alarm at most
1 time in 1,000 when every interval is calibrated. An interval whose standard error is
understated by a fifth covers about 88% of the time instead of 95%, and fails it.
"""

from __future__ import annotations

import importlib.resources
import math
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.analyst.simulate.results import SimulationResult
from ldpsurvey.analyst.simulate.survey import simulate_survey
from ldpsurvey.analyst.simulate.truth import parse_truth
from ldpsurvey.analyst.simulate.two_server import TwoServerRelease
from ldpsurvey.shared.survey import Survey, load_survey
from support.two_server_stand_ins import question_data, survey_of

KEYS = {"HELPER_URL": "https://h.example",
        "LEADER_HPKE_KEY": "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE",
        "HELPER_HPKE_KEY": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}
SAMPLES = ["two-server.toml", "drug-use-two-server.toml"]
FALSE_ALARM = 1e-3
NOMINAL = 0.95


def sample(name: str, tmp_path: Path) -> Path:
    """A sample two-server survey with its placeholders filled in (as docs/two-server.md's
    sed does)."""
    text = (importlib.resources.files("ldpsurvey.shared") / "samples" / name).read_text()
    for placeholder, value in KEYS.items():
        text = text.replace(f'"{placeholder}"', f'"{value}"')
    path = tmp_path / name
    path.write_text(text)
    return path


def special_and_decimal_survey() -> Survey:
    """Integer special values (a Histogram over the range and the special value), a binary
    and an ordinal (local ε0) with special values, and decimals (grid pair and grid sum)."""
    return survey_of([
        question_data("integer", 1.0, qid="visits", min=0, max=10,
                      special={"refused": "Prefer not to say"}),
        question_data("binary", 1.0, qid="used", special={"dont_know": "Don't know"}),
        question_data("ordinal", 1.0, 2.0, qid="often",
                      options=["never", "sometimes", "often"],
                      special={"refused": "Prefer not to say"}),
        question_data("categorical", 2.0, qid="brand", options=["a", "b", "c"],
                      special={"refused": "Prefer not to say"}),
        {"id": "income", "text": "Income?", "type": "decimal", "min": 0, "max": 20000,
         "resolution": 10, "estimate": ["mean", "distribution"], "bins": 4,
         "central_epsilon": 1.0},
        {"id": "hours", "text": "Hours?", "type": "decimal", "min": 0, "max": 80,
         "resolution": 0.5, "central_epsilon": 1.0}])


def local_survey() -> Survey:
    """A local ε0 on every kind of measurement the samples leave out: binary_rr, a hidden
    integer's asked_geometric pair, option_rr's free bits and psfo_grr's index for sets,
    ordinal_exp, and a hidden categorical's "not asked" cell."""
    return survey_of([
        question_data("binary", 1.0, 1.0, qid="gate"),
        question_data("integer", 1.0, 2.0, qid="amount", min=0, max=20,
                      mechanism="asked_geometric", relevant="gate"),
        question_data("multiselect", 1.0, 2.0, qid="sets", options=["a", "b", "c", "d"],
                      max_selected=2, mechanism="option_rr"),
        question_data("multiselect", 1.0, 2.0, qid="sets2", options=["a", "b", "c", "d"],
                      max_selected=2, mechanism="psfo_grr"),
        question_data("ordinal", 1.0, 2.0, qid="rank", options=["x", "y", "z"],
                      mechanism="ordinal_exp"),
        question_data("categorical", 1.0, 2.0, qid="brand", options=["x", "y", "z"],
                      relevant="gate")])


@pytest.mark.parametrize("name", SAMPLES)
def test_the_sample_two_server_surveys_simulate(name: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["simulate", str(sample(name, tmp_path)), "--n", "2000",
                                      "--seed", "1"])
    assert result.exit_code == 0, result.output
    assert "covered the truth" in result.output
    assert "two-server" in result.output


def test_the_two_server_sample_shows_each_question_and_says_crosstabs_are_not_drawn(
        tmp_path: Path) -> None:
    out = CliRunner().invoke(cli, ["simulate", str(sample("two-server.toml", tmp_path)),
                                   "--n", "2000", "--seed", "1"]).output
    assert "two-server+grr (ε0 = 2 on the device)" in out  # the local mechanism ran first
    assert "mean: truth" in out  # the integer's Sum
    assert "declared crosstabs (smoker by mood) are not simulated yet" in out


def test_simulate_crosstab_of_a_two_server_survey_is_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["simulate", str(sample("two-server.toml", tmp_path)),
                                      "--n", "200", "--crosstab", "smoker", "mood"])
    assert result.exit_code != 0
    assert "not simulated yet" in result.output
    assert "Traceback" not in result.output


def test_the_drug_use_sample_compares_not_asked_and_among_those_asked(tmp_path: Path) -> None:
    survey = load_survey(sample("drug-use-two-server.toml", tmp_path))
    result = simulate_survey(survey, 3000, np.random.default_rng(5), seed=5)
    by_id = {q.question.id: q for q in result.questions}
    freq = by_id["cannabis_frequency"]
    assert [r.value for r in freq.values][-1] == "(not asked)"
    assert len(freq.asked_values) == 4
    days = by_id["days_used"]
    assert days.not_asked is not None and days.asked_mean is not None
    assert len(days.values) == 31  # the range's values over everyone; "not asked" apart
    assert len(by_id["substances"].values) == 4 and by_id["substances"].mean is not None


def test_special_values_and_decimals_simulate() -> None:
    result = simulate_survey(special_and_decimal_survey(), 3000, np.random.default_rng(3),
                             seed=3)
    by_id = {q.question.id: q for q in result.questions}
    visits = by_id["visits"]
    assert [r.value for r in visits.values][-1] == "Prefer not to say"  # listed apart
    assert visits.asked_mean is not None  # the mean among those who gave an answer
    often = by_id["often"]
    assert [r.value for r in often.values][-1] == "Prefer not to say"
    assert [r.value for r in often.asked_values] == ["never", "sometimes", "often"]
    assert often.asked_mean is not None
    income = by_id["income"]
    assert income.mean is not None and len(income.values) == 4  # the mean and the 4 bins
    assert by_id["hours"].mean is not None
    assert all(0 <= r.truth <= 1 for q in result.questions for r in q.values)


def test_a_truth_file_sets_what_is_drawn() -> None:
    """--truth: the drawn sample's shares follow the file (within 4.5 binomial s.e.)."""
    survey = special_and_decimal_survey()
    shares = {"a": 0.2, "b": 0.3, "c": 0.5}
    truth = parse_truth({"brand": shares}, survey)
    n = 4000
    result = simulate_survey(survey, n, np.random.default_rng(8), truth, seed=8)
    brand = {r.value: r.truth for r in result.questions[3].values}
    for label, p in shares.items():
        assert abs(brand[label] - p) < 4.5 * math.sqrt(p * (1 - p) / n)


def test_the_released_totals_are_the_summed_measurements_plus_both_servers_noise() -> None:
    """The leader's aggregate of a Histogram is the cell counts; the noise added per total has
    the plan's variance 2·2α/(1 - α)² (both servers), checked over 4,000 releases within
    a chi-square band at a false-alarm rate of about 1e-4."""
    survey = special_and_decimal_survey()
    release = TwoServerRelease(survey.questions[3], np.random.default_rng(11))
    reports = np.array([0, 1, 1, 2, 3, 3, 3])
    aggregate = release.aggregate_many(reports)
    assert aggregate.totals.tolist() == [1, 2, 1, 3] and aggregate.n == 7
    from ldpsurvey.analyst.simulate.two_server import servers_noise

    reps = 4000
    noise = servers_noise(np.random.default_rng(12), release.plan, (reps,)).astype(float)
    ratio = float(noise @ noise) / reps / release.plan.total_variance
    # the mean of reps squared Laplace-like draws: relative s.d. sqrt((kurtosis - 1)/reps)
    # with kurtosis at most 6 for a discrete Laplace sum (at most a Laplace's)
    assert abs(ratio - 1) < 3.9 * math.sqrt(5 / reps)


def _lowest_count(reps: int, p: float, alpha: float) -> int:
    """The largest c with P[Binomial(reps, p) < c] <= alpha."""
    cdf = 0.0
    for c in range(reps + 1):
        mass = math.comb(reps, c) * p**c * (1 - p) ** (reps - c)
        if cdf + mass > alpha:
            return c
        cdf += mass
    return reps


def _coverage_rows(result: SimulationResult) -> dict[tuple[str, str, str], bool]:
    rows: dict[tuple[str, str, str], bool] = {}
    for q in result.questions:
        qid = q.question.id
        for kind, items in (("value", q.values), ("group", q.groups),
                            ("asked", q.asked_values), ("asked_group", q.asked_groups)):
            for r in items:
                rows[(qid, kind, str(r.value))] = r.covered
        for kind, m in (("mean", q.mean), ("asked_mean", q.asked_mean),
                        ("not_asked", q.not_asked)):
            if m is not None:
                rows[(qid, kind, "")] = m.covered
    return rows


@pytest.mark.parametrize("which", ["two-server.toml", "drug-use-two-server.toml", "special",
                                   "local"])
def test_intervals_cover_the_truth_at_the_nominal_rate(which: str, tmp_path: Path) -> None:
    """R seeded runs; each row's covering count against the lower binomial band (module
    docstring). Rows whose truth is 0 in every run (a value the truth never draws) are
    checked too: their interval must hold 0."""
    built = {"special": special_and_decimal_survey, "local": local_survey}
    survey = built[which]() if which in built else load_survey(sample(which, tmp_path))
    reps, n = 120, 1500
    counts: dict[tuple[str, str, str], int] = defaultdict(int)
    seen: dict[tuple[str, str, str], int] = defaultdict(int)
    for seed in range(reps):
        result = simulate_survey(survey, n, np.random.default_rng(1000 + seed), seed=seed)
        for key, covered in _coverage_rows(result).items():
            counts[key] += int(covered)
            seen[key] += 1
    assert counts, "no interval was compared"
    alpha = FALSE_ALARM / len(counts)
    low = {r: _lowest_count(r, NOMINAL, alpha) for r in set(seen.values())}
    short = {key: f"{counts[key]}/{seen[key]}" for key in counts
             if counts[key] < low[seen[key]]}
    assert not short, f"under-covering intervals (band at {FALSE_ALARM} false alarms): {short}"


def test_the_band_catches_understated_noise(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above can fail: with the servers' noise six times what the plan (and so the
    standard errors) say, the noise-dominated rows under-cover and fall below the band."""
    from ldpsurvey.analyst.simulate import two_server

    real = two_server.servers_noise
    monkeypatch.setattr(two_server, "servers_noise",
                        lambda rng, plan, size: 6 * real(rng, plan, size))
    with pytest.raises(AssertionError, match="under-covering"):
        test_intervals_cover_the_truth_at_the_nominal_rate("two-server.toml", tmp_path)
