"""shared/estimand.py: what a question's estimates mean, and the plain report's mean score of an
ordinal question whose mechanism gives none (GRR), checked against its sampling distribution.

Simulation only (numpy generators): nothing here can send a report.
"""

from __future__ import annotations

import numpy as np
import pytest
from ldpsurvey.shared.estimand import (
    CLIP,
    DISCLOSED_NOTE,
    EM,
    MEAN_SCORE,
    MEAN_SELECTED,
    NORM_SUB,
    SHARES_NOTE,
    estimand,
    plain_estimate,
    score_note,
)
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Survey
from scipy import stats

OPTIONS = ["never", "rarely", "often", "always"]


def question(**spec):
    data = {"id": "q", "text": "q?", **spec}
    return Survey.from_dict({"id": "s", "title": "s", "version": 1,
                             "questions": [data]}).questions[0]


@pytest.mark.parametrize(("spec", "rule", "mean", "notes"), [
    ({"type": "binary", "epsilon": 1.0}, NORM_SUB, None, []),
    ({"type": "categorical", "epsilon": 1.0, "options": ["a", "b", "c"]}, NORM_SUB, None, []),
    ({"type": "ordinal", "epsilon": 1.0, "options": OPTIONS, "mechanism": "grr"}, NORM_SUB,
     MEAN_SCORE, [score_note(4)]),
    ({"type": "ordinal", "epsilon": 1.0, "options": OPTIONS, "mechanism": "ordinal_exp"}, EM,
     MEAN_SCORE, [score_note(4)]),
    ({"type": "integer", "epsilon": 1.0, "min": 0, "max": 9}, NORM_SUB, "mean", []),
    ({"type": "multiselect", "epsilon": 4.0, "options": ["a", "b", "c"]}, CLIP,
     MEAN_SELECTED, [SHARES_NOTE]),
    ({"type": "categorical", "disclosed": True, "options": ["a", "b"]}, NORM_SUB, None,
     [DISCLOSED_NOTE]),
])
def test_each_type_has_one_meaning(spec, rule, mean, notes) -> None:
    q = question(**spec)
    meaning = estimand(q, mechanism_for(q))
    assert (meaning.consistency, meaning.mean) == (rule, mean)
    assert set(notes) <= set(meaning.notes)
    assert meaning.overlapping == (rule == CLIP)
    shares = np.array([0.7, -0.1, 1.2])
    if rule == CLIP:
        assert list(meaning.consistent(shares)) == [0.7, 0.0, 1.0]
    elif rule == NORM_SUB:
        assert meaning.consistent(shares).sum() == pytest.approx(1.0)


def test_the_plain_mean_score_of_grr_has_the_variance_it_states() -> None:
    """The respondents' answers fixed, R = 400 reruns of the randomization: the mean score's
    estimates average the true mean score and their sample variance matches the variance the
    estimate states at the truth. Bounds: the mean within 5 standard errors of the average
    (two-sided 6e-7); the variance ratio inside the χ²_{R-1}/(R-1) quantiles at 1e-6 each side."""
    q = question(type="ordinal", epsilon=1.5, options=OPTIONS, mechanism="grr")
    mechanism = mechanism_for(q)
    rng = np.random.default_rng(40)
    answers = rng.choice(4, size=3000, p=[0.1, 0.2, 0.3, 0.4])
    truth = float((answers + 1).mean())
    means, variances = [], []
    for _ in range(400):
        aggregate = mechanism.aggregate_many(mechanism.perturb_many(answers, rng))
        result = plain_estimate(q, mechanism, aggregate)
        means.append(result.mean.estimate)
        variances.append(result.mean.std_error ** 2)
        assert result.mean.variance_bound >= result.mean.std_error ** 2
    means = np.array(means)
    # the randomization's variance at the truth: Σ_x n_x Var_x(s·z)/n² (shared/estimand.py)
    channel, inverse = mechanism.index_channel()
    scores = np.arange(1, 5, dtype=float)
    d = inverse.T @ scores
    counts = np.bincount(answers, minlength=4)
    exact = float(counts @ (channel @ (d * d) - scores * scores)) / answers.size ** 2
    r = means.size
    assert abs(means.mean() - truth) <= 5 * (exact / r) ** 0.5
    ratio = means.var(ddof=1) / exact
    low, high = stats.chi2.ppf([1e-6, 1 - 1e-6], r - 1) / (r - 1)
    assert low <= ratio <= high
    # the plug-in (at the consistent distribution) is near the exact variance: within 10%
    assert np.mean(variances) == pytest.approx(exact, rel=0.1)


def test_a_huge_grr_ordinal_gets_no_mean_score_rather_than_a_memory_error() -> None:
    """The mean score of index reports needs the dense k x k channel: past 2^24 cells (here
    k = 4,200) the row is left out instead of allocating it (simulate's fuzz test found an
    ordinal of 65,536 options asking for 32 GiB)."""
    from ldpsurvey.shared.estimand import MAX_SCORE_CHANNEL, plain_estimate

    k = 4200
    assert k * k > MAX_SCORE_CHANNEL
    survey = Survey.from_dict({"id": "big", "title": "big", "version": 1, "questions": [
        {"id": "o", "text": "o", "type": "ordinal", "epsilon": 1.0, "mechanism": "grr",
         "options": [f"o{i}" for i in range(k)]}]})
    question = survey.questions[0]
    mechanism = mechanism_for(question)
    aggregate = mechanism.new_aggregate()
    for report in mechanism.perturb_many(np.arange(50) % k, np.random.default_rng(1)):
        aggregate.add(report)
    result = plain_estimate(question, mechanism, aggregate)
    assert result.mean is None
