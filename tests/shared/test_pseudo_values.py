"""Pseudo-values (contract 5): every mechanism with a linear debias gives each respondent an
unbiased estimate of their answer's indicators, and

- their mean IS today's simple-random-sample estimate (to float rounding), for every registered
  mechanism, every named design, the longitudinal layer and disclosed questions;
- their empirical variance (divisor n, i.e. the sample variance times (n − 1)/n) divided by n
  equals today's variance formula plus the sampling term f̂(1 − f̂)/n: today's variance of a
  pure protocol (and of the ordinal exponential mechanism) is the randomization's for a FIXED
  population (ldp-formulas.md: "for a population drawn at random add the sampling term
  π(1−π)/n"), while the spread of the pseudo-values also carries the answers' own spread. The
  named designs' variance already is the pseudo-values' (its λ̂(1 − λ̂)/(n c²) form), so there
  the two are equal. A disclosed question's shares have today's standard error 0 (exact among
  the respondents) and pseudo-values the answers' spread alone. Checked for every option with
  f̂ in [0, 1] (today's formula plugs in the clipped f̂).
- E[z | answer] = e_answer exactly: the channel times the pseudo-value map is the identity.
"""

from __future__ import annotations

import numpy as np
import pytest
from ldpsurvey.shared.errors import DesignError
from ldpsurvey.shared.mechanisms import DESIGNS, MECHANISMS, SET_MECHANISMS
from ldpsurvey.shared.mechanisms.channel_design import ChannelDesign
from ldpsurvey.shared.mechanisms.disclosed import Disclosed
from ldpsurvey.shared.mechanisms.geometric import Geometric
from ldpsurvey.shared.mechanisms.grr import GRR
from ldpsurvey.shared.mechanisms.longitudinal import Longitudinal
from support.mechanisms import build, fits

N = 4000
DESIGN_PARAMS = {
    "warner": {"p": "3/4"},
    "crosswise": {"prevalence": "1/4"},
    "forced_response": {"p_truth": "2/3"},
    "unrelated_question": {"p_truth": "2/3", "prevalence": "1/3"},
    "matrix": {"matrix": [["7/10", "3/10"], ["1/5", "4/5"]]},
}


def _mechanisms():
    found = []
    for name, cls in MECHANISMS.items():
        k = 2 if "binary" in cls.question_types and "categorical" not in cls.question_types \
            else 5
        if name == "geometric":
            k = 11
        if fits(cls, k):
            found.append(pytest.param(lambda cls=cls, k=k: build(cls, k, 1.5), id=name))
    for name, cls in DESIGNS.items():
        labels = (False, True)
        found.append(pytest.param(lambda cls=cls, name=name, labels=labels: cls(
            None, labels, params=DESIGN_PARAMS[name]), id=name))
    found.append(pytest.param(lambda: Longitudinal(GRR(2.0, ("a", "b", "c", "d")), 1.0),
                              id="longitudinal"))
    found.append(pytest.param(lambda: Disclosed(("a", "b", "c")), id="disclosed"))
    return found


def _answers(mechanism, rng: np.random.Generator) -> np.ndarray:
    k = mechanism.k
    truth = rng.dirichlet(np.full(k, 3.0)) if k < 50 else None
    return rng.choice(k, size=N, p=truth)


@pytest.mark.parametrize("make", _mechanisms())
def test_mean_is_todays_estimate_and_variance_adds_the_sampling_term(make) -> None:
    mechanism = make()
    rng = np.random.default_rng(35)
    answers = _answers(mechanism, rng)
    reports = mechanism.perturb_many(answers, rng)
    z = mechanism.pseudo_values(reports)
    today = mechanism.estimate(mechanism.aggregate_many(reports))
    if isinstance(mechanism, Geometric):
        assert z.shape == (N, 1)
        assert z.mean() == pytest.approx(today.mean.estimate, rel=1e-12, abs=1e-12)
        return
    assert z.shape == (N, mechanism.k)
    f_hat = np.array([c.estimate for c in today.categories])
    np.testing.assert_allclose(z.mean(axis=0), f_hat, rtol=1e-9, atol=1e-9)
    empirical = z.var(axis=0) / N  # divisor n: the sample variance × (n − 1)/n, over n
    todays = np.array([c.std_error for c in today.categories]) ** 2
    valid = (f_hat >= 0) & (f_hat <= 1)
    assert valid.any()
    sampling_term = 0.0 if isinstance(mechanism, ChannelDesign) else f_hat * (1 - f_hat) / N
    expected = todays + sampling_term
    np.testing.assert_allclose(empirical[valid], expected[valid], rtol=1e-7, atol=1e-14)


@pytest.mark.parametrize("make", _mechanisms())
def test_pseudo_values_are_unbiased_given_each_answer(make) -> None:
    """Σ_y P(y | x)·z(y) = e_x exactly, from the mechanism's channel (index reports), or by
    averaging many reports of one answer (support bits, geometric)."""
    mechanism = make()
    rng = np.random.default_rng(7)
    if mechanism.joint_reports == "index":
        channel, _ = mechanism.index_channel()
        identity = channel @ np.ascontiguousarray(mechanism.pseudo_values(
            np.arange(channel.shape[1])))
        np.testing.assert_allclose(identity, np.eye(mechanism.k), atol=1e-9)
        return
    k = mechanism.k
    for x in (0, k - 1):
        many = 40_000
        z = mechanism.pseudo_values(mechanism.perturb_many(np.full(many, x), rng))
        target = np.zeros(z.shape[1])
        if isinstance(mechanism, Geometric):
            target[0] = mechanism.low + x
        else:
            target[x] = 1.0
        se = z.std(axis=0) / np.sqrt(many)
        assert np.all(np.abs(z.mean(axis=0) - target) < 5 * se + 1e-12)


def test_location_pseudo_values_are_unbiased_and_average_to_the_estimate() -> None:
    """The location estimate is linear through the channel's inverse (issue 32): its
    pseudo-values are rows of that inverse, unbiased for every true cell, averaging to the
    report's estimate."""
    from ldpsurvey.shared.mechanisms.location import GeoExp, cell_label

    labels = [cell_label(r, c) for r in range(1, 4) for c in range(1, 4)]
    geo = GeoExp(10.0, labels, rows=3, cols=3, cell_km=1.0, epsilon_geo=1.0,
                 question_id="where")
    z = geo.pseudo_values(np.arange(9))
    np.testing.assert_allclose(geo.geo.dense @ z, np.eye(9), atol=1e-9)
    reports = np.array([0, 4, 8, 4, 4, 1])
    estimate = geo.estimate(geo.aggregate_many(reports))
    np.testing.assert_allclose(geo.pseudo_values(reports).mean(axis=0),
                               [c.estimate for c in estimate.categories], atol=1e-12)


def test_a_mechanism_without_a_linear_debias_is_refused_with_the_reason() -> None:
    class Nonlinear(GRR):
        joint_reports = ""

    with pytest.raises(DesignError, match="no linear debias"):
        Nonlinear(1.0, ("a", "b", "c"), question_id="where").pseudo_values(np.array([0, 1]))


@pytest.mark.parametrize("name", sorted(SET_MECHANISMS))
def test_multiselect_pseudo_values_are_todays_estimate_and_unbiased(name: str) -> None:
    """Multiselect mechanisms are pure per option: z_j = (1[report supports j] − q*)/(p* − q*)
    has expectation 1[j selected]; its mean is today's share estimate."""
    mechanism = SET_MECHANISMS[name](2.0, ["a", "b", "c", "d", "e"], max_selected=2)
    rng = np.random.default_rng(3)
    sets = np.zeros((N, 5), dtype=bool)
    sets[:, 0] = True
    sets[::2, 1] = True
    reports = mechanism.perturb_many(sets, rng)
    z = mechanism.pseudo_values(reports)
    today = mechanism.estimate(mechanism.aggregate_many(reports))
    np.testing.assert_allclose(z.mean(axis=0), [c.estimate for c in today.categories],
                               rtol=1e-9, atol=1e-9)
    many = 40_000
    one = np.zeros((many, 5), dtype=bool)
    one[:, [1, 3]] = True
    z = mechanism.pseudo_values(mechanism.perturb_many(one, rng))
    se = z.std(axis=0) / np.sqrt(many)
    assert np.all(np.abs(z.mean(axis=0) - [0, 1, 0, 1, 0]) < 5 * se)
