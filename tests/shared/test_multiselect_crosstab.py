"""One option of a multiselect question crossed with another question (shared/joint_sets.py):
the joint shares "selected option a and answered b" are unbiased with calibrated standard
errors and nominal coverage, for every multiselect mechanism; the whole question is refused.

A fixed population (the formulas describe the randomization of a fixed population) is
re-randomized RUNS times with seeded numpy generators. Checks as in
test_multiselect_statistics.py, each at a false-alarm rate of ALPHA = 1e-6.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import pytest
from ldpsurvey.shared.crosstab import estimate_crosstab, gram
from ldpsurvey.shared.errors import CrosstabError
from ldpsurvey.shared.joint_features import encoder_for
from ldpsurvey.shared.joint_sets import option_encoder
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Survey
from scipy import stats
from support.mechanisms import SET_NAMES

ALPHA = 1e-6
Z = float(stats.norm.isf(ALPHA / 2))
N, RUNS = 3000, 200
OPTIONS = ["cannabis", "cocaine", "ecstasy", "opioids", "sedatives"]
AGES = ["<30", "30-50", "50+"]


def survey(mechanism: str) -> Survey:
    return Survey.from_dict({"id": "x", "title": "x", "version": 1, "questions": [
        {"id": "used", "text": "Used?", "type": "multiselect", "options": OPTIONS,
         "max_selected": 2, "epsilon": 2.0, "mechanism": mechanism},
        {"id": "age", "text": "Age?", "type": "categorical", "options": AGES, "epsilon": 2.0,
         "mechanism": "grr"}], "crosstabs": [["used", "age"]]})


def population() -> tuple[np.ndarray, np.ndarray]:
    """Ages, and sets where cannabis depends on age (60% of the young, 10% of the others)."""
    rng = np.random.default_rng(11)
    ages = rng.integers(0, 3, N)
    sets = np.zeros((N, len(OPTIONS)), dtype=bool)
    sets[:, 0] = rng.random(N) < np.where(ages == 0, 0.6, 0.1)
    sets[:, 3] = rng.random(N) < 0.2
    return ages, sets


@cache
def simulate(mechanism: str) -> dict[str, np.ndarray]:
    s = survey(mechanism)
    used, age = mechanism_for(s.question("used")), mechanism_for(s.question("age"))
    e1, e2 = encoder_for(used), encoder_for(age)
    side = option_encoder(e1, used, "cannabis")
    ages, sets = population()
    rng = np.random.default_rng(sum(map(ord, mechanism)))
    rows: dict[str, list] = {"joint": [], "joint_se": [], "given": [], "given_covered": []}
    truth = np.array([[np.mean(sets[:, 0] & (ages == j)) for j in range(3)],
                      [np.mean(~sets[:, 0] & (ages == j)) for j in range(3)]])
    given_truth = truth[0] / truth[0].sum()  # P(age | selected cannabis)
    for _ in range(RUNS):
        counts = gram(e1, e2, used.perturb_many(sets, rng), age.perturb_many(ages, rng))
        ct = estimate_crosstab(side, e2, counts)
        rows["joint"].append([[c.estimate for c in r] for r in ct.joint])
        rows["joint_se"].append([[c.std_error for c in r] for r in ct.joint])
        given = ct.col_given_row[0]
        rows["given"].append([c.estimate for c in given])
        rows["given_covered"].append([c.ci_low <= t <= c.ci_high
                                      for c, t in zip(given, given_truth, strict=True)])
    out = {key: np.array(v, dtype=float) for key, v in rows.items()}
    out["truth"], out["given_truth"] = truth, given_truth
    return out


@pytest.mark.parametrize("mechanism", SET_NAMES)
def test_joint_shares_of_one_option_are_unbiased_and_calibrated(mechanism: str) -> None:
    runs = simulate(mechanism)
    joint = runs["joint"]
    err = joint.mean(axis=0) - runs["truth"]
    assert np.all(np.abs(err) <= Z * joint.std(axis=0, ddof=1) / math.sqrt(RUNS)), err
    df = RUNS - 1
    lo, hi = stats.chi2.ppf(ALPHA / 2, df) / df, stats.chi2.isf(ALPHA / 2, df) / df
    ratio = joint.var(axis=0, ddof=1) / (runs["joint_se"] ** 2).mean(axis=0)
    assert np.all((lo <= ratio) & (ratio <= hi)), ratio


@pytest.mark.parametrize("mechanism", SET_NAMES)
def test_the_conditional_share_among_those_who_selected_it_covers(mechanism: str) -> None:
    """P(age | selected cannabis): a ratio with delta-method intervals, at least nominal
    coverage within Z binomial standard deviations and 0.02 for the normal approximation."""
    rate = simulate(mechanism)["given_covered"].mean(axis=0)
    assert np.all(rate >= 0.95 - Z * math.sqrt(0.95 * 0.05 / RUNS) - 0.02), rate


def test_the_whole_question_and_unknown_options_are_refused() -> None:
    s = survey("option_rr")
    used, age = mechanism_for(s.question("used")), mechanism_for(s.question("age"))
    e1, e2 = encoder_for(used), encoder_for(age)
    with pytest.raises(CrosstabError, match=r"crossed one option at a time.*'used:cannabis'"):
        estimate_crosstab(e1, e2, gram(e1, e2, used.perturb_many(
            np.zeros((5, 5), dtype=bool), np.random.default_rng(1)), np.zeros(5, dtype=int)))
    with pytest.raises(CrosstabError, match="'heroin' is not an option of 'used'"):
        option_encoder(e1, used, "heroin")
