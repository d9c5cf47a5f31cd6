"""Exclusive options ("None of these", "Don't know": selected only alone) in multiselect
questions: the allowed family, every mechanism's exact ε over it, what the restriction buys,
answer checks, and unbiased estimates.

The privacy checks enumerate the whole channel for small k (every allowed pair of sets x every
report, in fractions) and compare its worst ratio with the loss the mechanism certifies; a
nudged parameter is refused. The statistical checks re-randomize a fixed population R times
(seeded numpy samplers): the mean error over R runs is within Z standard errors of 0 and the
variance within the χ²(R − 1) band of the formula, each at false-alarm rate ALPHA.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from ldpsurvey.shared.errors import AnswerError, PrivacyCheckError, SurveyError
from ldpsurvey.shared.exact import channel_ratio, exp_lower
from ldpsurvey.shared.mechanisms.option_rr import OptionRR
from ldpsurvey.shared.mechanisms.psfo_grr import PSFOGRR
from ldpsurvey.shared.mechanisms.set_base import SetMechanism, SetShape
from ldpsurvey.shared.mechanisms.set_choice import SET_MECHANISMS, set_candidates
from ldpsurvey.shared.mechanisms.set_ue import SetUE
from scipy import stats

SET_NAMES = sorted(SET_MECHANISMS)
ALPHA = 1e-6
Z = float(stats.norm.isf(ALPHA / 2))


def labels(k: int) -> tuple[str, ...]:
    return tuple(f"o{i}" for i in range(k))


def build(name: str, shape: SetShape, epsilon: float, cls: Any = None) -> SetMechanism:
    cls = cls or SET_MECHANISMS[name]
    return cls(epsilon, labels(shape.k), question_id="q", max_selected=shape.max_selected,
               required_min=shape.required_min,
               exclusive=[f"o{j}" for j in shape.exclusive])


def fits(name: str, shape: SetShape) -> bool:
    return SET_MECHANISMS[name].shape_misfit(shape) is None


def exclusive_shapes(k: int) -> list[SetShape]:
    """Every shape of k options with at least one exclusive option and one that is not."""
    return [SetShape(k, m, least, tuple(e)) for m in range(1, k + 1) for least in (0, 1)
            for size in range(1, k) for e in itertools.combinations(range(k), size)]


# --- the allowed family -------------------------------------------------------------------


@pytest.mark.parametrize("k", range(2, 7))
def test_pairs_and_delta_are_those_of_the_enumerated_family(k: int) -> None:
    """For every shape with exclusive options: the allowed sets are the non-exclusive ones of
    allowed size plus each exclusive option alone; the (a, b) pairs the proofs maximize over
    are exactly the realized ones; Δ = max(min(2m', k'), m' + 1); m' the largest set."""
    for shape in exclusive_shapes(k):
        ex = shape.exclusive_mask
        expected = [mask for mask in range(1 << k)
                    if shape.required_min <= mask.bit_count() <= shape.max_selected
                    and (mask & ex == 0 or mask.bit_count() == 1)]
        assert shape.allowed_masks() == expected
        sets = [frozenset(j for j in range(k) if mask >> j & 1) for mask in expected]
        realized = {(len(s - t), len(t - s)) for s in sets for t in sets}
        free, m_free = k - len(shape.exclusive), min(shape.max_selected, k - len(shape.exclusive))
        assert shape.largest == max(len(s) for s in sets) == m_free
        assert shape.max_difference() == max(a + b for a, b in realized) \
            == max(min(2 * m_free, free), m_free + 1)
        for a, b in itertools.product(range(k + 1), repeat=2):
            assert shape.feasible(a, b) == ((a, b) in realized), (shape, a, b)


def test_shapes_without_exclusive_options_are_unchanged() -> None:
    """The plain shape's pairs and Δ are min(2m, k) as before (canonical params unchanged)."""
    for k, m, least in itertools.product(range(2, 8), range(1, 8), (0, 1)):
        if m <= k:
            shape = SetShape(k, m, least)
            assert shape.largest == m and shape.max_difference() == min(2 * m, k)


@pytest.mark.parametrize("exclusive, why", [((0, 0), "distinct"), ((5,), "distinct"),
                                            ((0, 1, 2), "leaves no option")])
def test_bad_exclusive_lists_are_refused(exclusive: tuple[int, ...], why: str) -> None:
    problem = SetShape(3, 3, 0, exclusive).problem()
    assert problem is not None and problem[0] == "exclusive" and why in problem[1]


def test_an_unknown_exclusive_label_names_the_field() -> None:
    with pytest.raises(SurveyError, match=r"questions\.q\.exclusive"):
        OptionRR(1.0, labels(4), question_id="q", exclusive=["nope"])


# --- every mechanism proves its ε over the restricted family -----------------------------


def bits_channel(mech: SetMechanism, masks: list[int]) -> list[list[Fraction]]:
    p, q = mech.p_star, mech.q_star
    rows = []
    for mask in masks:
        row = []
        for bits in itertools.product((0, 1), repeat=mech.k):
            prob = Fraction(1)
            for j, bit in enumerate(bits):
                on = p if mask >> j & 1 else q
                prob *= on if bit else 1 - on
            row.append(prob)
        rows.append(row)
    return rows


def olh_channel(mech: Any, masks: list[int]) -> list[list[Fraction]]:
    """psfo_olh given the hash: every assignment of the D values to the g buckets (a superset
    of what seeds realize) x every bucket; P[y | h, S] = Σ_{x in T(S)} (p' if h(x) = y else
    q')/ℓ. Rows are per (assignment, S); columns per bucket: one channel per assignment."""
    p, q = mech.p_bucket, mech.q_bucket
    worst = Fraction(1)
    for h in itertools.product(range(mech.g), repeat=mech.size):
        rows = [[sum((p if h[x] == y else q) for x in mech.padded(mask)) / mech.pad
                 for y in range(mech.g)] for mask in masks]
        assert all(sum(row) == 1 for row in rows)
        ratio = channel_ratio(rows)
        assert ratio is not None
        worst = max(worst, ratio)
    return [[worst]]


SMALL = [SetShape(3, 3, 0, (2,)), SetShape(4, 4, 0, (3,)), SetShape(4, 4, 1, (2, 3)),
         SetShape(5, 5, 0, (3, 4)), SetShape(5, 2, 1, (0,)), SetShape(5, 1, 0, (4,)),
         SetShape(5, 3, 0, (4,)), SetShape(6, 2, 0, (4, 5))]


@pytest.mark.parametrize("name", SET_NAMES)
@pytest.mark.parametrize("shape", SMALL, ids=str)
@pytest.mark.parametrize("epsilon", [0.7, 2.0])
def test_the_enumerated_channel_has_exactly_the_proven_loss(name: str, shape: SetShape,
                                                            epsilon: float) -> None:
    """Every allowed pair x every report: the worst ratio is the certified loss, within the
    claimed ε and at it (a hair less is refuted)."""
    if not fits(name, shape):
        pytest.skip("set_ue serves m' <= k'/2")
    mech = build(name, shape, epsilon)
    loss = mech.privacy_loss()
    assert loss is not None and loss.ratio is not None
    masks = shape.allowed_masks()
    if name == "psfo_olh":
        if mech.g ** mech.size > 5000:
            pytest.skip("g^D hash assignments: small g and D only")
        assert olh_channel(mech, masks)[0][0] == loss.ratio
    else:
        rows = mech.channel() if isinstance(mech, PSFOGRR) else bits_channel(mech, masks)
        assert all(sum(row) == 1 for row in rows)
        assert channel_ratio(rows) == loss.ratio
    assert loss.ratio <= exp_lower(Fraction(epsilon))
    assert mech.realized_epsilon() >= epsilon * (1 - 1e-6)
    assert not loss.within(float(loss) * (1 - 1e-9))


class _RRPlainDelta(OptionRR):
    """Per-bit ε sized for Δ − 1: one option fewer than an exclusive option against m'."""

    name = "option_rr_nudged"

    @classmethod
    def probabilities(cls, shape: SetShape, epsilon: float) -> tuple[Fraction, Fraction]:
        from ldpsurvey.shared.mechanisms.set_base import exp_floor

        r = exp_floor(Fraction(epsilon) / (shape.max_difference() - 1))
        return r / (r + 1), 1 / (r + 1)


class _UESmaller(SetUE):
    """Tuned for m' − 1 options."""

    name = "set_ue_nudged"

    @classmethod
    def probabilities(cls, shape: SetShape, epsilon: float) -> tuple[Fraction, Fraction]:
        return SetUE.probabilities(SetShape(shape.free, shape.largest - 1), epsilon)


class _PSFOShort(PSFOGRR):
    """Pads to m' − 1: an allowed set of m' would not fit."""

    name = "psfo_grr_short"

    def _certify(self) -> None:
        self.pad -= 1
        super()._certify()


@pytest.mark.parametrize("cls, shape", [
    (_RRPlainDelta, SetShape(5, 5, 0, (3, 4))), (_RRPlainDelta, SetShape(10, 10, 1, (9,))),
    (_RRPlainDelta, SetShape(8, 2, 0, (7,))), (_UESmaller, SetShape(9, 3, 0, (7, 8))),
])
def test_a_nudged_claim_is_refused(cls: Any, shape: SetShape) -> None:
    with pytest.raises(PrivacyCheckError, match="exceeds the claimed epsilon"):
        build("", shape, 1.0, cls)


def test_a_pad_shorter_than_the_largest_allowed_set_is_refused() -> None:
    with pytest.raises(PrivacyCheckError, match="unbounded"):
        build("", SetShape(5, 5, 0, (3, 4)), 1.0, _PSFOShort)


# --- what the restriction buys ------------------------------------------------------------


def test_the_restriction_shrinks_delta_and_the_padding() -> None:
    """k = 10 with "none" and "don't know" exclusive, any number of the other 8: Δ 10 -> 9
    (option_rr), ℓ 10 -> 8 (psfo_grr, psfo_olh); every variance is lower; m <= k/2 unchanged."""
    plain, restricted = SetShape(10, 10), SetShape(10, 10, 0, (8, 9))
    assert (plain.max_difference(), restricted.max_difference()) == (10, 9)
    assert (build("psfo_grr", plain, 2.0).pad, build("psfo_grr", restricted, 2.0).pad) == (10, 8)
    for name in ("option_rr", "psfo_grr", "psfo_olh"):
        before = SET_MECHANISMS[name].set_variances(plain, 2.0)
        after = SET_MECHANISMS[name].set_variances(restricted, 2.0)
        assert after[0] < before[0] and after[1] < before[1], name
    small, small_ex = SetShape(10, 3), SetShape(10, 3, 0, (8, 9))
    assert small.max_difference() == small_ex.max_difference() == 6
    for name in SET_NAMES:
        assert (SET_MECHANISMS[name].probabilities(small, 2.0)
                == SET_MECHANISMS[name].probabilities(small_ex, 2.0)), name


def test_auto_ranks_only_mechanisms_that_take_the_restriction() -> None:
    shape = SetShape(6, 3, 0, (5,))  # k' = 5, m' = 3: set_ue's tuning does not fit
    names = {name for _, _, name in set_candidates(shape, 1.0, 10**6)}
    assert names == {"option_rr", "psfo_grr", "psfo_olh"}
    with pytest.raises(SurveyError, match=r"questions\.q\.mechanism: set_ue"):
        build("set_ue", shape, 1.0)


# --- answers --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SET_NAMES)
def test_an_exclusive_option_with_another_is_refused_alone_is_answered(name: str) -> None:
    mech = build(name, SetShape(6, 2, 0, (4, 5)), 1.0)
    with pytest.raises(AnswerError, match=r"'o4' can only be selected alone to 'q'"):
        mech.encode(["o1", "o4"])
    with pytest.raises(AnswerError, match="can only be selected alone"):
        mech.encode(["o5", "o4"])
    assert mech.canonical(["o4"]) == ["o4"] and mech.canonical(["o1", "o0"]) == ["o0", "o1"]
    mech.validate_report(mech.perturb(["o5"]))
    with pytest.raises(AnswerError, match="exclusive"):
        mech.check_sets(np.array([[1, 0, 0, 0, 1, 0]], dtype=bool))


# --- estimates: unbiased shares and mean number selected ---------------------------------


N = 2000
RUNS = 200
SHAPES = {"option_rr": SetShape(6, 6, 0, (4, 5)), "set_ue": SetShape(8, 2, 0, (6, 7)),
          "psfo_grr": SetShape(6, 6, 0, (4, 5)), "psfo_olh": SetShape(6, 6, 1, (4, 5))}


def population(shape: SetShape) -> np.ndarray:
    """N fixed allowed sets: a fifth "none", a tenth "don't know" (or the first exclusive), the
    rest 0..m' (from required_min) of the other options."""
    rng = np.random.default_rng(11)
    free = [j for j in range(shape.k) if j not in shape.exclusive]
    sets = np.zeros((N, shape.k), dtype=bool)
    for i in range(N):
        if i % 10 < 2:
            sets[i, shape.exclusive[0]] = True
        elif i % 10 == 2:
            sets[i, shape.exclusive[-1]] = True
        else:
            size = shape.required_min + i % (shape.largest - shape.required_min + 1)
            sets[i, rng.choice(free, size=size, replace=False)] = True
    return sets


@pytest.mark.parametrize("name", SET_NAMES)
def test_shares_and_mean_selected_are_unbiased(name: str) -> None:
    shape = SHAPES[name]
    mech = build(name, shape, 2.0)
    sets = population(shape)
    assert all(shape.allows(mask) for mask in mech.masks(sets))
    truth, mean_truth = sets.mean(axis=0), float(sets.sum(axis=1).mean())
    rng = np.random.default_rng(sum(map(ord, name)) + 1)
    shares, means = [], []
    for _ in range(RUNS):
        est = mech.estimate(mech.aggregate_many(mech.perturb_many(sets, rng)))
        assert est.categories is not None and est.mean is not None
        shares.append([c.estimate for c in est.categories])
        means.append(est.mean.estimate)
    shares_a, means_a = np.array(shares, dtype=float), np.array(means, dtype=float)
    for values, target, what in ((shares_a, truth, "shares"),
                                 (means_a[:, None], np.array([mean_truth]), "mean")):
        err = values.mean(axis=0) - target
        se = values.std(axis=0, ddof=1) / math.sqrt(RUNS)
        assert np.all(np.abs(err) <= Z * se), f"{name} {what}: {err} vs {se}"
    df = RUNS - 1
    lo, hi = stats.chi2.ppf(ALPHA / 2, df) / df, stats.chi2.isf(ALPHA / 2, df) / df
    ratio = shares_a.var(axis=0, ddof=1) / mech.option_variance(truth, N)
    assert np.all((lo <= ratio) & (ratio <= hi)), f"{name}: {ratio}"


# --- the schema -------------------------------------------------------------------------------


NEEDS = {"id": "needs", "type": "multiselect", "text": "Which needs? (check all that apply)",
         "options": ["food", "water", "shelter", "none", "dont_know"],
         "exclusive": ["dont_know", "none"], "epsilon": 2.0}


def survey(*questions: dict[str, Any], **extra: Any) -> Any:
    from ldpsurvey.shared.survey import Survey

    return Survey.from_dict({"id": "msna", "title": "MSNA", "version": 1,
                             "questions": list(questions), **extra})


def test_the_key_parses_into_the_shape_and_round_trips_in_the_options_order() -> None:
    s = survey(NEEDS)
    q = s.questions[0]
    assert q.multiselect == SetShape(5, 5, 0, (3, 4))
    assert q.to_dict()["exclusive"] == ["none", "dont_know"]
    assert survey(q.to_dict()).canonical_bytes() == s.canonical_bytes()
    from ldpsurvey.shared.mechanisms import mechanism_for

    mech = mechanism_for(q)
    assert mech.shape == q.multiselect and mech.realized_epsilon() <= 2.0
    with pytest.raises(AnswerError, match="'none' can only be selected alone to 'needs'"):
        mech.encode(["food", "none"])


def test_without_the_key_the_canonical_bytes_do_not_change() -> None:
    plain = {k: v for k, v in NEEDS.items() if k != "exclusive"}
    s = survey(plain)
    assert "exclusive" not in s.questions[0].to_dict()
    assert b"exclusive" not in s.canonical_bytes()


@pytest.mark.parametrize("value", [[], ["maybe"], ["none", "none"], "none",
                                   ["food", "water", "shelter", "none", "dont_know"]])
def test_a_bad_exclusive_list_names_the_key(value: Any) -> None:
    with pytest.raises(SurveyError, match=r"questions\.needs\.exclusive"):
        survey({**NEEDS, "exclusive": value})


def test_set_ue_named_where_it_cannot_take_the_restriction_is_refused() -> None:
    with pytest.raises(SurveyError, match=r"questions\.needs\.mechanism"):
        survey({**NEEDS, "max_selected": 2, "mechanism": "set_ue"})
    q = survey({**NEEDS, "max_selected": 1, "mechanism": "set_ue"}).questions[0]
    assert q.mechanism == "set_ue"


def test_auto_chooses_among_the_mechanisms_that_take_it() -> None:
    q = survey(NEEDS).questions[0]
    ranked = set_candidates(q.multiselect, 2.0, 10**6)
    assert q.mechanism == ranked[0][2] and "set_ue" not in {name for *_, name in ranked}


def test_a_follow_up_carries_not_asked_as_one_more_exclusive_option() -> None:
    from ldpsurvey.shared.mechanisms import mechanism_for

    gate = {"id": "gate", "type": "binary", "text": "Any needs?", "epsilon": 1.0}
    q = survey(gate, {**NEEDS, "relevant": "gate"}).questions[1]
    assert q.not_asked
    mech = mechanism_for(q)
    assert mech.shape == SetShape(6, 5, 0, (3, 4, 5))
    assert mech.shape.largest == 3 and mech.realized_epsilon() <= 2.0
    from ldpsurvey.shared.question_types.base import NOT_ASKED

    assert mech.encode(NOT_ASKED) == 1 << 5
    with pytest.raises(AnswerError, match="alone"):
        mech.encode(["water", "dont_know"])


def test_the_terminal_hint_says_which_options_go_alone() -> None:
    from ldpsurvey.client.cli import _hint as hint  # the unit's terminal_prompt, options listed
    from ldpsurvey.client.cli import parse_answer as parse

    q = survey(NEEDS).questions[0]
    assert hint(q) == ("numbers or options separated by commas, or \"none\"; 'none' only "
                       "alone; 'dont_know' only alone")
    assert "at most" not in hint(q)
    assert "at most 2" in hint(survey({**NEEDS, "max_selected": 2}).questions[0])
    from ldpsurvey.shared.mechanisms import mechanism_for

    with pytest.raises(AnswerError, match="'none' can only be selected alone"):
        mechanism_for(q).encode(parse(q, "1, none"))
    assert parse(q, "none") == ["none"]  # the option so named, not the empty set
    assert parse(q, "-") == [] and parse(q, "5") == ["dont_know"]


@pytest.mark.parametrize("name, before, after", [("option_rr", 24458, 18696),
                                                 ("psfo_grr", 16612, 12502),
                                                 ("psfo_olh", 93451, 56344)])
def test_the_respondents_docs_multiselect_md_states(name: str, before: int, after: int) -> None:
    """8 options, "none" and "don't know" exclusive, any number of the other 6, ε = 2: the
    respondents for ±5 points on every option's share (95%, worst case over the truth)."""
    z = float(stats.norm.isf(0.025))
    needed = [math.ceil(z * z * SET_MECHANISMS[name].set_variances(shape, 2.0)[0] / 0.05**2)
              for shape in (SetShape(8, 8), SetShape(8, 8, 0, (6, 7)))]
    assert needed == [before, after]


# --- simulation truths (simulate) ------------------------------------------------------------


def test_simulated_truths_draw_only_allowed_sets() -> None:
    """The built-in truth turns a drawn set holding an exclusive option and others into that
    option alone; `--truth`'s independent options draw again; its acceptance is the exact
    probability of an allowed set (enumerated)."""
    from ldpsurvey.shared.question_types.truth import IndependentSetTruth

    q = survey(NEEDS).questions[0]
    mech = SET_MECHANISMS[q.mechanism].from_question(q)
    sets = q.unit.default_truth(q).draw(5000, np.random.default_rng(1))
    mech.check_sets(sets)
    assert sets[:, 3].any() and sets[:, 4].any() and (sets.sum(axis=1) > 1).any()
    probabilities = np.array([0.5, 0.3, 0.2, 0.25, 0.1])
    truth = IndependentSetTruth(probabilities, 1, 2, (3, 4))
    exact = sum(math.prod(p if mask >> j & 1 else 1 - p for j, p in enumerate(probabilities))
                for mask in SetShape(5, 2, 1, (3, 4)).allowed_masks())
    assert truth.acceptance() == pytest.approx(exact, rel=1e-12)
    mech.check_sets(IndependentSetTruth(probabilities, 0, 5, (3, 4)).draw(
        2000, np.random.default_rng(2)))
