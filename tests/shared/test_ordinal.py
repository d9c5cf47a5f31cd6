"""The distance-aware ordinal mechanism: best provable base, exact sampler, inversion + EM
estimates of the distribution, groups and the mean score, and `auto` on ordinal questions.

Tolerances (false-alarm rate ALPHA per check): over R runs the mean estimate is within
Z·S/sqrt(R) of the truth (t-test); (R-1)·S²/σ² ~ χ²(R-1) puts S²/σ² in the χ² band; a report
frequency from n draws is within Z·sqrt(p(1-p)/n) of its channel probability.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from ldpsurvey.shared.errors import PrivacyCheckError, ReportError, SurveyError
from ldpsurvey.shared.exact import channel_ratio, exp_lower
from ldpsurvey.shared.mechanisms import candidates, choose_mechanism
from ldpsurvey.shared.mechanisms.grr import GRR
from ldpsurvey.shared.mechanisms.ordinal_exp import (
    OrdinalExp,
    best_base,
    channel,
    em_distribution,
)
from ldpsurvey.shared.survey import Survey
from scipy import stats
from support.sources import ScriptedSource, SeededSource

ALPHA = 1e-6
Z = float(stats.norm.isf(ALPHA / 2))
LIKERT = ("strongly disagree", "disagree", "neutral", "agree", "strongly agree")


def scale(k: int) -> tuple[str, ...]:
    return tuple(f"level-{i}" for i in range(k))


# --- privacy: the best base, proven --------------------------------------------------------


@pytest.mark.parametrize("k", [2, 3, 5, 11, 64, 65, 200])
@pytest.mark.parametrize("epsilon", [0.1, 1.0, math.log(3), 5.0])
def test_worst_ratio_is_base_to_the_k_minus_1(k: int, epsilon: float) -> None:
    mech = OrdinalExp(epsilon, scale(k))
    loss = mech.privacy_loss()
    assert loss is not None and loss.ratio == mech.base ** (k - 1)
    assert loss.ratio <= exp_lower(Fraction(epsilon))
    # The best base: realized ε within a millionth of the claim, decided at the boundary.
    assert epsilon * (1 - 1e-6) <= mech.realized_epsilon() <= epsilon
    assert not loss.within(mech.realized_epsilon() * (1 - 1e-9))


@pytest.mark.parametrize("k, epsilon", [(3, 1.0), (7, 1.0), (17, 1e-6), (40, 50.0),
                                        (64, 0.3), (100, 1.0)])
def test_closed_form_matches_the_explicit_channel(k: int, epsilon: float) -> None:
    """The module docstring's proof, checked: the explicit k x k channel's worst ratio is
    exactly b^(k-1) (past k = 16 the build-time check is the closed form, so this checks it)."""
    mech = OrdinalExp(epsilon, scale(k))
    channel = mech.channel()
    assert all(sum(row) == 1 for row in channel)
    assert channel_ratio(channel) == mech.base ** (k - 1)


def test_base_beats_the_textbook_exponential_mechanism() -> None:
    """ε/(k-1) in the exponent, not the generic ε/(2Δ)."""
    b = best_base(1.0, 5)
    assert float(b) == pytest.approx(math.exp(1.0 / 4), rel=1e-9)
    assert float(b) > math.exp(1.0 / 8)


class _GreedyOrdinal(OrdinalExp):
    name = "greedy_ordinal"

    def __init__(self, epsilon: float, labels: Any, **kwargs: Any) -> None:
        super(OrdinalExp, self).__init__(epsilon, labels, **kwargs)
        self.base = best_base(epsilon, self.k) * (1 + Fraction(1, 2**20))
        self._certify()


@pytest.mark.parametrize("k", [5, 100])
def test_a_base_a_hair_too_large_is_refused(k: int) -> None:
    with pytest.raises(PrivacyCheckError, match="exceeds"):
        _GreedyOrdinal(1.0, scale(k))


# --- the samplers ------------------------------------------------------------------------------


def test_sampler_maps_draws_through_the_exact_cdf() -> None:
    """Scripted draws at every boundary of the integer weights land on the right option."""
    mech = OrdinalExp(1.0, scale(4))
    for x in range(4):
        weights = [mech._weights[abs(x - y)] for y in range(4)]
        assert sum(weights) * mech.channel()[x][0] == weights[0]
        edge = 0
        for y, w in enumerate(weights):
            for draw in (edge, edge + w - 1):
                source = ScriptedSource([draw])
                assert mech.perturb_index(x, source) == y
                assert source.requests == [sum(weights)] and source.exhausted
            edge += w


@pytest.mark.parametrize("path", ["secure", "vectorized"])
def test_samplers_match_the_channel(path: str) -> None:
    mech = OrdinalExp(1.0, LIKERT)
    x = 1
    if path == "secure":
        n = 20_000
        source = SeededSource(12)
        reports = np.array([mech.validate_report(mech.perturb(LIKERT[x], source))
                            for _ in range(n)])
    else:
        n = 300_000
        reports = mech.perturb_many(np.full(n, x), np.random.default_rng(3))
    observed = np.bincount(reports, minlength=5)
    expected = np.array([float(p) for p in mech.channel()[x]]) * n
    assert stats.chisquare(observed, expected).pvalue > ALPHA


def test_report_validation() -> None:
    mech = OrdinalExp(1.0, LIKERT)
    assert mech.validate_report(4) == 4
    for bad in (5, -1, True, 2.0, "2", None, [2]):
        with pytest.raises(ReportError):
            mech.validate_report(bad)


# --- estimation ---------------------------------------------------------------------------------

N = 2000
RUNS = 400


def _band(runs: int) -> tuple[float, float]:
    df = runs - 1
    return float(stats.chi2.ppf(ALPHA / 2, df) / df), float(stats.chi2.isf(ALPHA / 2, df) / df)


def _per_answer_variance(mech: OrdinalExp, w: np.ndarray) -> np.ndarray:
    """Var of w·f̂ with one report per answer x, from first principles: the report counts of one
    respondent with answer x have covariance diag(a_x) - a_x a_x^T; w·f̂ = (w^T M)·c/n."""
    a = channel(mech.k, mech.epsilon).dense()
    u = w @ np.linalg.inv(a.T)
    return np.array([u @ (np.diag(a[x]) - np.outer(a[x], a[x])) @ u for x in range(mech.k)])


@pytest.mark.parametrize("epsilon", [1.0, 3.0])
def test_inversion_is_unbiased_with_the_formula_variance(epsilon: float) -> None:
    mech = OrdinalExp(epsilon, LIKERT, groups={"agree": (3, 4)})
    counts = np.array([200, 300, 500, 600, 400])
    answers = np.repeat(np.arange(5), counts)
    truth = counts / N
    scores = np.arange(1, 6, dtype=float)
    rng = np.random.default_rng(int(epsilon * 100))
    cats, grp, means, mean_se, covered = [], [], [], [], []
    for _ in range(RUNS):
        est = mech.estimate(mech.aggregate_many(mech.perturb_many(answers, rng)))
        cats.append([c.estimate for c in est.categories])
        grp.append(est.groups[0].estimate)
        means.append(est.mean.estimate)
        mean_se.append(est.mean.std_error)
        covered.append(est.mean.ci_low <= scores @ truth <= est.mean.ci_high)
    lo, hi = _band(RUNS)
    checks = ((np.array(cats), np.eye(5)), (np.array(grp)[:, None], np.array([[0, 0, 0, 1, 1]])),
              (np.array(means)[:, None], scores[None, :]))
    for values, w in checks:
        target = w @ truth
        se = values.std(axis=0, ddof=1) / math.sqrt(RUNS)
        assert np.all(np.abs(values.mean(axis=0) - target) <= Z * se)
        sigma2 = np.array([_per_answer_variance(mech, row.astype(float)) @ truth / N
                           for row in np.atleast_2d(w)])
        ratio = values.var(axis=0, ddof=1) / sigma2
        assert np.all((lo <= ratio) & (ratio <= hi)), ratio
    # Reported std errors are calibrated and the mean's interval covers at about 95%.
    assert lo <= np.var(means, ddof=1) / np.mean(np.square(mean_se)) <= hi
    rate = np.mean(covered)
    assert abs(rate - 0.95) <= Z * math.sqrt(0.95 * 0.05 / RUNS) + 0.01


def test_em_recovers_the_truth_from_exact_frequencies() -> None:
    chan = channel(7, 1.0)
    truth = np.array([0.05, 0.1, 0.3, 0.0, 0.25, 0.2, 0.1])
    assert np.allclose(em_distribution(chan, chan.dense().T @ truth), truth, atol=1e-9)


def test_em_is_the_maximum_likelihood_when_inversion_goes_negative() -> None:
    """Observed frequencies no distribution explains (inversion has a negative entry): EM's
    answer is a distribution whose likelihood beats the Norm-Sub projection's and any nearby
    perturbation's."""
    chan = channel(5, 1.0)
    a = chan.dense()
    observed = np.array([0.4, 0.05, 0.1, 0.05, 0.4])
    assert np.linalg.solve(a.T, observed).min() < 0
    f = em_distribution(chan, observed, np.full(5, 0.2))
    assert np.all(f >= 0) and math.isclose(f.sum(), 1.0)

    def loglik(g: np.ndarray) -> float:
        return float(observed @ np.log(a.T @ g))

    rng = np.random.default_rng(1)
    for _ in range(200):
        g = np.abs(f + rng.normal(0, 0.01, 5))
        assert loglik(g / g.sum()) <= loglik(f) + 1e-9


def test_estimate_document() -> None:
    mech = OrdinalExp(1.0, LIKERT, question_id="q", groups={"agree": (3, 4)})
    rng = np.random.default_rng(0)
    agg = mech.aggregate_many(mech.perturb_many(rng.integers(0, 5, 3000), rng))
    doc = json.loads(json.dumps(mech.estimate(agg).to_dict(), allow_nan=False))
    assert doc["consistent_method"] == "em"
    assert [c["value"] for c in doc["categories"]] == list(LIKERT)
    assert math.isclose(sum(c["consistent"] for c in doc["categories"]), 1.0)
    assert all(c["consistent"] >= 0 for c in doc["categories"])
    assert doc["groups"][0]["name"] == "agree"
    mean = doc["mean"]
    assert mean["ci_low"] < mean["estimate"] < mean["ci_high"]
    assert mean["std_error"] ** 2 <= mean["variance_bound"]
    # The mean is the scores' dot product with the unbiased distribution.
    assert mean["estimate"] == pytest.approx(
        sum((i + 1) * c["estimate"] for i, c in enumerate(doc["categories"])))
    empty = mech.estimate(mech.new_aggregate()).to_dict()
    assert empty["mean"]["estimate"] is None and empty["categories"][0]["estimate"] is None
    restored = mech.aggregate_from_dict(json.loads(json.dumps(agg.to_dict())))
    assert mech.estimate(restored).to_dict() == mech.estimate(agg).to_dict()


# --- auto on ordinal questions --------------------------------------------------------------------


def test_auto_compares_the_mean_score_variance() -> None:
    """The criterion for ordinal questions is the worst-case variance of the mean score, for
    every candidate alike; GRR's is computed from its own channel the same way."""
    for k, epsilon in ((5, 0.5), (5, 4.0), (16, 1.0), (7, 2.0)):
        ranked = candidates("ordinal", k, epsilon)
        assert {name for _, name in ranked} == {"grr", "ordinal_exp"}
        for variance, name in ranked:
            cls = OrdinalExp if name == "ordinal_exp" else GRR
            assert variance == cls.mean_score_variance(k, epsilon)
        name, reason = choose_mechanism(SimpleNamespace(id="q", type="ordinal", k=k,
                                                        epsilon=epsilon))
        assert name == ranked[0][1] and "mean score" in reason
    # Low ε: the distance-aware mechanism wins; high ε on a short scale: GRR does.
    assert candidates("ordinal", 5, 0.5)[0][1] == "ordinal_exp"
    assert candidates("ordinal", 5, 4.0)[0][1] == "grr"


def test_grr_mean_variance_is_its_exact_channel_inverted() -> None:
    """Cross-check: GRR's criterion equals the first-principles formula on GRR's channel."""
    k, epsilon = 5, 1.0
    p, q = GRR.support_probabilities(k, epsilon)
    a = np.full((k, k), q) + (p - q) * np.eye(k)
    u = np.arange(1, k + 1) @ np.linalg.inv(a.T)
    worst = max(u @ (np.diag(a[x]) - np.outer(a[x], a[x])) @ u for x in range(k))
    assert GRR.mean_score_variance(k, epsilon) == pytest.approx(worst, rel=1e-9)


def test_ordinal_survey_question_resolves_auto() -> None:
    survey = Survey.from_dict({"id": "s", "title": "t", "version": 1, "questions": [
        {"id": "agree", "text": "Do you agree?", "type": "ordinal", "epsilon": 0.5,
         "options": list(LIKERT)}]})
    q = survey.questions[0]
    assert q.mechanism == "ordinal_exp" and "mean score" in q.mechanism_choice
    assert q.params["base"] == str(best_base(0.5, 5))


# --- the O(k) channel algebra against dense linear algebra -----------------------------------


@pytest.mark.parametrize("k, epsilon", [(2, 1e-6), (64, 1e-6), (1024, 1e-6), (1024, 50.0),
                                        (300, 1.0)])
def test_structured_inversion_reproduces_the_observed_frequencies(k: int, epsilon: float) -> None:
    """A^T·f̂ = observed, checked by the (well-conditioned) forward product, down to the
    smallest ε, where inverting the dense matrix would lose most digits."""
    chan = channel(k, epsilon)
    observed = np.random.default_rng(k).dirichlet(np.ones(k))
    f_hat = chan.invert(observed)
    scale = np.abs(f_hat).max()
    assert np.allclose(chan.dense().T @ f_hat, observed, rtol=0, atol=1e-13 * max(scale, 1))


@pytest.mark.parametrize("k, epsilon", [(2, 0.5), (5, 1.0), (7, 50.0), (40, 3.0), (120, 0.01)])
def test_structured_channel_matches_dense_inversion(k: int, epsilon: float) -> None:
    """f̂, the per-option variances and bounds, and any w·f̂ variance: the tridiagonal inverse
    and running sums agree with inverting the dense channel (well-conditioned cases)."""
    chan = channel(k, epsilon)
    a = chan.dense()
    assert np.allclose(a.sum(axis=1), 1.0)
    inverse = np.linalg.inv(a.T)
    rng = np.random.default_rng(k)
    observed = rng.dirichlet(np.ones(k))
    assert np.allclose(chan.invert(observed), inverse @ observed, rtol=1e-7)
    per_option = (inverse * inverse) @ a.T - np.eye(k)  # [v, x]: Var_x of f̂_v, one report
    f = rng.dirichlet(np.ones(k))
    assert np.allclose(chan.option_variances(f), per_option @ f, rtol=1e-6)
    assert np.allclose(chan.option_bounds, per_option.max(axis=1), rtol=1e-6)
    scores = np.arange(1, k + 1, dtype=float)
    u = scores @ inverse
    dense_mean = (u * u) @ a.T - scores**2
    assert np.allclose(chan.linear_variances(scores), dense_mean, rtol=1e-6)


@pytest.mark.parametrize("k, epsilon", [(2, 1.0), (5, 0.1), (30, 2.0), (64, 50.0)])
def test_grr_mean_score_variance_closed_form(k: int, epsilon: float) -> None:
    p, q = GRR.support_probabilities(k, epsilon)
    a = np.full((k, k), q) + (p - q) * np.eye(k)
    u = np.arange(1, k + 1) @ np.linalg.inv(a.T)
    worst = max(u @ (np.diag(a[x]) - np.outer(a[x], a[x])) @ u for x in range(k))
    assert GRR.mean_score_variance(k, epsilon) == pytest.approx(worst, rel=1e-7)


def test_ordinal_limit_is_declared_and_auto_respects_it() -> None:
    """Past `max_options` the distance-aware mechanism is neither built nor offered; GRR's
    closed form keeps `auto` O(k) at any k."""
    k = OrdinalExp.max_options + 1
    with pytest.raises(SurveyError, match="options"):
        Survey.from_dict({"id": "s", "title": "t", "version": 1, "questions": [
            {"id": "q", "text": "?", "type": "ordinal", "epsilon": 1.0,
             "mechanism": "ordinal_exp", "options": [f"o{i}" for i in range(k)]}]})
    assert "ordinal_exp" not in {name for _, name in candidates("ordinal", k, 1.0)}
    assert candidates("ordinal", 65536, 1.0)[0][1] == "grr"


@pytest.mark.parametrize("k", [2, 3, 16])
@pytest.mark.parametrize("epsilon", [20.0, 37.25, 50.0])
def test_variances_are_never_below_zero_at_large_epsilon(k: int, epsilon: float) -> None:
    """E[X²] - (E X)² nearly cancels when the report is almost the answer: the stated variances
    (worst case, mean score, plug-in) stay >= 0. At k = 2, ε = 37.25 rounding gave -2.2e-16 and
    `plan` crashed on the square root (found by the slow survey-definition fuzz test)."""
    chan = channel(k, epsilon)
    assert OrdinalExp.worst_case_variance(k, epsilon) >= 0
    assert OrdinalExp.mean_score_variance(k, epsilon) >= 0
    assert (chan.linear_variances(np.arange(1, k + 1, dtype=float)) >= 0).all()
    f = np.full(k, 1 / k)
    assert (chan.option_variances(f) >= 0).all()
    assert (chan.option_bounds >= 0).all()


def test_plan_of_a_near_deterministic_ordinal_question_is_a_result(tmp_path: Path) -> None:
    from click.testing import CliRunner
    from ldpsurvey.analyst.cli import cli

    path = tmp_path / "s.json"
    path.write_text(json.dumps({
        "id": "fuzz-0", "title": "Fuzzed", "version": 1, "series": "weekly",
        "questions": [{"id": "q0", "text": "A question?", "type": "ordinal", "epsilon": 37.25,
                       "mechanism": "grr", "options": ["o0", "o1"]}]}))
    result = CliRunner().invoke(cli, ["plan", str(path), "--margin", "1.0"])
    assert result.exit_code == 0, result.output
