"""HTTP to the survey server with urllib: JSON in and out, retries with exponential backoff.

Connection errors, timeouts, 408, 429 and 5xx answers are transient: retried up to `attempts`
times with delays base·2^i (capped), each scaled by a jitter factor in [0.5, 1] from the OS
CSPRNG so many devices do not retry in lockstep. Any other 4xx is the server's final word and
is never retried. `sleep` is injectable so tests never wait for real.
"""

from __future__ import annotations

import http.client
import json
import secrets
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

from .errors import DeliveryError

# Request Timeout and Too Many Requests: the server may well accept the same request later.
_TRANSIENT_4XX = frozenset({408, 429})
# Four times the server's default request cap (16 MiB): no manifest it accepted is larger.
MAX_RESPONSE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5              # tries in total, >= 1
    base_delay: float = 0.5        # seconds before the 2nd try; doubles each time
    max_delay: float = 30.0
    timeout: float = 10.0          # per request

    def delay(self, attempt: int) -> float:
        """Seconds to wait after failed try number `attempt` (0-based)."""
        full = min(self.max_delay, self.base_delay * 2 ** attempt)
        return full * (0.5 + secrets.randbelow(1001) / 2000)


@dataclass(frozen=True)
class Response:
    status: int
    body: Any


class Unavailable(DeliveryError):
    """The server did not answer usefully (connection error, timeout or 5xx) after retries."""

    code = "server_unavailable"


class Refused(DeliveryError):
    """The server answered 4xx: it will not accept this request as is."""

    code = "refused"

    def __init__(self, status: int, body: Any, what: str) -> None:
        error = body.get("error") if isinstance(body, dict) else None
        error = error if isinstance(error, dict) else {}
        self.status = status
        self.error_code = str(error.get("code", "")) or None
        detail = error.get("message") or (body if isinstance(body, str) else "")
        super().__init__(f"{what}: the server refused it with HTTP {status}"
                         + (f" ({self.error_code})" if self.error_code else "")
                         + (f": {detail}" if detail else ""),
                         {"status": status, "error": error or body})


class Transport:
    """JSON requests to one server."""

    def __init__(self, server_url: str, policy: RetryPolicy | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        if urlsplit(server_url).scheme not in ("http", "https"):
            raise DeliveryError(f"{server_url!r} is not an http(s) server URL")
        self.server_url = server_url.rstrip("/")
        self.policy = policy or RetryPolicy()
        self.sleep = sleep

    def survey_path(self, survey_id: str, *rest: str) -> str:
        return "/".join(["/api/surveys", quote(survey_id, safe=""), *rest])

    def request(self, method: str, path: str, body: Any = None, what: str = "request") -> Response:
        """A 2xx response, after retrying transient failures; Refused or Unavailable otherwise."""
        last = ""
        for attempt in range(max(1, self.policy.attempts)):
            if attempt:
                self.sleep(self.policy.delay(attempt - 1))
            try:
                response = self._once(method, path, body)
            except (OSError, http.client.HTTPException) as exc:  # URLError is an OSError
                last = _describe(exc)
                continue
            if 200 <= response.status < 300:
                return response
            if 400 <= response.status < 500 and response.status not in _TRANSIENT_4XX:
                raise Refused(response.status, response.body, what)
            last = f"HTTP {response.status}"
        tries = self.policy.attempts
        raise Unavailable(f"{what}: {self.server_url} is unavailable after {tries} "
                          f"attempt{'' if tries == 1 else 's'} ({last})",
                          {"attempts": self.policy.attempts, "last_error": last})

    def _once(self, method: str, path: str, body: Any) -> Response:
        data = None
        headers = {"Accept": "application/json"}
        if body is not None:
            data = json.dumps(body, allow_nan=False).encode()
            headers["Content-Type"] = "application/json"
        # The scheme is checked to be http(s) in __init__.
        req = urllib.request.Request(self.server_url + path, data=data,  # noqa: S310
                                     method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.policy.timeout) as resp:  # noqa: S310
                return Response(resp.status, _json(_read(resp)))
        except urllib.error.HTTPError as exc:
            with exc:
                return Response(exc.code, _json(_read(exc)))


def _json(raw: bytes) -> Any:
    """The body as JSON, or (a prefix of) its text: a hostile body must not crash the client."""
    try:
        return json.loads(raw) if raw else None
    except (ValueError, RecursionError):  # RecursionError: absurdly deep nesting
        return raw[:200].decode("utf-8", "replace")


def _read(resp: Any) -> bytes:
    raw = resp.read(MAX_RESPONSE_BYTES + 1)
    if len(raw) > MAX_RESPONSE_BYTES:
        raise DeliveryError(f"the server's response is larger than {MAX_RESPONSE_BYTES} bytes; "
                            f"refusing to read it")
    return raw


def _describe(exc: BaseException) -> str:
    reason = getattr(exc, "reason", None)
    return f"{type(exc).__name__}: {reason if reason is not None else exc}"
