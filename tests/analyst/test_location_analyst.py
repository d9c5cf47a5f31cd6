"""A location question through simulate, plan and the HTML report (heatmap)."""

from __future__ import annotations

import numpy as np
from click.testing import CliRunner
from ldpsurvey.analyst.cli import (
    cli,  # the group: a subcommand invoked alone caches a help option without -h
)
from ldpsurvey.analyst.plan_location import plan_location
from ldpsurvey.analyst.reports.html import render_html
from ldpsurvey.analyst.reports.location_chart import grid_of
from ldpsurvey.analyst.reports.model import Report
from ldpsurvey.analyst.reports.simulated import simulated_report
from ldpsurvey.analyst.simulate import simulate_survey
from ldpsurvey.shared.survey import Survey

SURVEY = {"id": "where", "title": "Where", "version": 1, "questions": [
    {"id": "home", "type": "location", "text": "Where?", "epsilon_geo": 2.0,
     "grid": {"rows": 8, "cols": 10, "cell_km": 0.5},
     "regions": {"west": ["1-8,1-5"], "east": ["1-8,6-10"]}}]}


def test_simulate_compares_regions_with_the_truth():
    result = simulate_survey(Survey.from_dict(SURVEY), 4000, np.random.default_rng(2))
    [q] = result.questions
    assert [g.value for g in q.groups] == ["west", "east"]
    assert abs(sum(g.truth for g in q.groups) - 1) < 1e-12
    # Two halves of the grid: EM's halves are within 0.1 of the truth at n = 4000 (their
    # bootstrap sd is ~0.01 here; 0.1 leaves room for EM's smoothing bias).
    assert all(abs(g.estimate - g.truth) < 0.1 for g in q.groups)


def test_plan_rows_per_region_and_one_cell():
    q = Survey.from_dict(SURVEY).questions[0]
    p = plan_location(q, n=2000)
    names = [r.mechanism for r in p.rows]
    assert names == ["region west", "region east", "one cell (median)"]
    assert [r.configured for r in p.rows] == [True, True, False]
    targeted = plan_location(q, margin=0.02)
    assert all(r.n > 0 for r in targeted.rows)


def test_plan_cli_describes_the_grid(tmp_path):
    path = tmp_path / "where.json"
    import json

    path.write_text(json.dumps(SURVEY))
    out = CliRunner().invoke(cli, ["plan", str(path), "--n", "3000"])
    assert out.exit_code == 0, out.output
    assert "location, 8 x 10 cells of 0.5 km, epsilon_geo=2/km" in out.output
    assert "region west" in out.output and "one cell (median)" in out.output


def test_html_report_has_the_heatmap():
    survey = Survey.from_dict(SURVEY)
    report = simulated_report(survey, 3000, seed=4)
    html = render_html(report)
    assert 'alt="chart of the estimates for home"' in html
    view = Report(survey=report.survey, estimates=report.estimates).questions()[0]
    share, half = grid_of(view)
    assert share.shape == (8, 10) and abs(share.sum() - 1) < 1e-9 and (half >= 0).all()
