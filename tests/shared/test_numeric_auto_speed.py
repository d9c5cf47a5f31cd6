"""auto's choice of a mean mechanism on a wide grid is computed fast and is unchanged (issue 41).

PM's one-report variances are computed in closed form (`PiecewiseGrid.variances`) and its
certificate counts the hats a band covers whole instead of integrating each
(`PiecewiseGrid.loss`). Both must give exactly what the definitions give: the same floats as
float(variance(j)) for every grid value, the same exact worst ratio as integrating every
touched hat (`loss_by_hats`), and so the same choice with the same reason. The choices below
were computed by main before the change (bench/bench_numeric_auto.py prints the timings).
"""

from __future__ import annotations

import numpy as np
import pytest
from ldpsurvey.shared.mechanisms.numeric_auto import choose_mean_mechanism
from ldpsurvey.shared.mechanisms.piecewise import PiecewiseGrid, piecewise_grid

EPSILONS = (0.1, 0.25, 0.5, 0.61, 1.0, 2.0, 3.5, 4.0, 8.0)
D, P, H = "duchi", "piecewise", "hybrid"
# (k): auto's choice at each of EPSILONS averaged over the grid, and by the worst case
CHOSEN = {
    2: ([H] + [D] * 8, [H] + [D] * 8),
    3: ([H, D, D, D, D, P, P, P, P], [H, D, D, D] + [H] * 5),
    11: ([H, D, D, D, D, P, P, P, P], [H, D, D, D] + [H] * 5),
    101: ([H, D, D, D] + [P] * 5, [H, D, D, D] + [H] * 5),
    1001: ([H, D, D, D] + [P] * 5, [H, D, D, D] + [H] * 5),
    5001: ([H, D, D, D] + [P] * 5, [H, D, D, D] + [H] * 5),
}


@pytest.mark.parametrize("k", sorted(CHOSEN))
def test_the_choice_on_each_grid_is_unchanged(k: int) -> None:
    average, worst = CHOSEN[k]
    assert [choose_mean_mechanism(k, e).name for e in EPSILONS] == average
    assert [choose_mean_mechanism(k, e, worst_case=True).name for e in EPSILONS] == worst


@pytest.mark.parametrize("k", [2, 3, 5, 11, 101, 1001])
@pytest.mark.parametrize("epsilon", [0.05, 0.5, 1.0, 2.0, 4.0, 8.0, 12.0, 20.0])
def test_closed_form_variances_are_the_exact_ones_rounded(k: int, epsilon: float) -> None:
    grid = piecewise_grid(k, epsilon)
    exact = np.array([float(grid.variance(j)) for j in range(k)])
    assert np.array_equal(grid.variances(), exact)


@pytest.mark.parametrize("k", [2, 3, 5, 11, 101, 1001])
@pytest.mark.parametrize("epsilon", [0.05, 0.5, 1.0, 4.0, 8.0, 20.0])
@pytest.mark.parametrize("cells", [None, 4, 8])
def test_the_certificate_counting_covered_hats_is_the_one_integrating_them(
        k: int, epsilon: float, cells: int | None) -> None:
    """Also with fewer cells than the rule gives, so that bands cover no hat whole."""
    grid = piecewise_grid(k, epsilon)
    if cells is not None:
        grid = PiecewiseGrid(grid.a, grid.b, cells, k)
    assert grid.loss() == grid.loss_by_hats()


def test_a_band_outside_the_cells_is_refused_by_both() -> None:
    grid = piecewise_grid(11, 1.0)
    bad = PiecewiseGrid(grid.a, grid.b, grid.m, 11)
    object.__setattr__(bad, "width", bad.width + 1)  # a band past mQ at the top
    assert bad.loss() is None and bad.loss_by_hats() is None


@pytest.mark.parametrize("k", [2, 5, 101])
@pytest.mark.parametrize("epsilon", [0.05, 1.0, 8.0, 20.0])
def test_the_weights_integrate_every_touched_hat(k: int, epsilon: float) -> None:
    """The hats counted whole (`crossed`'s inner range) are those whose integral is H_i."""
    grid = piecewise_grid(k, epsilon)
    for j in range(k):
        low, high, first, last = grid.band(j)
        assert grid.touched(j) == {i: grid._cumulative(i, high) - grid._cumulative(i, low)
                                   for i in range(first, last + 1)}
