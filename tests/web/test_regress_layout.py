"""The regression report's HTML page fits a phone: in real Chromium at a 390 px wide viewport
the page never scrolls sideways; the coefficient table scrolls inside its own wrapper and the
forest plot scales down (as tests/web/test_report_layout.py checks for the other reports).
Issue 32: the forest plot's text is legible there (12 CSS px or more), the wide coefficient
table shows a scroll cue, and the page is titled by the survey's title with coefficients named
by question text and option label."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from ldpsurvey.analyst.reports.regression_format import render_regression
from ldpsurvey.shared.regression import expit, fit_logistic
from phone_layout import MIN_TEXT_PX, chart_text_sizes, check_scroll_cues

PHONE = {"width": 390, "height": 844}


def regression_html() -> str:
    rng = np.random.default_rng(3)
    n = 3000
    x = np.column_stack([np.ones(n), rng.integers(0, 2, (n, 4)), rng.normal(0, 1, n)])
    y = (rng.random(n) < expit(x @ np.array([-0.5, 0.4, -0.3, 0.2, 0.0, 0.1]))).astype(int)
    names = ["(intercept)", "region=a-long-region-name", "sex=male", "urban=yes",
             "degree=yes", "age"]
    fit = fit_logistic(x, names, y, np.array([[0.75, 0.25], [0.25, 0.75]]), outcome="smoker",
                       outcome_level="yes")
    doc = {"survey": "habits", "version": 1, "covariates": ["region", "sex", "urban", "degree",
                                                            "age"], **fit.to_dict()}
    return render_regression(doc, "html", SURVEY)


SURVEY = {"id": "habits", "title": "Habits and health 2026", "version": 1, "questions": [
    {"id": "smoker", "text": "Do you smoke?", "type": "binary"},
    {"id": "region", "text": "Which region do you live in?", "type": "categorical"},
    {"id": "sex", "text": "Sex", "type": "categorical"},
    {"id": "urban", "text": "Do you live in a town or city?", "type": "binary"},
    {"id": "degree", "text": "Do you hold a university degree?", "type": "binary"},
    {"id": "age", "text": "Age in years (divided by ten)", "type": "integer"}]}


def test_regression_page_fits_a_390px_phone(browser: Any, tmp_path: Path) -> None:
    path = tmp_path / "regression.html"
    path.write_text(regression_html(), encoding="utf-8")
    page = browser.new_page(viewport=PHONE)
    try:
        page.goto(path.as_uri())
        width = page.evaluate("document.scrollingElement.scrollWidth")
        assert width <= PHONE["width"], f"the page is {width} px wide"
        overflowing = page.evaluate("""() => [...document.querySelectorAll('img, table')]
            .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth
                         && !e.closest('.scroll'))
            .map(e => e.tagName)""")
        assert overflowing == []
        assert page.evaluate("document.querySelectorAll('img.chart').length") == 1
        assert page.title() == "Habits and health 2026: regression of Do you smoke?"
        assert page.locator("h1").inner_text() == "Habits and health 2026"
        assert "Which region do you live in?: a-long-region-name" in page.locator(
            "table").inner_text()
        (chart,) = chart_text_sizes(page)
        assert chart["phone"] and chart["px"] >= MIN_TEXT_PX, chart
        assert check_scroll_cues(page) == 1  # the coefficient table is wider than a phone
    finally:
        page.close()
