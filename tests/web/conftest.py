"""Browser fixtures: one real Chromium per test session, and client/web/ served over HTTP.

- `browser`: Debian's `chromium` (shutil.which), headless, driven by Playwright's Python
  package; never a downloaded browser. Missing chromium skips the browser tests with the
  reason, except under CI (env CI=true), where it fails.
- `web_root_url`: http://127.0.0.1:PORT/ serving client/web/ read-only (static_server.py).
- `js_page`: one page per test module on an empty same-origin page, for
  `page.evaluate` with `await import(web_root_url + "js/<module>.js")`, with every optional
  module (location, two-server: js/optional.js) already loaded. Tests must not navigate it
  away; open your own `browser.new_page()` for that.
- `deployment`: a real `ldpsurvey serve` (allowing CORS from a second loopback origin, the
  designer's "own site" where exported pages are hosted); `context` and `page`: a fresh
  browser profile per test (its own IndexedDB) and a tab that records script errors and CSP
  violations.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from static_server import TEST_PAGE, serve_web_root
from support.clients import RealServer
from support.timeouts import TEST_TIMEOUT
from support.web import Deployment

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
        page.evaluate("async (root) => (await import(root + 'js/optional.js')).loadAll()",
                      web_root_url)
        yield page
    finally:
        page.close()


# --- a deployment: a real aggregator and a separate static site for exported pages ----------


@pytest.fixture(scope="session")
def deployment(tmp_path_factory: pytest.TempPathFactory, browser: Any) -> Iterator[Deployment]:
    root = tmp_path_factory.mktemp("web")
    site_root = root / "site"
    site_root.mkdir()
    with serve_web_root(site_root) as site_url:
        site_origin = site_url.rstrip("/")
        server = RealServer(root / "server.db", extra_args=("--allow-origin", site_origin))
        server.start()
        try:
            yield Deployment(server=server, token=server.token(),
                             key=Ed25519PrivateKey.generate(), site_origin=site_origin,
                             site_root=site_root)
        finally:
            server.stop()


@pytest.fixture()
def context(browser: Any) -> Iterator[Any]:
    """A fresh browser profile per test: its own IndexedDB (ledger, outbox, pins)."""
    ctx = browser.new_context()
    try:
        yield ctx
    finally:
        ctx.close()


@pytest.fixture()
def page(context: Any) -> Any:
    """A page that records script errors and CSP violations in `page.problems`."""
    tab = context.new_page()
    tab.set_default_timeout(TEST_TIMEOUT * 1000)  # ms; generous for a loaded machine
    tab.problems = []
    tab.on("pageerror", lambda error: tab.problems.append(f"pageerror: {error}"))
    tab.on("console", lambda message: tab.problems.append(message.text)
           if "Content Security Policy" in message.text else None)
    return tab
