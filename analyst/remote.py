"""Analyst tools talking to a survey server over HTTP: one JSON request helper, one error type."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

from ldpsurvey.client.transport import MAX_RESPONSE_BYTES
from ldpsurvey.shared.errors import LdpSurveyError


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
        raise _refused(exc, url) from None
    except (urllib.error.URLError, OSError) as exc:
        raise RemoteError(f"cannot reach {url}: {getattr(exc, 'reason', exc)}") from None
    except ValueError as exc:
        raise RemoteError(f"{url} did not return JSON: {exc}") from None


def request_lines(url: str, *, token: str | None = None, timeout: float = 30.0,
                  max_lines: int = 50_000_000) -> Iterator[Any]:
    """GET a JSON-lines export (analyst token) and yield each line parsed, read as it streams.

    An export is as large as the survey, so there is no cap on the whole reply; a line longer
    than the reply cap, more than `max_lines` lines, or a line that is not JSON is one
    RemoteError (a hostile server cannot make this read forever or grow without bound)."""
    if not url.startswith(("http://", "https://")):
        raise RemoteError(f"server URL must start with http:// or https://: {url}")
    headers = {"Accept": "application/x-ndjson"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url, headers=headers)  # noqa: S310 (scheme checked)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310
            for count, line in enumerate(iter(
                    lambda: resp.readline(MAX_RESPONSE_BYTES + 1), b""), start=1):
                if len(line) > MAX_RESPONSE_BYTES:
                    raise RemoteError(f"{url} sent a line of more than {MAX_RESPONSE_BYTES} "
                                      "bytes; refusing it")
                if count > max_lines:
                    raise RemoteError(f"{url} sent more than {max_lines:,} lines; refusing it")
                if line.strip():
                    yield json.loads(line)
    except urllib.error.HTTPError as exc:
        raise _refused(exc, url) from None
    except (urllib.error.URLError, OSError) as exc:
        raise RemoteError(f"cannot reach {url}: {getattr(exc, 'reason', exc)}") from None
    except ValueError as exc:
        raise RemoteError(f"{url} sent a line that is not JSON: {exc}") from None


def _refused(exc: urllib.error.HTTPError, url: str) -> RemoteError:
    """A refusal as one line, quoting the server's own error message when it sent one."""
    try:
        message = json.loads(_read_capped(exc, url))["error"]["message"]
    except (ValueError, KeyError, TypeError, RemoteError):
        message = exc.reason
    return RemoteError(f"server refused ({exc.code}): {message}")


def _read_capped(resp: Any, url: str) -> bytes:
    """The body, refused past the client transport's cap (a hostile server can send forever)."""
    raw = resp.read(MAX_RESPONSE_BYTES + 1)
    if len(raw) > MAX_RESPONSE_BYTES:
        raise RemoteError(f"{url} answered more than {MAX_RESPONSE_BYTES} bytes; refusing it")
    return raw
