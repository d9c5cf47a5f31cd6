"""Each mechanism declares its limits once (`Mechanism.misfit`); the constructor, the survey
parser and `auto` all obey them (issue 11)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ldpsurvey.shared.errors import SurveyError
from ldpsurvey.shared.mechanisms import MECHANISMS, Mechanism, candidates
from ldpsurvey.shared.mechanisms.base import MAX_EPSILON, MAX_OPTIONS, MIN_EPSILON
from ldpsurvey.shared.mechanisms.geometric import MAX_ABS_REPORT, Geometric
from ldpsurvey.shared.mechanisms.olh import OLH, PRIME
from ldpsurvey.shared.mechanisms.ordinal_exp import OrdinalExp
from ldpsurvey.shared.survey import Survey

EDGE_EPSILONS = [MIN_EPSILON, 1e-3, 0.5, 4.0, MAX_EPSILON]
EDGE_KS = [2, 3, 64, 65, 1023, 1024, 1025, 4096, MAX_OPTIONS]


def labels(question_type: str, k: int, low: int = 0) -> Any:
    if question_type == "binary":
        return (False, True)
    if question_type in ("integer", "decimal"):  # a decimal's mechanisms: its grid's indices
        return range(low, low + k)
    return tuple(f"o{i}" for i in range(k))


@pytest.mark.parametrize("question_type", ["binary", "categorical", "ordinal", "integer"])
@pytest.mark.parametrize("epsilon", EDGE_EPSILONS)
def test_auto_only_offers_mechanisms_that_can_be_built(question_type: str,
                                                       epsilon: float) -> None:
    for k in [2] if question_type == "binary" else EDGE_KS:
        ranked = candidates(question_type, k, epsilon)
        assert ranked, (question_type, k, epsilon)
        for variance, name in ranked:
            assert math.isfinite(variance) and variance >= 0, (name, k, epsilon)
            MECHANISMS[name](epsilon, labels(question_type, k))  # proves its ε, no error


def test_declared_limits() -> None:
    assert OrdinalExp.max_options == 1024
    assert OLH.max_options == min(MAX_OPTIONS, PRIME)
    assert all(cls.min_epsilon == MIN_EPSILON and cls.max_epsilon == MAX_EPSILON
               for cls in MECHANISMS.values())


@settings(max_examples=200, deadline=None)
@given(name=st.sampled_from(sorted(MECHANISMS)),
       k=st.one_of(st.integers(0, 70), st.sampled_from([*EDGE_KS, MAX_OPTIONS + 1])),
       epsilon=st.one_of(st.floats(min_value=1e-300, max_value=60.0),
                         st.sampled_from([MIN_EPSILON, MIN_EPSILON * 0.999, MAX_EPSILON,
                                          MAX_EPSILON * 1.0001])))
def test_misfit_agrees_with_the_constructor(name: str, k: int, epsilon: float) -> None:
    """`misfit` is None exactly when the constructor builds the mechanism; otherwise the
    constructor refuses with a SurveyError naming the same field."""
    cls: type[Mechanism] = MECHANISMS[name]
    qtype = sorted(cls.question_types)[0]
    if qtype == "binary":
        k = 2
    misfit = cls.misfit(k, epsilon)
    if misfit is None:
        cls(epsilon, labels(qtype, k), question_id="q")
    else:
        with pytest.raises(SurveyError) as info:
            cls(epsilon, labels(qtype, k), question_id="q")
        assert info.value.field == f"questions.q.{misfit.field}"


def survey(**question: Any) -> dict[str, Any]:
    return {"id": "s", "title": "t", "version": 1,
            "questions": [{"id": "q", "text": "?", **question}]}


@pytest.mark.parametrize("question, field", [
    ({"type": "categorical", "options": ["a", "b"], "epsilon": 51.0, "mechanism": "oue"},
     "epsilon"),
    ({"type": "categorical", "options": ["a", "b"], "epsilon": 1e-300, "mechanism": "grr"},
     "epsilon"),
    ({"type": "binary", "epsilon": 1e-7}, "epsilon"),
    ({"type": "ordinal", "options": [f"o{i}" for i in range(1025)], "epsilon": 1.0,
      "mechanism": "ordinal_exp"}, "options"),
    ({"type": "integer", "min": -(2**52), "max": 2**52, "epsilon": 1.0}, "min/max"),
    ({"type": "integer", "min": 0, "max": 2**60, "epsilon": 1.0, "mechanism": "geometric"},
     "min/max"),
    ({"type": "integer", "min": 0, "max": 10**30, "epsilon": 1.0}, "min/max"),
    ({"type": "categorical", "options": ["a", "b"], "epsilon": 10**400}, "epsilon"),
])
def test_a_choice_beyond_a_limit_names_the_field(question: dict[str, Any], field: str) -> None:
    with pytest.raises(SurveyError) as info:
        Survey.from_dict(survey(**question))
    assert info.value.field == f"questions.q.{field}", info.value.message


def test_instantaneous_epsilon_is_held_to_the_same_limits() -> None:
    data = survey(type="binary", epsilon=1.0, mechanism="binary_rr",
                  instantaneous_epsilon=1e-9)
    data["series"] = "weekly"
    with pytest.raises(SurveyError) as info:
        Survey.from_dict(data)
    assert info.value.field == "questions.q.instantaneous_epsilon"


@pytest.mark.parametrize("epsilon", [MIN_EPSILON, 0.1, 1.0, MAX_EPSILON])
def test_the_widest_integer_range_accepted_keeps_reports_exact_in_json(epsilon: float) -> None:
    """At the edge of Geometric's range limit every report it accepts (the honest range
    widened by its 2^-64 tail) is an integer JSON carries exactly; one step wider is refused."""
    # The widest range starting at 0: found by bisection on `misfit`.
    lo, hi = 2, 2 * MAX_ABS_REPORT
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if Geometric.misfit(mid, epsilon) is None:
            lo = mid
        else:
            hi = mid - 1
    assert lo >= 2 and Geometric.misfit(lo + 1, epsilon) is not None
    mech = Geometric(epsilon, range(0, lo))
    low, high = mech.report_bounds
    assert low >= -MAX_ABS_REPORT and high <= MAX_ABS_REPORT
    tail = Geometric.report_tail(lo, epsilon)
    assert (low, high) == (-tail, lo - 1 + tail)  # the full reach, not clamped


@pytest.mark.parametrize("low, high, epsilon", [(0, 10, 1.0), (18, 30, 2.0), (-5, 250, 0.5),
                                                (100, 355, 3.0), (0, 255, 50.0)])
def test_geometric_compressed_inversion_is_the_pseudo_inverse(low: int, high: int,
                                                              epsilon: float) -> None:
    """The distribution estimate's inverse, computed on the (k + 2) x k compressed channel,
    equals the (k + 2T) x k channel's pseudo-inverse (M·c and W = (M∘M)·A)."""
    mech = Geometric(epsilon, range(low, high + 1))
    lo, hi = mech.histogram_range or (0, 0)
    r = float(mech.rate)
    ys, xs = np.arange(lo, hi + 1)[:, None], np.arange(low, high + 1)[None, :]
    a = math.tanh(r / 2) * np.exp(-r * np.abs(ys - xs))
    a[0, :] = np.exp(-r * (low - lo)) / (1 + math.exp(-r)) * np.exp(-r * (xs[0] - low))
    a[-1, :] = np.exp(-r * (hi - low)) / (1 + math.exp(-r)) * np.exp(r * (xs[0] - low))
    m = np.linalg.pinv(a)
    counts = np.random.default_rng(high).dirichlet(np.ones(a.shape[0]))
    inversion, dense_f, dense_w = mech._inversion, m @ counts, (m**2) @ a
    # Both sides cancel entries up to ~1e7 (a wide range at small ε): compare at that scale.
    assert np.allclose(inversion.apply(counts), dense_f, rtol=0,
                       atol=1e-8 * np.abs(dense_f).max())
    assert np.allclose(inversion.w, dense_w, rtol=0, atol=1e-8 * np.abs(dense_w).max())


def test_auto_with_an_instantaneous_layer_picks_a_mechanism_that_carries_it() -> None:
    data = survey(type="categorical", options=[f"o{i}" for i in range(64)], epsilon=1.0,
                  instantaneous_epsilon=2.0)
    data["series"] = "weekly"
    assert candidates("categorical", 64, 1.0)[0][1] != "grr"  # unlayered, auto would not
    question = Survey.from_dict(data).questions[0]
    assert question.mechanism == "grr"
    data["questions"][0].update(type="integer", min=0, max=3)
    del data["questions"][0]["options"]
    with pytest.raises(SurveyError) as info:
        Survey.from_dict(data)
    assert info.value.field == "questions.q.instantaneous_epsilon"
