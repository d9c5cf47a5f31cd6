"""Report validation for every registered mechanism: one test per kind of bad report.

Bad reports are derived generically from a valid report's JSON shape (a bool, an int, a list,
an object), so new mechanisms are covered without listing their formats here. A kind that
cannot apply to a mechanism's report shape (no bool in it, say) is skipped, saying why.
Also: true answers outside the domain are refused on the device (AnswerError).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from ldpsurvey.shared.errors import AnswerError, ReportError
from ldpsurvey.shared.mechanisms import MECHANISMS, Mechanism
from ldpsurvey.shared.mechanisms.base import plain
from ldpsurvey.shared.mechanisms.set_base import SetMechanism
from support.mechanisms import MECHANISM_NAMES, SET_NAMES, build, build_set, kind_of, set_answer
from support.sources import SeededSource

Path = tuple[Any, ...]


ALL_NAMES = MECHANISM_NAMES + SET_NAMES  # multiselect mechanisms too


def mechanisms(name: str) -> list[Mechanism]:
    if name in SET_NAMES:
        return [build_set(name, 5, 1.0, 2), build_set(name, 40, 3.0, 3, 1)]
    cls = MECHANISMS[name]
    if kind_of(cls) == "binary":
        return [build(cls, 2, 1.0)]
    return [build(cls, 5, 1.0), build(cls, 16, 3.0)]


def wire_reports(mech: Mechanism, count: int = 8) -> list[Any]:
    """Valid reports as they arrive over the wire (after a JSON round trip)."""
    source = SeededSource(3)
    out = []
    for i in range(count):
        answer = (set_answer(mech, i) if isinstance(mech, SetMechanism)
                  else mech.labels[i % mech.k])
        report = mech.perturb(answer, source)
        wire = json.loads(json.dumps(report, allow_nan=False))
        out.append(wire)
    return out


def leaves(value: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    if isinstance(value, list):
        for i, v in enumerate(value):
            yield from leaves(v, (*path, i))
    elif isinstance(value, dict):
        for key, v in value.items():
            yield from leaves(v, (*path, key))
    else:
        yield path, value


def replaced(value: Any, path: Path, new: Any) -> Any:
    if not path:
        return new
    copy = json.loads(json.dumps(value))
    target = copy
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = new
    return copy


def is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def mutate_leaves(report: Any, pick: Callable[[Any], bool],
                  values: Callable[[Any], list[Any]]) -> list[Any]:
    return [replaced(report, path, new) for path, leaf in leaves(report) if pick(leaf)
            for new in values(leaf)]


def out_of_range(mech: Mechanism, report: Any) -> list[Any]:
    if not isinstance(mech, SetMechanism) and kind_of(type(mech)) == "integer" \
            and is_int(report):
        return [2**53, -(2**53)]  # beyond what JSON carries exactly
    return mutate_leaves(report, is_int, lambda v: [-1, 2**64])


KINDS: dict[str, Callable[[Mechanism, Any], list[Any]]] = {
    "wrong_type": lambda m, r: ([[r], {"report": r}] if not isinstance(r, list | dict)
                                else [{"0": r}, 0] if isinstance(r, list) else [list(r.values())]),
    "out_of_range": out_of_range,
    "bool_where_int": lambda m, r: mutate_leaves(r, is_int, lambda v: [True, False]),
    "non_bool_for_binary": lambda m, r: mutate_leaves(
        r, lambda v: isinstance(v, bool), lambda v: [int(v), 1 - int(v) + 1, "true"]),
    "float": lambda m, r: mutate_leaves(
        r, lambda v: isinstance(v, bool | int),
        lambda v: [float(v), float(v) + 0.5, math.nan, math.inf]),
    "string": lambda m, r: [*mutate_leaves(r, lambda v: True, lambda v: [str(v), ""]),
                            json.dumps(r)],
    "none": lambda m, r: [None, *mutate_leaves(r, lambda v: True, lambda v: [None])],
    "huge_int": lambda m, r: mutate_leaves(
        r, lambda v: isinstance(v, bool | int), lambda v: [10**100, -(10**100)]),
    "wrong_length": lambda m, r: ([r[:-1], [*r, r[-1]], []] if isinstance(r, list) else []),
    "wrong_keys": lambda m, r: (
        [{k: v for k, v in r.items() if k != key} for key in r] + [{**r, "extra": 0}]
        if isinstance(r, dict) else []),
}


@pytest.mark.parametrize("name", ALL_NAMES)
def test_valid_reports_survive_json(name: str) -> None:
    for mech in mechanisms(name):
        for wire in wire_reports(mech):
            normalized = mech.validate_report(wire)
            agg = mech.new_aggregate()
            agg.add(normalized)
            assert agg.n == 1


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("name", ALL_NAMES)
def test_bad_report_is_refused(name: str, kind: str) -> None:
    tried = 0
    for mech in mechanisms(name):
        for wire in wire_reports(mech, 4):
            for bad in KINDS[kind](mech, wire):
                tried += 1
                with pytest.raises(ReportError):
                    mech.validate_report(bad)
    if not tried:
        pytest.skip(f"{name}'s reports have no part a {kind!r} mutation applies to")


@pytest.mark.parametrize("name", ALL_NAMES)
def test_a_column_of_reports_validates_as_each_report_does(name: str) -> None:
    """The server validates a batch a question at a time: a valid column normalizes to the
    plain JSON values each report normalizes to, and one bad report anywhere refuses it."""
    for mech in mechanisms(name):
        column = wire_reports(mech, 16)
        expected = [plain(mech.validate_report(r)) for r in column]
        assert mech.validate_reports(column) == expected
        assert json.loads(json.dumps(mech.validate_reports(column))) == expected
        for kind in sorted(KINDS):
            for bad in KINDS[kind](mech, column[0])[:2]:
                for position in (0, len(column) // 2, len(column)):
                    with pytest.raises(ReportError):
                        mech.validate_reports([*column[:position], bad, *column[position:]])


def test_integer_reports_within_json_range_are_valid() -> None:
    for name in MECHANISM_NAMES:
        cls = MECHANISMS[name]
        if kind_of(cls) != "integer":
            continue
        mech = build(cls, 5, 1.0)
        low, high = mech.report_bounds
        for value in (low, -1, 0, 4, 10, high):
            assert mech.validate_report(value) == value
        for value in (low - 1, high + 1, 2**53 - 1, -(2**53) + 1):
            with pytest.raises(ReportError):
                mech.validate_report(value)


# --- true answers are refused on the device, never clamped ---------------------------------


def bad_answers(mech: Mechanism) -> list[Any]:
    if isinstance(mech, SetMechanism):
        first, second = mech.labels[0], mech.labels[1]
        too_many = list(mech.labels[:mech.max_selected + 1])
        bad = [first, None, 0, True, {first: True}, [first, first], ["not an option"],
               [first.upper()], [0], [True], [None], [[first]], too_many]
        return bad + ([[]] if mech.required_min else []) + [(first, second, second)]
    kind = kind_of(type(mech))
    if kind == "integer":
        lo, hi = mech.labels[0], mech.labels[-1]
        return [lo - 1, hi + 1, True, float(lo), str(lo), None, 10**100]
    if kind == "binary":
        return [1, 0, "yes", None, 1.0]
    return ["not an option", mech.labels[0].upper(), 0, True, None, [mech.labels[0]],
            {mech.labels[0]: 1}]


@pytest.mark.parametrize("name", ALL_NAMES)
def test_bad_answers_are_refused(name: str) -> None:
    for mech in mechanisms(name):
        for answer in bad_answers(mech):
            with pytest.raises(AnswerError):
                mech.perturb(answer, SeededSource(0))
