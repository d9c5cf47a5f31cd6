"""Stored survey versions: publish (verify, then store the manifest as signed), read, close.

A survey is keyed by (id, version). Publishing the same id and version again with the same
signed content is idempotent; with other content it is a conflict (publish a new version).
Closing a survey closes every version stored at that time.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import sqlite_utils

from ..shared.manifest import verify_manifest
from ..shared.survey import canonical_json
from .compiled import CompiledSurvey, compile_survey
from .crosstabs import empty_rows
from .db import transaction
from .errors import Conflict, NotFound, ValidationFailed
from .hours import current_hour

# "status" and "signed_bytes" are accepted so that a served document can be published as is.
MANIFEST_KEYS = frozenset({"survey", "signature", "public_key", "sha256", "status",
                           "signed_bytes"})


@dataclass(frozen=True)
class SurveyRecord:
    """One stored survey version and its submission counters."""

    id: str
    version: int
    manifest: Mapping[str, Any]
    sha256: str
    status: str
    created_hour: str
    n_submissions: int
    last_submission_hour: str | None

    def public(self) -> dict[str, Any]:
        """What GET /api/surveys/<id> serves: the manifest unchanged, its hash and status.

        `signed_bytes` is base64 of the exact bytes the signature covers: a browser verifies
        those and parses only them, because re-serializing parsed JSON in JavaScript does not
        reproduce Python's canonical bytes (1.0 becomes 1, for one).
        """
        return {"survey": self.manifest["survey"], "signature": self.manifest["signature"],
                "public_key": self.manifest["public_key"], "sha256": self.sha256,
                "status": self.status,
                "signed_bytes": base64.b64encode(canonical_json(self.manifest["survey"]))
                .decode("ascii")}

    def summary(self) -> dict[str, Any]:
        return {"id": self.id, "version": self.version, "title": self.manifest["survey"]["title"],
                "sha256": self.sha256, "status": self.status, "created_hour": self.created_hour,
                "n_submissions": self.n_submissions,
                "last_submission_hour": self.last_submission_hour}

    def compiled(self) -> CompiledSurvey:
        return compile_survey(self.sha256, self.manifest["survey"])


_SELECT = ("SELECT id, version, manifest, sha256, status, created_hour, n_submissions, "
           "last_submission_hour FROM surveys ")


def _record(row: tuple) -> SurveyRecord:
    return SurveyRecord(id=row[0], version=row[1], manifest=json.loads(row[2]), sha256=row[3],
                        status=row[4], created_hour=row[5], n_submissions=row[6],
                        last_submission_hour=row[7])


def publish(db: sqlite_utils.Database, body: Mapping[str, Any]) -> tuple[SurveyRecord, bool]:
    """Verify a signed manifest and store it; returns (record, created?)."""
    unknown = sorted(str(k) for k in body if k not in MANIFEST_KEYS)
    if unknown:
        raise ValidationFailed(f"unknown key {unknown[0]!r} in the manifest",
                               {"field": unknown[0]})
    signed = verify_manifest(body)  # ManifestError (422) when unsigned or badly signed
    given_bytes = body.get("signed_bytes")
    if given_bytes is not None and given_bytes != base64.b64encode(
            signed.survey.canonical_bytes()).decode("ascii"):
        raise ValidationFailed("signed_bytes is not base64 of the survey's canonical bytes",
                               {"field": "signed_bytes"})
    given_sha = body.get("sha256")
    if given_sha is not None and given_sha != signed.sha256:
        raise ValidationFailed("sha256 does not match the survey's canonical bytes",
                               {"field": "sha256", "expected": signed.sha256})
    survey = signed.survey
    manifest_text = canonical_json({"survey": survey.to_dict(), "signature": signed.signature,
                                    "public_key": signed.public_key}).decode()
    compiled = compile_survey(signed.sha256, survey.to_dict())  # mechanisms prove their ε
    with transaction(db) as conn:
        row = conn.execute(_SELECT + "WHERE id = ? AND version = ?",
                           (survey.id, survey.version)).fetchone()
        if row is not None:
            existing = _record(row)
            if row[2] != manifest_text:
                raise Conflict(f"survey {survey.id!r} version {survey.version} already exists "
                               "with different content; publish a new version",
                               {"id": survey.id, "version": survey.version,
                                "sha256": existing.sha256})
            return existing, False
        hour = current_hour()
        conn.execute("INSERT INTO surveys (id, version, manifest, sha256, status, created_hour, "
                     "n_submissions) VALUES (?, ?, ?, ?, 'open', ?, 0)",
                     (survey.id, survey.version, manifest_text, signed.sha256, hour))
        conn.executemany(
            "INSERT INTO aggregates (survey_id, version, question_id, aggregate) "
            "VALUES (?, ?, ?, ?)",
            [(survey.id, survey.version, qid, json.dumps(mech.new_aggregate().to_dict()))
             for qid, mech in compiled.mechanisms.items()]
            + [(survey.id, survey.version, key, text) for key, text in empty_rows(compiled)])
    return get(db, survey.id, survey.version), True


def get(db: sqlite_utils.Database, survey_id: str, version: int | None = None) -> SurveyRecord:
    """A survey version (the latest when `version` is None); NotFound otherwise."""
    if version is None:
        row = db.execute(_SELECT + "WHERE id = ? "
                         "ORDER BY version DESC LIMIT 1", (survey_id,)).fetchone()
    else:
        row = db.execute(_SELECT + "WHERE id = ? AND version = ?",
                         (survey_id, version)).fetchone()
    if row is None:
        what = f"survey {survey_id!r}" + ("" if version is None else f" version {version}")
        raise NotFound(f"{what} does not exist", {"id": survey_id, "version": version})
    return _record(row)


def list_all(db: sqlite_utils.Database) -> list[SurveyRecord]:
    rows = db.execute(_SELECT + "ORDER BY id, version").fetchall()
    return [_record(r) for r in rows]


def versions(db: sqlite_utils.Database, survey_id: str) -> dict[int, tuple[str, str]]:
    """version -> (sha256, status) for every stored version of a survey."""
    rows = db.execute("SELECT version, sha256, status FROM surveys WHERE id = ?",
                      (survey_id,)).fetchall()
    return {r[0]: (r[1], r[2]) for r in rows}


def compiled_version(db: sqlite_utils.Database, survey_id: str, version: int,
                     sha256: str) -> CompiledSurvey:
    """The compiled survey for a stored version, reading the manifest only on a cache miss."""
    from .compiled import cached

    found = cached(sha256)
    if found is not None:
        return found
    return get(db, survey_id, version).compiled()


def close(db: sqlite_utils.Database, survey_id: str) -> list[SurveyRecord]:
    """Close every stored version of a survey; later submissions get 409. Idempotent."""
    with transaction(db) as conn:
        cur = conn.execute("UPDATE surveys SET status = 'closed' WHERE id = ?", (survey_id,))
        if cur.rowcount == 0:
            raise NotFound(f"survey {survey_id!r} does not exist", {"id": survey_id})
    return [r for r in list_all(db) if r.id == survey_id]
