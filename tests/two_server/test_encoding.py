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
