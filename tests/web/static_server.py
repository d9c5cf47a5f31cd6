"""client/web/ served read-only over HTTP from a thread (ES modules do not load from file://).

Its JavaScript is served as the aggregator serves it (server/page_files.py served_bytes:
without comments and indentation), so every test that imports the page's modules here (the
shared vectors among them) runs the code respondents' browsers run.

Used by the browser test fixtures (conftest.py) and bench/bench_web.py. Only GET/HEAD, no
directory listings, on 127.0.0.1 with a free port. `TEST_PAGE` answers an empty page, so a test
can `import()` the modules from the same origin.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

from ldpsurvey.server.page_files import served_bytes

WEB_ROOT = Path(__file__).resolve().parents[2] / "client" / "web"
TEST_PAGE = "__blank_test_page__.html"


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
        path = Path(self.translate_path(self.path))
        if path.suffix == ".js" and path.is_file():
            body = served_bytes(path)  # as the aggregator serves it
            self.send_response(200)
            self.send_header("Content-Type", "text/javascript")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

    def list_directory(self, path: Any) -> None:
        self.send_error(404)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def serve_web_root(root: Path = WEB_ROOT) -> Iterator[str]:
    """Serve `root`; yields its base URL, http://127.0.0.1:PORT/."""
    handler = functools.partial(_ReadOnlyHandler, directory=str(root))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
