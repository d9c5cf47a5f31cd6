"""The location question's numbers (issue 32): unbiased linear estimates through the channel
with their exact worst-case variance, whose intervals cover at the stated rate at every n.

The scenario of the issue: a 10 x 10 grid of 1 km cells at ε_geo = 0.5/km, 61% of the
respondents in a 9-cell "town", 200 respondents. The old report (EM with bootstrap intervals)
gave `town 12.3% [0.0%, 49.1%]` and covered the truth in under half of the cells.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from ldpsurvey.shared.location_linear import (
    indicators,
    linear_shares,
    map_resolution,
    unbiased_weights,
    worst_variance_one,
)
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Survey
from scipy.stats import binom

TOWN = ["4-6,4-6"]
FALSE_ALARM = 1e-3  # per coverage check below


def town_survey(epsilon_geo: float = 0.5, cell_km: float = 1.0) -> Survey:
    return Survey.from_dict({"id": "geo", "title": "Geo", "version": 1, "questions": [
        {"id": "home", "type": "location", "text": "Where?", "epsilon_geo": epsilon_geo,
         "grid": {"rows": 10, "cols": 10, "cell_km": cell_km},
         "regions": {"town": TOWN, "west": ["1-10,1-5"]}}]})


def town_truth(mechanism) -> np.ndarray:
    town = list(mechanism.groups["town"])
    f = np.full(mechanism.k, 0.39 / (mechanism.k - len(town)))
    f[town] = 0.61 / len(town)
    return f


def lowest_passing(runs: int, rate: float) -> int:
    """The smallest count of covering intervals in `runs` that a true rate of at least `rate`
    produces with probability >= 1 - FALSE_ALARM (a one-sided binomial band)."""
    return int(binom.ppf(FALSE_ALARM, runs, rate))


def test_weights_are_unbiased_for_every_truth_exactly():
    m = mechanism_for(town_survey().questions[0])
    targets = indicators(m.k, [list(m.groups["town"])])
    w = unbiased_weights(m.geo.dense, targets)
    # E[w(Z) | true cell x] = 1[x in town] for every x: then for every truth f too
    np.testing.assert_allclose(m.geo.dense @ w, targets, atol=1e-9)


def test_worst_case_variance_is_the_maximum_over_the_simplex():
    """On a small grid: the closed form equals a brute-force search over two-cell mixtures
    (the maximum of f·a − (f·t)² over the simplex sits on at most one inside and one outside
    cell: f·a is linear and f·t only counts the inside mass)."""
    survey = Survey.from_dict({"id": "g", "title": "g", "version": 1, "questions": [
        {"id": "home", "type": "location", "text": "W", "epsilon_geo": 1.0,
         "grid": {"rows": 3, "cols": 4, "cell_km": 1.0}, "regions": {"r": ["1-2,2-3"]}}]})
    m = mechanism_for(survey.questions[0])
    a_channel = m.geo.dense
    targets = np.concatenate([indicators(m.k, [list(m.groups["r"])]), np.eye(m.k)], axis=1)
    w = unbiased_weights(a_channel, targets)
    closed = worst_variance_one(a_channel, w, targets)
    alphas = np.linspace(0, 1, 2001)
    for j in range(targets.shape[1]):
        best = -np.inf
        for x, y in itertools.product(range(m.k), repeat=2):
            f = np.outer(alphas, np.eye(m.k)[x]) + np.outer(1 - alphas, np.eye(m.k)[y])
            p = f @ a_channel
            var = p @ w[:, j] ** 2 - (p @ w[:, j]) ** 2
            best = max(best, var.max())
        assert closed[j] == pytest.approx(best, rel=1e-6)


@pytest.mark.parametrize("epsilon_geo,n,runs", [(0.5, 200, 300), (2.0, 200, 300),
                                                (2.0, 5000, 200)])
def test_intervals_cover_at_the_stated_rate_at_small_and_large_n(epsilon_geo, n, runs):
    """Coverage of the town's, the west half's and every cell's 95% interval over `runs`
    surveys of the issue's truth; each must reach the one-sided binomial band of 95% at a
    false-alarm rate of 1e-3 (cells: the worst cell, band corrected for 100 cells by
    Bonferroni)."""
    m = mechanism_for(town_survey(epsilon_geo).questions[0])
    regions = [list(m.groups["town"]), list(m.groups["west"])]
    targets = np.concatenate([indicators(m.k, regions), np.eye(m.k)], axis=1)
    truth = town_truth(m)
    rng = np.random.default_rng(int(epsilon_geo * 10) + n)
    covered = np.zeros(targets.shape[1], dtype=int)
    for _ in range(runs):
        answers = rng.choice(m.k, size=n, p=truth)
        true_shares = np.bincount(answers, minlength=m.k) @ targets / n
        counts = np.bincount(m.perturb_many(answers, rng), minlength=m.k)
        low, high = linear_shares(m.geo.dense, targets, counts).interval(0.95)
        covered += (low <= true_shares) & (true_shares <= high)
    assert covered[0] >= lowest_passing(runs, 0.95), ("town", covered[0])
    assert covered[1] >= lowest_passing(runs, 0.95), ("west", covered[1])
    cell_floor = int(binom.ppf(FALSE_ALARM / m.k, runs, 0.95))
    assert covered[2:].min() >= cell_floor, covered[2:].min()


def test_the_issues_town_report_covers_and_flags_the_map():
    """The issue's report at n = 200: the town's interval now contains the truth (61%), and
    the map is flagged as unreadable at this n and ε_geo; at ε_geo = 2 and n = 20,000 it is
    readable at a block size the warning states."""
    m = mechanism_for(town_survey().questions[0])
    rng = np.random.default_rng(32)
    answers = rng.choice(m.k, size=200, p=town_truth(m))
    est = m.estimate(m.aggregate_many(m.perturb_many(answers, rng))).to_dict()
    town = next(g for g in est["groups"] if g["name"] == "town")
    true_town = np.isin(answers, list(m.groups["town"])).mean()
    assert town["ci_low"] <= true_town <= town["ci_high"]
    assert est["location"]["map"]["readable"] is False
    assert any("the map cannot be read at n = 200" in w for w in est["warnings"])

    fine = mechanism_for(town_survey(2.0).questions[0])
    answers = rng.choice(fine.k, size=20_000, p=town_truth(fine))
    est = fine.estimate(fine.aggregate_many(fine.perturb_many(answers, rng))).to_dict()
    assert est["location"]["map"]["readable"] is True
    block = est["location"]["map"]["block_cells"]
    assert any(f"blocks of {block} x {block} cells" in w for w in est["warnings"])


def test_map_resolution_depends_on_n_and_epsilon_geo_only():
    m = mechanism_for(town_survey(2.0).questions[0])
    counts_a = np.zeros(m.k)
    counts_a[0] = 2000
    counts_b = np.full(m.k, 20.0)
    a = map_resolution(m.geo.dense, 10, 10, 1.0, counts_a, 0.95)
    b = map_resolution(m.geo.dense, 10, 10, 1.0, counts_b, 0.95)
    assert a == b
    sizes = [map_resolution(m.geo.dense, 10, 10, 1.0, np.full(m.k, n / m.k), 0.95).block
             for n in (2_000, 20_000, 2_000_000)]
    assert sizes[0] > sizes[1] > sizes[2] >= 1
