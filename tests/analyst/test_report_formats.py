"""Report formats: well-formed CSV/JSON/Markdown, a self-contained HTML page, the same numbers."""

from __future__ import annotations

import csv
import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from ldpsurvey.analyst.reports import FORMATS, Report, render
from ldpsurvey.analyst.reports.charts import frequency_chart
from ldpsurvey.analyst.reports.columns import columns
from ldpsurvey.analyst.reports.csv_format import COLUMNS
from ldpsurvey.analyst.reports.model import (
    DISTRIBUTION,
    GROUP,
    MAX_LISTED_OPTIONS,
    MEAN,
    OPTION,
    listed_options,
)
from ldpsurvey.analyst.reports.simulated import simulated_report
from ldpsurvey.shared.errors import ReportRenderError
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Survey, load_survey

SAMPLE = Path(__file__).resolve().parents[2] / "shared" / "samples" / "sensitive.toml"


@pytest.fixture(scope="module")
def report() -> Report:
    return simulated_report(load_survey(SAMPLE), 3000, seed=11)


@pytest.fixture(scope="module")
def html(report: Report) -> str:
    return render(report, "html")


def tricky_report(n: int) -> Report:
    """Labels that must be escaped, a small-share option (negative estimates), an ordinal
    question with a mean, and an integer range narrow enough for a readable distribution."""
    survey = Survey.from_dict({
        "id": "tricky", "title": "Tricky <b>labels</b> | pipes", "version": 2,
        "questions": [
            {"id": "pick", "text": "Pick <script>alert(1)</script> one | two?",
             "type": "categorical", "epsilon": 0.5,
             "options": ["a|b", "<img src=x>", "a very long option label that goes on and on "
                         "and on until it must wrap", "rare"],
             "groups": {"not rare": ["a|b", "<img src=x>"]}},
            {"id": "dice", "text": "A number from 1 to 3?", "type": "integer", "epsilon": 4.0,
             "min": 1, "max": 3, "optional": True},
        ]})
    return simulated_report(survey, n, seed=5)


def test_json_is_the_estimate_document_unchanged(report: Report) -> None:
    assert json.loads(render(report, "json")) == report.estimates


def test_csv_has_one_row_per_question_and_option_with_kinds(report: Report) -> None:
    rows = list(csv.DictReader(io.StringIO(render(report, "csv"))))
    assert tuple(rows[0].keys()) == COLUMNS
    expected = []
    for q in report.estimates["questions"]:
        expected += [(q["question"], OPTION) for _ in q.get("categories") or []]
        expected += [(q["question"], GROUP) for _ in q.get("groups") or []]
        expected += [(q["question"], MEAN)] if q.get("mean") else []
        expected += [(q["question"], DISTRIBUTION) for _ in q.get("distribution") or []]
    assert [(r["question"], r["kind"]) for r in rows] == expected
    by_key = {(r["question"], r["kind"], r["option"]): r for r in rows}
    never = report.estimates["questions"][1]["categories"][0]
    row = by_key[("cannabis_frequency", OPTION, "never")]
    for field in ("estimate", "std_error", "ci_low", "ci_high", "variance_bound", "consistent"):
        assert float(row[field]) == never[field]  # repr round-trips floats exactly
    assert by_key[("cannabis_frequency", GROUP, "at least monthly")]["members"] == \
        "monthly|weekly|daily"
    configured = {q["id"]: q["mechanism"] for q in report.survey["questions"]}
    assert by_key[("rx_misuse", OPTION, "yes")]["mechanism"] == configured["rx_misuse"]
    assert by_key[("drinks_last_week", MEAN, "mean")]["consistent"] == ""


def test_markdown_tables_are_well_formed(report: Report) -> None:
    md = render(report, "md")
    tables = re.findall(r"(?:^\|.*\|\n)+", md, flags=re.M)
    assert len(tables) == 1 + len(report.survey["questions"])  # the budget + one per question
    for table in tables:
        lines = table.strip("\n").split("\n")
        assert re.fullmatch(r"\|(:?-+:?\|)+", lines[1]), lines[1]
        cells = [len(re.findall(r"(?<!\\)\|", line)) for line in lines]
        assert len(set(cells)) == 1, lines
    for q in report.survey["questions"]:  # headings are the question texts, ids beside them
        assert f"## {q['text']}\n\n`{q['id']}`: " in md


def test_table_lists_every_question_with_truth_and_explains_columns(report: Report) -> None:
    text = render(report, "table")
    for q in report.survey["questions"]:
        assert q["id"] in text and q["text"] in text
    assert "true" in text and "consistent" in text
    assert "total epsilon per respondent 5;" in text
    # The 31-value distribution at n=3000, ε=1.5 is noise: summarized, not listed.
    assert "too noisy to read" in text


class Links(HTMLParser):
    """Every tag name and every URL-bearing attribute value in a page."""

    URL_ATTRS = frozenset({"src", "href", "action", "srcset", "poster", "data", "formaction"})

    def __init__(self, page: str) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.urls: list[str] = []
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.urls += [v or "" for k, v in attrs if k in self.URL_ATTRS]


def external_urls(page: str) -> list[str]:
    return [u for u in Links(page).urls if not u.startswith(("data:", "#"))]


def test_html_is_self_contained(html: str) -> None:
    assert external_urls(html) == []
    assert {"script", "link", "iframe", "object", "embed"}.isdisjoint(Links(html).tags)
    text = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", html)
    assert not re.search(r"https?:|//[a-z]", text, re.I)
    assert "@import" not in html and "url(" not in html
    assert "<script" not in html.lower() and "<link" not in html.lower()
    assert html.lstrip().startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")


def test_html_has_every_question_a_chart_each_and_the_budget(report: Report, html: str) -> None:
    for q in report.survey["questions"]:
        assert q["text"] in html and f'id="q-{q["id"]}"' in html
    charts = re.findall(r'<img class="chart"[^>]*src="data:image/png;base64,([A-Za-z0-9+/=]+)"',
                        html)
    assert len(charts) == len(report.survey["questions"])
    import base64

    assert all(base64.b64decode(c)[:8] == b"\x89PNG\r\n\x1a\n" for c in charts)
    assert "Privacy budget" in html and ">5<" in html
    assert "What the interval means" in html
    from ldpsurvey.analyst.reports.model import shows_negative

    assert ("Why an estimate can be negative" in html) == shows_negative(report.questions())


def test_user_text_is_escaped_everywhere() -> None:
    rep = tricky_report(4000)
    html = render(rep, "html")
    assert "<script>" not in html and "<img src=x>" not in html
    assert "&lt;script&gt;" in html and "&lt;img src=x&gt;" in html
    assert external_urls(html) == []
    assert "img" in Links(html).tags and Links(html).tags.count("img") == 2  # the 2 charts
    md = render(rep, "md")
    assert "a\\|b" in md and "<img" not in md
    rows = list(csv.DictReader(io.StringIO(render(rep, "csv"))))
    assert {r["option"] for r in rows if r["kind"] == OPTION} >= {"a|b", "<img src=x>"}


def test_narrow_integer_range_lists_its_distribution() -> None:
    rep = tricky_report(4000)
    (dice,) = [q for q in rep.questions() if q.id == "dice"]
    assert dice.distribution_is_informative()
    text = render(rep, "table")
    assert "distribution:" in text and "too noisy" not in text


def test_negative_estimates_render_and_are_flagged() -> None:
    # A negative estimate is written into the document, so the renderer is tested directly
    # rather than through a draw that may or may not go negative.
    rep = tricky_report(500)
    doc = json.loads(json.dumps(rep.estimates))
    cat = doc["questions"][0]["categories"][3]
    cat.update(estimate=-0.05, ci_low=-0.2, ci_high=0.1, consistent=0.0)
    neg = Report(survey=rep.survey, estimates=doc, truth=rep.truth)
    html = render(neg, "html")
    assert 'class="neg">-5.0%' in html
    assert "-5.0%" in render(neg, "table")


def test_a_survey_nobody_answered_renders_in_every_format() -> None:
    survey = load_survey(SAMPLE)
    doc = {"survey": survey.id, "version": 1, "n_submissions": 0, "confidence": 0.95,
           "last_submission_hour": None,
           "questions": [mechanism_for(q).estimate(mechanism_for(q).new_aggregate()).to_dict()
                         for q in survey.questions]}
    rep = Report(survey=survey.to_dict(), estimates=doc)
    for fmt in FORMATS:
        out = render(rep, fmt)
        assert out
    assert "No reports yet" in render(rep, "html")


def test_mismatched_or_malformed_documents_are_typed_errors(report: Report) -> None:
    with pytest.raises(ReportRenderError):
        Report(survey={**report.survey, "id": "other"}, estimates=report.estimates)
    with pytest.raises(ReportRenderError):
        Report(survey=report.survey, estimates={"survey": report.survey["id"]})
    with pytest.raises(ReportRenderError):
        render(report, "pdf")


def many_options_report() -> Report:
    survey = Survey.from_dict({
        "id": "many", "title": "Many options", "version": 1,
        "questions": [{"id": "city", "text": "Which city?", "type": "categorical",
                       "epsilon": 2.0, "options": [f"city-{i:03d}" for i in range(80)]}]})
    return simulated_report(survey, 4000, seed=3)


def test_every_text_format_has_the_same_columns(report: Report) -> None:
    """Terminal, Markdown and HTML share one column model: the s.e. bound, not the variance."""
    [q, *_] = report.questions()
    headers = [c.header for c in columns(q, report.truth)]
    table = render(report, "table")
    md = render(report, "md")
    page = render(report, "html")
    for header in headers:
        assert header in table and header in md and f"<th>{header}</th>" in page
    for text in (table, md, page):
        assert "variance bound</th>" not in text and "| variance bound |" not in text


def test_table_markdown_html_and_chart_list_the_same_top_options() -> None:
    many = many_options_report()
    [q] = many.questions()
    listed, hidden = listed_options(q)
    assert len(listed) == MAX_LISTED_OPTIONS and hidden == 80 - MAX_LISTED_OPTIONS
    # the rule: no left-out option has a larger consistent share than a listed one
    left_out = [r for r in q.of_kind(OPTION) if r not in listed]
    assert min(r.consistent or 0 for r in listed) >= max(r.consistent or 0 for r in left_out)
    names = {r.label for r in listed}
    all_names = {r.label for r in q.of_kind(OPTION)}
    shown_in = {
        "table": set(re.findall(r"city-\d{3}", render(many, "table"))),
        "md": set(re.findall(r"city-\d{3}", render(many, "md"))),
        "html table": set(re.findall(r"<td>(city-\d{3})</td>", render(many, "html"))),
        "chart": {t.get_text() for t in frequency_chart(q, None).axes[0].get_yticklabels()},
    }
    for where, shown in shown_in.items():
        assert shown == names, where
    assert set(re.findall(r"city-\d{3}", render(many, "csv"))) == all_names
