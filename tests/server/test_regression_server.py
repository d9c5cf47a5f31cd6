"""GET /api/surveys/<id>/regression and `ldpsurvey regress` on a server's stored reports:
simulated respondents (seeded numpy) with known coefficients; every format; clear refusals.
Statistical checks are z-tests at Z = 4.5 (false-alarm rate 7e-6 each)."""

from __future__ import annotations

import csv
import io
import json
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.regression import expit
from ldpsurvey.shared.survey import Survey
from support.server_data import manifest

BACKENDS = ("sqlite", "postgresql")
Z = 4.5
N = 4000
SMOKER_BETA = {"(intercept)": -0.5, "sex=m": 0.8, "sex=x": 0.0, "age": -0.02}


def survey_data() -> dict[str, Any]:
    return {"id": "habits", "title": "Habits", "version": 1, "questions": [
        {"id": "sex", "text": "Sex?", "type": "categorical", "options": ["f", "m", "x"],
         "disclosed": True},
        {"id": "age", "text": "Age?", "type": "integer", "min": 18, "max": 90,
         "disclosed": True},
        {"id": "smoker", "text": "Do you smoke?", "type": "binary", "epsilon": 3.0,
         "mechanism": "binary_rr", "optional": True},
        {"id": "drug", "text": "Drug used?", "type": "categorical", "epsilon": 3.0,
         "options": ["none", "cannabis", "other"], "mechanism": "grr"},
        {"id": "mood", "text": "Mood?", "type": "categorical", "epsilon": 3.0,
         "options": ["bad", "ok", "good"], "mechanism": "oue"},
        {"id": "drinks", "text": "Drinks a week?", "type": "integer", "min": 0, "max": 10,
         "epsilon": 3.0, "mechanism": "geometric"},
    ]}


@pytest.fixture()
def loaded(client, auth) -> dict[str, Any]:
    survey = Survey.from_dict(survey_data())
    mechs = {q.id: mechanism_for(q) for q in survey.questions}
    rng = np.random.default_rng(21)
    sex = rng.choice(3, size=N, p=[0.5, 0.4, 0.1])
    age = rng.integers(18, 91, size=N)
    eta = (SMOKER_BETA["(intercept)"] + SMOKER_BETA["sex=m"] * (sex == 1)
           + SMOKER_BETA["age"] * (age - 18))
    smoker = (rng.random(N) < expit(eta)).astype(np.int64)
    drug = rng.choice(3, size=N, p=[0.6, 0.3, 0.1])
    mood = rng.integers(0, 3, size=N)
    drinks = np.clip(2 + 3 * (sex == 1) + rng.integers(-2, 3, N), 0, 10)
    reports = {q: mechs[q].perturb_many(v, rng).tolist() for q, v in
               (("smoker", smoker), ("drug", drug), ("mood", mood), ("drinks", drinks))}
    subs = [{"submission_id": str(uuid.uuid4()), "answers": {
        "sex": int(sex[i]), "age": int(age[i]), **{q: r[i] for q, r in reports.items()}}}
        for i in range(N)]
    for s in subs[:50]:  # a few submissions without the outcome: left out, counted
        del s["answers"]["smoker"]
    assert client.post("/api/surveys", json=manifest(survey_data()), headers=auth
                       ).status_code == 201
    for start in range(0, N, 100):
        response = client.post("/api/surveys/habits/submissions",
                               json={"submissions": subs[start:start + 100]})
        assert response.status_code in (200, 201), response.get_json()
    return {"age": age}


def test_regression_api_recovers_known_coefficients(client, auth, loaded) -> None:
    doc = client.get("/api/surveys/habits/regression?outcome=smoker&covariates=sex,age",
                     headers=auth).get_json()
    assert doc["kind"] == "logistic" and doc["converged"]
    assert doc["n"] == N - 50 and doc["n_dropped"] == 50
    by = {c["name"]: c for c in doc["coefficients"]}
    assert set(by) == {"(intercept)", "sex=m", "sex=x", "age"}
    # age enters as given (18..90): the intercept is at age 0
    truth = {**SMOKER_BETA, "(intercept)": SMOKER_BETA["(intercept)"] - 18 * SMOKER_BETA["age"]}
    for name, c in by.items():
        assert abs(c["estimate"] - truth[name]) < Z * c["std_error"], (name, c)


def test_categorical_outcome_one_vs_rest_and_latent_covariate(client, auth, loaded) -> None:
    mood = client.get("/api/surveys/habits/regression?outcome=mood&level=good&covariates=sex",
                      headers=auth).get_json()
    assert mood["outcome_level"] == "good" and mood["converged"]
    for c in mood["coefficients"][1:]:  # mood is independent of sex
        assert abs(c["estimate"]) < Z * c["std_error"]
    latent = client.get("/api/surveys/habits/regression?outcome=smoker&covariates=sex,drug",
                        headers=auth).get_json()
    assert latent["converged"]
    names = [c["name"] for c in latent["coefficients"]]
    assert names == ["(intercept)", "sex=m", "sex=x", "drug=cannabis", "drug=other"]
    for c in latent["coefficients"][3:]:  # smoking does not depend on drug here
        assert abs(c["estimate"]) < Z * c["std_error"]
    # a support-bit covariate (mood: oue) enters through its reports' relative likelihood
    bits = client.get("/api/surveys/habits/regression?outcome=smoker&covariates=sex,age,mood",
                      headers=auth).get_json()
    assert bits["converged"], bits
    by = {c["name"]: c for c in bits["coefficients"]}
    assert abs(by["sex=m"]["estimate"] - SMOKER_BETA["sex=m"]) < Z * by["sex=m"]["std_error"]
    for name in ("mood=ok", "mood=good"):  # smoking does not depend on mood here
        assert abs(by[name]["estimate"]) < Z * by[name]["std_error"], by[name]


def test_linear_regression_of_an_integer_outcome(client, auth, loaded) -> None:
    doc = client.get("/api/surveys/habits/regression?outcome=drinks&covariates=sex",
                     headers=auth).get_json()
    assert doc["kind"] == "linear"
    by = {c["name"]: c for c in doc["coefficients"]}
    assert abs(by["sex=m"]["estimate"] - 3.0) < Z * by["sex=m"]["std_error"]


def test_linear_regression_on_a_randomized_covariate(client, auth, loaded) -> None:
    """drinks = 2 + 3·[sex = m] + uniform noise, independent of the randomized drug answer:
    the corrected-moments fit finds the sex effect and no drug effect, and says what the
    channels cost."""
    doc = client.get("/api/surveys/habits/regression?outcome=drinks&covariates=sex,drug",
                     headers=auth).get_json()
    assert doc["kind"] == "linear" and doc["n"] == N  # drinks is never missing
    by = {c["name"]: c for c in doc["coefficients"]}
    assert list(by) == ["(intercept)", "sex=m", "sex=x", "drug=cannabis", "drug=other"]
    assert abs(by["sex=m"]["estimate"] - 3.0) < Z * by["sex=m"]["std_error"]
    for name in ("drug=cannabis", "drug=other"):
        assert abs(by[name]["estimate"]) < Z * by[name]["std_error"], by[name]
        assert by[name]["se_inflation"] > by["sex=m"]["se_inflation"] > 1
    assert any("corrected moments" in note for note in doc["notes"])
    # a support-bit covariate (mood: oue) enters the linear fit too; mood is independent here
    mood = client.get("/api/surveys/habits/regression?outcome=drinks&covariates=sex,mood",
                      headers=auth).get_json()
    assert [c["name"] for c in mood["coefficients"]][3:] == ["mood=ok", "mood=good"]
    for c in mood["coefficients"][3:]:
        assert abs(c["estimate"]) < Z * c["std_error"], c
    # two randomized covariates at once (one-index grr and support-bit oue)
    both = client.get("/api/surveys/habits/regression?outcome=drinks&covariates=sex,drug,mood",
                      headers=auth).get_json()
    by = {c["name"]: c for c in both["coefficients"]}
    assert list(by)[3:] == ["drug=cannabis", "drug=other", "mood=ok", "mood=good"]
    assert abs(by["sex=m"]["estimate"] - 3.0) < Z * by["sex=m"]["std_error"]
    for name in list(by)[3:]:
        assert abs(by[name]["estimate"]) < Z * by[name]["std_error"], by[name]
    assert "drug, mood enter by corrected moments" in both["notes"][1]


@pytest.mark.parametrize(("query", "message"), [
    ("outcome=nope", "no question 'nope'"),
    ("outcome=mood&covariates=sex", "name the one to model"),
    ("outcome=smoker&covariates=sex,drug,mood,age,smoker", "cannot also be a covariate"),
    ("outcome=smoker&covariates=drug,mood,sex,drug", "named twice"),
    ("outcome=sex&covariates=drug,mood,drinks", "at most 2 randomized covariates"),
    ("outcome=smoker&covariates=drinks", "must be a yes/no or categorical question, not"),
    ("outcome=smoker&covariates=smoker", "cannot also be a covariate"),
    ("outcome=smoker&covariates=sex,,age", "separated by commas"),
])
def test_bad_requests_are_clear_422s(client, auth, loaded, query: str, message: str) -> None:
    response = client.get(f"/api/surveys/habits/regression?{query}", headers=auth)
    assert response.status_code == 422, response.get_json()
    assert message in response.get_json()["error"]["message"]
    assert client.get("/api/surveys/habits/regression", headers=auth).status_code == 400


@pytest.mark.parametrize("fmt", ["table", "json", "csv", "html"])
def test_regress_cli_in_every_format(app, db_path: Path, loaded, fmt: str) -> None:
    result = CliRunner().invoke(cli, ["regress", "--db", str(db_path), "--survey", "habits",
                                      "--outcome", "smoker", "--covariates", "sex,age",
                                      "--format", fmt])
    assert result.exit_code == 0, result.output
    out = result.output
    if fmt == "json":
        assert json.loads(out[out.index("{"):])["kind"] == "logistic"
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(out[out.index("survey,"):])))
        assert [r["coefficient"] for r in rows] == ["(intercept)", "sex=m", "sex=x", "age"]
    elif fmt == "html":
        assert "data:image/png;base64," in out and out.count("<html") == 1
        # issue 32: titled by the survey's title, coefficients by question text and label
        assert "<title>Habits: regression of Do you smoke?</title>" in out
        assert "<h1>Habits</h1>" in out and '<span class="qid">habits</span>' in out
        assert 'Sex?: m <span class="qid">sex=m</span>' in out
        assert "Logistic regression of Do you smoke? = yes on Sex?; Age?" in out
    else:
        assert "odds ratio" in out and "Logistic regression of smoker = yes" in out


def test_regress_cli_from_a_server_names_the_survey_by_its_title(app, loaded, token) -> None:
    """Over HTTP the survey of the document's version comes with it (as for report and
    crosstab), so the HTML page has its title and question texts too."""
    import threading

    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        result = CliRunner().invoke(cli, [
            "regress", "--server", f"http://127.0.0.1:{server.server_port}", "--token", token,
            "--survey", "habits", "--outcome", "smoker", "--covariates", "sex", "--format",
            "html"])
    finally:
        server.shutdown()
    assert result.exit_code == 0, result.output
    assert "<h1>Habits</h1>" in result.output and "Sex?: x" in result.output


@pytest.mark.parametrize("fmt", ["table", "json", "csv", "html"])
def test_regress_cli_linear_on_a_randomized_covariate_in_every_format(
        app, db_path: Path, loaded, fmt: str) -> None:
    result = CliRunner().invoke(cli, ["regress", "--db", str(db_path), "--survey", "habits",
                                      "--outcome", "drinks", "--covariates", "sex,drug",
                                      "--format", fmt])
    assert result.exit_code == 0, result.output
    out = result.output
    names = ["(intercept)", "sex=m", "sex=x", "drug=cannabis", "drug=other"]
    if fmt == "json":
        doc = json.loads(out[out.index("{"):])
        assert doc["kind"] == "linear" and [c["name"] for c in doc["coefficients"]] == names
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(out[out.index("survey,"):])))
        assert [r["coefficient"] for r in rows] == names
        assert all(float(r["se_inflation"]) > 1 for r in rows)
    elif fmt == "html":
        assert "data:image/png;base64," in out and "drug=cannabis" in out
    else:
        assert "Linear regression of drinks" in out and "corrected moments" in out


def test_an_option_nobody_chose_is_left_out_with_a_note() -> None:
    from ldpsurvey.server.regression import Spec, fit_columns

    survey = Survey.from_dict(survey_data())
    questions = {q.id: q for q in survey.questions}
    mechs = {q.id: mechanism_for(q) for q in survey.questions}
    rng = np.random.default_rng(3)
    columns = [rng.integers(0, 2, 500), rng.integers(0, 2, 500),  # sex is never "x" (index 2)
               rng.integers(18, 91, 500)]
    result = fit_columns(columns, 0, Spec("smoker", ("sex", "age")), questions, mechs, 0.95)
    assert [c.name for c in result.coefficients] == ["(intercept)", "sex=m", "age"]
    assert result.converged
    assert "left out, the same for every respondent used (no information): sex=x" in result.notes
    assert "each option is compared with the first one (the intercept's group): sex=f" \
        in result.notes


def test_a_longitudinal_surveys_outcome_regresses_through_its_two_layers(client, auth) -> None:
    """A series question with an instantaneous layer: each round (version) holds one report per
    respondent, drawn through both layers; the fit uses the composite channel (p*, q*)."""
    data = {"id": "weekly", "title": "Weekly", "version": 1, "series": "weekly-2026",
            "questions": [
                {"id": "sex", "text": "Sex?", "type": "binary", "disclosed": True},
                {"id": "smoker", "text": "Smoked this week?", "type": "binary",
                 "epsilon": 2.0, "instantaneous_epsilon": 1.5}]}
    survey = Survey.from_dict(data)
    mech = mechanism_for(survey.question("smoker"))
    assert mech.name == "binary_rr+instantaneous"
    rng = np.random.default_rng(22)
    n, beta = 6000, (-0.5, 1.0)
    sex = rng.integers(0, 2, n)
    smoker = (rng.random(n) < expit(beta[0] + beta[1] * sex)).astype(np.int64)
    reports = mech.perturb_many(smoker, rng).tolist()  # both layers drawn (simulation)
    assert client.post("/api/surveys", json=manifest(data), headers=auth).status_code == 201
    subs = [{"submission_id": str(uuid.uuid4()),
             "answers": {"sex": bool(sex[i]), "smoker": reports[i]}} for i in range(n)]
    for start in range(0, n, 100):
        response = client.post("/api/surveys/weekly/submissions",
                               json={"submissions": subs[start:start + 100]})
        assert response.status_code in (200, 201), response.get_json()
    doc = client.get("/api/surveys/weekly/regression?outcome=smoker&covariates=sex",
                     headers=auth).get_json()
    assert doc["converged"] and doc["n"] == n
    for c, true in zip(doc["coefficients"], beta, strict=True):
        assert abs(c["estimate"] - true) < Z * c["std_error"], (c["name"], c["estimate"], true)


def test_linear_fit_refused_when_the_corrected_moments_are_not_positive_definite(
        client, auth, app, db_path: Path) -> None:
    """Every stored drug report is "none": the corrected share of "cannabis" is negative, so no
    distribution of true answers has these moments. HTTP: a 422 naming why; CLI: one line and
    a non-zero exit."""
    data = {**survey_data(), "id": "tiny"}
    assert client.post("/api/surveys", json=manifest(data), headers=auth).status_code == 201
    survey, rng = Survey.from_dict(data), np.random.default_rng(5)
    reports = {q: mechanism_for(survey.question(q)).perturb_many(np.zeros(40, dtype=np.int64),
                                                                 rng).tolist()
               for q in ("smoker", "mood", "drinks")}
    subs = [{"submission_id": str(uuid.uuid4()),
             "answers": {"sex": i % 2, "age": 30, "drug": 0,
                         **{q: r[i] for q, r in reports.items()}}} for i in range(40)]
    response = client.post("/api/surveys/tiny/submissions", json={"submissions": subs})
    assert response.status_code in (200, 201), response.get_json()
    response = client.get("/api/surveys/tiny/regression?outcome=drinks&covariates=sex,drug",
                          headers=auth)
    assert response.status_code == 422
    assert "not positive definite" in response.get_json()["error"]["message"]
    result = CliRunner().invoke(cli, ["regress", "--db", str(db_path), "--survey", "tiny",
                                      "--outcome", "drinks", "--covariates", "sex,drug"])
    assert result.exit_code != 0
    error_lines = [line for line in result.output.splitlines() if "not positive definite" in line]
    assert len(error_lines) == 1 and "Traceback" not in result.output


def hidden_follow_up() -> tuple[dict[str, Any], dict[str, Any]]:
    """(questions, mechanisms) of a disclosed 'sex', a randomized gate 'user' and the yes/no
    follow-up 'freq' asked only when the gate is yes (skip logic: 'freq' has "not asked")."""
    survey = Survey.from_dict({"id": "skips", "title": "Skips", "version": 1, "questions": [
        {"id": "sex", "text": "Male?", "type": "binary", "disclosed": True},
        {"id": "user", "text": "Ever used?", "type": "binary", "epsilon": 1.0},
        {"id": "freq", "text": "Daily?", "type": "binary", "epsilon": 2.0,
         "relevant": "user"}]})
    return ({q.id: q for q in survey.questions},
            {q.id: mechanism_for(q) for q in survey.questions})


def test_a_hidden_yes_no_covariate_names_its_not_asked_level() -> None:
    """A yes/no follow-up whose condition reads a randomized answer has a third value, "not
    asked" (skip logic): its dummy is named so, not a second 'freq=yes'."""
    from ldpsurvey.server.regression import Spec, fit_columns

    questions, mechs = hidden_follow_up()
    rng = np.random.default_rng(4)
    freq = rng.choice(3, size=2000, p=[0.3, 0.2, 0.5])  # no, yes, not asked
    columns = [rng.integers(0, 2, 2000), mechs["freq"].perturb_many(freq, rng)]
    result = fit_columns(columns, 0, Spec("sex", ("freq",)), questions, mechs, 0.95)
    assert [c.name for c in result.coefficients] == \
        ["(intercept)", "freq=yes", "freq=(not asked)"]


def test_a_hidden_yes_no_outcome_says_not_asked_counts_as_the_rest() -> None:
    """A yes/no outcome with a "not asked" value is modelled as 'yes' against everyone else,
    the not asked included; the result says so rather than leaving it to be read as among
    those asked."""
    from ldpsurvey.server.regression import Spec, fit_columns

    questions, mechs = hidden_follow_up()
    rng = np.random.default_rng(5)
    freq = rng.choice(3, size=2000, p=[0.3, 0.2, 0.5])  # no, yes, not asked
    columns = [mechs["freq"].perturb_many(freq, rng), rng.integers(0, 2, 2000)]
    result = fit_columns(columns, 0, Spec("freq", ("sex",)), questions, mechs, 0.95)
    assert any("'freq' is asked only after some randomized answers" in note
               and "not among those asked" in note for note in result.notes)
    plain = fit_columns(columns[::-1], 0, Spec("sex", ("freq",)), questions, mechs, 0.95)
    assert not any("asked only after" in note for note in plain.notes)
