"""The privacy ledger: every ε this device has spent, so a respondent can see and bound it.

One entry per answered question: survey id, version, question, the ε charged, the exact ε of
that single report, and when. A survey version is answered at most once (a second answer would
spend its ε again). In a series (longitudinal survey) a question's answer is memoized, so an
unchanged answer costs nothing more: its entry records ε charged 0 and `reused`. Whether an
answer is unchanged is decided by a keyed tag from client/hazmat_memo.py, never by storing the
answer. Over unboundedly many rounds a series question costs (permanent ε) × (number of
distinct answers given), at most ε·k.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ldpsurvey.shared.composition import DEFAULT_DELTA, Composition, compose

from .errors import AlreadyAnsweredError
from .state import StateDir, require_object

LEDGER_FILE = "ledger.json"
ENTRY_KEYS: dict[str, type | tuple[type, ...]] = {
    "survey": str, "version": int, "question": str, "epsilon": (int, float), "reused": bool}


@dataclass(frozen=True)
class Charge:
    """What answering one question costs (before the ledger knows whether it is a repeat)."""

    question: str
    epsilon: float                 # ε of a new answer (a series: the permanent layer's ε)
    report_epsilon: float          # exact ε of this one report (< epsilon with two layers)
    series: str | None = None
    tag: str | None = None         # keyed hash of (series, question, answer, mechanism)
    disclosed: bool = False        # asked directly: sent as given, no ε (listed apart)
    # Two-server surveys: {"collection", "central_epsilon", "local_epsilon" (ε0 or "none")},
    # both guarantees written into the entry (`epsilon` is then the central ε).
    extra: Mapping[str, Any] | None = None
    epsilon_geo: float | None = None  # location questions: ε per km, shown beside ε
    grid_cols: int | None = None      # location questions: a report's cell in words (receipts)


@dataclass(frozen=True)
class SurveySpend:
    survey: str
    versions: tuple[int, ...]
    epsilon: float                 # charged, summed over questions and versions
    questions: int


class Ledger:
    """The ledger file in the state directory."""

    def __init__(self, state: StateDir) -> None:
        self.state = state

    def _load(self) -> dict[str, Any]:
        data = self.state.read_object(LEDGER_FILE, {"answered": {}, "entries": []},
                                      keys={"answered": dict, "entries": list})
        for entry in data["entries"]:
            require_object(self.state.path / LEDGER_FILE, entry, ENTRY_KEYS)
        return data

    @staticmethod
    def _key(survey_id: str, version: int) -> str:
        return f"{survey_id}@{version}"

    def answered(self, survey_id: str, version: int) -> dict[str, Any] | None:
        return self._load()["answered"].get(self._key(survey_id, version))

    def check_not_answered(self, survey_id: str, version: int) -> None:
        previous = self.answered(survey_id, version)
        if previous is not None:
            raise AlreadyAnsweredError(
                f"this device already answered survey {survey_id!r} version {version} "
                f"(submission {previous['submission_id']} at {previous['time']}); answering "
                f"again would spend its ε twice")

    def record(self, survey_id: str, version: int, submission_id: str,
               charges: Iterable[Charge]) -> list[dict[str, Any]]:
        """Charge a submission (refusing a second one for the same version); the new entries."""
        with self.state.lock():
            self.check_not_answered(survey_id, version)
            data = self._load()
            known = {(e["series"], e["question"], e["tag"]) for e in data["entries"]
                     if e.get("tag") and e.get("series")}
            now = _now()
            new = []
            for c in charges:
                reused = c.tag is not None and (c.series, c.question, c.tag) in known
                entry = {"survey": survey_id, "version": version, "question": c.question,
                         "submission_id": submission_id, "time": now,
                         "epsilon": 0.0 if reused else c.epsilon, "reused": reused,
                         "report_epsilon": c.report_epsilon, "series": c.series, "tag": c.tag,
                         **(c.extra or {})}
                if c.disclosed:
                    entry["disclosed"] = True
                if c.epsilon_geo is not None:
                    entry["epsilon_geo"] = c.epsilon_geo
                if c.grid_cols is not None:
                    entry["grid_cols"] = c.grid_cols
                if c.tag is not None:
                    known.add((c.series, c.question, c.tag))
                new.append(entry)
            data["entries"].extend(new)
            data["answered"][self._key(survey_id, version)] = {"submission_id": submission_id,
                                                               "time": now}
            self.state.write_json(LEDGER_FILE, data)
            return new

    def entries(self) -> list[dict[str, Any]]:
        return list(self._load()["entries"])

    def spend_by_survey(self) -> list[SurveySpend]:
        by: dict[str, list[dict[str, Any]]] = {}
        for e in self._load()["entries"]:
            if not e.get("disclosed"):
                by.setdefault(e["survey"], []).append(e)
        return [SurveySpend(survey=s, versions=tuple(sorted({e["version"] for e in es})),
                            epsilon=math.fsum(e["epsilon"] for e in es),
                            questions=len({e["question"] for e in es}))
                for s, es in sorted(by.items())]

    def spend_by_series(self) -> dict[str, dict[str, Any]]:
        """Per series and question: distinct answers charged and the ε over all rounds."""
        out: dict[str, dict[str, Any]] = {}
        for e in self._load()["entries"]:
            if not e.get("series"):
                continue
            q = out.setdefault(e["series"], {}).setdefault(
                e["question"], {"rounds": 0, "distinct_answers": 0, "epsilon": 0.0})
            q["rounds"] += 1
            if not e["reused"]:
                q["distinct_answers"] += 1
                q["epsilon"] = math.fsum([q["epsilon"], e["epsilon"]])
        return out

    def disclosed(self) -> list[dict[str, Any]]:
        """Answers this device sent as given (disclosed questions): no ε, listed apart."""
        return [e for e in self._load()["entries"] if e.get("disclosed")]

    def total_epsilon(self) -> float:
        return math.fsum(e["epsilon"] for e in self._load()["entries"])

    def location_entries(self) -> list[dict[str, Any]]:
        """Entries of location questions: their plain ε is booked, ε_geo per km shown beside."""
        return [e for e in self._load()["entries"] if e.get("epsilon_geo") is not None]

    def charged_epsilons(self) -> list[float]:
        """The ε of every report that cost something (a reused series answer costs 0)."""
        return [e["epsilon"] for e in self._load()["entries"] if e["epsilon"] > 0]

    def composition(self, delta: float = DEFAULT_DELTA) -> Composition:
        """Everything this device has answered, totalled both ways: the plain sum and the
        advanced composition bound at δ' = `delta` (shared/composition.py), the better marked."""
        return compose(self.charged_epsilons(), delta)


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()
