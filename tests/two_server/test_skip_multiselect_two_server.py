"""A check-all-that-apply question that depends on randomized answers, in a two-server survey:
"not asked" is the last entry of its Prio3 measurement (shared/two_server/multiselect.py).

- The noise is sized for the measurement's exact L1 sensitivity under substitution,
  Δ = max(min(2m, k), m + 1) without ε0 (enumerated over every pair of answers), and the
  certified noise is refuted one step below it.
- The estimates (the share not asked, each option's share and the mean number selected among
  those asked) are unbiased with calibrated standard errors, without ε0 and with each local
  mechanism (simulated batches; a false-alarm rate of ALPHA = 1e-6 per check).
- A real leader and helper collect uploads of the same keys and sizes from every respondent,
  the exact totals (central ε = 400: the noise is nonzero with chance below 1e-14) and the
  report's rows among those asked.
"""

from __future__ import annotations

import itertools
import math
import os

import numpy as np
import pytest
from ldpsurvey.client.respondent import Respondent
from ldpsurvey.client.two_server import seal_upload
from ldpsurvey.shared.errors import PrivacyCheckError, SurveyError
from ldpsurvey.shared.exact import rational_floor
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.mechanisms.set_base import SetShape
from ldpsurvey.shared.skip_logic import NOT_ASKED
from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.two_server import encoding, vdaf
from ldpsurvey.shared.two_server.multiselect import estimate_set_two_server, not_asked_delta
from ldpsurvey.shared.two_server.noise import NoisePlan
from ldpsurvey.shared.two_server.plans import question_noise_plan
from scipy import stats
from support.clients import http_json
from support.two_server import start_pair
from support.two_server_stand_ins import (
    Entry,
    geometric_noise,
    question_data,
    survey_of,
    two_server_survey_dict,
)

OPTIONS = ["cannabis", "cocaine", "ecstasy", "opioids", "sedatives"]
ALPHA = 1e-6
Z = float(stats.norm.isf(ALPHA / 2))
EXACT = 400.0
GATE = question_data("binary", 1.0, qid="gate")


def hidden(qid: str = "used", central: float = 1.0, local: float | None = None,
           mechanism: str | None = None, **spec) -> dict:
    data = {"id": qid, "text": "Which?", "type": "multiselect", "options": OPTIONS,
            "max_selected": 3, "central_epsilon": central, "relevant": "gate", **spec}
    if local is not None:
        data.update(local_epsilon=local, mechanism=mechanism or "auto")
    return data


def parsed(**kw):
    return survey_of([GATE, hidden(**kw)]).questions[1]


# --- the measurement and its sensitivity ---------------------------------------------------


def _vectors(shape: SetShape) -> list[tuple[int, ...]]:
    """Every honest measurement: an allowed set's k bits and a 0, or "not asked" alone."""
    sets = [s for r in range(shape.required_min, shape.max_selected + 1)
            for s in itertools.combinations(range(shape.k), r)]
    out = [(*(int(j in s) for j in range(shape.k)), 0) for s in sets]
    return [*out, (*(0 for _ in range(shape.k)), 1)]


@pytest.mark.parametrize("k", range(2, 7))
def test_the_sensitivity_is_the_largest_change_of_any_two_answers(k: int) -> None:
    for m in range(1, k + 1):
        for least in (0, 1):
            shape = SetShape(k, m, least)
            honest = _vectors(shape)
            largest = max(sum(abs(a - b) for a, b in zip(x, y, strict=True))
                          for x, y in itertools.combinations(honest, 2))
            assert not_asked_delta(shape) == largest == max(min(2 * m, k), m + 1), (k, m)


def test_the_encodings_and_their_noise() -> None:
    q = parsed()
    enc = encoding.question_encoding(q)
    assert (enc.kind, enc.length, enc.max_measurement, enc.sensitivity) == ("multihot", 6, 3, 5)
    assert encoding.question_index(q, NOT_ASKED) == [0, 0, 0, 0, 0, 1]
    assert encoding.question_index(q, ["opioids", "cannabis"]) == [1, 0, 0, 1, 0, 0]
    with pytest.raises(Exception, match="not one of the options"):
        encoding.question_index(q, [NOT_ASKED])
    every = parsed(max_selected=5)  # m = k: "not asked" against every option differs in k + 1
    assert encoding.question_encoding(every).sensitivity == 6
    psfo = parsed(local=2.0, mechanism="psfo_grr", required_min=1)
    enc = encoding.question_encoding(psfo)
    assert (enc.kind, enc.length, enc.sensitivity) == ("histogram", 6 + 3 - 1, 2)
    bits = parsed(local=2.0, mechanism="option_rr")
    enc = encoding.question_encoding(bits)
    assert (enc.kind, enc.length, enc.max_measurement, enc.sensitivity) == ("multihot", 6, 6, 6)
    assert parsed(local=2.0).mechanism in ("option_rr", "set_ue", "psfo_grr")  # auto
    with pytest.raises(SurveyError, match="psfo_olh"):
        parsed(local=2.0, mechanism="psfo_olh")


@pytest.mark.parametrize("central", [0.5, 1.0, 3.0])
def test_the_noise_is_certified_at_its_sensitivity_and_refuted_below(central: float) -> None:
    q = parsed(central=central)
    plan = question_noise_plan(q)
    assert plan.sensitivity == 5 and plan.rate * 5 <= rational_floor(central)
    with pytest.raises(PrivacyCheckError):  # noise sized for Δ − 1 understates the change
        NoisePlan("multihot", central, 5, rational_floor(central) / 4)


# --- the estimators against their formulas ---------------------------------------------------

N, RUNS, POPULATION = 2000, 400, 4000
ASKED = 0.6


def population(rng: np.random.Generator, m: int) -> np.ndarray:
    """Rows of k + 1 bits: a set of at most m options among those asked, "not asked" alone
    otherwise (respondents are drawn from it: sampling counts too)."""
    weights = np.array([0.5, 0.25, 0.15, 0.07, 0.03])
    rows = np.zeros((POPULATION, 6), dtype=bool)
    for i in range(POPULATION):
        if i >= ASKED * POPULATION:
            rows[i, 5] = True
            continue
        size = min(i % 4, m)
        if size:
            rows[i, rng.choice(5, size=size, replace=False, p=weights)] = True
    return rows


@pytest.mark.parametrize("local, mechanism", [(None, None), (2.0, "psfo_grr"),
                                              (2.0, "option_rr"), (3.0, "set_ue")])
def test_estimates_among_those_asked_are_unbiased_and_calibrated(local, mechanism) -> None:
    m = 2 if mechanism == "set_ue" else 3
    q = parsed(local=local, mechanism=mechanism, max_selected=m)
    plan = question_noise_plan(q)
    length = encoding.question_encoding(q).length
    rng = np.random.default_rng(17 + (len(mechanism) if mechanism else 0))
    pop = population(rng, m)
    asked_rows = pop[~pop[:, 5]]
    truth = {"na": pop[:, 5].mean(), "shares": asked_rows[:, :5].mean(axis=0),
             "mean": asked_rows[:, :5].sum(axis=1).mean()}
    mech = mechanism_for(q) if local is not None else None
    rows: dict[str, list] = {name: [] for name in ("na", "na_se", "est", "se", "cov",
                                                   "mean", "mean_se", "mean_cov")}
    for _ in range(RUNS):
        sets = pop[rng.integers(0, POPULATION, size=N)]
        if mech is None:
            totals = sets.sum(axis=0)
        elif mechanism == "psfo_grr":
            totals = np.bincount(mech.perturb_many(sets, rng), minlength=length)
        else:
            totals = mech._bits(mech.perturb_many(sets, rng)).sum(axis=0)
        noisy = totals + geometric_noise(rng, plan, length) + geometric_noise(rng, plan, length)
        est = estimate_set_two_server(q, Entry([int(v) for v in noisy], N, plan))
        assert est.mean is None and len(est.categories) == 6
        rows["na"].append(est.not_asked.estimate)
        rows["na_se"].append(est.not_asked.std_error)
        cats = est.among_asked.categories
        rows["est"].append([c.estimate for c in cats])
        rows["se"].append([c.std_error for c in cats])
        rows["cov"].append([c.ci_low <= t <= c.ci_high
                            for c, t in zip(cats, truth["shares"], strict=True)])
        mean = est.among_asked.mean
        rows["mean"].append(mean.estimate)
        rows["mean_se"].append(mean.std_error)
        rows["mean_cov"].append(mean.ci_low <= truth["mean"] <= mean.ci_high)
    lo, hi = (stats.chi2.ppf(ALPHA / 2, RUNS - 1) / (RUNS - 1),
              stats.chi2.isf(ALPHA / 2, RUNS - 1) / (RUNS - 1))
    slack = 1.05  # the delta method is first order
    for key, se_key, target in (("na", "na_se", truth["na"]), ("est", "se", truth["shares"]),
                                ("mean", "mean_se", truth["mean"])):
        est, se = np.array(rows[key], dtype=float), np.array(rows[se_key], dtype=float)
        err = est.mean(axis=0) - target
        assert np.all(np.abs(err) <= Z * est.std(axis=0, ddof=1) / math.sqrt(RUNS)), (key, err)
        ratio = est.var(axis=0, ddof=1) / (se**2).mean(axis=0)
        assert np.all(ratio <= hi * slack), (key, ratio)  # never too narrow
        if key != "mean" or mechanism == "psfo_grr":  # exact but for the set sizes' spread
            assert np.all(ratio >= lo / slack), (key, ratio)
    coverage = np.array(rows["cov"]).mean(axis=0)
    assert np.all(coverage >= 0.95 - Z * math.sqrt(0.95 * 0.05 / RUNS) - 0.01), coverage


def test_the_spread_of_set_sizes_is_bounded_by_the_shares_not_only_the_mean() -> None:
    """The mean number selected among those asked: rare options cannot make sizes spread as
    widely as Bhatia-Davis allows (shared/set_spread.py), so its interval is narrower than
    the mean alone would give, and still never too narrow (above)."""
    q = parsed(max_selected=3, central=EXACT)  # no noise to speak of: sampling alone
    plan = question_noise_plan(q)
    n = 10_000
    asked = [0.2, 0.02, 0.01, 0.01, 0.0]  # shares among those asked, 60% asked
    totals = [round(n * 0.6 * s) for s in asked] + [round(n * 0.4)]
    est = estimate_set_two_server(q, Entry(totals, n, plan))
    mean = est.among_asked.mean
    mu, f_na = sum(asked), 0.4
    davis = (3 - mu) * mu * (1 - f_na) / n / (1 - f_na) ** 2
    assert mean.std_error**2 < 0.5 * davis


# --- through a real leader and helper ---------------------------------------------------------


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    started = start_pair(tmp_path_factory.mktemp("pair"))
    yield started
    started.stop()


def publish(pair, survey_id: str) -> Survey:
    gate = {**GATE, "central_epsilon": EXACT}
    data = two_server_survey_dict([gate, hidden(central=EXACT),
                                   hidden("local", EXACT, 2.0, "option_rr"),
                                   hidden("padded", EXACT, 2.0, "psfo_grr")])
    data.update(id=survey_id)
    return pair.publish(data, min_batch=3)


def api(pair, method: str, path: str, body=None):
    return http_json(method, pair.leader.url + path, body, pair.token)


ANSWERS = [["cannabis", "opioids"], None, [], None, ["cocaine", "ecstasy", "sedatives"]]


def test_a_real_pair_collects_the_same_shape_and_the_exact_totals(pair, tmp_path) -> None:
    survey = publish(pair, "hidden-sets")
    shapes = []
    for i, chosen in enumerate(ANSWERS):
        given = ({"gate": False} if chosen is None else
                 {"gate": True, "used": chosen, "local": chosen, "padded": chosen})
        r = Respondent(pair.leader.url, state_dir=str(tmp_path / f"d{i}"), warn=lambda m: None,
                       max_epsilon=1e4)
        submission = r.answer(r.fetch_survey("hidden-sets"), given)
        body = submission.wire()
        shapes.append(({k: len(v) for k, v in body["public_shares"].items()},
                       len(body["leader_share"]), len(body["helper_share"])))
        assert r.submit(submission).status == "sent"
    assert all(shape == shapes[0] for shape in shapes)  # whatever each one answered
    assert set(shapes[0][0]) == {"gate", "used", "local", "padded"}
    # hostile: a weight above m is rejected by the proof; "not asked" with options is a valid
    # measurement (the proof checks 0/1 entries and the weight only), counted as sent
    encodings = encoding.encodings(survey)
    for bad in ([1, 1, 1, 1, 0, 0], [0, 0, 0, 0, 0, 2]):
        rid = os.urandom(16)
        inst = vdaf.instance(encodings["used"])
        weight = encoding.Encoding("", "multihot", 6, 3).vdaf().flp.valid.encode
        encoded = bad + weight([1, 0, 0, 0, 0, 0])[6:]  # claims weight 1 in its range check
        public, shares = inst.shard_encoded(encoding.ctx(survey, "used"), encoded, rid,
                                            os.urandom(inst.RAND_SIZE))
        honest = {key: vdaf.shard(encodings[key], encoding.ctx(survey, key), value, rid)
                  for key, value in (("gate", 0), ("local", [0] * 6), ("padded", 7))}
        honest["used"] = vdaf.Shards(inst.encode_public_share(public),
                                     (inst.encode_input_share(0, shares[0]),
                                      inst.encode_input_share(1, shares[1])))
        assert api(pair, "POST", "/api/surveys/hidden-sets/two-server/uploads",
                   seal_upload(survey, rid, honest))["duplicate"] is False
    api(pair, "POST", "/api/surveys/hidden-sets/two-server/aggregate", {})
    [listed] = api(pair, "GET", "/api/surveys/hidden-sets/two-server/batches")["batches"]
    batch = api(pair, "POST", f"/api/surveys/hidden-sets/two-server/batches/"
                              f"{listed['batch_id']}/collect", {})
    e = batch["entries"]["used"]
    assert e["rejected"] == 2 and e["n"] == 5
    assert e["noisy_sums"] == [1, 1, 1, 1, 1, 2]  # three sets, two "not asked"
    assert batch["entries"]["local"]["n"] == 7 and batch["entries"]["padded"]["n"] == 7
    by_id = {q["question"]: q for q in batch["estimates"]["questions"]}
    doc = by_id["used"]
    assert doc["not_asked"]["value"] == NOT_ASKED
    assert doc["not_asked"]["estimate"] == pytest.approx(0.4)
    assert [c["estimate"] for c in doc["among_asked"]["categories"]] == pytest.approx(
        [1 / 3] * 5)
    assert doc["among_asked"]["mean"]["estimate"] == pytest.approx(5 / 3)
    assert "mean" not in doc or doc["mean"] is None
    for qid in ("local", "padded"):  # the local mechanisms' rows: the same shape
        assert set(by_id[qid]) == set(doc) and len(by_id[qid]["categories"]) == 6


# --- planning -----------------------------------------------------------------------------------


def test_compare_modes_plans_the_measurement_with_its_not_asked_entry(tmp_path) -> None:
    import json

    from click.testing import CliRunner
    from ldpsurvey.analyst.cli import cli
    from ldpsurvey.analyst.plan.modes import compare_question
    from ldpsurvey.analyst.plan.rows import TWO_SERVER, TWO_SERVER_LOCAL
    from ldpsurvey.shared.multiselect_not_asked import NOT_ASKED_SET_MECHANISMS
    from ldpsurvey.shared.two_server.noise import SERVERS, noise_plan

    every = parsed(max_selected=5, local=2.0)  # Δ = k + 1 = 6 with "not asked"
    rows = {r.mode: r for r in compare_question(every, margin=0.05).rows}
    assert rows[TWO_SERVER].noise == pytest.approx(
        SERVERS * noise_plan("multihot", 1.0, 6).variance)
    assert rows["ldp"].mechanism in NOT_ASKED_SET_MECHANISMS
    assert rows[TWO_SERVER_LOCAL].mechanism == every.mechanism
    data = two_server_survey_dict([GATE, hidden(), hidden("local", 1.0, 2.0, "psfo_grr")])
    path = tmp_path / "hidden.json"
    path.write_text(json.dumps(data))
    out = CliRunner().invoke(cli, ["plan", str(path), "--margin", "0.05"])
    assert out.exit_code == 0, out.output
    assert "used: multiselect, k=5" in out.output and "two-server + local  psfo_grr" in out.output
