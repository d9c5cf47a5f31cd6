"""An integer follow-up with a local ε0 in a two-server survey (skip logic): the device's
asked_geometric pair [bit, number] measured as Prio3Count + Prio3Sum under one key
(shared/two_server/pair_vdaf.py), the central noise split between the two measurements by the
bit's scale s (shared/two_server/asked_pair.py), and the estimates of the share not asked and
the mean among those asked.

- The aggregate's sensitivity s + R is enumerated over every pair of measurements (small s, R);
  the noise is certified at it and refuted one below it; s is the best integer for the mean's
  noise (checked against every s up to 4R).
- The pair's proofs: honest pairs aggregate to [s·Σb, Σ(y − lo)]; a bit of 2, and a number
  whose bit decomposition is not 0/1, are rejected.
- The estimators are unbiased with calibrated standard errors (simulated batches, the stated
  false-alarm rate ALPHA = 1e-6 per check).
- A real leader and helper collect the same keys and sizes from every respondent and report
  the exact mean among those asked (a range 0..2 at ε0 = 50 and central ε = 400: the local
  noise and the bit's flip have chances below 1e-10, the central noise below 1e-14).
"""

from __future__ import annotations

import math
import os
from fractions import Fraction

import numpy as np
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.client.respondent import Respondent
from ldpsurvey.client.two_server import seal_upload
from ldpsurvey.shared.errors import PrivacyCheckError
from ldpsurvey.shared.exact import rational_floor
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.prio3 import prio3_count
from ldpsurvey.shared.skip_logic import NOT_ASKED
from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.two_server import encoding, vdaf
from ldpsurvey.shared.two_server.asked_pair import pair_scale
from ldpsurvey.shared.two_server.estimates import estimate_two_server
from ldpsurvey.shared.two_server.noise import NoisePlan
from ldpsurvey.shared.two_server.plans import question_noise_plan
from scipy import stats
from support.clients import http_json
from support.two_server import signed_survey, start_pair
from support.two_server_stand_ins import (
    Entry,
    geometric_noise,
    question_data,
    survey_of,
    two_server_survey_dict,
)

ALPHA = 1e-6
Z = float(stats.norm.isf(ALPHA / 2))
GATE = question_data("binary", 1.0, qid="gate")


def hidden(qid: str = "days", central: float = 1.0, local: float = 1.0, low: int = 0,
           high: int = 10) -> dict:
    data = question_data("integer", central, local, qid=qid, mechanism="auto", min=low,
                         max=high)
    data["relevant"] = "gate"
    return data


def parsed(**kw):
    return survey_of([GATE, hidden(**kw)]).questions[1]


# --- the measurement and its noise ------------------------------------------------------------


@pytest.mark.parametrize("local, low, high", [(1.0, 0, 10), (2.0, 0, 30), (0.5, 5, 100),
                                              (1.0, 0, 1)])
def test_the_pair_and_its_noise(local: float, low: int, high: int) -> None:
    q = parsed(local=local, low=low, high=high)
    assert q.mechanism == "asked_geometric"
    enc = encoding.question_encoding(q)
    mechanism = mechanism_for(q)
    lo, hi = encoding.clip_bounds(mechanism)
    assert (enc.kind, enc.length, enc.offset, enc.max_measurement) == ("asked_pair", 2, lo,
                                                                       hi - lo)
    s, width = enc.scale, hi - lo
    assert enc.sensitivity == s + width  # the bit's total moves by s, the number's by R
    plan = question_noise_plan(q)
    assert (plan.kind, plan.sensitivity) == ("asked_pair", s + width)
    assert plan.rate * (s + width) <= rational_floor(1.0)
    with pytest.raises(PrivacyCheckError):  # noise sized one below the sensitivity
        NoisePlan("asked_pair", 1.0, s + width, rational_floor(1.0) / (s + width - 1))
    # s is the best integer for the mean's noise, (s + R)²(1 + B/s²)
    gap = Fraction(mechanism.p_star) - Fraction(mechanism.q_star)
    b = Fraction(mechanism.half) ** 2 / gap**2
    costs = {t: (t + width) ** 2 * (t * t + b) / (t * t) for t in range(1, 4 * width)}
    assert s == pair_scale(mechanism, width) == min(costs, key=lambda t: (costs[t], t))
    assert encoding.report_measurement(q, [1, hi + 5]) == [1, width]  # clipped as a Sum's
    assert encoding.report_measurement(q, [0, lo - 5]) == [0, 0]


@pytest.mark.parametrize("scale, width", [(s, r) for s in range(1, 5) for r in range(1, 7)])
def test_the_pairs_sensitivity_is_enumerated(scale: int, width: int) -> None:
    """What one respondent adds to the key's aggregate, [s·b, y′] for b in {0, 1} and y′ in
    [0, R]: the largest L1 change between any two of them (substitution) is s + R, the
    encoding's sensitivity; the noise is certified there and refuted one below."""
    from ldpsurvey.shared.two_server.encoding import Encoding

    enc = Encoding("days", "asked_pair", 2, width, 0, delta=scale + width, scale=scale)
    outputs = [(scale * b, y) for b in (0, 1) for y in range(width + 1)]
    assert max(abs(a[0] - b[0]) + abs(a[1] - b[1]) for a in outputs for b in outputs) == (
        enc.sensitivity)
    eps = rational_floor(1.0)
    NoisePlan("asked_pair", 1.0, enc.sensitivity, eps / enc.sensitivity)
    with pytest.raises(PrivacyCheckError):
        NoisePlan("asked_pair", 1.0, enc.sensitivity, eps / (enc.sensitivity - 1))


def _prepared(enc, ctx: bytes, public: bytes, shares: tuple[bytes, bytes], rid: bytes):
    key = os.urandom(32)
    states, preps = zip(*(vdaf.prep_init(enc, key, ctx, agg, rid, public, shares[agg])
                          for agg in (vdaf.LEADER, vdaf.HELPER)), strict=True)
    message = vdaf.combine(enc, ctx, list(preps))
    outs = [vdaf.finish(enc, ctx, state, message) for state in states]
    return [(a + b) % vdaf.modulus(enc) for a, b in zip(*outs, strict=True)]


def test_the_pairs_proofs_accept_honest_pairs_and_reject_others() -> None:
    q = parsed()
    enc = encoding.question_encoding(q)
    ctx = b"ldpsurvey two-server v1|s|1|days"
    for measurement in ([0, 0], [1, enc.max_measurement], [1, 17]):
        rid = os.urandom(16)
        shards = vdaf.shard(enc, ctx, measurement, rid)
        assert _prepared(enc, ctx, shards.public_share, shards.input_shares, rid) == [
            enc.scale * measurement[0], measurement[1]]
    inst = vdaf.instance(enc)
    count, number = inst.bit, inst.number
    honest = number.flp.valid.encode(3)
    # a bit of 2; a number whose bit decomposition holds a 2 (any 0/1 bits are a number in
    # range: Prio3Sum's weights add up to max_measurement exactly)
    for bit, bits in (([2], honest), ([1], [2, *honest[1:]])):
        rid = os.urandom(16)
        pub_b, sh_b = count.shard_encoded(ctx, bit, rid, os.urandom(count.RAND_SIZE))
        pub_y, sh_y = number.shard_encoded(ctx, bits, rid, os.urandom(number.RAND_SIZE))
        public = inst.encode_public_share((pub_b, pub_y))
        shares = tuple(inst.encode_input_share(i, (sh_b[i], sh_y[i])) for i in range(2))
        with pytest.raises(vdaf.verify_errors()):
            _prepared(enc, ctx, public, shares, rid)
    assert prio3_count().RAND_SIZE + number.RAND_SIZE == inst.RAND_SIZE


# --- the estimators against their formulas -----------------------------------------------------

N, RUNS = 3000, 500


@pytest.mark.parametrize("local, values, weights", [
    (1.0, [0, 3, 10], [0.5, 0.3, 0.2]),
    (2.0, [0, 10], [0.6, 0.4]),  # answers at the ends: Bhatia-Davis is the spread itself
])
def test_estimates_are_unbiased_and_calibrated(local: float, values, weights) -> None:
    q = parsed(local=local)
    mechanism = mechanism_for(q)
    enc = encoding.question_encoding(q)
    plan = question_noise_plan(q)
    asked = 0.6
    truth_mean = float(np.dot(values, weights))
    rng = np.random.default_rng(int(local * 10))
    rows = {k: [] for k in ("na", "na_se", "mean", "mean_se", "covered")}
    for _ in range(RUNS):
        is_asked = rng.random(N) < asked
        answers = np.where(is_asked, rng.choice(values, size=N, p=weights), 0)
        index = np.where(is_asked, answers - q.min, mechanism.k)
        reports = mechanism.perturb_many(index, rng)
        clipped = np.clip(reports[:, 1], enc.offset, enc.offset + enc.max_measurement)
        totals = np.array([enc.scale * reports[:, 0].sum(), (clipped - enc.offset).sum()])
        noisy = totals + geometric_noise(rng, plan, 2) + geometric_noise(rng, plan, 2)
        est = estimate_two_server(q, Entry([int(v) for v in noisy], N, plan), 0.95)
        rows["na"].append(est.not_asked.estimate)
        rows["na_se"].append(est.not_asked.std_error)
        mean = est.among_asked.mean
        rows["mean"].append(mean.estimate)
        rows["mean_se"].append(mean.std_error)
        rows["covered"].append(mean.ci_low <= truth_mean <= mean.ci_high)
    lo, hi = (stats.chi2.ppf(ALPHA / 2, RUNS - 1) / (RUNS - 1),
              stats.chi2.isf(ALPHA / 2, RUNS - 1) / (RUNS - 1))
    for key, target in (("na", 1 - asked), ("mean", truth_mean)):
        est, se = np.array(rows[key]), np.array(rows[key + "_se"])
        assert abs(est.mean() - target) <= Z * est.std(ddof=1) / math.sqrt(RUNS), key
        ratio = est.var(ddof=1) / float((se**2).mean())
        assert ratio <= hi * 1.05, (key, ratio)  # never too narrow (the delta method: 5%)
        if key == "na" or len(values) == 2:  # exact there
            assert ratio >= lo / 1.05, (key, ratio)
    coverage = float(np.mean(rows["covered"]))
    assert coverage >= 0.95 - Z * math.sqrt(0.95 * 0.05 / RUNS) - 0.01, coverage


# --- through a real leader and helper ---------------------------------------------------------


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    started = start_pair(tmp_path_factory.mktemp("pair"))
    yield started
    started.stop()


def test_a_real_pair_collects_the_same_shape_and_the_exact_mean(pair, tmp_path) -> None:
    from ldpsurvey.shared.two_server.config import b64url

    data = two_server_survey_dict([{**GATE, "central_epsilon": 400.0},
                                   hidden(central=400.0, local=50.0, high=2)])
    data.update(id="hidden-days")
    data["two_server"].update(helper_url=pair.helper.url, min_batch_size=3,
                              helper_hpke_key=b64url(pair.helper_key),
                              leader_hpke_key=b64url(pair.leader_key))
    http_json("POST", pair.leader.url + "/api/surveys",
              signed_survey(data, Ed25519PrivateKey.generate()), pair.token)
    survey = Survey.from_dict(data)
    given = [{"gate": True, "days": 1}, {"gate": False}, {"gate": True, "days": 2},
             {"gate": False}, {"gate": True, "days": 0}]
    shapes = []
    for i, answers in enumerate(given):
        r = Respondent(pair.leader.url, state_dir=str(tmp_path / f"r{i}"), warn=lambda m: None,
                       max_epsilon=1e4)
        submission = r.answer(r.fetch_survey("hidden-days"), answers)
        body = submission.wire()
        shapes.append(({k: len(v) for k, v in body["public_shares"].items()},
                       len(body["leader_share"]), len(body["helper_share"])))
        assert r.submit(submission).status == "sent"
    assert all(shape == shapes[0] for shape in shapes)  # whatever each one answered
    enc = encoding.question_encoding(survey.question("days"))
    # hostile: a bit of 2 under an honest number is rejected for that key only
    rid = os.urandom(16)
    inst = vdaf.instance(enc)
    ctx = encoding.ctx(survey, "days")
    pub_b, sh_b = inst.bit.shard_encoded(ctx, [2], rid, os.urandom(inst.bit.RAND_SIZE))
    pub_y, sh_y = inst.number.shard(ctx, 1, rid, os.urandom(inst.number.RAND_SIZE))
    shards = {"gate": vdaf.shard(encoding.encodings(survey)["gate"],
                                 encoding.ctx(survey, "gate"), 0, rid),
              "days": vdaf.Shards(inst.encode_public_share((pub_b, pub_y)),
                                  tuple(inst.encode_input_share(i, (sh_b[i], sh_y[i]))
                                        for i in range(2)))}
    api = lambda method, path, body=None: http_json(  # noqa: E731
        method, pair.leader.url + path, body, pair.token)
    assert api("POST", "/api/surveys/hidden-days/two-server/uploads",
               seal_upload(survey, rid, shards))["duplicate"] is False
    api("POST", "/api/surveys/hidden-days/two-server/aggregate", {})
    [listed] = api("GET", "/api/surveys/hidden-days/two-server/batches")["batches"]
    batch = api("POST", f"/api/surveys/hidden-days/two-server/batches/{listed['batch_id']}"
                        "/collect", {})
    e = batch["entries"]["days"]
    assert (e["kind"], e["n"], e["rejected"]) == ("asked_pair", 5, 1)
    default = mechanism_for(survey.question("days")).default
    assert e["noisy_sums"] == [3 * enc.scale, 1 + 2 + 0 + 2 * default - 5 * enc.offset]
    [doc] = [d for d in batch["estimates"]["questions"] if d["question"] == "days"]
    assert doc["not_asked"]["value"] == NOT_ASKED
    assert doc["not_asked"]["estimate"] == pytest.approx(0.4, abs=1e-9)
    assert doc["among_asked"]["mean"]["estimate"] == pytest.approx(1.0, abs=1e-9)
    assert doc["local_mechanism"] == "asked_geometric"


def test_cells_combine_the_mean_among_those_asked() -> None:
    """A post-stratified report (shared/two_server/design.py): the pair releases no values'
    shares, so the mean among those asked is the cells' means weighted by their shares asked;
    the delete-a-group jackknife gives it a standard error."""
    from ldpsurvey.shared.two_server.design import BatchDesign, estimate_batches
    from ldpsurvey.shared.two_server.results import BatchEntry, CollectedBatch

    survey = survey_of([GATE, hidden()])
    q = survey.question("days")
    enc = encoding.question_encoding(q)
    mechanism = mechanism_for(q)
    p, qq, d = float(mechanism.p_star), float(mechanism.q_star), mechanism.default

    def entry(key: str, n: int, asked: float, mean: float) -> BatchEntry:
        if key == "gate":
            return BatchEntry("gate", "count", (round(n * asked),), n, 0, 1.0, 1)
        bits = n * (qq + (p - qq) * asked)  # expected totals: a noiseless stand-in
        number = n * (asked * mean + (1 - asked) * d) - n * enc.offset
        return BatchEntry("days", "asked_pair", (round(enc.scale * bits), round(number)), n, 0,
                          1.0, enc.sensitivity, enc.offset)

    batches = [CollectedBatch(survey.id, survey.version, f"b{cell}{g}",
                              {k: entry(k, 4000, asked, mean) for k in ("gate", "days")},
                              cell=cell, group=g)
               for cell, asked, mean in (("north", 0.8, 6.0), ("south", 0.2, 2.0))
               for g in (1, 2, 3)]
    totals = {"north": 1.0, "south": 3.0}
    doc = estimate_batches(survey, batches, BatchDesign(totals=totals, variance="groups"))
    days = next(x for x in doc["questions"] if x["question"] == "days")
    weights = {"north": 0.25, "south": 0.75}
    asked = {"north": 0.8, "south": 0.2}
    expected = (weights["north"] * 0.8 * 6.0 + weights["south"] * 0.2 * 2.0) / (
        weights["north"] * asked["north"] + weights["south"] * asked["south"])
    assert days["not_asked"]["estimate"] == pytest.approx(1 - 0.35, abs=2e-3)
    assert days["among_asked"]["mean"]["estimate"] == pytest.approx(expected, abs=0.02)
    assert days["among_asked"]["mean"]["std_error"] is not None  # the jackknife's


# --- planning -----------------------------------------------------------------------------------


def test_compare_modes_plans_the_mean_among_those_asked(tmp_path) -> None:
    """plan --compare-modes of an integer follow-up: its mean among those asked in each mode;
    the pair's planned variance is the worst case of the estimator's own over the truth."""
    import json

    from click.testing import CliRunner
    from ldpsurvey.analyst.cli import cli
    from ldpsurvey.analyst.plan.modes import compare_question
    from ldpsurvey.analyst.plan.rows import TWO_SERVER, TWO_SERVER_LOCAL

    q = parsed(local=2.0, high=30)
    n = 5000
    rows = {r.mode: r for r in compare_question(q, n=n).rows}
    assert set(rows) == {"ldp", TWO_SERVER, TWO_SERVER_LOCAL}
    planned = rows[TWO_SERVER_LOCAL].variance(n)
    mechanism = mechanism_for(q)
    enc = encoding.question_encoding(q)
    plan = question_noise_plan(q)
    p, qq, d = float(mechanism.p_star), float(mechanism.q_star), mechanism.default
    ses = []
    for mean in (0.0, 7.5, 15.0, 22.5, 30.0):  # half asked (the plan's default)
        bits = n * (qq + (p - qq) * 0.5)
        number = n * (0.5 * mean + 0.5 * d) - n * enc.offset
        est = estimate_two_server(q, Entry([round(enc.scale * bits), round(number)], n, plan))
        ses.append(est.among_asked.mean.std_error)
    assert max(ses) ** 2 <= planned * (1 + 1e-3)
    assert max(ses) ** 2 >= 0.5 * planned  # and not far above it (0.89 of it)
    # without ε0: a Histogram over the values and "not asked"; the plan is the worst case of its
    # estimator too (answers at the ends, a share a at the top)
    plain = survey_of([GATE, {**question_data("integer", 1.0, qid="days", min=0, max=30),
                              "relevant": "gate"}]).questions[1]
    plan = question_noise_plan(plain)
    assert (plan.kind, plain.local_epsilon) == ("histogram", None)
    planned = {r.mode: r for r in compare_question(plain, n=n).rows}[TWO_SERVER].variance(n)
    ses = []
    for top in (0.0, 0.25, 0.5, 0.75, 1.0):
        cells = np.zeros(32)
        cells[[0, 30, 31]] = 0.5 * (1 - top), 0.5 * top, 0.5
        est = estimate_two_server(plain, Entry([round(n * c) for c in cells], n, plan))
        ses.append(est.among_asked.mean.std_error)
    assert max(ses) ** 2 <= planned * (1 + 1e-3)
    assert max(ses) ** 2 >= 0.5 * planned  # (0.99 of it)
    data = two_server_survey_dict([GATE, hidden(local=2.0, high=30)])
    path = tmp_path / "hidden.json"
    path.write_text(json.dumps(data))
    out = CliRunner().invoke(cli, ["plan", str(path), "--margin", "0.05", "--mean-margin", "1"])
    assert out.exit_code == 0, out.output
    assert "days: integer, mean among the 50% asked" in out.output
    assert "two-server + local  asked_geometric" in out.output
