"""The named randomized-response designs (shared/mechanisms/rr_designs.py, channel_design.py).

- The exact ε each design proves at build equals its closed form, as an exact rational ratio.
- Estimates equal the textbook estimators and variance estimators on fixed counts (Warner 1965;
  Boruch's forced response; Greenberg et al.'s unrelated question; the crosswise model).
- Simulated (seeded numpy) estimates are unbiased and their variance is the closed form: each
  check is a z-test at |z| < 4.5 (two-sided false-alarm rate 7e-6 per check).
- The secure sampler draws the exact channel (a seeded injected source, chi-square test at a
  false-alarm rate of 1e-6).
- Surveys publish designs by name and parameters; ε is the exact one when left out; designs that
  are not differentially private are refused naming the design.
"""

from __future__ import annotations

import math
from fractions import Fraction as F

import numpy as np
import pytest
from ldpsurvey.analyst.audit import audit
from ldpsurvey.shared.aggregates import CountAggregate
from ldpsurvey.shared.errors import SurveyError
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.mechanisms.channel_design import Matrix
from ldpsurvey.shared.mechanisms.rr_designs import (
    NOT_PRIVATE,
    Crosswise,
    ForcedResponse,
    UnrelatedQuestion,
    Warner,
)
from ldpsurvey.shared.survey import Survey
from support.sources import SeededSource

YES_NO = (False, True)
Z = 4.5


def survey_of(*questions: dict) -> Survey:
    return Survey.from_dict({"id": "s", "title": "t", "version": 1, "questions": list(questions)})


def binary_q(mechanism: str, params: dict, **extra: object) -> dict:
    return {"id": "q", "text": "Q?", "type": "binary", "mechanism": mechanism,
            "params": params, **extra}


# --- exact ε = closed form -------------------------------------------------------------------


@pytest.mark.parametrize(("p", "q1", "q0"), [
    (F(2, 3), F(1, 6), F(1, 6)), (F(3, 4), F(1, 5), F(1, 20)), (F(1, 2), F(1, 10), F(2, 5)),
    (F(9, 10), F(1, 100), F(9, 100))])
def test_forced_response_epsilon_is_its_closed_form(p: F, q1: F, q0: F) -> None:
    mech = ForcedResponse(None, YES_NO, params={"p_truth": str(p),
                                                "forced": {"yes": str(q1), "no": str(q0)}})
    loss = mech.privacy_loss()
    assert loss is not None and loss.ratio == max((p + q1) / q1, (p + q0) / q0)
    closed = max(math.log((p + q1) / q1), math.log((p + q0) / q0))
    assert mech.realized_epsilon() == pytest.approx(closed, rel=1e-12)
    assert mech.epsilon >= closed - 1e-15 and mech.epsilon == pytest.approx(closed, rel=1e-12)


@pytest.mark.parametrize("p", [F(7, 10), F(1, 4), F(99, 100)])
def test_warner_and_crosswise_epsilon(p: F) -> None:
    ratio = max(p / (1 - p), (1 - p) / p)
    assert Warner(None, YES_NO, params={"p": str(p)}).privacy_loss().ratio == ratio
    assert Crosswise(None, YES_NO, params={"prevalence": str(p)}).privacy_loss().ratio == ratio


def test_unrelated_question_epsilon() -> None:
    p, pi = F(3, 5), F(1, 3)
    mech = UnrelatedQuestion(None, YES_NO, params={"p_truth": str(p), "prevalence": str(pi)})
    q1, q0 = (1 - p) * pi, (1 - p) * (1 - pi)
    assert mech.privacy_loss().ratio == max((p + q1) / q1, (p + q0) / q0)
    cat = UnrelatedQuestion(None, ("a", "b", "c"), params={
        "p_truth": "1/2", "prevalence": {"a": "1/2", "b": "1/3", "c": "1/6"}})
    # the rarest innocuous answer is the most revealing: (1/2 + 1/12)/(1/12) = 7
    assert cat.privacy_loss().ratio == 7


def test_matrix_epsilon_is_the_worst_column_ratio() -> None:
    rows = [["1/2", "1/4", "1/4"], ["1/8", "3/8", "1/2"]]
    mech = Matrix(None, ("a", "b"), params={"matrix": rows})
    assert mech.privacy_loss().ratio == 4  # column 0: (1/2)/(1/8)
    assert mech.params() == {"matrix": rows}


# --- closed-form estimators and variances ------------------------------------------------------


def binary_estimate(mech, yes: int, n: int):
    agg = CountAggregate(2)
    agg.counts[:] = [n - yes, yes]
    agg.n = n
    return mech.estimate(agg).categories[1]


@pytest.mark.parametrize(("mech", "estimator", "slope"), [
    (Warner(None, YES_NO, params={"p": "7/10"}), lambda lam: (lam + 0.7 - 1) / (2 * 0.7 - 1),
     2 * 0.7 - 1),
    (Crosswise(None, YES_NO, params={"prevalence": "1/4"}),
     lambda lam: (lam + 0.25 - 1) / (2 * 0.25 - 1), 2 * 0.25 - 1),
    (ForcedResponse(None, YES_NO, params={"p_truth": "3/4", "forced": {"yes": "1/5",
                                                                        "no": "1/20"}}),
     lambda lam: (lam - 0.2) / 0.75, 0.75),
    (UnrelatedQuestion(None, YES_NO, params={"p_truth": "3/5", "prevalence": "1/3"}),
     lambda lam: (lam - 0.4 / 3) / 0.6, 0.6),
])
def test_estimates_match_the_textbook_estimators(mech, estimator, slope: float) -> None:
    n, yes = 2000, 713
    lam = yes / n
    row = binary_estimate(mech, yes, n)
    assert row.estimate == pytest.approx(estimator(lam), rel=1e-12)
    # the variance estimator λ̂(1 - λ̂) / (n · slope²) (Warner: slope 2p - 1; forced response and
    # unrelated question: slope p_truth)
    assert row.std_error ** 2 == pytest.approx(lam * (1 - lam) / (n * slope ** 2), rel=1e-10)
    assert row.variance_bound == pytest.approx(0.25 / (n * slope ** 2), rel=1e-10)


def test_categorical_forced_response_inverts_the_channel() -> None:
    mech = ForcedResponse(None, ("a", "b", "c"), params={
        "p_truth": "1/2", "forced": {"a": "1/4", "b": "1/8", "c": "1/8"}})
    counts = np.array([500, 300, 200])
    agg = CountAggregate(3)
    agg.counts[:] = counts
    agg.n = 1000
    est = mech.estimate(agg)
    lam = counts / 1000
    want = (lam - np.array([0.25, 0.125, 0.125])) / 0.5  # Boruch: (λ̂_j - q_j)/p
    assert [c.estimate for c in est.categories] == pytest.approx(want.tolist(), rel=1e-12)
    want_var = lam * (1 - lam) / (1000 * 0.25)
    assert [c.std_error ** 2 for c in est.categories] == pytest.approx(want_var.tolist())


def test_worst_case_bound_is_the_maximum_over_the_simplex() -> None:
    mech = Matrix(None, ("a", "b", "c"), params={"matrix": [
        ["1/2", "1/4", "1/4"], ["1/4", "1/2", "1/4"], ["1/6", "1/6", "2/3"]]})
    grid = [(i / 60, j / 60, 1 - (i + j) / 60) for i in range(61) for j in range(61 - i)]
    for a in range(3):
        m = mech._m_inv[a]
        brute = max(float((m * m) @ (mech._a.T @ np.array(f))) - f[a] ** 2 for f in grid)
        assert brute <= mech._worst_variance(m, [a]) + 1e-12
        assert mech._worst_variance(m, [a]) <= brute + 1e-3  # the grid's resolution


# --- simulation: unbiased, closed-form variance ----------------------------------------------


@pytest.mark.parametrize("mech", [
    Warner(None, YES_NO, params={"p": "3/4"}),
    ForcedResponse(None, YES_NO, params={"p_truth": "2/3", "forced": {"yes": "1/6",
                                                                       "no": "1/6"}}),
    UnrelatedQuestion(None, YES_NO, params={"p_truth": "1/2", "prevalence": "1/4"}),
    Crosswise(None, YES_NO, params={"prevalence": "1/5"}),
])
def test_simulated_estimates_are_unbiased_with_the_closed_form_variance(mech) -> None:
    rng = np.random.default_rng(20)
    n, reps, truth = 3000, 400, 0.3
    # respondents drawn from a population with share `truth` (the textbooks' sampling model)
    a = mech._a
    lam = (1 - truth) * a[0, 1] + truth * a[1, 1]
    slope = a[1, 1] - a[0, 1]
    variance = lam * (1 - lam) / (n * slope ** 2)
    estimates = np.array([mech.estimate(mech.aggregate_many(mech.perturb_many(
        (rng.random(n) < truth).astype(np.int64), rng))).categories[1].estimate
        for _ in range(reps)])
    assert abs(estimates.mean() - truth) < Z * math.sqrt(variance / reps)
    # the sample variance of `reps` normal draws: s²/σ² ~ χ²(reps - 1)/(reps - 1), sd √(2/reps)
    assert abs(estimates.var(ddof=1) / variance - 1) < Z * math.sqrt(2 / (reps - 1))


def test_secure_sampler_draws_the_exact_channel() -> None:
    from scipy.stats import chi2

    mech = ForcedResponse(None, ("a", "b", "c"), params={
        "p_truth": "1/2", "forced": {"a": "1/4", "b": "1/8", "c": "1/8"}})
    source = SeededSource(7)
    n = 20_000
    for x, label in enumerate(mech.labels):
        counts = np.bincount([mech.perturb(label, source) for _ in range(n)], minlength=3)
        expected = n * mech._a[x]
        stat = float(((counts - expected) ** 2 / expected).sum())
        assert stat < chi2.ppf(1 - 1e-6, df=2)


@pytest.mark.slow
def test_audit_finds_no_excess_privacy_loss() -> None:
    """analyst/audit.py on the secure path (family-wise false alarm 1e-6)."""
    mech = ForcedResponse(None, YES_NO, params={"p_truth": "1/2", "forced": {"yes": "1/4",
                                                                              "no": "1/4"}})
    results = audit(mech, alpha=1e-6)
    assert not any(r.refuted for r in results)
    assert max(r.epsilon_lower for r in results) >= 0.5 * mech.realized_epsilon()


# --- surveys ---------------------------------------------------------------------------------


def test_survey_publishes_forced_response_by_name_with_its_exact_epsilon() -> None:
    survey = survey_of(binary_q("forced_response", {"p_truth": 0.75,
                                                    "forced": {"yes": 0.2, "no": 0.05}}))
    q = survey.questions[0]
    assert q.params == {"p_truth": "3/4", "forced": {"no": "1/20", "yes": "1/5"}}
    assert q.epsilon == pytest.approx(math.log(16), rel=1e-12)  # (3/4 + 1/20)/(1/20)
    again = Survey.from_dict(survey.to_dict())
    assert again.sha256 == survey.sha256
    assert mechanism_for(again.questions[0]).realized_epsilon() <= again.questions[0].epsilon


def test_stated_epsilon_below_the_exact_one_is_refused() -> None:
    with pytest.raises(SurveyError, match=r"epsilon.*exact ε is 1\.09861"):
        survey_of(binary_q("warner", {"p": "3/4"}, epsilon=1.0))
    assert survey_of(binary_q("warner", {"p": "3/4"}, epsilon=1.5)).questions[0].epsilon == 1.5


@pytest.mark.parametrize("name", sorted(NOT_PRIVATE))
@pytest.mark.parametrize("extra", [{"epsilon": 1.0}, {}], ids=["with epsilon", "by name only"])
def test_designs_that_are_not_private_are_refused_by_name(name: str, extra: dict) -> None:
    """Also when published like the private designs, by name and parameters without an ε (it
    once failed on the missing ε instead of saying why the design is refused)."""
    with pytest.raises(SurveyError, match=f"{name}.*not differentially private") as info:
        survey_of(binary_q(name, {"p": "3/4"}, **extra))
    assert info.value.field == "questions.q.mechanism"


@pytest.mark.parametrize(("mechanism", "params", "message"), [
    ("forced_response", {"p_truth": "1/2", "forced": {"yes": "1/2", "no": "0"}},
     "'no' is never forced, so it proves"),
    ("matrix", {"matrix": [["1", "0"], ["1/2", "1/2"]]}, "impossible under some answer"),
    ("warner", {"p": "1/2"}, "would not depend on the answer"),
    ("forced_response", {"p_truth": "1/2", "forced": {"yes": "1/4", "no": "1/8"}},
     "sum to exactly 1"),
    ("warner", {"q": "1/3"}, "not a parameter of warner"),
    ("warner", {"p": "7/5"}, "between 0 and 1"),
    ("unrelated_question", {"p_truth": "1", "prevalence": "1/2"}, "must be below 1"),
    ("matrix", {"matrix": [["1/2", "1/2"], ["1/2", "1/2"]]}, "would not depend"),
])
def test_bad_design_parameters_are_refused(mechanism: str, params: dict, message: str) -> None:
    with pytest.raises(SurveyError, match=message):
        survey_of(binary_q(mechanism, params))


def test_auto_never_picks_a_design() -> None:
    q = survey_of({"id": "q", "text": "Q?", "type": "binary", "epsilon": 1.0}).questions[0]
    assert q.mechanism == "binary_rr"


def test_design_question_round_trips_through_the_server_path() -> None:
    survey = survey_of({"id": "q", "text": "Q?", "type": "categorical",
                        "options": ["a", "b", "c"], "mechanism": "unrelated_question",
                        "params": {"p_truth": "1/2", "prevalence": {"a": "1/2", "b": "1/4",
                                                                     "c": "1/4"}}})
    mech = mechanism_for(survey.questions[0])
    report = mech.perturb("b")
    assert mech.validate_report(report) in (0, 1, 2)
    agg = mech.new_aggregate()
    agg.add(report)
    assert mech.aggregate_from_dict(agg.to_dict()).n == 1


def test_plan_uses_the_designs_own_worst_case_variance() -> None:
    from ldpsurvey.analyst.plan.survey import plan_question

    q = survey_of(binary_q("forced_response", {"p_truth": "3/4", "forced": {
        "yes": "1/5", "no": "1/20"}})).questions[0]
    row = next(r for r in plan_question(q, margin=0.05).rows if r.configured)
    assert row.mechanism == "forced_response"
    # the noise given the answer, worst over answers: λ(1 - λ)/p² at λ = q_yes (answer no)
    # and at λ = p + q_yes (answer yes)
    assert row.variance_one == pytest.approx(max(0.2 * 0.8, 0.95 * 0.05) / 0.75 ** 2)


def test_plan_puts_warner_level_with_binary_rr_at_the_same_epsilon() -> None:
    """Warner with p = 3/4 is binary_rr's channel at ε = ln 3: the plan must say so."""
    from ldpsurvey.analyst.plan.survey import plan_question

    q = survey_of(binary_q("warner", {"p": "3/4"})).questions[0]
    rows = {r.mechanism: r for r in plan_question(q, margin=0.05).rows}
    assert rows["warner"].variance_one == pytest.approx(rows["binary_rr"].variance_one)
    assert rows["warner"].n == rows["binary_rr"].n


def test_the_sample_design_survey_has_its_designs_exact_epsilons() -> None:
    """shared/samples/designs.toml (docs/regression.md's walk-through): forced response
    p = 3/4, q = (1/6, 1/12) is ln 10; Warner p = 3/4 and the unrelated question p = 1/2,
    π = 1/2 are ln 3; the total ln 90 stays under `respond`'s default limit of 5."""
    import importlib.resources
    import tomllib

    resource = importlib.resources.files("ldpsurvey.shared") / "samples" / "designs.toml"
    survey = Survey.from_dict(tomllib.loads(resource.read_text(encoding="utf-8")))
    exact = {q.id: mechanism_for(q).privacy_loss() for q in survey.questions if not q.disclosed}
    assert {qid: loss.ratio for qid, loss in exact.items()} == {
        "cannabis": 10, "cheated": 3, "shoplift": 3}
    assert [q.id for q in survey.questions if q.disclosed] == ["age_band", "sex", "region"]
    assert survey.total_epsilon == pytest.approx(math.log(90), rel=1e-12)
    assert survey.total_epsilon < 5
