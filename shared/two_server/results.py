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
    # how many batches' totals were added up into this entry (each batch carries its own draw
    # of both servers' noise, so the noise variance is `batches` times one batch's)
    batches: int = 1

    @property
    def noise_plan(self) -> Any:
        """The NoisePlan each server used (central's shared/two_server/noise.py)."""
        from .noise import noise_plan

        return noise_plan(self.kind, self.central_epsilon, self.sensitivity)

    def to_dict(self) -> dict[str, Any]:
        out = {"key": self.key, "kind": self.kind, "noisy_sums": list(self.noisy_sums),
               "n": self.n, "rejected": self.rejected, "central_epsilon": self.central_epsilon,
               "sensitivity": self.sensitivity, "offset": self.offset, "servers": self.servers}
        if self.batches != 1:
            out["batches"] = self.batches
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BatchEntry:
        return cls(key=data["key"], kind=data["kind"],
                   noisy_sums=tuple(int(v) for v in data["noisy_sums"]), n=int(data["n"]),
                   rejected=int(data["rejected"]), central_epsilon=float(data["central_epsilon"]),
                   sensitivity=int(data["sensitivity"]), offset=int(data.get("offset", 0)),
                   servers=int(data.get("servers", 2)), batches=int(data.get("batches", 1)))


@dataclass(frozen=True)
class CollectedBatch:
    """One collected batch. In a survey whose invitation codes carry a design, the leader
    batches each post-stratification cell (the codes' stratum) and each random group apart:
    `cell` and `group` say which part of the sample this batch is (None: not partitioned by
    it). They are the operator's labels, never anything a respondent answered."""

    survey_id: str
    version: int
    batch_id: str
    entries: Mapping[str, BatchEntry] = field(default_factory=dict)
    cell: str | None = None
    group: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"survey": self.survey_id, "version": self.version,
                               "batch_id": self.batch_id,
                               "entries": {k: e.to_dict() for k, e in self.entries.items()}}
        if self.cell is not None:
            out["cell"] = self.cell
        if self.group is not None:
            out["group"] = self.group
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CollectedBatch:
        group = data.get("group")
        return cls(survey_id=data["survey"], version=int(data["version"]),
                   batch_id=data["batch_id"],
                   entries={k: BatchEntry.from_dict(v) for k, v in data["entries"].items()},
                   cell=None if data.get("cell") is None else str(data["cell"]),
                   group=None if group is None else int(group))
