"""The HTML reports fit a phone: in real Chromium at a 390 px wide viewport the page never
scrolls sideways (document.scrollingElement.scrollWidth <= 390); wide tables scroll inside
their own wrapper and charts scale down. Both the single-question report and the crosstab.

Issue 32: at phone width chart text was ~6 px (a 9-inch drawing scaled into the column) and
tables scrolled sideways with no cue. At 360 and 390 px every chart's smallest text is shown at
12 CSS px or more (the phone drawing of a <picture>), and every table that scrolls shows a
shadow at the edge it can scroll toward (phone_layout.py says how both are measured)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ldpsurvey.analyst.reports.crosstab_view import CrosstabReport, render_crosstab
from ldpsurvey.analyst.reports.model import render
from ldpsurvey.analyst.reports.simulated import simulated_report
from ldpsurvey.shared.crosstab import estimate_crosstab, gram
from ldpsurvey.shared.joint_features import encoder_for_question
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import load_survey
from phone_layout import MIN_TEXT_PX, chart_text_sizes, check_scroll_cues

SAMPLE = Path(__file__).parents[2] / "shared" / "samples" / "sensitive.toml"
PHONE = {"width": 390, "height": 844}
SMALL_PHONE = {"width": 360, "height": 740}


def crosstab_html(rows: str, cols: str, n: int, bins: tuple[int, ...] | None) -> str:
    survey = load_survey(SAMPLE)
    q1, q2 = survey.question(rows), survey.question(cols)
    m1, m2 = mechanism_for(q1), mechanism_for(q2)
    e1, e2 = encoder_for_question(q1, m1, None), encoder_for_question(q2, m2, bins)
    rng = np.random.default_rng(1)
    g = gram(e1, e2, m1.perturb_many(rng.integers(0, m1.k, n), rng),
             m2.perturb_many(rng.integers(0, m2.k, n), rng))
    doc = {"survey": survey.id, "version": survey.version, "n_submissions": n,
           **estimate_crosstab(e1, e2, g).to_dict()}
    return render_crosstab(CrosstabReport(doc, survey.to_dict()), "html")


REPORTS = {
    "estimates": lambda: render(simulated_report(load_survey(SAMPLE), 5000, seed=2), "html"),
    "crosstab": lambda: crosstab_html("cannabis_frequency", "drinks_last_week", 5000,
                                      (5, 10, 15, 20)),
    "crosstab-small-n": lambda: crosstab_html("rx_misuse", "cannabis_frequency", 2, None),
}


@pytest.mark.parametrize("name", sorted(REPORTS))
def test_report_fits_a_390px_phone(browser: Any, tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.html"
    path.write_text(REPORTS[name](), encoding="utf-8")
    page = browser.new_page(viewport=PHONE)
    try:
        page.goto(path.as_uri())
        width = page.evaluate("document.scrollingElement.scrollWidth")
        assert width <= PHONE["width"], f"{name}: the page is {width} px wide"
        # every chart is scaled into the page, and tables scroll inside their wrapper
        overflowing = page.evaluate("""() => [...document.querySelectorAll('img, table')]
            .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth
                         && !e.closest('.scroll'))
            .map(e => e.tagName)""")
        assert overflowing == []
        assert page.evaluate("document.querySelectorAll('img.chart').length") >= 1
    finally:
        page.close()


@pytest.mark.parametrize("viewport", [PHONE, SMALL_PHONE], ids=["390px", "360px"])
@pytest.mark.parametrize("name", sorted(REPORTS))
def test_chart_text_is_legible_at_phone_width(browser: Any, tmp_path: Path, name: str,
                                              viewport: dict[str, int]) -> None:
    path = tmp_path / f"{name}.html"
    path.write_text(REPORTS[name](), encoding="utf-8")
    page = browser.new_page(viewport=viewport)
    try:
        page.goto(path.as_uri())
        page.wait_for_load_state("load")
        sizes = chart_text_sizes(page)
        assert sizes, "the report has charts"
        small = [s for s in sizes if not s["px"] >= MIN_TEXT_PX]
        assert small == [], f"{name}: chart text below 12 px at {viewport['width']} px"
        assert all(s["phone"] for s in sizes), "the phone drawing is the one shown"
    finally:
        page.close()


@pytest.mark.parametrize("name", sorted(REPORTS))
def test_tables_that_scroll_sideways_show_a_cue(browser: Any, tmp_path: Path,
                                                name: str) -> None:
    path = tmp_path / f"{name}.html"
    path.write_text(REPORTS[name](), encoding="utf-8")
    page = browser.new_page(viewport=SMALL_PHONE)
    try:
        page.goto(path.as_uri())
        overflowing = check_scroll_cues(page)
        if name == "crosstab":  # its tables of 5 x 5 cells are wider than a phone
            assert overflowing >= 1
    finally:
        page.close()
