"""`ldpsurvey report --batch`: a real leader and helper (two processes, own SQLite each),
respondents answering through the client, then the report of the collected batch in every
format with the guarantees and the estimator's numbers."""

from __future__ import annotations

import csv
import io
import json

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.analyst.cli import cli
from ldpsurvey.client.respondent import Respondent
from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.two_server.plans import question_noise_plan
from support.clients import http_json
from support.two_server import signed_survey, start_pair, two_server_survey

ANSWERS = [{"smoker": True, "mood": "low", "hours": 7}, {"smoker": False, "mood": "high"},
           {"smoker": True, "mood": "high", "hours": 12}, {"smoker": False, "mood": "great",
                                                            "hours": 0},
           {"smoker": True, "mood": "mid", "hours": 3}, {"smoker": False, "mood": "low",
                                                         "hours": 8}]


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("report-pair")
    pair = start_pair(tmp)
    try:
        data = two_server_survey(pair.helper.url, pair.helper_key, pair.leader_key,
                                 survey_id="rep", min_batch=5, local=True)
        body = signed_survey(data, Ed25519PrivateKey.generate())
        http_json("POST", pair.leader.url + "/api/surveys", body, pair.token)
        for i, answers in enumerate(ANSWERS):
            r = Respondent(pair.leader.url, state_dir=str(tmp / f"r{i}"), warn=lambda m: None,
                           max_epsilon=100)
            delivery = r.submit(r.answer(r.fetch_survey("rep"), answers))
            assert delivery.status == "sent", delivery.message
        http_json("POST", pair.leader.url + "/api/surveys/rep/two-server/aggregate", {},
                  pair.token)
        listing = http_json("GET", pair.leader.url + "/api/surveys/rep/two-server/batches",
                            None, pair.token)
        [batch] = listing["batches"]
        yield pair, Survey.from_dict(data), batch["batch_id"]
    finally:
        pair.stop()


def _report(pair, batch_id: str, fmt: str) -> str:
    result = CliRunner().invoke(cli, ["report", "--server", pair.leader.url, "--token",
                                      pair.token, "--survey", "rep", "--batch", batch_id,
                                      "--format", fmt])
    assert result.exit_code == 0, result.output
    return result.output


def test_report_of_a_collected_batch_in_every_format(collected) -> None:
    pair, survey, batch_id = collected
    doc = json.loads(_report(pair, batch_id, "json"))
    assert doc["collection"] == "two-server" and doc["batch"] == batch_id
    assert doc["n_submissions"] == 6 and doc["rejected"] == 0
    mood = next(q for q in doc["questions"] if q["question"] == "mood")
    assert mood["local_epsilon"] == 2.0 and mood["mechanism"].startswith("two-server+")
    # The noise each server added is the plan the estimator reads back.
    assert mood["noise"]["rate"] == str(question_noise_plan(survey.question("mood")).rate)
    assert len(doc["crosstabs"][0]["cells"]) == 8
    statements = doc["guarantees"]["statements"]
    assert "central epsilon 4" in statements[0]  # 3 questions + 1 crosstab at ε = 1
    assert "your answers to hours are exposed" in statements[1]
    table = " ".join(_report(pair, batch_id, "table").split())
    assert "Against the leader, the helper or the analyst alone" in table
    assert "0 reports rejected" in table and "smoker x mood" in table
    rows = list(csv.DictReader(io.StringIO(_report(pair, batch_id, "csv"))))
    low = next(r for r in rows if r["question"] == "mood" and r["option"] == "low")
    assert float(low["estimate"]) == mood["categories"][0]["estimate"]
    assert "Privacy guarantees" in _report(pair, batch_id, "md")
    assert "rejected reports" in _report(pair, batch_id, "html")
    # Reporting again serves the same collected totals: the same numbers.
    assert json.loads(_report(pair, batch_id, "json")) == doc


def test_report_refusals(collected) -> None:
    pair, _, batch_id = collected
    runner = CliRunner()
    out = runner.invoke(cli, ["report", "--server", pair.leader.url, "--token", pair.token,
                              "--survey", "rep", "--batch", "no-such-batch"])
    assert out.exit_code != 0 and "Traceback" not in out.output
    out = runner.invoke(cli, ["report", "--db", "x.db", "--survey", "rep", "--batch", batch_id])
    assert out.exit_code == 2 and "--server" in out.output
