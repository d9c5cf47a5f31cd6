"""Exact arithmetic behind privacy claims, and the exact samplers in shared/randomness.py."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import numpy as np
import pytest
from ldpsurvey.shared.errors import PrivacyCheckError
from ldpsurvey.shared.exact import (
    PrivacyLoss,
    certify,
    channel_ratio,
    exp_lower,
    rational_exp_floor,
    rational_floor,
    simplest_between,
)
from ldpsurvey.shared.randomness import (
    SECURE,
    bernoulli,
    bernoulli_exp_neg,
    choice_except,
    discrete_laplace,
    randbelow_each,
    randbelow_many,
)
from scipy import stats
from support.sources import RecordingSource, ScriptedSource, SeededSource

# e truncated to 80 decimals, and that plus one unit: an exact bracket 1e-80 wide, far
# narrower than exp_lower's ~2^-180 working precision.
E_LOW = Fraction("2.718281828459045235360287471352662497757"
                 "24709369995957496696762772407663035354759")
E_HIGH = E_LOW + Fraction(1, 10**80)
# Statistical checks in this file use a two-sided false-alarm rate of 1e-6 each (z = 4.89);
# with fixed seeds they are deterministic, the rate says how lucky a seed would have to be.
ALPHA = 1e-6
Z = stats.norm.isf(ALPHA / 2)


# --- certified bounds --------------------------------------------------------------------------


def test_exp_lower_brackets_e() -> None:
    bound = exp_lower(Fraction(1))
    assert bound <= E_LOW
    assert E_LOW - bound < Fraction(1, 10**50)


@pytest.mark.parametrize("x", [Fraction(0), Fraction(1, 3), Fraction(5, 2), Fraction(40)])
def test_exp_lower_is_a_tight_lower_bound(x: Fraction) -> None:
    bound = exp_lower(x)
    assert bound <= Fraction(math.exp(x)) * (1 + Fraction(1, 2**50))
    assert float(bound) == pytest.approx(math.exp(x), rel=1e-15)
    if x == 0:
        assert bound == 1


def test_exp_lower_refuses_negative() -> None:
    with pytest.raises(PrivacyCheckError):
        exp_lower(Fraction(-1))


def _brute_simplest(lo: Fraction, hi: Fraction) -> Fraction:
    q = 1
    while True:
        p = math.ceil(lo * q)
        if Fraction(p, q) <= hi:
            return Fraction(p, q)
        q += 1


def test_simplest_between_matches_brute_force() -> None:
    rng = random.Random(7)
    for _ in range(300):
        a = Fraction(rng.randrange(-200, 200), rng.randrange(1, 60))
        b = a + Fraction(rng.randrange(0, 30), rng.randrange(1, 400))
        got = simplest_between(a, b)
        assert a <= got <= b
        assert got.denominator == _brute_simplest(a, b).denominator


def test_simplest_between_empty_interval() -> None:
    with pytest.raises(PrivacyCheckError):
        simplest_between(Fraction(1), Fraction(0))


def test_rational_exp_floor_ln3_is_exactly_3() -> None:
    assert rational_exp_floor(math.log(3)) == 3


@pytest.mark.parametrize("epsilon", [0.01, 0.5, 1.0, 2.0, 7.5, 50.0])
def test_rational_exp_floor_is_below_and_close(epsilon: float) -> None:
    r = rational_exp_floor(epsilon)
    bound = exp_lower(Fraction(epsilon))
    assert bound * (1 - Fraction(1, 2**32)) <= r <= bound


@pytest.mark.parametrize("value", [0.1, 1.5, math.pi, 49.99])
def test_rational_floor_is_below_and_close(value: float) -> None:
    r = rational_floor(value)
    assert Fraction(value) * (1 - Fraction(1, 2**32)) <= r <= Fraction(value)


# --- privacy losses and channels -----------------------------------------------------------


def _ratio_channel(ratio: int) -> list[list[Fraction]]:
    """A 2x2 channel whose worst ratio is exactly `ratio`."""
    hi, lo = Fraction(ratio, ratio + 1), Fraction(1, ratio + 1)
    return [[hi, lo], [lo, hi]]


def test_channel_of_ratio_9_passes_at_ln9_and_fails_at_ln8_999() -> None:
    loss = PrivacyLoss(ratio=channel_ratio(_ratio_channel(9)))
    assert loss.ratio == 9
    assert certify(loss, math.log(9), "hand-built") is loss
    with pytest.raises(PrivacyCheckError, match="exceeds the claimed epsilon"):
        certify(loss, math.log(8.999), "hand-built")


def test_log_loss_decides_at_the_boundary() -> None:
    loss = PrivacyLoss(log=Fraction(3, 2))
    assert loss.within(1.5)
    assert not loss.within(math.nextafter(1.5, 0))
    assert float(loss) == 1.5


def test_ratio_loss_decides_at_the_boundary() -> None:
    # e^ε for ε = 1 lies in (E_LOW, E_HIGH): a ratio just under e passes, just over fails.
    assert PrivacyLoss(ratio=E_LOW - Fraction(1, 10**40)).within(1.0)
    assert not PrivacyLoss(ratio=E_HIGH).within(1.0)


def test_ratio_at_most_one_is_always_within() -> None:
    assert PrivacyLoss(ratio=Fraction(1)).within(1e-12)


def test_privacy_loss_holds_exactly_one_form() -> None:
    with pytest.raises(PrivacyCheckError):
        PrivacyLoss()
    with pytest.raises(PrivacyCheckError):
        PrivacyLoss(ratio=Fraction(2), log=Fraction(1))


def test_channel_with_a_zero_entry_is_unbounded() -> None:
    channel = [[Fraction(1, 2), Fraction(1, 2), Fraction(0)],
               [Fraction(1, 3), Fraction(1, 3), Fraction(1, 3)]]
    assert channel_ratio(channel) is None
    with pytest.raises(PrivacyCheckError, match="unbounded"):
        certify(None, 50.0, "hand-built")


def test_column_of_zeros_is_ignored() -> None:
    channel = [[Fraction(3, 4), Fraction(1, 4), Fraction(0)],
               [Fraction(1, 4), Fraction(3, 4), Fraction(0)]]
    assert channel_ratio(channel) == 3


@pytest.mark.parametrize("channel, problem", [
    ([], "empty"),
    ([[Fraction(1, 2), Fraction(1, 2)], [Fraction(1)]], "outputs"),
    ([[0.5, 0.5], [0.5, 0.5]], "not exact"),
    ([[Fraction(1, 2), Fraction(1, 3)], [Fraction(1, 2), Fraction(1, 2)]], "not a probability"),
    ([[Fraction(3, 2), Fraction(-1, 2)], [Fraction(1, 2), Fraction(1, 2)]], "not a probability"),
])
def test_malformed_channels_are_refused(channel: list, problem: str) -> None:
    with pytest.raises(PrivacyCheckError, match=problem):
        channel_ratio(channel)


# --- exact samplers ------------------------------------------------------------------------


@pytest.mark.parametrize("p", [Fraction(0), Fraction(3, 7), Fraction(1)])
def test_bernoulli_is_exact_over_every_draw(p: Fraction) -> None:
    # Enumerating all randbelow outcomes gives the probability exactly.
    trues = sum(bernoulli(p, ScriptedSource([d])) for d in range(p.denominator))
    assert Fraction(trues, p.denominator) == p


def test_choice_except_is_uniform_over_the_others() -> None:
    k, excluded = 6, 2
    got = sorted(choice_except(k, excluded, ScriptedSource([d])) for d in range(k - 1))
    assert got == [0, 1, 3, 4, 5]


@pytest.mark.parametrize("gamma", [Fraction(0), Fraction(1, 3), Fraction(1), Fraction(5, 2)])
def test_bernoulli_exp_neg_frequency(gamma: Fraction) -> None:
    n = 20_000
    source = SeededSource(int(gamma * 1000) + 1)
    hits = sum(bernoulli_exp_neg(gamma, source) for _ in range(n))
    p = math.exp(-gamma)
    # Binomial(n, p): z-test at the file's false-alarm rate; p = 1 is exact.
    if gamma == 0:
        assert hits == n
    else:
        assert abs(hits - n * p) <= Z * math.sqrt(n * p * (1 - p))


def test_bernoulli_exp_neg_refuses_negative() -> None:
    with pytest.raises(PrivacyCheckError):
        bernoulli_exp_neg(Fraction(-1), SeededSource(0))


def _laplace_chi_square(samples: np.ndarray, rate: Fraction) -> float:
    """p-value of a chi-square test of samples against P[z] ∝ exp(-rate|z|)."""
    r = float(rate)
    norm = math.tanh(r / 2)  # (1 - e^-r)/(1 + e^-r)
    n = samples.size
    # Bins z = -m..m with expected count >= 5, plus the two tails pooled.
    m = 0
    while n * norm * math.exp(-r * (m + 1)) >= 5:
        m += 1
    zs = np.arange(-m, m + 1)
    expected = n * norm * np.exp(-r * np.abs(zs))
    tail = n * (1 - expected.sum() / n) / 2
    observed = [int(np.sum(samples < -m))] + [int(np.sum(samples == z)) for z in zs] \
        + [int(np.sum(samples > m))]
    return float(stats.chisquare(observed, [tail, *expected, tail]).pvalue)


@pytest.mark.parametrize("rate", [Fraction(1, 2), Fraction(3, 2), Fraction(1, 7)])
def test_discrete_laplace_matches_its_distribution(rate: Fraction) -> None:
    source = SeededSource(rate.denominator * 31 + rate.numerator)
    samples = np.array([discrete_laplace(rate, source) for _ in range(10_000)])
    assert _laplace_chi_square(samples, rate) > ALPHA


def test_discrete_laplace_with_the_csprng() -> None:
    # Non-deterministic on purpose: the OS CSPRNG path. False alarm rate 1e-6.
    rate = Fraction(2, 3)
    samples = np.array([discrete_laplace(rate, SECURE) for _ in range(10_000)])
    assert _laplace_chi_square(samples, rate) > ALPHA


def test_discrete_laplace_refuses_non_positive_rate() -> None:
    with pytest.raises(PrivacyCheckError):
        discrete_laplace(Fraction(0), SeededSource(0))


def test_seeded_source_is_reproducible() -> None:
    a, b = SeededSource(5), SeededSource(5)
    assert [a.randbelow(1000) for _ in range(50)] == [b.randbelow(1000) for _ in range(50)]


# --- bulk draws ---------------------------------------------------------------------------------


@pytest.mark.parametrize("bounds", [[7] * 50, list(range(1, 60)), [2**64 - 1, 3, 2**64, 2**80]])
def test_bulk_draws_are_the_sequential_draws(bounds: list[int]) -> None:
    bulk, one_by_one = RecordingSource(5), RecordingSource(5)
    got = randbelow_each(bulk, bounds)
    assert [int(v) for v in got] == [one_by_one.randbelow(b) for b in bounds]
    assert bulk.tape == one_by_one.tape
    same = RecordingSource(9)
    many = randbelow_many(same, 7, 20)
    assert same.tape == [(7, int(v)) for v in many]


@pytest.mark.parametrize("n", [1, 2, 3, 5, 37, 2**31 + 1, 2**32, 2**40 + 3, 2**63 + 5])
def test_bulk_csprng_draws_are_uniform(n: int) -> None:
    """CSPRNG draws (not seeded): chi-square over 8 equal-width cells of [0, n) (n <= 8: each
    value), false-alarm rate ALPHA; rejection must never return a value >= n."""
    draws = randbelow_many(SECURE, n, 40_000)
    assert draws.dtype == np.uint64 and int(draws.max()) < n
    if n == 1:
        assert not draws.any()
        return
    cells = min(n, 8)
    edges = [n * i // cells for i in range(cells + 1)]
    observed = np.array([np.sum((draws >= edges[i]) & (draws < edges[i + 1]))
                         for i in range(cells)])
    expected = np.diff(edges) * draws.size / n
    assert stats.chisquare(observed, expected).pvalue > ALPHA


def test_bulk_csprng_draws_with_varying_bounds() -> None:
    """randbelow_each with bounds 1..64 repeated: each draw's position within its bound,
    draw / bound, is uniform over cells of 1/8 when pooled (exact for bounds that are
    multiples of 8; others checked per value below)."""
    bounds = np.tile(np.arange(1, 65, dtype=np.uint64), 2000)
    draws = randbelow_each(SECURE, bounds)
    assert np.all(draws < bounds)
    at8 = draws[bounds == 8]
    assert stats.chisquare(np.bincount(at8.astype(int), minlength=8)).pvalue > ALPHA
    at64 = draws[bounds == 64]
    assert stats.chisquare(np.bincount((at64 // 8).astype(int), minlength=8)).pvalue > ALPHA


@pytest.mark.parametrize(("name", "epsilon"), [("oue", 1.0), ("oue", 30.0), ("sue", 1.0),
                                               ("sue", 50.0), ("ss", 1.0)])
def test_bitmap_bulk_draws_keep_each_bit_exact(name: str, epsilon: float) -> None:
    """k = 1024 secure reports (bulk CSPRNG draws on the 32- and 64-bit paths): the true bit
    is set in Binomial(n, p*) reports and the other bits in Binomial(n(k-1), q*) (their
    counts are independent for unary encoding; for subset selection every report sets d bits,
    so the other bits' total is exact given the true bit's count). Two-sided z at ALPHA."""
    from ldpsurvey.shared.mechanisms import MECHANISMS
    from ldpsurvey.shared.mechanisms.ss import SubsetSelection

    k, n, index = 1024, 2000, 700
    mech = MECHANISMS[name](epsilon, tuple(f"v{i}" for i in range(k)))
    bits = np.array([mech._bits(np.array([mech.perturb(f"v{index}")], dtype=np.int64))[0]
                     for _ in range(n)])
    p, q = float(mech.p_star), float(mech.q_star)
    own = bits[:, index].sum()
    assert abs(own - n * p) <= Z * math.sqrt(n * p * (1 - p)) + 1e-9
    rest = bits.sum() - own
    if isinstance(mech, SubsetSelection):
        assert rest == n * mech.subset_size - own
        return
    assert abs(rest - n * (k - 1) * q) <= Z * math.sqrt(n * (k - 1) * q * (1 - q)) + 1e-9
