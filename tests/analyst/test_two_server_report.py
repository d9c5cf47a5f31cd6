"""Two-server reports: every format from the manifest's Survey + the leader's CollectedBatch,
with the guarantees, the rejected-report count and the declared crosstab's cells."""

from __future__ import annotations

import csv
import io
import json

import pytest
from ldpsurvey.analyst.reports.model import Report
from ldpsurvey.analyst.reports.two_server import (
    FORMATS,
    TwoServerReport,
    render_two_server,
    two_server_report,
)
from ldpsurvey.shared.errors import ReportRenderError
from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.two_server.encoding import encodings
from ldpsurvey.shared.two_server.plans import key_epsilon
from ldpsurvey.shared.two_server.results import BatchEntry, CollectedBatch
from support.two_server_stand_ins import two_server_survey_dict

QUESTIONS = [
    {"id": "smoke", "text": "Do you smoke?", "type": "binary", "central_epsilon": 1.0},
    {"id": "party", "text": "Which party | <b>?", "type": "categorical",
     "options": ["red", "green", "blue"], "groups": {"not blue": ["red", "green"]},
     "central_epsilon": 1.0, "local_epsilon": 2.0, "mechanism": "grr"},
    {"id": "age", "text": "Age?", "type": "integer", "min": 18, "max": 90,
     "central_epsilon": 1.0},
]


@pytest.fixture(scope="module")
def report() -> TwoServerReport:
    survey = Survey.from_dict(two_server_survey_dict(QUESTIONS, [["smoke", "party"]]))
    encs = encodings(survey)

    def entry(key: str, sums: list[int], rejected: int = 0) -> BatchEntry:
        enc = encs[key]
        return BatchEntry(key, enc.kind, tuple(sums), 500, rejected, key_epsilon(survey, key),
                          enc.sensitivity, enc.offset)

    batch = CollectedBatch("ts", 1, "batch-7", {
        "smoke": entry("smoke", [120], rejected=4), "party": entry("party", [200, 180, 120],
                                                                   rejected=2),
        "age": entry("age", [500 * 27]),
        "crosstab:smoke:party": entry("crosstab:smoke:party", [90, 150, 140, 30, 50, 40])})
    return two_server_report(survey, batch)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_every_format_states_the_guarantees_and_rejections(report: TwoServerReport,
                                                           fmt: str) -> None:
    text = render_two_server(report, fmt)
    assert "batch-7" in text
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(text)))
        assert {r["rejected"] for r in rows if r["question"] == "smoke"} == {"4"}
        return
    flat = " ".join(text.split())
    if fmt == "json":
        doc = json.loads(text)
        assert doc["rejected"] == 6
        assert doc["guarantees"]["statements"] == report.guarantees
        return
    assert ("rejected reports<b>6</b>" if fmt == "html" else "6 reports rejected") in flat
    assert "Against the leader, the helper or the analyst alone" in flat
    assert "central epsilon 4" in flat  # 3 questions + 1 crosstab at ε = 1
    assert "your answers to smoke, age are exposed" in flat
    assert "smoke x party" in flat


def test_csv_holds_the_estimators_numbers(report: TwoServerReport) -> None:
    rows = list(csv.DictReader(io.StringIO(render_two_server(report, "csv"))))
    doc = report.estimates
    yes = next(r for r in rows if r["question"] == "smoke" and r["option"] == "yes")
    assert float(yes["estimate"]) == doc["questions"][0]["categories"][1]["estimate"]
    assert float(yes["std_error"]) == doc["questions"][0]["categories"][1]["std_error"]
    group = next(r for r in rows if r["kind"] == "group")
    assert group["members"] == "red|green" and group["local_epsilon"] == "2.0"
    cells = [r for r in rows if r["kind"] == "cell"]
    assert len(cells) == 6 and cells[0]["option"] == "no / red"
    assert [float(c["estimate"]) for c in cells] == [
        c["estimate"] for c in doc["crosstabs"][0]["cells"]]
    mean = next(r for r in rows if r["kind"] == "mean")
    assert float(mean["estimate"]) == pytest.approx(18 + 27)


def test_table_shows_the_estimates(report: TwoServerReport) -> None:
    text = render_two_server(report, "table")
    yes = report.estimates["questions"][0]["categories"][1]
    assert f"{yes['estimate'] * 100:.1f}%" in text and f"{yes['std_error'] * 100:.1f}%" in text
    assert "both servers' noise and the local grr randomization" in text


def test_markup_is_escaped_and_html_is_self_contained(report: TwoServerReport) -> None:
    html = render_two_server(report, "html")
    assert "<b>?" not in html and "&lt;b&gt;?" in html
    assert "http://" not in html and "https://" not in html and "<script" not in html
    md = render_two_server(report, "md")
    assert "Which party \\| &lt;b>?" in md


def test_refusals(report: TwoServerReport) -> None:
    with pytest.raises(ReportRenderError, match="unknown report format"):
        render_two_server(report, "pdf")
    ldp_doc = {k: v for k, v in report.estimates.items() if k != "collection"}
    with pytest.raises(ReportRenderError, match="not a two-server"):
        TwoServerReport(report.survey, ldp_doc)
    assert isinstance(report, Report)
