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
