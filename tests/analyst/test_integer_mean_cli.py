"""A wide integer question (0..10000) asked with duchi, end to end through the command line
(issue 41): `respond` sends a report cell, never the answer; the server ingests the reports and
`report` gives the mean in the answer's units within its exact worst-case band; `plan` lists
the survey's duchi next to auto's geometric; `simulate` runs it through the unit."""

from __future__ import annotations

import json
import math
import uuid
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from flask.testing import FlaskClient
from ldpsurvey.analyst.cli import cli
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.mechanisms.duchi import Duchi
from ldpsurvey.shared.survey import Survey
from support.clients import FakeServer, signed
from support.server_data import manifest

DATA: dict[str, Any] = {"id": "spend", "title": "Spending", "version": 1, "questions": [
    {"id": "amount", "type": "integer", "text": "Spent last month, in dollars?", "min": 0,
     "max": 10000, "epsilon": 1.0, "mechanism": "duchi"}]}
SURVEY = Survey.from_dict(DATA)
AMOUNT = SURVEY.question("amount")
# |estimate - truth| beyond 4.42 worst-case standard errors: a false alarm below 1e-5
# (normal approximation of a mean of 2,000 independent bounded reports).
Z = 4.42
N = 2000


def test_respond_sends_a_report_cell_not_the_answer(tmp_path: Path) -> None:
    body = signed(SURVEY.to_dict(), Ed25519PrivateKey.generate())
    sent: list[Any] = []

    def handler(method: str, path: str, posted: Any) -> tuple[int, Any]:
        if method == "GET":
            return 200, body
        sent.append(posted)
        return 201, {"accepted": [posted["submission_id"]], "duplicates": []}

    fake = FakeServer(handler)
    try:
        answers = tmp_path / "answers.json"
        answers.write_text(json.dumps({"amount": 1234}))
        result = CliRunner().invoke(cli, ["respond", "--server", fake.url, "--survey", "spend",
                                          "--answers", str(answers), "--state",
                                          str(tmp_path / "state"), "--yes"])
        assert result.exit_code == 0, result.output
    finally:
        fake.close()
    report = sent[0]["answers"]["amount"]
    assert report in (0, 1)  # duchi's two cells
    assert "1234" not in json.dumps(sent)


def test_the_server_and_report_give_the_mean_in_dollars(client: FlaskClient,
                                                       auth: dict[str, str],
                                                       db_path: Any, backend: str) -> None:
    assert client.post("/api/surveys", json=manifest(DATA), headers=auth).status_code == 201
    mechanism = mechanism_for(AMOUNT)
    answers = [8000 + i % 2001 for i in range(N)]  # mean 9000: far from the range's middle
    for start in range(0, N, 100):  # a batch holds at most 100 submissions
        batch = {"submissions": [{"submission_id": str(uuid.uuid4()),
                                  "answers": {"amount": mechanism.perturb(answers[i])}}
                                 for i in range(start, start + 100)]}
        response = client.post("/api/surveys/spend/submissions", json=batch)
        assert response.status_code == 200, response.get_json()
    bound = math.sqrt(Duchi.worst_case_variance(10001, 1.0) / N)
    truth = sum(answers) / N
    if backend != "sqlite":
        return  # `report --db` reads a SQLite file
    result = CliRunner().invoke(cli, ["report", "--db", str(db_path), "--survey", "spend",
                                      "--format", "json"])
    assert result.exit_code == 0, result.output
    mean = json.loads(result.output)["questions"][0]["mean"]
    assert abs(mean["estimate"] - truth) <= Z * bound
    assert mean["variance_bound"] == mean["variance_bound"]  # a number, not NaN
    assert math.isclose(math.sqrt(mean["variance_bound"]), bound, rel_tol=1e-6)
    assert mean["ci_low"] < mean["estimate"] < mean["ci_high"]


def test_plan_lists_the_surveys_duchi_beside_autos_geometric(tmp_path: Path) -> None:
    path = tmp_path / "spend.json"
    path.write_text(json.dumps(DATA))
    result = CliRunner().invoke(cli, ["plan", str(path), "--margin", "100"])
    assert result.exit_code == 0, result.output
    rows = {line.split()[0]: line for line in result.output.splitlines()
            if line.split() and line.split()[0] in ("duchi", "geometric")}
    assert rows["duchi"].rstrip().endswith("this survey")
    assert rows["geometric"].rstrip().endswith("auto")
    # duchi's exact worst case at k = 10001, ε = 1, in dollars²
    assert f"{Duchi.worst_case_variance(10001, 1.0):,.0f}" in rows["duchi"]


def test_simulate_runs_duchi_through_the_unit(tmp_path: Path) -> None:
    path = tmp_path / "spend.json"
    path.write_text(json.dumps(DATA))
    result = CliRunner().invoke(cli, ["simulate", str(path), "--n", "20000", "--seed", "1"])
    assert result.exit_code == 0, result.output
    assert "mechanism duchi, ε = 1" in result.output
    line = next(x for x in result.output.splitlines() if x.strip().startswith("mean:"))
    truth, estimate = (float(line.split(word)[1].split()[0].rstrip(","))
                       for word in ("truth", "estimate"))
    assert abs(estimate - truth) <= Z * math.sqrt(Duchi.worst_case_variance(10001, 1.0) / 20000)
