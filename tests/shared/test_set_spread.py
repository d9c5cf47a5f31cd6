"""The spread of set sizes the options' shares allow (shared/set_spread.py): the closed form
(the lower convex hull) equals a linear program over every distribution of allowed sets with
those shares, and lies between the true spread and the Bhatia-Davis bound."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from ldpsurvey.shared.set_spread import bhatia_davis, size_variance_bound
from scipy.optimize import linprog


def _largest_by_lp(shares: np.ndarray, low: int, high: int) -> float:
    """max Var|S| over distributions of sets of low..high options with these shares."""
    k = shares.size
    sets = [s for r in range(low, high + 1) for s in itertools.combinations(range(k), r)]
    a = np.zeros((k + 1, len(sets)))
    for i, s in enumerate(sets):
        a[list(s), i] = 1.0
        a[k, i] = 1.0
    res = linprog(-np.array([len(s) ** 2 for s in sets], dtype=float), A_eq=a,
                  b_eq=np.append(shares, 1.0), bounds=(0, None), method="highs")
    assert res.status == 0
    return float(-res.fun - shares.sum() ** 2)


@pytest.mark.parametrize("seed", range(6))
def test_the_closed_form_is_the_linear_program(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(40):
        k = int(rng.integers(2, 7))
        low = int(rng.integers(0, 2))
        high = int(rng.integers(max(low, 1), k + 1))
        sets = [s for r in range(low, high + 1) for s in itertools.combinations(range(k), r)]
        weights = rng.dirichlet(np.full(len(sets), rng.choice([0.05, 0.3, 1.0])))
        shares = np.zeros(k)
        for w, s in zip(weights, sets, strict=True):
            shares[list(s)] += w
        mu = shares.sum()
        true = sum(w * len(s) ** 2 for w, s in zip(weights, sets, strict=True)) - mu * mu
        bound = size_variance_bound(shares, low, high)
        assert bound == pytest.approx(_largest_by_lp(shares, low, high), abs=1e-6)
        assert true <= bound + 1e-9 <= bhatia_davis(mu, low, high) + 2e-9


def test_rare_options_spread_less_than_bhatia_davis_says() -> None:
    shares = [0.3, 0.05, 0.03, 0.02, 0.01]  # mean 0.41 of at most 3
    assert bhatia_davis(0.41, 0, 3) == pytest.approx(1.0619)
    assert size_variance_bound(shares, 0, 3) == pytest.approx(_largest_by_lp(
        np.array(shares), 0, 3), abs=1e-6)
    assert size_variance_bound(shares, 0, 3) == pytest.approx(0.5719)  # docs/multiselect.md


def test_equal_shares_reach_bhatia_davis_and_the_ends_do_not_vary() -> None:
    # equal shares: sizes only low or high, members uniform, is a set law with these shares
    assert size_variance_bound([0.4] * 5, 1, 4) == pytest.approx(bhatia_davis(2.0, 1, 4))
    assert size_variance_bound([0.0, 0.0, 0.0], 0, 2) == 0.0
    assert size_variance_bound([1.0, 1.0, 0.0], 0, 2) == 0.0  # everyone selects both
    # the first always, the other two together or not at all: sizes 1 or 3, half each
    assert size_variance_bound([1.0, 0.5, 0.5], 1, 3) == pytest.approx(1.0)
    assert size_variance_bound([1.0, 0.5, 0.5, 0.0], 1, 2) == pytest.approx(0.0)  # all size 2
