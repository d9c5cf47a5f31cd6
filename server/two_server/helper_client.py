"""The leader's HTTP client for the helper's API (urllib: no extra dependency)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import quote

from ..common.two_server.errors import HelperRefused, HelperUnavailable

TIMEOUT_S = 120.0


def post(helper_url: str, path: str, body: Any, token: str | None = None,
         timeout: float = TIMEOUT_S) -> dict[str, Any]:
    """POST JSON to the helper (with the helper token, if the leader has one); HelperUnavailable
    (no answer, 5xx) or HelperRefused (4xx)."""
    url = helper_url.rstrip("/") + path
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",  # noqa: S310
                                     headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        try:
            error = json.loads(exc.read()).get("error", {})
        except (ValueError, AttributeError):
            error = {}
        message = error.get("message") or f"HTTP {exc.code}"
        if exc.code >= 500:
            raise HelperUnavailable(f"the helper at {helper_url} failed: {message}") from None
        raise HelperRefused(f"the helper refused: {message}",
                            {"helper_code": error.get("code"), "status": exc.code}) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise HelperUnavailable(f"the helper at {helper_url} is unreachable ({exc}); the "
                                "work stays pending and resumes on the next run") from None


def job_path(survey_id: str, version: int, batch_id: str) -> str:
    return f"/helper/surveys/{quote(survey_id, safe='')}/versions/{version}/jobs/{batch_id}"


def collect_path(survey_id: str, version: int, batch_id: str) -> str:
    return (f"/helper/surveys/{quote(survey_id, safe='')}/versions/{version}/batches/"
            f"{batch_id}/collect")
