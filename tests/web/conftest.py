"""Browser fixtures: one real Chromium per test session, and client/web/ served over HTTP.

- `browser`: Debian's `chromium` (shutil.which), headless, driven by Playwright's Python
  package; never a downloaded browser. Missing chromium skips the browser tests with the
  reason, except under CI (env CI=true), where it fails.
- `web_root_url`: http://127.0.0.1:PORT/ serving client/web/ read-only (GET/HEAD only) from
  a thread; ES modules do not load from file://. It also answers `TEST_PAGE` with an empty
  page, so a test can `import()` the modules from the same origin.
- `js_page`: a fresh page on `TEST_PAGE`; `page.evaluate` can import "./js/<module>.js".
"""

from __future__ import annotations

import functools
import os
import shutil
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

WEB_ROOT = Path(__file__).resolve().parents[2] / "client" / "web"
TEST_PAGE = "__blank_test_page__.html"
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


class _ReadOnlyHandler(SimpleHTTPRequestHandler):
    extensions_map: ClassVar[dict[str, str]] = {**SimpleHTTPRequestHandler.extensions_map,
                                                ".js": "text/javascript"}

    def do_GET(self) -> None:
        if self.path.split("?")[0] == "/" + TEST_PAGE:
            body = b"<!doctype html><meta charset=utf-8><title>test</title>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

    def list_directory(self, path: Any) -> None:  # no listings
        self.send_error(404)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="session")
def web_root_url() -> Iterator[str]:
    handler = functools.partial(_ReadOnlyHandler, directory=str(WEB_ROOT))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture()
def js_page(browser: Any, web_root_url: str) -> Iterator[Any]:
    page = browser.new_page()
    try:
        page.goto(web_root_url + TEST_PAGE)
        yield page
    finally:
        page.close()
