"""The noise in what two real servers release has the variance the estimators assume.

200 batches of 2 known respondents each go through a real leader and helper; per batch the 4
option totals and 8 crosstab cells (Histograms, Δ = 2, central ε = 1) are released, each with
both servers' independent two-sided geometric noise: 2,400 draws of released - true. With
α = e^-1/2 the total per-coordinate variance is 2 · 2α/(1 - α)² ≈ 15.7. The sample variance
of m draws of a discrete Laplace (excess kurtosis ≈ 3 for this α; the sum of two has 1.5) has
relative standard deviation ≈ sqrt(2/m + κ/m) <= sqrt(5/2400) ≈ 0.046: the test allows
±5 standard deviations (±23%), a false alarm rate of about 6e-7 under the normal
approximation. The mean of the draws (s.d. sqrt(15.7/2400) ≈ 0.081) must lie within ±0.5
(over 6 s.d.).
"""

from __future__ import annotations

import numpy as np
import pytest
from ldpsurvey.shared.two_server.noise import noise_plan
from support.two_server import start_pair
from two_server.test_protocol import ANSWERS, answer, api, publish

BATCHES = 200


@pytest.mark.slow
def test_released_noise_variance_matches_the_plan(tmp_path):
    pair = start_pair(tmp_path)
    try:
        publish(pair, "noise1", min_batch=2, epsilon=1.0)
        truth_mood = np.array([1, 0, 1, 0])          # ANSWERS[0] low, ANSWERS[1] high
        truth_cells = np.zeros(8, dtype=int)
        truth_cells[1 * 4 + 0] += 1                  # smoker, low
        truth_cells[0 * 4 + 2] += 1                  # non-smoker, high
        draws = []
        for b in range(BATCHES):
            for j in (0, 1):
                answer(pair, tmp_path, "noise1", ANSWERS[j], f"b{b}-{j}")
            api(pair, "POST", "/api/surveys/noise1/two-server/aggregate", {})
        listing = api(pair, "GET", "/api/surveys/noise1/two-server/batches")["batches"]
        assert len(listing) == BATCHES
        for batch in listing:
            got = api(pair, "POST", f"/api/surveys/noise1/two-server/batches/"
                                    f"{batch['batch_id']}/collect", {})["entries"]
            assert got["mood"]["n"] == 2
            draws += list(np.array(got["mood"]["noisy_sums"]) - truth_mood)
            draws += list(np.array(got["crosstab:smoker:mood"]["noisy_sums"]) - truth_cells)
        draws = np.array(draws, dtype=float)
        stated = noise_plan("histogram", 1.0, 2).total_variance
        assert abs(draws.mean()) < 0.5
        assert abs(draws.var(ddof=1) / stated - 1) < 0.23, (draws.var(ddof=1), stated)
    finally:
        pair.stop()

