"""Design-based estimates from a two-server survey's batches (shared/two_server/design.py):
batches pooled, weighted per cell or post-stratified, with the per-cell formula variance or the
delete-a-group jackknife over random groups; every number checked against a direct computation
from the batches' totals, and the refusals where the math does not allow an estimate.

The statistical test (coverage of the jackknife's t interval) draws stratified cluster samples
from a finite population, deals whole PSUs into random groups and adds both servers' noise to
every group's batch: numpy generators, simulation only."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from ldpsurvey.shared.distributions import t_value
from ldpsurvey.shared.errors import EstimateError
from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.two_server import encoding
from ldpsurvey.shared.two_server.design import (
    ACCOUNTING,
    BatchDesign,
    _sum_entries,
    estimate_batches,
)
from ldpsurvey.shared.two_server.estimates import estimate_two_server
from ldpsurvey.shared.two_server.noise import noise_plan
from ldpsurvey.shared.two_server.results import BatchEntry, CollectedBatch
from scipy import stats
from support.batches import geometric, simulate
from support.skip import skip_two_server
from support.two_server import two_server_survey

MOODS = ["low", "mid", "high", "great"]


def pulse() -> Survey:
    return Survey.from_dict(two_server_survey("http://h", b"\x01" * 32, b"\x02" * 32))


def sample(n: int, seed: int) -> tuple[list[dict], list[tuple[str, int]]]:
    """Answers that differ by cell (north smokes more), dealt into 2 cells x 4 groups."""
    rng = np.random.default_rng(seed)
    answers, parts = [], []
    for i in range(n):
        cell = "north" if i % 3 else "south"
        answers.append({"smoker": bool(rng.random() < (0.5 if cell == "north" else 0.2)),
                        "mood": MOODS[int(rng.integers(4))],
                        **({"hours": int(rng.integers(0, 13))} if rng.random() < 0.8 else {})})
        parts.append((cell, 1 + i % 4))
    return answers, parts


def row(doc: dict, qid: str, value=True) -> dict:
    q = next(q for q in doc["questions"] if q["question"] == qid)
    if value is None:
        return q["mean"]
    return next(r for r in q["categories"] if r["value"] == value)


def share(answers: list[dict], qid: str, value) -> float:
    return sum(a[qid] == value for a in answers) / len(answers)


def test_pooled_batches_are_one_batch_of_everyone_with_every_batch_noise() -> None:
    survey = pulse()
    answers, parts = sample(600, 1)
    exact = simulate(survey, answers, parts, None)
    doc = estimate_batches(survey, exact, BatchDesign())
    assert row(doc, "smoker")["estimate"] == pytest.approx(share(answers, "smoker", True),
                                                           abs=1e-12)
    hours = [a["hours"] for a in answers if "hours" in a]
    assert row(doc, "hours", None)["estimate"] == pytest.approx(np.mean(hours), abs=1e-12)
    # the formula: one entry of all respondents whose noise is that of the 8 batches
    noisy = simulate(survey, answers, parts, np.random.default_rng(2))
    doc = estimate_batches(survey, noisy, BatchDesign())
    summed = _sum_entries([b.entries["mood"] for b in noisy])
    assert summed.batches == 8 and summed.n == 600
    one = estimate_two_server(survey.question("mood"), summed).to_dict()
    assert row(doc, "mood", "mid")["std_error"] == pytest.approx(
        one["categories"][1]["std_error"], rel=1e-12)
    single = estimate_two_server(survey.question("mood"), replace(summed, batches=1)).to_dict()
    assert single["categories"][1]["std_error"] < one["categories"][1]["std_error"]
    assert doc["design"]["accounting"] == list(ACCOUNTING)
    assert doc["n_submissions"] == 600 and doc["design"]["batches"] == 8


def test_post_stratified_and_weighted_cells_equal_the_direct_computation() -> None:
    survey = pulse()
    answers, parts = sample(900, 3)
    noisy = simulate(survey, answers, parts, np.random.default_rng(4))
    totals = {"north": 7000.0, "south": 3000.0}
    doc = estimate_batches(survey, noisy, BatchDesign(totals=totals))
    cells = {c: [b for b in noisy if b.cell == c] for c in totals}
    per_cell = {c: estimate_two_server(survey.question("smoker"), _sum_entries(
        [b.entries["smoker"] for b in bs])).to_dict()["categories"][1]
        for c, bs in cells.items()}
    w = {c: t / sum(totals.values()) for c, t in totals.items()}
    got = row(doc, "smoker")
    assert got["estimate"] == pytest.approx(sum(w[c] * per_cell[c]["estimate"] for c in w),
                                            abs=1e-12)
    assert got["std_error"] == pytest.approx(math.sqrt(sum(
        w[c] ** 2 * per_cell[c]["std_error"] ** 2 for c in w)), rel=1e-12)
    z = stats.norm.ppf(0.975)
    assert got["ci_high"] - got["estimate"] == pytest.approx(z * got["std_error"], rel=1e-9)
    # noise free: the post-stratified share of the answers themselves
    exact = estimate_batches(survey, simulate(survey, answers, parts, None),
                             BatchDesign(totals=totals))
    truth = sum(w[c] * share([a for a, p in zip(answers, parts, strict=True) if p[0] == c],
                             "smoker", True) for c in w)
    assert row(exact, "smoker")["estimate"] == pytest.approx(truth, abs=1e-12)
    # weighted: Σ w_c T_c / Σ w_c n_c
    weights = {"north": 2.0, "south": 9.0}
    weighted = estimate_batches(survey, noisy, BatchDesign(weights=weights))
    num = sum(weights[b.cell] * b.entries["smoker"].noisy_sums[0] for b in noisy)
    den = sum(weights[b.cell] * b.entries["smoker"].n for b in noisy)
    assert row(weighted, "smoker")["estimate"] == pytest.approx(num / den, abs=1e-12)


@pytest.mark.parametrize("totals", [None, {"north": 7000.0, "south": 3000.0}])
def test_the_jackknife_is_the_delete_a_group_formula_with_t_intervals(totals) -> None:
    survey = pulse()
    answers, parts = sample(800, 5)
    noisy = simulate(survey, answers, parts, np.random.default_rng(6))
    doc = estimate_batches(survey, noisy, BatchDesign(totals=totals, variance="groups"))
    groups = sorted({b.group for b in noisy})

    def theta(batches: list[CollectedBatch]) -> float:
        def ratio(bs):
            return (sum(b.entries["smoker"].noisy_sums[0] for b in bs)
                    / sum(b.entries["smoker"].n for b in bs))
        if totals is None:
            return ratio(batches)
        n = sum(totals.values())
        return sum(t / n * ratio([b for b in batches if b.cell == c]) for c, t in totals.items())

    reps = np.array([theta([b for b in noisy if b.group != g]) for g in groups])
    g = len(groups)
    se = math.sqrt((g - 1) / g * np.sum((reps - reps.mean()) ** 2))
    got = row(doc, "smoker")
    assert got["estimate"] == pytest.approx(theta(noisy), abs=1e-12)
    assert got["std_error"] == pytest.approx(se, rel=1e-10)
    t = stats.t.ppf(0.975, g - 1)
    assert t_value(0.95, g - 1) == pytest.approx(t, rel=1e-9)
    assert got["ci_low"] == pytest.approx(got["estimate"] - t * se, rel=1e-9)
    assert got["variance_bound"] is None
    assert doc["design"]["degrees_of_freedom"] == g - 1
    crosstab = doc["crosstabs"][0]
    assert all(c["std_error"] is not None for c in crosstab["cells"])


def test_student_t_quantiles_equal_scipy() -> None:
    for df in (1, 2, 3, 4, 9, 19, 59, 299):
        for confidence in (0.5, 0.9, 0.95, 0.99, 0.999):
            assert t_value(confidence, df) == pytest.approx(
                stats.t.ppf(0.5 + confidence / 2, df), rel=1e-9)
    with pytest.raises(EstimateError):
        t_value(0.95, 0)


def test_among_those_asked_combines_the_cells_shares() -> None:
    """Skip logic: 'among those asked' is the ratio of the combined shares (a post-stratified
    share of the follow-up over the post-stratified share asked), its s.e. by the jackknife."""
    data = skip_two_server("http://h", b"\x01" * 32, b"\x02" * 32, "skip")
    data["questions"], data["crosstabs"] = data["questions"][:2], []  # smoker, daily
    survey = Survey.from_dict(data)
    rng = np.random.default_rng(7)
    answers, parts = [], []
    for i in range(400):
        smoker = bool(rng.random() < (0.4 if i % 2 else 0.2))
        answers.append({"smoker": smoker, **({"daily": bool(rng.random() < 0.5)}
                                             if smoker else {})})
        parts.append(("a" if i % 2 else "b", 1 + i % 3))
    totals = {"a": 1.0, "b": 3.0}
    exact = simulate(survey, answers, parts, None)
    doc = estimate_batches(survey, exact, BatchDesign(totals=totals, variance="groups"))
    follow = next(q for q in doc["questions"] if q["question"] == "daily")
    cats = {r["value"]: r["estimate"] for r in follow["categories"]}
    asked = 1 - follow["not_asked"]["estimate"]
    among = {r["value"]: r for r in follow["among_asked"]["categories"]}
    assert among[True]["estimate"] == pytest.approx(cats[True] / asked, abs=1e-12)
    assert among[True]["std_error"] is not None
    formula = estimate_batches(survey, exact, BatchDesign(totals=totals))
    follow = next(q for q in formula["questions"] if q["question"] == "daily")
    assert follow["among_asked"]["categories"][1]["std_error"] is None


def test_among_those_asked_of_a_check_all_that_apply_question_across_cells() -> None:
    """Skip logic on a multiselect question: its shares among those asked are each clipped (they
    overlap) and their sum is the mean number selected among those asked."""
    data = skip_two_server("http://h", b"\x01" * 32, b"\x02" * 32, "skipset")
    data["questions"] = [data["questions"][0], {
        "id": "which", "text": "Which?", "type": "multiselect", "options": ["a", "b", "c"],
        "max_selected": 2, "central_epsilon": 1.0, "relevant": "smoker"}]
    data["crosstabs"] = []
    survey = Survey.from_dict(data)
    rng = np.random.default_rng(8)
    answers, parts = [], []
    for i in range(300):
        smoker = bool(rng.random() < (0.6 if i % 2 else 0.3))
        chosen = [o for o in "abc" if rng.random() < {"a": 0.5, "b": 0.3, "c": 0.1}[o]][:2]
        answers.append({"smoker": smoker, **({"which": chosen} if smoker else {})})
        parts.append(("a" if i % 2 else "b", 1 + i % 3))
    exact = simulate(survey, answers, parts, None)
    doc = estimate_batches(survey, exact, BatchDesign(totals={"a": 1.0, "b": 3.0}))
    which = next(q for q in doc["questions"] if q["question"] == "which")
    asked = 1 - which["not_asked"]["estimate"]
    shares = [r["estimate"] for r in which["categories"][:-1]]
    among = which["among_asked"]
    assert [r["estimate"] for r in among["categories"]] == pytest.approx(
        [s / asked for s in shares], abs=1e-12)
    assert among["mean"]["estimate"] == pytest.approx(sum(shares) / asked, abs=1e-12)


@pytest.mark.parametrize("design, parts_of, message", [
    (BatchDesign(totals={"north": 1.0}), None, "cell 'south' has respondents but no "
                                               "population total"),
    (BatchDesign(totals={"north": 1.0, "south": 2.0, "east": 3.0}), None,
     "cell 'east' has a population total but no batch"),
    (BatchDesign(totals={"x": 1.0}), lambda i: (None, 1 + i % 2), "the batches are not per "
                                                                  "cell"),
    (BatchDesign(variance="groups"), lambda i: ("north", None), "carry no random group"),
    (BatchDesign(variance="groups"), lambda i: ("north", 1), "at least 2 random groups"),
    (BatchDesign(totals={"north": 1.0, "south": 2.0}, variance="groups"),
     lambda i: ("north", 1 + i % 2) if i % 2 else ("south", 1), "every respondent of cell "
                                                               "'south' is in random group 1"),
    (BatchDesign(clustered=True), None, "use --variance groups"),
])
def test_refusals_say_why(design, parts_of, message) -> None:
    survey = pulse()
    answers, parts = sample(120, 8)
    if parts_of is not None:
        parts = [parts_of(i) for i in range(len(answers))]
    batches = simulate(survey, answers, parts, None)
    with pytest.raises(EstimateError, match=message.replace("(", r"\(").replace(")", r"\)")):
        estimate_batches(survey, batches, design)


def test_a_bad_cell_value_and_mixed_surveys_are_refused() -> None:
    with pytest.raises(EstimateError, match="population total must be a finite number > 0"):
        BatchDesign(totals={"a": 0.0})
    survey = pulse()
    answers, parts = sample(40, 9)
    batches = simulate(survey, answers, parts, None)
    other = replace(batches[0], version=2)
    with pytest.raises(EstimateError, match="is of survey 'pulse' v2"):
        estimate_batches(survey, [*batches[1:], other], BatchDesign())
    with pytest.raises(EstimateError, match="has no collected batch"):
        estimate_batches(survey, [], BatchDesign())


# --- coverage of the jackknife's interval ------------------------------------------------------

REPS = 1000
PSUS, PSU_SIZE, SAMPLED, GROUPS = 4000, 10, 200, 10
# 95% intervals over REPS independent samples: coverage within 3.5 binomial standard errors
# of 0.95 (a false alarm about 5e-4 of runs); the jackknife leaves out the 5% sampling
# fraction's fpc (conservative), which moves coverage up by well under one standard error.
BAND = 3.5 * math.sqrt(0.95 * 0.05 / REPS)


def _yes_no() -> Survey:
    data = two_server_survey("http://h", b"\x01" * 32, b"\x02" * 32)
    data["questions"] = [data["questions"][0]]
    data["crosstabs"] = []
    return Survey.from_dict(data)


def test_the_jackknife_t_interval_covers_at_95_percent() -> None:
    """A finite population of 4,000 clusters of 10 (answers correlated within a cluster), in two
    strata of unequal size and prevalence; each sample is 200 PSUs by simple random sampling
    within strata (proportional), whole PSUs dealt into 10 random groups within strata, one
    batch per (stratum, group) with both servers' noise at central ε = 1; the post-stratified
    estimate with the delete-a-group jackknife's t(9) interval. The per-cell formula, which
    takes the clusters' members for independent respondents (refused for a clustered design),
    covers far less on the same samples."""
    rng = np.random.default_rng(20261127)
    survey = _yes_no()
    enc = encoding.encodings(survey)["smoker"]
    plan = noise_plan(enc.kind, 1.0, enc.sensitivity)
    stratum = np.where(np.arange(PSUS) < PSUS * 0.3, "small", "large")
    base = np.where(stratum == "small", 0.45, 0.2)
    cluster = np.clip(base + rng.normal(0, 0.25, PSUS), 0.02, 0.98)
    units = rng.random((PSUS, PSU_SIZE)) < cluster[:, None]
    totals = {s: float(PSU_SIZE * (stratum == s).sum()) for s in ("small", "large")}
    truth = float(units.mean())
    covered = formula_covered = 0
    for _ in range(REPS):
        batches = []
        for s in totals:
            members = np.flatnonzero(stratum == s)
            chosen = rng.choice(members, size=int(SAMPLED * members.size / PSUS),
                                replace=False)  # already in random order
            start = int(rng.integers(GROUPS))
            for g in range(GROUPS):
                psus = chosen[(np.arange(chosen.size) + start) % GROUPS == g]
                yes = int(units[psus].sum()) + int(np.sum(geometric(plan.alpha, 2, rng)))
                entry = BatchEntry(key="smoker", kind=enc.kind, noisy_sums=(yes,),
                                   n=int(psus.size * PSU_SIZE), rejected=0,
                                   central_epsilon=1.0, sensitivity=enc.sensitivity)
                batches.append(CollectedBatch(survey.id, survey.version, f"{s}{g}",
                                              {"smoker": entry}, s, g + 1))
        doc = estimate_batches(survey, batches, BatchDesign(totals=totals, variance="groups"))
        r = row(doc, "smoker")
        covered += r["ci_low"] <= truth <= r["ci_high"]
        r = row(estimate_batches(survey, batches, BatchDesign(totals=totals)), "smoker")
        formula_covered += r["ci_low"] <= truth <= r["ci_high"]
    coverage = covered / REPS
    assert abs(coverage - 0.95) <= BAND, (coverage, BAND)  # 0.953 with this seed
    assert formula_covered / REPS < 0.95 - BAND  # 0.796


@pytest.mark.parametrize(("text", "message"), [
    ("stratum,total\na," + "x" * 200_000 + "\n", "not valid CSV (field larger than field limit"),
    ("stratum,total\na,1e308\nb,5\n", "line 2: total '1e308' must be a number > 0 and at most "
                                      "1e+15"),
    ("stratum,total\na,nan\n", "line 2: total 'nan' must be a number > 0"),
])
def test_a_bad_cells_file_is_one_line(tmp_path, text, message) -> None:
    """--poststratify CELLS.csv of a two-server report: a CSV the reader cannot parse was a
    traceback, and a total of 1e308 overflowed the post-stratified sums."""
    from ldpsurvey.analyst.design.two_server import read_cell_totals
    from ldpsurvey.shared.errors import AnalysisError

    path = tmp_path / "cells.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(AnalysisError) as caught:
        read_cell_totals(path)
    assert message in caught.value.message and "\n" not in caught.value.message


def test_among_those_who_answered_combines_the_cells_special_shares() -> None:
    """Special values: each special value's share is combined as the options' are, and
    'among those who answered' is the ratio over 1 − the combined special shares."""
    data = two_server_survey("http://h", b"\x01" * 32, b"\x02" * 32)
    mood = next(q for q in data["questions"] if q["id"] == "mood")
    mood["special"] = {"refused": "Prefer not to say"}
    survey = Survey.from_dict(data)
    rng = np.random.default_rng(5)
    answers, parts = [], []
    for i in range(400):
        refuses = rng.random() < (0.3 if i % 2 else 0.1)
        answers.append({"smoker": bool(rng.random() < 0.3), "hours": int(rng.integers(0, 13)),
                        "mood": "Prefer not to say" if refuses else MOODS[int(rng.integers(4))]})
        parts.append(("a" if i % 2 else "b", 1 + i % 3))
    exact = simulate(survey, answers, parts, None)
    doc = estimate_batches(survey, exact, BatchDesign(totals={"a": 1.0, "b": 3.0},
                                                      variance="groups"))
    q = next(q for q in doc["questions"] if q["question"] == "mood")
    cats = {r["value"]: r["estimate"] for r in q["categories"]}
    [special] = q["special"]
    assert special["estimate"] == pytest.approx(cats["Prefer not to say"], abs=1e-12)
    # post-stratified: the cells' refusal shares weighted 1:3
    by_cell = [np.mean([a["mood"] == "Prefer not to say"
                        for a, p in zip(answers, parts, strict=True) if p[0] == c])
               for c in ("a", "b")]
    assert special["estimate"] == pytest.approx((by_cell[0] + 3 * by_cell[1]) / 4, abs=1e-12)
    among = {r["value"]: r for r in q["among_asked"]["categories"]}
    assert list(among) == MOODS
    for mood_value in MOODS:
        assert among[mood_value]["estimate"] == pytest.approx(
            cats[mood_value] / (1 - special["estimate"]), abs=1e-12)
    assert sum(r["estimate"] for r in among.values()) == pytest.approx(1.0, abs=1e-12)


def test_an_integers_mean_among_those_who_answered_combines_the_cells() -> None:
    """An integer question with a special value: its Histogram's values' shares and the
    special share are combined across the cells, and the mean among those who answered is
    Σ value·share over 1 − the combined special share."""
    data = two_server_survey("http://h", b"\x01" * 32, b"\x02" * 32)
    hours = next(q for q in data["questions"] if q["id"] == "hours")
    hours["special"] = {"refused": "Prefer not to say"}
    survey = Survey.from_dict(data)
    rng = np.random.default_rng(7)
    answers, parts = [], []
    for i in range(400):
        refuses = rng.random() < (0.3 if i % 2 else 0.1)
        answers.append({"smoker": bool(rng.random() < 0.3), "mood": MOODS[int(rng.integers(4))],
                        "hours": "Prefer not to say" if refuses else int(rng.integers(0, 13))})
        parts.append(("a" if i % 2 else "b", 1 + i % 3))
    exact = simulate(survey, answers, parts, None)
    doc = estimate_batches(survey, exact, BatchDesign(totals={"a": 1.0, "b": 3.0},
                                                      variance="groups"))
    q = next(q for q in doc["questions"] if q["question"] == "hours")
    [special] = q["special"]
    by_cell = {c: [a["hours"] for a, p in zip(answers, parts, strict=True) if p[0] == c]
               for c in ("a", "b")}
    refused = [np.mean([v == "Prefer not to say" for v in by_cell[c]]) for c in ("a", "b")]
    assert special["estimate"] == pytest.approx((refused[0] + 3 * refused[1]) / 4, abs=1e-12)
    totals = [np.sum([v for v in by_cell[c] if v != "Prefer not to say"]) / len(by_cell[c])
              for c in ("a", "b")]
    mean = (totals[0] + 3 * totals[1]) / 4 / (1 - special["estimate"])
    assert q["among_asked"]["mean"]["estimate"] == pytest.approx(mean, abs=1e-9)
