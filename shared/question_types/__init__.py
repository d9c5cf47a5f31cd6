"""Question types as units: one module per type, and the registry every path asks.

A path that needs something that depends on a question's type (its answer domain, its
canonical keys, what its estimates mean, its plan rows, its review words, ...) asks the
question's unit, `question.unit` (or `unit_for(name)` for a type named in a document), and
does not compare the type's name itself. Adding a type is adding a module here, its page
module (client/web/js/types/), its docs and its tests, and one line in `_UNITS`
(docs/architecture.md has the checklist).
"""

from __future__ import annotations

from .base import QuestionType
from .binary import BinaryType
from .categorical import CategoricalType
from .decimal import DecimalType
from .integer import IntegerType
from .location import LocationType
from .multiselect import MultiselectType
from .ordinal import OrdinalType

# In the order the schema lists them (error messages, docs).
_UNITS: tuple[QuestionType, ...] = (BinaryType(), CategoricalType(), IntegerType(),
                                    OrdinalType(), LocationType(), MultiselectType(),
                                    DecimalType())
REGISTRY: dict[str, QuestionType] = {unit.name: unit for unit in _UNITS}
QUESTION_TYPES: tuple[str, ...] = tuple(REGISTRY)


def unit_for(name: str) -> QuestionType:
    """The unit of the question type `name`; KeyError for a name no unit has."""
    return REGISTRY[name]


def units() -> tuple[QuestionType, ...]:
    """Every registered unit, in the schema's order."""
    return _UNITS


__all__ = ["QUESTION_TYPES", "REGISTRY", "QuestionType", "unit_for", "units"]
