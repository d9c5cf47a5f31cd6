"""Shared test helpers: build any registered mechanism generically from (class, k, ε).

Tests over mechanisms are parametrized over the `MECHANISMS` registry, so a newly registered
mechanism is covered automatically.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ldpsurvey.shared.mechanisms import MECHANISMS, SET_MECHANISMS, Mechanism
from ldpsurvey.shared.mechanisms.set_base import SetMechanism

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



# --- multiselect mechanisms (sets of options; shared/mechanisms/set_choice.py) -------------

SET_NAMES = sorted(SET_MECHANISMS)


def build_set(name: str, k: int, epsilon: float, max_selected: int | None = None,
              required_min: int = 0) -> SetMechanism:
    """A multiselect mechanism over options option-0..option-(k-1)."""
    cls = SET_MECHANISMS[name]
    return cls(epsilon, tuple(f"option-{i}" for i in range(k)), question_id="q",
               max_selected=max_selected, required_min=required_min)


def set_answer(mech: SetMechanism, i: int) -> list[str]:
    """An allowed answer that varies with i: about i % (m + 1) options starting at i % k."""
    size = max(mech.required_min, i % (mech.max_selected + 1))
    return [mech.labels[(i + j) % mech.k] for j in range(size)]
