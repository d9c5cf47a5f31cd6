"""The mean of a number among a randomized category (shared/joint_values.py): exact
unbiasedness of its numerator and denominator in rational arithmetic, and its delta-method
standard error against re-randomizations of a fixed population.

With v(y) a report's unbiased value of the answer x (E[v | x] = x) and w_c(a) the other report's
unbiased indicator of category c (E[w_c | q] = [q = c]), drawn independently given the true pair:
E[Σ v·w_c] = Σ_{q = c} x and E[Σ w_c] = #{q = c}. The ratio R̂ = Σ v·w_c / Σ w_c has, for a fixed
population with R = the true mean among c and D = #{q = c}, the linearized variance

    Var R̂ ≈ Σ_i Var[w_c(a_i)·(v(y_i) − R)] / D²
          = Σ_i ( V_c(q_i)·(Var_v(x_i) + (x_i − R)²) − [q_i = c](x_i − R)² ) / D²,

V_c(q) = E[w_c² | q], Var_v(x) = Var[v | x]; its remainder is O(CV(Σ w_c)²) relatively. Every
statistical check states its false-alarm rate (1e-5, two-sided, per check).
"""

from __future__ import annotations

from fractions import Fraction
from statistics import NormalDist

import numpy as np
import pytest
from ldpsurvey.shared.crosstab import estimate_crosstab, gram
from ldpsurvey.shared.joint_features import Encoder, encoder_for
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.mechanisms.grr import GRR
from ldpsurvey.shared.mechanisms.registry import mechanism_class
from ldpsurvey.shared.survey import Survey
from scipy.stats import chi2

RATE = 1e-5
Z = NormalDist().inv_cdf(1 - RATE / 2)


def test_numerator_and_denominator_are_exactly_unbiased_in_rationals() -> None:
    """E[Σ v(y_i)·w_c(a_i)] = Σ_{q_i = c} x_i and E[Σ w_c(a_i)] = #{q_i = c}, exactly, for
    each mean mechanism on a small grid crossed with GRR (exact channels, exact values)."""
    grr = GRR(1.5, ["a", "b", "c"])
    p, q = grr.p_star, grr.q_star
    channel = grr.channel()

    def w(c: int, a: int) -> Fraction:  # GRR's unbiased indicator of c from report a
        return ((1 if a == c else 0) - q) / (p - q)

    population = [(0, 0), (3, 0), (4, 1), (1, 2), (2, 2), (4, 2), (0, 1)]  # (x index, q)
    for name in ("duchi", "piecewise", "hybrid"):
        mech = mechanism_class(name)(1.0, range(10, 15))  # answers 10..14
        values = [mech.center + mech.half * v for v in mech.values]
        rows = mech.channel()
        for c in range(3):
            numerator = sum(sum(rows[x][y] * values[y] for y in range(len(values)))
                            * sum(channel[qi][a] * w(c, a) for a in range(3))
                            for x, qi in population)
            denominator = sum(sum(channel[qi][a] * w(c, a) for a in range(3))
                              for _, qi in population)
            assert numerator == sum(10 + x for x, qi in population if qi == c), name
            assert denominator == sum(1 for _, qi in population if qi == c), name


def test_encoder_reads_each_report_as_the_mechanisms_unbiased_value() -> None:
    """Report by report, Y = m·φ̃ is the mechanism's pseudo-value and Y² = s·φ̃; and
    E[Y | x] = m·E[φ̃ | x] is x (up to square_wave's grid points), for every decimal
    mechanism, on the question's units."""
    survey = Survey.from_dict({"id": "s", "title": "S", "version": 1, "questions": [
        {"id": name, "type": "decimal", "text": "?", "min": -5, "max": 15, "resolution": 0.5,
         **({} if extra.get("disclosed") else {"epsilon": 2.0}), **extra}
        for name, extra in (
            ("duchi", {"mechanism": "duchi"}), ("piecewise", {"mechanism": "piecewise"}),
            ("hybrid", {"mechanism": "hybrid"}), ("geometric", {"mechanism": "geometric"}),
            ("one_bit_mean", {"mechanism": "one_bit_mean"}),
            ("sw", {"estimate": ["distribution"], "bins": 4}),
            ("pair", {"estimate": ["mean", "distribution"], "bins": 4}),
            ("shown", {"disclosed": True}))]})
    rng = np.random.default_rng(5)
    for question in survey.questions:
        mech = mechanism_for(question)
        encoder = encoder_for(mech)
        answers = rng.integers(0, question.k, 500)
        reports = mech.perturb_many(answers, rng)
        features = np.asarray(encoder.featurize(reports), dtype=float)
        assert encoder.mean is not None and encoder.mean_square is not None
        y = features @ encoder.mean
        np.testing.assert_allclose(y, mech.pseudo_values(reports)[:, 0], rtol=1e-12,
                                   atol=1e-9, err_msg=question.id)
        np.testing.assert_allclose(features @ encoder.mean_square, y * y, rtol=1e-9,
                                   atol=1e-6, err_msg=question.id)
        expected_y = encoder.mean @ encoder.expected
        tolerance = 1e-9 if question.id != "sw" else 20 / (question.k - 1)  # its grid points
        np.testing.assert_allclose(expected_y, encoder.answers, atol=tolerance,
                                   err_msg=question.id)
        assert encoder.cells == ("everyone",) and encoder.mean_only


def _value_variance(encoder: Encoder) -> np.ndarray:
    """Var[Y | x] at the encoder's answers."""
    return encoder.mean_square @ encoder.expected - (encoder.mean @ encoder.expected) ** 2


@pytest.mark.parametrize("extra", [{"mechanism": "hybrid"},
                                   {"estimate": ["distribution"], "bins": 4}],
                         ids=["hybrid", "square_wave"])
def test_the_delta_method_std_error_matches_re_randomizations(extra: dict) -> None:
    """A fixed population of 2,000 (the number depends on the category) re-randomized 600
    times: the numerator is unbiased (z-test), the ratio's empirical variance lies within the
    χ² bounds of the linearized variance (widened by the remainder 3·CV(D)²), the mean stated
    SE² matches its expectation, and the 95% intervals cover at their rate."""
    survey = Survey.from_dict({"id": "s", "title": "S", "version": 1, "questions": [
        {"id": "party", "type": "categorical", "text": "?", "options": ["a", "b", "c"],
         "epsilon": 2.0, "mechanism": "grr"},
        {"id": "amount", "type": "decimal", "text": "?", "min": 0, "max": 100,
         "resolution": 0.5, "epsilon": 2.0, **extra}]})
    party, amount = (mechanism_for(q) for q in survey.questions)
    cols, rows = encoder_for(party), encoder_for(amount)
    n, runs = 2000, 600
    rng = np.random.default_rng(11)
    q = rng.integers(0, 3, n)
    x = np.clip(40 + 40 * q + rng.integers(-40, 41, n), 0, 200)  # grid indices
    values = 0.5 * x
    index_of = {float(a): i for i, a in enumerate(rows.answers)}
    var_v = _value_variance(rows)[[index_of[float(v)] for v in values]]
    v_q = cols.second_moments()  # V[c, q] = E[w_c² | q]

    estimates, stated, numerators = [], [], []
    for _ in range(runs):
        g = gram(rows, cols, amount.perturb_many(x, rng), party.perturb_many(q, rng))
        doc = estimate_crosstab(rows, cols, g)
        estimates.append([c.estimate for c in doc.rows_mean_given_col])
        stated.append([c.std_error for c in doc.rows_mean_given_col])
        gf = np.asarray(g, dtype=float)
        numerators.append(rows.mean @ gf @ cols.estimator.T)
    estimates, stated, numerators = (np.array(a, dtype=float)
                                     for a in (estimates, stated, numerators))
    covered = []
    for c in range(3):
        inside = q == c
        d0, r0 = inside.sum(), values[inside].mean()
        # the numerator Σ v·w_c: unbiased, with its exact variance
        second = v_q[c, q] * (var_v + values**2) - inside * values**2
        assert abs(numerators[:, c].mean() - values[inside].sum()) \
            < Z * np.sqrt(second.sum() / runs)
        per = v_q[c, q] * (var_v + (values - r0) ** 2) - inside * (values - r0) ** 2
        linear = per.sum() / d0**2
        cv2 = (v_q[c, q] - inside).sum() / d0**2  # Var(Σ w_c) / D²
        slack = 3 * cv2
        low, high = chi2.ppf(RATE / 2, runs - 1), chi2.ppf(1 - RATE / 2, runs - 1)
        empirical = estimates[:, c].var(ddof=1)
        assert low / (runs - 1) * (1 - slack) < empirical / linear \
            < high / (runs - 1) * (1 + slack), (c, empirical, linear)
        # the bias of a ratio is O(1/n): allow its first-order term
        bias = abs(((v_q[c, q] - inside) * (values - r0)).sum()) / d0**2
        assert abs(estimates[:, c].mean() - r0) < Z * np.sqrt(linear / runs) + bias
        # the stated SE² estimates E[(w(v - R))²]/D²: the randomization's and the
        # population's spread within c (a superpopulation variance, as every crosstab's)
        expected_stated = (per + inside * (values - r0) ** 2).sum() / d0**2
        s2 = stated[:, c] ** 2
        assert abs(s2.mean() - expected_stated) < Z * s2.std(ddof=1) / np.sqrt(runs) \
            + slack * expected_stated, (c, s2.mean(), expected_stated)
        covered.append(np.abs(estimates[:, c] - r0) <= 1.96 * stated[:, c])
    rate = np.mean(covered)
    assert rate >= 0.95 - Z * np.sqrt(0.95 * 0.05 / (3 * runs)) - 0.02, rate
