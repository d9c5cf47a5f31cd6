"""Special values ("Don't know", "Prefer not to say": docs/special-values.md) in a two-server
survey: a binary, categorical or ordinal question's special values are extra cells of its
Prio3 Histogram (after the answers, before "not asked"); the report gives each special share
of everyone and the estimates among those who gave an answer.

- The measurement: cells and indices (an integer's: its range, then the special values); a
  decimal question, or an integer with a local ε0, refuses `special` with the field named and
  the reason.
- Simulated batches (the stand-ins): the ratios among those who answered (several extra
  cells, special values and "not asked" together) are unbiased with calibrated delta-method
  standard errors, at the false-alarm rate ALPHA = 1e-6 per check.
- A real leader and helper, respondents through `ldpsurvey respond` (an answers file and
  typed at the prompts): every estimate is within the servers' noise of the sample's truth,
  the tolerance read off the exact distribution of the released noise at ALPHA per total.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.analyst.cli import cli
from ldpsurvey.shared.errors import AnswerError, SurveyError
from ldpsurvey.shared.skip_logic import NOT_ASKED
from ldpsurvey.shared.two_server.encoding import question_encoding, question_index
from ldpsurvey.shared.two_server.estimates import design_for, estimate_two_server
from ldpsurvey.shared.two_server.noise import NoisePlan
from ldpsurvey.shared.two_server.plans import question_noise_plan
from scipy import stats
from support.clients import http_json
from support.two_server import signed_survey, start_pair
from support.two_server_stand_ins import entries, question_data, simulate_cells, survey_of

ALPHA = 1e-6
Z = float(stats.norm.isf(ALPHA / 2))
REPS = 2000
CONF = 0.95
DK, PNTA = "Don't know", "Prefer not to say"
BOTH = {"dont_know": DK, "refused": PNTA}


def test_special_values_are_cells_after_the_answers() -> None:
    used, brand, often = survey_of([
        question_data("binary", 1.0, qid="used", special=BOTH),
        question_data("categorical", 1.0, qid="brand", options=["a", "b", "c"],
                      special={"refused": PNTA}),
        question_data("ordinal", 1.0, qid="often", options=["never", "sometimes", "often"],
                      special=BOTH)]).questions
    assert (question_encoding(used).kind, question_encoding(used).length) == ("histogram", 4)
    assert [question_index(used, v) for v in (False, True, DK, PNTA)] == [0, 1, 2, 3]
    assert question_encoding(brand).length == 4 and question_index(brand, PNTA) == 3
    assert question_index(often, "often") == 2 and question_index(often, PNTA) == 4
    with pytest.raises(AnswerError):
        question_index(brand, DK)  # not one of brand's special values
    # a follow-up: the special values, then "not asked" last
    gate = question_data("binary", 1.0, qid="gate")
    follow = {**question_data("categorical", 1.0, qid="q", options=["a", "b"], special=BOTH),
              "relevant": "gate"}
    q = survey_of([gate, follow]).questions[1]
    assert question_encoding(q).length == 5
    assert [question_index(q, v) for v in ("b", DK, PNTA, NOT_ASKED)] == [1, 2, 3, 4]


def test_a_decimal_refuses_special_values_with_the_reason() -> None:
    with pytest.raises(SurveyError, match=r"questions\.q\.special: .*measures a number only"):
        survey_of([question_data("decimal", 1.0, special={"refused": PNTA}, min=0, max=10,
                                 resolution=1)])


def test_an_integers_special_values_are_cells_after_its_values() -> None:
    """Without a local ε0 an integer with special values is a Histogram over its range,
    then the special values, then "not asked"; with ε0 it is refused by field (its report
    pair measures an asked bit, not which special value)."""
    n, = survey_of([question_data("integer", 1.0, qid="n", min=2, max=5,
                                  special=BOTH)]).questions
    assert (question_encoding(n).kind, question_encoding(n).length) == ("histogram", 6)
    assert [question_index(n, v) for v in (2, 5, DK, PNTA)] == [0, 3, 4, 5]
    with pytest.raises(AnswerError):
        question_index(n, 6)
    follow = {**question_data("integer", 1.0, qid="m", min=0, max=3, special={"refused": PNTA}),
              "relevant": "gate"}
    m = survey_of([question_data("binary", 1.0, qid="gate"), follow]).questions[1]
    assert question_encoding(m).length == 6
    assert [question_index(m, v) for v in (3, PNTA, NOT_ASKED)] == [3, 4, 5]
    with pytest.raises(SurveyError, match=r"questions\.q\.special: .*local ε0"):
        survey_of([question_data("integer", 1.0, 2.0, mechanism="asked_geometric", min=0,
                                 max=10, special=BOTH)])
    with pytest.raises(SurveyError, match=r"questions\.q\.max: .*at most 254 values"):
        survey_of([question_data("integer", 1.0, min=0, max=254, special=BOTH)])


def test_an_integers_mean_among_those_who_answered() -> None:
    """An integer 0..4 with two special values: each special share of everyone and the
    mean among those who answered, unbiased with calibrated standard errors."""
    q, = survey_of([question_data("integer", 1.0, qid="q", min=0, max=4,
                                  special=BOTH)]).questions
    among = np.array([0.1, 0.2, 0.4, 0.2, 0.1])
    extra = np.array([0.15, 0.1])
    pi = np.append((1 - extra.sum()) * among, extra)
    design = design_for(q)
    plan = question_noise_plan(q)
    n = 2000
    rng = np.random.default_rng(23)
    totals = simulate_cells(rng, n, design.cell_probabilities(pi), plan, REPS)
    ests = [estimate_two_server(q, e, CONF) for e in entries(totals, n, plan)]
    _check(*_fields([e.among_asked.mean for e in ests]), float(among @ np.arange(5)))
    for j, label in enumerate((DK, PNTA)):
        assert all(e.special[j].value == label for e in ests)
        _check(*_fields([e.special[j] for e in ests]), extra[j])


def _check(values: np.ndarray, ses: np.ndarray, lows: np.ndarray, highs: np.ndarray,
           truth: float) -> None:
    assert abs(values.mean() - truth) <= Z * values.std(ddof=1) / math.sqrt(REPS), "biased"
    spread = values.var(ddof=1)
    reported = float(np.mean(ses**2))
    # the delta method is first-order: 5% of slack beyond the χ² band for its remainder
    assert abs(reported - spread) <= Z * spread * math.sqrt(2 / (REPS - 1)) + 0.05 * spread
    coverage = float(((lows <= truth) & (truth <= highs)).mean())
    assert abs(coverage - CONF) <= Z * math.sqrt(CONF * (1 - CONF) / REPS) + 0.01, coverage


def _fields(rows: list) -> tuple[np.ndarray, ...]:
    return tuple(np.array([getattr(r, f) for r in rows])
                 for f in ("estimate", "std_error", "ci_low", "ci_high"))


@pytest.mark.parametrize(("follow_up", "local"), [(False, None), (True, None), (False, 2.0)])
def test_shares_among_those_who_answered(follow_up: bool, local: float | None) -> None:
    """An ordinal question with two special values (and, as a follow-up, "not asked"; or
    with a local ε0, grr over the extended domain): its options' shares and mean score among
    those who answered, and each extra share."""
    data = question_data("ordinal", 1.0, local, qid="q", options=["low", "mid", "high"],
                         special=BOTH)
    if follow_up:
        data["relevant"] = "gate"
    q = survey_of([question_data("binary", 1.0, qid="gate"), data]).questions[1]
    among = np.array([0.5, 0.3, 0.2])
    extra = np.array([0.15, 0.1, 0.2]) if follow_up else np.array([0.15, 0.1])
    pi = np.append((1 - extra.sum()) * among, extra)
    design = design_for(q)
    plan = question_noise_plan(q)
    n = 2000
    rng = np.random.default_rng(11 + follow_up + 2 * (local is not None))
    totals = simulate_cells(rng, n, design.cell_probabilities(pi), plan, REPS)
    ests = [estimate_two_server(q, e, CONF) for e in entries(totals, n, plan)]
    for j in range(3):
        _check(*_fields([e.among_asked.categories[j] for e in ests]), among[j])
    _check(*_fields([e.among_asked.mean for e in ests]), float(among @ [1, 2, 3]))
    for j, label in enumerate((DK, PNTA)):
        assert all(e.special[j].value == label for e in ests)
        _check(*_fields([e.special[j] for e in ests]), extra[j])
    if follow_up:
        _check(*_fields([e.not_asked for e in ests]), extra[2])
    else:
        assert all(e.not_asked is None for e in ests)
    doc = ests[0].to_dict()
    assert [s["value"] for s in doc["special"]] == [DK, PNTA] and "mean" not in doc


# --- through a real leader and helper, answered with the command-line client -----------------


def total_noise_tail(plan: NoisePlan, alpha: float) -> int:
    """The least t with P[|Z1 + Z2| > t] <= alpha for the released total's noise (two
    independent two-sided geometrics of the plan's α, P[Z = z] = (1 - a)/(1 + a)·a^|z|),
    from the exact distribution (the convolution, truncated where its mass is below 1e-18)."""
    a = plan.alpha
    span = math.ceil(math.log(1e-18) / math.log(a)) + 1
    z = np.arange(-span, span + 1)
    one = (1 - a) / (1 + a) * a ** np.abs(z)
    two = np.convolve(one, one)  # over -2·span..2·span
    zz = np.arange(-2 * span, 2 * span + 1)
    for t in range(2 * span + 1):
        if two[np.abs(zz) > t].sum() <= alpha:
            return t
    raise AssertionError("the noise's tail is wider than the truncation")


def _ratio_range(num: int, num_cells: int, answered: int, extra_cells: int,
                 t: int) -> tuple[float, float]:
    """Where num'/(n - Σ extra') lies when the numerator's `num_cells` released totals and
    the `extra_cells` totals are each within t of their counts (num, and the extra counts that
    leave `answered` of n): the range the ratio's estimate must be in."""
    low_den, high_den = answered - t * extra_cells, answered + t * extra_cells
    assert low_den > 0, "too much noise for this test's sample"
    return (num - t * num_cells) / high_den, (num + t * num_cells) / low_den


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    started = start_pair(tmp_path_factory.mktemp("special-pair"))
    yield started
    started.stop()


def test_a_real_pair_reports_special_shares_and_shares_among_answerers(pair, tmp_path) -> None:
    from ldpsurvey.shared.two_server.config import b64url

    # central ε 30 (Δ = 2 for a histogram: α = e^-15): a released total is off by at most
    # t = 1 but with probability ALPHA (`total_noise_tail`), so the ranges below are tight
    used = question_data("binary", 30.0, qid="used", special=BOTH)
    brand = question_data("categorical", 30.0, qid="brand", options=["a", "b", "c"],
                          special={"refused": PNTA})
    often = question_data("ordinal", 30.0, qid="often", options=["never", "sometimes", "often"],
                          special=BOTH)
    times = question_data("integer", 30.0, qid="times", min=0, max=3, special=BOTH)
    data = {"id": "special-two", "title": "Special", "version": 1, "collection": "two-server",
            "two_server": {"helper_url": pair.helper.url, "min_batch_size": 4,
                           "helper_hpke_key": b64url(pair.helper_key),
                           "leader_hpke_key": b64url(pair.leader_key)},
            "questions": [used, brand, often, times]}
    http_json("POST", pair.leader.url + "/api/surveys",
              signed_survey(data, Ed25519PrivateKey.generate()), pair.token)
    given = [{"used": True, "brand": "a", "often": "often", "times": 3},
             {"used": DK, "brand": PNTA, "often": DK, "times": DK},
             {"used": PNTA, "brand": "b", "often": "never", "times": 1},
             {"used": False, "brand": "a", "often": PNTA, "times": 0},
             {"used": True, "brand": PNTA, "often": "sometimes", "times": PNTA},
             {"used": DK, "brand": "c", "often": PNTA, "times": DK}]
    respond = ["respond", "--server", pair.leader.url, "--survey", "special-two",
               "--max-epsilon", "200", "--max-total-epsilon", "200", "--yes"]
    for i, answers in enumerate(given[:-1]):
        path = tmp_path / f"answers{i}.json"
        path.write_text(json.dumps(answers))
        out = CliRunner().invoke(cli, [*respond, "--state", str(tmp_path / f"r{i}"),
                                       "--answers", str(path)])
        assert out.exit_code == 0, out.output
    # typed at the prompts: a special value by its name, in any case
    out = CliRunner().invoke(cli, [*respond, "--state", str(tmp_path / "typed")],
                             input="dont_know\nc\nREFUSED\ndont_know\n")
    assert out.exit_code == 0, out.output
    api = lambda method, path, body=None: http_json(  # noqa: E731
        method, pair.leader.url + path, body, pair.token)
    api("POST", "/api/surveys/special-two/two-server/aggregate", {})
    [listed] = api("GET", "/api/surveys/special-two/two-server/batches")["batches"]
    batch = api("POST", f"/api/surveys/special-two/two-server/batches/{listed['batch_id']}"
                        "/collect", {})
    n = len(given)
    domains = {"used": [False, True, DK, PNTA], "brand": ["a", "b", "c", PNTA],
               "often": ["never", "sometimes", "often", DK, PNTA]}
    specials = {"used": [DK, PNTA], "brand": [PNTA], "often": [DK, PNTA]}
    docs = {d["question"]: d for d in batch["estimates"]["questions"]}
    for qid, domain in domains.items():
        entry = batch["entries"][qid]
        assert (entry["kind"], entry["n"], entry["rejected"]) == ("histogram", n, 0)
        counts = [sum(1 for g in given if g[qid] == v and type(g[qid]) is type(v))
                  for v in domain]
        # every released total within t of its count but with probability ALPHA (per total)
        doc = docs[qid]
        t = total_noise_tail(NoisePlan.from_dict(doc["noise"]), ALPHA)
        assert t == 1  # at α = e^-15
        assert all(abs(f - c) <= t for f, c in zip(entry["noisy_sums"], counts, strict=True))
        k = len(domain) - len(specials[qid])
        assert [s["value"] for s in doc["special"]] == specials[qid]
        for row, c in zip(doc["special"], counts[k:], strict=True):  # shares of everyone
            assert abs(row["estimate"] - c / n) <= t / n, (qid, row)
        answered = sum(counts[:k])
        rows = doc["among_asked"]["categories"]
        assert len(rows) == k
        for row, c in zip(rows, counts[:k], strict=True):  # among those who answered
            lo, hi = _ratio_range(c, 1, answered, len(domain) - k, t)
            assert lo - 1e-9 <= row["estimate"] <= hi + 1e-9, (qid, row, lo, hi)
    often = docs["often"]["among_asked"]["mean"]  # scores 1..3 among those who answered
    scored = sum(s * sum(1 for g in given if g["often"] == v)
                 for s, v in enumerate(["never", "sometimes", "often"], 1))
    answered = sum(1 for g in given if g["often"] in ("never", "sometimes", "often"))
    lo, hi = _ratio_range(scored, 1 + 2 + 3, answered, 2, t)
    assert lo - 1e-9 <= often["estimate"] <= hi + 1e-9, (often, lo, hi)
    assert [r["value"] for r in docs["brand"]["among_asked"]["categories"]] == ["a", "b", "c"]
    # the integer: its range's values, then the special values, in one Histogram
    entry, doc = batch["entries"]["times"], docs["times"]
    domain = [0, 1, 2, 3, DK, PNTA]
    counts = [sum(1 for g in given if g["times"] == v and type(g["times"]) is type(v))
              for v in domain]
    assert (entry["kind"], entry["n"]) == ("histogram", n)
    assert all(abs(f - c) <= t for f, c in zip(entry["noisy_sums"], counts, strict=True))
    assert [s["value"] for s in doc["special"]] == [DK, PNTA]
    for row, c in zip(doc["special"], counts[4:], strict=True):
        assert abs(row["estimate"] - c / n) <= t / n, row
    total = sum(v * c for v, c in zip(range(4), counts, strict=False))
    lo, hi = _ratio_range(total, 1 + 2 + 3, sum(counts[:4]), 2, t)
    mean = doc["among_asked"]["mean"]
    assert lo - 1e-9 <= mean["estimate"] <= hi + 1e-9, (mean, lo, hi)
    for fmt in ("table", "csv"):  # the report prints them
        out = CliRunner().invoke(cli, ["report", "--server", pair.leader.url, "--token",
                                       pair.token, "--survey", "special-two", "--batch",
                                       listed["batch_id"], "--format", fmt])
        assert out.exit_code == 0, out.output
        assert PNTA in out.output and DK in out.output
