"""Multiselect questions in the two-server mode: Prio3 MultihotCountVec through a real leader
and helper, hostile shares rejected, the estimators against their variance formulas (with and
without a local ε0), and the mode comparison.

Exactness of the protocol test: central ε = 400 makes each server's noise nonzero with
probability below 1e-14 per coordinate (test_protocol.py), so the collected sums are the true
totals. Statistical checks: a false-alarm rate of ALPHA = 1e-6 each (about 40 checks).
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.client.respondent import Respondent
from ldpsurvey.client.two_server import seal_upload
from ldpsurvey.shared.errors import SurveyError
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.two_server import encoding, vdaf
from ldpsurvey.shared.two_server.multiselect import estimate_set_two_server
from ldpsurvey.shared.two_server.plans import question_noise_plan
from scipy import stats
from support.clients import http_json
from support.two_server import start_pair
from support.two_server_stand_ins import Entry, geometric_noise, question, two_server_survey_dict

OPTIONS = ["cannabis", "cocaine", "ecstasy", "opioids", "sedatives"]
ALPHA = 1e-6
Z = float(stats.norm.isf(ALPHA / 2))
EXACT = 400.0


def multiselect(qid: str = "substances", central: float = 1.0, local: float | None = None,
                mechanism: str | None = None, **spec) -> dict:
    data = {"id": qid, "text": "Which?", "type": "multiselect", "options": OPTIONS,
            "max_selected": 3, "central_epsilon": central, **spec}
    if local is not None:
        data.update(local_epsilon=local, mechanism=mechanism or "psfo_grr")
    return data


# --- the measurement ---------------------------------------------------------------------


def test_encodings_and_sensitivities() -> None:
    plain = question("multiselect", 1.0, options=OPTIONS, max_selected=3)
    enc = encoding.question_encoding(plain)
    assert (enc.kind, enc.length, enc.max_measurement, enc.sensitivity) == ("multihot", 5, 3, 5)
    assert question_noise_plan(plain).sensitivity == 5  # min(2m, k) = min(6, 5)
    small = question("multiselect", 1.0, options=OPTIONS, max_selected=1)
    assert encoding.question_encoding(small).sensitivity == 2
    psfo = question("multiselect", 1.0, 2.0, mechanism="psfo_grr", options=OPTIONS,
                    max_selected=3, required_min=1)
    enc = encoding.question_encoding(psfo)
    assert (enc.kind, enc.length, enc.sensitivity) == ("histogram", 5 + 3 - 1, 2)
    bits = question("multiselect", 1.0, 2.0, mechanism="option_rr", options=OPTIONS,
                    max_selected=3)
    enc = encoding.question_encoding(bits)
    assert (enc.kind, enc.max_measurement, enc.sensitivity) == ("multihot", 5, 5)
    assert encoding.question_index(plain, ["opioids", "cannabis"]) == [1, 0, 0, 1, 0]


def test_local_mechanisms_that_report_no_vector_are_refused() -> None:
    with pytest.raises(SurveyError, match=r"psfo_olh.*not one vector of counts"):
        Survey.from_dict(two_server_survey_dict([multiselect(local=2.0, mechanism="psfo_olh")]))


@pytest.mark.parametrize("local", [None, 2.0])
def test_exclusive_options_are_refused_with_the_reason(local: float | None) -> None:
    """MultihotCountVec proves only 0/1 entries and at most m set: it cannot refuse "none"
    sent with another option, so a two-server survey has no exclusive options (yet)."""
    with pytest.raises(SurveyError, match=r"questions\.substances\.exclusive: .*MultihotCountVec"):
        Survey.from_dict(two_server_survey_dict([multiselect(local=local,
                                                             exclusive=["sedatives"])]))


# --- through a real leader and helper ---------------------------------------------------------


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    started = start_pair(tmp_path_factory.mktemp("pair"))
    yield started
    started.stop()


def publish(pair, survey_id: str) -> Survey:
    data = two_server_survey_dict([multiselect(central=EXACT),
                                   multiselect("local", EXACT, 2.0, "option_rr")])
    data.update(id=survey_id)
    return pair.publish(data, min_batch=3)


def api(pair, method: str, path: str, body=None):
    return http_json(method, pair.leader.url + path, body, pair.token)


ANSWERS = [["cannabis", "opioids"], [], ["cannabis"], ["cocaine", "ecstasy", "sedatives"]]


def test_exact_totals_and_hostile_shares(pair, tmp_path) -> None:
    survey = publish(pair, "drugs")
    for i, chosen in enumerate(ANSWERS):
        r = Respondent(pair.leader.url, state_dir=str(tmp_path / f"d{i}"), warn=lambda m: None,
                       max_epsilon=1e4)
        delivery = r.submit(r.answer(r.fetch_survey("drugs"),
                                     {"substances": chosen, "local": chosen}))
        assert delivery.status == "sent", delivery.message
    # hostile: four options set where at most three may be, and an entry that is not 0/1
    for bad in ([1, 1, 1, 1, 0], [2, 0, 0, 0, 0]):
        rid = os.urandom(16)
        encodings = encoding.encodings(survey)
        inst = vdaf.instance(encodings["substances"])
        weight = encoding.Encoding("", "multihot", 5, 3).vdaf().flp.valid.encode
        encoded = bad + weight([1, 0, 0, 0, 0])[5:]  # claims weight 1 in its range check
        public, shares = inst.shard_encoded(encoding.ctx(survey, "substances"), encoded, rid,
                                            os.urandom(inst.RAND_SIZE))
        honest = {"local": vdaf.shard(encodings["local"], encoding.ctx(survey, "local"),
                                      [0, 0, 0, 0, 0], rid)}
        honest["substances"] = vdaf.Shards(inst.encode_public_share(public),
                                           (inst.encode_input_share(0, shares[0]),
                                            inst.encode_input_share(1, shares[1])))
        assert api(pair, "POST", "/api/surveys/drugs/two-server/uploads",
                   seal_upload(survey, rid, honest))["duplicate"] is False
    api(pair, "POST", "/api/surveys/drugs/two-server/aggregate", {})
    [listed] = api(pair, "GET", "/api/surveys/drugs/two-server/batches")["batches"]
    batch = api(pair, "POST", f"/api/surveys/drugs/two-server/batches/{listed['batch_id']}"
                              "/collect", {})
    e = batch["entries"]["substances"]
    assert e["rejected"] == 2 and e["n"] == 4
    assert e["noisy_sums"] == [2, 1, 1, 1, 1]  # the four honest sets, option by option
    assert batch["entries"]["local"]["n"] == 6  # randomized bits: any weight is valid
    [q] = [q for q in batch["estimates"]["questions"] if q["question"] == "substances"]
    assert [c["estimate"] for c in q["categories"]] == pytest.approx([0.5, 0.25, 0.25, 0.25,
                                                                      0.25])
    assert q["mean"]["estimate"] == pytest.approx(1.5)  # (2 + 0 + 1 + 3) / 4
    assert q["consistent_method"] == "clip"


# --- the estimators against their formulas -------------------------------------------------


N, RUNS = 1500, 400
POPULATION = 4000


def population(rng: np.random.Generator) -> np.ndarray:
    """A finite population whose sets respondents are drawn from (sampling counts too)."""
    weights = np.array([0.5, 0.3, 0.15, 0.05, 0.0])
    sets = np.zeros((POPULATION, 5), dtype=bool)
    for i in range(POPULATION):
        size = i % 4
        if size:
            sets[i, rng.choice(5, size=min(size, 3), replace=False,
                               p=(weights + 1e-3) / (weights + 1e-3).sum())] = True
    return sets


@pytest.mark.parametrize("local, mechanism", [(None, None), (2.0, "psfo_grr"),
                                              (2.0, "option_rr"), (3.0, "set_ue")])
def test_estimates_are_unbiased_with_calibrated_errors(local, mechanism) -> None:
    spec = {"max_selected": 2 if mechanism == "set_ue" else 3}
    q = question("multiselect", 1.0, local, mechanism=mechanism, options=OPTIONS, **spec)
    plan = question_noise_plan(q)
    rng = np.random.default_rng(31 + (len(mechanism) if mechanism else 0))
    pop = population(rng)
    pop = pop[pop.sum(axis=1) <= spec["max_selected"]]
    truth, mean_truth = pop.mean(axis=0), pop.sum(axis=1).mean()
    length = encoding.question_encoding(q).length
    rows = {"est": [], "se": [], "mean": [], "mean_se": [], "covered": [], "bound": []}
    for _ in range(RUNS):
        sets = pop[rng.integers(0, pop.shape[0], size=N)]
        if local is None:
            totals = sets.sum(axis=0)
        else:
            mech = mechanism_for(q)
            reports = mech.perturb_many(sets, rng)
            totals = (np.bincount(reports, minlength=length) if mechanism == "psfo_grr"
                      else mech._bits(reports).sum(axis=0))
        noisy = totals + geometric_noise(rng, plan, length) + geometric_noise(rng, plan, length)
        est = estimate_set_two_server(q, Entry([int(v) for v in noisy], N, plan))
        rows["est"].append([c.estimate for c in est.categories])
        rows["se"].append([c.std_error for c in est.categories])
        rows["bound"].append([c.variance_bound for c in est.categories])
        rows["covered"].append([c.ci_low <= t <= c.ci_high
                                for c, t in zip(est.categories, truth, strict=True)])
        rows["mean"].append(est.mean.estimate)
        rows["mean_se"].append(est.mean.std_error)
    est, se = np.array(rows["est"]), np.array(rows["se"])
    err = est.mean(axis=0) - truth
    assert np.all(np.abs(err) <= Z * est.std(axis=0, ddof=1) / math.sqrt(RUNS)), err
    lo, hi = (stats.chi2.ppf(ALPHA / 2, RUNS - 1) / (RUNS - 1),
              stats.chi2.isf(ALPHA / 2, RUNS - 1) / (RUNS - 1))
    ratio = est.var(axis=0, ddof=1) / (se**2).mean(axis=0)
    assert np.all((lo <= ratio) & (ratio <= hi)), ratio
    assert np.all(se**2 <= np.array(rows["bound"]) * (1 + 1e-9))
    means = np.array(rows["mean"])
    assert abs(means.mean() - mean_truth) <= Z * means.std(ddof=1) / math.sqrt(RUNS)
    mean_ratio = means.var(ddof=1) / (np.array(rows["mean_se"]) ** 2).mean()
    assert mean_ratio <= hi  # never too narrow; exact (within the band) for psfo's index
    if mechanism == "psfo_grr":
        assert mean_ratio >= lo


def test_compare_modes_for_a_two_server_multiselect_survey(tmp_path) -> None:
    import json

    data = two_server_survey_dict([multiselect(), multiselect("local", 1.0, 2.0)])
    path = tmp_path / "drugs.json"
    path.write_text(json.dumps(data))
    out = CliRunner().invoke(cli, ["plan", str(path), "--margin", "0.05"])
    assert out.exit_code == 0, out.output
    assert "substances: multiselect, k=5" in out.output
    assert "two-server + local  psfo_grr" in out.output
