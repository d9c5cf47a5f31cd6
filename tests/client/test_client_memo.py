"""Longitudinal surveys: memoized permanent values, the instantaneous layer, and the ledger."""

from __future__ import annotations

import math
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st
from ldpsurvey.client.errors import AlreadyAnsweredError
from ldpsurvey.client.hazmat_memo import HmacSource, Memoizer
from ldpsurvey.client.respondent import Respondent
from ldpsurvey.client.state import StateDir
from ldpsurvey.shared.errors import AnswerError, SurveyError
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.mechanisms.binary_rr import BinaryRR
from ldpsurvey.shared.mechanisms.grr import GRR
from ldpsurvey.shared.mechanisms.longitudinal import Longitudinal
from ldpsurvey.shared.survey import Survey
from support.clients import FakeServer, signed, survey_dict

KEY = Ed25519PrivateKey.generate()


def series_survey(version: int, instantaneous: float | None = None, **changes: Any) -> Survey:
    d = survey_dict(version=version, series="weekly", **changes)
    if instantaneous is not None:
        for q in d["questions"][:2]:
            q["instantaneous_epsilon"] = instantaneous
    return Survey.from_dict(d)


@pytest.fixture()
def server() -> Iterator[FakeServer]:
    s = FakeServer(lambda m, p, b: (201, {"accepted": [b["submission_id"]], "duplicates": []}))
    yield s
    s.close()


def respondent(server: FakeServer, tmp_path: Path) -> Respondent:
    return Respondent(server.url, state_dir=str(tmp_path / "state"), warn=lambda m: None)


# --- the HMAC stream --------------------------------------------------------------------------


def test_hmac_source_is_deterministic_and_keyed() -> None:
    draws = [HmacSource(b"k" * 32, b"m").randbelow(1000) for _ in range(3)]
    assert len(set(draws)) == 1
    a = HmacSource(b"k" * 32, b"m")
    b = HmacSource(b"j" * 32, b"m")
    assert [a.randbelow(2**64) for _ in range(4)] != [b.randbelow(2**64) for _ in range(4)]


@settings(max_examples=200, deadline=None)
@given(key=st.binary(min_size=1, max_size=40), message=st.binary(max_size=40),
       bounds=st.lists(st.integers(1, 2**130), min_size=1, max_size=8))
def test_hmac_source_stays_in_range_and_replays(key: bytes, message: bytes,
                                                bounds: list[int]) -> None:
    a, b = HmacSource(key, message), HmacSource(key, message)
    draws = [a.randbelow(n) for n in bounds]
    assert all(0 <= d < n for d, n in zip(draws, bounds, strict=True))
    assert draws == [b.randbelow(n) for n in bounds]


def test_hmac_source_randbelow_is_uniform() -> None:
    # 60,000 draws of randbelow(6) (rejection from 3 bits). Each count ~ Binomial(n, 1/6):
    # sd = sqrt(n·(1/6)·(5/6)) ≈ 91.3; allow 5 sd. Deterministic, so it cannot flake.
    source = HmacSource(b"\x01" * 32, b"uniformity")
    n = 60_000
    counts = np.bincount([source.randbelow(6) for _ in range(n)], minlength=6)
    sd = math.sqrt(n * (1 / 6) * (5 / 6))
    assert np.all(np.abs(counts - n / 6) < 5 * sd), counts


def test_permanent_values_follow_the_mechanisms_channel() -> None:
    # Across 4,000 device secrets, a binary RR permanent value equals the truth with
    # probability p* = e/(e+1) at ε = 1 (≈ 0.731): sd = sqrt(p(1-p)/n) ≈ 0.0070; allow 5 sd.
    mech = BinaryRR(1.0, question_id="q")
    n = 4000
    kept = sum(mech.perturb(True, source=HmacSource(i.to_bytes(32, "big"), b"q")) is True
               for i in range(n))
    p = float(mech.p_star)
    assert abs(kept / n - p) < 5 * math.sqrt(p * (1 - p) / n)


# --- memoization in a series ------------------------------------------------------------------


def test_same_answer_in_a_series_gives_the_identical_report_and_is_charged_once(
        server: FakeServer, tmp_path: Path) -> None:
    r = respondent(server, tmp_path)
    answers = {"smoker": True, "mood": "low", "drinks": 7}
    reports = []
    for version in (1, 2, 3):
        submission = r.answer(series_survey(version), answers)
        assert r.submit(submission).status == "sent"
        reports.append(submission.reports)
    assert reports[0] == reports[1] == reports[2]
    entries = r.ledger.entries()
    assert len(entries) == 9
    first = [e for e in entries if e["version"] == 1]
    assert [e["reused"] for e in first] == [False] * 3
    assert math.isclose(sum(e["epsilon"] for e in first), 3.5, rel_tol=1e-9)
    assert all(e["reused"] and e["epsilon"] == 0 for e in entries if e["version"] > 1)
    series = r.ledger.spend_by_series()["weekly"]
    assert series["mood"]["distinct_answers"] == 1 and series["mood"]["rounds"] == 3
    assert math.isclose(r.ledger.total_epsilon(), 3.5, rel_tol=1e-9)


def test_a_changed_answer_is_charged_again(server: FakeServer, tmp_path: Path) -> None:
    r = respondent(server, tmp_path)
    r.submit(r.answer(series_survey(1), {"smoker": True, "mood": "low"}))
    r.submit(r.answer(series_survey(2), {"smoker": True, "mood": "great"}))
    r.submit(r.answer(series_survey(3), {"smoker": True, "mood": "low"}))  # seen before: free
    by_version = {v: {e["question"]: e for e in r.ledger.entries() if e["version"] == v}
                  for v in (1, 2, 3)}
    assert by_version[2]["mood"]["epsilon"] == pytest.approx(1.5) and \
        not by_version[2]["mood"]["reused"]
    assert by_version[3]["mood"]["epsilon"] == 0 and by_version[3]["mood"]["reused"]
    assert by_version[2]["smoker"]["reused"]
    series = r.ledger.spend_by_series()["weekly"]
    assert series["mood"]["distinct_answers"] == 2
    assert series["mood"]["epsilon"] == pytest.approx(3.0)


def test_a_changed_epsilon_draws_a_new_permanent_value_and_is_charged(
        server: FakeServer, tmp_path: Path) -> None:
    r = respondent(server, tmp_path)
    r.submit(r.answer(series_survey(1), {"smoker": True, "mood": "low"}))
    r.submit(r.answer(series_survey(2, mood={"epsilon": 1.0}), {"smoker": True, "mood": "low"}))
    mood = [e for e in r.ledger.entries() if e["question"] == "mood"]
    assert [e["reused"] for e in mood] == [False, False]


def test_memo_differs_between_devices_and_questions(tmp_path: Path) -> None:
    # 40 devices answering True: if the permanent value ignored the secret they would all agree.
    mech = mechanism_for(series_survey(1).question("smoker"))
    values = {Memoizer(StateDir(tmp_path / f"d{i}")).permanent_value(mech, "weekly", "smoker",
                                                                    True)
              for i in range(40)}
    assert values == {True, False}  # P[all 40 equal] = p^40 + (1-p)^40 < 1e-5


def test_a_series_answer_kept_as_it_is_reads_the_secret_once_per_value_and_tag(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A mechanism that memoizes the answer itself (every one but one_bit_mean) draws nothing
    for it, so the device secret (a locked file read) is read once for the permanent value and
    once for the ledger's tag, not twice each (bench_client's series answer() took 1.13-1.19 ms
    against 1d941c0's 0.85)."""
    memo = Memoizer(StateDir(tmp_path))
    reads = []
    secret = Memoizer._secret
    monkeypatch.setattr(Memoizer, "_secret", lambda self: reads.append(1) or secret(self))
    mech = mechanism_for(series_survey(1).question("mood"))
    value = memo.permanent_value(mech, "weekly", "mood", "fine")
    tag = memo.answer_tag(mech, "weekly", "mood", "fine")
    assert len(reads) == 2
    assert memo.permanent_value(mech, "weekly", "mood", "fine") == value
    assert memo.answer_tag(mech, "weekly", "mood", "fine") == tag


def test_memo_secret_is_created_once_0600(tmp_path: Path) -> None:
    memo = Memoizer(StateDir(tmp_path))
    mech = mechanism_for(series_survey(1).question("mood"))
    first = memo.permanent_value(mech, "weekly", "mood", "fine")
    secret = tmp_path / "hazmat-device-secret"
    assert secret.stat().st_mode & 0o777 == 0o600
    assert len(secret.read_bytes()) == 32
    assert Memoizer(StateDir(tmp_path)).permanent_value(mech, "weekly", "mood", "fine") == first


def test_answering_the_same_version_twice_is_refused(server: FakeServer, tmp_path: Path) -> None:
    r = respondent(server, tmp_path)
    survey = series_survey(1)
    r.submit(r.answer(survey, {"smoker": False, "mood": "fine"}))
    with pytest.raises(AlreadyAnsweredError, match="already answered survey 'checkin' version 1"):
        r.answer(survey, {"smoker": False, "mood": "fine"})
    # Even a submission randomized before the first was sent is refused at submit time.
    r2 = respondent(server, tmp_path / "other")
    a = r2.answer(survey, {"smoker": False, "mood": "fine"})
    b = r2.answer(survey, {"smoker": False, "mood": "fine"})
    r2.submit(a)
    with pytest.raises(AlreadyAnsweredError):
        r2.submit(b)
    assert len(server.posts()) == 2


@pytest.mark.parametrize("answers, message", [
    ({"smoker": "yes", "mood": "fine"}, "'yes' is not one of the possible answers"),
    ({"smoker": True, "mood": "meh"}, "'meh' is not one of the possible answers"),
    ({"smoker": True, "mood": "fine", "drinks": 31}, "refused, not clamped"),
    ({"smoker": True, "mood": "fine", "drinks": 2.5}, "questions.drinks: 2.5 is not a whole"),
    ({"smoker": True}, "question 'mood' is required"),
    ({"smoker": True, "mood": "fine", "nope": 1}, "no question 'nope'"),
])
def test_invalid_answers_are_refused_not_clamped(server: FakeServer, tmp_path: Path,
                                                 answers: dict[str, Any], message: str) -> None:
    r = respondent(server, tmp_path)
    with pytest.raises(AnswerError, match=message):
        r.answer(series_survey(1), answers)


def test_optional_question_may_be_skipped(server: FakeServer, tmp_path: Path) -> None:
    r = respondent(server, tmp_path)
    submission = r.answer(Survey.from_dict(survey_dict()), {"smoker": True, "mood": "fine"})
    assert set(submission.reports) == {"smoker", "mood"}
    assert len(submission.charges) == 2


# --- the instantaneous layer ------------------------------------------------------------------


@pytest.mark.parametrize("k, eps_perm, eps_inst", [
    (2, 1.0, 1.0), (2, 2.0, 0.5), (3, 1.5, 3.0), (5, math.log(3), math.log(3)), (100, 4.0, 2.0),
])
def test_composite_channel_and_its_exact_epsilon(k: int, eps_perm: float,
                                                 eps_inst: float) -> None:
    labels = (False, True) if k == 2 else tuple(f"o{i}" for i in range(k))
    cls = BinaryRR if k == 2 else GRR
    permanent = cls(eps_perm, labels, question_id="q")
    mech = Longitudinal(permanent, eps_inst)
    p1, q1 = permanent.p_star, permanent.q_star
    p2, q2 = mech.instantaneous.p_star, mech.instantaneous.q_star
    assert mech.p_star == p1 * p2 + (k - 1) * q1 * q2
    assert mech.q_star == p1 * q2 + q1 * p2 + (k - 2) * q1 * q2
    assert mech.p_star + (k - 1) * mech.q_star == 1
    if k <= 5:
        assert mech.composed_channel() == mech.channel()
    # Closed form in floats: with a = e^ε1, b = e^ε2, ratio = (ab + k - 1)/(a + b + k - 2).
    a, b = math.exp(eps_perm), math.exp(eps_inst)
    expected = math.log((a * b + k - 1) / (a + b + k - 2))
    assert mech.realized_epsilon() == pytest.approx(expected, rel=1e-6)
    assert mech.realized_epsilon() < min(eps_perm, eps_inst)
    assert mech.longitudinal_epsilon == pytest.approx(eps_perm, rel=1e-6)
    assert Fraction(mech.params()["p"]) == mech.p_star


def test_two_layer_estimates_are_unbiased() -> None:
    # n = 200,000 simulated reports (seeded numpy: simulation only). The estimate's plug-in
    # std error is sqrt((f·V_in + (1-f)·V_out)/(n (p*-q*)^2)); allow 5 of them per option.
    survey = series_survey(1, instantaneous=1.0)
    mech = mechanism_for(survey.question("mood"))
    rng = np.random.default_rng(20261122)
    truth = np.array([0.1, 0.2, 0.4, 0.2, 0.1])
    n = 200_000
    answers = rng.choice(5, size=n, p=truth)
    estimate = mech.estimate(mech.aggregate_many(mech.perturb_many(answers, rng)))
    for row, f in zip(estimate.categories, truth, strict=True):
        assert abs(row.estimate - f) < 5 * row.std_error


def test_series_report_with_two_layers_keeps_its_permanent_value(server: FakeServer,
                                                                 tmp_path: Path) -> None:
    # The permanent value is fixed; each round re-randomizes it: over 2,000 rounds the report
    # equals it with the instantaneous layer's p2 = e/(e+1) at ε = 1 (binary), sd ≈ 0.0099.
    r = respondent(server, tmp_path)
    survey = series_survey(1, instantaneous=1.0)
    mech = mechanism_for(survey.question("smoker"))
    assert isinstance(mech, Longitudinal)
    permanent = r.memo.permanent_value(mech, "weekly", "smoker", True)
    n = 2000
    same = sum(r.answer(survey, {"smoker": True, "mood": "fine"}).reports["smoker"] == permanent
               for _ in range(n))
    p2 = float(mech.instantaneous.p_star)
    assert abs(same / n - p2) < 5 * math.sqrt(p2 * (1 - p2) / n)


def test_ledger_accounts_one_report_and_unboundedly_many(server: FakeServer,
                                                         tmp_path: Path) -> None:
    r = respondent(server, tmp_path)
    for version in (1, 2):
        r.submit(r.answer(series_survey(version, instantaneous=0.5),
                          {"smoker": True, "mood": "good"}))
    mech = mechanism_for(series_survey(1, instantaneous=0.5).question("mood"))
    mood = [e for e in r.ledger.entries() if e["question"] == "mood"]
    assert [e["report_epsilon"] for e in mood] == [mech.realized_epsilon()] * 2
    assert mood[0]["epsilon"] == pytest.approx(mech.longitudinal_epsilon)
    assert mood[1]["epsilon"] == 0 and mood[1]["reused"]


# --- the survey key -----------------------------------------------------------------------------


def test_instantaneous_epsilon_is_canonical_only_when_set() -> None:
    plain = Survey.from_dict(survey_dict(series="weekly"))
    assert all("instantaneous_epsilon" not in q for q in plain.to_dict()["questions"])
    layered = series_survey(1, instantaneous=0.75)
    q = layered.to_dict()["questions"][0]
    assert q["instantaneous_epsilon"] == 0.75
    assert set(q["params"]) == {"p", "q", "permanent", "instantaneous"}
    assert Survey.from_dict(layered.to_dict()) == layered


@pytest.mark.parametrize("change, message", [
    ({"series": None}, "only a longitudinal survey"),
    ({"q": {"instantaneous_epsilon": 0}}, "finite number > 0"),
    ({"q": {"instantaneous_epsilon": "1"}}, "must be a number"),
    ({"q": {"instantaneous_epsilon": 1.0, "mechanism": "geometric", "type": "integer",
            "min": 0, "max": 3}}, "needs a symmetric randomized response"),
])
def test_instantaneous_epsilon_validation(change: dict[str, Any], message: str) -> None:
    d = survey_dict(series="weekly")
    d["questions"][0]["instantaneous_epsilon"] = 1.0
    if "series" in change:
        d.pop("series")
    d["questions"][0].update(change.get("q", {}))
    with pytest.raises(SurveyError, match=message):
        Survey.from_dict(d)


def test_signed_two_layer_survey_verifies_on_the_device(tmp_path: Path) -> None:
    data = survey_dict(series="weekly")
    data["questions"][0]["instantaneous_epsilon"] = 0.5
    fake = FakeServer(lambda m, p, b: (200, signed(data, KEY)))
    try:
        r = Respondent(fake.url, state_dir=str(tmp_path), warn=lambda m: None)
        survey = r.fetch_survey("checkin").survey
        assert survey.question("smoker").instantaneous_epsilon == 0.5
    finally:
        fake.close()
