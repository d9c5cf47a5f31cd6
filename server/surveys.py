"""Stored survey versions: publish (verify, then store the manifest as signed), read, close,
and compile (a version's mechanisms, built once per process).

A survey is keyed by (id, version). Publishing the same id and version again with the same
signed content is idempotent; with other content it is a conflict (publish a new version).
Closing a survey closes every version stored at that time.

Building a mechanism runs its exact privacy check, so compiled surveys are cached in process,
keyed by the manifest's SHA-256: the same bytes always compile to the same mechanisms, so the
cache is right in any number of server processes.
"""

from __future__ import annotations

import base64
import json
import threading
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from ldpsurvey.shared.aggregates import Aggregate
from ldpsurvey.shared.crosstab import JointAggregate
from ldpsurvey.shared.joint_features import Encoder, encoder_for_question
from ldpsurvey.shared.manifest import verify_manifest
from ldpsurvey.shared.mechanisms import Mechanism, mechanism_for
from ldpsurvey.shared.skip_logic import public_skips
from ldpsurvey.shared.survey import CrosstabSpec, Survey, canonical_json

from . import joint_aggregates
from .common.errors import Conflict, NotFound, ValidationFailed
from .report_columns import PackedLayout
from .store import Store, SurveyRow, current_hour

# "status", "invite_only", "invite_carries" and "signed_bytes" are accepted (and not kept) so
# that a served document can be published as is.
MANIFEST_KEYS = frozenset({"survey", "signature", "public_key", "sha256", "status",
                           "invite_only", "invite_carries", "signed_bytes"})
_CACHE_SIZE = 256


@dataclass(frozen=True)
class CompiledSurvey:
    """One survey version with a mechanism per question and the ids of required questions.

    It is also the version's aggregate rules for the store: one aggregate per question, keyed
    by the question id, and one joint aggregate per declared crosstab, keyed
    "crosstab:<rows>:<cols>" (see joint_aggregates.py)."""

    survey: Survey
    sha256: str
    mechanisms: Mapping[str, Mechanism]
    required: frozenset[str]
    # Declared crosstabs by aggregate key ("crosstab:rows:cols"): spec, row and column encoders.
    crosstabs: Mapping[str, tuple[CrosstabSpec, Encoder, Encoder]] = field(default_factory=dict)
    # Questions whose condition reads disclosed answers only (shared/skip_logic.py): present
    # in a submission exactly when the condition holds on its disclosed reports.
    skips: tuple[Any, ...] = ()
    # How each submission's reports are packed beside their JSON (report_columns.PackedLayout;
    # None: no question packs).
    packed: PackedLayout | None = None

    @property
    def id(self) -> str:
        return self.survey.id

    @property
    def version(self) -> int:
        return self.survey.version

    def aggregate_keys(self) -> Sequence[str]:
        return [*self.mechanisms, *self.crosstabs]

    def marginal_deltas(self, reports: Sequence[Mapping[str, Any]]) -> dict[str, Aggregate]:
        """question id -> the aggregate of these submissions' reports of it."""
        found: dict[str, list[Any]] = {}
        for answers in reports:
            for qid, report in answers.items():
                found.setdefault(qid, []).append(report)
        return {qid: self.mechanisms[qid].aggregate_many(np.asarray(values))
                for qid, values in found.items()}

    def pack(self, reports: Mapping[str, Any]) -> bytes | None:
        """A submission's packed row, stored with its JSON (None: its reports do not pack)."""
        return None if self.packed is None else self.packed.pack(reports)

    def pack_many(self, reports: Sequence[Mapping[str, Any]]) -> list[bytes | None]:
        """`pack` of each submission, made for them at once (PackedLayout.pack_many)."""
        if self.packed is None:
            return [None] * len(reports)
        return self.packed.pack_many(reports)

    def deltas(self, reports: Sequence[Mapping[str, Any]]) -> dict[str, Aggregate]:
        return {**self.marginal_deltas(reports), **joint_aggregates.joint_deltas(self, reports)}

    def parse_aggregate(self, key: str, data: Mapping[str, Any]) -> Aggregate:
        if key in self.crosstabs:
            _, rows, cols = self.crosstabs[key]
            return JointAggregate.from_dict(data, (rows.width, cols.width))
        return self.mechanisms[key].aggregate_from_dict(data)

    def empty_aggregate(self, key: str) -> Aggregate:
        if key in self.crosstabs:
            _, rows, cols = self.crosstabs[key]
            return JointAggregate(rows.width, cols.width)
        return self.mechanisms[key].new_aggregate()


_compiled: dict[str, CompiledSurvey] = {}
_compiled_lock = threading.Lock()


def compile_survey(sha256: str, survey: Survey | Mapping[str, Any]) -> CompiledSurvey:
    """The compiled survey for a stored manifest (its survey dict, or the Survey already parsed
    from it); built on first use, then cached."""
    with _compiled_lock:
        found = _compiled.get(sha256)
    if found is not None:
        return found
    if not isinstance(survey, Survey):
        survey = Survey.from_dict(survey)
    # A two-server survey's questions run no mechanism on the server (its crosstabs are Prio3
    # histograms): nothing to build, nothing to aggregate here (server/two_server/ does).
    two_server = survey.two_server is not None
    mechanisms = {q.id: mechanism_for(q) for q in survey.questions if not two_server}
    compiled = CompiledSurvey(
        survey=survey, sha256=sha256, mechanisms=mechanisms,
        required=frozenset(q.id for q in survey.questions
                           if not q.optional and (q.condition is None or q.not_asked)),
        skips=public_skips(survey),
        packed=PackedLayout.of(survey, mechanisms),
        crosstabs={spec.key: (spec, encoder_for_question(survey.question(spec.rows),
                                                         mechanisms[spec.rows], spec.row_bins),
                              encoder_for_question(survey.question(spec.cols),
                                                   mechanisms[spec.cols], spec.col_bins))
                   for spec in survey.crosstabs if not two_server})
    with _compiled_lock:
        if len(_compiled) >= _CACHE_SIZE:
            _compiled.pop(next(iter(_compiled)))
        _compiled[sha256] = compiled
    return compiled


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

    @classmethod
    def from_row(cls, row: SurveyRow) -> SurveyRecord:
        return cls(id=row.id, version=row.version, manifest=json.loads(row.manifest),
                   sha256=row.sha256, status=row.status, created_hour=row.created_hour,
                   n_submissions=row.n_submissions,
                   last_submission_hour=row.last_submission_hour)

    def public(self, invite_only: bool, carries: Sequence[str] = ()) -> dict[str, Any]:
        """What GET /api/surveys/<id> serves: the manifest unchanged, its hash and status,
        and whether the survey takes only submissions with an invitation code.

        `signed_bytes` is base64 of the exact bytes the signature covers: a browser verifies
        those and parses only them, because re-serializing parsed JSON in JavaScript does not
        reproduce Python's canonical bytes (1.0 becomes 1, for one). `invite_only` is the
        operator's choice (`invites create`), made after signing, so it is not signed: it
        tells the page to ask for a code, and nothing else about the codes (a submission
        without one would be refused anyway, saying so). `invite_carries`, only when the
        survey's codes carry disclosed covariates, names them: the page then shows the
        respondent what their code carries (docs/sensitive-module.md).
        """
        document = {"survey": self.manifest["survey"], "signature": self.manifest["signature"],
                    "public_key": self.manifest["public_key"], "sha256": self.sha256,
                    "status": self.status, "invite_only": invite_only,
                    "signed_bytes": base64.b64encode(canonical_json(self.manifest["survey"]))
                    .decode("ascii")}
        if carries:
            document["invite_carries"] = list(carries)
        return document

    def summary(self) -> dict[str, Any]:
        return {"id": self.id, "version": self.version, "title": self.manifest["survey"]["title"],
                "sha256": self.sha256, "status": self.status, "created_hour": self.created_hour,
                "n_submissions": self.n_submissions,
                "last_submission_hour": self.last_submission_hour}

    def compiled(self) -> CompiledSurvey:
        return compile_survey(self.sha256, self.manifest["survey"])


def publish(store: Store, body: Mapping[str, Any]) -> tuple[SurveyRecord, bool]:
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
    compile_survey(signed.sha256, survey)  # mechanisms prove their ε (parsed once, above)
    row, created = store.put_survey(survey.id, survey.version, manifest_text, signed.sha256,
                                    current_hour())
    versions(store, survey.id)  # this process's ingest sees the new version at once
    if not created and row.manifest != manifest_text:
        raise Conflict(f"survey {survey.id!r} version {survey.version} already exists "
                       "with different content; publish a new version",
                       {"id": survey.id, "version": survey.version, "sha256": row.sha256})
    return SurveyRecord.from_row(row), created


def get(store: Store, survey_id: str, version: int | None = None) -> SurveyRecord:
    """A survey version (the latest when `version` is None); NotFound otherwise."""
    row = store.get_survey(survey_id, version)
    if row is None:
        what = f"survey {survey_id!r}" + ("" if version is None else f" version {version}")
        raise NotFound(f"{what} does not exist", {"id": survey_id, "version": version})
    return SurveyRecord.from_row(row)


def public_document(store: Store, survey_id: str, version: int | None = None
                    ) -> dict[str, Any]:
    """What a respondent's device reads of a survey version (GET /api/surveys/<id>; the page
    the aggregator serves carries the latest's too): NotFound for an unknown one."""
    record = get(store, survey_id, version)
    invited = store.invite_only(survey_id)
    return record.public(invited, store.invite_carried_names(survey_id) if invited else ())


def randomized_reports(record: SurveyRecord) -> CompiledSurvey:
    """The compiled survey of a version whose devices send randomized reports here; Conflict
    (409) for a two-server survey, whose server holds shares, not reports (estimates,
    crosstabs, subgroups and regressions of it come from its collected batches)."""
    compiled = record.compiled()
    if compiled.survey.two_server is not None:
        raise Conflict(f"survey {record.id!r} is collected by two servers: its estimates come "
                       f"from collected batches (/api/surveys/{record.id}/two-server/batches): "
                       f"list them with `ldpsurvey batches`, report one with `ldpsurvey "
                       f"report --batch ID`")
    return compiled


def list_all(store: Store) -> list[SurveyRecord]:
    return [SurveyRecord.from_row(r) for r in store.list_surveys()]


_versions: weakref.WeakKeyDictionary[Any, dict[str, dict[int, tuple[str, str]]]] = (
    weakref.WeakKeyDictionary())
_versions_lock = threading.Lock()


def versions(store: Store, survey_id: str, *, fresh: bool = True) -> dict[int, tuple[str, str]]:
    """version -> (sha256, status) for every stored version of a survey.

    `fresh=False` may answer from what this store object read last (the ingest path: one query
    fewer per request). That can miss what another process (or store object) stored since: a
    newer version, or a close. Ingest is safe with it because the store checks both inside its
    write transaction (IngestJob.latest, each version's status), and the caller reads again
    when a request names a version it does not know."""
    if not fresh:
        with _versions_lock:
            found = _versions.get(store, {}).get(survey_id)
        if found is not None:
            return found
    read = store.survey_versions(survey_id)
    with _versions_lock:
        known = _versions.setdefault(store, {})
        if read:
            known[survey_id] = read
        else:
            known.pop(survey_id, None)
    return read


def compiled_version(store: Store, survey_id: str, version: int,
                     sha256: str) -> CompiledSurvey:
    """The compiled survey for a stored version, reading the manifest only on a cache miss."""
    with _compiled_lock:
        found = _compiled.get(sha256)
    if found is not None:
        return found
    return get(store, survey_id, version).compiled()


def close(store: Store, survey_id: str) -> list[SurveyRecord]:
    """Close every stored version of a survey; later submissions get 409. Idempotent."""
    if store.close_survey(survey_id) == 0:
        raise NotFound(f"survey {survey_id!r} does not exist", {"id": survey_id})
    versions(store, survey_id)
    return [r for r in list_all(store) if r.id == survey_id]
