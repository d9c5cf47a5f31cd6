"""Central noise of the two-server mode: exact certification, sampling, field encoding.

Statistical checks use a two-sided false-alarm rate of 1e-6 each (z = 4.89); with a seeded
source they are deterministic, the rate says how lucky a seed would have to be.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from ldpsurvey.shared.errors import PrivacyCheckError
from ldpsurvey.shared.two_server.noise import (
    NoiseError,
    NoisePlan,
    add_noise,
    decode_signed,
    noise_plan,
    noise_variance,
)
from scipy import stats
from support.sources import SeededSource

ALPHA = 1e-6
Z = stats.norm.isf(ALPHA / 2)
FIELD64 = 2**64 - 2**32 + 1  # Prio3's Field64 modulus
FIELD128 = 2**128 - 28 * 2**64 + 1


def _moments(rate: Fraction) -> tuple[float, float]:
    """Exact (to float precision) variance and 4th moment of the discrete Laplace at `rate`."""
    a = math.exp(-float(rate))
    z = np.arange(1, int(60 / float(rate)) + 2, dtype=float)
    weights = 2 * (1 - a) / (1 + a) * a**z  # both signs
    return float(weights @ z**2), float(weights @ z**4)


# --- certification ---------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "delta"), [("count", 1), ("histogram", 2), ("crosstab", 2),
                                             ("sum", 1), ("sum", 99)])
@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 2.0, math.log(3)])
def test_plan_certifies_the_declared_epsilon(kind: str, delta: int, epsilon: float) -> None:
    plan = noise_plan(kind, epsilon, delta if kind == "sum" else None)
    assert plan.sensitivity == delta
    loss = plan.privacy_loss()
    assert loss.log is not None and loss.log <= Fraction(epsilon)
    # No less private than e^(-ε/Δ), and not needlessly noisier (within 2^-32 relative).
    assert plan.alpha >= math.exp(-epsilon / delta)
    assert float(plan.rate) * delta == pytest.approx(epsilon, rel=1e-9)


def test_the_check_refutes_too_small_noise() -> None:
    # A histogram at ε = 1 needs λ <= 1/2 (Δ = 2); λ = 1/2 + 1e-12 is refused, 1/2 passes.
    NoisePlan(kind="histogram", epsilon=1.0, sensitivity=2, rate=Fraction(1, 2))
    with pytest.raises(PrivacyCheckError):
        NoisePlan(kind="histogram", epsilon=1.0, sensitivity=2,
                  rate=Fraction(1, 2) + Fraction(1, 10**12))
    # The noise sized for add/remove (Δ = 1) is too small under substitution (Δ = 2).
    with pytest.raises(PrivacyCheckError):
        NoisePlan(kind="histogram", epsilon=1.0, sensitivity=2, rate=Fraction(1))


def test_understated_sensitivity_is_refused() -> None:
    with pytest.raises(NoiseError, match="understate"):
        noise_plan("histogram", 1.0, 1)
    with pytest.raises(NoiseError, match="understate"):
        noise_plan("crosstab", 1.0, 1)
    with pytest.raises(NoiseError, match="range"):
        noise_plan("sum", 1.0)
    with pytest.raises(NoiseError, match="unknown"):
        noise_plan("sumvec", 1.0, 2)
    for bad in (0.0, -1.0, math.inf, math.nan, True, "1"):
        with pytest.raises(NoiseError):
            noise_plan("count", bad)  # type: ignore[arg-type]


def test_stored_plan_round_trips_and_is_recertified() -> None:
    plan = noise_plan("sum", 1.5, 40)
    assert NoisePlan.from_dict(plan.to_dict()) == plan
    forged = dict(plan.to_dict(), rate=str(plan.rate * 2))
    with pytest.raises(PrivacyCheckError):
        NoisePlan.from_dict(forged)
    with pytest.raises(NoiseError):
        NoisePlan.from_dict({"kind": "sum"})


def test_variance_formula() -> None:
    # The reference's example: histogram, ε = 1: α = e^(-1/2), one server 7.8, both 15.7.
    plan = noise_plan("histogram", 1.0)
    a = math.exp(-0.5)
    assert plan.variance == pytest.approx(2 * a / (1 - a) ** 2, rel=1e-8)
    assert plan.variance == pytest.approx(7.8, abs=0.05)
    assert plan.total_variance == pytest.approx(15.7, abs=0.1)
    assert noise_variance(Fraction(1, 10**6)) == pytest.approx(2e12, rel=1e-5)
    assert _moments(plan.rate)[0] == pytest.approx(plan.variance, rel=1e-9)


# --- sampling ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "epsilon", "delta", "seed"),
                         [("histogram", 1.0, None, 11), ("count", 0.5, None, 12),
                          ("sum", 2.0, 10, 13)])
def test_sampled_noise_has_the_stated_variance(kind: str, epsilon: float, delta: int | None,
                                               seed: int) -> None:
    plan = noise_plan(kind, epsilon, delta)
    m = 20_000
    noisy = add_noise([0] * m, FIELD64, plan, source=SeededSource(seed))
    z = np.array([decode_signed(v, FIELD64) for v in noisy], dtype=float)
    var, fourth = _moments(plan.rate)
    # The mean is 0 with s.e. sqrt(var/m); the sample second moment (mean known to be 0) has
    # s.e. sqrt((μ4 - σ^4)/m).
    assert abs(z.mean()) <= Z * math.sqrt(var / m)
    assert abs(float(np.mean(z**2)) - plan.variance) <= Z * math.sqrt((fourth - var**2) / m)


def test_noise_with_the_csprng() -> None:
    # The default source (OS CSPRNG), so not reproducible: false-alarm rate 1e-6.
    plan = noise_plan("histogram", 2.0)
    m = 5_000
    noisy = add_noise([5] * m, FIELD128, plan)
    z = np.array([decode_signed(v, FIELD128) - 5 for v in noisy], dtype=float)
    var, fourth = _moments(plan.rate)
    assert abs(float(np.mean(z**2)) - var) <= Z * math.sqrt((fourth - var**2) / m)


def test_noise_is_per_coordinate_and_wraps_mod_p() -> None:
    plan = noise_plan("count", 1.0)
    share = [0, 1, FIELD64 - 1, 12345]
    noisy = add_noise(share, FIELD64, plan, source=SeededSource(3))
    assert len(noisy) == len(share)
    assert all(0 <= v < FIELD64 for v in noisy)
    offsets = [decode_signed((v - s) % FIELD64, FIELD64) for v, s in zip(noisy, share, strict=True)]
    assert all(abs(d) < 100 for d in offsets)
    # The same seed, the same draws: the sampler only reads the injected source.
    assert add_noise(share, FIELD64, plan, source=SeededSource(3)) == noisy


def test_two_servers_noise_adds_up() -> None:
    # Shares of a histogram [3, 0, 7] in the field; each server noises its own share.
    plan = noise_plan("histogram", 1.0)
    truth = [3, 0, 7]
    share0 = [11, FIELD64 - 5, 2**40]
    share1 = [(t - s) % FIELD64 for t, s in zip(truth, share0, strict=True)]
    n0 = add_noise(share0, FIELD64, plan, source=SeededSource(1))
    n1 = add_noise(share1, FIELD64, plan, source=SeededSource(2))
    total = [decode_signed((a + b) % FIELD64, FIELD64) for a, b in zip(n0, n1, strict=True)]
    assert all(abs(t - v) < 60 for t, v in zip(total, truth, strict=True))


def test_add_noise_refuses_what_is_not_a_field_vector() -> None:
    plan = noise_plan("count", 1.0)
    for share in ([-1], [FIELD64], [1.5], [True]):
        with pytest.raises(NoiseError):
            add_noise(share, FIELD64, plan)  # type: ignore[arg-type]
    with pytest.raises(NoiseError):
        add_noise([1], 2, plan)
    with pytest.raises(NoiseError):
        add_noise([1], FIELD64, {"kind": "count"})  # type: ignore[arg-type]


def test_decode_signed() -> None:
    assert decode_signed(0, FIELD64) == 0
    assert decode_signed(5, FIELD64) == 5
    assert decode_signed(FIELD64 - 1, FIELD64) == -1
    assert decode_signed(FIELD64 // 2, FIELD64) == FIELD64 // 2
    assert decode_signed(FIELD64 // 2 + 1, FIELD64) == FIELD64 // 2 + 1 - FIELD64
    for bad in (-1, FIELD64, True):
        with pytest.raises(NoiseError):
            decode_signed(bad, FIELD64)
