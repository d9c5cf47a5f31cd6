"""One question means the same in every path (issue 39; issue 40's cross-path target).

The same stored submissions of one survey (a yes/no, a categorical question with a group, an
ordinal one through GRR and one through the ordinal exponential mechanism, an integer, a
check-all-that-apply question, a location on a small grid with two regions, a disclosed
covariate, a categorical and an integer question with special values ("Prefer not to say"), and
follow-ups shown only to smokers: a
categorical, an ordinal, an integer and a check-all-that-apply one) are read through the
plain report, the design-based report with equal weights (`--weighted`, proportional
`--poststratify`, `--rake` and `--calibrate` totals), the subgroup report with one group
(plain and weighted), and a crosstab's margins (plain and weighted). Every path must give each
question the estimand the plain report gives it (shared/estimand.py): the same consistency
rule, the question type's notes, the same extra rows (the mean number selected, the mean
score, the mean; among those asked for a follow-up) and the same labels. With every weight
equal (one stratum, a PSU per respondent, population totals proportional to the sample) the
design is trivial, so the design-based point estimates, and the 'consistent' column made
from them by the same rule, are the plain ones to rounding.

Two-server surveys store no reports, so the same types are checked there on simulated batches
(tests/support/batches.py): the one-batch report and the pooled, weighted and post-stratified
batch reports give each question the plain report's estimand.

Before the fix the weighted paths Norm-Sub'd the check-all-that-apply shares (consistent_method
"norm-sub", shares forced to sum to 1), dropped its note and mean number selected, gave the
ordinal question a mean score the plain report lacked, and dropped the disclosed note.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.shared.estimand import CLIP, MEAN_SCORE, MEAN_SELECTED, estimand
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.skip_logic import NOT_ASKED
from ldpsurvey.shared.survey import Survey
from support import designed

N = 240
DK, PNTA = "Don't know", "Prefer not to say"
SURVEY: dict[str, Any] = {
    "id": "cross", "title": "Cross paths", "version": 1, "questions": [
        {"id": "region", "text": "Region?", "type": "categorical",
         "options": ["north", "south"], "disclosed": True},
        {"id": "smoker", "text": "Smoke?", "type": "binary", "epsilon": 2.0,
         "mechanism": "binary_rr"},
        {"id": "color", "text": "Colour?", "type": "categorical", "epsilon": 2.0,
         "options": ["red", "green", "blue"], "mechanism": "grr",
         "groups": {"warm": ["red", "green"]}},
        {"id": "mood", "text": "Mood?", "type": "ordinal", "epsilon": 2.0,
         "options": ["low", "mid", "high"], "mechanism": "grr"},
        {"id": "calm", "text": "Calm?", "type": "ordinal", "epsilon": 2.0,
         "options": ["never", "sometimes", "often", "always"], "mechanism": "ordinal_exp"},
        {"id": "drinks", "text": "Drinks?", "type": "integer", "epsilon": 2.0, "min": 0,
         "max": 10, "mechanism": "geometric"},
        {"id": "subs", "text": "Which?", "type": "multiselect", "epsilon": 8.0,
         "options": ["a", "b", "c"], "mechanism": "option_rr"},
        {"id": "home", "type": "location", "text": "Where?", "epsilon_geo": 2.0,
         "grid": {"rows": 3, "cols": 4, "cell_km": 0.5},
         "regions": {"west": ["1-3,1-2"], "east": ["1-3,3-4"]}},
        {"id": "brand", "text": "Brand?", "type": "categorical", "epsilon": 2.0,
         "options": ["x", "y", "z"], "mechanism": "grr", "relevant": "smoker",
         "groups": {"x or y": ["x", "y"]}},
        {"id": "craving", "text": "Craving?", "type": "ordinal", "epsilon": 2.0,
         "options": ["mild", "strong", "severe"], "mechanism": "grr", "relevant": "smoker"},
        {"id": "cigs", "text": "Cigarettes a day?", "type": "integer", "epsilon": 2.0,
         "min": 0, "max": 20, "relevant": "smoker"},
        {"id": "where", "text": "Where do you smoke?", "type": "multiselect", "epsilon": 6.0,
         "options": ["home", "work", "bar"], "mechanism": "option_rr", "relevant": "smoker"},
        {"id": "income", "text": "Income?", "type": "decimal", "epsilon": 2.0, "min": 0,
         "max": 50, "resolution": 0.5, "mechanism": "piecewise"},
        {"id": "hours", "text": "Hours?", "type": "decimal", "epsilon": 4.0, "min": 0,
         "max": 10, "resolution": 0.5, "estimate": ["distribution"], "bins": 5},
        {"id": "dk_color", "text": "Colour, or not say?", "type": "categorical",
         "epsilon": 2.0, "options": ["red", "green", "blue"], "special": {"refused": PNTA}},
        {"id": "dk_days", "text": "Days, or don't know?", "type": "integer", "epsilon": 2.0,
         "min": 0, "max": 7, "special": {"dont_know": DK, "refused": PNTA}},
    ]}
PARSED = Survey.from_dict(SURVEY)
QUESTIONS = [q.id for q in PARSED.questions]
RANDOMIZED = [q.id for q in PARSED.questions if not q.disclosed]


def units() -> list[designed.Unit]:
    """Everyone in the north (so `--by region` has one group holding everyone), weight 1, one
    stratum, a PSU each: the trivial design."""
    rng = np.random.default_rng(39)
    out = []
    for i in range(N):
        smoker = bool(rng.random() < 0.45)
        answers: dict[str, Any] = {
            "region": "north", "smoker": smoker,
            "color": ("red", "green", "blue")[int(rng.choice(3, p=[0.5, 0.3, 0.2]))],
            "mood": ("low", "mid", "high")[int(rng.choice(3, p=[0.2, 0.5, 0.3]))],
            "calm": ("never", "sometimes", "often", "always")[int(rng.integers(0, 4))],
            "drinks": int(rng.integers(0, 11)),
            "subs": [o for o, p in zip("abc", (0.8, 0.7, 0.6), strict=True)
                     if rng.random() < p],
            "home": [int(rng.integers(1, 4)), 1 + min(3, int(rng.poisson(0.8)))],
            "income": round(float(rng.uniform(0, 50)), 1),
            "hours": round(float(rng.uniform(0, 10)), 2),
            "dk_color": ("red", "green", "blue", PNTA)[int(rng.choice(4, p=[0.4, 0.3, 0.1,
                                                                          0.2]))],
            "dk_days": (DK if rng.random() < 0.1 else PNTA if rng.random() < 0.2
                        else int(rng.integers(0, 8)))}
        if smoker:
            answers.update(brand=("x", "y", "z")[int(rng.integers(0, 3))],
                           craving=("mild", "strong", "severe")[int(rng.integers(0, 3))],
                           cigs=int(rng.integers(0, 21)),
                           where=[o for o, p in zip(("home", "work", "bar"), (0.7, 0.4, 0.3),
                                                    strict=True) if rng.random() < p])
        else:  # what the device sends for a question that did not apply
            answers.update(brand=NOT_ASKED, craving=NOT_ASKED, cigs=NOT_ASKED, where=NOT_ASKED)
        out.append(designed.Unit(id=f"u{i}", weight=1.0, stratum="all", psu=f"p{i}",
                                 fpc=10**6, answers=answers))
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[designed.Built, Path]:
    folder = tmp_path_factory.mktemp("cross")
    built = designed.build(folder / "cross.db", survey=SURVEY, units=units(),
                           response_rate=1.0, fpc=False)
    totals = folder / "totals.csv"  # proportional: 10 people per respondent, all north
    totals.write_text(f"question,value,total\nregion,north,{10 * N}\n", encoding="utf-8")
    cells = folder / "cells.csv"
    cells.write_text(f"region,total\nnorth,{10 * N}\n", encoding="utf-8")
    return built, folder


def document(built: tuple[designed.Built, Path], *args: Any) -> dict[str, Any]:
    db, folder = built
    args = tuple(str(folder / a) if str(a).endswith(".csv") else str(a) for a in args)
    result = CliRunner().invoke(cli, ["report", "--db", str(db.path), "--survey", "cross",
                                      "--format", "json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def questions(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {q["question"]: q for q in doc["questions"]}


DESIGNS = {"weighted": ("--weighted",), "poststratify": ("--poststratify", "cells.csv"),
           "rake": ("--rake", "totals.csv"), "calibrate": ("--calibrate", "totals.csv")}


def meaning(q: dict[str, Any]) -> dict[str, Any]:
    """What a question's estimate document says its numbers are: the rule, the labels, which
    extra rows it has (over everyone and among those asked), and the notes of its type."""
    asked = q.get("among_asked") or {}
    return {"consistent_method": q["consistent_method"],
            "options": [c["value"] for c in q.get("categories") or []],
            "groups": [(g["name"], g["options"]) for g in q.get("groups") or []],
            "mean": q.get("mean") is not None, "not_asked": q.get("not_asked") is not None,
            "special": [c["value"] for c in q.get("special") or []],
            "asked options": [c["value"] for c in asked.get("categories") or []],
            "asked groups": [(g["name"], g["options"]) for g in asked.get("groups") or []],
            "asked mean": asked.get("mean") is not None,
            "type notes": [n for n in q.get("notes") or []
                           if n in estimand(PARSED.question(q["question"])).notes
                           or n in estimand(PARSED.question(q["question"]),
                                            mechanism_for(PARSED.question(q["question"]))).notes]}


def numbers(q: dict[str, Any]) -> dict[str, float | None]:
    """Every point estimate and 'consistent' value of a question's document, by row."""
    out: dict[str, float | None] = {}
    for part, doc in (("", q), ("asked ", q.get("among_asked") or {})):
        for c in doc.get("categories") or []:
            out[f"{part}{c['value']}"] = c["estimate"]
            out[f"{part}{c['value']} consistent"] = c["consistent"]
        for g in doc.get("groups") or []:
            out[f"{part}group {g['name']}"] = g["estimate"]
            out[f"{part}group {g['name']} consistent"] = g["consistent"]
        if doc.get("mean") is not None:
            out[f"{part}mean"] = doc["mean"]["estimate"]
    if q.get("not_asked") is not None:
        out["not asked"] = q["not_asked"]["estimate"]
    for c in q.get("special") or []:
        out[f"special {c['value']}"] = c["estimate"]
    return out


def same_numbers(got: dict[str, Any], plain: dict[str, Any]) -> None:
    """Equal to rounding; an EM map to its stopping rule (the location EM stops within 1e-6
    nats per report of the maximum likelihood, so two runs from report frequencies equal to
    rounding may stop a few 1e-9 apart)."""
    a, b = numbers(got), numbers(plain)
    assert a.keys() == b.keys()
    em = got["consistent_method"] == "em"
    for key in a:
        tolerance = 1e-6 if em and key.endswith("consistent") else 1e-9
        assert a[key] == pytest.approx(b[key], rel=1e-9, abs=tolerance), (got["question"], key)


@pytest.fixture(scope="module")
def plain(built: tuple[designed.Built, Path]) -> dict[str, dict[str, Any]]:
    return questions(document(built))


def test_the_plain_report_gives_each_type_its_estimand(plain: dict[str, dict[str, Any]]
                                                       ) -> None:
    """The reference the other paths are held to, checked against what each type means."""
    for qid in QUESTIONS:
        q, question = plain[qid], PARSED.question(qid)
        wanted = estimand(question, mechanism_for(question))
        assert q["consistent_method"] == wanted.method, qid
        assert set(wanted.notes) <= set(q.get("notes") or []), qid
        assert (q.get("mean") is not None) == (wanted.mean is not None), qid
        asked = q.get("among_asked") or {}
        assert (asked.get("mean") is not None) == (wanted.asked_mean is not None), qid
    subs = plain["subs"]
    shares = [c["estimate"] for c in subs["categories"]]
    assert subs["consistent_method"] == CLIP
    assert [c["consistent"] for c in subs["categories"]] == list(np.clip(shares, 0, 1))
    assert subs["mean"]["estimate"] == pytest.approx(sum(shares), rel=1e-12)
    assert estimand(PARSED.question("subs")).mean == MEAN_SELECTED
    assert estimand(PARSED.question("mood")).mean == MEAN_SCORE
    mood = plain["mood"]  # the mean score of the estimates, options scored 1..3
    assert mood["mean"]["estimate"] == pytest.approx(
        sum((i + 1) * c["estimate"] for i, c in enumerate(mood["categories"])), rel=1e-12)


@pytest.mark.parametrize("design", sorted(DESIGNS))
def test_design_based_reports_mean_what_the_plain_report_means(
        built: tuple[designed.Built, Path], plain: dict[str, dict[str, Any]],
        design: str) -> None:
    got = questions(document(built, *DESIGNS[design]))
    for qid in QUESTIONS:
        assert meaning(got[qid]) == meaning(plain[qid]), (design, qid)
        same_numbers(got[qid], plain[qid])  # a trivial design: the plain point estimates
        says_what_it_leaves_out(got[qid], plain[qid])


def says_what_it_leaves_out(got: dict[str, Any], plain: dict[str, Any]) -> None:
    """A design-based document gives what the plain one gives (a decimal's quartiles too,
    from the linear inverse of its square wave over the bins), or says plainly what it does
    not; nothing else is left out."""
    omitted = PARSED.question(got["question"]).unit.design_omissions(
        PARSED.question(got["question"]))
    assert (got.get("quantiles") is None and plain.get("quantiles") is not None) == bool(
        omitted), got["question"]
    assert set(omitted) <= set(got.get("notes") or []), got["question"]


@pytest.mark.parametrize("design", [(), ("--weighted",)])
def test_one_subgroup_is_the_whole_report(built: tuple[designed.Built, Path],
                                          plain: dict[str, dict[str, Any]],
                                          design: tuple[str, ...]) -> None:
    doc = document(built, "--by", "region", *design)
    [north] = [g for g in doc["subgroups"] if g["value"] == "north"]
    assert north["n"] == N
    got = questions(north)
    assert sorted(got) == sorted(RANDOMIZED)
    for qid in RANDOMIZED:
        assert meaning(got[qid]) == meaning(plain[qid]), (design, qid)
        same_numbers(got[qid], plain[qid])
        if design:
            says_what_it_leaves_out(got[qid], plain[qid])


@pytest.mark.parametrize(("rows", "cols", "design"), [
    ("smoker", "color", ()), ("mood", "subs:a", ()), ("calm", "smoker", ()),
    ("smoker", "color", ("--weighted",)), ("calm", "mood", ("--weighted",))])
def test_a_crosstabs_margins_are_the_plain_estimates(built: tuple[designed.Built, Path],
                                                     plain: dict[str, dict[str, Any]],
                                                     design: tuple[str, ...], rows: str,
                                                     cols: str) -> None:
    """The margins of a crosstab are each side's shares over everyone; one option of a
    check-all-that-apply question is its share of respondents who selected it (a design-based
    crosstab refuses a check-all-that-apply side, in one line)."""
    doc = document(built, "--crosstab", rows, cols, *design)
    for side, shares in ((rows, doc["row_shares"]), (cols, doc["col_shares"])):
        qid, _, option = side.partition(":")
        estimates = {c["value"]: c["estimate"] for c in plain[qid]["categories"]}
        wanted = ([estimates[option], 1 - estimates[option]] if option
                  else list(estimates.values()))
        assert [s["estimate"] for s in shares] == pytest.approx(wanted, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize(("number", "by"), [("income", "smoker"), ("hours", "color"),
                                            ("mood", "income")])
def test_a_numbers_crosstab_rows_mean_the_same_plain_and_weighted(
        built: tuple[designed.Built, Path], plain: dict[str, dict[str, Any]], number: str,
        by: str) -> None:
    """A decimal crossed with a randomized question, plain and design-based with equal
    weights: the same sides (the number's one cell, everyone; the other's categories), the
    same mean per category (the Hájek ratio of equal weights is the plain ratio), whose
    margin is the plain report's mean (each report's category estimators sum to 1), and the
    same quartiles table: its categories, quartile names and per-category notes, estimated in
    both (square_wave: EM plain, the design-based CDF weighted) or in neither (piecewise: each
    category says its mechanism estimates the mean only)."""
    docs = [document(built, "--crosstab", number, by),
            document(built, "--crosstab", number, by, "--weighted")]
    number_first = PARSED.question(number).unit.numeric
    qid, other = (number, by) if number_first else (by, number)
    means_key, side, other_side, shares = (
        ("rows_mean_given_col", "rows", "cols", "col_shares") if number_first
        else ("cols_mean_given_row", "cols", "rows", "row_shares"))
    categories = [c["value"] for c in plain[other]["categories"]]
    for doc in docs:
        assert doc[side]["cells"] == ["everyone"]
        assert doc[other_side]["cells"] == categories
        means = [c["estimate"] for c in doc[means_key]]
        weights = [c["estimate"] for c in doc[shares]]
        assert float(np.dot(means, weights)) == pytest.approx(plain[qid]["mean"]["estimate"],
                                                              rel=1e-9)
    assert [c["estimate"] for c in docs[1][means_key]] == pytest.approx(
        [c["estimate"] for c in docs[0][means_key]], rel=1e-9)

    def table(doc: dict[str, Any]) -> Any:
        found = doc["quantiles_given_category"]
        return (found["question"], found["by"], found["method"] != "none",
                [(c["category"], [q["name"] for q in c["quantiles"]], c.get("note"))
                 for c in found["categories"]])

    assert table(docs[0]) == table(docs[1])
    estimated = table(docs[0])[2]
    assert estimated == (mechanism_for(PARSED.question(qid)).window_reports() is not None)
    for doc in docs:
        for category in doc["quantiles_given_category"]["categories"]:
            for q in category["quantiles"]:
                assert (q["estimate"] is not None) == estimated, (doc["source"], q)


# --- two-server: no stored reports; the same types on simulated batches ----------------------

TWO_SERVER = [
    {"id": "smoker", "text": "Smoke?", "type": "binary", "central_epsilon": 1.0},
    {"id": "color", "text": "Colour?", "type": "categorical", "central_epsilon": 1.0,
     "options": ["red", "green", "blue"], "groups": {"warm": ["red", "green"]}},
    {"id": "mood", "text": "Mood?", "type": "ordinal", "central_epsilon": 1.0,
     "options": ["low", "mid", "high"]},
    {"id": "drinks", "text": "Drinks?", "type": "integer", "central_epsilon": 1.0, "min": 0,
     "max": 10},
    {"id": "subs", "text": "Which?", "type": "multiselect", "central_epsilon": 1.0,
     "options": ["a", "b", "c"]},
    {"id": "brand", "text": "Brand?", "type": "categorical", "central_epsilon": 1.0,
     "options": ["x", "y", "z"], "relevant": "smoker"},
]


def test_two_server_batch_reports_mean_what_the_plain_report_means(
        plain: dict[str, dict[str, Any]]) -> None:
    from ldpsurvey.shared.two_server.design import BatchDesign, estimate_batches
    from ldpsurvey.shared.two_server.estimates import estimate_batch
    from support.batches import simulate
    from support.two_server_stand_ins import two_server_survey_dict

    survey = Survey.from_dict(two_server_survey_dict(TWO_SERVER))
    rng = np.random.default_rng(40)
    answers, parts = [], []
    for i, u in enumerate(units()[:200]):
        a = {k: u.answers[k] for k in ("smoker", "color", "mood", "drinks", "subs")}
        if a["smoker"]:
            a["brand"] = u.answers["brand"]
        answers.append(a)
        parts.append(("north" if i % 2 else "south", 1 + i % 4))
    batches = simulate(survey, answers, parts, rng)
    [one] = simulate(survey, answers, [(None, None)] * len(answers), rng)
    docs = {"one batch": estimate_batch(survey, one),
            "pooled": estimate_batches(survey, batches, BatchDesign()),
            "weighted": estimate_batches(survey, batches,
                                         BatchDesign(weights={"north": 2.0, "south": 2.0})),
            "post-stratified": estimate_batches(survey, batches, BatchDesign(
                totals={"north": 100.0, "south": 100.0}))}
    for path, doc in docs.items():
        got = questions(doc)
        for question in survey.questions:
            q, wanted = got[question.id], estimand(question)
            assert q["consistent_method"] == wanted.method, (path, question.id)
            assert set(wanted.notes) <= set(q.get("notes") or []), (path, question.id)
            assert (q.get("mean") is not None) == (wanted.mean is not None), (path, question.id)
            assert [c["value"] for c in q.get("categories") or []] == [
                c["value"] for c in plain[question.id].get("categories") or []], path
            if question.id != "brand":  # plain's brand is the LDP survey's hidden follow-up
                pm = meaning(plain[question.id])
                assert (pm["consistent_method"], pm["mean"]) == (
                    q["consistent_method"], q.get("mean") is not None), (path, question.id)
        subs = got["subs"]
        shares = np.array([c["estimate"] for c in subs["categories"]])
        assert [c["consistent"] for c in subs["categories"]] == pytest.approx(
            np.clip(shares, 0, 1), abs=1e-12), path


@pytest.mark.parametrize("design", [(), ("--weighted",), ("--poststratify", "cells.csv")])
def test_the_html_chart_draws_what_the_legend_says(built: tuple[designed.Built, Path],
                                                   design: tuple[str, ...]) -> None:
    """The chart of a check-all-that-apply question marks each share clipped to [0, 100%]
    beside its legend "shares need not add up to 100%" and its mean number selected, in the
    design-based HTML as in the plain one; a one-choice question's chart says neither."""
    from ldpsurvey.analyst.reports import Report
    from ldpsurvey.analyst.reports.charts import frequency_chart

    doc = document(built, *design)
    views = {q.id: q for q in Report(SURVEY, doc).questions()}
    for qid, overlapping in (("subs", True), ("color", False), ("mood", False)):
        q = views[qid]
        fig = frequency_chart(q, None)
        legend = " ".join(t.get_text() for legend in fig.legends for t in legend.get_texts())
        assert ("shares need not add up to 100%" in legend) == overlapping, (design, qid)
        assert ("mean number selected" in legend) == overlapping, (design, qid)
        assert ("mean score" in legend) == (qid == "mood"), (design, qid)
        markers = fig.axes[0].collections[-1].get_offsets()[:, 0]  # the consistent view
        shares = [r.estimate for r in q.rows if r.kind in ("option", "group")]
        consistent = [r.consistent for r in q.rows if r.kind in ("option", "group")]
        assert list(markers) == pytest.approx([100 * c for c in consistent]), (design, qid)
        if overlapping:
            assert consistent == pytest.approx(list(np.clip(shares, 0, 1)))
        else:
            options = [r.consistent for r in q.rows if r.kind == "option"]
            assert sum(options) == pytest.approx(1.0)
