"""Where a report's numbers come from: a server over HTTP, or a local database read-only.

Both give the same estimate document: the HTTP endpoint and `--db` call the server's own
`aggregation.estimates`, so a report never has a second estimator.
"""

from __future__ import annotations

import sqlite3
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ldpsurvey.shared.errors import ReportRenderError

from .model import Report


def fetch_report(server_url: str, survey_id: str, token: str, confidence: float = 0.95,
                 version: int | None = None, timeout: float = 30.0) -> Report:
    """GET the estimates (analyst token) and then the same survey version (public)."""
    estimates, survey = fetch_with_survey(server_url, survey_id, "estimates",
                                          {"confidence": repr(float(confidence))}, token,
                                          version, timeout)
    return Report(survey=survey, estimates=estimates)


def fetch_with_survey(server_url: str, survey_id: str, endpoint: str, params: dict[str, str],
                      token: str, version: int | None, timeout: float) -> tuple[Any, Any]:
    """(document, survey): GET /api/surveys/<id>/<endpoint> (analyst token), then the survey
    of exactly the version that document is of (public), so the two always match."""
    base = server_url.rstrip("/")
    if not base.startswith(("http://", "https://")):
        raise ReportRenderError(f"server URL must start with http:// or https://: {server_url}")
    sid = urllib.parse.quote(survey_id, safe="")
    if version is not None:
        params = {**params, "version": str(version)}
    doc = get_json(f"{base}/api/surveys/{sid}/{endpoint}?{urllib.parse.urlencode(params)}",
                   token, timeout)
    manifest = get_json(f"{base}/api/surveys/{sid}?version={int(doc['version'])}", None,
                        timeout)
    return doc, manifest["survey"]


def get_json(url: str, token: str | None, timeout: float) -> Any:
    """GET a JSON document; a refusal or an unreachable server is one ReportRenderError line."""
    from ..remote import RemoteError, request_json  # the HTTP client: not for --db (0.1 s)

    try:
        return request_json(url, token=token, timeout=timeout)[1]
    except RemoteError as exc:
        raise ReportRenderError(exc.message) from None


@contextmanager
def read_only_store(target: str | Path) -> Iterator[Any]:
    """A server database opened read-only for `--db` (a SQLite file or a postgresql:// URL),
    closed after; a database that cannot be opened or read is a one-line ReportRenderError."""
    from ldpsurvey.server.common.errors import StoreError
    from ldpsurvey.server.store import open_store

    try:
        store = open_store(target, read_only=True, migrate=False)
    except StoreError as exc:
        raise ReportRenderError(exc.message) from None
    try:
        yield store
    except sqlite3.Error as exc:
        raise ReportRenderError(f"cannot read database {target}: {exc}") from None
    finally:
        store.close()


def db_report(target: str | Path, survey_id: str, confidence: float = 0.95,
              version: int | None = None) -> Report:
    """The estimate document of a survey in a local database (opened read-only) or a
    PostgreSQL database (a postgresql:// URL)."""
    from ldpsurvey.server import aggregation, surveys

    with read_only_store(target) as store:
        record = surveys.get(store, survey_id, version)
        estimates = aggregation.estimates(store, survey_id, record.version, confidence)
        return Report(survey=record.manifest["survey"], estimates=estimates)
