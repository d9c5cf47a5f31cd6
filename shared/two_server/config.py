"""The `[two_server]` table of a survey and the per-question two-server keys.

A survey with `collection = "two-server"` names its two aggregators in the signed manifest:

    collection = "two-server"
    [two_server]
    leader_url = "https://leader.example"     # optional: the client's --server otherwise
    leader_hpke_key = "<base64url X25519 public key, 32 bytes>"
    helper_url = "https://helper.example"
    helper_hpke_key = "<base64url X25519 public key, 32 bytes>"
    min_batch_size = 100
    delta = 1e-6                              # δ' of the advanced composition statement

and each question its `central_epsilon` (what each server's noise alone guarantees) and an
optional `local_epsilon` (ε0: today's mechanism runs first on the device, so a colluding
leader and helper still only see an ε0-LDP report). A question without `local_epsilon` has
mechanism "none", and its `epsilon` is its central ε (the ε its guarantee is stated at).
Because the table is part of the canonical survey bytes, the designer's signature covers the
helper's URL and key: a client never encrypts to a key the signed manifest does not carry.
"""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ..errors import SurveyError
from ..question_types import QuestionType, unit_for
from ..question_types.fields import epsilon

COLLECTIONS = ("ldp", "two-server")
TWO_SERVER = "two-server"
KEY_SIZE = 32
MIN_BATCH_FLOOR = 2
MAX_BATCH_SIZE = 10_000_000
DEFAULT_DELTA = 1e-6
# Local mechanisms whose report is a single index in [0, k) (or a bool): Prio3 encodes them as
# a Count or a Histogram over the same domain; `geometric` reports an integer (clipped). A
# question type may allow others (`QuestionType.two_server_local_mechanisms`).
LOCAL_MECHANISMS = QuestionType.two_server_local_mechanisms
_B64URL = re.compile(r"^[A-Za-z0-9_-]*={0,2}$")
_KEYS = {"leader_url", "leader_hpke_key", "helper_url", "helper_hpke_key", "min_batch_size",
         "delta"}


@dataclass(frozen=True)
class TwoServerConfig:
    """The two aggregators of a two-server survey, as the designer signed them."""

    helper_url: str
    helper_hpke_key: bytes
    leader_hpke_key: bytes
    min_batch_size: int
    leader_url: str | None = None
    delta: float = DEFAULT_DELTA

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"helper_url": self.helper_url,
                             "helper_hpke_key": b64url(self.helper_hpke_key),
                             "leader_hpke_key": b64url(self.leader_hpke_key),
                             "min_batch_size": self.min_batch_size, "delta": self.delta}
        if self.leader_url is not None:
            d["leader_url"] = self.leader_url
        return d


def b64url(raw: bytes) -> str:
    """Unpadded base64url (RFC 4648 §5), the form keys take in a survey."""
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def from_b64url(text: str) -> bytes:
    """Bytes of unpadded or padded base64url text (RFC 4648 §5); ValueError if it is not.

    Strict: a character outside the alphabet, a length no encoding has, incomplete padding
    or bits set past the last byte are refused, so every byte string has one accepted text
    (its `b64url`, or that padded). The standard library's decoder skips characters outside
    the alphabet: it read "%%%" as no bytes at all (issue 32)."""
    if not isinstance(text, str) or not _B64URL.match(text):
        raise ValueError("not base64url")
    body = text.rstrip("=")
    if (body != text and len(text) % 4) or len(body) % 4 == 1:
        raise ValueError("not base64url")
    raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    if b64url(raw) != body:
        raise ValueError("not base64url (bits set past the last byte)")
    return raw


def parse_collection(data: Mapping[str, Any]) -> str:
    value = data.get("collection", "ldp")
    if value not in COLLECTIONS:
        raise SurveyError("collection", f"unknown collection {value!r}; expected "
                          f"{' or '.join(repr(c) for c in COLLECTIONS)}")
    return value


def parse_two_server(value: Any, collection: str) -> TwoServerConfig | None:
    """The `[two_server]` table: required in two-server mode, refused otherwise."""
    if collection != TWO_SERVER:
        if value is not None:
            raise SurveyError("two_server", 'only a survey with collection = "two-server" '
                              "names a helper")
        return None
    if not isinstance(value, Mapping):
        raise SurveyError("two_server", 'a collection = "two-server" survey needs a '
                          "[two_server] table with helper_url, helper_hpke_key, "
                          "leader_hpke_key and min_batch_size")
    unknown = sorted(str(k) for k in value if k not in _KEYS)
    if unknown:
        raise SurveyError(f"two_server.{unknown[0]}", "unknown key")
    helper_url = _url(value.get("helper_url"), "two_server.helper_url")
    leader_url = None
    if value.get("leader_url") is not None:
        leader_url = _url(value["leader_url"], "two_server.leader_url")
    helper_key = _key(value.get("helper_hpke_key"), "two_server.helper_hpke_key")
    leader_key = _key(value.get("leader_hpke_key"), "two_server.leader_hpke_key")
    if helper_key == leader_key:
        raise SurveyError("two_server.helper_hpke_key", "is the leader's key: the helper must "
                          "hold its own key pair, or one party could open both shares")
    size = value.get("min_batch_size")
    if isinstance(size, bool) or not isinstance(size, int) or not (
            MIN_BATCH_FLOOR <= size <= MAX_BATCH_SIZE):
        raise SurveyError("two_server.min_batch_size", f"must be an integer between "
                          f"{MIN_BATCH_FLOOR} and {MAX_BATCH_SIZE}")
    delta = value.get("delta", DEFAULT_DELTA)
    if isinstance(delta, bool) or not isinstance(delta, int | float) or not (
            math.isfinite(delta) and 0 < delta < 1):
        raise SurveyError("two_server.delta", "must be a number in (0, 1)")
    return TwoServerConfig(helper_url=helper_url, helper_hpke_key=helper_key,
                           leader_hpke_key=leader_key, min_batch_size=size,
                           leader_url=leader_url, delta=float(delta))


def question_epsilons(data: Mapping[str, Any], where: str,
                      collection: str) -> tuple[float | None, float | None]:
    """(central_epsilon, local_epsilon) of a question; both None in the LDP mode."""
    central, local = data.get("central_epsilon"), data.get("local_epsilon")
    if collection != TWO_SERVER:
        for key, value in (("central_epsilon", central), ("local_epsilon", local)):
            if value is not None:
                raise SurveyError(f"{where}.{key}", 'only a collection = "two-server" survey '
                                  "has central and local ε")
        return None, None
    if central is None:
        raise SurveyError(f"{where}.central_epsilon", "a two-server question needs the "
                          "central ε each server's noise guarantees (central_epsilon)")
    central = epsilon(central, f"{where}.central_epsilon")
    if local is not None:
        local = epsilon(local, f"{where}.local_epsilon")
    return central, local


def check_local_mechanism(mechanism: str, where: str, question_type: str,
                          not_asked: bool = False) -> None:
    """SurveyError unless `mechanism` may run on the device before a two-server upload of a
    `question_type` question: its type's unit says (its report must be one measurement)."""
    unit_for(question_type).check_two_server_local_mechanism(mechanism, where, not_asked)


def _url(value: Any, where: str) -> str:
    parts = urlsplit(value) if isinstance(value, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc or (
            parts.query or parts.fragment):
        raise SurveyError(where, "must be an http(s) URL without query or fragment")
    return value.rstrip("/")


def _key(value: Any, where: str) -> bytes:
    try:
        raw = from_b64url(value)
    except ValueError:
        raw = b""
    if len(raw) != KEY_SIZE:
        raise SurveyError(where, "must be the base64url of a 32-byte X25519 public key "
                          "(`ldpsurvey helper keys generate` writes it)")
    return raw
