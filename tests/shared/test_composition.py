"""The composition bounds equal their closed forms, and the smaller one is the one reported."""

import math

import pytest
from ldpsurvey.shared.composition import (
    advanced_epsilon,
    compose,
    group_epsilon,
    repeated,
)
from ldpsurvey.shared.errors import CompositionError


@pytest.mark.parametrize("eps,k,delta", [(0.1, 50, 1e-6), (1.0, 10, 1e-5), (0.5, 200, 1e-9)])
def test_equal_epsilons_match_the_theorem_closed_form(eps, k, delta):
    closed = math.sqrt(2 * k * math.log(1 / delta)) * eps + k * eps * (math.exp(eps) - 1)
    assert repeated(eps, k, delta).advanced == pytest.approx(closed, rel=1e-12)


def test_one_report_is_best_stated_as_the_plain_epsilon():
    c = repeated(1.0, 1)
    assert c.basic == 1.0
    assert c.best == "basic" and c.best_epsilon == 1.0 and c.best_delta == 0.0


def test_many_small_reports_are_best_stated_by_the_advanced_bound():
    c = repeated(0.05, 1000, 1e-6)
    assert c.advanced < c.basic
    assert c.best == "advanced" and c.best_delta == 1e-6


def test_heterogeneous_form_reduces_to_the_sum_of_squares():
    eps = [0.1, 0.2, 0.4]
    expected = math.sqrt(2 * math.log(1e6) * sum(e * e for e in eps)) + sum(
        e * math.expm1(e) for e in eps)
    assert advanced_epsilon(eps, 1e-6) == pytest.approx(expected, rel=1e-12)
    assert compose(eps).basic == pytest.approx(0.7)


@pytest.mark.parametrize("bad", [[-0.1], [float("nan")], [float("inf")], ["1"]])
def test_bad_epsilons_are_refused(bad):
    with pytest.raises(CompositionError):
        compose(bad)


@pytest.mark.parametrize("delta", [0, 1, -1e-3, 2.0])
def test_bad_delta_is_refused(delta):
    with pytest.raises(CompositionError):
        compose([1.0], delta)


def test_group_privacy_scales_linearly():
    assert group_epsilon(0.5, 4) == 2.0
    with pytest.raises(CompositionError):
        group_epsilon(0.5, 0)


def test_an_epsilon_whose_exponential_overflows_gives_an_infinite_advanced_bound_not_an_error():
    """e^ε overflows a float above ε ≈ 709.78: math.expm1 raised OverflowError and `respond`
    crashed in its budget check. The advanced bound is then useless: infinite, and the plain
    sum is the total (JSON says null, never a bare Infinity)."""
    from ldpsurvey.shared.composition import advanced_epsilon, compose
    assert advanced_epsilon([800.0, 1.0]) == float("inf")
    total = compose([800.0, 1.0])
    assert total.best == "basic" and total.best_epsilon == 801.0
    assert total.to_dict()["advanced_epsilon"] is None
    assert compose([700.0]).to_dict()["advanced_epsilon"] > 700.0
