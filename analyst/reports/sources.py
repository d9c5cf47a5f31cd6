"""Where a report's numbers come from: a server over HTTP, or a local database read-only.

Both give the same estimate document: the HTTP endpoint and `--db` call the server's own
`aggregation.estimates`, so a report never has a second estimator.
"""

from __future__ import annotations

import sqlite3
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import sqlite_utils

from ...shared.errors import ReportRenderError
from ..remote import RemoteError, request_json
from .model import Report


def fetch_report(server_url: str, survey_id: str, token: str, confidence: float = 0.95,
                 version: int | None = None, timeout: float = 30.0) -> Report:
    """GET the estimates (analyst token) and then the same survey version (public)."""
    base = server_url.rstrip("/")
    if not base.startswith(("http://", "https://")):
        raise ReportRenderError(f"server URL must start with http:// or https://: {server_url}")
    sid = urllib.parse.quote(survey_id, safe="")
    query = {"confidence": repr(float(confidence))}
    if version is not None:
        query["version"] = str(version)
    estimates = get_json(f"{base}/api/surveys/{sid}/estimates?{urllib.parse.urlencode(query)}",
                         token, timeout)
    manifest = get_json(f"{base}/api/surveys/{sid}?version={int(estimates['version'])}", None,
                        timeout)
    return Report(survey=manifest["survey"], estimates=estimates)


def get_json(url: str, token: str | None, timeout: float) -> Any:
    """GET a JSON document; a refusal or an unreachable server is one ReportRenderError line."""
    try:
        return request_json(url, token=token, timeout=timeout)[1]
    except RemoteError as exc:
        raise ReportRenderError(exc.message) from None


def db_report(path: str | Path, survey_id: str, confidence: float = 0.95,
              version: int | None = None) -> Report:
    """The estimate document of a survey in a local database, opened read-only."""
    from ...server import aggregation, surveys

    path = Path(path)
    if not path.is_file():
        raise ReportRenderError(f"database {path} does not exist")
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise ReportRenderError(f"cannot open database {path}: {exc}") from None
    try:
        db = sqlite_utils.Database(conn)
        record = surveys.get(db, survey_id, version)
        estimates = aggregation.estimates(db, survey_id, record.version, confidence)
        return Report(survey=record.manifest["survey"], estimates=estimates)
    except sqlite3.Error as exc:
        raise ReportRenderError(f"cannot read database {path}: {exc}") from None
    finally:
        conn.close()
