"""The browser tests' deployment: a real aggregator, and a static site for exported pages."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.client.page_export import export_page
from ldpsurvey.shared.manifest import fingerprint

from support.clients import RealServer, survey_dict


@dataclass
class Deployment:
    server: RealServer
    token: str
    key: Ed25519PrivateKey
    site_origin: str  # where site_root is served: the designer's own site
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
        return f"{self.site_origin}/{survey_id}/index.html"

    def stored(self, survey_id: str) -> list[dict[str, Any]]:
        return self.server.export(survey_id, self.token)




DOCUMENT_BLOCK = re.compile(rb'(<script type="application/json" id="survey-document"[^>]*>)'
                            rb"(.*?)(</script>)", re.S)


def serve_document(page: Any, survey_id: str,
                   change: Callable[[dict[str, Any]], dict[str, Any]]) -> Callable[[], None]:
    """Make `page` get `change(document)` in place of survey `survey_id`'s document wherever
    the page reads it: at GET /api/surveys/<id> (an exported page, a later read) and in the
    page the aggregator serves at /s/<id>, which carries it (server/web_page.py). What a
    hostile or broken aggregator could serve. Returns what undoes it."""
    from ldpsurvey.server.web_page import document_block

    def api(route: Any) -> None:
        if route.request.method != "GET":
            route.continue_()
            return
        route.fulfill(json=change(route.fetch().json()))

    def html(route: Any) -> None:
        response = route.fetch()
        body = response.body()
        match = DOCUMENT_BLOCK.search(body)
        if match:
            body = body.replace(match.group(0), document_block(
                survey_id, change(json.loads(match.group(2)))))
        headers = {name: value for name, value in response.headers.items()
                   if name.lower() not in ("content-encoding", "content-length")}
        route.fulfill(status=response.status, headers=headers, body=body)

    def is_page(url: str) -> bool:
        return urlsplit(url).path.endswith(f"/s/{survey_id}")

    api_url = f"**/api/surveys/{survey_id}"
    page.route(api_url, api)
    page.route(is_page, html)

    def undo() -> None:
        page.unroute(api_url, api)
        page.unroute(is_page, html)

    return undo
