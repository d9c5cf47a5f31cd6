"""A `decimal` question in a two-server survey (issue 41): its unit's two-server section asks
shared/two_server/fixed_point.py for the measurement of what the designer estimates, and a
real leader and helper collect it from the command-line client.

- `["mean"]` is Prio3Sum of the grid index, `["distribution"]` Prio3Histogram of the bin over
  the designer's bins, both the Histogram + SumVec pair with the central ε split evenly; a
  local ε0 is refused naming the key, and so is a follow-up that depends on randomized answers.
- The answer is rounded to the resolution (half up) as on the device; one outside min..max is
  refused, never clamped.
- The estimates' mean is in the question's units, unbiased with a calibrated standard error
  (simulated batches at the stated false-alarm rate ALPHA = 1e-6).
- A real pair, respondents through the client library and `ldpsurvey respond` (an answers
  file, and typed at the prompts), at a central ε so large that every released total is within
  1 of the truth but with probability below 1e-12; the estimates from them, and the report in
  every format.
- Design-based batches weight the bins and the mean, and leave the quantiles out.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.analyst.cli import cli
from ldpsurvey.client.respondent import Respondent
from ldpsurvey.shared.errors import AnswerError, SurveyError
from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.two_server.encoding import question_encoding, question_index
from ldpsurvey.shared.two_server.estimates import estimate_two_server
from ldpsurvey.shared.two_server.plans import question_noise_plan
from scipy import stats
from support.clients import http_json
from support.two_server import signed_survey, start_pair
from support.two_server_stand_ins import Entry, geometric_noise, survey_of

ALPHA = 1e-6
Z = float(stats.norm.isf(ALPHA / 2))

INCOME = {"id": "income", "text": "Income last month?", "type": "decimal", "min": 0,
          "max": 20000, "resolution": 10, "estimate": ["mean", "distribution"], "bins": 4,
          "central_epsilon": 1.0}
HOURS = {"id": "hours", "text": "Hours worked?", "type": "decimal", "min": 0, "max": 80,
         "resolution": 0.5, "central_epsilon": 1.0}
GAMBLING = {"id": "gambling", "text": "Spent on gambling?", "type": "decimal", "min": 0,
            "max": 500, "resolution": 1, "estimate": ["distribution"],
            "bins": [0, 10, 50, 100, 250, 500], "central_epsilon": 1.0}


def parsed(*questions: dict) -> Survey:
    return survey_of(list(questions))


def test_each_estimate_takes_its_measurement() -> None:
    income, hours, gambling = parsed(INCOME, HOURS, GAMBLING).questions
    mean = question_encoding(hours)
    assert (mean.kind, mean.max_measurement, mean.sensitivity) == ("sum", 160, 160)
    bins = question_encoding(gambling)
    assert (bins.kind, bins.length, bins.sensitivity) == ("histogram", 5, 2)
    both = question_encoding(income)
    assert (both.kind, both.length, both.max_measurement) == ("histogram_sum", 5, 2000)
    assert (both.scale, both.sensitivity) == (1000, 4000)  # ε split evenly: 2s = R
    assert question_noise_plan(income).sensitivity == 4000
    # kept to the resolution, half up, as on the device; the last bin is closed
    assert question_index(hours, 12.25) == 25 and question_index(hours, 12.2) == 24
    assert question_index(income, 4994.99) == [0, [499]]
    assert question_index(income, 4995) == [1, [500]]  # 5000: the second bin's low edge
    assert question_index(income, 20000) == [3, [2000]]
    assert question_index(gambling, 9.5) == 1 and question_index(gambling, 9.4) == 0
    assert question_index(gambling, 500) == 4
    for value in (-1, 20000.5, "a lot", None, True):
        with pytest.raises(AnswerError):
            question_index(income, value)


def test_what_the_two_servers_cannot_measure_is_refused_naming_the_key() -> None:
    with pytest.raises(SurveyError) as local:
        parsed({**HOURS, "local_epsilon": 1.0, "mechanism": "duchi"})
    assert local.value.field == "questions.hours.local_epsilon"
    assert "local" in str(local.value)
    with pytest.raises(SurveyError) as inside:  # an answer of 5 would have no bin
        parsed({**GAMBLING, "bins": [10, 50, 500]})
    assert inside.value.field == "questions.gambling.bins"
    parsed({**GAMBLING, "bins": [0, 50, 500]})
    gate = {"id": "works", "text": "Working?", "type": "binary", "central_epsilon": 1.0}
    with pytest.raises(SurveyError) as hidden:
        parsed(gate, {**HOURS, "relevant": "works"})
    assert hidden.value.field.startswith("questions.hours")


@pytest.mark.parametrize("question, central", [(HOURS, 1.0), (INCOME, 0.5)])
def test_the_mean_is_in_the_questions_units_unbiased_and_calibrated(question: dict,
                                                                    central: float) -> None:
    q = parsed({**question, "central_epsilon": central}).questions[0]
    enc = question_encoding(q)
    plan = question_noise_plan(q)
    spec = q.spec
    k, n, runs = spec.k, 1000, 400
    weights = np.exp(-3 * np.arange(k) / k)  # skewed toward min, like income
    weights /= weights.sum()
    step = float(spec.resolution)
    truth = float(spec.min) + step * float(np.arange(k) @ weights)
    rng = np.random.default_rng(41)
    means, ses, covered = [], [], []
    for _ in range(runs):
        j = rng.choice(k, size=n, p=weights)
        if enc.kind == "sum":
            sums = np.asarray([int(j.sum())])
        else:
            edges = np.asarray([float(e) for e in spec.bin_edges()])
            cells = np.clip(np.searchsorted(edges, float(spec.min) + step * j, "right") - 1,
                            0, edges.size - 2)
            sums = np.asarray([*(enc.scale * np.bincount(cells, minlength=edges.size - 1)),
                               int(j.sum())])
        noisy = sums + geometric_noise(rng, plan, sums.size) + geometric_noise(rng, plan,
                                                                               sums.size)
        mean = estimate_two_server(q, Entry([int(v) for v in noisy], n, plan)).mean
        means.append(mean.estimate)
        ses.append(mean.std_error)
        covered.append(mean.ci_low <= truth <= mean.ci_high)
    means_, ses_ = np.asarray(means), np.asarray(ses)
    assert abs(means_.mean() - truth) <= Z * means_.std(ddof=1) / math.sqrt(runs)
    hi = stats.chi2.isf(ALPHA / 2, runs - 1) / (runs - 1)
    assert means_.var(ddof=1) / float((ses_**2).mean()) <= hi  # never too narrow
    assert float(np.mean(covered)) >= 0.95 - Z * math.sqrt(0.95 * 0.05 / runs)


def test_post_stratified_cells_weight_the_bins_and_leave_the_quantiles_out() -> None:
    """The bins and the mean of a design are the cells' weighted sums (linear); a quantile is
    not, so the combined document names none rather than the unweighted pooled one."""
    from ldpsurvey.shared.two_server.design import BatchDesign, estimate_batches
    from support.batches import simulate

    survey = parsed({**INCOME, "bins": 2})
    answers = ([{"income": 1000}] * 30 + [{"income": 19000}] * 10  # north: mostly low
               + [{"income": 19000}] * 40)  # south: all high
    parts = [("north", None)] * 40 + [("south", None)] * 40
    batches = simulate(survey, answers, parts, None)
    doc = estimate_batches(survey, batches, BatchDesign(totals={"north": 900.0,
                                                                "south": 100.0}))
    [q] = doc["questions"]
    # north 3/4 low, south none: 0.9 · 0.75 + 0.1 · 0 = 0.675 low
    assert [r["estimate"] for r in q["distribution"]] == pytest.approx([0.675, 0.325])
    assert q["mean"]["estimate"] == pytest.approx(0.675 * 1000 + 0.325 * 19000)
    assert [r["estimate"] for r in q["quantiles"]] == [None] * 3
    assert any("not combined" in note for note in q["notes"])
    pooled = estimate_batches(survey, batches, BatchDesign())  # one cell: its own quantiles
    assert pooled["questions"][0]["quantiles"][1]["estimate"] is not None


# --- through a real leader and helper, answered with the command-line client -----------------


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    started = start_pair(tmp_path_factory.mktemp("decimal-pair"))
    yield started
    started.stop()


def test_a_real_pair_collects_a_decimal_survey(pair, tmp_path) -> None:
    from ldpsurvey.shared.two_server.config import b64url

    # Small grids at a large central ε (rate λ = ε/Δ: income 600/40 = 15, hours 300/16,
    # gambling 300/2), so a released total is off by more than 1 with chance about 3α² < 1e-12
    # (α = e^-λ): each total is checked to within 1, the estimates to what 1 moves them.
    income = {**INCOME, "resolution": 1000, "central_epsilon": 600.0}  # j 0..20, s = 10
    hours = {**HOURS, "max": 8, "central_epsilon": 300.0}  # j 0..16
    gambling = {**GAMBLING, "central_epsilon": 300.0}
    data = {"id": "income-two", "title": "Numbers", "version": 1, "collection": "two-server",
            "two_server": {"helper_url": pair.helper.url, "min_batch_size": 4,
                           "helper_hpke_key": b64url(pair.helper_key),
                           "leader_hpke_key": b64url(pair.leader_key)},
            "questions": [income, hours, gambling]}
    http_json("POST", pair.leader.url + "/api/surveys",
              signed_survey(data, Ed25519PrivateKey.generate()), pair.token)
    given = [{"income": 1234.5, "hours": 4, "gambling": 0},
             {"income": 9999, "hours": 3.75, "gambling": 20},
             {"income": 15000, "hours": 0, "gambling": 120},
             {"income": 20000, "hours": 8, "gambling": 499.6}]
    shapes = []
    for i, answers in enumerate(given[:2]):
        r = Respondent(pair.leader.url, state_dir=str(tmp_path / f"r{i}"), warn=lambda m: None,
                       max_epsilon=1e4)
        submission = r.answer(r.fetch_survey("income-two"), answers)
        body = submission.wire()
        shapes.append(({k: len(v) for k, v in body["public_shares"].items()},
                       len(body["leader_share"]), len(body["helper_share"])))
        assert r.submit(submission).status == "sent"
    assert all(shape == shapes[0] for shape in shapes)  # whatever each one answered
    # `ldpsurvey respond`: from an answers file, then typed at the prompts
    respond = ["respond", "--server", pair.leader.url, "--survey", "income-two",
               "--max-epsilon", "1e4", "--max-total-epsilon", "1e4", "--yes"]
    answers_file = tmp_path / "answers.json"
    answers_file.write_text(json.dumps(given[2]))
    out = CliRunner().invoke(cli, [*respond, "--state", str(tmp_path / "r2"), "--answers",
                                   str(answers_file)])
    assert out.exit_code == 0, out.output
    typed = "20000\n8\n499.6\n"
    out = CliRunner().invoke(cli, [*respond, "--state", str(tmp_path / "r3")], input=typed)
    assert out.exit_code == 0 and "kept to the nearest 0.5" in out.output, out.output
    api = lambda method, path, body=None: http_json(  # noqa: E731
        method, pair.leader.url + path, body, pair.token)
    api("POST", "/api/surveys/income-two/two-server/aggregate", {})
    [listed] = api("GET", "/api/surveys/income-two/two-server/batches")["batches"]
    batch = api("POST", f"/api/surveys/income-two/two-server/batches/{listed['batch_id']}"
                        "/collect", {})
    entries = batch["entries"]
    assert {k: (e["kind"], e["n"], e["rejected"]) for k, e in entries.items()} == {
        "income": ("histogram_sum", 4, 0), "hours": ("sum", 4, 0),
        "gambling": ("histogram", 4, 0)}
    # kept to the resolution on the device, half up: 1234.5 -> 1000, 9999 -> 10000,
    # 3.75 -> 4, 499.6 -> 500; income's bins of 5,000 hold 1000 | - | 10000 | 15000, 20000
    # (the last closed), scaled by s = 10 on the servers, then the sum of j
    truths = {"income": [10, 0, 10, 20, 1 + 10 + 15 + 20], "hours": [8 + 8 + 0 + 16],
              "gambling": [1, 1, 0, 1, 1]}
    for key, truth in truths.items():
        found = entries[key]["noisy_sums"]
        assert len(found) == len(truth) and all(
            abs(a - b) <= 1 for a, b in zip(found, truth, strict=True)), (key, found)
    docs = {d["question"]: d for d in batch["estimates"]["questions"]}
    assert docs["income"]["mean"]["estimate"] == pytest.approx(11500, abs=1000 / 4)
    assert docs["hours"]["mean"]["estimate"] == pytest.approx(4.0, abs=0.5 / 4)
    gambling_bins = docs["gambling"]["distribution"]
    assert [b["value"] for b in gambling_bins] == ["0 to 10", "10 to 50", "50 to 100",
                                                   "100 to 250", "250 to 500"]
    assert [b["estimate"] for b in gambling_bins] == pytest.approx(
        [0.25, 0.25, 0.0, 0.25, 0.25], abs=1 / 4)
    assert [b["estimate"] for b in docs["income"]["distribution"]] == pytest.approx(
        [0.25, 0, 0.25, 0.5], abs=1 / 40)
    median = next(x for x in docs["gambling"]["quantiles"] if x["value"] == "median")
    assert median["ci_low"] <= 50.0 <= median["ci_high"]
    assert "mean" not in docs["gambling"] and "distribution" not in docs["hours"]
    assert [x["value"] for x in docs["income"]["quantiles"]] == ["1st quartile", "median",
                                                                  "3rd quartile"]
    shown = {}
    for fmt in ("json", "table", "csv", "md", "html"):  # every report format shows it
        out = CliRunner().invoke(cli, ["report", "--server", pair.leader.url, "--token",
                                       pair.token, "--survey", "income-two", "--batch",
                                       listed["batch_id"], "--format", fmt])
        assert out.exit_code == 0, out.output
        shown[fmt] = out.output
    assert "median" in shown["table"] and "3rd quartile" in shown["md"]  # bins: too noisy
    assert ",gambling,distribution,10 to 50," in shown["csv"]  # at n = 4 for a table
    assert ",income,quantile,median," in shown["csv"] and "median" in shown["html"]
