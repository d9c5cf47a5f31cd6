"""Evidence for docs/poisoning.md: how far one crafted report moves each mechanism's estimate.

For the pure protocols, one report changes each option's support count by at most 1, so it
moves each option's frequency estimate by at most 1/(n(p − q)); mechanisms differ in how many
options one valid report may support. The geometric mean accepts any report in ±(2^53 − 1).
These are characterizations of the merged code: if the server starts bounding reports, the
corresponding test (and the document) must change.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from ldpsurvey.shared.errors import ReportError
from ldpsurvey.shared.mechanisms import MECHANISMS
from ldpsurvey.shared.mechanisms.geometric import MAX_ABS_REPORT
from ldpsurvey.shared.mechanisms.olh import SEEDS
from support.mechanisms import build

K, EPSILON, N = 8, 1.0, 10_000


def _frequencies(mechanism, reports) -> np.ndarray:
    agg = mechanism.new_aggregate()
    for r in reports:
        agg.add(mechanism.validate_report(r))
    return np.array([c.estimate for c in mechanism.estimate(agg).categories], dtype=float)


def _honest(mechanism, n: int, seed: int) -> list:
    rng = np.random.default_rng(seed)
    reports = mechanism.perturb_many(rng.integers(0, mechanism.k, n), rng)
    return [r.tolist() if hasattr(r, "tolist") else r for r in reports]


def _all_ones(mechanism) -> list[int]:
    bits = (1 << mechanism.k) - 1  # k <= 32: one word
    return [bits]


def _olh_seed_for_all(mechanism, targets: list[int]) -> list[int]:
    """Search seeds until every target option hashes to one bucket (the maximal-gain attack)."""
    from ldpsurvey.shared.mechanisms.olh import hash_values

    values = mechanism._values
    for seed in range(min(SEEDS, 2_000_000)):
        buckets = hash_values(np.array([seed]), values, mechanism.g)[0]
        if len({int(buckets[t]) for t in targets}) == 1:
            return [seed, int(buckets[targets[0]])]
    raise AssertionError("no seed found")


def _olh_pair(mechanism) -> tuple[list[int], list[int]]:
    report = _olh_seed_for_all(mechanism, TARGETS)
    return report, [report[0], (report[1] + 1) % mechanism.g]  # same seed, no target


TARGETS = [0, 1, 2, 3]

# (mechanism, crafted report, a report supporting none of its options, options it pushes up)
CASES = {
    "grr": (lambda m: (0, 1), [0]),
    "oue": (lambda m: (_all_ones(m), [0]), list(range(K))),
    "sue": (lambda m: (_all_ones(m), [0]), list(range(K))),
    "olh": (_olh_pair, TARGETS),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_one_crafted_report_shift_per_option(name: str) -> None:
    """Swapping one report for another moves option v by (Δ support of v)/(n(p − q)): at most
    the bound, and exactly the bound on every option the crafted report adds support to."""
    mechanism = build(MECHANISMS[name], K, EPSILON)
    honest = _honest(mechanism, N - 1, seed=5)
    make, pushed = CASES[name]
    crafted, neutral = make(mechanism)
    mechanism.validate_report(crafted)  # the server accepts it
    shift = (_frequencies(mechanism, [*honest, crafted])
             - _frequencies(mechanism, [*honest, neutral]))
    bound = 1 / (N * float(mechanism.p_star - mechanism.q_star))
    assert np.all(shift <= bound * (1 + 1e-9)), (shift, bound)
    assert shift[pushed] == pytest.approx(bound, rel=1e-9)


def test_subset_selection_reports_support_a_fixed_number_of_options() -> None:
    mechanism = build(MECHANISMS["ss"], K, EPSILON)
    with pytest.raises(Exception, match="exactly"):
        mechanism.validate_report(_all_ones(mechanism))


def test_one_geometric_report_moves_the_mean_by_at_most_the_report_bound_over_n() -> None:
    mechanism = build(MECHANISMS["geometric"], 31, EPSILON)  # answers 0..30
    honest = _honest(mechanism, N, seed=6)
    agg = mechanism.new_aggregate()
    for r in honest:
        agg.add(mechanism.validate_report(r))
    before = mechanism.estimate(agg).mean.estimate
    low, high = mechanism.report_bounds
    with pytest.raises(ReportError):
        mechanism.validate_report(MAX_ABS_REPORT)  # far beyond any honest report: refused
    with pytest.raises(ReportError):
        mechanism.validate_report(high + 1)
    agg.add(mechanism.validate_report(high))  # the most one forged report can claim
    after = mechanism.estimate(agg).mean.estimate
    assert after - before == pytest.approx((high - before) / (N + 1), rel=1e-9)
    # The bound is T' = 64·ln2/rate beyond the range: honest tails past it have mass < 2^-64.
    rate = float(mechanism.rate)
    assert high - 30 == low * -1 and math.exp(-rate * (high - 30)) < 2.0**-64
