"""Helpers for the browser tests: a static site for exported pages and a deployment of both."""

from __future__ import annotations

import functools
import itertools
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.client.page_export import export_page
from ldpsurvey.shared.manifest import fingerprint

from support.clients import RealServer, survey_dict


class StaticSite:
    """A loopback static file server: the designer's own site hosting exported pages."""

    def __init__(self, root: Path, port: int) -> None:
        handler = functools.partial(QuietFiles, directory=str(root))
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.origin = f"http://127.0.0.1:{port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,),
                                       daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class QuietFiles(SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


@dataclass
class Deployment:
    server: RealServer
    token: str
    key: Ed25519PrivateKey
    site: StaticSite
    site_root: Path
    ids: Iterator[int] = field(default_factory=itertools.count)

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.key.public_key())

    def new_survey(self, **changes: Any) -> dict[str, Any]:
        """survey_dict() under a fresh id, published signed (so tests never share a survey)."""
        data = survey_dict(survey_id=f"web-{next(self.ids)}", **changes)
        self.server.publish(data, self.key, self.token)
        return data

    def page_url(self, survey_id: str) -> str:
        return f"{self.server.url}/s/{survey_id}"

    def export(self, survey_id: str) -> str:
        """Export the page for this survey onto the static site; its URL there."""
        export_page(survey_id, self.server.url, self.fingerprint, self.site_root / survey_id)
        return f"{self.site.origin}/{survey_id}/index.html"

    def stored(self, survey_id: str) -> list[dict[str, Any]]:
        return self.server.export(survey_id, self.token)


