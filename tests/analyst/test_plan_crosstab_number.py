"""`plan --crosstab` with a number's side (issue 41's gaps): respondents for a margin on the
number's mean among each category of the other question (analyst/plan/among_category.py,
shared/joint_values.mean_given_category_bound).

The bound is checked three ways: it is never below the per-report quantity the crosstab's
stated interval estimates, n·E[SE²] = Σ_i V_c(q_i)·(g(x_i) + (x_i - R)²)/(n·π²), for any
population in which the category holds π (exact, over random and extreme populations); a
population built from its argument attains it (to the answers the encoder samples); and at
that worst population with the planned n, re-randomized reports give estimates within the
margin at the planned confidence, their mean stated SE² equal to (margin/z)² (statistical:
each check two-sided at a false-alarm rate of 1e-5, the ratio's O(CV²) remainder allowed as
tests/shared/test_decimal_crosstab_statistics.py allows it).
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.analyst.plan.among_category import AmongCategoryPlan
from ldpsurvey.analyst.plan.crosstab import plan_crosstab
from ldpsurvey.shared.crosstab import estimate_crosstab, gram
from ldpsurvey.shared.joint_features import encoder_for
from ldpsurvey.shared.joint_values import mean_given_category_bound
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Survey

RATE = 1e-5
Z = NormalDist().inv_cdf(1 - RATE / 2)
SHARE = 0.25


def _survey(extra: dict, party: dict | None = None) -> Survey:
    return Survey.from_dict({"id": "s", "title": "S", "version": 1, "questions": [
        {"id": "party", "type": "categorical", "text": "?", "options": ["a", "b", "c"],
         "epsilon": 2.0, "mechanism": "grr", **(party or {})},
        {"id": "amount", "type": "decimal", "text": "?", "min": 0, "max": 100,
         "resolution": 0.5, "epsilon": 2.0, **extra}]})


NUMBERS = {"hybrid": {"mechanism": "hybrid"}, "duchi": {"mechanism": "duchi"},
           "square_wave": {"estimate": ["distribution"], "bins": 4}}


def _sides(survey: Survey):
    party, amount = (mechanism_for(q) for q in survey.questions)
    return encoder_for(amount), encoder_for(party), amount, party


def _per_report(number, other, q: np.ndarray, x: np.ndarray, c: int) -> float:
    """n·E[stated SE²] of the mean among c for a population (q_i, answer index x_i)."""
    g = number.mean_square @ number.expected - (number.mean @ number.expected) ** 2
    values = number.answers[x]
    inside = q == c
    r = values[inside].mean()
    v = other.second_moments()[c, q]
    return float((v * (g[x] + (values - r) ** 2)).sum() / q.size / inside.mean() ** 2)


def _worst_population(number, other, c: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """n respondents, SHARE of them in c on two answers whose mean is the bound's argument R,
    the rest in the category with the largest V_c at the answer farthest from R (g added)."""
    x = number.answers
    g = number.mean_square @ number.expected - (number.mean @ number.expected) ** 2
    v = other.second_moments()
    v_in = v[c, c]
    out = [k for k in range(v.shape[0]) if k != c]
    q_out = max(out, key=lambda k: v[c, k])
    best = (-np.inf, 0, 0, 0.0, 0)
    h = g + x * x
    for i in range(x.size):  # R at answer i: the best pair around it and the farthest answer
        lo, hi = np.arange(i + 1), np.arange(i, x.size)
        span = np.where(x[hi][None, :] > x[lo][:, None],
                        x[hi][None, :] - x[lo][:, None], 1.0)
        t = np.where(x[hi][None, :] > x[lo][:, None], (x[hi][None, :] - x[i]) / span, 1.0)
        inner = t * h[lo][:, None] + (1 - t) * h[hi][None, :] - x[i] ** 2
        j = np.unravel_index(np.argmax(inner), inner.shape)
        far = int(np.argmax(g + (x - x[i]) ** 2))
        spread = g[far] + (x[far] - x[i]) ** 2
        total = SHARE * v_in * inner[j] + (1 - SHARE) * v[c, q_out] * spread
        if total > best[0]:
            best = (total, int(lo[j[0]]), int(hi[j[1]]), float(t[j]), far)
    _, a, b, t, far = best
    inside = round(SHARE * n)
    at_a = round(t * inside)
    q = np.array([c] * inside + [q_out] * (n - inside))
    idx = np.array([a] * at_a + [b] * (inside - at_a) + [far] * (n - inside))
    return q, idx


@pytest.mark.parametrize("name", sorted(NUMBERS))
def test_the_bound_holds_for_every_population_and_is_attained(name: str) -> None:
    number, other, _, _ = _sides(_survey(NUMBERS[name]))
    bound = mean_given_category_bound(number, other, SHARE)
    rng = np.random.default_rng(3)
    n, k = 400, number.answers.size
    for c in range(3):
        for trial in range(300):
            q = np.where(np.arange(n) < SHARE * n, c,
                         rng.choice([k_ for k_ in range(3) if k_ != c], n))
            x = (rng.integers(0, k, n) if trial % 3 == 0 else
                 rng.choice([0, k - 1], n) if trial % 3 == 1 else
                 rng.choice(rng.integers(0, k, 3), n))
            assert _per_report(number, other, q, x, c) <= bound[c] * (1 + 1e-9)
        q, x = _worst_population(number, other, c, 4000)
        attained = _per_report(number, other, q, x, c)
        assert attained <= bound[c] * (1 + 1e-9)
        assert attained >= bound[c] * 0.995, (name, c, attained, bound[c])


@pytest.mark.parametrize("name", ["hybrid", "square_wave"])
def test_the_planned_n_meets_the_margin_at_the_worst_truth(name: str) -> None:
    survey = _survey(NUMBERS[name])
    number, other, amount, party = _sides(survey)
    margin, confidence = 4.0, 0.95
    plan = plan_crosstab(survey, "amount", "party", margin=margin, confidence=confidence,
                         category_share=SHARE)
    assert isinstance(plan, AmongCategoryPlan)
    c = 0
    n = plan.rows[c].n
    assert 1000 < n < 20000, n
    q, x = _worst_population(number, other, c, n)
    values = number.answers[x]
    r0 = values[q == c].mean()
    runs = 300
    rng = np.random.default_rng(17)
    estimates, stated = [], []
    for _ in range(runs):
        g = gram(number, other, amount.perturb_many(x, rng), party.perturb_many(q, rng))
        cell = estimate_crosstab(number, other, g).rows_mean_given_col[c]
        estimates.append(cell.estimate)
        stated.append(cell.std_error)
    estimates, stated = np.asarray(estimates, float), np.asarray(stated, float)
    v = other.second_moments()[c, q]
    d0 = (q == c).sum()
    slack = 3 * (v - (q == c)).sum() / d0**2  # the ratio's remainder, CV(Σ w_c)²
    z95 = NormalDist().inv_cdf(0.5 + confidence / 2)
    # the stated SE² at the worst truth is the plan's (margin/z)², up to n's rounding up
    target = (margin / z95) ** 2
    s2 = stated**2
    assert abs(s2.mean() - target) < Z * s2.std(ddof=1) / np.sqrt(runs) + (slack + 0.01) * target
    # and the estimates are within the margin at the planned confidence
    within = np.mean(np.abs(estimates - r0) <= margin)
    assert within >= confidence - Z * np.sqrt(confidence * (1 - confidence) / runs) - slack


def test_plan_crosstab_of_a_decimal_prints_each_category(tmp_path) -> None:
    """Main refused: "plan --crosstab plans joint shares; 'amount' is a number ..."."""
    path = tmp_path / "s.toml"
    path.write_text('id = "s"\ntitle = "S"\nversion = 1\n[[questions]]\nid = "party"\n'
                    'type = "categorical"\ntext = "?"\noptions = ["a", "b", "c"]\n'
                    'epsilon = 2.0\nmechanism = "grr"\n[[questions]]\nid = "amount"\n'
                    'type = "decimal"\ntext = "?"\nmin = 0\nmax = 100\nresolution = 0.5\n'
                    'epsilon = 2.0\nmechanism = "hybrid"\n', encoding="utf-8")
    survey = _survey(NUMBERS["hybrid"])
    planned = plan_crosstab(survey, "party", "amount", margin=4.0, category_share=0.1)
    result = CliRunner().invoke(cli, ["plan", str(path), "--crosstab", "party", "amount",
                                      "--margin", "4", "--category-share", "0.1"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    for row in planned.rows:
        assert f"  party = {row.category}: mean within ±4 needs {row.n:,} respondents" in lines
    # a rarer category needs more; a margin --n gives is the margin that n needs
    assert plan_crosstab(survey, "party", "amount", margin=4.0,
                         category_share=0.3).rows[0].n < planned.rows[0].n
    given = plan_crosstab(survey, "party", "amount", n=planned.rows[0].n, category_share=0.1)
    assert 3.99 < given.rows[0].margin <= 4.0
    for args, message in (
            (["--median-margin", "3"], "Error: --median-margin: the median among each "
                                       "category is not planned"),
            (["--category-share", "1"], "Error: Invalid value for '--category-share'")):
        bad = CliRunner().invoke(cli, ["plan", str(path), "--crosstab", "party", "amount",
                                       "--margin", "4", *args])
        assert bad.exit_code != 0
        assert bad.output.strip().splitlines()[-1].startswith(message), bad.output
