"""Special values ("Don't know", "Prefer not to say": `special = {name = "label"}`): extra values
of a question's domain the respondent chooses, randomized with the answers, estimated with the
"not asked" machinery (shared/among_asked.py).

Schema: the key is absent from the canonical bytes unless given, names and labels are checked,
and types that cannot take it (multiselect: its `exclusive` options; location), disclosed
questions and two-server surveys refuse it by name. Privacy: the mechanism runs over the
extended domain and proves ε there exactly (rational channel ratios). Statistics: a survey with
"Prefer not to say" on every question and an exclusive "None of these" is answered by a fixed
sample of N = 2,000 drawn afresh RUNS times (seeded numpy, simulation only); each
special share and each estimate among those who gave an answer has its interval cover the
truth a number of times that lies within the Binomial(RUNS, 0.95) band at false-alarm rate ALPHA
per estimand (plus COVERAGE_SLACK for the normal approximation of a ratio).
"""

from __future__ import annotations

import math
import os
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from ldpsurvey.shared.errors import SurveyError
from ldpsurvey.shared.estimand import plain_estimate
from ldpsurvey.shared.exact import channel_ratio, exp_lower
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.mechanisms.asked_geometric import AskedGeometric
from ldpsurvey.shared.question_types.base import NOT_ASKED
from ldpsurvey.shared.survey import Survey
from scipy import stats
from support.two_server import two_server_survey

ALPHA = 1e-4
RUNS = 300
N = 2000
CONFIDENCE = 0.95
COVERAGE_SLACK = 0.015
REFUSED = {"refused": "Prefer not to say"}
BOTH = {"dont_know": "Don't know", "refused": "Prefer not to say"}


def survey(*questions: dict[str, Any], **extra: Any) -> Survey:
    return Survey.from_dict({"id": "s", "title": "S", "version": 1,
                             "questions": list(questions), **extra})


def question(**spec: Any) -> Any:
    return survey({"id": "q", "text": "Q?", "epsilon": 2.0, **spec}).questions[0]


# --- the schema ----------------------------------------------------------------------------


def test_a_question_without_special_values_keeps_its_canonical_bytes() -> None:
    q = question(type="categorical", options=["a", "b"])
    assert "special" not in q.to_dict() and not q.extended
    assert q.mechanism != "grr" or q.k == 2


@pytest.mark.parametrize("spec", [
    {"type": "binary"}, {"type": "categorical", "options": ["a", "b", "c"]},
    {"type": "ordinal", "options": ["low", "mid", "high"]}])
def test_special_values_extend_the_domain_after_the_answers(spec: dict) -> None:
    q = question(**spec, special=BOTH)
    assert q.to_dict()["special"] == BOTH
    assert tuple(q.labels[-2:]) == ("Don't know", "Prefer not to say")
    assert q.k == len(q.unit.values(q)) + 2
    assert q.mechanism in ("grr", "hr") and "special values" in q.mechanism_choice
    # the definition round-trips through its canonical dict
    assert survey(q.to_dict()).questions[0] == q


@pytest.mark.parametrize("special, field", [
    ({}, "special"), ({"Dont know": "x"}, "special.Dont know"),
    ({"dk": ""}, "special.dk"), ({"dk": "a"}, "special.dk"),
    ({"dk": "(not asked)"}, "special.dk"),
    ({f"s{i}": f"label {i}" for i in range(5)}, "special")])
def test_bad_special_values_are_refused_naming_the_field(special: dict, field: str) -> None:
    with pytest.raises(SurveyError) as exc:
        question(type="categorical", options=["a", "b"], special=special)
    assert exc.value.field == f"questions.q.{field}"


def test_a_multiselect_question_says_to_use_exclusive_options() -> None:
    with pytest.raises(SurveyError) as exc:
        question(type="multiselect", options=["a", "b"], special=REFUSED)
    assert exc.value.field == "questions.q.special" and "exclusive" in exc.value.message


def test_a_disclosed_question_and_a_two_server_number_refuse_special_values() -> None:
    with pytest.raises(SurveyError, match="disclosed"):
        survey({"id": "q", "text": "Q?", "type": "binary", "disclosed": True,
                "special": REFUSED})
    data = two_server_survey("https://helper.example", os.urandom(32), os.urandom(32))
    by_type = {q["type"]: q for q in data["questions"]}
    by_type["binary"]["special"] = REFUSED  # a two-server Histogram cell (docs/special-values.md)
    by_type["categorical"]["special"] = REFUSED
    parsed = Survey.from_dict(data)
    assert [q.special for q in parsed.questions[:2]] == [REFUSED, REFUSED]
    by_type["integer"]["special"] = REFUSED  # a Histogram over its values, then PNTA
    assert Survey.from_dict(data).questions[2].special == REFUSED
    by_type["decimal"] = {**by_type["integer"], "id": "d", "type": "decimal", "resolution": 1}
    data["questions"].append(by_type["decimal"])
    with pytest.raises(SurveyError) as exc:
        Survey.from_dict(data)
    assert exc.value.field == "questions.d.special"
    assert "two-server" in exc.value.message and "decimal" in exc.value.message


def test_a_named_mechanism_must_carry_the_extra_values() -> None:
    with pytest.raises(SurveyError) as exc:
        question(type="binary", mechanism="binary_rr", special=REFUSED)
    assert exc.value.field == "questions.q.mechanism"
    assert question(type="binary", mechanism="hr", special=REFUSED).mechanism == "hr"


# --- privacy over the extended domain ------------------------------------------------------


@pytest.mark.parametrize("mechanism", ["grr", "hr"])
@pytest.mark.parametrize("epsilon", [0.5, 1.0, 3.0])
def test_epsilon_is_proven_exactly_over_answers_and_special_values(mechanism: str,
                                                                   epsilon: float) -> None:
    q = question(type="ordinal", options=["low", "mid", "high"], special=BOTH,
                 mechanism=mechanism, epsilon=epsilon)
    mech = mechanism_for(q)
    channel = [[Fraction(p) for p in row] for row in mech.channel()]
    assert len(channel) == 5  # three options and two special values
    ratio = channel_ratio(channel)  # the worst ratio over every pair of the 5 values
    assert ratio is not None and ratio <= exp_lower(Fraction(epsilon))
    assert mech.privacy_loss().within(epsilon)


@pytest.mark.parametrize("low, high", [(0, 1), (0, 4), (-3, 6)])
@pytest.mark.parametrize("hidden", [False, True])
def test_an_integer_pair_with_special_values_proves_its_loss_by_brute_force(
        low: int, high: int, hidden: bool) -> None:
    """Every pair of values of {special values, "not asked"} ∪ [min, max] and every output
    (code, y) in a window that reaches every ratio: the log of the largest ratio equals the
    certified loss, which is within ε."""
    extra = ("Don't know", "Prefer not to say", *((NOT_ASKED,) if hidden else ()))
    mech = AskedGeometric(1.0, range(low, high + 1), question_id="q", extra=extra)
    rate, p, q = float(mech.rate), float(mech.p_star), float(mech.q_star)
    assert mech.codes == len(extra) + 1 and mech.p_star / mech.q_star == mech._ratio

    def log_prob(index: int, code: int, y: int) -> float:
        value = low + index if index < mech.k else mech.default
        return math.log(p if code == mech.code_of(index) else q) - rate * abs(y - value)

    indices = range(mech.k + len(extra))
    worst = max(log_prob(x, c, y) - log_prob(x2, c, y)
                for x in indices for x2 in indices for c in range(mech.codes)
                for y in range(low - 3, high + 4))
    assert worst == pytest.approx(float(mech.privacy_loss()), abs=1e-9)
    assert mech.privacy_loss().within(1.0)


def test_an_integer_question_with_special_values_reports_a_status_code() -> None:
    q = question(type="integer", min=0, max=20, special=BOTH)
    mech = mechanism_for(q)
    assert q.mechanism == "asked_geometric" and "special values" in q.mechanism_choice
    assert mech.extra == ("Don't know", "Prefer not to say")
    assert mech.encode("Prefer not to say") == q.k + 1
    code, _ = mech.perturb("Don't know")
    assert code in (0, 1, 2)
    agg = mech.aggregate_many(np.array([[0, 3], [1, 5], [2, 9], [1, -4]]))
    assert type(agg).from_dict(agg.to_dict()) == agg
    plain = question(type="integer", min=0, max=20)
    assert "special" not in plain.to_dict() and plain.mechanism != "asked_geometric"


# --- statistics: a survey with "Prefer not to say" everywhere ------------------------------


def _band(runs: int) -> tuple[int, int]:
    """The covered counts Binomial(runs, CONFIDENCE) reaches at false-alarm rate ALPHA (two
    sides), widened by COVERAGE_SLACK."""
    low = int(stats.binom.ppf(ALPHA / 2, runs, CONFIDENCE)) - int(COVERAGE_SLACK * runs)
    high = int(stats.binom.isf(ALPHA / 2, runs, CONFIDENCE)) + 1
    return low, high


SINGLE = [
    ({"type": "binary"}, [0.42, 0.38, 0.20]),
    ({"type": "categorical", "options": ["a", "b", "c"]}, [0.35, 0.25, 0.15, 0.25]),
    ({"type": "ordinal", "options": ["low", "mid", "high"]}, [0.2, 0.3, 0.3, 0.2]),
]


@pytest.mark.parametrize("spec, shares", SINGLE, ids=["binary", "categorical", "ordinal"])
def test_special_shares_and_estimates_among_answerers_cover_the_truth(spec: dict,
                                                                      shares: list) -> None:
    q = question(**spec, special=REFUSED)
    mech = mechanism_for(q)
    k = q.k - 1  # answers; the last value is "Prefer not to say"
    p = np.asarray(shares)
    truth_special = p[-1]
    truth_among = p[:k] / p[:k].sum()
    scored = spec["type"] == "ordinal"
    truth_mean = float(np.arange(1, k + 1) @ truth_among)
    rng = np.random.default_rng(20261206)
    covered = np.zeros(k + 2, dtype=int)
    for _ in range(RUNS):  # a fresh sample of N respondents each run, then its reports
        population = rng.choice(q.k, size=N, p=p)
        est = plain_estimate(q, mech, mech.aggregate_many(mech.perturb_many(population, rng)),
                             CONFIDENCE)
        special = est.special[0]
        assert special.value == "Prefer not to say"
        covered[0] += special.ci_low <= truth_special <= special.ci_high
        for a, row in enumerate(est.among_asked.categories):
            covered[1 + a] += row.ci_low <= truth_among[a] <= row.ci_high
        if scored:
            m = est.among_asked.mean
            covered[-1] += m.ci_low <= truth_mean <= m.ci_high
    low, high = _band(RUNS)
    checked = covered if scored else covered[:-1]
    assert all(low <= c <= high for c in checked), (checked, (low, high))


def test_an_exclusive_none_of_these_and_prefer_not_to_say_cover_their_shares() -> None:
    """A multiselect question's "Prefer not to say" is an exclusive option (checked alone):
    its share is the special share, estimated like any option's."""
    options = ["water", "food", "shelter", "None of these", "Prefer not to say"]
    q = question(type="multiselect", options=options,
                 exclusive=["None of these", "Prefer not to say"])
    mech = mechanism_for(q)
    sets = [{"water"}, {"water", "food"}, {"shelter"}, {"food", "shelter"},
            {"None of these"}, {"Prefer not to say"}]
    weights = [0.2, 0.15, 0.15, 0.1, 0.25, 0.15]
    members = np.zeros((len(sets), len(options)), dtype=bool)
    for i, chosen in enumerate(sets):
        members[i, [options.index(label) for label in chosen]] = True
    truth = np.asarray(weights) @ members
    rng = np.random.default_rng(42)
    covered = np.zeros(len(options), dtype=int)
    for _ in range(RUNS):  # a fresh sample of N respondents each run, then its reports
        matrix = members[rng.choice(len(sets), size=N, p=weights)]
        est = plain_estimate(q, mech, mech.aggregate_many(mech.perturb_many(matrix, rng)),
                             CONFIDENCE)
        for a, c in enumerate(est.categories):
            covered[a] += c.ci_low <= truth[a] <= c.ci_high
    low, high = _band(RUNS)
    assert all(low <= c <= high for c in covered), (covered, (low, high))


def test_an_integer_special_share_and_mean_among_answerers_cover_the_truth() -> None:
    q = question(type="integer", min=0, max=20, special=REFUSED)
    mech = mechanism_for(q)
    values = np.arange(21)
    weights = np.exp(-values / 6)
    weights /= weights.sum()
    refused = 0.2
    p = np.append((1 - refused) * weights, refused)  # index 21: "Prefer not to say"
    true_mean = float(values @ weights)
    # with one extra value the status code is the asked bit: still a randomized 0/1
    rng = np.random.default_rng(7)
    covered = np.zeros(2, dtype=int)
    for _ in range(RUNS):
        population = rng.choice(q.k + 1, size=N, p=p)
        est = plain_estimate(q, mech, mech.aggregate_many(mech.perturb_many(population, rng)),
                             CONFIDENCE)
        share, mean = est.special[0], est.among_asked.mean
        covered[0] += share.ci_low <= refused <= share.ci_high
        covered[1] += mean.ci_low <= true_mean <= mean.ci_high
    low, high = _band(RUNS)
    assert all(low <= c <= high for c in covered), (covered, (low, high))
