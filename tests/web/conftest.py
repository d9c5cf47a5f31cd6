"""The browser for the web tests: Debian's chromium driven by Playwright, one per session.

Never a browser download: Playwright launches the system binary (`shutil.which("chromium")`).
Outside CI the tests skip with the reason when chromium or Playwright is missing; under CI=true
they fail instead, because CI must run them for real.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from support.clients import RealServer, free_port
from support.web import Deployment, StaticSite

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def missing(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: the browser tests must run)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("Playwright is not installed (pip install -e '.[test]')")
    executable = shutil.which("chromium")
    if executable is None:
        missing("Debian's chromium is not installed (apt-get install chromium)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, headless=True,
                                              args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


# --- a deployment: a real aggregator and a separate static site for exported pages ----------


@pytest.fixture(scope="session")
def deployment(tmp_path_factory: pytest.TempPathFactory, browser: Any) -> Iterator[Deployment]:
    root = tmp_path_factory.mktemp("web")
    site_root = root / "site"
    site_root.mkdir()
    site = StaticSite(site_root, free_port())
    server = RealServer(root / "server.db", extra_args=("--allow-origin", site.origin))
    server.start()
    try:
        yield Deployment(server=server, token=server.token(), key=Ed25519PrivateKey.generate(),
                         site=site, site_root=site_root)
    finally:
        server.stop()
        site.close()


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
    tab.set_default_timeout(10_000)  # ms; every wait here is for a local server
    tab.problems = []
    tab.on("pageerror", lambda error: tab.problems.append(f"pageerror: {error}"))
    tab.on("console", lambda message: tab.problems.append(message.text)
           if "Content Security Policy" in message.text else None)
    return tab
