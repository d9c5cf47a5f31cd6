"""The regression report's HTML page fits a phone: in real Chromium at a 390 px wide viewport
the page never scrolls sideways; the coefficient table scrolls inside its own wrapper and the
forest plot scales down (as tests/web/test_report_layout.py checks for the other reports)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from ldpsurvey.analyst.reports.regression_format import render_regression
from ldpsurvey.shared.regression import expit, fit_logistic

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
    return render_regression(doc, "html")


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
    finally:
        page.close()
