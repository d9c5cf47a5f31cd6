"""Browser fixtures: one real Chromium per test session, and client/web/ served over HTTP.

- `browser`: Debian's `chromium` (shutil.which), headless, driven by Playwright's Python
  package; never a downloaded browser. Missing chromium skips the browser tests with the
  reason, except under CI (env CI=true), where it fails.
- `web_root_url`: http://127.0.0.1:PORT/ serving client/web/ read-only (static_server.py).
- `js_page`: one page per test module on an empty same-origin page, for
  `page.evaluate` with `await import(web_root_url + "js/<module>.js")`. Tests must not
  navigate it away; open your own `browser.new_page()` for that.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest
from static_server import TEST_PAGE, serve_web_root

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def _missing(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: the browser tests must run)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    executable = shutil.which("chromium")
    if executable is None:
        _missing("no `chromium` on PATH (Debian: apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("the `playwright` Python package is not installed (test extra)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, headless=True,
                                              args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="session")
def web_root_url() -> Iterator[str]:
    with serve_web_root() as url:
        yield url


@pytest.fixture(scope="module")
def js_page(browser: Any, web_root_url: str) -> Iterator[Any]:
    page = browser.new_page()
    try:
        page.goto(web_root_url + TEST_PAGE)
        yield page
    finally:
        page.close()
