"""The noise a real leader and helper add at collection: its empirical variance is the stated
one (two processes on loopback, each with its own SQLite database).

One categorical question with K = 1,500 options answered by 4 respondents: the collected
histogram minus the known true counts is K independent draws of Z_L + Z_H, each server's
two-sided geometric noise at the question's NoisePlan. Two-sided false-alarm rate 1e-6 per
check (z = 4.89): the noise comes from the servers' OS CSPRNG, so the rate is the chance a
correct implementation fails.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.client.respondent import Respondent
from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.two_server.plans import question_noise_plan
from scipy import stats
from support.clients import http_json
from support.two_server import signed_survey, start_pair, two_server_survey

Z = stats.norm.isf(1e-6 / 2)
K = 1500
ANSWERS = ["o3", "o3", "o700", "o1499"]


def _moments(rate: float) -> tuple[float, float]:
    """Variance and 4th moment of one server's discrete Laplace noise."""
    a = math.exp(-rate)
    z = np.arange(1, int(60 / rate) + 2, dtype=float)
    w = 2 * (1 - a) / (1 + a) * a**z
    return float(w @ z**2), float(w @ z**4)


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("noise-pair")
    pair = start_pair(tmp)
    try:
        data = two_server_survey(pair.helper.url, pair.helper_key, pair.leader_key,
                                 survey_id="noise", min_batch=2)
        data["questions"] = [{"id": "pick", "text": "Pick one", "type": "categorical",
                              "options": [f"o{i}" for i in range(K)], "central_epsilon": 0.5}]
        data.pop("crosstabs")
        http_json("POST", pair.leader.url + "/api/surveys",
                  signed_survey(data, Ed25519PrivateKey.generate()), pair.token)
        for i, option in enumerate(ANSWERS):
            r = Respondent(pair.leader.url, state_dir=str(tmp / f"r{i}"), warn=lambda m: None,
                           max_epsilon=10)
            delivery = r.submit(r.answer(r.fetch_survey("noise"), {"pick": option}))
            assert delivery.status == "sent", delivery.message
        base = pair.leader.url + "/api/surveys/noise/two-server"
        http_json("POST", base + "/aggregate", {}, pair.token)
        [batch] = http_json("GET", base + "/batches", None, pair.token)["batches"]
        doc = http_json("POST", f"{base}/batches/{batch['batch_id']}/collect", {}, pair.token)
        yield Survey.from_dict(data), doc
    finally:
        pair.stop()


def test_collected_noise_has_the_stated_variance(collected) -> None:
    survey, doc = collected
    entry = doc["entries"]["pick"]
    assert entry["n"] == len(ANSWERS) and entry["rejected"] == 0
    truth = np.zeros(K)
    for option in ANSWERS:
        truth[int(option[1:])] += 1
    noise = np.asarray(entry["noisy_sums"], dtype=float) - truth
    plan = question_noise_plan(survey.question("pick"))
    var, fourth = _moments(float(plan.rate))
    assert var == pytest.approx(plan.variance, rel=1e-9)
    total_var = 2 * var  # both servers
    total_fourth = 2 * fourth + 6 * var * var  # E(X + Y)^4, X and Y independent, mean 0
    assert abs(noise.mean()) <= Z * math.sqrt(total_var / K)
    assert abs(float(np.mean(noise**2)) - total_var) <= Z * math.sqrt(
        (total_fourth - total_var**2) / K)
    # Each server's noise alone is not zero: the sum is not the truth on most cells.
    assert np.count_nonzero(noise) > K / 2
