"""Where a two-server report's numbers come from: the leader's collected batch over HTTP.

`POST /api/surveys/<id>/two-server/batches/<batch>/collect` (analyst token) returns the
`CollectedBatch` (a batch is collected once: asking again serves the same noisy totals), then
the survey of exactly that version is read (public) and parsed, and the estimates are computed
here by shared/two_server/estimates.py, the one two-server estimator.
"""

from __future__ import annotations

import json
import urllib.parse
from typing import Any

from ldpsurvey.shared.errors import LdpSurveyError, ReportRenderError
from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.two_server.results import CollectedBatch

from ..remote import RemoteError, request_json
from .sources import get_json
from .two_server import TwoServerReport, two_server_report


def fetch_two_server_report(server_url: str, survey_id: str, batch_id: str, token: str,
                            confidence: float = 0.95, timeout: float = 30.0) -> TwoServerReport:
    """The report of one collected batch, from the leader."""
    base = server_url.rstrip("/")
    if not base.startswith(("http://", "https://")):
        raise ReportRenderError(f"server URL must start with http:// or https://: {server_url}")
    sid = urllib.parse.quote(survey_id, safe="")
    bid = urllib.parse.quote(batch_id, safe="")
    try:
        doc = request_json(f"{base}/api/surveys/{sid}/two-server/batches/{bid}/collect",
                           body=b"{}", token=token, timeout=timeout)[1]
    except RemoteError as exc:
        raise ReportRenderError(exc.message) from None
    batch = _batch(doc)
    manifest = get_json(f"{base}/api/surveys/{sid}?version={int(batch.version)}", None, timeout)
    return report_from(manifest.get("survey"), batch, confidence)


def report_from(survey_data: Any, batch: CollectedBatch,
                confidence: float = 0.95) -> TwoServerReport:
    """Parse the survey (as signed) and estimate the batch; a mismatch is a ReportRenderError."""
    try:
        survey = Survey.from_dict(survey_data)
        return two_server_report(survey, batch, confidence)
    except ReportRenderError:
        raise
    except LdpSurveyError as exc:
        raise ReportRenderError(f"cannot report batch {batch.batch_id}: {exc.message}") from None


def _batch(doc: Any) -> CollectedBatch:
    try:
        return CollectedBatch.from_dict(doc)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ReportRenderError(f"the leader's collected batch does not parse: "
                                f"{json.dumps(str(exc))}") from None
