"""Black-box privacy audit of every registered mechanism's secure `perturb` path.

For pairs of answers (the extreme pair first/last, e.g. min/max of an integer question, and
adjacent pairs), `ldpsurvey.analyst.audit` picks the most distinguishing output event on one
sample and, on a fresh sample, bounds ln(P_a(E)/P_b(E)) from below with one-sided
Clopper-Pearson bounds. The family-wise error is α = 1e-6 (Bonferroni over pairs and
directions), so a correct mechanism fails this test with probability below 1e-6 per mechanism;
the sample sizes are computed from the selected event's probabilities to resolve the loss to
within 0.15. Deliberately broken mechanisms show that the audit catches real violations:
a GRR that claims ε but keeps the true answer as often as at 1.6ε, and a unary encoding with
the RAPPOR-style bug that never turns a true 1-bit into 0.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from ldpsurvey.analyst.audit import (
    Event,
    audit,
    audit_pair,
    clopper_pearson,
    loss_lower_bound,
    samples_needed,
)
from ldpsurvey.shared.distributions import incomplete_beta
from ldpsurvey.shared.mechanisms import MECHANISMS
from ldpsurvey.shared.mechanisms.grr import GRR
from ldpsurvey.shared.mechanisms.longitudinal import Longitudinal
from ldpsurvey.shared.mechanisms.unary import OUE
from ldpsurvey.shared.randomness import RandomSource
from support.mechanisms import MECHANISM_NAMES, build, kind_of
from support.sources import SeededSource

ALPHA = 1e-6


# --- the statistics (fast) ------------------------------------------------------------------


@pytest.mark.parametrize(("k", "n", "alpha"), [
    (0, 10, 0.05), (1, 10, 0.05), (10, 10, 0.05), (5, 100, 1e-7), (4000, 100_000, 1e-8),
    (99_999, 100_000, 1e-6), (37, 37_000, 1e-3), (50_000, 100_000, 0.5)])
def test_clopper_pearson_matches_scipy(k: int, n: int, alpha: float) -> None:
    from scipy.stats import beta

    lo, hi = clopper_pearson(k, n, alpha)
    want_lo = 0.0 if k == 0 else beta.ppf(alpha, k, n - k + 1)
    want_hi = 1.0 if k == n else beta.ppf(1 - alpha, k + 1, n - k)
    assert lo == pytest.approx(want_lo, rel=1e-9, abs=1e-15)
    assert hi == pytest.approx(want_hi, rel=1e-9, abs=1e-15)


def test_regularized_beta_matches_scipy() -> None:
    from scipy.stats import beta

    for x, a, b in [(0.3, 2, 5), (0.99, 0.5, 0.5), (0.5, 1000, 1000), (1e-4, 3, 70_000)]:
        assert incomplete_beta(a, b, x) == pytest.approx(beta.cdf(x, a, b), rel=1e-9, abs=1e-300)


def test_clopper_pearson_coverage_by_simulation() -> None:
    """Seeded check of the one-sided 90% bounds' coverage: with 4000 trials, the miss rate of
    a valid bound (<= 10%) exceeds 12% with probability < 1e-4 (normal approx., sd 0.47%)."""
    import numpy as np

    rng = np.random.default_rng(3)
    p, n, trials = 0.2, 50, 4000
    ks = rng.binomial(n, p, trials)
    bounds = {int(k): clopper_pearson(int(k), n, 0.1) for k in set(ks.tolist())}
    misses_lo = sum(bounds[int(k)][0] > p for k in ks)
    misses_hi = sum(bounds[int(k)][1] < p for k in ks)
    assert misses_lo / trials <= 0.12 and misses_hi / trials <= 0.12


def test_lower_bound_is_infinite_only_when_b_never_hits() -> None:
    assert loss_lower_bound(5000, 10_000, 0, 10_000, 1e-6) > math.log(5000 / 20)
    assert loss_lower_bound(0, 10_000, 5000, 10_000, 1e-6) == -math.inf


def test_samples_needed_follows_the_delta_method() -> None:
    # z(1 - 1e-6/2) ≈ 4.89; (1-p)/p terms: 1 + 3 = 4 -> n ≈ 4.89² · 4 / 0.1² ≈ 9,570.
    assert samples_needed(0.5, 0.25, 1e-6, 0.1) == pytest.approx(9570, rel=0.01)


def test_events() -> None:
    assert Event("x", members=frozenset({1, 2})).count([1, 2, 3, 2]) == 3
    assert Event("x", at_most=0).count([-1, 0, 1, True]) == 2
    assert Event("x", at_least=1).count([-1, 0, 1, 5]) == 2


# --- broken mechanisms ----------------------------------------------------------------------


class OverconfidentGRR(GRR):
    """Claims (and certifies) ε, but samples from the GRR channel of 1.6·ε."""

    def __init__(self, epsilon: float, labels: Any) -> None:
        super().__init__(epsilon, labels)
        self.loose = GRR(epsilon * 1.6, labels)

    def perturb_index(self, index: int, source: RandomSource) -> Any:
        return self.loose.perturb_index(index, source)


class StickyOUE(OUE):
    """pure-ldp's RAPPOR bug: a true 1-bit is never turned into 0 (P[bit a = 0 | a] = 0)."""

    def perturb_index(self, index: int, source: RandomSource) -> list[int]:
        words = super().perturb_index(index, source)
        words[index // 32] |= 1 << (index % 32)
        return words


def test_broken_grr_is_caught_with_a_seeded_source() -> None:
    """Fast and deterministic (an injected seeded source): the true answer is kept with
    probability e^1.6/(e^1.6 + 2) = 0.71 instead of e/(e + 2) = 0.58 at k = 3, a loss of 1.6."""
    broken = OverconfidentGRR(1.0, ["a", "b", "c"])
    forward, backward = audit_pair(broken, "a", "b", claimed=broken.realized_epsilon(),
                                   alpha=ALPHA, n_select=1000, source=SeededSource(1))
    assert forward.refuted and backward.refuted, (str(forward), str(backward))


def test_sound_grr_passes_with_a_seeded_source() -> None:
    sound = GRR(1.0, ["a", "b", "c"])
    forward, backward = audit_pair(sound, "a", "b", claimed=sound.realized_epsilon(),
                                   alpha=ALPHA, n_select=1000, source=SeededSource(2))
    assert not forward.refuted and not backward.refuted, (str(forward), str(backward))
    assert forward.epsilon_lower > 0.5  # the audit does see most of the real loss of 1


@pytest.mark.slow
def test_overconfident_grr_is_caught_on_the_secure_path() -> None:
    results = audit(OverconfidentGRR(1.0, [f"o{i}" for i in range(5)]), alpha=ALPHA)
    caught = [r for r in results if r.refuted]
    assert caught, "\n".join(map(str, results))
    assert max(r.epsilon_point for r in caught) == pytest.approx(1.6, abs=0.25)


@pytest.mark.slow
def test_rappor_sticky_bit_bug_is_caught_on_the_secure_path() -> None:
    broken = StickyOUE(1.0, [f"o{i}" for i in range(4)])
    # An event of probability 0 asks for the maximum sample size; 20,000 is plenty: with 0 of
    # n under a, the upper bound on P_a(E) is about ln(1/α)/n.
    results = audit(broken, alpha=ALPHA, n_max=20_000)
    caught = [r for r in results if r.refuted]
    assert caught, "\n".join(map(str, results))
    # The event "bit a is 0" never happens under a: the loss is unbounded.
    assert any(r.count_b == 0 and r.epsilon_point == math.inf for r in caught)


# --- every registered mechanism -------------------------------------------------------------


def _audited(name: str) -> Any:
    cls = MECHANISMS[name]
    kind = kind_of(cls)
    k = 2 if kind == "binary" else (4 if kind == "integer" else 5)
    return build(cls, k, 1.0)


@pytest.mark.slow
@pytest.mark.parametrize("name", MECHANISM_NAMES)
def test_every_mechanism_keeps_its_claimed_epsilon(name: str) -> None:
    mechanism = _audited(name)
    results = audit(mechanism, alpha=ALPHA)
    report = "\n".join(map(str, results))
    assert not any(r.refuted for r in results), report
    # The audit is not vacuous: on the extreme pair it sees most of the claimed loss (the
    # evaluation margin is about 0.15-0.2 by the sample-size computation).
    assert max(r.epsilon_lower for r in results) >= 0.5 * mechanism.realized_epsilon(), report


@pytest.mark.slow
def test_two_layer_report_keeps_its_single_report_epsilon() -> None:
    mechanism = Longitudinal(GRR(2.0, [f"o{i}" for i in range(4)]), 1.5)
    results = audit(mechanism, alpha=ALPHA)  # claimed: the exact one-report ε₁ < 1.5
    assert mechanism.realized_epsilon() < 1.5
    assert not any(r.refuted for r in results), "\n".join(map(str, results))


@pytest.mark.slow
def test_high_epsilon_binary_rr_at_ln_9() -> None:
    mechanism = build(MECHANISMS["binary_rr"], 2, math.log(9))
    results = audit(mechanism, alpha=ALPHA)
    assert not any(r.refuted for r in results), "\n".join(map(str, results))
    assert max(r.epsilon_lower for r in results) >= 0.7 * math.log(9)
