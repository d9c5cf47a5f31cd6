"""`ldpsurvey simulate --crosstab`: the truth beside each number is the drawn sample's own table,
and every format renders."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.analyst.simulate.crosstab import simulate_crosstab
from ldpsurvey.shared.errors import SimulationError
from ldpsurvey.shared.survey import Survey


def survey(epsilon: float) -> Survey:
    return Survey.from_dict({"id": "sim", "title": "Sim", "version": 1, "questions": [
        {"id": "party", "text": "Party?", "type": "categorical", "epsilon": epsilon,
         "options": ["a", "b", "c"], "mechanism": "grr"},
        {"id": "age", "text": "Age?", "type": "integer", "epsilon": epsilon, "min": 18,
         "max": 30, "mechanism": "geometric"}]})


def test_nearly_noiseless_estimates_equal_the_reported_truth() -> None:
    """At ε = 50 the reports are (almost) the answers, so the estimates must equal the truth
    tables the simulation reports (a check of the truth bookkeeping, not of the estimator)."""
    sim = simulate_crosstab(survey(50.0), "party", "age", 20_000, np.random.default_rng(1),
                            dependence=0.8, row_bins=None, col_bins=(22, 26))
    doc, truth = sim.report.document, sim.report.truth
    assert truth is not None
    for kind in ("joint", "col_given_row", "row_given_col"):
        est = np.array([[c["estimate"] for c in row] for row in doc[kind]])
        np.testing.assert_allclose(est, np.array(truth.tables[kind], dtype=float), atol=0.02)
    means = [c["estimate"] for c in doc["cols_mean_given_row"]]
    np.testing.assert_allclose(means, truth.tables["cols_mean_given_row"], atol=0.1)
    assert sim.total > 0 and sim.covered <= sim.total


def test_dependence_shows_in_the_truth() -> None:
    sim = simulate_crosstab(survey(1.0), "party", "age", 5_000, np.random.default_rng(2),
                            dependence=1.0, col_bins=(22, 26))
    assert sim.report.truth is not None
    joint = np.array(sim.report.truth.tables["joint"])
    assert np.count_nonzero(joint) == 3  # every party maps to one age bin


def test_bad_inputs_are_simulation_errors() -> None:
    with pytest.raises(SimulationError, match="no question"):
        simulate_crosstab(survey(1.0), "party", "nope", 100, np.random.default_rng(0))
    with pytest.raises(SimulationError, match="two different"):
        simulate_crosstab(survey(1.0), "party", "party", 100, np.random.default_rng(0))


def test_cli_every_format(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(survey(2.0).to_dict()), encoding="utf-8")
    runner = CliRunner()
    for fmt in ("table", "json", "csv", "md", "html"):
        res = runner.invoke(cli, ["simulate", str(path), "--crosstab", "party", "age", "--bins",
                                  "22,26", "--n", "3000", "--seed", "1", "--format", fmt])
        assert res.exit_code == 0, res.output
        assert "coverage:" in res.output
    res = runner.invoke(cli, ["simulate", str(path), "--crosstab", "party", "x"])
    assert res.exit_code != 0 and "no question 'x'" in res.output
    assert "Traceback" not in res.output


def test_bins_on_two_option_questions_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    data = survey(2.0).to_dict()
    data["questions"].append({"id": "smoker", "text": "Smoke?", "type": "binary",
                              "epsilon": 1.0})
    path.write_text(json.dumps(data), encoding="utf-8")
    res = CliRunner().invoke(cli, ["simulate", str(path), "--crosstab", "party", "smoker",
                                   "--bins", "1,2", "--n", "100"])
    assert res.exit_code != 0
    assert "bins apply to integer questions" in res.output
    assert "Traceback" not in res.output and len(res.output.strip().splitlines()) == 1
