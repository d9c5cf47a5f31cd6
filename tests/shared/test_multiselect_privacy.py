"""Multiselect mechanisms prove their exact ε for any two allowed answer sets, at the boundary.

Small domains are checked against the whole channel (every allowed set x every report) in
fractions; every mechanism's ε passes at the claim and is refuted when a parameter is nudged.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

import pytest
from ldpsurvey.shared.errors import PrivacyCheckError, SurveyError
from ldpsurvey.shared.exact import channel_ratio, exp_lower, rational_exp_floor
from ldpsurvey.shared.mechanisms.option_rr import OptionRR
from ldpsurvey.shared.mechanisms.psfo_grr import PSFOGRR, best_pad
from ldpsurvey.shared.mechanisms.psfo_olh import PSFOOLH
from ldpsurvey.shared.mechanisms.set_base import MAX_SET_OPTIONS, SetMechanism, SetShape
from ldpsurvey.shared.mechanisms.set_ue import SetUE
from support.mechanisms import SET_NAMES, build_set

EPSILONS = (0.1, 0.5, 1.0, 2.0, 4.0, 8.0)
SHAPES = [(2, 1, 0), (2, 2, 1), (3, 1, 1), (4, 2, 0), (5, 2, 1), (5, 3, 0), (5, 5, 0),
          (10, 3, 0), (10, 10, 1), (20, 1, 0), (20, 3, 1), (64, 5, 0), (64, 64, 0)]


def allowed_sets(shape: SetShape) -> list[frozenset[int]]:
    return [frozenset(c) for size in range(shape.required_min, shape.max_selected + 1)
            for c in itertools.combinations(range(shape.k), size)]


def fits(name: str, shape: SetShape) -> bool:
    return name != "set_ue" or 2 * shape.max_selected <= shape.k


GRID = [(name, SetShape(*s), eps) for name in SET_NAMES for s in SHAPES for eps in EPSILONS
        if fits(name, SetShape(*s))]


def build(name: str, shape: SetShape, epsilon: float) -> SetMechanism:
    return build_set(name, shape.k, epsilon, shape.max_selected, shape.required_min)


# --- how far apart two allowed sets can be -----------------------------------------------


@pytest.mark.parametrize("k", range(2, 8))
def test_largest_difference_is_min_2m_k_by_enumeration(k: int) -> None:
    """Δ, the most options two allowed sets differ in, is min(2m, k) whether or not the empty
    set is allowed; and the (a, b) pairs the proof maximizes over are exactly the realizable
    ones."""
    for m, required in itertools.product(range(1, k + 1), (0, 1)):
        shape = SetShape(k, m, required)
        sets = allowed_sets(shape)
        realized = {(len(s - t), len(t - s)) for s in sets for t in sets}
        assert max(a + b for a, b in realized) == min(2 * m, k) == shape.max_difference()
        for a, b in itertools.product(range(m + 1), repeat=2):
            assert shape.feasible(a, b) == ((a, b) in realized), (k, m, required, a, b)


# --- every mechanism proves its ε -----------------------------------------------------------


@pytest.mark.parametrize("name, shape, epsilon", GRID)
def test_realized_epsilon_is_proven_within_the_claim(name: str, shape: SetShape,
                                                     epsilon: float) -> None:
    mech = build(name, shape, epsilon)
    loss = mech.privacy_loss()
    assert loss is not None and loss.ratio is not None
    assert loss.ratio <= exp_lower(Fraction(epsilon))
    assert mech.realized_epsilon() <= epsilon
    # at the boundary: the claim is met with (almost) nothing to spare, and a hair less refuted
    assert mech.realized_epsilon() >= epsilon * (1 - 1e-6)
    assert not loss.within(float(loss) * (1 - 1e-9))


@pytest.mark.parametrize("name", ["option_rr", "set_ue", "psfo_grr"])
@pytest.mark.parametrize("shape", [SetShape(2, 1, 0), SetShape(3, 2, 1), SetShape(4, 2, 0),
                                   SetShape(4, 4, 0), SetShape(5, 2, 1), SetShape(5, 3, 0)])
def test_whole_channel_agrees_with_the_loss(name: str, shape: SetShape) -> None:
    """Every allowed set against every report, in fractions: rows are distributions and the
    worst column ratio is exactly the loss the mechanism certifies."""
    if not fits(name, shape):
        pytest.skip("set_ue serves m <= k/2")
    mech = build(name, shape, 1.3)
    rows = channel(mech, allowed_sets(shape))
    assert all(sum(row) == 1 for row in rows)
    loss = mech.privacy_loss()
    assert loss is not None and channel_ratio(rows) == loss.ratio


def channel(mech: SetMechanism, sets: list[frozenset[int]]) -> list[list[Fraction]]:
    if isinstance(mech, PSFOGRR):
        return [[mech.p_star if y in mech.padded(mask(s)) else mech.q_star
                 for y in range(mech.size)] for s in sets]
    p, q = mech.p_star, mech.q_star
    rows = []
    for s in sets:
        row = []
        for bits in itertools.product((0, 1), repeat=mech.k):
            prob = Fraction(1)
            for j, bit in enumerate(bits):
                on = p if j in s else q
                prob *= on if bit else 1 - on
            row.append(prob)
        rows.append(row)
    return rows


def mask(s: frozenset[int]) -> int:
    return sum(1 << j for j in s)


@pytest.mark.parametrize("shape", [SetShape(3, 2, 0), SetShape(4, 2, 1), SetShape(5, 3, 0)])
def test_psfo_grr_is_pad_sample_then_randomized_response(shape: SetShape) -> None:
    """The direct weighted draw is the published pipeline: pad to ℓ, sample one item
    uniformly, GRR over D values with r = 1 + ℓ(E − 1)."""
    mech = build("psfo_grr", shape, 2.0)
    e = rational_exp_floor(2.0)
    r = 1 + mech.pad * (e - 1)
    p, q = r / (r + mech.size - 1), 1 / (r + mech.size - 1)
    for s in allowed_sets(shape):
        items = mech.padded(mask(s))
        assert len(items) == mech.pad
        composed = [sum(Fraction(1, mech.pad) * (p if y == x else q) for x in items)
                    for y in range(mech.size)]
        assert composed == [mech.p_star if y in items else mech.q_star
                            for y in range(mech.size)]
    # and GRR run at r alone would claim ln r, far above the channel's ε
    assert r > e


def test_psfo_pads_to_m_the_least_variance() -> None:
    for k, m, required in ((5, 1, 0), (5, 3, 1), (20, 3, 0), (64, 10, 0), (10, 10, 1)):
        for eps in (0.5, 2.0, 8.0):
            shape = SetShape(k, m, required)
            assert best_pad(PSFOGRR, shape, eps) == m
            averages = [PSFOGRR.padded_variances(shape, eps, pad)[1] for pad in range(m, 2 * m)]
            assert averages == sorted(averages)


def test_psfo_olh_certifies_the_bucket_ratio() -> None:
    mech = build("psfo_olh", SetShape(20, 3, 0), 2.0)
    loss = mech.privacy_loss()
    assert loss is not None and loss.ratio == mech.p_bucket / mech.q_bucket
    assert loss.ratio == rational_exp_floor(2.0)


# --- a nudged parameter is refuted ----------------------------------------------------------


class _RROneTooFew(OptionRR):
    """Per-bit ε sized for Δ − 1 differing options."""

    name = "option_rr_nudged"

    @classmethod
    def probabilities(cls, shape: SetShape, epsilon: float) -> tuple[Fraction, Fraction]:
        from ldpsurvey.shared.mechanisms.set_base import exp_floor

        r = exp_floor(Fraction(epsilon) / (shape.max_difference() - 1))
        return r / (r + 1), 1 / (r + 1)


class _RRKeepsMore(OptionRR):
    """Keeps each bit a millionth likelier than ε allows."""

    name = "option_rr_keeps_more"

    @classmethod
    def probabilities(cls, shape: SetShape, epsilon: float) -> tuple[Fraction, Fraction]:
        p, q = OptionRR.probabilities(shape, epsilon)
        r = p / q * (1 + Fraction(1, 10**6))
        return r / (r + 1), 1 / (r + 1)


class _UEForSmallerSets(SetUE):
    """Tuned for m − 1 options while sets of m are allowed."""

    name = "set_ue_nudged"

    @classmethod
    def probabilities(cls, shape: SetShape, epsilon: float) -> tuple[Fraction, Fraction]:
        return SetUE.probabilities(SetShape(shape.k, shape.max_selected - 1), epsilon)


class _PSFOShortPad(PSFOGRR):
    """Pads to m − 1 items: a set of m would not fit (and one of them is never padded)."""

    name = "psfo_grr_short"

    def _certify(self) -> None:
        self.pad -= 1
        super()._certify()


class _PSFOHeavier(PSFOGRR):
    """The items of T(S) weigh a millionth more than e^ε allows."""

    name = "psfo_grr_heavier"

    def _certify(self) -> None:
        self.weight_in = self.weight_in * 10**6 + self.weight_out
        self.weight_out *= 10**6
        self.total = self.pad * self.weight_in + (self.size - self.pad) * self.weight_out
        super()._certify()


class _OLHSharperBuckets(PSFOOLH):
    name = "psfo_olh_sharper"

    def _certify(self) -> None:
        self.p_bucket = self.p_bucket + Fraction(1, 10**9)
        self.q_bucket = (1 - self.p_bucket) / (self.g - 1)
        super()._certify()


@pytest.mark.parametrize("cls, shape", [
    (_RROneTooFew, SetShape(5, 2, 0)), (_RROneTooFew, SetShape(10, 10, 1)),
    (_RRKeepsMore, SetShape(5, 3, 1)), (_UEForSmallerSets, SetShape(10, 3, 0)),
    (_PSFOHeavier, SetShape(5, 3, 0)), (_OLHSharperBuckets, SetShape(20, 3, 0)),
])
@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_nudged_parameters_are_refuted(cls: Any, shape: SetShape, epsilon: float) -> None:
    with pytest.raises(PrivacyCheckError, match="exceeds the claimed epsilon"):
        cls(epsilon, tuple(f"o{i}" for i in range(shape.k)), max_selected=shape.max_selected,
            required_min=shape.required_min)


def test_a_pad_shorter_than_the_largest_set_is_unbounded() -> None:
    with pytest.raises(PrivacyCheckError, match="unbounded"):
        _PSFOShortPad(1.0, ("a", "b", "c", "d"), max_selected=3)


def test_option_rr_at_ln3_per_bit() -> None:
    """ε = 2·ln 3 with m = 1 (Δ = 2): every bit kept with probability exactly 3/4."""
    import math

    mech = OptionRR(2 * math.log(3), ("a", "b", "c"), max_selected=1)
    assert (mech.p_star, mech.q_star) == (Fraction(3, 4), Fraction(1, 4))
    loss = mech.privacy_loss()
    assert loss is not None and loss.ratio == 9


# --- limits -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SET_NAMES)
def test_bad_shapes_and_epsilons_are_refused(name: str) -> None:
    labels = tuple(f"o{i}" for i in range(6))
    cls = {"option_rr": OptionRR, "set_ue": SetUE, "psfo_grr": PSFOGRR,
           "psfo_olh": PSFOOLH}[name]
    for kwargs, field in (({"max_selected": 0}, "max_selected"),
                          ({"max_selected": 7}, "max_selected"),
                          ({"required_min": 2}, "required_min")):
        with pytest.raises(SurveyError, match=field):
            cls(1.0, labels, question_id="q", **kwargs)
    for eps in (0, -1.0, float("nan"), 1e-7, 51.0):
        with pytest.raises(SurveyError, match="epsilon"):
            cls(eps, labels, question_id="q", max_selected=2)
    with pytest.raises(SurveyError, match="options"):
        cls(1.0, tuple(f"o{i}" for i in range(MAX_SET_OPTIONS + 1)), question_id="q")


def test_set_ue_refuses_sets_of_more_than_half_the_options() -> None:
    with pytest.raises(SurveyError, match=r"questions\.q\.max_selected"):
        SetUE(1.0, ("a", "b", "c", "d", "e"), question_id="q", max_selected=3)
