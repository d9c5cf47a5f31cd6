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

from .errors import AlreadyAnsweredError
from .state import StateDir

LEDGER_FILE = "ledger.json"


@dataclass(frozen=True)
class Charge:
    """What answering one question costs (before the ledger knows whether it is a repeat)."""

    question: str
    epsilon: float                 # ε of a new answer (a series: the permanent layer's ε)
    report_epsilon: float          # exact ε of this one report (< epsilon with two layers)
    series: str | None = None
    tag: str | None = None         # keyed hash of (series, question, answer, mechanism)
    # Two-server surveys: {"collection", "central_epsilon", "local_epsilon" (ε0 or "none")},
    # both guarantees written into the entry (`epsilon` is then the central ε).
    extra: Mapping[str, Any] | None = None


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
        return self.state.read_json(LEDGER_FILE, {"answered": {}, "entries": []})

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

    def total_epsilon(self) -> float:
        return math.fsum(e["epsilon"] for e in self._load()["entries"])


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()
