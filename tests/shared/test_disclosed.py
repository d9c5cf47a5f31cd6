"""Disclosed questions: parsed without mechanism or ε, sent as given, counted exactly by the
server, listed apart from ε in the ledger, refusable with `respond --refuse-disclosed`."""

from __future__ import annotations

import json
import math
import uuid
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.client.cli import prompt_answers
from ldpsurvey.client.errors import PolicyError
from ldpsurvey.client.respondent import Respondent
from ldpsurvey.client.trust import check_no_disclosed
from ldpsurvey.shared.errors import ReportError, SurveyError
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Survey
from support.clients import FakeServer
from support.server_data import manifest


def disclosed_survey(survey_id: str = "health") -> dict[str, Any]:
    return {"id": survey_id, "title": "With covariates", "version": 1, "questions": [
        {"id": "sex", "text": "Sex?", "type": "categorical", "options": ["f", "m", "x"],
         "disclosed": True},
        {"id": "kids", "text": "Children?", "type": "integer", "min": 0, "max": 12,
         "disclosed": True, "optional": True},
        {"id": "adult", "text": "Over 18?", "type": "binary", "disclosed": True},
        {"id": "smoker", "text": "Do you smoke?", "type": "binary", "epsilon": 1.0,
         "mechanism": "binary_rr"},
    ], "crosstabs": [["sex", "smoker"]]}


def test_disclosed_question_has_no_mechanism_and_no_epsilon() -> None:
    survey = Survey.from_dict(disclosed_survey())
    sex = survey.question("sex")
    assert sex.disclosed and sex.mechanism == "disclosed"
    assert survey.total_epsilon == 1.0  # disclosed questions spend no ε
    assert survey.to_dict()["questions"][0] == {
        "id": "sex", "text": "Sex?", "type": "categorical", "optional": False,
        "disclosed": True, "options": ["f", "m", "x"], "groups": {}}
    assert Survey.from_dict(survey.to_dict()).sha256 == survey.sha256
    mech = mechanism_for(sex)
    assert mech.privacy_loss() is None and math.isinf(mech.realized_epsilon())
    assert mech.deniability() == "sent as you answer it, not randomized"


@pytest.mark.parametrize(("extra", "field"), [
    ({"epsilon": 1.0}, "epsilon"), ({"mechanism": "grr"}, "mechanism"),
    ({"params": {}}, "params"), ({"disclosed": "yes"}, "disclosed")])
def test_disclosed_question_refuses_randomization_keys(extra: dict, field: str) -> None:
    data = disclosed_survey()
    data["questions"][0].update(extra)
    with pytest.raises(SurveyError) as info:
        Survey.from_dict(data)
    assert info.value.field == f"questions.sex.{field}"


def test_sent_as_given_and_validated_exactly() -> None:
    survey = Survey.from_dict(disclosed_survey())
    sex, kids, adult = (mechanism_for(survey.question(q)) for q in ("sex", "kids", "adult"))
    assert [sex.perturb("m") for _ in range(20)] == [1] * 20
    assert kids.perturb(7) == 7 and adult.perturb(True) is True
    for mech, bad in ((sex, 3), (sex, True), (kids, 13), (kids, "7"), (adult, 1)):
        with pytest.raises(ReportError):
            mech.validate_report(bad)


def test_ledger_lists_disclosed_answers_apart_from_epsilon(tmp_path: Path) -> None:
    fake = FakeServer(lambda method, path, body: (201, {"accepted": [body["submission_id"]],
                                                        "duplicates": []}))
    try:
        state = tmp_path / "state"
        r = Respondent(fake.url, state_dir=str(state))
        survey = Survey.from_dict(disclosed_survey())
        sub = r.answer(survey, {"sex": "x", "kids": 2, "adult": True, "smoker": False})
        assert {k: sub.wire()["answers"][k] for k in ("sex", "kids", "adult")} == {
            "sex": 2, "kids": 2, "adult": True}
        r.submit(sub)
    finally:
        fake.close()
    data = json.loads(CliRunner().invoke(cli, ["receipts", "--state", str(state),
                                               "--json"]).output)
    assert data["total_epsilon"] == pytest.approx(1.0)
    assert [spend["questions"] for spend in data["epsilon_by_survey"]] == [1]
    assert sorted(d["question"] for d in data["disclosed"]) == ["adult", "kids", "sex"]
    text = CliRunner().invoke(cli, ["receipts", "--state", str(state)]).output
    assert "Disclosed answers (sent as you answered them, not randomized; no ε)" in text
    # the header must not claim that no true answer left the device
    assert "your true answers to randomized questions never left this device" in text
    assert "your true answers never left this device" not in text


def test_refuse_disclosed_policy() -> None:
    with pytest.raises(PolicyError, match="'sex', 'kids', 'adult' are disclosed"):
        check_no_disclosed(Survey.from_dict(disclosed_survey()))
    data = disclosed_survey()
    data["questions"] = data["questions"][3:]
    data.pop("crosstabs")
    check_no_disclosed(Survey.from_dict(data))


def test_cli_says_disclosed_next_to_the_question(monkeypatch: Any) -> None:
    survey = Survey.from_dict(disclosed_survey())
    lines: list[str] = []
    monkeypatch.setattr("click.echo", lambda message="", **kw: lines.append(str(message)))
    monkeypatch.setattr("click.secho", lambda message="", **kw: lines.append(str(message)))
    replies = iter(["2", "", "yes", "no"])
    monkeypatch.setattr("click.prompt", lambda *a, **kw: next(replies))
    assert prompt_answers(survey) == {"sex": "m", "adult": True, "smoker": False}
    text = "\n".join(lines)
    assert text.count("Disclosed: sent as you answer it, not randomized. It costs no ε, but it "
                      "can help identify you.") == 3
    assert ("at most 2.8 times more sure of this answer than before, for example from 50% to at "
            "most 74% sure (ε = 1).") in text


def test_server_counts_disclosed_answers_exactly(client, auth) -> None:
    assert client.post("/api/surveys", json=manifest(disclosed_survey()),
                       headers=auth).status_code == 201
    sexes = [0] * 7 + [1] * 5 + [2] * 3
    for i, sex in enumerate(sexes):
        body = {"submission_id": str(uuid.uuid4()),
                "answers": {"sex": sex, "adult": True, "smoker": bool(i % 2),
                            **({"kids": i} if i < 10 else {})}}
        response = client.post("/api/surveys/health/submissions", json=body)
        assert response.status_code in (200, 201), response.get_json()
    bad = client.post("/api/surveys/health/submissions", json={
        "submission_id": str(uuid.uuid4()), "answers": {"sex": 3, "adult": True,
                                                         "smoker": True}})
    assert bad.status_code == 422 and bad.get_json()["error"]["code"] == "invalid_submission"
    estimates = client.get("/api/surveys/health/estimates", headers=auth).get_json()
    by_q = {e["question"]: e for e in estimates["questions"]}
    assert by_q["sex"]["mechanism"] == "disclosed" and by_q["sex"]["n"] == 15
    assert [c["estimate"] for c in by_q["sex"]["categories"]] == [7 / 15, 5 / 15, 3 / 15]
    assert by_q["kids"]["n"] == 10 and by_q["kids"]["mean"]["estimate"] == 4.5
    assert by_q["sex"]["categories"][0]["std_error"] == 0.0


def test_reports_show_disclosed_questions_in_every_format(client, auth) -> None:
    from ldpsurvey.analyst.reports import FORMATS, Report, render

    survey = Survey.from_dict(disclosed_survey())
    client.post("/api/surveys", json=manifest(disclosed_survey()), headers=auth)
    for sex in (0, 1, 1):
        client.post("/api/surveys/health/submissions", json={
            "submission_id": str(uuid.uuid4()),
            "answers": {"sex": sex, "adult": True, "smoker": True}})
    estimates = client.get("/api/surveys/health/estimates", headers=auth).get_json()
    report = Report(survey.to_dict(), estimates)
    assert report.total_epsilon == 1.0
    for fmt in FORMATS:
        text = render(report, fmt)
        assert "sex" in text
        if fmt in ("html", "markdown"):
            assert "disclosed (sent as given, no ε)" in text


def test_cli_review_words_for_disclosed_questions_and_designs() -> None:
    from ldpsurvey.client.review import report_words, review_lines

    data = disclosed_survey()
    data["questions"].append({"id": "drugs", "text": "Cannabis?", "type": "binary",
                              "mechanism": "forced_response",
                              "params": {"p_truth": "3/4", "forced": {"yes": "1/8",
                                                                       "no": "1/8"}}})
    survey = Survey.from_dict(data)
    mechs = {q.id: mechanism_for(q) for q in survey.questions}
    lines = "\n".join(review_lines(survey, {"sex": "m", "adult": True, "smoker": True,
                                            "drugs": True}, mechs))
    assert lines.count("Disclosed: sent as you answer it, not randomized.") == 2
    assert lines.count("Disclosed: no ε, because it is not randomized; it can help identify "
                       "you.") == 2
    assert lines.count("Your answer (sent as you give it): ") == 2
    assert "Your answer (sent as you give it): m\n" in lines
    # P(yes | yes) = 3/4 + 1/8, P(no | yes) = 1/8, exactly
    assert ("Your device will send one of these at random (forced response): ‘no’ 12.5%, "
            "‘yes’ (your real answer) 87.5%.") in lines
    assert report_words(survey.question("sex"), mechs["sex"], 1) == "the option “m”"
    assert report_words(survey.question("drugs"), mechs["drugs"], True) == "yes"


def test_plan_lists_disclosed_questions_apart(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(disclosed_survey()))
    result = CliRunner().invoke(cli, ["plan", str(path), "--margin", "0.05"])
    assert result.exit_code == 0, result.output
    assert "disclosed (sent as given, counted exactly; nothing to plan): sex, kids, adult" \
        in result.output
    assert "smoker:" in result.output


@pytest.mark.parametrize("disclosed", [True, "yes", None])
def test_a_question_given_disclosed_other_than_false_is_asked_directly_where_refused(
        disclosed: Any) -> None:
    """`disclosed` set to anything but false asks the question directly as far as the
    survey-wide refusals go (a two-server survey has none; a disclosed question takes no
    special values); false is a randomized question."""
    from support.two_server_stand_ins import two_server_survey_dict

    asked = {"id": "sex", "text": "Sex?", "type": "categorical", "options": ["f", "m"],
             "central_epsilon": 1.0, "disclosed": disclosed}
    with pytest.raises(SurveyError) as info:
        Survey.from_dict(two_server_survey_dict([asked]))
    assert info.value.field == "questions.sex.disclosed"
    assert "a two-server survey has no disclosed questions" in str(info.value)
    Survey.from_dict(two_server_survey_dict([{**asked, "disclosed": False}]))
    data = disclosed_survey()
    data["questions"][0].update(special={"dk": "Don't know"}, disclosed=disclosed)
    with pytest.raises(SurveyError) as info:
        Survey.from_dict(data)
    assert info.value.field == "questions.sex.special"
    assert "a disclosed question takes no special values" in str(info.value)
