"""Design-based shares among those asked (skip logic with weights, strata and clusters).

A hidden question (its condition reads a randomized answer) is reported by every respondent,
"not asked" being one of its values. A design-based report gave only the shares of everyone
("(not asked)" as one more category; an ordinal question's mean score counted "not asked" as a
score) and nothing among those asked, which the simple random sample report gives. Now every
format has them: ratios of the weighted pseudo-values (shared/design/among_asked.py), checked
here three ways:
- on a simple random sample design they ARE shared/among_asked.py's estimator (its delta method
  is the same linearization), to 1e-12;
- on a stratified cluster design with unequal weights, R's svyratio on the same pseudo-values
  gives the same estimates and standard errors (1e-8), through the real CLI;
- the randomization variance estimate of each ratio's residual (the fpc's term and the deff's
  privacy part) is exactly unbiased, over every report of a GRR over the options and
  "not asked".
"""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.shared.design import Design
from ldpsurvey.shared.design import pseudo_values as question_pseudo_values
from ldpsurvey.shared.design.among_asked import (
    among_asked,
    asked_mean,
    column_coefficients,
    randomization_estimates,
)
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.skip_logic import NOT_ASKED
from ldpsurvey.shared.survey import Survey
from support import designed
from support.r_oracle import run_r

SURVEY = designed.ASKED_SURVEY
BRAND, CRAVING = designed.BRAND, designed.CRAVING
units = designed.asked_units


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> designed.Built:
    return designed.build(tmp_path_factory.mktemp("asked") / "survey.db", survey=SURVEY,
                          units=units(), fpc=False)


def test_on_a_simple_random_sample_it_is_the_srs_estimator() -> None:
    survey = Survey.from_dict(SURVEY)
    question = next(q for q in survey.questions if q.id == "brand")
    mechanism = mechanism_for(question)
    rng = np.random.default_rng(3)
    truth = rng.choice(4, size=3000, p=[0.2, 0.1, 0.1, 0.6])
    reports = mechanism.perturb_many(truth, rng)
    srs = mechanism.estimate(mechanism.aggregate_many(reports)).among_asked
    pv = question_pseudo_values(question, mechanism, reports)
    ours = among_asked(Design.simple_random_sample(truth.size), pv, 3, mechanism.groups)
    assert ours.estimates is not None
    rows = ours.estimates.rows()
    expected = [*srs.categories, *srs.groups]
    assert [r.label for r in rows] == [*BRAND, "a or b"]
    np.testing.assert_allclose([r.estimate for r in rows], [e.estimate for e in expected],
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose([r.std_error for r in rows], [e.std_error for e in expected],
                               rtol=1e-10, atol=0)


def test_a_hidden_integer_on_a_simple_random_sample_is_the_srs_estimator() -> None:
    survey = Survey.from_dict(SURVEY)
    question = next(q for q in survey.questions if q.id == "cigs")
    mechanism = mechanism_for(question)
    rng = np.random.default_rng(4)
    answers = np.where(rng.random(3000) < 0.4, rng.integers(0, 21, 3000),
                       mechanism.encode(NOT_ASKED))
    reports = mechanism.perturb_many(answers, rng)
    srs = mechanism.estimate(mechanism.aggregate_many(reports))
    ours = asked_mean(Design.simple_random_sample(answers.size), mechanism, reports,
                      np.ones(answers.size, dtype=bool))
    assert ours.extras is not None and ours.mean is not None
    [share], [mean] = ours.extras.rows(), ours.mean.rows()
    assert share.estimate == pytest.approx(srs.not_asked.estimate, abs=1e-12)
    assert share.std_error == pytest.approx(srs.not_asked.std_error, rel=1e-10)
    assert mean.estimate == pytest.approx(srs.among_asked.mean.estimate, abs=1e-10)
    assert mean.std_error == pytest.approx(srs.among_asked.mean.std_error, rel=1e-10)


def test_an_integer_with_special_values_on_a_simple_random_sample_is_the_srs_estimator(
) -> None:
    """Special values: the pair is [status code, number] (GRR over the codes): each extra
    value's share and the mean among those who gave an answer are the plain estimator's."""
    survey = Survey.from_dict({"id": "s", "title": "S", "version": 1, "questions": [
        {"id": "gate", "text": "Gate?", "type": "binary", "epsilon": 1.0},
        {"id": "n", "text": "How many?", "type": "integer", "epsilon": 2.0, "min": 0,
         "max": 20, "relevant": "gate", "special": {"dont_know": "DK", "refused": "PNTA"}}]})
    question = survey.questions[1]
    mechanism = mechanism_for(question)
    assert mechanism.codes == 4
    rng = np.random.default_rng(8)
    n = 4000
    kind = rng.choice(4, size=n, p=[0.5, 0.1, 0.15, 0.25])  # answer, DK, PNTA, not asked
    answers = np.where(kind == 0, rng.integers(0, 21, n),
                       np.array([0, *(mechanism.encode(v) for v in ("DK", "PNTA", NOT_ASKED))])
                       [kind])
    reports = mechanism.perturb_many(answers, rng)
    srs = mechanism.estimate(mechanism.aggregate_many(reports))
    ours = asked_mean(Design.simple_random_sample(n), mechanism, reports,
                      np.ones(n, dtype=bool))
    assert ours.extras is not None and ours.mean is not None
    rows = ours.extras.rows()
    expected = [*srs.special, srs.not_asked]
    assert [r.label for r in rows] == ["DK", "PNTA", NOT_ASKED]
    np.testing.assert_allclose([r.estimate for r in rows], [e.estimate for e in expected],
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose([r.std_error for r in rows], [e.std_error for e in expected],
                               rtol=1e-10, atol=0)
    [mean] = ours.mean.rows()
    assert mean.estimate == pytest.approx(srs.among_asked.mean.estimate, abs=1e-10)
    assert mean.std_error == pytest.approx(srs.among_asked.mean.std_error, rel=1e-10)


def test_the_cli_equals_r_svyratio_on_a_stratified_cluster_design(
        built: designed.Built) -> None:
    result = CliRunner().invoke(cli, ["report", "--db", str(built.path), "--survey",
                                      built.survey_id, "--weighted", "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout[result.stdout.index("{"):])
    by_id = {q["question"]: q for q in doc["questions"]}
    mechanisms = designed.mechanisms(SURVEY)
    table: dict[str, Any] = {"w": [u.weight for u in built.responded],
                             "stratum": [u.stratum for u in built.responded],
                             "psu": [u.psu for u in built.responded]}
    for qid, labels in (("brand", BRAND), ("craving", CRAVING)):
        mechanism = mechanisms[qid]
        reports = [mechanism.encode(u.answers[qid]) for u in built.responded]
        stored = _stored(built, qid)
        assert len(stored) == len(reports)
        z = mechanism.pseudo_values(np.array(stored))
        for j, label in enumerate(labels):
            table[f"{qid}_{label}"] = z[:, j]
        table[f"{qid}_asked"] = 1.0 - z[:, 3]
    cigs = mechanisms["cigs"]
    pairs = np.array(_stored(built, "cigs"), dtype=float)
    table["cigs_z"] = (pairs[:, 0] - float(cigs.q_star)) / float(cigs.p_star - cigs.q_star)
    table["cigs_na"] = 1.0 - table["cigs_z"]
    table["cigs_y"] = pairs[:, 1] - cigs.default
    table["brand_ab"] = table["brand_a"] + table["brand_b"]
    table["craving_score"] = (table["craving_mild"] + 2 * table["craving_strong"]
                              + 3 * table["craving_severe"])
    script = """
d <- read.csv("d.csv")
des <- svydesign(ids = ~psu, strata = ~stratum, weights = ~w, nest = TRUE, data = d)
b <- svyratio(~brand_a + brand_b + brand_c + brand_ab, ~brand_asked, des)
c <- svyratio(~craving_mild + craving_strong + craving_severe + craving_score, ~craving_asked,
              des)
na <- svymean(~cigs_na, des)
m <- svyratio(~cigs_y, ~cigs_z, des)
emit(list(est = c(coef(b), coef(c), coef(na), coef(m)), se = c(SE(b), SE(c), SE(na), SE(m))))
"""
    r = run_r(script, {"d": table})
    brand, craving = by_id["brand"]["among_asked"], by_id["craving"]["among_asked"]
    ours = [*brand["categories"], *brand["groups"], *craving["categories"], craving["mean"],
            by_id["cigs"]["not_asked"], by_id["cigs"]["among_asked"]["mean"]]
    assert [c["value"] for c in brand["categories"]] == list(BRAND)
    r["est"][-1] += cigs.default  # the mean among those asked is d + the ratio
    assert np.allclose([o["estimate"] for o in ours], r["est"], rtol=0, atol=1e-8)
    assert np.allclose([o["std_error"] for o in ours], r["se"], rtol=0, atol=1e-8)
    # the share not asked is reported apart, and no mean score counts "not asked" as a score
    assert by_id["brand"]["not_asked"]["value"] == NOT_ASKED
    assert "mean" not in by_id["craving"]
    table_text = CliRunner().invoke(cli, ["report", "--db", str(built.path), "--survey",
                                          built.survey_id, "--weighted"]).stdout
    assert "among those asked:" in table_text and "groups among those asked:" in table_text
    html = CliRunner().invoke(cli, ["report", "--db", str(built.path), "--survey",
                                    built.survey_id, "--weighted", "--format", "html"]).stdout
    # the side-by-side table sets the rows among those asked apart, and says what they are
    # (across all ten columns: the population-scaled weights add the total and its s.e.)
    assert '<tr class="section"><th colspan="10">Among those asked</th></tr>' in html
    assert "brand = a among those asked" in html
    assert "brand: (not asked)" not in html  # the headline is a share among those asked


def _stored(built: designed.Built, qid: str) -> list[Any]:
    import sqlite3

    with sqlite3.connect(built.path) as conn:
        rows = conn.execute("SELECT reports FROM submissions ORDER BY seq").fetchall()
    return [json.loads(r[0])[qid] for r in rows]


@pytest.mark.parametrize("ratio", [Fraction(0), Fraction(1, 3), Fraction(-2, 5)])
def test_the_residuals_randomization_variance_estimate_is_unbiased(ratio: Fraction) -> None:
    """For every true value x of a GRR over 3 options and "not asked" and every column c (the
    options, a group, the mean score), the expectation of V̂(c·z) + R²·V̂(1 − z_na) − 2R·Ĉ over
    the exact report distribution is the variance of the residual c·z − R(1 − z_na)."""
    survey = Survey.from_dict(SURVEY)
    question = next(q for q in survey.questions if q.id == "craving")
    mechanism = mechanism_for(question)
    p, q = Fraction(mechanism.p_star), Fraction(mechanism.q_star)
    z = mechanism.pseudo_values(np.arange(4))  # row y: the pseudo-values of report y
    coefficients = column_coefficients(3, [[0, 1]], ordinal=True)
    noise, den_noise, cross = randomization_estimates(z, coefficients)
    r = float(ratio)
    estimate = noise + r * r * den_noise - 2 * r * cross  # per report y, per column
    residual = z @ coefficients - r * (1.0 - z[:, 3:4])
    for x in range(4):
        chance = np.array([float(p if y == x else q) for y in range(4)])
        mean = chance @ residual
        variance = chance @ (residual - mean) ** 2
        np.testing.assert_allclose(chance @ estimate, variance, rtol=1e-10, atol=1e-12)


def test_the_weighted_html_shows_among_those_asked_once_and_labels_the_score(
        built: designed.Built) -> None:
    """Issue 39: the weighted HTML printed the among-those-asked rows twice (its side-by-side
    table and the plain one); an ordinal mean among those asked is a score and says so."""
    html = CliRunner().invoke(cli, ["report", "--db", str(built.path), "--survey",
                                    built.survey_id, "--weighted", "--format", "html"]).stdout
    for qid in ("brand", "craving", "cigs"):
        section = html.split(f'id="q-{qid}"', 1)[1].split("</section>", 1)[0]
        assert section.count("Among those asked") == 1, qid
    craving = html.split('id="q-craving"', 1)[1].split("</section>", 1)[0]
    assert "mean score (mild = 1 ... severe = 3)" in craving


def test_the_chart_shows_the_shares_among_those_asked(built: designed.Built) -> None:
    """Issue 39: the chart of a question with skip logic had no bar for its shares among
    those asked; each option (and group) among those asked is a bar of its own."""
    from ldpsurvey.analyst.design.data import db_source
    from ldpsurvey.analyst.design.estimates import DesignOptions, estimate_document, weighted
    from ldpsurvey.analyst.reports.charts import frequency_chart
    from ldpsurvey.analyst.reports.model import Report

    with db_source(str(built.path), built.survey_id, None) as source:
        w = weighted(source, DesignOptions(weighted=True))
        doc = estimate_document(w, 0.95, source.estimates(0.95))
    view = next(q for q in Report(w.version.survey, doc).questions() if q.id == "brand")
    figure = frequency_chart(view, None)
    assert figure is not None
    ticks = [t.get_text().replace("\n", " ") for t in figure.axes[0].get_yticklabels()]
    assert [t for t in ticks if "among those asked" in t] == [
        "a (among those asked)", "b (among those asked)", "c (among those asked)",
        "a or b (group, among those asked)"]
