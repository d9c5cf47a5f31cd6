"""The browser tests' deployment: a real aggregator, and a static site for exported pages."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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


