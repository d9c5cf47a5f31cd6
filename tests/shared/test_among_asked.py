"""Questions with a "not asked" value: their exact ε, and their estimates among those asked.

Privacy: the integer report pair (asked_geometric) proves max(e^(λΔ), e₁·e^(λh)) in rationals;
the check passes at ε and is refuted a hair below the realized loss, and a brute-force ratio
over the pair's outputs reaches exactly that loss. Options + "not asked" mechanisms prove ε as
any mechanism over k + 1 values does.

Statistics, with a stated false-alarm rate ALPHA per check (simulations: seeded numpy, never a
report path): over R runs of n respondents, the average estimate of the share not asked, of
each option's share among those asked and of the mean among those asked lies within Z·S/√R of
the truth (a t-test; S the empirical standard deviation; the ratio's O(1/n) bias is far below
that band at n = 4000); the average reported standard error matches S within the χ² band; and
each interval covers the truth Binomial(R, 0.95) times, within Z binomial standard deviations
plus COVERAGE_SLACK for the normal approximation of a ratio.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from ldpsurvey.shared.exact import exp_lower
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.mechanisms.asked_geometric import AskedGeometric, value_share
from ldpsurvey.shared.skip_logic import NOT_ASKED
from ldpsurvey.shared.survey import Survey
from scipy import stats

ALPHA = 1e-5
Z = float(stats.norm.isf(ALPHA / 2))  # 4.42
RUNS = 400
N = 4000
CONFIDENCE = 0.95
COVERAGE_SLACK = 0.015
GATE = {"id": "gate", "text": "Gate?", "type": "binary", "epsilon": 1.0}


def follow_up(**spec: Any) -> Any:
    data = {"id": "s", "title": "S", "version": 1,
            "questions": [GATE, {"id": "q", "text": "Q?", "relevant": "gate", **spec}]}
    return Survey.from_dict(data).questions[1]


# --- privacy -------------------------------------------------------------------------------

RANGES = [(0, 1), (0, 2), (0, 3), (0, 10), (-5, 30), (0, 1000), (-2**30, 2**30)]


@pytest.mark.parametrize("low, high", RANGES)
@pytest.mark.parametrize("epsilon", [0.01, 0.5, 1.0, 2.0, 8.0, 50.0])
def test_the_pair_proves_its_epsilon_at_the_boundary(low: int, high: int,
                                                     epsilon: float) -> None:
    mech = AskedGeometric(epsilon, range(low, high + 1), question_id="q")
    loss = mech.privacy_loss()
    assert loss.within(epsilon)
    realized = float(loss)
    assert realized <= epsilon and realized >= epsilon * (1 - 1e-6)  # little ε wasted
    assert not loss.within(realized * (1 - 1e-9))  # refuted when nudged below
    ratio, log = loss.terms[1]  # asked against "not asked": the bit and half the range
    assert ratio <= exp_lower(Fraction(epsilon) - log)
    span = high - low
    assert mech.rate * span <= Fraction(epsilon)
    assert mech.rate == loss.terms[0][1] / span
    assert value_share(span) == (1 if span not in (1, 3) else Fraction(5, 9) if span == 1
                                 else Fraction(5, 6))


@pytest.mark.parametrize("low, high", [(0, 1), (0, 4), (-3, 6)])
def test_the_worst_ratio_over_answers_and_outputs_is_the_certified_loss(low: int,
                                                                        high: int) -> None:
    """Brute force over every pair of answers ({not asked} ∪ [min, max]) and outputs (b, y)
    with y in a window wide enough to reach every ratio: the log of the largest ratio equals
    the certified loss."""
    mech = AskedGeometric(1.0, range(low, high + 1), question_id="q")
    rate = float(mech.rate)
    p = float(mech.p_star)

    def log_prob(answer: Any, b: int, y: int) -> float:
        asked = answer != NOT_ASKED
        value = answer if asked else mech.default
        bit = p if (b == 1) == asked else 1 - p
        return math.log(bit) - rate * abs(y - value)  # the normalizer is the same for all

    answers = [NOT_ASKED, *range(low, high + 1)]
    worst = max(log_prob(x, b, y) - log_prob(x2, b, y)
                for x in answers for x2 in answers for b in (0, 1)
                for y in range(low - 3, high + 4))
    assert worst == pytest.approx(float(mech.privacy_loss()), abs=1e-9)


@pytest.mark.parametrize("spec", [
    {"type": "binary", "epsilon": 1.0},
    {"type": "categorical", "epsilon": 2.0, "options": ["a", "b", "c"]},
    {"type": "categorical", "epsilon": 0.5, "options": [f"o{i}" for i in range(40)]},
    {"type": "ordinal", "epsilon": 1.0, "options": ["low", "mid", "high"],
     "mechanism": "ordinal_exp"},
])
def test_options_and_not_asked_prove_epsilon_like_any_k_plus_1_domain(spec: dict) -> None:
    q = follow_up(**spec)
    mech = mechanism_for(q)
    loss = mech.privacy_loss()
    assert mech.k == len(q.labels) and q.labels[-1] == NOT_ASKED
    assert loss.within(q.epsilon) and not loss.within(float(loss) * (1 - 1e-9))


# --- statistics ----------------------------------------------------------------------------


def _check(estimates: np.ndarray, std_errors: np.ndarray, lows: np.ndarray,
           highs: np.ndarray, truth: float, what: str) -> None:
    mean, spread = float(estimates.mean()), float(estimates.std(ddof=1))
    assert abs(mean - truth) <= Z * spread / math.sqrt(RUNS), (what, mean, truth)
    ratio = float(std_errors.mean()) ** 2 / spread**2
    low = stats.chi2.ppf(ALPHA / 2, RUNS - 1) / (RUNS - 1)
    high = stats.chi2.isf(ALPHA / 2, RUNS - 1) / (RUNS - 1)
    assert low <= 1 / ratio <= high, (what, "reported SE vs spread", ratio)
    covered = float(((lows <= truth) & (truth <= highs)).mean())
    band = Z * math.sqrt(CONFIDENCE * (1 - CONFIDENCE) / RUNS) + COVERAGE_SLACK
    assert abs(covered - CONFIDENCE) <= band, (what, "coverage", covered)


@pytest.mark.parametrize("spec", [
    {"type": "categorical", "epsilon": 1.0, "options": ["rarely", "monthly", "weekly"],
     "groups": {"at least monthly": ["monthly", "weekly"]}},
    {"type": "categorical", "epsilon": 1.0, "options": ["rarely", "monthly", "weekly"],
     "mechanism": "hr"},
    {"type": "ordinal", "epsilon": 2.0, "options": ["low", "mid", "high"],
     "mechanism": "ordinal_exp"},
    {"type": "binary", "epsilon": 1.0},
], ids=["grr-groups", "hr", "ordinal_exp", "binary"])
def test_shares_among_those_asked_are_unbiased_with_honest_intervals(spec: dict) -> None:
    q = follow_up(**spec)
    mech = mechanism_for(q)
    k = len(q.labels) - 1
    asked = 0.4
    among = np.linspace(3, 1, k) / np.linspace(3, 1, k).sum()  # skewed shares among asked
    probabilities = np.append(asked * among, 1 - asked)
    rng = np.random.default_rng(20261127)
    rows: dict[str, list[list[float]]] = {}
    for _ in range(RUNS):
        truth = rng.choice(k + 1, size=N, p=probabilities)
        estimate = mech.estimate(mech.aggregate_many(mech.perturb_many(truth, rng)),
                                 CONFIDENCE)
        assert estimate.not_asked is not None and estimate.among_asked is not None
        found = [("not asked", estimate.not_asked)]
        found += [(f"among asked {c.value}", c) for c in estimate.among_asked.categories or []]
        found += [(f"group {g.name}", g) for g in estimate.among_asked.groups]
        if estimate.among_asked.mean is not None:
            found.append(("mean score", estimate.among_asked.mean))
        for what, row in found:
            rows.setdefault(what, []).append([row.estimate, row.std_error, row.ci_low,
                                              row.ci_high])
    truths = {"not asked": 1 - asked}
    truths |= {f"among asked {label}": among[i] for i, label in enumerate(q.labels[:k])}
    truths |= {f"group {name}": among[list(members)].sum()
               for name, members in q.group_indices().items()}
    if q.type == "ordinal":
        truths["mean score"] = float(np.arange(1, k + 1) @ among)
    assert set(rows) == set(truths)
    for what, values in rows.items():
        e, s, lo, hi = np.array(values).T
        _check(e, s, lo, hi, truths[what], what)


def test_the_mean_among_those_asked_is_unbiased_with_honest_intervals() -> None:
    q = follow_up(type="integer", epsilon=2.0, min=0, max=30)
    mech = mechanism_for(q)
    asked = 0.5
    values = np.arange(31)
    weights = np.exp(-values / 6)
    weights /= weights.sum()
    true_mean = float(values @ weights)
    rng = np.random.default_rng(11)
    rows: dict[str, list[list[float]]] = {"mean": [], "not asked": []}
    for _ in range(RUNS):
        given = rng.choice(31, size=N, p=weights)
        truth = np.where(rng.random(N) < asked, given, mech.k)  # index k: not asked
        estimate = mech.estimate(mech.aggregate_many(mech.perturb_many(truth, rng)))
        for what, row in (("mean", estimate.among_asked.mean),
                          ("not asked", estimate.not_asked)):
            rows[what].append([row.estimate, row.std_error, row.ci_low, row.ci_high])
    for what, truth_value in (("mean", true_mean), ("not asked", 1 - asked)):
        e, s, lo, hi = np.array(rows[what]).T
        _check(e, s, lo, hi, truth_value, what)


def test_the_planned_mean_variance_is_an_upper_bound_and_tight() -> None:
    """AskedGeometric.mean_variance (what `plan` uses) against the estimator's variance at the
    truth that nearly attains it: answers half at each end (the widest spread, μ = d), a large
    ε (little local noise), a share 0.3 asked. n times the empirical variance of the mean among
    those asked over R runs lies in the χ² band of the planned variance, at most 5% under it:
    the asked indicator's own spread π(1 − π)(μ − d)² cancels between numerator and
    denominator (it was counted, and the plan was 40% too wide here)."""
    q = follow_up(type="integer", epsilon=8.0, min=0, max=10)
    mech = mechanism_for(q)
    asked, runs = 0.3, 1000
    planned = AskedGeometric.mean_variance(mech.k, 8.0, asked)
    rng = np.random.default_rng(12)
    means = []
    for _ in range(runs):
        given = rng.choice([0, 10], size=N)
        truth = np.where(rng.random(N) < asked, given, mech.k)
        means.append(mech.estimate(mech.aggregate_many(mech.perturb_many(truth, rng)))
                     .among_asked.mean.estimate)
    ratio = N * float(np.var(means, ddof=1)) / planned
    low, high = (stats.chi2.ppf(ALPHA / 2, runs - 1) / (runs - 1),
                 stats.chi2.isf(ALPHA / 2, runs - 1) / (runs - 1))
    assert low * 0.95 <= ratio <= high, ratio


def test_the_aggregate_of_pairs_round_trips_and_merges_exactly() -> None:
    mech = mechanism_for(follow_up(type="integer", epsilon=1.0, min=0, max=9))
    rng = np.random.default_rng(5)
    reports = mech.perturb_many(rng.integers(0, 11, size=500), rng)
    whole = mech.aggregate_many(reports)
    halves = mech.aggregate_many(reports[:200])
    halves.merge(mech.aggregate_many(reports[200:]))
    one_by_one = mech.new_aggregate()
    for report in reports.tolist():
        one_by_one.add(mech.validate_report(report))
    assert whole == halves == one_by_one
    assert mech.aggregate_from_dict(whole.to_dict()) == whole


# --- multiselect questions with a "not asked" value ------------------------------------------

def set_follow_up(mechanism: str, **spec: Any) -> Any:
    data = {"id": "s", "title": "S", "version": 1, "questions": [
        GATE, {"id": "q", "text": "Q?", "type": "multiselect", "epsilon": 2.0,
               "options": ["a", "b", "c", "d"], "max_selected": 2, "relevant": "gate",
               "mechanism": mechanism, **spec}]}
    return Survey.from_dict(data).questions[1]


@pytest.mark.parametrize("name", ["option_rr", "set_ue", "psfo_grr", "auto"])
def test_a_multiselect_follow_up_proves_epsilon_over_its_options_and_not_asked(
        name: str) -> None:
    q = set_follow_up(name)
    mech = mechanism_for(q)
    assert q.not_asked and mech.k == 5 and mech.labels[-1] == NOT_ASKED
    loss = mech.privacy_loss()
    assert loss.within(q.epsilon) and not loss.within(float(loss) * (1 - 1e-9))
    assert mech.encode(NOT_ASKED) == 1 << 4
    with pytest.raises(Exception, match="not an option"):
        mech.encode(["a", NOT_ASKED])


def test_psfo_olh_cannot_carry_not_asked() -> None:
    from ldpsurvey.shared.errors import SurveyError

    with pytest.raises(SurveyError, match="cannot carry the 'not asked' value"):
        set_follow_up("psfo_olh")


@pytest.mark.parametrize("name", ["option_rr", "set_ue", "psfo_grr"])
def test_multiselect_shares_among_those_asked_are_unbiased_with_honest_intervals(
        name: str) -> None:
    q = set_follow_up(name)
    mech = mechanism_for(q)
    rng = np.random.default_rng(17)
    asked, chances = 0.6, np.array([0.5, 0.3, 0.15, 0.05])
    rows: dict[str, list[list[float]]] = {}
    truths: dict[str, list[float]] = {}
    for _ in range(RUNS):
        who = rng.random(N) < asked
        sets = rng.random((N, 4)) < chances
        sets[sets.sum(axis=1) > 2] = False  # at most 2: too many selected -> none
        matrix = np.zeros((N, 5), dtype=bool)
        matrix[:, :4] = sets & who[:, None]
        matrix[~who, 4] = True
        estimate = mech.estimate(mech.aggregate_many(mech.perturb_many(matrix, rng)))
        among = estimate.among_asked
        for label, row, truth in [*((c.value, c, sets[who, i].mean())
                                    for i, c in enumerate(among.categories)),
                                  ("count", among.mean, sets[who].sum(axis=1).mean())]:
            rows.setdefault(label, []).append([row.estimate, row.std_error, row.ci_low,
                                               row.ci_high])
            truths.setdefault(label, []).append(truth)
    for label, values in rows.items():
        e, s, lo, hi = np.array(values).T
        truth = float(np.mean(truths[label]))  # the population's (fixed across runs)
        if label == "count":  # Bhatia-Davis: a bound, so only unbiasedness and >= coverage
            assert abs(e.mean() - truth) <= Z * e.std(ddof=1) / math.sqrt(RUNS)
            assert s.mean() >= e.std(ddof=1) * 0.95
            continue
        _check(e, s, lo, hi, truth, f"{name} {label}")


def test_a_crosstab_refuses_a_hidden_integer_naming_it_and_why() -> None:
    from ldpsurvey.shared.errors import CrosstabError
    from ldpsurvey.shared.joint_features import encoder_for

    question = follow_up(type="integer", min=0, max=10, epsilon=1.0)
    with pytest.raises(CrosstabError, match=r"cannot take 'q': it is an integer follow-up "
                                            r"asked only after randomized answers"):
        encoder_for(mechanism_for(question))
