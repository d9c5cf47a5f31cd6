"""What a collection releases: per key the noisy sums of both servers' aggregate shares.

`CollectedBatch` is produced by the leader at collection (server/two_server/leader.py) and read
by the estimators (central's `estimate_two_server`). `noisy_sums` are signed integers: the
sum of the two servers' shares, each already carrying its own two-sided geometric noise.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class BatchEntry:
    """One question's (or declared crosstab's) collected aggregate in one batch."""

    key: str
    kind: str                  # count | histogram | sum (the Prio3 instance)
    noisy_sums: tuple[int, ...]
    n: int                     # reports that passed preparation for this key
    rejected: int              # reports whose proof (or share) failed for this key
    central_epsilon: float
    sensitivity: int
    offset: int = 0            # sum: the answer measured as 0 (min, or the report range's low)
    servers: int = 2           # each adds its own noise

    @property
    def noise_plan(self) -> Any:
        """The NoisePlan each server used (central's shared/two_server/noise.py)."""
        from .noise import noise_plan

        return noise_plan(self.kind, self.central_epsilon, self.sensitivity)

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "kind": self.kind, "noisy_sums": list(self.noisy_sums),
                "n": self.n, "rejected": self.rejected, "central_epsilon": self.central_epsilon,
                "sensitivity": self.sensitivity, "offset": self.offset, "servers": self.servers}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BatchEntry:
        return cls(key=data["key"], kind=data["kind"],
                   noisy_sums=tuple(int(v) for v in data["noisy_sums"]), n=int(data["n"]),
                   rejected=int(data["rejected"]), central_epsilon=float(data["central_epsilon"]),
                   sensitivity=int(data["sensitivity"]), offset=int(data.get("offset", 0)),
                   servers=int(data.get("servers", 2)))


@dataclass(frozen=True)
class CollectedBatch:
    survey_id: str
    version: int
    batch_id: str
    entries: Mapping[str, BatchEntry] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"survey": self.survey_id, "version": self.version, "batch_id": self.batch_id,
                "entries": {k: e.to_dict() for k, e in self.entries.items()}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CollectedBatch:
        return cls(survey_id=data["survey"], version=int(data["version"]),
                   batch_id=data["batch_id"],
                   entries={k: BatchEntry.from_dict(v) for k, v in data["entries"].items()})
