"""Aggregate shares: adding output shares, and each server's noisy release at collection.

Both servers keep, per batch and key, the sum of the output shares of the reports that passed
preparation (field elements, mod p), the count of those reports and the count rejected. At
collection each server adds its own two-sided geometric noise (central's `add_noise`, over the
OS CSPRNG) sized for the key's central ε and L1 sensitivity under substitution of one
respondent (Count 1, Histogram 2, Sum max - min): its noise alone gives central ε.
A key's central ε comes from `plans.key_epsilon` (a crosstab: `plans.crosstab_epsilon`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from . import vdaf
from .encoding import Encoding


@dataclass
class KeyAggregate:
    """One key's aggregate share in one batch."""

    share: list[int]
    n: int = 0
    rejected: int = 0

    def add(self, out_share: list[int], modulus: int) -> None:
        if len(out_share) != len(self.share):
            raise ValueError("an output share of the wrong length")
        self.share = [(a + b) % modulus for a, b in zip(self.share, out_share, strict=True)]
        self.n += 1

    def to_dict(self) -> dict[str, Any]:
        return {"share": self.share, "n": self.n, "rejected": self.rejected}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> KeyAggregate:
        return cls([int(v) for v in data["share"]], int(data["n"]), int(data["rejected"]))


@dataclass
class BatchAggregate:
    keys: dict[str, KeyAggregate] = field(default_factory=dict)

    @classmethod
    def empty(cls, encodings: Mapping[str, Encoding]) -> BatchAggregate:
        return cls({k: KeyAggregate([0] * e.length) for k, e in encodings.items()})

    def to_dict(self) -> dict[str, Any]:
        return {k: a.to_dict() for k, a in self.keys.items()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BatchAggregate:
        return cls({k: KeyAggregate.from_dict(v) for k, v in data.items()})


def noisy_release(survey: Any, encodings: Mapping[str, Encoding],
                  aggregate: BatchAggregate, source: Any = None) -> dict[str, Any]:
    """This server's noisy aggregate share per key (drawn once per batch, then stored)."""
    from .noise import add_noise, noise_plan
    from .plans import key_epsilon

    out: dict[str, Any] = {}
    for key, agg in aggregate.keys.items():
        enc = encodings[key]
        plan = noise_plan(enc.kind, key_epsilon(survey, key), enc.sensitivity)
        noisy = add_noise(agg.share, vdaf.modulus(enc), plan, source)
        out[key] = {"share": [int(v) for v in noisy], "n": agg.n, "rejected": agg.rejected}
    return out
