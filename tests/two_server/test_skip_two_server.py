"""Skip logic in the two-server mode: "not asked" is a value of the Prio3 measurement (a
Histogram's last cell), with or without a local ε0; the estimates among those asked are
unbiased with honest intervals (simulation, the stated false-alarm rate 1e-6 per check); and a
real leader and helper collect uploads of the same keys and sizes from every respondent,
whatever they answered, and report the shares among those asked."""

from __future__ import annotations

import math

import numpy as np
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.client.respondent import Respondent
from ldpsurvey.shared.errors import SurveyError
from ldpsurvey.shared.skip_logic import NOT_ASKED
from ldpsurvey.shared.two_server.encoding import question_encoding, question_index
from ldpsurvey.shared.two_server.estimates import design_for, estimate_two_server
from ldpsurvey.shared.two_server.plans import question_noise_plan
from scipy import stats
from support.clients import http_json
from support.skip import skip_two_server
from support.two_server import signed_survey, start_pair
from support.two_server_stand_ins import entries, question_data, simulate_cells, survey_of

Z = stats.norm.isf(1e-6 / 2)
REPS = 2000
CONF = 0.95
GATE = question_data("binary", 1.0, qid="gate")


def follow_up(qtype: str, local: float | None = None, *, mechanism: str | None = None,
              **spec):
    data = question_data(qtype, 1.0, local, qid="q", **spec)
    data["relevant"] = "gate"
    if local is not None:
        data["mechanism"] = mechanism or "auto"
    return survey_of([GATE, data]).questions[1]


def test_not_asked_is_the_last_cell_of_a_histogram() -> None:
    yes_no = follow_up("binary")
    assert question_encoding(yes_no).kind == "histogram"
    assert question_encoding(yes_no).length == 3
    assert question_index(yes_no, NOT_ASKED) == 2 and question_index(yes_no, True) == 1
    number = follow_up("integer", min=0, max=10)
    assert question_encoding(number).length == 12 and question_index(number, NOT_ASKED) == 11
    assert question_noise_plan(number).kind == "histogram"
    local = follow_up("categorical", 2.0, options=[f"o{i}" for i in range(40)])
    assert local.mechanism == "grr" and local.k == 41  # auto: a local report is one index
    with pytest.raises(SurveyError, match="at most 255 values"):
        follow_up("integer", min=0, max=300)
    # with ε0: asked_geometric's pair (tests/two_server/test_skip_integer_two_server.py), any
    # range; a mechanism without the "not asked" value is refused
    paired = follow_up("integer", 1.0, min=0, max=300)
    assert (paired.mechanism, question_encoding(paired).kind) == ("asked_geometric",
                                                                  "asked_pair")
    with pytest.raises(SurveyError, match="cannot carry the 'not asked' value"):
        follow_up("integer", 1.0, mechanism="geometric", min=0, max=10)


def _check(values: np.ndarray, ses: np.ndarray, lows: np.ndarray, highs: np.ndarray,
           truth: float) -> None:
    assert abs(values.mean() - truth) <= Z * values.std(ddof=1) / math.sqrt(REPS), "biased"
    spread = values.var(ddof=1)
    reported = float(np.mean(ses**2))
    # the delta method is first-order: 5% of slack beyond the χ² band for its remainder
    assert abs(reported - spread) <= Z * spread * math.sqrt(2 / (REPS - 1)) + 0.05 * spread
    coverage = float(((lows <= truth) & (truth <= highs)).mean())
    assert abs(coverage - CONF) <= Z * math.sqrt(CONF * (1 - CONF) / REPS) + 0.01, coverage


@pytest.mark.parametrize(("local", "seed"), [(None, 1), (2.0, 2)])
def test_shares_among_those_asked(local: float | None, seed: int) -> None:
    q = follow_up("categorical", local, options=["a", "b", "c"])
    asked = 0.6
    among = np.array([0.5, 0.3, 0.2])
    pi = np.append(asked * among, 1 - asked)
    design = design_for(q)
    plan = question_noise_plan(q)
    n = 2000
    rng = np.random.default_rng(seed)
    totals = simulate_cells(rng, n, design.cell_probabilities(pi), plan, REPS)
    ests = [estimate_two_server(q, e, CONF) for e in entries(totals, n, plan)]
    for j in range(3):
        rows = [e.among_asked.categories[j] for e in ests]
        _check(*(np.array([getattr(r, f) for r in rows])
                 for f in ("estimate", "std_error", "ci_low", "ci_high")), among[j])
    rows = [e.not_asked for e in ests]
    _check(*(np.array([getattr(r, f) for r in rows])
             for f in ("estimate", "std_error", "ci_low", "ci_high")), 1 - asked)


def test_the_mean_among_those_asked_of_an_integer_follow_up() -> None:
    q = follow_up("integer", min=0, max=10)
    asked = 0.5
    weights = np.exp(-np.arange(11) / 3)
    weights /= weights.sum()
    pi = np.append(asked * weights, 1 - asked)
    design = design_for(q)
    plan = question_noise_plan(q)
    n = 3000
    rng = np.random.default_rng(7)
    totals = simulate_cells(rng, n, design.cell_probabilities(pi), plan, REPS)
    ests = [estimate_two_server(q, e, CONF) for e in entries(totals, n, plan)]
    means = [e.among_asked.mean for e in ests]
    _check(*(np.array([getattr(m, f) for m in means])
             for f in ("estimate", "std_error", "ci_low", "ci_high")),
           float(np.arange(11) @ weights))
    assert ests[0].categories is None and len(ests[0].distribution) == 11


def test_a_real_pair_collects_the_same_shape_from_everyone(tmp_path) -> None:
    pair = start_pair(tmp_path)
    try:
        data = skip_two_server(pair.helper.url, pair.helper_key, pair.leader_key, "skipts")
        http_json("POST", pair.leader.url + "/api/surveys",
                  signed_survey(data, Ed25519PrivateKey.generate()), pair.token)
        answers = [{"smoker": True, "daily": True, "brand": "b", "packs": 4},
                   {"smoker": False}, {"smoker": True, "daily": False, "brand": "a"},
                   {"smoker": False}, {"smoker": True, "daily": True, "brand": "c", "packs": 9}]
        shapes = []
        for i, given in enumerate(answers):
            r = Respondent(pair.leader.url, state_dir=str(tmp_path / f"r{i}"),
                           warn=lambda m: None, max_epsilon=100)
            submission = r.answer(r.fetch_survey("skipts"), given)
            body = submission.wire()
            shapes.append(({k: len(v) for k, v in body["public_shares"].items()},
                           len(body["leader_share"]), len(body["helper_share"])))
            assert r.submit(submission).status == "sent"
        assert all(shape == shapes[0] for shape in shapes)  # whatever each one answered
        assert set(shapes[0][0]) == {"smoker", "daily", "brand", "packs",
                                     "crosstab:smoker:brand"}
        http_json("POST", pair.leader.url + "/api/surveys/skipts/two-server/aggregate", {},
                  pair.token)
        [batch] = http_json("GET", pair.leader.url + "/api/surveys/skipts/two-server/batches",
                            None, pair.token)["batches"]
        doc = http_json("POST", pair.leader.url + f"/api/surveys/skipts/two-server/batches/"
                        f"{batch['batch_id']}/collect", {}, pair.token)
        by_id = {q["question"]: q for q in doc["estimates"]["questions"]}
        assert [c["value"] for c in by_id["brand"]["among_asked"]["categories"]] == \
            ["a", "b", "c"]
        assert "mean" in by_id["packs"]["among_asked"]
        assert by_id["daily"]["not_asked"]["value"] == NOT_ASKED
    finally:
        pair.stop()
