"""A decimal follow-up on a randomized answer, end to end through the command line (issue 41):
"Do you gamble? If yes: how much did you lose?". The device sends asked_grid's pair for every
respondent (shared/mechanisms/asked_grid.py), asked or not; `plan`, `simulate` and `report`
show the share not asked and the mean among those asked, in dollars."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.analyst.cli import cli
from ldpsurvey.analyst.reports.model import Report, render
from ldpsurvey.shared.errors import SurveyError
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.skip_logic import NOT_ASKED
from ldpsurvey.shared.survey import Survey
from support.clients import FakeServer, signed

DATA: dict[str, Any] = {"id": "gamble", "title": "Gambling", "version": 1, "questions": [
    {"id": "gambles", "type": "binary", "text": "Do you gamble?", "epsilon": 1.0},
    {"id": "lost", "type": "decimal", "text": "If yes: how much did you lose last month?",
     "relevant": "gambles == true", "min": 0, "max": 500, "resolution": 5, "epsilon": 2.0}]}
SURVEY = Survey.from_dict(DATA)
LOST = SURVEY.question("lost")


def test_the_follow_up_has_a_not_asked_value_and_states_its_split() -> None:
    assert LOST.not_asked and LOST.mechanism == "asked_grid"
    mechanism = mechanism_for(LOST)
    assert LOST.params == mechanism.params()
    assert LOST.params["mean"] in ("duchi", "piecewise", "hybrid")
    assert "split" in LOST.mechanism_choice
    assert mechanism.realized_epsilon() <= 2.0
    again = Survey.from_dict(SURVEY.to_dict())  # the canonical survey re-reads to the same bytes
    assert again.to_dict() == SURVEY.to_dict()


def test_a_nudged_share_in_params_is_refused_naming_the_field() -> None:
    data = SURVEY.to_dict()
    lost = next(q for q in data["questions"] if q["id"] == "lost")
    lost["params"] = {**lost["params"], "p": "99/100"}
    with pytest.raises(SurveyError) as info:
        Survey.from_dict(data)
    assert info.value.field == "questions.lost.params"


def test_a_distribution_is_refused_for_a_hidden_follow_up() -> None:
    raw = json.loads(json.dumps(DATA))
    raw["questions"][1]["estimate"] = ["mean", "distribution"]
    with pytest.raises(SurveyError) as info:
        Survey.from_dict(raw)
    assert info.value.field == "questions.lost.estimate"


def test_respond_sends_a_pair_whether_asked_or_not(tmp_path: Path) -> None:
    manifest = signed(SURVEY.to_dict(), Ed25519PrivateKey.generate())
    sent: list[Any] = []

    def handler(method: str, path: str, body: Any) -> tuple[int, Any]:
        if method == "GET":
            return 200, manifest
        sent.append(body)
        return 201, {"accepted": [body["submission_id"]], "duplicates": []}

    fake = FakeServer(handler)
    try:
        for i, answers in enumerate(({"gambles": True, "lost": 123.4}, {"gambles": False})):
            path = tmp_path / f"answers{i}.json"
            path.write_text(json.dumps(answers))
            result = CliRunner().invoke(cli, ["respond", "--server", fake.url, "--survey",
                                              "gamble", "--answers", str(path), "--state",
                                              str(tmp_path / f"state{i}"), "--yes"])
            assert result.exit_code == 0, result.output
    finally:
        fake.close()
    mechanism = mechanism_for(LOST)
    for body in sent:
        report = body["answers"]["lost"]
        assert mechanism.validate_report(report) == report  # [asked bit, cell] from both
    assert "123.4" not in json.dumps(sent)


def test_simulate_and_plan_show_the_not_asked_share_and_the_mean_among_those_asked(
        tmp_path: Path) -> None:
    path = tmp_path / "gamble.json"
    path.write_text(json.dumps(DATA))
    out = CliRunner().invoke(cli, ["simulate", str(path), "--n", "4000", "--seed", "3"])
    assert out.exit_code == 0, out.output
    assert "(not asked)" in out.output and "mean among those asked: truth" in out.output
    plan = CliRunner().invoke(cli, ["plan", str(path), "--margin", "0.05",
                                    "--mean-margin", "10"])
    assert plan.exit_code == 0, plan.output
    assert "asked_grid" in plan.output


def test_every_report_format_shows_not_asked_and_the_mean_among_those_asked() -> None:
    rng = np.random.default_rng(0)
    questions = []
    for q in SURVEY.questions:
        m = mechanism_for(q)
        truth = rng.integers(0, q.k + (1 if q.not_asked else 0), size=3000)
        questions.append(m.estimate(m.aggregate_many(m.perturb_many(truth, rng))).to_dict())
    report = Report(SURVEY.to_dict(), {"survey": "gamble", "version": 1, "confidence": 0.95,
                                       "n_submissions": 3000, "questions": questions})
    table = render(report, "table")
    assert "among those asked:" in table and "(not asked)" in table
    rows = list(csv.DictReader(io.StringIO(render(report, "csv"))))
    assert ("lost", "asked_mean") in {(r["question"], r["kind"]) for r in rows}
    lost = next(q for q in json.loads(render(report, "json"))["questions"]
                if q["question"] == "lost")
    assert lost["not_asked"]["value"] == NOT_ASKED
    mean = lost["among_asked"]["mean"]
    assert 0 <= mean["ci_low"] < mean["estimate"] < mean["ci_high"] <= 500 + 200
    assert "<h3>Among those asked</h3>" in render(report, "html")
