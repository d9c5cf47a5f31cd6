"""A two-server upload as the leader receives it, and a server opening its sealed half.

Wire body (JSON, POST /api/surveys/<id>/two-server/uploads):
    {"submission_id": "<UUID form of the 16-byte report id>", "version": 3,
     "public_shares": {key: base64url}, "leader_share": base64url, "helper_share": base64url}
The report id doubles as the Prio3 nonce of every key of the report. Sealed blobs open to
canonical JSON {key: base64url(input share)} with the HPKE info of that role.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import LdpSurveyError
from ..survey import MAX_VERSION
from . import hpke
from .config import b64url as b64
from .config import from_b64url

MAX_SEALED = 1 << 20
_KEYS = {"submission_id", "version", "public_shares", "leader_share", "helper_share"}


class UploadError(LdpSurveyError):
    """An upload is malformed (shape, encoding, keys of another survey)."""

    code = "invalid_upload"


@dataclass(frozen=True)
class Upload:
    report_id: bytes
    version: int
    public_shares: Mapping[str, bytes]
    leader_share: bytes
    helper_share: bytes

    @property
    def submission_id(self) -> str:
        return str(uuid.UUID(bytes=self.report_id))

    def to_dict(self) -> dict[str, Any]:
        return {"submission_id": self.submission_id, "version": self.version,
                "public_shares": {k: b64(v) for k, v in self.public_shares.items()},
                "leader_share": b64(self.leader_share), "helper_share": b64(self.helper_share)}


def report_id_of(submission_id: Any) -> bytes:
    try:
        parsed = uuid.UUID(submission_id) if isinstance(submission_id, str) else None
    except ValueError:
        parsed = None
    if parsed is None or str(parsed) != submission_id:
        raise UploadError("submission_id must be a lowercase UUID string",
                          {"field": "submission_id"})
    return parsed.bytes


def parse_upload(body: Any, keys: set[str]) -> Upload:
    """An Upload, or UploadError naming what is wrong; `keys` are the survey's keys."""
    if not isinstance(body, Mapping):
        raise UploadError("an upload is a JSON object")
    unknown = sorted(str(k) for k in body if k not in _KEYS)
    if unknown:
        raise UploadError(f"unknown key {unknown[0]!r} in the upload", {"field": unknown[0]})
    report_id = report_id_of(body.get("submission_id"))
    version = body.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or not (
            1 <= version <= MAX_VERSION):
        raise UploadError(f"version must be an integer between 1 and {MAX_VERSION}",
                          {"field": "version"})
    public = body.get("public_shares")
    if not isinstance(public, Mapping) or not public:
        raise UploadError("public_shares must be a non-empty object", {"field": "public_shares"})
    extra = sorted(str(k) for k in public if k not in keys)
    if extra:
        raise UploadError(f"public_shares has {extra[0]!r}, not a question or crosstab of this "
                          f"survey", {"field": "public_shares"})
    shares = {str(k): _bytes(v, f"public_shares.{k}") for k, v in public.items()}
    return Upload(report_id, version, shares, _bytes(body.get("leader_share"), "leader_share"),
                  _bytes(body.get("helper_share"), "helper_share"))


def _bytes(value: Any, where: str) -> bytes:
    try:
        raw = from_b64url(value)
    except ValueError:
        raise UploadError(f"{where} must be base64url", {"field": where}) from None
    if len(raw) > MAX_SEALED:
        raise UploadError(f"{where} is larger than {MAX_SEALED} bytes", {"field": where})
    return raw


def open_half(sealed: bytes, private_key: Any, survey_id: str, version: int, report_id: bytes,
              role: str, public_keys: set[str]) -> dict[str, bytes]:
    """A server's sealed half opened to {key: input share}; HpkeError/UploadError if not."""
    plain = hpke.open_sealed(private_key, sealed, hpke.info(survey_id, version, report_id, role))
    try:
        data = json.loads(plain)
    except ValueError:
        raise UploadError("the sealed share is not JSON") from None
    if not isinstance(data, dict) or set(data) != public_keys:
        raise UploadError("the sealed share's keys differ from the public shares' keys")
    return {str(k): _bytes(v, f"{role}_share.{k}") for k, v in data.items()}
