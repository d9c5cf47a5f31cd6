"""A number kept on a grid in a two-server survey (shared/two_server/fixed_point.py), through a
made-up unit that measures it (as a decimal's unit does): the mean as a Prio3Sum of the grid
index, the distribution as a Prio3Histogram of the bin, both (or a hidden follow-up's mean) as
Prio3Histogram + Prio3SumVec under one key with the central ε split by the histogram's scale.

- The pair's sensitivity 2s + R is enumerated over every pair of measurements (small grids);
  the noise is certified there and refuted one below; the scale is the even split, or for a
  hidden mean the best integer (checked against every s up to 4R).
- The pair's proofs: honest measurements aggregate to [s·one-hot, j]; a grid index past R, a
  bin vector that is not one-hot, are rejected.
- The estimators are unbiased with calibrated standard errors, and the quantiles' intervals
  cover (simulated batches; every check at the stated false-alarm rate ALPHA = 1e-6).
"""

from __future__ import annotations

import math
import os
from fractions import Fraction
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from ldpsurvey.shared.errors import PrivacyCheckError
from ldpsurvey.shared.exact import rational_floor
from ldpsurvey.shared.question_types import QuestionType
from ldpsurvey.shared.skip_logic import NOT_ASKED
from ldpsurvey.shared.two_server import vdaf
from ldpsurvey.shared.two_server.encoding import Encoding, question_encoding, question_index
from ldpsurvey.shared.two_server.estimates import estimate_two_server
from ldpsurvey.shared.two_server.fixed_point import Grid, pair_split
from ldpsurvey.shared.two_server.noise import NoisePlan
from ldpsurvey.shared.two_server.plans import question_noise_plan
from scipy import stats
from support.two_server_stand_ins import Entry, geometric_noise

ALPHA = 1e-6
Z = float(stats.norm.isf(ALPHA / 2))


class AmountType(QuestionType):
    """A type no path knows: an amount kept to `step` from `low`, measured on its grid."""

    name = "amount"

    def two_server_encoding(self, question: Any, measure: Any) -> Any:
        g = question.grid
        return measure.fixed_point(g.origin, g.step, g.points, g.edges, g.mean)

    def two_server_answer(self, question: Any, value: Any, measure: Any) -> Any:
        if question.grid.not_asked and value == NOT_ASKED:
            return measure.grid_not_asked()
        return measure.on_grid(int((Fraction(str(value)) - question.grid.origin)
                                   / question.grid.step))


def amount(grid: Grid, central: float = 1.0) -> SimpleNamespace:
    return SimpleNamespace(id="amount", unit=AmountType(), not_asked=grid.not_asked,
                           local_epsilon=None, mechanism="none", central_epsilon=central,
                           grid=grid)


def grid(points: int = 11, edges: tuple = (), mean: bool = True, not_asked: bool = False,
         origin: str = "-2.5", step: str = "0.5") -> Grid:
    return Grid(Fraction(origin), Fraction(step), points, tuple(Fraction(e) for e in edges),
                mean, not_asked)


EDGES = ("-2.5", "-1", "0", "2.5")  # bins over [-2.5, 2.5]: 3 of 3, 2 and 6 grid points


# --- the measurement and its noise ------------------------------------------------------------


def test_each_ask_takes_its_circuit() -> None:
    mean = question_encoding(amount(grid()))
    assert (mean.kind, mean.length, mean.max_measurement, mean.sensitivity) == ("sum", 1, 10,
                                                                                10)
    bins = question_encoding(amount(grid(edges=EDGES, mean=False)))
    assert (bins.kind, bins.length, bins.sensitivity) == ("histogram", 3, 2)
    hidden = question_encoding(amount(grid(edges=EDGES, mean=False, not_asked=True)))
    assert (hidden.kind, hidden.length) == ("histogram", 4)
    both = question_encoding(amount(grid(edges=EDGES)))
    assert (both.kind, both.length, both.max_measurement, both.scale, both.sensitivity) == (
        "histogram_sum", 4, 10, 5, 20)  # even split: 2s = R
    asked = question_encoding(amount(grid(not_asked=True)))
    assert (asked.kind, asked.length) == ("histogram_sum", 3)  # [whole range, not asked], j
    plan = question_noise_plan(amount(grid(edges=EDGES)))
    assert (plan.kind, plan.sensitivity) == ("histogram_sum", 20)
    # the answers: grid index, bin, or both; "not asked" the last cell and j = 0
    q = amount(grid(edges=EDGES, not_asked=True))
    assert question_index(q, "-2.5") == [0, [0]]
    assert question_index(q, "-1") == [1, [3]]
    assert question_index(q, "2.5") == [2, [10]]  # the last bin is closed
    assert question_index(q, NOT_ASKED) == [3, [0]]
    assert question_index(amount(grid()), "0.5") == 6
    assert question_index(amount(grid(edges=EDGES, mean=False)), "0") == 2
    with pytest.raises(ValueError):
        question_index(amount(grid()), "3")  # past the grid


@pytest.mark.parametrize("points", [2, 3, 4, 8, 13, 101, 2001])
def test_the_scale_splits_as_stated(points: int) -> None:
    r = points - 1
    assert pair_split(grid(points, edges=("-2.5", str(-2.5 + 0.5 * r)))) == max(1, (r + 1) // 2)
    best = pair_split(grid(points, not_asked=True))
    costs = {s: Fraction((2 * s + r) ** 2 * (s * s + r * r), s * s) for s in range(1, 4 * r + 2)}
    assert costs[best] == min(costs.values())


@pytest.mark.parametrize("scale, top, cells", [(s, r, c) for s in (1, 2, 3) for r in (1, 2, 5)
                                               for c in (1, 2, 3)])
def test_the_pairs_sensitivity_is_enumerated(scale: int, top: int, cells: int) -> None:
    """What one respondent adds to the key's aggregate, [s·e_c, j] for a cell c and j in
    [0, R]: the largest L1 change between any two (substitution) is 2s + R with two cells or
    more (R with one: the encoding's 2s + R is then an upper bound), the sensitivity the
    encoding gives; the noise is certified there and refuted one below."""
    outputs = [(*(scale * (i == c) for i in range(cells)), j)
               for c in range(cells) for j in range(top + 1)]
    largest = max(sum(abs(a - b) for a, b in zip(x, y, strict=True))
                  for x in outputs for y in outputs)
    enc = Encoding("amount", "histogram_sum", cells + 1, top, delta=2 * scale + top,
                   scale=scale)
    assert largest == (enc.sensitivity if cells > 1 else top)
    eps = rational_floor(1.0)
    NoisePlan("histogram_sum", 1.0, enc.sensitivity, eps / enc.sensitivity)
    with pytest.raises(PrivacyCheckError):
        NoisePlan("histogram_sum", 1.0, enc.sensitivity, eps / (enc.sensitivity - 1))


def _prepared(enc, ctx: bytes, public: bytes, shares: tuple[bytes, bytes], rid: bytes):
    key = os.urandom(32)
    states, preps = zip(*(vdaf.prep_init(enc, key, ctx, agg, rid, public, shares[agg])
                          for agg in (vdaf.LEADER, vdaf.HELPER)), strict=True)
    message = vdaf.combine(enc, ctx, list(preps))
    outs = [vdaf.finish(enc, ctx, state, message) for state in states]
    return [(a + b) % vdaf.modulus(enc) for a, b in zip(*outs, strict=True)]


def test_the_pairs_proofs_accept_honest_measurements_and_reject_others() -> None:
    q = amount(grid(points=13, edges=("-2.5", "-1", "0", "3.5")))
    enc = question_encoding(q)
    ctx = b"ldpsurvey two-server v1|s|1|amount"
    for value in ("-2.5", "-0.5", "3.5"):
        rid = os.urandom(16)
        measurement = question_index(q, value)
        shards = vdaf.shard(enc, ctx, measurement, rid)
        onehot = [enc.scale * (i == measurement[0]) for i in range(3)]
        assert _prepared(enc, ctx, shards.public_share, shards.input_shares, rid) == [
            *onehot, measurement[1][0]]
    inst = vdaf.instance(enc)
    histogram, total = inst.histogram, inst.sum
    honest_bins = histogram.flp.valid.encode(1)
    honest_j = total.flp.valid.encode([5])
    # two bins set; a grid index whose bit decomposition holds a 2 (0/1 bits are a number in
    # range: the weights add up to max_measurement exactly)
    for bins, bits in (([1, 1, 0], honest_j), (honest_bins, [2, *honest_j[1:]]),
                       ([0, 0, 0], honest_j)):
        rid = os.urandom(16)
        pub_h, sh_h = histogram.shard_encoded(ctx, bins, rid, os.urandom(histogram.RAND_SIZE))
        pub_s, sh_s = total.shard_encoded(ctx, bits, rid, os.urandom(total.RAND_SIZE))
        public = inst.encode_public_share((pub_h, pub_s))
        shares = tuple(inst.encode_input_share(i, (sh_h[i], sh_s[i])) for i in range(2))
        with pytest.raises(vdaf.verify_errors()):
            _prepared(enc, ctx, public, shares, rid)
    with pytest.raises(vdaf.verify_errors()):  # the measurement itself is refused on shard
        vdaf.shard(enc, ctx, [0, [13]], os.urandom(16))


# --- the estimators against their formulas -----------------------------------------------------

N, RUNS = 2000, 400
POINTS = 11  # -2.5 .. 2.5 by 0.5
WEIGHTS = np.array([6, 5, 4, 3, 2, 2, 1, 1, 1, 2, 3], dtype=float)
WEIGHTS /= WEIGHTS.sum()
VALUES = -2.5 + 0.5 * np.arange(POINTS)


def _true_quantile(edges: np.ndarray, bin_probs: np.ndarray, p: float) -> float:
    """Where the binned distribution's CDF, linear inside each bin, reaches p."""
    cumulative = np.concatenate([[0.0], np.cumsum(bin_probs)])
    b = int(np.searchsorted(cumulative[1:], p))
    return float(edges[b] + (p - cumulative[b]) / bin_probs[b] * (edges[b + 1] - edges[b]))


@pytest.mark.parametrize("mean, edges, not_asked, central", [
    (True, (), False, 1.0),
    (False, EDGES, False, 1.0),
    (True, EDGES, False, 0.5),
    (True, (), True, 1.0),
    (True, ("-2.5", "-2", "-1", "0", "1", "2.5"), True, 1.0),
])
def test_estimates_are_unbiased_and_calibrated(mean: bool, edges: tuple, not_asked: bool,
                                               central: float) -> None:
    g = grid(POINTS, edges, mean, not_asked)
    q = amount(g, central)
    enc = question_encoding(q)
    plan = question_noise_plan(q)
    asked = 0.7 if not_asked else 1.0
    edge_values = np.asarray([float(e) for e in edges])
    bin_of = np.asarray([g.bin_of(j) for j in range(POINTS)])
    bin_probs = np.bincount(bin_of, WEIGHTS, minlength=max(len(edges) - 1, 1))
    rng = np.random.default_rng(7 + len(edges) + 2 * not_asked)
    truth = {"mean": float(VALUES @ WEIGHTS), "na": 1 - asked}
    if edges:
        truth.update({f"bin{b}": float(p) for b, p in enumerate(bin_probs)})
        truth.update({f"q{p}": _true_quantile(edge_values, bin_probs, p) for p in (0.25, 0.5,
                                                                                  0.75)})
    rows: dict[str, list[tuple[float, float, bool]]] = {}
    for _ in range(RUNS):
        j = rng.choice(POINTS, size=N, p=WEIGHTS)
        is_asked = rng.random(N) < asked
        cells = np.where(is_asked, bin_of[j] if edges else 0, g.cells - 1)
        counts = np.bincount(cells, minlength=g.cells)
        total = int(np.where(is_asked, j, 0).sum())
        sums = {"sum": [total], "histogram": list(counts),
                "histogram_sum": [*(enc.scale * counts), total]}[enc.kind]
        noisy = (np.asarray(sums) + geometric_noise(rng, plan, len(sums))
                 + geometric_noise(rng, plan, len(sums)))
        est = estimate_two_server(q, Entry([int(v) for v in noisy], N, plan), 0.95)

        def add(key: str, row: Any) -> None:
            rows.setdefault(key, []).append((row.estimate, row.std_error,
                                             row.ci_low <= truth[key] <= row.ci_high))

        if mean:
            add("mean", est.among_asked.mean if not_asked else est.mean)
        if not_asked:
            add("na", est.not_asked)
        for b, row in enumerate(est.distribution or ()):
            add(f"bin{b}", row)
        for p, row in zip((0.25, 0.5, 0.75), est.quantiles or (), strict=False):
            add(f"q{p}", row)
    lo = stats.chi2.ppf(ALPHA / 2, RUNS - 1) / (RUNS - 1)
    hi = stats.chi2.isf(ALPHA / 2, RUNS - 1) / (RUNS - 1)
    floor = 0.95 - Z * math.sqrt(0.95 * 0.05 / RUNS)
    for key, found in rows.items():
        values, ses, covered = (np.asarray(x, dtype=float) for x in zip(*found, strict=True))
        coverage = float(covered.mean())
        assert coverage >= floor, (key, coverage)
        if key.startswith("q"):  # no unbiasedness claim for an interpolated quantile
            continue
        assert abs(values.mean() - truth[key]) <= Z * values.std(ddof=1) / math.sqrt(RUNS), key
        ratio = values.var(ddof=1) / float((ses**2).mean())
        assert ratio <= hi * 1.05, (key, ratio)  # never too narrow (the delta method: 5%)
        if key != "mean":  # shares are exact; a mean's spread is at its Bhatia-Davis bound
            assert ratio >= lo / 1.05, (key, ratio)


def test_an_empty_batch_and_a_batch_of_noise_say_so() -> None:
    q = amount(grid(edges=EDGES, not_asked=True))
    plan = question_noise_plan(q)
    empty = estimate_two_server(q, Entry([0] * 5, 0, plan)).to_dict()
    assert empty["among_asked"]["mean"]["estimate"] is None
    assert [b["estimate"] for b in empty["distribution"]] == [None] * 3
    assert [x["value"] for x in empty["quantiles"]] == ["1st quartile", "median",
                                                         "3rd quartile"]
    assert [x["estimate"] for x in empty["quantiles"]] == [None] * 3
    nobody = estimate_two_server(q, Entry([0, 0, 0, 5 * 10, 0], 10, plan)).to_dict()
    assert nobody["not_asked"]["estimate"] == 1.0
    assert any("not positive" in note for note in nobody["notes"])
