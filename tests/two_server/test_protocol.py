"""Leader and helper as two real processes on loopback, each with its own SQLite database.

Exactness: these surveys declare central ε = 400, so each server's noise (rate ≥ 400/12 per
coordinate) is nonzero with probability below 2·e^-33 ≈ 1e-14 per coordinate: the collected
sums equal the true totals except with that probability, and a hostile report that moved
an aggregate would show. (The noise's own variance is tested in test_noise.py.)
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import urllib.error
import uuid

import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.client.respondent import Respondent
from ldpsurvey.client.two_server import seal_upload
from ldpsurvey.shared.prio3 import prio3_histogram, prio3_sum
from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.two_server import encoding, vdaf
from support.clients import http_json
from support.two_server import signed_survey, start_pair, two_server_survey

EXACT = 400.0


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pair")
    started = start_pair(tmp)
    yield started
    started.stop()


def publish(pair, survey_id, min_batch=5, designer=None, epsilon=EXACT):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    data = two_server_survey(pair.helper.url, pair.helper_key, pair.leader_key,
                             survey_id=survey_id, min_batch=min_batch)
    for q in data["questions"]:
        q["central_epsilon"] = epsilon
    body = signed_survey(data, designer or Ed25519PrivateKey.generate())
    http_json("POST", pair.leader.url + "/api/surveys", body, pair.token)
    return Survey.from_dict(data), body


def api(pair, method, path, body=None):
    return http_json(method, pair.leader.url + path, body, pair.token)


def status_of(call):
    with pytest.raises(urllib.error.HTTPError) as exc:
        call()
    return exc.value.code, json.loads(exc.value.read())["error"]


def answer(pair, tmp_path, survey_id, answers, name):
    r = Respondent(pair.leader.url, state_dir=str(tmp_path / name), warn=lambda m: None,
                   max_epsilon=1e4)
    delivery = r.submit(r.answer(r.fetch_survey(survey_id), answers))
    assert delivery.status == "sent", delivery.message
    return r


def aggregate_and_collect(pair, survey_id):
    api(pair, "POST", f"/api/surveys/{survey_id}/two-server/aggregate", {})
    listing = api(pair, "GET", f"/api/surveys/{survey_id}/two-server/batches")
    return [api(pair, "POST", f"/api/surveys/{survey_id}/two-server/batches/{b['batch_id']}"
                              f"/collect", {}) for b in listing["batches"]]


ANSWERS = [{"smoker": True, "mood": "low", "hours": 7}, {"smoker": False, "mood": "high"},
           {"smoker": True, "mood": "high", "hours": 12}, {"smoker": False, "mood": "great",
                                                            "hours": 0},
           {"smoker": True, "mood": "mid", "hours": 3}]


def test_end_to_end_from_the_cli(pair, tmp_path):
    publish(pair, "e2e")
    for i, answers in enumerate(ANSWERS):
        path = tmp_path / f"a{i}.json"
        path.write_text(json.dumps(answers))
        result = CliRunner().invoke(cli, ["respond", "--server", pair.leader.url, "--survey",
                                          "e2e", "--answers", str(path), "--state",
                                          str(tmp_path / f"s{i}"), "--max-epsilon", "10000",
                                          "--yes"])
        assert result.exit_code == 0, result.output
    ledger = json.loads((tmp_path / "s0" / "ledger.json").read_text())["entries"]
    assert {e["local_epsilon"] for e in ledger} == {"none"}
    assert {e["central_epsilon"] for e in ledger} == {EXACT}
    [batch] = aggregate_and_collect(pair, "e2e")
    e = batch["entries"]
    assert e["smoker"]["noisy_sums"] == [3] and e["smoker"]["n"] == 5
    assert e["mood"]["noisy_sums"] == [1, 1, 2, 1]
    assert e["hours"]["noisy_sums"] == [22] and e["hours"]["n"] == 4
    assert e["crosstab:smoker:mood"]["noisy_sums"] == [0, 0, 1, 1, 1, 1, 1, 0]
    estimates = batch["estimates"]
    mood = next(q for q in estimates["questions"] if q["question"] == "mood")
    assert mood["categories"][2]["estimate"] == pytest.approx(0.4)
    # the one estimator over the whole batch: crosstabs and guarantees come back too
    [crosstab] = estimates["crosstabs"]
    assert (crosstab["rows"], crosstab["cols"]) == ("smoker", "mood")
    assert len(crosstab["cells"]) == 8 and crosstab["n"] == 5
    assert estimates["guarantees"]["statements"]
    # collected once: asking again serves the same release, never fresh noise
    again = api(pair, "POST", f"/api/surveys/e2e/two-server/batches/{batch['batch_id']}/collect",
                {})
    assert again["entries"] == batch["entries"]


def hostile_upload(survey, key, bad_encoded, ctx_survey=None):
    """An upload whose `key` carries a measurement the circuit must refuse."""
    report_id = os.urandom(16)
    encodings = encoding.encodings(survey)
    honest = {"smoker": 1, "mood": 0, "crosstab:smoker:mood": 4}
    shards = {k: vdaf.shard(encodings[k], encoding.ctx(survey, k), m, report_id)
              for k, m in honest.items() if k != key}
    if bad_encoded is not None:
        inst = vdaf.instance(encodings[key])
        public, shares = inst.shard_encoded(encoding.ctx(survey, key), bad_encoded, report_id,
                                            os.urandom(inst.RAND_SIZE))
        shards[key] = vdaf.Shards(inst.encode_public_share(public),
                                  (inst.encode_input_share(0, shares[0]),
                                   inst.encode_input_share(1, shares[1])))
    else:  # a valid share made for another survey
        other = ctx_survey
        shards[key] = vdaf.shard(encodings[key], encoding.ctx(other, key), 2, report_id)
    return seal_upload(survey, report_id, shards)


def test_invalid_shares_are_rejected_and_move_no_aggregate(pair, tmp_path):
    survey, _ = publish(pair, "hostile")
    other = Survey.from_dict({**two_server_survey(pair.helper.url, pair.helper_key,
                                                  pair.leader_key, survey_id="other")})
    for i, answers in enumerate(ANSWERS):
        answer(pair, tmp_path, "hostile", answers, f"h{i}")
    not_one_hot = [1, 1, 0, 0]  # a Histogram "vote" for two options
    assert prio3_histogram(4, 2).flp.valid.MEAS_LEN == 4
    bits = prio3_sum(12).flp.valid.MEAS_LEN
    # Draft-20's Sum weights its last bit so all-ones is exactly max_measurement: the only
    # way above it is a "bit" that is not 0/1; here 13 in the units bit claims 13 > 12.
    out_of_range = [13] + [0] * (bits - 1)
    uploads = [hostile_upload(survey, "mood", not_one_hot),
               hostile_upload(survey, "mood", [5, 0, 0, 0]),
               hostile_upload(survey, "mood", None, ctx_survey=other)]
    inst = vdaf.instance(encoding.encodings(survey)["hours"])
    rid = os.urandom(16)
    public, shares = inst.shard_encoded(encoding.ctx(survey, "hours"), out_of_range, rid,
                                        os.urandom(inst.RAND_SIZE))
    honest = {k: vdaf.shard(encoding.encodings(survey)[k], encoding.ctx(survey, k), m, rid)
              for k, m in {"smoker": 0, "mood": 1, "crosstab:smoker:mood": 1}.items()}
    honest["hours"] = vdaf.Shards(inst.encode_public_share(public),
                                  (inst.encode_input_share(0, shares[0]),
                                   inst.encode_input_share(1, shares[1])))
    uploads.append(seal_upload(survey, rid, honest))
    for body in uploads:
        assert api(pair, "POST", "/api/surveys/hostile/two-server/uploads", body)["duplicate"] \
            is False
    # a replayed upload is a duplicate, never a second report
    assert api(pair, "POST", "/api/surveys/hostile/two-server/uploads", uploads[0])["duplicate"]
    [batch] = aggregate_and_collect(pair, "hostile")
    e = batch["entries"]
    assert e["mood"]["rejected"] == 3 and e["mood"]["n"] == 6
    assert e["mood"]["noisy_sums"] == [1, 2, 2, 1]   # the honest 5 plus the sum attacker's vote
    assert e["hours"]["rejected"] == 1 and e["hours"]["n"] == 4
    assert e["hours"]["noisy_sums"] == [22]
    assert e["smoker"]["n"] == 9 and e["smoker"]["rejected"] == 0


def test_uploads_for_another_survey_or_key_are_refused(pair, tmp_path):
    _survey, _ = publish(pair, "refuse")
    _other, _ = publish(pair, "refuse-other")
    r = Respondent(pair.leader.url, state_dir=str(tmp_path / "x"), warn=lambda m: None,
                   max_epsilon=1e4)
    body = r.answer(r.fetch_survey("refuse-other"), ANSWERS[0]).wire()
    code, error = status_of(lambda: api(pair, "POST", "/api/surveys/refuse/two-server/uploads",
                                        body))
    assert code == 422 and error["code"] == "hpke_open_failed"
    code, error = status_of(lambda: api(pair, "POST", "/api/surveys/refuse/two-server/uploads",
                                        {**body, "submission_id": "nope"}))
    assert code == 422 and "UUID" in error["message"]
    assert api(pair, "GET", "/api/surveys/refuse/two-server/batches")["waiting_uploads"] == 0


def _helper_job(pair, survey_id, batch_id, reports, body_manifest):
    db = sqlite3.connect(pair.leader.db_path)
    [(vk,)] = db.execute("SELECT verify_key FROM ts_keys WHERE survey_id = ?", (survey_id,))
    db.close()
    return http_json("POST", f"{pair.helper.url}/helper/surveys/{survey_id}/versions/1/jobs/"
                             f"{batch_id}", {"manifest": body_manifest, "verify_key": vk,
                                             "reports": reports}, pair.helper_token)


def test_the_helper_refuses_a_lying_leader(pair, tmp_path):
    _survey, manifest = publish(pair, "lies")
    for i, answers in enumerate(ANSWERS):
        answer(pair, tmp_path, "lies", answers, f"l{i}")
    [batch] = aggregate_and_collect(pair, "lies")
    db = sqlite3.connect(pair.leader.db_path)
    bodies = [json.loads(b) for (b,) in db.execute(
        "SELECT body FROM ts_uploads WHERE survey_id = 'lies' ORDER BY report_id")]
    db.close()
    reports = [{"submission_id": b["submission_id"], "public_shares": b["public_shares"],
                "helper_share": b["helper_share"], "leader_prep_shares": {}} for b in bodies]
    # replaying the batch's reports under a new batch id (to difference two batches)
    code, error = status_of(lambda: _helper_job(pair, "lies", str(uuid.uuid4()), reports,
                                                manifest))
    assert (code, error["code"]) == (409, "report_replayed")
    # a batch below the minimum
    code, error = status_of(lambda: _helper_job(pair, "lies", str(uuid.uuid4()), reports[:4],
                                                manifest))
    assert (code, error["code"]) == (422, "batch_too_small")
    # the same batch id with other content
    code, error = status_of(lambda: _helper_job(pair, "lies", batch["batch_id"], reports[:5][::-1],
                                                manifest))
    assert code == 409
    # a second collection of a collected batch
    collect = (f"{pair.helper.url}/helper/surveys/lies/versions/1/batches/"
               f"{batch['batch_id']}/collect")
    code, error = status_of(lambda: http_json("POST", collect, {"collection_id": "someone-else"},
                                              pair.helper_token))
    assert (code, error["code"]) == (409, "batch_already_collected")
    # anyone else: refused before the helper looks at the batch
    code, error = status_of(lambda: http_json("POST", collect, {"collection_id": "x"}))
    assert (code, error["code"]) == (401, "authentication_required")
    code, error = status_of(lambda: http_json("POST", collect, {"collection_id": "x"},
                                              "ldph_" + "A" * 43))
    assert (code, error["code"]) == (403, "forbidden")
    # another manifest than the one provisioned (e.g. smaller central ε, re-signed)
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    data = two_server_survey(pair.helper.url, pair.helper_key, pair.leader_key,
                             survey_id="lies", min_batch=5)
    for q in data["questions"]:
        q["central_epsilon"] = 5000.0
    forged = signed_survey(data, Ed25519PrivateKey.generate())
    code, error = status_of(lambda: _helper_job(pair, "lies", str(uuid.uuid4()), reports,
                                                forged))
    assert (code, error["code"]) == (409, "task_mismatch")


def test_below_min_batch_nothing_is_aggregated(pair, tmp_path):
    publish(pair, "small", min_batch=10)
    for i, answers in enumerate(ANSWERS):
        answer(pair, tmp_path, "small", answers, f"s{i}")
    summary = api(pair, "POST", "/api/surveys/small/two-server/aggregate", {})
    assert summary["batches_formed"] == 0
    assert api(pair, "GET", "/api/surveys/small/two-server/batches")["waiting_uploads"] == 5


def test_ldp_endpoints_refuse_a_two_server_survey(pair, tmp_path):
    publish(pair, "modes")
    code, error = status_of(lambda: api(pair, "POST", "/api/surveys/modes/submissions",
                                        {"submission_id": str(uuid.uuid4()), "version": 1,
                                         "answers": {"smoker": True}}))
    assert code == 409 and "two-server" in error["message"]
    code, _ = status_of(lambda: api(pair, "GET", "/api/surveys/modes/estimates"))
    assert code == 409


@pytest.mark.slow
def test_helper_killed_mid_aggregation_counts_every_upload_once(tmp_path):
    """Whenever the kill lands (before, during or after the helper's commit), every
    acknowledged upload ends up aggregated exactly once after a restart."""
    pair = start_pair(tmp_path)
    try:
        publish(pair, "crash", min_batch=20)
        sent = 0
        for i in range(60):
            answer(pair, tmp_path, "crash", ANSWERS[i % 5], f"c{i}")
            sent += 1
        worker = threading.Thread(target=_swallow, args=(
            api, pair, "POST", "/api/surveys/crash/two-server/aggregate", {}))
        worker.start()
        pair.helper.kill()
        worker.join()
        # helper down: uploads are still accepted and acknowledged
        for i in range(60, 80):
            answer(pair, tmp_path, "crash", ANSWERS[i % 5], f"c{i}")
            sent += 1
        code, error = status_of(lambda: api(pair, "POST",
                                            "/api/surveys/crash/two-server/aggregate", {}))
        assert (code, error["code"]) == (503, "helper_unavailable")
        pair.helper.start()
        api(pair, "POST", "/api/surveys/crash/two-server/aggregate", {})
        batches = aggregate_and_collect(pair, "crash")
        assert sum(b["entries"]["smoker"]["n"] for b in batches) == sent
        helper_db = sqlite3.connect(pair.helper.db)
        [(distinct, total)] = helper_db.execute(
            "SELECT COUNT(DISTINCT report_id), COUNT(*) FROM hs_reports")
        assert distinct == total == sent
        truth = sum(1 for i in range(sent) if ANSWERS[i % 5]["smoker"])
        assert sum(b["entries"]["smoker"]["noisy_sums"][0] for b in batches) == truth
    finally:
        pair.stop()


def _swallow(fn, *args):
    with contextlib.suppress(urllib.error.HTTPError, urllib.error.URLError):
        fn(*args)


def test_an_upload_waits_in_the_outbox_and_is_resent_unchanged(pair, tmp_path):
    """Leader down at submit: the sealed upload stays pending; `flush` later sends the same
    bytes to the same path (never resharded), and the leader counts it once."""
    from ldpsurvey.client.respondent import flush_outbox
    from ldpsurvey.client.transport import RetryPolicy

    publish(pair, "outbox")
    r = Respondent(pair.leader.url, state_dir=str(tmp_path / "o"), warn=lambda m: None,
                   max_epsilon=1e4, retry=RetryPolicy(attempts=1), sleep=lambda s: None)
    submission = r.answer(r.fetch_survey("outbox"), ANSWERS[0])
    pair.leader.stop()
    try:
        assert r.submit(submission).status == "pending"
    finally:
        pair.leader.start()
    [pending] = r.outbox.pending()
    assert pending["body"] == submission.wire() and pending["path"] == "two-server/uploads"
    [delivery] = flush_outbox(str(tmp_path / "o"), retry=RetryPolicy(attempts=1))
    assert delivery.status == "sent"
    assert flush_outbox(str(tmp_path / "o")) == []
    [receipt] = r.outbox.all_receipts()
    assert receipt["body"] == submission.wire()
    listing = api(pair, "GET", "/api/surveys/outbox/two-server/batches")
    assert listing["waiting_uploads"] == 1


def test_the_leader_aggregates_by_itself_with_aggregate_every(tmp_path):
    """`serve --aggregate-every`: batches are formed and aggregated without the analyst."""
    import time

    own = start_pair(tmp_path, leader_args=("--aggregate-every", "0.2"))
    try:
        publish(own, "auto")
        for i, answers in enumerate(ANSWERS):
            answer(own, tmp_path, "auto", answers, f"a{i}")
        deadline = time.monotonic() + 60
        states: list[str] = []
        while time.monotonic() < deadline:
            states = [b["state"] for b in api(own, "GET",
                                              "/api/surveys/auto/two-server/batches")["batches"]]
            if states == ["aggregated"]:
                break
            time.sleep(0.1)  # polling interval, bounded by the deadline
        assert states == ["aggregated"]
    finally:
        own.stop()


def test_a_crosstab_cell_without_its_questions_is_refused(pair, tmp_path):
    publish(pair, "cells")
    r = Respondent(pair.leader.url, state_dir=str(tmp_path / "c"), warn=lambda m: None,
                   max_epsilon=1e4)
    body = r.answer(r.fetch_survey("cells"), ANSWERS[0]).wire()
    body["public_shares"].pop("crosstab:smoker:mood")
    code, error = status_of(lambda: api(pair, "POST", "/api/surveys/cells/two-server/uploads",
                                        body))
    assert code == 422 and "crosstab:smoker:mood" in error["message"]
