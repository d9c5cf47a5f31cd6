"""`respond --lang es|fr` says every review line in the language: padded check-all-that-apply
mechanisms, named designs, a location's spread, skip logic's "not asked" chances and paragraphs,
a series, a two-server review and its guarantees, and the reports printed once stored, with the
page's sentences where the page has them and the command line's own catalogue
(client/messages/<lang>.json) for the few it does not. Before, each of these was English marked
"[en]"."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.analyst.cli import cli
from ldpsurvey.client import cli as client_cli
from ldpsurvey.client import review_words
from ldpsurvey.client.page_words import Words, cli_catalogue
from ldpsurvey.client.respondent import Respondent
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.skip_logic import NOT_ASKED
from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.translations import SurveyText
from support.clients import FakeServer, signed
from support.page_catalogue import shape

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted((ROOT / "shared" / "samples").glob("*.toml"))
LEADER_KEY = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAE"  # X25519 public keys' form
HELPER_KEY = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAI"


def placeholders(source: str) -> set[str]:
    return shape(source).names


def test_every_cli_key_is_in_en_es_fr_with_the_same_placeholders_and_is_used() -> None:
    en = cli_catalogue("en")
    source = "".join(p.read_text() for p in (ROOT / "client").glob("*.py"))
    for lang in ("es", "fr"):
        other = cli_catalogue(lang)
        assert set(other) == set(en), lang
        for key, text in en.items():
            assert placeholders(other[key]) == placeholders(text), (lang, key)
    for key in en:
        assert f'"{key}"' in source, f"{key} is not said by the command line"


def sample(path: Path) -> Survey:
    text = path.read_text().replace("HELPER_URL", "https://helper.example")
    text = text.replace("LEADER_HPKE_KEY", LEADER_KEY).replace("HELPER_HPKE_KEY", HELPER_KEY)
    return Survey.from_dict(tomllib.loads(text))


def some_answers(survey: Survey, hidden: bool = True) -> dict[str, Any]:
    """One answer to every question; NOT_ASKED for every question with a "not asked" value."""
    out: dict[str, Any] = {}
    for q in survey.questions:
        if q.not_asked and hidden:
            out[q.id] = NOT_ASKED
        elif q.type == "binary":
            out[q.id] = not hidden  # "no": the follow-ups do not apply
        elif q.type in ("categorical", "ordinal"):
            out[q.id] = q.options[-1]
        elif q.type == "multiselect":
            out[q.id] = q.options[:2]
        elif q.type == "integer":
            out[q.id] = q.min + 1
        elif q.type == "location":
            out[q.id] = [2, 3]
    return out


def review(survey: Survey, answers: dict[str, Any], lang: str, tmp_path: Path,
           limit: float | None = 5.0) -> list[str]:
    respondent = Respondent("https://leader.example", state_dir=str(tmp_path))
    if limit is None:
        respondent.max_epsilon = None  # type: ignore[assignment]
    return client_cli._review(respondent, survey, answers, survey, SurveyText(survey),
                              Words(lang))


def english_left(lines: list[str]) -> list[str]:
    return [line for line in lines if "[en]" in line]


@pytest.mark.parametrize("lang", ["es", "fr"])
@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_every_sample_survey_is_reviewed_without_english(path: Path, lang: str,
                                                         tmp_path: Path) -> None:
    survey = sample(path)
    for hidden in (True, False):
        lines = review(survey, some_answers(survey, hidden), lang, tmp_path)
        assert english_left(lines) == []
        assert not any(re.search(r"\b(Your device|probability|Before sending|[Cc]ollude)\b", x)
                       for x in lines), lines


def survey_of(*questions: dict[str, Any], **extra: Any) -> Survey:
    return Survey.from_dict({"id": "s", "title": "t", "version": 1, "questions": list(questions),
                             **extra})


LOCATION = {"id": "home", "type": "location", "text": "Where?", "epsilon_geo": 1.0,
            "grid": {"rows": 4, "cols": 4, "cell_km": 0.5}}
SKIP = [{"id": "smoker", "type": "binary", "text": "Smoke?", "epsilon": 1.0},
        {"id": "kind", "type": "categorical", "text": "Which?", "epsilon": 1.0,
         "options": ["a", "b", "c"], "relevant": "smoker"},
        {"id": "many", "type": "integer", "text": "How many?", "epsilon": 1.0, "min": 0,
         "max": 10, "relevant": "smoker"},
        {"id": "subs", "type": "multiselect", "text": "Which ones?", "epsilon": 1.0,
         "options": ["x", "y", "z"], "mechanism": "option_rr", "relevant": "smoker"},
        {"id": "reg", "type": "categorical", "text": "Region?", "disclosed": True,
         "options": ["north", "south"]},
        {"id": "far", "type": "binary", "text": "Far?", "epsilon": 1.0,
         "relevant": "reg in ['south']"}]
CASES = {
    "padded multiselect (psfo_grr)": survey_of(
        {"id": "m", "type": "multiselect", "text": "Which?", "epsilon": 2.0,
         "options": ["a", "b", "c", "d"], "mechanism": "psfo_grr", "max_selected": 2}),
    "padded multiselect (psfo_olh)": survey_of(
        {"id": "m", "type": "multiselect", "text": "Which?", "epsilon": 2.0,
         "options": ["a", "b", "c", "d"], "mechanism": "psfo_olh", "max_selected": 2}),
    "named design (crosswise)": survey_of(
        {"id": "c", "type": "binary", "text": "Ever?",
         "mechanism": "crosswise", "params": {"prevalence": "1/5"}}),
    "location": survey_of(LOCATION),
    "skip logic": survey_of(*SKIP),
    "series": survey_of({"id": "b", "type": "binary", "text": "Smoke?", "epsilon": 1.0},
                        series="weekly"),
}


@pytest.mark.parametrize("lang", ["es", "fr"])
@pytest.mark.parametrize("case", CASES)
def test_the_cases_that_were_english_are_said_in_the_language(case: str, lang: str,
                                                              tmp_path: Path) -> None:
    survey = CASES[case]
    for answers in (some_answers(survey), some_answers(survey, hidden=False)):
        for limit in (5.0, None):
            lines = review(survey, answers, lang, tmp_path, limit)
            assert english_left(lines) == [], case
            assert not any(re.search(r"\b(Your device|probability|Series|In total)\b", x)
                           for x in lines), lines


@pytest.mark.parametrize("lang", ["es", "fr"])
@pytest.mark.parametrize("case", CASES)
def test_reports_once_stored_are_said_in_the_language(case: str, lang: str,
                                                      tmp_path: Path) -> None:
    survey = CASES[case]
    respondent = Respondent("https://leader.example", state_dir=str(tmp_path))
    for answers in (some_answers(survey), some_answers(survey, hidden=False)):
        values = {k: v for k, v in answers.items() if v is not None}
        submission = respondent.answer(survey, values)
        for q in survey.questions:
            if q.id in submission.reports:
                said = review_words.report_words(q, mechanism_for(q), submission.reports[q.id],
                                                 None, Words(lang))
                assert "[en]" not in said and not re.search(r"\b(the|number|set)\b", said), said


def test_the_spanish_words_of_a_location_a_design_and_skip_logic(tmp_path: Path) -> None:
    location = review(CASES["location"], {"home": [2, 3]}, "es", tmp_path)
    assert any(line.strip().startswith("Su dispositivo enviará una celda cercana a la suya")
               for line in location)
    design = review(CASES["named design (crosswise)"], {"c": True}, "fr", tmp_path)
    assert any("(le modèle croisé)" in line or "modèle" in line for line in design), design
    skip = review(CASES["skip logic"], {"smoker": False, "kind": NOT_ASKED, "many": NOT_ASKED,
                                        "subs": NOT_ASKED, "reg": "north"}, "es", tmp_path)
    said = [line for line in skip if line.startswith("No preguntadas, porque no le corresponden")]
    assert len(said) == 2 and "«Far?»" in said[1] and "«Which?»" in said[0], skip
    series = review(CASES["series"], {"b": True}, "fr", tmp_path)
    assert series[-1].startswith("(Série «\u00a0weekly\u00a0»\u00a0:"), series[-1]


def test_respond_in_french_prints_the_stored_reports_in_french(tmp_path: Path,
                                                               monkeypatch) -> None:
    d = {"id": "checkin", "title": "t", "version": 1, "language": "en", "questions": [
        {"id": "m", "type": "multiselect", "text": "Which?", "epsilon": 2.0,
         "options": ["a", "b", "c", "d"], "mechanism": "psfo_grr", "max_selected": 2}],
        "translations": {"fr": {"title": "t", "questions": {"m": {"text": "Lesquelles ?"}}}}}
    manifest = signed(d, Ed25519PrivateKey.generate())
    server = FakeServer(lambda m, p, b: (200, manifest) if m == "GET" else (
        201, {"accepted": [b["submission_id"]], "duplicates": []}))
    try:
        answers = tmp_path / "a.json"
        answers.write_text(json.dumps({"m": ["a"]}))
        monkeypatch.setattr(client_cli, "stdin_is_terminal", lambda: True)
        result = CliRunner().invoke(cli, [
            "respond", "--server", server.url, "--survey", "checkin", "--answers", str(answers),
            "--state", str(tmp_path / "state"), "--lang", "fr"], input="oui\n")
    finally:
        server.close()
    assert result.exit_code == 0, result.output
    out = result.output
    assert ("Vos réponses ont été randomisées et enregistrées sur cet appareil\u00a0; "
            "il envoie\u00a0:") in out, out
    assert "Au total, " in out and "Votre appareil enverra un élément" in out, out
    assert re.search(r"soumission [0-9a-f-]+\u00a0: remise\n", out), out
    assert "[en]" not in out and "sent submission" not in out


def test_a_stored_two_server_upload_is_said_in_the_language() -> None:
    from types import SimpleNamespace

    from ldpsurvey.client.two_server import sent_lines

    upload = SimpleNamespace(submission_id="u1", body={"public_shares": {"b": "", "a": ""}})
    assert sent_lines(upload) == [  # type: ignore[arg-type]
        "Shared, sealed and stored on this device as upload u1 (a, b); it goes to the leader "
        "unchanged until acknowledged."]
    assert sent_lines(upload, Words("es")) == [  # type: ignore[arg-type]
        "Dividido, sellado y guardado en este dispositivo como envío u1 (a, b); se enviará sin "
        "cambios al servidor principal hasta que este acuse recibo."]


FIVE = ["a", "b", "c", "d", "e"]
THREE = ["never", "once", "often"]
MECHANISMS = [
    *({"type": "categorical", "mechanism": name, "epsilon": 2.0, "options": FIVE}
      for name in ("grr", "oue", "sue", "ss", "olh", "hr")),
    {"type": "ordinal", "mechanism": "ordinal_exp", "epsilon": 2.0, "options": THREE},
    {"type": "ordinal", "mechanism": "ordinal_exp", "epsilon": 2.0,
     "options": [f"o{i}" for i in range(12)]},
    {"type": "integer", "mechanism": "geometric", "epsilon": 1.0, "min": 0, "max": 10},
    *({"type": "multiselect", "mechanism": name, "epsilon": 2.0, "options": FIVE,
       "max_selected": 2} for name in ("option_rr", "set_ue", "psfo_grr", "psfo_olh")),
    {"type": "categorical", "mechanism": "forced_response", "options": THREE, "epsilon": 3.0,
     "params": {"p_truth": "1/2", "forced": {"never": "1/4", "once": "1/8", "often": "1/8"}}},
    {"type": "binary", "mechanism": "matrix",
     "params": {"matrix": [["1/2", "1/4", "1/4"], ["1/8", "3/8", "1/2"]]}},
    {"type": "binary", "mechanism": "warner", "params": {"p": "3/4"}},
    {"type": "binary", "mechanism": "binary_rr", "epsilon": 1.0, "instantaneous_epsilon": 0.5},
    {"type": "categorical", "mechanism": "grr", "epsilon": 1.0, "instantaneous_epsilon": 0.5,
     "options": THREE},
]


@pytest.mark.parametrize("lang", ["es", "fr"])
@pytest.mark.parametrize("spec", MECHANISMS,
                         ids=lambda s: f"{s['type']}-{s['mechanism']}-{len(s.get('options', ''))}")
def test_every_mechanism_is_reviewed_and_reported_in_the_language(spec: dict[str, Any],
                                                                  lang: str,
                                                                  tmp_path: Path) -> None:
    layered = "instantaneous_epsilon" in spec
    survey = survey_of({"id": "q", "text": "Q?", **spec}, **({"series": "w"} if layered else {}))
    answers = some_answers(survey)
    lines = review(survey, answers, lang, tmp_path)
    assert english_left(lines) == []
    assert not any(re.search(r"\b(Your device|probability)\b", x) for x in lines), lines
    respondent = Respondent("https://leader.example", state_dir=str(tmp_path / "state"))
    q = survey.questions[0]
    report = respondent.answer(survey, answers).reports["q"]
    said = review_words.report_words(q, respondent.mechanism(survey, q), report, None,
                                     Words(lang))
    assert "[en]" not in said and not re.search(r"\b(the|number|set)\b", said), said
