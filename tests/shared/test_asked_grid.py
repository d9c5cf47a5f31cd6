"""asked_grid (shared/mechanisms/asked_grid.py): a decimal follow-up's asked bit and grid mean
report. Its certified loss is the exact worst ratio of the joint channel over the answers and
"not asked" (enumerated for small k), a nudged claim is refused, every draw comes from the
source it is given (the OS CSPRNG by default), and its estimates of the share not asked and of
the mean among those asked fall within their variance bounds at a stated false-alarm rate."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from ldpsurvey.shared.errors import AggregateError, PrivacyCheckError, ReportError
from ldpsurvey.shared.exact import certify, channel_ratio
from ldpsurvey.shared.mechanisms.asked_grid import (
    MEAN_PARTS,
    AskedCellsAggregate,
    AskedGrid,
    bit_variance,
    choose_split,
    split_variance,
)
from ldpsurvey.shared.mechanisms.numeric_scale import AnswerScale
from ldpsurvey.shared.question_types.base import NOT_ASKED

Z_ALARM = 3.891  # two-sided normal quantile at a false-alarm rate of 1e-4 per check


def built(k: int, epsilon: float, mean: str, share: Fraction = Fraction(1, 2)) -> AskedGrid:
    scale = AnswerScale(Fraction(10), Fraction(1, 2), k)  # 10, 10.5, ...
    return AskedGrid(epsilon, range(k), scale=scale, mean=mean, share=share, question_id="x")


def joint_channel(m: AskedGrid) -> list[list[Fraction]]:
    """P[(b, i) | value] for the k answers and "not asked", every (bit, cell), exact."""
    rows = []
    for value in range(m.k + 1):
        asked = value < m.k
        part = m.part.row(value if asked else m.default)
        p1 = m.p_star if asked else m.q_star
        rows.append([(p1 if b else 1 - p1) * pi for b in (0, 1) for pi in part])
    return rows


@pytest.mark.parametrize("mean", sorted(MEAN_PARTS))
@pytest.mark.parametrize("k, epsilon, share", [(2, 1.0, Fraction(1, 2)),
                                               (5, 0.5, Fraction(3, 10)),
                                               (7, 2.0, Fraction(7, 10))])
def test_the_certified_loss_is_the_joint_channels_exact_worst_ratio(
        mean: str, k: int, epsilon: float, share: Fraction) -> None:
    m = built(k, epsilon, mean, share)
    joint = joint_channel(m)
    worst = channel_ratio(joint)
    assert worst is not None
    assert worst == max(ratio for ratio, _ in m.privacy_loss().terms)  # exactly, not a bound
    assert m.privacy_loss().within(epsilon)
    assert m.realized_epsilon() == pytest.approx(math.log(worst))
    assert all(sum(row) == 1 for row in joint)


@pytest.mark.parametrize("mean", sorted(MEAN_PARTS))
def test_a_nudged_claim_is_refused(mean: str) -> None:
    m = built(5, 1.0, mean)
    with pytest.raises(PrivacyCheckError):
        certify(m.privacy_loss(), m.realized_epsilon() - 1e-9, m.name)
    m._ratio = m._ratio * (1 + Fraction(1, 1000))  # a bit 0.1% less random than certified
    with pytest.raises(PrivacyCheckError):
        m._certify()


class Counting:
    """A seeded source that counts its draws."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.draws = 0

    def randbelow(self, n: int) -> int:
        self.draws += 1
        return int(self.rng.integers(0, n))


def test_every_draw_comes_from_the_source_given() -> None:
    m = built(9, 1.0, "hybrid")
    for answer in (10, 12.5, NOT_ASKED):
        a, b = Counting(7), Counting(7)
        assert m.perturb(answer, a) == m.perturb(answer, b)
        assert a.draws > 0
        assert m.validate_report(m.perturb(answer)) is not None  # the OS CSPRNG by default


def test_reports_and_aggregates_are_checked() -> None:
    m = built(5, 1.0, "duchi")
    for bad in ([2, 0], [0, 2], [True, 0], [0], "1", [0, 1.0]):
        with pytest.raises(ReportError):
            m.validate_report(bad)
    agg = m.aggregate_many(np.array([[1, 0], [0, 1], [1, 1]]))
    assert AskedCellsAggregate.from_dict(agg.to_dict(), m.cells) == agg
    with pytest.raises(AggregateError):
        AskedCellsAggregate.from_dict({**agg.to_dict(), "n": 4}, m.cells)


@pytest.mark.parametrize("mean", sorted(MEAN_PARTS))
def test_estimates_fall_within_their_variance_bounds(mean: str) -> None:
    """A fixed population: 40% asked, answers spread over the grid. Each check fails by chance
    with probability at most 1e-4: the tolerance is Z_ALARM times the square root of the
    worst-case one-report variance over n (bit_variance + 1/4 for the share; split_variance
    at the true share asked, times half the range squared, for the mean among those asked)."""
    k, epsilon, n = 40, 1.5, 40_000  # k - 1 odd: the default is off the middle point
    m = built(k, epsilon, mean, Fraction(3, 5))
    rng = np.random.default_rng(11)
    asked_n = int(0.4 * n)
    answers = np.concatenate([rng.integers(0, k, asked_n),
                              np.full(n - asked_n, m.k)])  # m.k: "not asked"
    estimate = m.estimate(m.aggregate_many(m.perturb_many(answers, rng)))
    share_tol = Z_ALARM * math.sqrt((bit_variance(float(m._ratio)) + 0.25) / n)
    assert abs(estimate.not_asked.estimate - 0.6) <= share_tol
    true_mean = float(np.mean([float(m.scale.value(int(j))) for j in answers[:asked_n]]))
    half = (k - 1) / 2 * float(m.scale.step)
    bound = split_variance(MEAN_PARTS[mean], k, epsilon, Fraction(3, 5), asked=0.4)
    assert bound is not None
    mean_tol = Z_ALARM * half * math.sqrt(bound / n)
    got = estimate.among_asked.mean
    assert abs(got.estimate - true_mean) <= mean_tol
    assert got.ci_low < got.estimate < got.ci_high
    assert got.std_error <= half * math.sqrt(bound / n)  # the plug-in within the worst case


def test_the_split_is_the_lowest_variance_of_the_mean_among_those_asked() -> None:
    name, share, reason = choose_split(101, 1.0)
    best = split_variance(MEAN_PARTS[name], 101, 1.0, share)
    for other in MEAN_PARTS.values():
        for t in (Fraction(i, 10) for i in range(1, 10)):
            value = split_variance(other, 101, 1.0, t)
            assert value is None or best <= value
    assert f"split {share}" in reason and name in reason
