"""What a design-based analysis reads: every submission of one survey version with its design.

A design-based estimate weights each respondent, so it needs the stored reports one submission
at a time (not the aggregates) and each submission's design. Both come from one of two sources,
with the same result:

- `--db` (`DbSource`): the server database, read-only: the stored submissions and the designs
  joined to them through their invitation codes (`Store.invite_designs`).
- `--server` (`RemoteSource`): the analyst API: GET .../submissions.jsonl and
  GET .../designs.jsonl (analyst token), read as they stream.

The design is joined one of two ways (`join_invitations`, `join_frame`): from the invitation
codes (`invites create --design`), or from a frame file by the answer to a disclosed key
question (`--frame FILE --key QUESTION`). Any submission without a design is refused with the
count and the reason: a design-based estimate needs every respondent's design.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import orjson
from ldpsurvey.shared.design_frame import Frame
from ldpsurvey.shared.errors import AnalysisError

PAGE = 5000  # submissions per read of the database


@dataclass(frozen=True)
class SurveyVersion:
    """The survey version analysed: its id, version, manifest hash, survey dict and the
    compiled mechanisms (server/surveys.py `CompiledSurvey`)."""

    id: str
    version: int
    sha256: str
    survey: Mapping[str, Any]
    compiled: Any


@dataclass(frozen=True, eq=False)
class Respondents:
    """Every stored submission of one survey version, in arrival order: ids and reports, as
    rows (`answers`, one mapping per submission) or as columns (`from_columns`: per question
    which submissions answered and their reports as an array, read from the database in one
    pass).

    `validated`: the reports were checked by the server when stored (read from its database);
    reports that came over HTTP are checked again by their mechanisms before use."""

    ids: Sequence[str]
    answers: Sequence[Mapping[str, Any]] | None
    validated: bool = False
    _columns: dict[str, tuple[np.ndarray, Any]] = field(default_factory=dict, repr=False)

    @classmethod
    def from_columns(cls, ids: Sequence[str],
                     columns: Mapping[str, tuple[np.ndarray, np.ndarray]]) -> Respondents:
        """Respondents read column by column from the server's database (checked at ingest)."""
        return cls(ids, None, validated=True, _columns=dict(columns))

    @property
    def n(self) -> int:
        return len(self.ids)

    def column(self, qid: str) -> tuple[np.ndarray, Any]:
        """(present (n,) bool, the reports of those who answered, in order); read once."""
        found = self._columns.get(qid)
        if found is None:
            if self.answers is None:  # read by columns: a question of another version
                return np.zeros(self.n, dtype=bool), np.zeros(0, dtype=np.int64)
            present = np.fromiter((qid in a for a in self.answers), dtype=bool, count=self.n)
            found = self._columns[qid] = (present, [a[qid] for a in self.answers if qid in a])
        return found

    def reports(self, qid: str, mechanism: Any) -> tuple[np.ndarray, np.ndarray]:
        """(present, the reports of those who answered as an array: (a,) or (a, width)),
        checked by the mechanism unless the server checked them when it stored them."""
        present, reports = self.column(qid)
        if not self.validated:
            reports = mechanism.validate_reports(reports)
        return present, np.asarray(reports)

    def rows_reports(self, qid: str, rows: np.ndarray) -> list[Any]:
        """The reports of `qid` of the given rows (each answered it), as Python values."""
        present, reports = self.column(qid)
        position = np.cumsum(present) - 1
        if isinstance(reports, np.ndarray):
            return reports[position[rows]].tolist()
        return [reports[i] for i in position[rows].tolist()]


@dataclass(frozen=True)
class JoinedDesign:
    """Each respondent's design columns, aligned with `Respondents` (None: no such column),
    and where the design came from, in words."""

    weights: np.ndarray
    # labels: text, or numbered by the database (shared/design `NumberedLabels`)
    strata: Any | None
    psus: Any | None
    fpc: np.ndarray | None
    groups: np.ndarray | None
    source: str


class DesignSource(Protocol):
    """Where a design-based analysis reads a survey version's submissions and designs."""

    def version(self) -> SurveyVersion: ...

    def respondents(self) -> Respondents: ...

    def invite_designs(self) -> list[tuple[str | None, Any]]:
        """(submission id, design) of every invitation code carrying a design (server/store
        `InviteDesign`); the id is None for a unit that has not responded."""
        ...

    def estimates(self, confidence: float) -> dict[str, Any]:
        """Today's (simple random sample) estimate document, for the side by side."""
        ...


class DbSource:
    """A server database opened read-only (`--db`)."""

    def __init__(self, store: Any, survey_id: str, version: int | None) -> None:
        from ldpsurvey.server import surveys

        self.store = store
        self.record = surveys.get(store, survey_id, version)

    def version(self) -> SurveyVersion:
        r = self.record
        return SurveyVersion(r.id, r.version, r.sha256, r.manifest["survey"], r.compiled())

    def respondents(self) -> Respondents:
        """Column by column in one pass of the database when the store can: from the packed
        rows written at ingest (no JSON), else from the JSON (its reports are integers,
        booleans or lists of them), else row by row."""
        return self._read(designs=False)[0]

    def respondents_joined(self) -> tuple[Respondents, JoinedDesign | None]:
        """The respondents (as `respondents`) and the invitation codes' designs joined to them
        by the database, in their order (None: join in Python, `join_invitations`). From the
        packed rows both are read in the same pass over the submissions."""
        respondents, columns = self._read(designs=True)
        if columns is None:
            from ldpsurvey.server.report_columns import submission_designs

            columns = submission_designs(self.store, self.record.id, self.record.version)
        return respondents, self._joined(respondents, columns)

    def _read(self, designs: bool) -> tuple[Respondents, dict[str, Any] | None]:
        """The respondents, and their designs (`designs_of`) when asked for and read with the
        packed rows (None: read them alone, or not asked for)."""
        from ldpsurvey.server.report_columns import packed_columns, submission_columns

        compiled = self.record.compiled()
        qids = [q.id for q in compiled.survey.questions]
        packed = packed_columns(self.store, compiled.packed, self.record.id,
                                self.record.version, qids, designs=designs)
        if packed is not None:  # stored reports were checked on the way in (ingest)
            return Respondents.from_columns(packed.ids, packed.columns), packed.designs
        widths = [int(compiled.mechanisms[q].report_width) for q in qids]
        read = submission_columns(self.store, self.record.id, self.record.version, qids, widths)
        if read is not None:
            return Respondents.from_columns(*read), None
        ids: list[str] = []
        answers: list[Mapping[str, Any]] = []
        last = 0
        while True:
            rows = self.store.export_rows(self.record.id, self.record.version, last, PAGE)
            if not rows:
                return Respondents(tuple(ids), tuple(answers), validated=True), None
            for seq, _version, sid, _hour, reports in rows:
                last = seq
                ids.append(sid)
                answers.append(orjson.loads(reports))

    def invite_designs(self) -> list[tuple[str | None, Any]]:
        return self.store.invite_designs(self.record.id)

    def _joined(self, respondents: Respondents,
                columns: dict[str, Any] | None) -> JoinedDesign | None:
        """The design columns read by the database as a `JoinedDesign` of `respondents` (None:
        join in Python, `join_invitations`)."""
        if columns is None:
            return None
        weights = columns["weight"]
        assert weights is not None
        if weights.size != respondents.n:
            return None  # a submission stored between two reads: join in Python
        codes = self.store.designed_invites(self.record.id)
        if not codes:
            return None  # no design on the codes: the caller decides (equal weights, or why)
        if np.isnan(weights).any():  # stored without the copy of its code's design (by a
            # version before schema 6, during a rolling upgrade), or without a designed code:
            # join through the codes, which refuses the latter
            return join_invitations(respondents, self.invite_designs())
        return JoinedDesign(weights, columns["stratum"], columns["psu"], columns["fpc"],
                            columns["group"], invitation_source(respondents.n, codes))

    def estimates(self, confidence: float) -> dict[str, Any]:
        from ldpsurvey.server import aggregation

        return aggregation.estimates(self.store, self.record.id, self.record.version, confidence)


@contextmanager
def db_source(target: str, survey_id: str, version: int | None) -> Iterator[DbSource]:
    """A `DbSource` on a database opened read-only, closed after."""
    from ..reports.sources import read_only_store

    with read_only_store(target) as store:
        yield DbSource(store, survey_id, version)


class RemoteSource:
    """A server's analyst API (`--server` with a token)."""

    def __init__(self, server_url: str, survey_id: str, token: str, version: int | None,
                 timeout: float) -> None:
        from ldpsurvey.server.surveys import compile_survey

        from ..reports.sources import get_json

        base = server_url.rstrip("/")
        if not base.startswith(("http://", "https://")):
            raise AnalysisError(f"server URL must start with http:// or https://: {server_url}")
        self.base, self.token, self.timeout = base, token, timeout
        self.sid = urllib.parse.quote(survey_id, safe="")
        query = "" if version is None else f"?version={int(version)}"
        doc = get_json(f"{base}/api/surveys/{self.sid}{query}", None, timeout)
        try:
            survey, sha256 = doc["survey"], str(doc["sha256"])
            self._version = SurveyVersion(str(survey["id"]), int(survey["version"]), sha256,
                                          survey, compile_survey(sha256, survey))
        except (KeyError, TypeError, ValueError) as exc:
            raise AnalysisError(f"the server's survey document is malformed: {exc}") from None

    def version(self) -> SurveyVersion:
        return self._version

    def _lines(self, path: str) -> Iterator[Any]:
        from ..remote import RemoteError, request_lines

        try:
            yield from request_lines(f"{self.base}/api/surveys/{self.sid}/{path}",
                                     token=self.token, timeout=self.timeout)
        except RemoteError as exc:
            raise AnalysisError(exc.message) from None

    def respondents(self) -> Respondents:
        ids: list[str] = []
        answers: list[Mapping[str, Any]] = []
        for line in self._lines(f"submissions.jsonl?version={self._version.version}"):
            try:
                sid, reports = str(line["submission_id"]), line["answers"]
            except (KeyError, TypeError) as exc:
                raise AnalysisError(f"the server's export has a malformed line: {exc}") from None
            if not isinstance(reports, dict):
                raise AnalysisError("the server's export has a line whose answers are not an "
                                    "object")
            ids.append(sid)
            answers.append(reports)
        return Respondents(tuple(ids), tuple(answers))

    def invite_designs(self) -> list[tuple[str | None, Any]]:
        from ldpsurvey.server.store import InviteDesign

        found: list[tuple[str | None, Any]] = []
        for line in self._lines("designs.jsonl"):
            try:
                sid = line["submission_id"]
                found.append((None if sid is None else str(sid), InviteDesign(
                    float(line["weight"]), line.get("stratum"), line.get("psu"),
                    None if line.get("fpc") is None else float(line["fpc"]),
                    line.get("group"))))
            except (KeyError, TypeError, ValueError) as exc:
                raise AnalysisError(f"the server's designs have a malformed line: {exc}") \
                    from None
        return found

    def estimates(self, confidence: float) -> dict[str, Any]:
        from ..reports.sources import get_json

        return get_json(f"{self.base}/api/surveys/{self.sid}/estimates?confidence="
                        f"{confidence!r}&version={self._version.version}", self.token,
                        self.timeout)


# --- joining the design ----------------------------------------------------------------------


NO_DESIGN = ("this survey's invitation codes carry no design: create them with `ldpsurvey "
             "invites create --design FRAME.csv`, or join a frame at analysis with --frame FILE "
             "--key QUESTION (docs/weights.md)")


def missing_designs(missing: int, n: int) -> str:
    return (f"{missing:,} of {n:,} submissions have no design: they were made without an "
            "invitation code that carries one (before the survey became invite-only, or with "
            "codes made by --count); a design-based estimate needs every respondent's design")


def invitation_source(n: int, codes: int) -> str:
    return f"the invitation codes' designs ({n:,} of {codes:,} invited units responded)"


def join_invitations(respondents: Respondents,
                     codes: Sequence[tuple[str | None, Any]]) -> JoinedDesign:
    """Each respondent's design from the invitation code their submission was made with
    (`codes`: every designed code's submission id, None where unused, and design). Joined
    column by column: 10^6 respondents in about a second."""
    if not codes:
        raise AnalysisError(NO_DESIGN)
    sids, designs = zip(*codes, strict=True)
    weight, stratum, psu, fpc, group = zip(*designs, strict=True)
    where = {sid: i for i, sid in enumerate(sids) if sid is not None}
    order = np.fromiter((where.get(sid, -1) for sid in respondents.ids), dtype=np.int64,
                        count=respondents.n)
    missing = int((order < 0).sum())
    if missing:
        raise AnalysisError(missing_designs(missing, respondents.n))

    def column(values: tuple[Any, ...], dtype: Any) -> np.ndarray | None:
        return None if values[0] is None else np.asarray(values, dtype=dtype)[order]

    source = invitation_source(respondents.n, len(codes))
    weights = column(weight, float)
    assert weights is not None
    return JoinedDesign(weights, column(stratum, str), column(psu, str), column(fpc, float),
                        column(group, np.int64), source)


def equal_weights(respondents: Respondents) -> JoinedDesign:
    """No design: every respondent weight 1, one stratum, each their own PSU (a simple random
    sample), for calibration alone (e.g. raking an opt-in sample to census margins)."""
    return JoinedDesign(np.ones(respondents.n), None, None, None, None,
                        "no design: every respondent weight 1 (a simple random sample), "
                        "then calibrated")


def join_frame(respondents: Respondents, version: SurveyVersion, frame: Frame,
               key: str) -> JoinedDesign:
    """Each respondent's design from the frame row whose id is their answer to the disclosed
    question `key`."""
    question = _key_question(version, key)
    mechanism = version.compiled.mechanisms[key]
    by_id = frame.by_id()
    rows: list[Any] = []
    seen: dict[str, int] = {}
    unknown = 0
    example = None
    present, reports = respondents.reports(key, mechanism)
    unanswered = int((~present).sum())
    values = iter(reports.tolist())
    for i, answered in enumerate(present.tolist()):
        if not answered:
            rows.append(None)
            continue
        value = key_text(question, next(values))
        if value in seen:
            raise AnalysisError(f"two submissions give {key} = {value!r} (submissions "
                                f"{seen[value] + 1} and {i + 1}): a frame row weights one "
                                "respondent, so the key must identify each one")
        seen[value] = i
        row = by_id.get(value)
        if row is None:
            unknown += 1
            example = example or value
        rows.append(row)
    if unanswered:
        raise AnalysisError(f"{unanswered:,} of {respondents.n:,} submissions did not answer "
                            f"the key question {key!r}; each respondent needs their frame row")
    if unknown:
        raise AnalysisError(f"{unknown:,} of {respondents.n:,} submissions give a {key} that "
                            f"is not an id of {frame.source} (e.g. {example!r})")
    source = (f"frame {frame.source} joined by {key} ({respondents.n:,} of "
              f"{len(frame.rows):,} units responded)")
    return _columns(rows, source)


def _key_question(version: SurveyVersion, key: str) -> Any:
    survey = version.compiled.survey
    if key not in version.compiled.mechanisms:
        raise AnalysisError(f"survey {version.id!r} has no question {key!r}", {"question": key})
    question = survey.question(key)
    if not question.disclosed:
        raise AnalysisError(f"the key {key!r} must be a disclosed question: the server holds "
                            "only a randomized report of a randomized answer, not the "
                            "respondent's own value, so it cannot find their frame row",
                            {"question": key})
    return question


def answer_texts(question: Any, reports: np.ndarray) -> np.ndarray:
    """Disclosed answers (checked reports, an array) as text, vectorized: option labels, yes/no,
    integers (`key_text` for one), as the question's unit writes them."""
    return question.unit.disclosed_texts(question, reports)


def key_text(question: Any, report: Any) -> str:
    """A disclosed answer as the text of a frame id: the option label (yes/no for a yes/no
    question) or the integer, as the question's unit writes it."""
    return str(question.unit.data_value(question, report))


def _columns(rows: Sequence[Any], source: str) -> JoinedDesign:
    first = rows[0]
    strata = None if first.stratum is None else np.array([r.stratum for r in rows], dtype=str)
    psus = None if first.psu is None else np.array([r.psu for r in rows], dtype=str)
    fpc = None if first.fpc is None else np.array([r.fpc for r in rows], dtype=float)
    group_of = getattr(first, "group", None)
    groups = None if group_of is None else np.array([r.group for r in rows], dtype=np.int64)
    return JoinedDesign(np.array([r.weight for r in rows], dtype=float), strata, psus, fpc,
                        groups, source)


def refuse_two_server(version: SurveyVersion) -> None:
    """AnalysisError for a two-server survey read submission by submission: its design-based
    estimates come from the leader's batches (report --batch all; docs/weights.md)."""
    if version.compiled.survey.two_server is not None:
        raise AnalysisError(
            f"survey {version.id!r} is collected by two servers, which release only noisy "
            "batch totals (no server holds a report per respondent to weight): its "
            "design-based estimates come from the leader's batches, one per cell and random "
            "group: report --server URL --batch all with --weighted, --poststratify "
            "CELLS.csv or --variance groups (docs/weights.md, \"Two-server surveys\")")
