"""Answers as Prio3 measurements, and a client upload as the leader parses it."""

from __future__ import annotations

import math
import os

import pytest
from ldpsurvey.client.two_server import build_upload
from ldpsurvey.shared.errors import AnswerError
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.mechanisms.geometric import Geometric
from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.two_server import encoding, hpke
from ldpsurvey.shared.two_server.upload import UploadError, open_half, parse_upload
from support.two_server import two_server_survey


@pytest.fixture
def keys(tmp_path):
    h, hpub = hpke.generate_keypair(tmp_path, "helper")
    lk, lpub = hpke.generate_keypair(tmp_path, "leader")
    return hpke.load_private_key(h.private), hpub, hpke.load_private_key(lk.private), lpub


def test_encodings_follow_the_contract():
    survey = Survey.from_dict(two_server_survey("https://h.example", os.urandom(32),
                                                os.urandom(32)))
    enc = encoding.encodings(survey)
    assert (enc["smoker"].kind, enc["smoker"].sensitivity) == ("count", 1)
    assert (enc["mood"].kind, enc["mood"].length, enc["mood"].sensitivity) == ("histogram", 4, 2)
    assert (enc["hours"].kind, enc["hours"].max_measurement, enc["hours"].sensitivity) == (
        "sum", 12, 12)
    assert (enc["crosstab:smoker:mood"].kind, enc["crosstab:smoker:mood"].length) == (
        "histogram", 8)
    m = encoding.measurements(survey, {"smoker": 1, "mood": 2, "hours": 7})
    assert m == {"smoker": 1, "mood": 2, "hours": 7, "crosstab:smoker:mood": 1 * 4 + 2}
    assert "crosstab:smoker:mood" not in encoding.measurements(survey, {"smoker": 1})


def test_answers_are_refused_not_clamped():
    survey = Survey.from_dict(two_server_survey("https://h.example", os.urandom(32),
                                                os.urandom(32)))
    for qid, value in (("smoker", "yes"), ("mood", "ecstatic"), ("hours", 13), ("hours", 2.5)):
        with pytest.raises(AnswerError):
            encoding.question_index(survey.question(qid), value)


def test_local_geometric_is_summed_over_its_clip_range():
    d = two_server_survey("https://h.example", os.urandom(32), os.urandom(32))
    d["questions"][2].update(local_epsilon=1.0)
    q = Survey.from_dict(d).question("hours")
    enc = encoding.question_encoding(q)
    lo, hi = encoding.clip_bounds(mechanism_for(q))
    assert q.mechanism == "geometric" and enc.kind == "sum" and enc.offset == lo < 0
    assert enc.max_measurement == enc.sensitivity == hi - lo
    assert encoding.report_measurement(q, enc.offset) == 0
    # an honest report beyond the clip (chance <= 1e-6 a side) is clipped, never refused
    assert encoding.report_measurement(q, lo - 5) == 0
    assert encoding.report_measurement(q, hi + 5) == hi - lo


def _two_sided(alpha: float, z: int) -> float:
    return (1 - alpha) / (1 + alpha) * alpha ** abs(z)


@pytest.mark.parametrize(("epsilon", "low", "high"), [(0.5, 0, 30), (2.0, 0, 30), (2.0, -3, 3),
                                                       (8.0, 1, 100)])
def test_clip_tail_and_bias_bound_are_exact(epsilon, low, high):
    """c is the smallest clip with P[Z > c] <= CLIP_TAIL; the bias of the clipped report, summed
    term by term over the noise's distribution (math.fsum), is within `clip_bias_bound` for
    every answer, and that bound is below 0.1% of the mean's local-noise standard error at
    n = 10^6."""
    m = Geometric(epsilon, range(low, high + 1))
    lo, hi = encoding.clip_bounds(m)
    c = low - lo
    assert c == hi - high > 0
    alpha = math.exp(-float(m.rate))

    def tail(t: int) -> float:  # P[Z > t], summed term by term
        return math.fsum(_two_sided(alpha, z) for z in range(t + 1, t + horizon))

    horizon = int(60 / float(m.rate))  # beyond it the terms are below e^-60
    assert tail(c) <= encoding.CLIP_TAIL * (1 + 1e-9)
    assert tail(c - 1) > encoding.CLIP_TAIL
    bound = encoding.clip_bias_bound(m)
    assert bound <= encoding.CLIP_TAIL / (1 - alpha) * (1 + 1e-9)
    for x in (low, (low + high) // 2, high):
        bias = math.fsum(_two_sided(alpha, z) * (min(max(x + z, lo), hi) - (x + z))
                         for z in range(-c - horizon, c + horizon + 1))
        assert abs(bias) <= bound * (1 + 1e-9)
    assert bound < 1e-3 * math.sqrt(Geometric.noise_variance(high - low + 1, epsilon) / 1e6)


def test_upload_opens_only_for_its_server(keys):
    _helper_key, hpub, leader_key, lpub = keys
    survey = Survey.from_dict(two_server_survey("https://h.example", hpub, lpub))
    sub = build_upload(survey, {"smoker": True, "mood": "low"})
    upload = parse_upload(sub.wire(), set(encoding.encodings(survey)))
    assert set(upload.public_shares) == {"smoker", "mood", "crosstab:smoker:mood"}
    opened = open_half(upload.leader_share, leader_key, "pulse", 1, upload.report_id, "leader",
                       set(upload.public_shares))
    assert set(opened) == set(upload.public_shares)
    with pytest.raises(hpke.HpkeError):
        open_half(upload.helper_share, leader_key, "pulse", 1, upload.report_id, "helper",
                  set(upload.public_shares))
    assert "True" not in str(sub.wire()) and "low" not in str(sub.wire())
    ledger = {c.question: c.extra for c in sub.charges}
    assert ledger["smoker"]["local_epsilon"] == "none"
    assert ledger["smoker"]["central_epsilon"] == 1.0
    with pytest.raises(UploadError, match="not a question"):
        parse_upload({**sub.wire(), "public_shares": {"other": ""}}, {"smoker"})


def test_the_device_is_charged_for_every_release_its_answers_enter(keys):
    """A declared crosstab is a noisy release of its own in the two-server mode: the ledger's
    charges for a fully answered survey add up to the guarantee's central total, and a crosstab
    one of whose questions was skipped is neither measured nor charged."""
    from ldpsurvey.shared.two_server.guarantees import survey_guarantees

    _helper_key, hpub, _leader_key, lpub = keys
    data = two_server_survey("https://h.example", hpub, lpub)
    data["questions"][1]["optional"] = True  # mood, in the crosstab
    survey = Survey.from_dict(data)
    full = build_upload(survey, {"smoker": True, "mood": "low", "hours": 7})
    charged = {c.question: c.epsilon for c in full.charges}
    assert charged == {"smoker": 1.0, "mood": 1.0, "hours": 1.0, "crosstab:smoker:mood": 1.0}
    assert math.fsum(charged.values()) == survey_guarantees(survey).central.basic == 4.0
    assert set(charged) == set(full.body["public_shares"])  # charged = what was sent
    skipped = build_upload(survey, {"smoker": True, "hours": 7})
    assert {c.question for c in skipped.charges} == {"smoker", "hours"}
    assert set(skipped.body["public_shares"]) == {"smoker", "hours"}


def test_the_ceiling_counts_declared_crosstabs_in_the_two_server_mode(keys):
    from ldpsurvey.client.budget import Budget
    from ldpsurvey.client.errors import PolicyError

    _helper_key, hpub, _leader_key, lpub = keys
    survey = Survey.from_dict(two_server_survey("https://h.example", hpub, lpub))
    Budget(max_epsilon=4.0).check(survey)  # 3 questions + 1 crosstab at ε 1 each
    with pytest.raises(PolicyError, match="costs ε = 4 in total"):
        Budget(max_epsilon=3.5).check(survey)


def test_the_ceiling_holds_each_threat_apart(keys):
    """Against one party the central ε of every release; if the servers collude the ε0s: a
    small total of one cannot hide a large total of the other."""
    from ldpsurvey.client.budget import Budget, cost_views
    from ldpsurvey.client.errors import PolicyError

    _helper_key, hpub, _leader_key, lpub = keys
    data = two_server_survey("https://h.example", hpub, lpub, local=True)
    for q in data["questions"][:2]:
        q.update(central_epsilon=0.5, local_epsilon=2.5)
    survey = Survey.from_dict(data)
    central, local = cost_views(survey)
    assert math.fsum(e for _, e in central) == 0.5 + 0.5 + 1.0 + 0.5
    assert [e for _, e in local] == [2.5, 2.5]
    with pytest.raises(PolicyError, match="costs ε = 5 in total"):
        Budget(max_epsilon=4.9).check(survey)
    Budget(max_epsilon=5.0).check(survey)
