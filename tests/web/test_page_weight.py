"""What the respondent page costs to load (issue 32): no failed request (not even the browser's
own favicon request), the bytes a single-server survey's page loads within the budget raw and
gzipped, served compressed by the aggregator, and the two-server and location modules loaded
only for surveys that use them (dynamic import())."""

from __future__ import annotations

from typing import Any

READY = "body[data-state=ready]"


def console_errors(page: Any) -> list[str]:
    """Every console error of `page` from now on, with the address it concerns."""
    errors: list[str] = []
    page.on("console", lambda m: errors.append(f"{m.text} ({m.location.get('url')})")
            if m.type == "error" else None)
    return errors


def test_no_request_of_the_page_fails_not_even_the_favicon(deployment, page):
    """Chromium asks every page for /favicon.ico, and logged the aggregator's 404 for it on
    every page; the page now names an inline icon, so nothing is asked and nothing logged."""
    errors = console_errors(page)
    sid = deployment.new_survey()["id"]
    page.goto(deployment.page_url(sid))
    page.wait_for_selector(READY)
    page.wait_for_function("document.readyState === 'complete'")
    assert page.evaluate("document.querySelector('link[rel=icon]')?.href ?? ''").startswith(
        "data:image/svg+xml,")
    assert errors == []
