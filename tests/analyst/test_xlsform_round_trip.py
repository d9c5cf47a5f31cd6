"""Issue 34's "done when", CLI side: the KoboToolbox-style XLSForm of tests/data/xlsform in
English and Spanish (a check-all-that-apply question, a skip, privacy columns) imports in one
command, publishes, is answered on the CLI in English and in Spanish (--lang, and LANG), and
the report reads in either language, in every format."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.clients import RealServer, ldpsurvey_exe
from support.timeouts import TEST_TIMEOUT

FORM = Path(__file__).parents[1] / "data" / "xlsform" / "health_safety_2025.xlsx"
SURVEY = "health_safety_2025"


def run(*args: str, input: str | None = None, env: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items()
            if k not in ("LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES")}
    return subprocess.run([*ldpsurvey_exe(), *args], capture_output=True, text=True,
                          input=input, timeout=TEST_TIMEOUT, check=False,
                          env={**base, "LANG": "C.UTF-8", **(env or {})})


@pytest.fixture(scope="module")
def deployed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("xlsform")
    imported = run("import", "xlsform", str(FORM), "--out", str(root / "survey.toml"))
    assert imported.returncode == 0, imported.stderr
    assert ("survey 'health_safety_2025' version 3, 6 question(s), languages en, es"
            in imported.stdout)
    server = RealServer(root / "server.db")
    server.start()
    try:
        token = server.token()
        assert run("keys", "generate", "--out", str(root / "keys")).returncode == 0
        published = run("publish", str(root / "survey.toml"), "--server", server.url,
                        "--token", token, "--key", str(root / "keys" / "survey-signing.key"))
        assert published.returncode == 0, published.stderr
        yield {"server": server, "token": token, "root": root,
               "pub": str(root / "keys" / "survey-signing.pub")}
    finally:
        server.stop()


def respond(deployed: dict[str, Any], state: str, *extra: str, input: str | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run("respond", "--server", deployed["server"].url, "--survey", SURVEY,
               "--trust", deployed["pub"], "--state", str(deployed["root"] / state), *extra,
               input=input, env=env)


def test_answered_in_english_and_spanish_then_reported_in_either(
        deployed: dict[str, Any]) -> None:
    server, token, root = deployed["server"], deployed["token"], deployed["root"]
    answers = root / "answers.json"
    answers.write_text(json.dumps({
        "region": "North", "used_any": True, "substances": ["Cannabis", "Cocaine"],
        "cannabis_freq": "Weekly", "heavy_days": 3, "partner_violence": False}))
    english = respond(deployed, "en", "--answers", str(answers), "--yes", "--lang", "en")
    assert english.returncode == 0, english.stderr
    assert "In the past 12 months, have you used any illegal drug? ->" in english.stdout

    # Interactively in Spanish: the survey's text in Spanish, answers by number or by the
    # Spanish text of an option; the values sent are the options' labels all the same.
    spanish = respond(deployed, "es", "--lang", "es", "--yes",
                      input="2\nyes\n1, 3\nCada semana\n0\nno\n")
    assert spanish.returncode == 0, spanish.stderr
    out = spanish.stdout
    assert "Encuesta de salud y seguridad 2025 (version 3)" in out
    assert "Survey text in es." in out
    assert "Su teléfono aleatoriza cada respuesta" in out
    assert "¿En qué región vive?" in out and "[2] Sur" in out
    assert "Esta respuesta se envía tal como la da." in out  # a hint
    assert "[3] Éxtasis (MDMA)" in out and "[3] Cada semana" in out
    assert "¿Con qué frecuencia ha consumido cannabis?" in out  # the skip applied (cannabis)
    # sent: the value "South", shown in the respondent's words
    assert "¿En qué región vive? -> la opción «Sur»" in out

    # LANG picks the language when --lang is not given; an unknown one falls back, said so
    by_lang = respond(deployed, "lang", "--answers", str(answers), "--dry-run",
                      env={"LANG": "es_MX.UTF-8"})
    assert by_lang.returncode == 0, by_lang.stderr
    assert "1. ¿En qué región vive?" in by_lang.stdout  # the review, in Spanish
    assert "Su respuesta (se envía tal como la da): Norte" in by_lang.stdout
    german = respond(deployed, "de", "--answers", str(answers), "--dry-run", "--lang", "de")
    assert "this survey has no text in 'de' (it has: en, es); it is shown in 'en'" in (
        german.stderr)
    assert "1. Which region do you live in?" in german.stdout

    rows = server.export(SURVEY, token)
    assert len(rows) == 2
    assert sorted(r["answers"]["region"] for r in rows) == [0, 1]  # disclosed: North, South

    args = ("report", "--server", server.url, "--survey", SURVEY, "--token", token)
    table_en = run(*args)
    table_es = run(*args, "--lang", "es")
    assert table_en.returncode == 0 and table_es.returncode == 0, table_es.stderr
    assert "How often have you used cannabis?" in table_en.stdout
    assert "Encuesta de salud y seguridad 2025" in table_es.stdout
    assert "cannabis_freq: ¿Con qué frecuencia ha consumido cannabis?" in table_es.stdout
    assert "Cada semana" in table_es.stdout and "Cocaína" in table_es.stdout
    md = run(*args, "--lang", "es", "--format", "md").stdout
    assert "## ¿Con qué frecuencia ha consumido cannabis?" in md and "Metanfetamina" in md
    html = run(*args, "--lang", "es-ES", "--format", "html").stdout
    assert "<h2>¿Cuáles de estas ha consumido" in html and "Heroína u otros opioides" in html
    document = json.loads(run(*args, "--lang", "es", "--format", "json").stdout)
    labels = document["labels"]
    assert labels["language"] == "es" and labels["fallbacks"] == []
    assert labels["questions"]["substances"]["options"]["Cocaine"] == "Cocaína"
    values = [c["value"] for q in document["questions"] if q["question"] == "substances"
              for c in q["categories"]]
    assert "Cocaine" in values  # values stay the labels
    assert "labels" not in json.loads(run(*args, "--format", "json").stdout)
    table = list(csv.DictReader(io.StringIO(run(*args, "--lang", "es", "--format",
                                                "csv").stdout)))
    cocaine = next(r for r in table if r["question"] == "substances" and
                   r["option"] == "Cocaine")
    assert (cocaine["question_text"], cocaine["option_text"]) == (
        "¿Cuáles de estas ha consumido en los últimos 12 meses? Marque todas las que "
        "correspondan.", "Cocaína")
    assert "option_text" not in run(*args, "--format", "csv").stdout
