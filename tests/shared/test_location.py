"""Location questions: the exact channel's certificate, the survey type, sampling and EM."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from ldpsurvey.shared.errors import AnswerError, SurveyError
from ldpsurvey.shared.exact import exp_lower
from ldpsurvey.shared.location_channel import GeoChannel, GridShape, sqrt_lower, steps
from ldpsurvey.shared.location_estimate import em, operator
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Survey


def _survey(**changes):
    q = {"id": "home", "type": "location", "text": "Where?", "epsilon_geo": 1.0,
         "grid": {"rows": 4, "cols": 5, "cell_km": 0.5},
         "regions": {"left": ["1-4,1-2"], "spot": ["2,3", "3,3"]}}
    q.update(changes)
    return Survey.from_dict({"id": "geo", "title": "Geo", "version": 1, "questions": [q]})


@pytest.mark.parametrize("rows,cols,km,eps", [(2, 3, 2.0, 0.3), (3, 4, 1.0, 0.5),
                                              (5, 5, 0.5, 2.0), (6, 6, 1.0, 1.0),
                                              (1, 9, 1.0, 0.7)])
def test_derived_worst_ratio_equals_the_listed_channels(rows, cols, km, eps):
    g = GeoChannel(GridShape(rows, cols, km), eps)
    assert g.loss == g.explicit_loss()


def test_every_pair_of_cells_is_geo_indistinguishable_exactly():
    g = GeoChannel(GridShape(4, 4, 1.5), 0.8)
    g.certify()
    cells = range(16)
    rc = [divmod(i, 4) for i in cells]
    for x, xp in itertools.permutations(cells, 2):
        m = (rc[x][0] - rc[xp][0]) ** 2 + (rc[x][1] - rc[xp][1]) ** 2
        bound = exp_lower(Fraction(0.8) * Fraction(1.5) * sqrt_lower(m))
        for z in cells:
            ratio = Fraction(g.row_weights(x)[z] * g.totals[xp],
                             g.row_weights(xp)[z] * g.totals[x])
            assert ratio <= bound


def test_rounded_distance_is_a_metric_and_never_shorter():
    for m in range(1, 2000):
        assert steps(m) >= 16 * math.sqrt(m) - 1e-9
        assert steps(m) - 1 < 16 * math.sqrt(m)
    g = GeoChannel(GridShape(7, 9, 1.0), 1.0)
    d = g.cell_steps
    # D(x, z) <= D(x, y) + D(y, z) for every triple
    assert np.all(d[:, None, :] <= d[:, :, None] + d[None, :, :])


def test_plain_epsilon_is_the_exact_log_ratio_and_about_half_the_diagonal():
    q = _survey().questions[0]
    m = mechanism_for(q)
    exact = m.realized_epsilon()
    assert exact <= q.epsilon < exact * (1 + 1e-5)
    diagonal = 1.0 * 0.5 * math.hypot(3, 4)
    assert 0.45 * diagonal < exact <= diagonal


def test_survey_round_trip_and_regions():
    s = _survey()
    again = Survey.from_dict(s.to_dict())
    assert again.canonical_bytes() == s.canonical_bytes()
    q = s.questions[0]
    assert q.k == 20 and q.options[0] == "1,1" and q.options[-1] == "4,5"
    assert q.groups["left"] == ("1,1", "1,2", "2,1", "2,2", "3,1", "3,2", "4,1", "4,2")
    assert q.params == {"base": str(mechanism_for(q).geo.base), "quantum": 16}


@pytest.mark.parametrize("changes,field", [
    ({"epsilon": 0.1}, "questions.home.epsilon"),
    ({"grid": {"rows": 1, "cols": 1, "cell_km": 1}}, "questions.home.grid"),
    ({"grid": {"rows": 4, "cols": 5, "cell_km": 0}}, "questions.home.grid.cell_km"),
    ({"grid": {"rows": 65, "cols": 1, "cell_km": 1}}, "questions.home.grid.rows"),
    ({"epsilon_geo": 50, "grid": {"rows": 20, "cols": 20, "cell_km": 10}},
     "questions.home.epsilon_geo"),
    ({"regions": {"x": ["5,1"]}}, "questions.home.regions.x"),
    ({"regions": {"x": ["a"]}}, "questions.home.regions.x"),
    ({"background": "https://tiles.example/1.png"}, "questions.home.background"),
    ({"background": "data:image/png;base64,AAAA"}, "questions.home.background"),
    ({"mechanism": "grr"}, "questions.home.mechanism"),
    ({"params": {"base": "2"}}, "questions.home.params"),
    ({"options": ["a", "b"]}, "questions.home.options"),
])
def test_bad_location_questions_name_the_field(changes, field):
    with pytest.raises(SurveyError) as err:
        _survey(**changes)
    assert err.value.field == field


def test_a_png_background_travels_in_the_survey():
    png = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    s = _survey(background=png + "+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
    assert s.to_dict()["questions"][0]["background"].startswith("data:image/png;base64,")


class Counting:
    """A random source that returns a fixed draw and records the bound."""

    def __init__(self, value):
        self.value, self.bounds = value, []

    def randbelow(self, n):
        self.bounds.append(n)
        return min(self.value(n), n - 1)


def test_the_draw_walks_the_exact_weights():
    m = mechanism_for(_survey().questions[0])
    x = m.encode("2,3")
    weights = m.geo.row_weights(x)
    edges = list(itertools.accumulate(weights))
    for z in (0, 7, 19):
        src = Counting(lambda n, z=z: edges[z] - 1)
        assert m.perturb_index(x, src) == z
        assert src.bounds == [m.geo.totals[x]]
        src = Counting(lambda n, z=z: edges[z])
        assert m.perturb_index(x, src) == min(z + 1, 19)


@pytest.mark.parametrize("answer", ["2,3", "2, 3", [2, 3], (2, 3)])
def test_answers_name_a_cell(answer):
    assert mechanism_for(_survey().questions[0]).encode(answer) == 7


@pytest.mark.parametrize("answer", ["0,1", "5,1", [True, 1], "north", 3, None])
def test_other_answers_are_refused(answer):
    with pytest.raises(AnswerError):
        mechanism_for(_survey().questions[0]).encode(answer)


def test_simulation_sampler_matches_the_exact_channel():
    m = mechanism_for(_survey().questions[0])
    n = 200_000
    rng = np.random.default_rng(5)
    reports = m.perturb_many(np.full(n, 7), rng)
    observed = np.bincount(reports, minlength=20) / n
    expected = np.array([Fraction(w, m.geo.totals[7]) for w in m.geo.row_weights(7)], float)
    # per cell: |obs - p| <= 4.5 sd (two-sided false alarm ~7e-6 per cell, 20 cells)
    assert np.all(np.abs(observed - expected) <= 4.5 * np.sqrt(expected * (1 - expected) / n))


def test_em_recovers_the_truth_from_noise_free_reports():
    m = mechanism_for(_survey(epsilon_geo=3.0).questions[0])
    truth = np.linspace(1, 3, 20)
    truth /= truth.sum()
    op = operator(m.geo)
    observed = op.reports(truth[None, :])
    result = em(op, observed, max_passes=5000)
    assert result.gap[0] <= 1e-6
    assert np.abs(result.f[0] - truth).max() < 0.02


def test_estimate_reads_regions_with_unbiased_intervals_and_em_as_the_map():
    m = mechanism_for(_survey().questions[0])
    rng = np.random.default_rng(3)
    truth = np.zeros(20)
    truth[[0, 1, 5, 6]] = 0.25  # everyone in the top-left corner (inside "left")
    answers = rng.choice(20, size=5000, p=truth)
    est = m.estimate(m.aggregate_many(m.perturb_many(answers, rng))).to_dict()
    left = next(g for g in est["groups"] if g["name"] == "left")
    # the truth is 1: within 4.5 worst-case standard errors (two-sided false alarm ~7e-6)
    assert abs(left["estimate"] - 1) <= 4.5 * left["std_error"]
    assert left["ci_low"] <= left["estimate"] <= left["ci_high"]
    assert left["consistent"] > est["location"]["raw_report_shares"]["left"]
    assert est["consistent_method"] == "em" and "worst-case" in est["interval_method"]
    # the cells' unbiased estimates sum to 1 exactly (A·1 = 1), EM's too
    assert abs(sum(c["estimate"] for c in est["categories"]) - 1) < 1e-9
    assert abs(sum(c["consistent"] for c in est["categories"]) - 1) < 1e-9
    assert est["location"]["em"]["converged"] is True
    assert any("raw" in n or "share of reports" in n for n in est["notes"])


def test_same_aggregate_gives_the_same_intervals():
    m = mechanism_for(_survey().questions[0])
    agg = m.aggregate_many(np.arange(20).repeat(50))
    assert m.estimate(agg).to_dict() == m.estimate(agg).to_dict()


def test_a_region_name_answers_its_central_cell():
    m = mechanism_for(_survey().questions[0])
    assert m.labels[m.encode("left")] == "2,1"  # rows 1-4 x cols 1-2: nearest the centroid
    assert m.labels[m.encode("spot")] == "2,3"


def test_every_interval_reaches_its_own_estimate_even_at_tiny_n():
    m = mechanism_for(_survey().questions[0])
    rng = np.random.default_rng(11)
    for n in (1, 2, 3, 5, 8):
        for _ in range(5):
            est = m.estimate(m.aggregate_many(rng.integers(0, 20, n))).to_dict()
            for row in [*est["categories"], *est["groups"]]:
                assert row["ci_low"] <= row["estimate"] <= row["ci_high"], (n, row)


def test_the_docs_example_fits_the_respondents_default_limit_and_its_margins():
    """docs/location.md's example question (issue 32: it was plain ε 13.3, which every
    respondent with the default limit of 5 refuses): parsed as written (a real 1-pixel PNG for
    the elided background), its plain ε is within the default limit, and the margins the text
    states are plan's."""
    import base64
    import re
    import tomllib
    from pathlib import Path

    from ldpsurvey.analyst.plan.location import plan_location
    from ldpsurvey.client.budget import DEFAULT_MAX_EPSILON

    text = (Path(__file__).resolve().parents[2] / "docs" / "location.md").read_text()
    block = re.search(r"```toml\n(.*?)```", text, re.S).group(1)
    png = base64.b64encode(bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082")).decode()
    block = block.replace("iVBORw0...", png)
    q = tomllib.loads(block)["questions"][0]
    question = Survey.from_dict({"id": "doc", "title": "Doc", "version": 1,
                                 "questions": [q]}).questions[0]
    assert question.epsilon <= DEFAULT_MAX_EPSILON
    assert f"plain ε is {question.epsilon:.3g}" in text
    for n, stated in ((2_000, "±31 to ±42 percentage points at 2,000"),
                      (20_000, "±10 to ±13 at 20,000")):
        margins = [r.margin for r in plan_location(question, n=n).rows if r.configured]
        assert stated in " ".join(text.split())
        low, high = (int(v) for v in re.findall(r"±(\d+)", stated))
        assert round(min(margins) * 100) == low and round(max(margins) * 100) == high


@pytest.mark.parametrize("epsilon_geo", [0.5, 2.0])
def test_em_converges_at_n_20000_within_its_cap(epsilon_geo):
    """Issue 32: at ε_geo = 0.5/km and n = 20,000 EM hit its 600-pass cap in every run,
    6e-5 to 4.6e-4 nats per report short of its 1e-6 rule. Now it meets the rule (the bench
    measured 2,500-5,700 passes)."""
    from ldpsurvey.analyst.simulate.location import location_weights
    from ldpsurvey.shared.location_estimate import MAX_PASSES, TOLERANCE

    m = mechanism_for(Survey.from_dict({"id": "g", "title": "g", "version": 1, "questions": [
        {"id": "home", "type": "location", "text": "W", "epsilon_geo": epsilon_geo,
         "grid": {"rows": 20, "cols": 20, "cell_km": 1.0}}]}).questions[0])
    rng = np.random.default_rng(1)
    answers = rng.choice(400, size=20_000, p=location_weights(20, 20))
    counts = np.bincount(m.perturb_many(answers, rng), minlength=400)
    result = em(operator(m.geo), counts / counts.sum())
    assert result.converged and result.gap[0] <= TOLERANCE and result.passes < MAX_PASSES
