"""A `decimal` question in every report format (issue 41): the mean with its s.e., worst-case
bound and interval; with the distribution, the designer's bins and the median and quartiles
with their intervals, and in HTML a chart of the bins with their intervals."""

from __future__ import annotations

import csv
import io
import json

import pytest
from ldpsurvey.analyst.reports import Report, render
from ldpsurvey.analyst.reports.simulated import simulated_report
from ldpsurvey.shared.survey import Survey

SURVEY = Survey.from_dict({"id": "money", "title": "Money", "version": 1, "questions": [
    {"id": "income", "type": "decimal", "text": "Income?", "min": 0, "max": 2000,
     "resolution": 10, "epsilon": 2.0, "estimate": ["mean", "distribution"], "bins": 10},
    {"id": "hours", "type": "decimal", "text": "Hours?", "min": 0, "max": 80,
     "resolution": 0.5, "epsilon": 1.0}]})


@pytest.fixture(scope="module")
def report() -> Report:
    return simulated_report(SURVEY, 3000, seed=3)


def test_json_has_the_mean_bins_and_quartiles(report: Report) -> None:
    doc = json.loads(render(report, "json"))
    income, hours = doc["questions"]
    assert set(income["mean"]) == {"estimate", "std_error", "variance_bound", "ci_low",
                                   "ci_high"}
    assert [b["value"] for b in income["distribution"]][:2] == ["0 to 200", "200 to 400"]
    assert len(income["distribution"]) == 10
    assert [q["value"] for q in income["quantiles"]] == ["1st quartile", "median",
                                                         "3rd quartile"]
    for q in income["quantiles"]:
        assert q["ci_low"] <= q["estimate"] <= q["ci_high"]
        assert 0 <= q["estimate"] <= 2000
    assert "quantiles" not in hours and "distribution" not in hours
    assert hours["mean"]["ci_low"] < hours["mean"]["estimate"] < hours["mean"]["ci_high"]


def test_csv_and_the_table_list_the_quartiles_as_numbers(report: Report) -> None:
    rows = list(csv.DictReader(io.StringIO(render(report, "csv"))))
    kinds = [(r["question"], r["kind"], r["option"]) for r in rows if r["question"] == "income"]
    assert kinds[:4] == [("income", "mean", "mean"), ("income", "quantile", "1st quartile"),
                         ("income", "quantile", "median"), ("income", "quantile", "3rd quartile")]
    assert [k for _, k, _ in kinds].count("distribution") == 10
    table = render(report, "table")
    median = next(line for line in table.splitlines() if line.strip().startswith("median"))
    assert "%" not in median  # a number in the answer's units, not a share
    assert "0 to 200" in table
    assert "| quantile | median |" in render(report, "md")


def test_html_draws_the_bins_with_their_intervals(report: Report) -> None:
    html = render(report, "html")
    assert html.count("data:image/png;base64,") >= 2  # a chart per question (and phones')
    assert "<td>median</td>" in html and "0 to 200" in html
