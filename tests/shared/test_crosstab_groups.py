"""A declared group as a crosstab side: X_G = Σ_{a in G} X_a report by report, against the rest.

Exact checks: the group encoder is unbiased per report (B·E[φ̃ | x] = membership), its square
map holds report by report, and its joint estimates are the sums of the option cells'. The
simulation (seeded numpy, fixed population re-randomized RUNS times) states its false alarms
as test_crosstab_statistics.py does: Bonferroni z-test of the mean and χ² bounds of the
variance against the exact formula at rate ALPHA per pair; the mean stated SE² against the
exact variance plus (f - f²)/n within 10%.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from ldpsurvey.shared.crosstab import estimate_crosstab, gram, joint_truth, joint_variance
from ldpsurvey.shared.errors import CrosstabError
from ldpsurvey.shared.joint_features import group_encoder
from scipy import stats
from test_crosstab_statistics import ALPHA, answer_table, encoder, population

INDEX_NAMES = ["grr", "hr", "ordinal_exp", "two_layer"]
MEMBERS = [0, 2]  # of options a, b, c
N, RUNS = 3000, 120


def grouped(name: str, qid: str = "r"):  # type: ignore[no-untyped-def]
    mechanism, enc = encoder(name, qid)
    return mechanism, enc, group_encoder(enc, "a or c", MEMBERS)


@pytest.mark.parametrize("name", INDEX_NAMES)
def test_group_encoder_is_unbiased_and_its_square_exact(name: str) -> None:
    mechanism, _, enc = grouped(name)
    assert enc.cells == ("a or c", "not a or c") and enc.group == "a or c"
    np.testing.assert_allclose(enc.estimator @ enc.expected, enc.membership, atol=1e-8)
    np.testing.assert_allclose(enc.membership, [[1, 0, 1], [0, 1, 0]])
    rng = np.random.default_rng(3)
    features = enc.featurize(mechanism.perturb_many(rng.integers(0, mechanism.k, 2000), rng))
    np.testing.assert_allclose((features @ enc.estimator.T) ** 2, features @ enc.square.T,
                               rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name", INDEX_NAMES)
def test_group_cells_are_the_sums_of_their_options(name: str) -> None:
    m1, plain, enc = grouped(name)
    m2, cols = encoder("oue", "c")
    x, w = population(m1.k, m2.k, 2000, 1)
    rng = np.random.default_rng(2)
    g = gram(plain, cols, m1.perturb_many(x, rng), m2.perturb_many(w, rng))
    whole = np.array([[c.estimate for c in r] for r in estimate_crosstab(plain, cols, g).joint])
    group = np.array([[c.estimate for c in r] for r in estimate_crosstab(enc, cols, g).joint])
    np.testing.assert_allclose(group[0], whole[MEMBERS].sum(axis=0), atol=1e-9)
    np.testing.assert_allclose(group[1], whole[1], atol=1e-9)


@pytest.mark.parametrize(("name", "col"), [("grr", "binary_rr"), ("hr", "geometric"),
                                           ("two_layer", "oue")])
def test_group_joint_variance_and_stated_error(name: str, col: str) -> None:
    m1, _, e1 = grouped(name)
    m2, e2 = encoder(col, "c")
    x, w = population(m1.k, m2.k, N, 13)
    truth = joint_truth(e1, e2, x, w)
    var = joint_variance(e1, e2, answer_table(e1, e2, x, w), N)
    rng = np.random.default_rng(14)
    est, se2 = [], []
    for _ in range(RUNS):
        ct = estimate_crosstab(e1, e2, gram(e1, e2, m1.perturb_many(x, rng),
                                            m2.perturb_many(w, rng)))
        est.append([[c.estimate for c in r] for r in ct.joint])
        se2.append([[c.std_error**2 for c in r] for r in ct.joint])
    est_a = np.array(est)
    cells = truth.size
    z_cell = float(stats.norm.isf(ALPHA / (2 * cells)))
    assert np.all(np.abs(est_a.mean(axis=0) - truth) <= z_cell * np.sqrt(var / RUNS))
    low = stats.chi2.ppf(ALPHA / (2 * cells), RUNS - 1) / (RUNS - 1)
    high = stats.chi2.isf(ALPHA / (2 * cells), RUNS - 1) / (RUNS - 1)
    ratio = est_a.var(axis=0, ddof=1) / var
    assert np.all((low <= ratio) & (ratio <= high)), ratio
    np.testing.assert_allclose(np.array(se2).mean(axis=0), var + (truth - truth**2) / N,
                               rtol=0.10)
    assert math.isfinite(float(np.sum(var)))


@pytest.mark.parametrize("name", ["oue", "sue", "ss", "olh"])
def test_support_set_groups_are_refused_with_the_reason(name: str) -> None:
    _, enc = encoder(name, "r")
    with pytest.raises(CrosstabError, match="support sets"):
        group_encoder(enc, "a or c", MEMBERS)


def test_a_group_must_split_the_options() -> None:
    _, enc = encoder("grr", "r")
    with pytest.raises(CrosstabError, match="leave out"):
        group_encoder(enc, "all", [0, 1, 2])
