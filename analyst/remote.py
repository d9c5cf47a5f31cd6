"""Analyst tools talking to a survey server over HTTP: one JSON request helper, one error type."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from ..client.transport import MAX_RESPONSE_BYTES
from ..shared.errors import LdpSurveyError


class RemoteError(LdpSurveyError):
    """The server refused a request, or could not be reached, or did not answer JSON."""

    code = "remote_error"


def request_json(url: str, *, body: bytes | None = None, token: str | None = None,
                 timeout: float = 30.0) -> tuple[int, Any]:
    """GET (or POST `body`) JSON with an optional bearer token: (status, parsed reply).

    A refusal, an unreachable server or a reply that is not JSON is one RemoteError line,
    quoting the server's own error message when it sent one.
    """
    if not url.startswith(("http://", "https://")):
        raise RemoteError(f"server URL must start with http:// or https://: {url}")
    headers = {"Accept": "application/json"}
    if body is not None:
        headers["Content-Type"] = "application/json"
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url, data=body, headers=headers,  # noqa: S310 (scheme checked)
                                 method="GET" if body is None else "POST")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310
            return resp.status, json.loads(_read_capped(resp, url) or b"{}")
    except urllib.error.HTTPError as exc:
        try:
            message = json.loads(_read_capped(exc, url))["error"]["message"]
        except (ValueError, KeyError, TypeError, RemoteError):
            message = exc.reason
        raise RemoteError(f"server refused ({exc.code}): {message}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise RemoteError(f"cannot reach {url}: {getattr(exc, 'reason', exc)}") from None
    except ValueError as exc:
        raise RemoteError(f"{url} did not return JSON: {exc}") from None


def _read_capped(resp: Any, url: str) -> bytes:
    """The body, refused past the client transport's cap (a hostile server can send forever)."""
    raw = resp.read(MAX_RESPONSE_BYTES + 1)
    if len(raw) > MAX_RESPONSE_BYTES:
        raise RemoteError(f"{url} answered more than {MAX_RESPONSE_BYTES} bytes; refusing it")
    return raw
