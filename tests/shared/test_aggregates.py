"""Aggregates for every registered mechanism: add == add_many, merge, JSON round trip, bad dicts."""

from __future__ import annotations

import copy
import json
from typing import Any

import numpy as np
import pytest
from ldpsurvey.shared.aggregates import CountAggregate, HistogramAggregate
from ldpsurvey.shared.errors import AggregateError
from ldpsurvey.shared.mechanisms import MECHANISMS, Mechanism
from support.mechanisms import MECHANISM_NAMES, build, kind_of

N = 3000


def make(name: str, k: int | None = None) -> Mechanism:
    cls = MECHANISMS[name]
    if kind_of(cls) == "binary":
        return build(cls, 2, 1.0, groups={"g": (0, 1)})
    return build(cls, k or 6, 1.0, groups={"g": (0, 2)})


def reports(mech: Mechanism, seed: int = 0, n: int = N) -> np.ndarray:
    rng = np.random.default_rng(seed)
    answers = rng.integers(0, mech.k, size=n)
    return mech.perturb_many(answers, rng)


def wire(report: Any) -> Any:
    """A perturb_many row as the Python value a report arrives as."""
    return report.tolist() if hasattr(report, "tolist") else report


def as_json(agg: Any) -> dict[str, Any]:
    return json.loads(json.dumps(agg.to_dict(), allow_nan=False))


@pytest.mark.parametrize("name", MECHANISM_NAMES)
def test_add_one_at_a_time_equals_add_many(name: str) -> None:
    mech = make(name)
    batch = reports(mech)
    one = mech.new_aggregate()
    for r in batch:
        one.add(mech.validate_report(wire(r)))
    many = mech.aggregate_many(batch)
    assert one.n == many.n == N
    assert as_json(one) == as_json(many)


@pytest.mark.parametrize("name", MECHANISM_NAMES)
def test_merge_equals_aggregating_everything(name: str) -> None:
    mech = make(name)
    a, b = reports(mech, 1), reports(mech, 2)
    merged = mech.aggregate_many(a)
    merged.merge(mech.aggregate_many(b))
    everything = mech.aggregate_many(np.concatenate([a, b]))
    assert merged.n == 2 * N
    assert as_json(merged) == as_json(everything)
    empty = mech.new_aggregate()
    empty.merge(everything)
    assert as_json(empty) == as_json(everything)


@pytest.mark.parametrize("name", MECHANISM_NAMES)
def test_merge_refuses_another_shape(name: str) -> None:
    mech = make(name)
    if kind_of(type(mech)) == "binary":
        other_names = [n for n in MECHANISM_NAMES if kind_of(MECHANISMS[n]) != "binary"]
        other = make(other_names[0], 3)
    else:
        other = make(name, 40)  # past the next power of two: padded domains differ too
    agg = mech.aggregate_many(reports(mech))
    before = as_json(agg)
    with pytest.raises(AggregateError):
        agg.merge(other.aggregate_many(reports(other)))
    assert as_json(agg) == before, "a refused merge must change nothing"


@pytest.mark.parametrize("name", MECHANISM_NAMES)
def test_merge_refuses_another_kind(name: str) -> None:
    mech = make(name)
    agg = mech.aggregate_many(reports(mech))
    foreign = [make(n) for n in MECHANISM_NAMES
               if type(make(n).new_aggregate()) is not type(agg)]
    if not foreign:
        pytest.skip("every registered mechanism uses the same aggregate class")
    for other in foreign:
        with pytest.raises(AggregateError):
            agg.merge(other.aggregate_many(reports(other)))


@pytest.mark.parametrize("name", MECHANISM_NAMES)
def test_round_trip_through_json(name: str) -> None:
    mech = make(name)
    agg = mech.aggregate_many(reports(mech))
    back = mech.aggregate_from_dict(as_json(agg))
    assert as_json(back) == as_json(agg)
    assert back.n == agg.n
    assert mech.estimate(back).to_dict() == mech.estimate(agg).to_dict()
    # An empty aggregate round-trips too, and its estimate is valid JSON (None, never NaN).
    empty = mech.aggregate_from_dict(as_json(mech.new_aggregate()))
    assert empty.n == 0
    json.dumps(mech.estimate(empty).to_dict(), allow_nan=False)


def _bad_dicts(good: dict[str, Any]) -> list[tuple[str, Any]]:
    """Mutations of a valid aggregate dict that no mechanism may accept."""
    out: list[tuple[str, Any]] = [("not a dict", [good]), ("none", None),
                                  ("kind", {**good, "kind": "bogus"})]
    for key, value in good.items():
        out.append((f"missing {key}", {k: v for k, v in good.items() if k != key}))
        if key == "kind":
            continue
        if isinstance(value, bool):
            bad_values = [1, None, "true"]
        elif isinstance(value, int):
            bad_values = [True, 1.5, str(value), None, 10**100, [value]]
            if key == "n":
                bad_values.append(-1)
                if sum(good.get("counts") or [-1]) == value:  # counts that must add up to n
                    bad_values.append(value + 1)
        elif isinstance(value, list) and value:
            bad_values = [value[:-1], [*value, value[-1]], None, "x"]
            for bad in (-1, True, 0.5, "1", None, 10**100):
                bad_values.append([bad, *value[1:]])
        else:
            continue
        out.extend((f"{key}={v!r:.30}", {**good, key: v}) for v in bad_values)
    return out


@pytest.mark.parametrize("name", MECHANISM_NAMES)
def test_bad_dicts_are_refused(name: str) -> None:
    mech = make(name)
    good = as_json(mech.aggregate_many(reports(mech, n=200)))
    for label, bad in _bad_dicts(good):
        if label.startswith("total=") and bad.get("total") is not None and \
                not isinstance(bad["total"], bool) and isinstance(bad["total"], int):
            continue  # any integer total is a possible sum of integer reports
        data = copy.deepcopy(bad)
        with pytest.raises(AggregateError):
            mech.aggregate_from_dict(data)
            pytest.fail(f"accepted: {label}")


# --- the concrete aggregate classes ------------------------------------------------------------


def test_count_aggregate_basics() -> None:
    agg = CountAggregate(3)
    for r in (0, 2, 2):
        agg.add(r)
    assert agg.n == 3 and agg.counts.tolist() == [1, 0, 2]
    other = CountAggregate(3)
    other.add_many(np.array([1, 1]))
    agg.merge(other)
    assert agg.to_dict() == {"kind": "counts", "n": 5, "counts": [1, 2, 2]}
    assert CountAggregate.from_dict(agg.to_dict()) == agg


def test_histogram_aggregate_clamps_into_its_range() -> None:
    agg = HistogramAggregate(-2, 2)
    agg.add_many(np.array([-10, -2, 0, 3, 100]))
    assert agg.n == 5 and agg.total == 91
    assert agg.counts.tolist() == [2, 0, 1, 0, 2]
    one = HistogramAggregate(-2, 2)
    for r in (-10, -2, 0, 3, 100):
        one.add(r)
    assert one == agg


def test_histogram_total_is_exact_beyond_int64() -> None:
    agg = HistogramAggregate(None, None)
    agg.add_many(np.array([2**53 - 1] * 4000, dtype=np.int64))
    assert agg.total == 4000 * (2**53 - 1)
    back = HistogramAggregate.from_dict(json.loads(json.dumps(agg.to_dict())))
    assert back.total == agg.total


def test_histogram_ranges_must_match_to_merge() -> None:
    with pytest.raises(AggregateError):
        HistogramAggregate(0, 5).merge(HistogramAggregate(0, 6))
    with pytest.raises(AggregateError):
        HistogramAggregate(0, 5).merge(CountAggregate(6))
