"""Shared test helpers: build any registered mechanism generically from (class, k, ε).

Tests over mechanisms are parametrized over the `MECHANISMS` registry, so a newly registered
mechanism is covered automatically.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ldpsurvey.shared.mechanisms import MECHANISMS, Mechanism

FREQUENCY_TYPES = frozenset({"categorical", "ordinal"})


def kind_of(cls: type[Mechanism]) -> str:
    """'frequency' (string labels), 'binary' (False/True only) or 'integer' (a range)."""
    if cls.question_types & FREQUENCY_TYPES:
        return "frequency"
    if "binary" in cls.question_types:
        return "binary"
    if "integer" in cls.question_types:
        return "integer"
    raise AssertionError(f"{cls.__name__} serves no known question type: {cls.question_types}")


def labels_for(cls: type[Mechanism], k: int, low: int = 0) -> Sequence[Any]:
    """The answer domain a question of this mechanism's type with k values would have."""
    kind = kind_of(cls)
    if kind == "frequency":
        return tuple(f"option-{i}" for i in range(k))
    if kind == "binary":
        assert k == 2, "binary-only mechanisms have k = 2"
        return (False, True)
    return range(low, low + k)


def fits(cls: type[Mechanism], k: int) -> bool:
    """Whether a domain of k values makes sense for this class (binary-only classes: k = 2)."""
    return kind_of(cls) != "binary" or k == 2


def build(cls: type[Mechanism], k: int, epsilon: float, *, low: int = 0,
          groups: Mapping[str, Sequence[int]] | None = None) -> Mechanism:
    """`cls(epsilon, labels)` for a k-value domain of the class's question type."""
    kwargs: dict[str, Any] = {"question_id": "q"}
    if groups and kind_of(cls) == "frequency":
        kwargs["groups"] = groups
    return cls(epsilon, labels_for(cls, k, low), **kwargs)


def answer_at(mechanism: Mechanism, index: int) -> Any:
    """The true answer with this index (what `perturb` takes)."""
    return mechanism.labels[index]


MECHANISM_NAMES = sorted(MECHANISMS)
EPSILONS = (0.1, 0.5, math.log(3), 1.0, 2.0, 4.0, 8.0)
DOMAIN_SIZES = (2, 3, 5, 16, 100)

