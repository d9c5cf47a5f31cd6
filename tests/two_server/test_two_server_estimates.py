"""Two-server estimators: unbiasedness, the variance formulas and interval coverage by
simulation (seeded numpy: respondents drawn i.i.d. from a known population, local
randomization, both servers' geometric noise).

Every statistical check has a two-sided false-alarm rate of 1e-6 (z = 4.89); with fixed
seeds they are deterministic, the rate says how lucky a seed would have to be. Tolerances come
from the variance formulas under test: the mean of R estimates is within z·sqrt(V/R) of the
truth; the sample variance of R roughly normal estimates is within z·V·sqrt(2/(R - 1)) of V;
the coverage of R intervals is within z·sqrt(c(1 - c)/R) of the confidence c.
"""

from __future__ import annotations

import math
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
from ldpsurvey.shared.errors import EstimateError
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.two_server.estimates import (
    _worst_case,
    crosstab_design,
    design_for,
    estimate_batch,
    estimate_crosstab,
    estimate_two_server,
    sum_design,
)
from ldpsurvey.shared.two_server.plans import (
    crosstab_noise_plan,
    question_noise_plan,
)
from scipy import stats
from support.two_server_stand_ins import (
    Batch,
    Entry,
    entries,
    question,
    question_data,
    simulate_cells,
    simulate_sums,
    survey_of,
)

Z = stats.norm.isf(1e-6 / 2)
REPS = 3000
CONF = 0.95
FIVE = ["a", "b", "c", "d", "e"]
PI5 = np.array([0.4, 0.25, 0.2, 0.1, 0.05])


def _check(estimates: np.ndarray, truth: float, variance: float, covered: np.ndarray) -> None:
    reps = estimates.size
    assert abs(estimates.mean() - truth) <= Z * math.sqrt(variance / reps), "biased"
    assert abs(estimates.var(ddof=1) - variance) <= Z * variance * math.sqrt(2 / (reps - 1)), \
        "variance formula"
    coverage = covered.mean()
    assert abs(coverage - CONF) <= Z * math.sqrt(CONF * (1 - CONF) / reps), f"coverage {coverage}"


def _true_variance(q, pi: np.ndarray, weights: np.ndarray, n: int) -> float:
    design = design_for(q)
    fn = design.functional(weights)
    return fn.variance(fn.per_report(pi), n, question_noise_plan(q).variance)


def _simulate_question(q, pi: np.ndarray, n: int, seed: int):
    design = design_for(q)
    plan = question_noise_plan(q)
    rng = np.random.default_rng(seed)
    totals = simulate_cells(rng, n, design.cell_probabilities(pi), plan, REPS,
                            count=design.kind == "count")
    return [estimate_two_server(q, e, CONF) for e in entries(totals, n, plan)]


@pytest.mark.parametrize(("local", "mechanism", "seed"),
                         [(None, None, 1), (2.0, "grr", 2), (1.0, "hr", 3)])
def test_categorical_shares_and_groups(local: float | None, mechanism: str | None,
                                       seed: int) -> None:
    q = question("categorical", 1.0, local, options=FIVE, groups={"ab": ["a", "b"]})
    if mechanism is not None:
        # Any index-report mechanism debiases the same way (HR's report space is larger than
        # k; surveys allow binary_rr, grr and ordinal_exp before a two-server upload).
        q = replace(q, mechanism=mechanism)
    n = 400
    ests = _simulate_question(q, PI5, n, seed)
    for a in (0, 2, 4):
        w = np.eye(5)[a]
        rows = [e.categories[a] for e in ests]
        _check(np.array([r.estimate for r in rows]), PI5[a], _true_variance(q, PI5, w, n),
               np.array([r.ci_low <= PI5[a] <= r.ci_high for r in rows]))
        bound = rows[0].variance_bound
        assert all(r.variance_bound == bound for r in rows)
        assert bound >= _true_variance(q, PI5, w, n) * (1 - 1e-12)
    group = [e.groups[0] for e in ests]
    truth = PI5[:2].sum()
    _check(np.array([g.estimate for g in group]), truth,
           _true_variance(q, PI5, np.array([1.0, 1, 0, 0, 0]), n),
           np.array([g.ci_low <= truth <= g.ci_high for g in group]))
    assert all(abs(sum(c.consistent for c in e.categories) - 1) < 1e-9 for e in ests[:20])


@pytest.mark.parametrize(("local", "seed"), [(None, 4), (0.5, 5)])
def test_yes_no_share(local: float | None, seed: int) -> None:
    q = question("binary", 0.5, local)
    pi = np.array([0.7, 0.3])
    n = 300
    ests = _simulate_question(q, pi, n, seed)
    yes = [e.categories[1] for e in ests]
    _check(np.array([r.estimate for r in yes]), 0.3, _true_variance(q, pi, np.eye(2)[1], n),
           np.array([r.ci_low <= 0.3 <= r.ci_high for r in yes]))
    # Complementary shares: the "no" estimate is 1 - "yes" exactly (one released total).
    assert all(abs(e.categories[0].estimate + e.categories[1].estimate - 1) < 1e-12
               for e in ests)


def test_ordinal_mean_score() -> None:
    q = question("ordinal", 1.0, 1.0, options=FIVE, mechanism="ordinal_exp")
    n = 500
    ests = _simulate_question(q, PI5, n, 6)
    scores = np.arange(1, 6, dtype=float)
    truth = float(scores @ PI5)
    means = [e.mean for e in ests]
    _check(np.array([m.estimate for m in means]), truth, _true_variance(q, PI5, scores, n),
           np.array([m.ci_low <= truth <= m.ci_high for m in means]))
    assert means[0].variance_bound >= _true_variance(q, PI5, scores, n)


def test_without_local_randomization_the_first_term_is_f_one_minus_f() -> None:
    q = question("categorical", 1.0, options=FIVE)
    design = design_for(q)
    for a in range(5):
        fn = design.functional(np.eye(5)[a])
        assert fn.per_report(PI5) == pytest.approx(PI5[a] * (1 - PI5[a]))
        assert fn.worst_per_report() == pytest.approx(0.25)
        assert fn.noise == pytest.approx(1.0)
    # The reference's example: n = 1,000, ε = 1, histogram: s.e. of the noise alone 0.0040.
    plan = question_noise_plan(q)
    assert math.sqrt(2 * plan.variance) / 1000 == pytest.approx(0.0040, abs=5e-5)


@pytest.mark.parametrize(("local", "seed"), [(None, 7), (2.0, 8)])
def test_integer_mean_is_unbiased_and_covers_conservatively(local: float | None,
                                                            seed: int) -> None:
    q = question("integer", 1.0, local, min=0, max=10)
    values = np.arange(0, 11)
    probs = np.array([5, 1, 1, 1, 1, 1, 1, 1, 1, 1, 6], dtype=float)
    probs /= probs.sum()
    truth = float(values @ probs)
    n = 300
    design = sum_design(q)
    plan = question_noise_plan(q)
    assert plan.sensitivity == design.sensitivity
    rng = np.random.default_rng(seed)
    local_mech = mechanism_for(q) if local is not None else None
    totals = simulate_sums(rng, values, probs, n, plan, REPS, design.offset, local_mech)
    means = [estimate_two_server(q, Entry([int(t)], n, plan), CONF).mean for t in totals]
    est = np.array([m.estimate for m in means])
    pop_var = float(values**2 @ probs) - truth**2
    variance = (pop_var + design.local_variance) / n + 2 * plan.variance / n**2
    assert abs(est.mean() - truth) <= Z * math.sqrt(variance / REPS)
    assert abs(est.var(ddof=1) - variance) <= Z * variance * math.sqrt(2 / (REPS - 1))
    # Bhatia-Davis makes the plug-in an upper bound: coverage at least the level.
    coverage = np.mean([m.ci_low <= truth <= m.ci_high for m in means])
    assert coverage >= CONF - Z * math.sqrt(CONF * (1 - CONF) / REPS)
    assert all(m.std_error**2 >= variance * 0.9 for m in means[:50])
    assert means[0].variance_bound >= variance


def test_crosstab_cells_with_local_randomization() -> None:
    survey = survey_of([question_data("categorical", 1.0, 2.0, qid="r", options=["x", "y", "z"]),
                        question_data("binary", 1.0, 2.0, qid="c")], [["r", "c"]])
    rows, cols = survey.questions
    spec = survey.crosstabs[0]
    plan = crosstab_noise_plan(survey, spec)
    assert plan.sensitivity == 2 and plan.epsilon == 1.0
    joint = np.array([[0.3, 0.1], [0.05, 0.25], [0.2, 0.1]])
    design = crosstab_design(rows, cols)
    n = 800
    rng = np.random.default_rng(9)
    totals = simulate_cells(rng, n, design.cell_probabilities(joint.ravel()), plan, REPS)
    ests = [estimate_crosstab(rows, cols, e, CONF) for e in entries(totals, n, plan)]
    for index in (0, 3, 5):
        fn = design.functional(np.eye(6)[index])
        variance = fn.variance(fn.per_report(joint.ravel()), n, plan.variance)
        truth = joint.ravel()[index]
        cells = [e.cells[index] for e in ests]
        _check(np.array([c.estimate for c in cells]), truth, variance,
               np.array([c.ci_low <= truth <= c.ci_high for c in cells]))
    assert ests[0].row_labels == ["x", "y", "z"] and ests[0].col_labels == [False, True]


def test_worst_case_is_the_maximum_over_the_simplex() -> None:
    rng = np.random.default_rng(10)
    for _ in range(30):
        k = int(rng.integers(2, 7))
        u = rng.uniform(0, 5, k)
        w = rng.uniform(-2, 2, k) if rng.random() < 0.5 else (rng.random(k) < 0.4) * 1.0
        u = np.maximum(u, w**2)  # a second moment is at least the squared mean
        bound = _worst_case(u, w)
        f = rng.dirichlet(np.ones(k) * 0.3, 20_000)
        values = f @ u - (f @ w) ** 2
        assert values.max() <= bound + 1e-9
        # Attained: on some edge the maximum is reached (dense search over pairs).
        t = np.linspace(0, 1, 2001)[:, None, None]
        grid = t * u[:, None] + (1 - t) * u[None, :] - (t * w[:, None] + (1 - t) * w[None, :])**2
        assert grid.max() == pytest.approx(bound, abs=1e-5)


def test_empty_batch_and_bad_entries() -> None:
    q = question("categorical", 1.0, options=FIVE, groups={"ab": ["a", "b"]})
    plan = question_noise_plan(q)
    empty = estimate_two_server(q, Entry([0] * 5, 0, plan))
    assert all(c.estimate is None for c in empty.categories)
    assert empty.groups[0].estimate is None
    with pytest.raises(EstimateError, match="totals"):
        estimate_two_server(q, Entry([1, 2, 3], 10, plan))
    with pytest.raises(EstimateError, match="count"):
        estimate_two_server(q, Entry([1] * 5, -1, plan))
    with pytest.raises(EstimateError, match="NoisePlan"):
        estimate_two_server(q, SimpleNamespace(noisy_sums=[1] * 5, n=3, noise_plan={}))
    integer = question("integer", 1.0, min=0, max=5)
    with pytest.raises(EstimateError, match="1 total"):
        estimate_two_server(integer, Entry([1, 2], 3, question_noise_plan(integer)))
    oue = replace(question("categorical", 1.0, 1.0, options=FIVE), mechanism="oue")
    with pytest.raises(EstimateError, match="one index"):
        design_for(oue)


def test_estimate_document_of_a_batch() -> None:
    qs = [question_data("binary", 1.0, qid="yes"),
          question_data("categorical", 0.5, 1.0, qid="pick", options=FIVE),
          question_data("integer", 2.0, qid="age", min=18, max=90)]
    survey = survey_of(qs, [["yes", "pick"]], version=3)
    plans = {q.id: question_noise_plan(q) for q in survey.questions}
    batch = Batch("s", 3, "b-1", {
        "yes": Entry([40], 100, plans["yes"], rejected=2),
        "pick": Entry([30, 20, 20, 20, 10], 100, plans["pick"], rejected=1),
        "age": Entry([2500], 100, plans["age"]),
        "crosstab:yes:pick": Entry([10] * 10, 100, crosstab_noise_plan(survey,
                                                                       survey.crosstabs[0]))})
    doc = estimate_batch(survey, batch, 0.9)
    assert doc["collection"] == "two-server" and doc["batch"] == "b-1"
    assert doc["rejected"] == 3 and doc["n_submissions"] == 100
    assert [q["question"] for q in doc["questions"]] == ["yes", "pick", "age"]
    assert doc["questions"][2]["mean"]["estimate"] == pytest.approx(18 + 25)
    assert doc["questions"][1]["local_epsilon"] == 1.0
    assert doc["questions"][1]["mechanism"] == "two-server+grr"
    assert len(doc["crosstabs"][0]["cells"]) == 10
    assert doc["guarantees"]["central"]["basic_epsilon"] == pytest.approx(1 + 0.5 + 2 + 0.5)
    with pytest.raises(EstimateError, match="not 's' v4"):
        estimate_batch(survey_of(qs, version=4), batch)
    with pytest.raises(EstimateError, match="crosstab"):
        estimate_batch(survey, Batch("s", 3, "b", {k: v for k, v in batch.entries.items()
                                                   if k != "crosstab:yes:pick"}))


@pytest.mark.parametrize(("qtype", "local", "mechanism"),
                         [("categorical", None, None), ("binary", None, None),
                          ("categorical", 1.0, "grr"), ("binary", 0.7, "binary_rr"),
                          ("ordinal", 1.5, "ordinal_exp"), ("categorical", 1.0, "hr")])
def test_vectorized_share_stats_match_the_functional(qtype, local, mechanism) -> None:
    options = {} if qtype == "binary" else {"options": FIVE}
    q = question(qtype, 1.0, local, **options)
    if mechanism == "hr":
        q = replace(q, mechanism="hr")
    design = design_for(q)
    rng = np.random.default_rng(11)
    f = rng.dirichlet(np.ones(design.k))
    per, worst, noise = design.option_stats(f)
    for a in range(design.k):
        fn = design.functional(np.eye(design.k)[a])
        assert per[a] == pytest.approx(fn.per_report(f), rel=1e-9, abs=1e-12)
        assert worst[a] == pytest.approx(fn.worst_per_report(), rel=1e-9)
        assert noise[a] == pytest.approx(fn.noise, rel=1e-9)
    # The crosstab's product structure against the dense Kronecker functional.
    other = question("binary", 1.0, 2.0, qid="other")
    joint = crosstab_design(q, other)
    g = rng.dirichlet(np.ones(joint.k))
    per, worst, noise = joint.option_stats(g)
    for cell in range(joint.k):
        fn = design_of_dense(joint).functional(np.eye(joint.k)[cell])
        assert per[cell] == pytest.approx(fn.per_report(g), rel=1e-9, abs=1e-12)
        assert worst[cell] == pytest.approx(fn.worst_per_report(), rel=1e-9)
        assert noise[cell] == pytest.approx(fn.noise, rel=1e-9)


def design_of_dense(design):
    """The same design with its channel spelled out densely (the slow, obvious form)."""
    return replace(design, factors=None, symmetric=None, channel=design.dense_channel(),
                   inverse=design.dense_inverse())


def test_many_options_cost_no_k_by_k_matrix() -> None:
    # 20,000 options with and without a local GRR: a dense k x k channel would be 3.2 GB.
    for local in (None, 2.0):
        q = question("categorical", 1.0, local, options=[f"o{i}" for i in range(20_000)])
        plan = question_noise_plan(q)
        est = estimate_two_server(q, Entry([1] * 20_000, 20_000, plan))
        assert len(est.categories) == 20_000
        assert est.categories[0].variance_bound >= est.categories[0].std_error ** 2


def test_mean_score_bound_on_a_long_scale() -> None:
    # 3,000 ordered options without ε0: the worst case of the mean score is Popoviciu's
    # ((k - 1)/2)², found on the upper hull without a k x k pair search.
    k = 3000
    q = question("ordinal", 1.0, options=[f"o{i}" for i in range(k)])
    plan = question_noise_plan(q)
    n = 1000
    est = estimate_two_server(q, Entry([0] * (k - 1) + [n], n, plan))
    scores_noise = 2 * plan.variance * float(np.sum(np.arange(1, k + 1) ** 2)) / n**2
    assert est.mean.variance_bound == pytest.approx(((k - 1) / 2) ** 2 / n + scores_noise)
    assert est.mean.estimate == pytest.approx(k)
