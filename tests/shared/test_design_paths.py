"""The estimators' two paths give the same numbers: post-stratification goes through the group
path (sums over (PSU, cell) groups, groups.py) and the same calibration written as linear
calibration on the cells' indicators (identical weights and residuals) through the row path;
linearized and replicate (JKn, bootstrap) variances, means and totals, a domain, to 1e-10."""

from __future__ import annotations

import numpy as np
import pytest
from ldpsurvey.shared.design import (
    Margin,
    build_replicates,
    calibrate,
    estimate,
    poststratify,
)
from ldpsurvey.shared.design.groups import cell_based
from support.design_data import fixture


@pytest.mark.parametrize("variance", ["linearized", "jkn", "bootstrap"])
@pytest.mark.parametrize("statistic", ["mean", "total"])
def test_group_and_row_paths_agree(variance: str, statistic: str) -> None:
    data = fixture()
    design = data.design(fpc=True)
    n_pop = float(data.weight.sum() * 1.05)
    totals = {0: n_pop * 0.3, 1: n_pop * 0.3, 2: n_pop * 0.4}
    grouped = poststratify(design, Margin("region", data.region, totals))
    cells = (data.region[:, None] == np.arange(3)[None, :]).astype(float)
    rows = calibrate(design, cells, [totals[j] for j in range(3)])
    assert cell_based(grouped) and not cell_based(rows)
    np.testing.assert_allclose(grouped.weights, rows.weights, rtol=1e-12)
    chosen = (variance if variance == "linearized" else
              build_replicates(design, variance, replicates=30, seed=1))
    questions = [data.pseudo(), data.count_pseudo()]
    for domain in (None, data.sex == 1):
        a = estimate(grouped, questions, statistic=statistic, variance=chosen, domain=domain)
        b = estimate(rows, questions, statistic=statistic, variance=chosen, domain=domain)
        for x, y in zip(a, b, strict=True):
            scale = np.abs(y.estimates).max()
            np.testing.assert_allclose(x.estimates / scale, y.estimates / scale, atol=1e-12)
            np.testing.assert_allclose(x.covariance / scale**2, y.covariance / scale**2,
                                       atol=1e-10)


@pytest.mark.parametrize("calibrated", ["none", "poststratified", "linear"])
@pytest.mark.parametrize("variance", ["linearized", "jkn"])
def test_means_and_totals_in_one_pass_equal_estimate_bit_for_bit(calibrated: str,
                                                                   variance: str) -> None:
    """`means_and_totals` shares the passes over the rows between the means and the totals
    (the design-based report's estimate document asks both): every number equals
    `estimate`'s with each statistic exactly, on the group path and the row path."""
    from ldpsurvey.shared.design.estimators import means_and_totals

    data = fixture()
    design = data.design(fpc=True)
    n_pop = float(data.weight.sum() * 1.05)
    totals_given = {0: n_pop * 0.3, 1: n_pop * 0.3, 2: n_pop * 0.4}
    if calibrated == "poststratified":
        design = poststratify(design, Margin("region", data.region, totals_given))
    elif calibrated == "linear":
        cells = (data.region[:, None] == np.arange(3)[None, :]).astype(float)
        design = calibrate(design, cells, [totals_given[j] for j in range(3)])
    chosen = (variance if variance == "linearized" else
              build_replicates(design, variance, replicates=30, seed=1))
    values = [data.pseudo(), data.count_pseudo()]
    means, totals = means_and_totals(design, values, variance=chosen, domain=data.sex == 1)
    for statistic, found in (("mean", means), ("total", totals)):
        expected = estimate(design, values, statistic=statistic, variance=chosen,
                            domain=data.sex == 1)
        for a, b in zip(found, expected, strict=True):
            assert np.array_equal(a.estimates, b.estimates)
            assert np.array_equal(a.covariance, b.covariance)
            assert np.array_equal(a.srs_variance, b.srs_variance)
            assert np.array_equal(a.srs_std_error, b.srs_std_error)
            assert np.array_equal(a.hidden_variance, b.hidden_variance)
            assert (a.n, a.population, a.statistic) == (b.n, b.population, b.statistic)


@pytest.mark.parametrize("calibrated", ["none", "poststratified", "linear"])
def test_a_disclosed_question_skips_its_zero_noise_bit_for_bit(calibrated: str) -> None:
    """A disclosed question's pseudo-values carry no randomization (noise all zeros): the
    estimators skip the passes over that noise (the randomization terms, the SRS baseline's
    noise) and every number equals what the general path computes from the zeros, exactly:
    the same values marked randomized, with and without an fpc and a domain."""
    from dataclasses import replace

    from ldpsurvey.shared.design.estimators import means_and_totals
    from ldpsurvey.shared.design.pseudo import from_values

    data = fixture()
    for fpc in (True, False):
        design = data.design(fpc=fpc)
        n_pop = float(data.weight.sum() * 1.05)
        given = {0: n_pop * 0.3, 1: n_pop * 0.3, 2: n_pop * 0.4}
        if calibrated == "poststratified":
            design = poststratify(design, Margin("region", data.region, given))
        elif calibrated == "linear":
            cells = (data.region[:, None] == np.arange(3)[None, :]).astype(float)
            design = calibrate(design, cells, [given[j] for j in range(3)])
        indicators = (data.region[:, None] == np.arange(3)[None, :]).astype(float)
        disclosed = from_values("region", indicators, labels=("n", "s", "e"), kind="shares")
        assert disclosed.disclosed and not disclosed.noise.any()
        randomized = replace(disclosed, disclosed=False)
        for domain in (None, data.sex == 1):
            fast = means_and_totals(design, [disclosed], domain=domain)
            slow = means_and_totals(design, [randomized], domain=domain)
            for a, b in zip([*fast[0], *fast[1]], [*slow[0], *slow[1]], strict=True):
                for name in ("estimates", "covariance", "srs_variance", "srs_std_error",
                             "hidden_variance", "privacy_variance"):
                    assert np.array_equal(getattr(a, name), getattr(b, name)), name
