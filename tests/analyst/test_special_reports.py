"""Special values ("Don't know", "Prefer not to say") in reports: every format gives each special
value's share (with its s.e.) and the estimates among those who gave an answer, titled so."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from ldpsurvey.analyst.reports.model import Report, render
from ldpsurvey.shared.estimand import plain_estimate
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Survey

REFUSED = {"refused": "Prefer not to say"}
SURVEY = Survey.from_dict({"id": "dk", "title": "DK", "version": 1, "questions": [
    {"id": "used", "text": "Used?", "type": "binary", "epsilon": 2.0, "special": REFUSED},
    {"id": "often", "text": "How often?", "type": "ordinal", "epsilon": 2.0,
     "options": ["never", "sometimes", "often"],
     "special": {"dont_know": "Don't know", **REFUSED}},
    {"id": "days", "text": "Days?", "type": "integer", "epsilon": 2.0, "min": 0, "max": 7,
     "special": REFUSED},
]})


@pytest.fixture(scope="module")
def report() -> Report:
    rng = np.random.default_rng(0)
    questions = []
    for q in SURVEY.questions:
        m = mechanism_for(q)
        truth = rng.integers(0, q.k + (1 if q.type == "integer" else 0), size=3000)
        questions.append(plain_estimate(q, m, m.aggregate_many(m.perturb_many(truth, rng)))
                         .to_dict())
    doc = {"survey": SURVEY.id, "version": 1, "confidence": 0.95, "n_submissions": 3000,
           "questions": questions}
    return Report(SURVEY.to_dict(), doc)


def test_every_format_shows_special_shares_and_estimates_among_answerers(
        report: Report) -> None:
    table = render(report, "table")
    assert "among those who gave an answer:" in table and "Prefer not to say" in table
    assert "among those asked:" not in table
    rows = list(csv.DictReader(io.StringIO(render(report, "csv"))))
    special = [r for r in rows if r["option"] == "Prefer not to say"]
    assert {r["question"] for r in special} == {"used", "often", "days"}
    assert all(float(r["std_error"]) > 0 for r in special)
    assert {("often", "asked_mean"), ("used", "asked_option"), ("days", "asked_mean")} <= {
        (r["question"], r["kind"]) for r in rows}
    doc = json.loads(render(report, "json"))
    often = next(q for q in doc["questions"] if q["question"] == "often")
    assert [s["value"] for s in often["special"]] == ["Don't know", "Prefer not to say"]
    assert len(often["among_asked"]["categories"]) == 3 and "not_asked" not in often
    assert often["among_asked"]["mean"]["std_error"] > 0
    html = render(report, "html")
    assert html.count("<h3>Among those who gave an answer</h3>") == 3
    assert "| asked_option | never |" in render(report, "md")


def test_plan_shows_what_special_values_cost(tmp_path) -> None:
    """Each question with special values is planned among those who give an answer
    (--answered), with the same question without them as the last row: more respondents
    with them than without, and more the fewer answer."""
    from click.testing import CliRunner
    from ldpsurvey.analyst.cli import cli
    from ldpsurvey.analyst.plan.survey import plan_survey

    path = tmp_path / "dk.json"
    path.write_text(json.dumps(SURVEY.to_dict()))
    result = CliRunner().invoke(cli, ["plan", str(path), "--margin", "0.05",
                                      "--answered", "0.8"])
    assert result.exit_code == 0, result.output
    assert "80% of respondents give an answer (--answered)" in result.output
    assert result.output.count("without special values") >= 3
    for answered in (0.9, 0.6):
        plans = plan_survey(SURVEY, margin=0.05, answered=answered)
        for plan in plans.questions:
            configured = next(r for r in plan.rows if r.configured)
            without = plan.rows[-1]
            assert without.mechanism.endswith("without special values")
            assert configured.n > without.n
    few = plan_survey(SURVEY, margin=0.05, answered=0.6).questions[0]
    many = plan_survey(SURVEY, margin=0.05, answered=0.9).questions[0]
    assert few.rows[0].n > many.rows[0].n


@pytest.mark.parametrize("hidden", [False, True])
def test_design_based_among_answerers_on_a_simple_random_sample_is_the_plain_estimator(
        hidden: bool) -> None:
    """The design-based ratios among those who gave an answer (shared/design/among_asked.py,
    the extra values summed in the denominator) equal the plain report's on a simple random
    sample, estimates and standard errors."""
    from ldpsurvey.shared.design import Design
    from ldpsurvey.shared.design import pseudo_values as question_pseudo_values
    from ldpsurvey.shared.design.among_asked import among_asked
    from ldpsurvey.shared.question_types.base import extra_values

    gate = [{"id": "gate", "text": "Gate?", "type": "binary", "epsilon": 1.0}] if hidden else []
    survey = Survey.from_dict({"id": "d", "title": "D", "version": 1, "questions": [*gate, {
        "id": "often", "text": "How often?", "type": "ordinal", "epsilon": 2.0,
        "options": ["never", "sometimes", "often"], "groups": {"ever": ["sometimes", "often"]},
        "special": {"dont_know": "Don't know", **REFUSED},
        **({"relevant": "gate"} if hidden else {})}]})
    question = survey.questions[-1]
    mechanism = mechanism_for(question)
    extra = len(extra_values(question))
    k = len(question.labels) - extra
    rng = np.random.default_rng(5)
    truth = rng.choice(len(question.labels), size=3000)
    reports = mechanism.perturb_many(truth, rng)
    srs = mechanism.estimate(mechanism.aggregate_many(reports)).among_asked
    pv = question_pseudo_values(question, mechanism, reports)
    ours = among_asked(Design.simple_random_sample(truth.size), pv, k, mechanism.groups,
                       ordinal=True, extra=extra)
    assert ours.estimates is not None
    rows = ours.estimates.rows()
    expected = [*srs.categories, *srs.groups, srs.mean]
    np.testing.assert_allclose([r.estimate for r in rows], [e.estimate for e in expected],
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose([r.std_error for r in rows], [e.std_error for e in expected],
                               rtol=1e-10, atol=0)


def test_through_the_server_store_every_report_path_gives_special_shares(tmp_path) -> None:
    """Submissions posted through the server's API (a yes/no question with "Prefer not to
    say", an ordinal one with both special values, an integer one, a follow-up): the plain
    report and the design-based one (--weighted) give the special shares and the rows among
    those who gave an answer (an integer's from its status codes); every format renders."""
    from click.testing import CliRunner
    from ldpsurvey.analyst.cli import cli
    from ldpsurvey.shared.skip_logic import NOT_ASKED
    from support import designed

    survey = {"id": "dk-store", "title": "DK", "version": 1, "questions": [
        *(q.to_dict() for q in SURVEY.questions),
        {"id": "why", "text": "Why?", "type": "categorical", "epsilon": 2.0,
         "options": ["cost", "taste"], "relevant": "used", "special": REFUSED}]}
    rng = np.random.default_rng(2)
    units = []
    for i in range(300):
        used = ["Prefer not to say", True, False][int(rng.choice(3, p=[0.2, 0.4, 0.4]))]
        answers = {"used": used,
                   "often": ["never", "sometimes", "often", "Don't know",
                             "Prefer not to say"][int(rng.integers(0, 5))],
                   "days": "Prefer not to say" if rng.random() < 0.2 else int(rng.integers(0, 8)),
                   "why": (["cost", "taste", "Prefer not to say"][int(rng.integers(0, 3))]
                           if used is True else NOT_ASKED)}
        units.append(designed.Unit(id=f"u{i}", weight=1.0, stratum="all", psu=f"p{i}",
                                   fpc=10**6, answers=answers))
    built = designed.build(tmp_path / "dk.db", survey=survey, units=units, response_rate=1.0,
                           fpc=False)

    def report(*args: str) -> str:
        result = CliRunner().invoke(cli, ["report", "--db", str(built.path), "--survey",
                                          "dk-store", *args])
        assert result.exit_code == 0, result.output
        return result.stdout

    plain = {q["question"]: q for q in json.loads(report("--format", "json"))["questions"]}
    assert [s["value"] for s in plain["often"]["special"]] == ["Don't know",
                                                               "Prefer not to say"]
    assert plain["days"]["special"][0]["std_error"] > 0
    assert plain["days"]["among_asked"]["mean"]["estimate"] is not None
    why = plain["why"]
    assert why["not_asked"]["value"] == NOT_ASKED and why["special"][0]["value"] == REFUSED[
        "refused"]
    assert len(why["among_asked"]["categories"]) == 2
    weighted = {q["question"]: q for q in json.loads(
        report("--format", "json", "--weighted"))["questions"]}
    for qid in ("used", "often", "why"):
        assert weighted[qid]["special"] and weighted[qid]["among_asked"]["categories"], qid
        np.testing.assert_allclose(
            [c["estimate"] for c in weighted[qid]["among_asked"]["categories"]],
            [c["estimate"] for c in plain[qid]["among_asked"]["categories"]], atol=1e-9)
    # the integer's [status code, number] pairs: on equal weights the plain estimator's
    days, plain_days = weighted["days"], plain["days"]
    assert [s["value"] for s in days["special"]] == ["Prefer not to say"]
    assert days["special"][0]["estimate"] == pytest.approx(
        plain_days["special"][0]["estimate"], abs=1e-9)
    assert days["among_asked"]["mean"]["estimate"] == pytest.approx(
        plain_days["among_asked"]["mean"]["estimate"], abs=1e-9)
    assert "total" in days["special"][0]  # None here: the weights give no totals
    assert "among those who gave an answer:" in report("--format", "table")
    assert "<h3>Among those who gave an answer</h3>" in report("--format", "html")
    assert "Prefer not to say" in report("--format", "csv")


def test_simulate_a_survey_with_skip_logic_and_special_values() -> None:
    """`simulate` draws special values with the answers (a follow-up's "not asked" index is
    past them) and compares the shares among those who gave an answer with their truth.
    Before: the tally had no cells for special values and the run crashed."""
    from ldpsurvey.analyst.simulate.survey import simulate_survey

    survey = Survey.from_dict({"id": "sim", "title": "S", "version": 1, "questions": [
        {"id": "used", "text": "Used?", "type": "binary", "epsilon": 2.0, "special": REFUSED},
        {"id": "often", "text": "How often?", "type": "ordinal", "epsilon": 2.0,
         "options": ["never", "sometimes", "often"], "relevant": "used",
         "special": {"dont_know": "Don't know", **REFUSED}},
        {"id": "days", "text": "Days?", "type": "integer", "epsilon": 2.0, "min": 0,
         "max": 7, "relevant": "used", "special": REFUSED}]})
    result = simulate_survey(survey, 3000, np.random.default_rng(4), seed=4)
    by_id = {r.question.id: r for r in result.questions}
    for qid in ("used", "often"):
        among = by_id[qid].asked_values
        assert len(among) == len(survey.question(qid).unit.values(survey.question(qid)))
        assert sum(v.truth for v in among) == pytest.approx(1.0)
    assert by_id["often"].asked_mean is not None and by_id["days"].asked_mean is not None
    assert by_id["often"].values[-1].value == "(not asked)"
