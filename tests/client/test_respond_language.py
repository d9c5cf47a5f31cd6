"""`respond --lang es|fr` asks and reviews in the respondent's language with the page's own
sentences (client/page_words.py reads the page's catalogue; client/review_words.py): "sí" and
"oui" answer a yes/no question and confirm, the review's sentences are the page's, numbers are
written as the language writes them, and what has no sentence in the catalogue is marked [en].
Before, `respond --lang es` refused "sí" and reviewed in English."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.analyst.cli import cli
from ldpsurvey.client import cli as client_cli
from ldpsurvey.client.cli import parse_answer, prompt_answers
from ldpsurvey.client.page_words import N, Words, catalogue, plural_category, words_for
from ldpsurvey.shared.errors import AnswerError
from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.translations import SurveyText
from support.clients import FakeServer, serving, signed, survey_dict
from support.page_catalogue import catalogue as page_catalogue


def translated() -> dict[str, Any]:
    d = survey_dict()
    d["language"] = "en"
    d["questions"].append({"id": "subs", "type": "multiselect", "text": "Which ones?",
                           "epsilon": 1.0, "options": ["tea", "coffee"]})
    d["translations"] = {
        "es": {"title": "Control", "questions": {
            "smoker": {"text": "¿Fuma?"},
            "mood": {"text": "¿Cómo está su ánimo?", "options": {"fine": "bien"}}}},
        "fr": {"title": "Contrôle", "questions": {"smoker": {"text": "Fumez-vous ?"}}}}
    return d


SURVEY = Survey.from_dict(translated())


@pytest.fixture()
def server() -> Iterator[FakeServer]:
    with serving(signed(translated(), Ed25519PrivateKey.generate())) as fake:
        yield fake


@pytest.mark.parametrize(("lang", "typed", "value"), [
    ("es", "sí", True), ("es", "Sí", True), ("es", "SI", True), ("es", "s", True),
    ("es", "no", False), ("es", "N", False), ("es", "yes", True),
    ("fr", "oui", True), ("fr", "OUI", True), ("fr", "o", True), ("fr", "non", False),
    ("fr", "n", False), ("en", "y", True), ("en", "no", False)])
def test_yes_and_no_in_the_language_answer_a_yes_no_question(lang: str, typed: str,
                                                              value: bool) -> None:
    smoker = SURVEY.questions[0]
    assert parse_answer(smoker, typed, SurveyText(SURVEY, lang), words_for(lang)) is value


def test_other_words_are_refused_in_the_language() -> None:
    smoker = SURVEY.questions[0]
    with pytest.raises(AnswerError, match=r"^Elija una opción, por favor\. \(sí/no\)$"):
        parse_answer(smoker, "quizás", SurveyText(SURVEY, "es"), words_for("es"))
    with pytest.raises(AnswerError, match="answer yes or no"):
        parse_answer(smoker, "sí", SurveyText(SURVEY), words_for("en"))  # English: as before
    assert words_for("es-MX") == Words("es") and words_for("de") == Words("en")


def test_the_prompts_speak_spanish_and_take_si() -> None:
    text = SurveyText(SURVEY, "es")

    @click.command()
    def ask() -> None:
        click.echo(json.dumps(prompt_answers(SURVEY, text)))

    result = CliRunner().invoke(ask, input="sí\nbien\n\n1\n")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "1. ¿Fuma?" in out and "[sí/no]" not in out and "sí/no:" in out
    assert "Un número entero de 0 a 30" in out and "Elija una opción (1-5)" in out
    assert "Su privacidad: su dispositivo aleatoriza cada respuesta" in out
    assert "Privacidad: quien vea lo que se envía podrá estar, como mucho, 2,8 veces" in out
    assert "Opcional: déjela en blanco" in out
    answers = json.loads(out.strip().splitlines()[-1])
    assert answers == {"smoker": True, "mood": "fine", "subs": ["tea"]}


def respond(server: FakeServer, tmp_path: Path, lang: str, typed: str) -> Any:
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"smoker": False, "mood": "fine", "drinks": 4,
                                   "subs": ["tea"]}))
    return CliRunner().invoke(cli, ["respond", "--server", server.url, "--survey", "checkin",
                                    "--answers", str(answers), "--state",
                                    str(tmp_path / "state"), "--lang", lang], input=typed)


def test_the_review_is_the_pages_in_spanish_and_si_confirms(server, tmp_path, monkeypatch):
    monkeypatch.setattr(client_cli, "stdin_is_terminal", lambda: True)
    result = respond(server, tmp_path, "es", "sí\n")
    assert result.exit_code == 0, result.output
    out = result.output
    es = Words("es")
    assert es.t("review.intro") in out
    assert "Su respuesta (se queda en este dispositivo): No" in out
    assert ("Su dispositivo enviará «no» (su respuesta real) con una probabilidad del "
            "73,1\u00a0%, y «sí» con una probabilidad del 26,9\u00a0%.") in out
    assert "Su respuesta (se queda en este dispositivo): bien" in out
    assert "Su dispositivo enviará «bien» (su respuesta real)" in out
    assert "el propio 4 con una probabilidad del" in out  # the number's noise
    assert re.search(r"En total, quien vea .* \(ε = 4,5 en total; el límite de esta página "
                     r"es ε = 5\)\.", out)
    assert "Enviar [sí/no] sí" in out
    # a check-all-that-apply question's marks
    assert "Su dispositivo enviará una marca de sí o no para cada una de las 2 opciones" in out
    review = out[:out.index("Enviar [")]
    for line in review.splitlines():  # nothing else in English, unmarked
        assert not re.search(r"\b(Your|your device|probability|Privacy)\b", line) or \
            line.endswith("[en]"), line
    assert re.search(r"envío [0-9a-f-]+: entregado\n", out)
    assert len(server.requests) == 2  # fetched, then sent


def test_no_in_french_declines_and_sends_nothing(server, tmp_path, monkeypatch):
    monkeypatch.setattr(client_cli, "stdin_is_terminal", lambda: True)
    result = respond(server, tmp_path, "fr", "non\n")
    assert result.exit_code == 1
    fr = Words("fr")
    assert fr.t("review.mine", answer="Non") in result.output
    assert "Envoyer [oui/non] non" in result.output
    assert [r for r in server.requests if r.method != "GET"] == []


def test_the_catalogue_is_the_pages_and_its_plurals_are_cldrs() -> None:
    """One source of words: the CLI reads the page's files as shipped."""
    for lang, parts in page_catalogue().items():
        merged = {k: v for part in parts.values() for k, v in part.items()}
        assert dict(catalogue(lang)) == merged
    assert [plural_category("fr", n) for n in (0, 1, 2, 1_000_000)] == [
        "one", "one", "other", "many"]
    assert [plural_category("es", n) for n in (0, 1, 2, 2_000_000)] == [
        "other", "one", "other", "many"]
    assert Words("es").t("comp.with", k=0, epsilon="1") == "Con esta encuesta: ningún informe."


def test_receipts_name_options_in_the_respondents_words_not_indices(server, tmp_path,
                                                                    monkeypatch):
    """`receipts` printed the JSON sent ({"mood": 2, "subs": [1]}): indices a respondent
    cannot read. The reports are now kept with the submission in the words `respond` printed
    them in (options by their text in the language shown), and `receipts` prints those."""
    monkeypatch.setattr(client_cli, "stdin_is_terminal", lambda: True)
    assert respond(server, tmp_path, "es", "sí\n").exit_code == 0
    [path] = (tmp_path / "state" / "receipts").iterdir()
    record = json.loads(path.read_text())
    mood = record["body"]["answers"]["mood"]
    shown = SurveyText(SURVEY, "es").option("mood", SURVEY.questions[1].options[mood]).text
    out = CliRunner().invoke(cli, ["receipts", "--state", str(tmp_path / "state")]).output
    assert f"    ¿Cómo está su ánimo? -> la opción «{shown}»\n" in out
    assert "    ¿Fuma? -> " in out and "Which ones? [en] -> " in out
    assert '"mood":' not in out and "{" not in out
    data = json.loads(CliRunner().invoke(cli, ["receipts", "--state", str(tmp_path / "state"),
                                               "--json"]).output)
    [receipt] = data["receipts"]
    assert receipt["body"] == record["body"]  # the exact bytes sent, as before
    assert receipt["said"]["language"] == "es"
    assert [r["question"] for r in receipt["said"]["reports"]] == [
        "smoker", "mood", "drinks", "subs"]


def test_receipts_in_english_name_option_labels(server, tmp_path):
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"smoker": True, "mood": "great", "subs": []}))
    result = CliRunner().invoke(cli, ["respond", "--server", server.url, "--survey", "checkin",
                                      "--answers", str(answers), "--state",
                                      str(tmp_path / "state"), "--yes", "--lang", "en"])
    assert result.exit_code == 0, result.output
    [path] = (tmp_path / "state" / "receipts").iterdir()
    mood = json.loads(path.read_text())["body"]["answers"]["mood"]
    out = CliRunner().invoke(cli, ["receipts", "--state", str(tmp_path / "state")]).output
    label = SURVEY.questions[1].options[mood]
    assert f"    How is your mood? -> the option “{label}”\n" in out
    assert "    Which ones? -> " in out and '"mood"' not in out


def test_a_waiting_submission_is_listed_in_words_as_not_delivered(tmp_path):
    """Unreachable: kept in the outbox; `receipts` lists it under "Not delivered" with its
    words, not among what was sent."""
    manifest = signed(translated(), Ed25519PrivateKey.generate())
    fake = FakeServer(lambda m, p, b: (200, manifest) if m == "GET" else (503, {}))
    try:
        answers = tmp_path / "answers.json"
        answers.write_text(json.dumps({"smoker": True, "mood": "fine", "subs": ["tea"]}))
        result = CliRunner().invoke(cli, [
            "respond", "--server", fake.url, "--survey", "checkin", "--answers", str(answers),
            "--state", str(tmp_path / "state"), "--yes", "--attempts", "1", "--lang", "fr"])
    finally:
        fake.close()
    assert result.exit_code != 0 and "not delivered yet" in result.output
    out = CliRunner().invoke(cli, ["receipts", "--state", str(tmp_path / "state")]).output
    waiting = out[out.index("Not delivered"):]
    assert "pending" in waiting and "    Fumez-vous ? -> " in waiting
    assert out.count("Fumez-vous") == 1  # listed as waiting only


def test_an_empty_exact_plural_case_and_scientific_numbers_are_the_pages() -> None:
    """Found by the browser comparison (tests/web/test_page_wording.py): an empty "=0 {}"
    case is a case (it was skipped for "other"), and 1.9e-20% is written as Intl writes it."""
    es = Words("es")
    assert es.t("multi.marks", k=2, checked=0, unchecked=2, p=N("50.1%"), q=N("49.9%"),
                both="no").endswith(": «sí» con una probabilidad del 49,9\u00a0% para cada "
                                    "una de las 2 opciones que no marcó.")
    assert es.number(N("1.9e-20%")) == "1,9E-20\u00a0%"
    assert Words("fr").number(N("3e21")) == "3E21"
    assert Words("en").number(N("1.9e-20%")) == "1.9e-20%"
