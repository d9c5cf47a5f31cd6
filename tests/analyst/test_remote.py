"""The analyst's JSON helper refuses oversized replies, as the respondent's transport does."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from ldpsurvey.analyst import remote
from ldpsurvey.analyst.remote import RemoteError, request_json
from ldpsurvey.client.transport import MAX_RESPONSE_BYTES

BODY = json.dumps({"padding": "x" * 5000}).encode()


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        status = 404 if self.path == "/refused" else 200
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def base_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_the_cap_is_the_client_transports() -> None:
    assert remote.MAX_RESPONSE_BYTES == MAX_RESPONSE_BYTES


def test_a_reply_within_the_cap_is_parsed(base_url: str) -> None:
    status, reply = request_json(base_url + "/ok")
    assert status == 200 and len(reply["padding"]) == 5000


def test_a_reply_over_the_cap_is_refused(base_url: str,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(remote, "MAX_RESPONSE_BYTES", len(BODY) - 1)
    with pytest.raises(RemoteError, match="more than"):
        request_json(base_url + "/ok")


def test_an_oversized_error_reply_still_gives_one_line(base_url: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(remote, "MAX_RESPONSE_BYTES", len(BODY) - 1)
    with pytest.raises(RemoteError, match=r"server refused \(404\)"):
        request_json(base_url + "/refused")
