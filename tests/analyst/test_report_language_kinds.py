"""`report --lang` and `regress --lang` on every kind of report (crosstabs, subgroups, designs,
two-server batches, regressions) in every format, as the survey's estimates report does
(analyst/reports/language.py): the questions, options, groups and the subgroups' values in
the chosen language, each string falling back on its own; estimates keep the labels as values,
so JSON is the document without --lang plus `labels`, CSV the same lines plus text columns; and
`--lang` of the survey's own language changes no byte of the text formats. Without --lang,
tests/analyst/test_srs_reports_unchanged.py keeps every byte."""

from __future__ import annotations

import copy
import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.analyst.reports.language import in_language
from ldpsurvey.analyst.reports.two_server import (
    TwoServerReport,
    render_two_server,
    two_server_report,
)
from ldpsurvey.shared.errors import ReportRenderError
from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.two_server.design import BatchDesign, estimate_batches
from support import designed
from support.batches import collected, simulate
from support.two_server import two_server_survey

SPANISH = {"title": "Ola de bienestar 2026", "questions": {
    "region": {"text": "¿Dónde vive?", "options": {"north": "norte", "south": "sur"}},
    "sex": {"options": {"female": "mujer"}},
    "smoker": {"text": "¿Fuma?"},
    "mood": {"text": "¿Cómo está su ánimo?", "options": {"low": "bajo", "high": "alto"},
             "groups": {"not low": "no bajo"}}}}
SURVEY = {**copy.deepcopy(designed.SURVEY), "id": "wave-es", "language": "en",
          "translations": {"es": SPANISH}}
# English text every translated report replaces wherever it shows it (the text formats).
REPLACED = ("How is your mood?", "Do you smoke?", "Where do you live?", "Wellbeing wave 2026")

KINDS = {
    "estimates": ((), ("¿Fuma?", "bajo", "no bajo", "norte", "mujer")),
    "crosstab": (("--crosstab", "smoker", "mood"), ("¿Fuma?", "¿Cómo está su ánimo?", "bajo",
                                                     "alto")),
    "crosstab-group": (("--crosstab", "mood:not low", "region"),
                       ("group: no bajo, against the rest", "not no bajo", "norte")),
    "crosstab-bins": (("--crosstab", "region", "drinks", "--bins", "0,5,10"),
                      ("¿Dónde vive?", "norte", "sur")),
    "subgroups": (("--by", "region"), ("region = norte", "region = sur", "¿Fuma?",
                                       "no bajo")),
    "design": (("--weighted",), ("¿Fuma?", "bajo", "no bajo", "mujer")),
    "design-subgroups": (("--weighted", "--by", "sex"), ("sex = mujer", "sex = male",
                                                          "¿Cómo está su ánimo?")),
    "design-crosstab": (("--weighted", "--crosstab", "mood", "region"),
                        ("¿Cómo está su ánimo?", "alto", "norte")),
}
REGRESSIONS = {
    "regress": ("--outcome", "smoker", "--covariates", "region,mood"),
    "regress-design": ("--outcome", "mood", "--level", "high", "--covariates", "region",
                       "--weighted"),
}


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return designed.build(tmp_path_factory.mktemp("languages") / "wave.db",
                          survey=SURVEY).path


def run(db: Path, command: str, *args: str) -> str:
    result = CliRunner().invoke(cli, [command, "--db", str(db), "--survey", "wave-es", *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def same_lines_plus_text(translated: str, plain: str, columns: tuple[str, ...]) -> None:
    """CSV with --lang: the same lines, each with `columns` added at its end."""
    with_text = list(csv.reader(io.StringIO(translated)))
    without = list(csv.reader(io.StringIO(plain)))
    assert with_text[0] == [*without[0], *columns]
    assert [row[:len(without[0])] for row in with_text] == without


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("fmt", ["table", "md", "html"])
def test_every_report_reads_in_spanish(database: Path, kind: str, fmt: str) -> None:
    args, expected = KINDS[kind]
    text = run(database, "report", *args, "--format", fmt, "--lang", "es-MX")
    text = text.replace("&#x27;", "'")
    assert [s for s in expected if s not in text] == []
    assert [s for s in REPLACED if s in text] == []


@pytest.mark.parametrize("kind", list(KINDS))
def test_data_formats_keep_the_numbers_and_add_the_text(database: Path, kind: str) -> None:
    args, _ = KINDS[kind]
    doc = json.loads(run(database, "report", *args, "--format", "json", "--lang", "es"))
    labels = doc.pop("labels")
    assert doc == json.loads(run(database, "report", *args, "--format", "json"))
    assert (labels["language"], labels["fell_back_to"]) == ("es", "en")
    assert "smoker" not in labels["questions"] or labels["questions"]["smoker"] == {
        "text": "¿Fuma?"}
    columns = (("rows_question_text", "cols_question_text", "row_text", "col_text")
               if "crosstab" in kind else
               ("question_text", "option_text", "subgroup_text") if "subgroups" in kind else
               ("question_text", "option_text"))
    same_lines_plus_text(run(database, "report", *args, "--format", "csv", "--lang", "es"),
                         run(database, "report", *args, "--format", "csv"), columns)


def test_json_labels_name_groups_and_what_fell_back(database: Path) -> None:
    labels = json.loads(run(database, "report", "--crosstab", "mood:not low", "region",
                            "--format", "json", "--lang", "es"))["labels"]
    assert labels["questions"]["mood"]["groups"] == {"not low": "no bajo"}
    assert labels["cells"] == {"rows": ["no bajo", "not no bajo"],
                               "cols": ["norte", "sur", "east", "west"]}
    assert set(labels["questions"]) == {"mood", "region"}  # the crosstab's questions only
    assert labels["fallbacks"] == ["questions.region.options.east",
                                   "questions.region.options.west",
                                   "questions.mood.options.mid"]
    rows = list(csv.DictReader(io.StringIO(run(
        database, "report", "--crosstab", "mood:not low", "region", "--format", "csv",
        "--lang", "es"))))
    cell = next(r for r in rows if r["row"] == "not not low" and r["col"] == "south")
    assert (cell["row_text"], cell["col_text"]) == ("not no bajo", "sur")
    assert cell["cols_question_text"] == "¿Dónde vive?"


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("fmt", ["table", "md", "html"])
def test_the_surveys_own_language_changes_no_byte(database: Path, kind: str, fmt: str) -> None:
    args, _ = KINDS[kind]
    assert run(database, "report", *args, "--format", fmt, "--lang", "en") == run(
        database, "report", *args, "--format", fmt)


@pytest.mark.parametrize("kind", list(REGRESSIONS))
def test_regressions_name_questions_in_spanish(database: Path, kind: str) -> None:
    args = REGRESSIONS[kind]
    table = run(database, "regress", *args, "--lang", "es")
    html = run(database, "regress", *args, "--format", "html", "--lang", "es")
    for text in (table, html):
        assert "¿Dónde vive?" in text and "sur" in text
        assert [s for s in REPLACED if s in text] == []
    if kind == "regress":
        assert table.startswith("Logistic regression of ¿Fuma? = yes on ¿Dónde vive?; "
                                "¿Cómo está su ánimo?:")
        assert "¿Dónde vive?: sur [region=south]" in table
        assert "¿Cómo está su ánimo?: alto [mood=high]" in table
    else:
        assert "Logistic regression of ¿Cómo está su ánimo? = alto on ¿Dónde vive?" in table
    assert "<h1>Ola de bienestar 2026</h1>" in html
    doc = json.loads(run(database, "regress", *args, "--format", "json", "--lang", "es"))
    labels = doc.pop("labels")
    plain = json.loads(run(database, "regress", *args, "--format", "json"))
    assert doc == plain and set(labels["questions"]) == {plain["outcome"],
                                                        *plain["covariates"]}
    translated = run(database, "regress", *args, "--format", "csv", "--lang", "es")
    same_lines_plus_text(translated, run(database, "regress", *args, "--format", "csv"),
                         ("outcome_text", "outcome_level_text", "coefficient_text"))
    assert "¿Dónde vive?: sur" in translated
    # the page names questions in words already: in the survey's own language, no change
    assert run(database, "regress", *args, "--format", "html", "--lang", "en") == run(
        database, "regress", *args, "--format", "html")


@pytest.mark.parametrize("command", [
    ("report",), ("report", "--format", "json"), ("report", "--crosstab", "smoker", "mood"),
    ("report", "--by", "region", "--format", "csv"), ("report", "--weighted"),
    ("report", "--weighted", "--by", "sex"), ("report", "--weighted", "--crosstab", "mood",
                                              "region", "--format", "html"),
    ("regress", "--outcome", "smoker", "--covariates", "region"),
    ("regress", "--outcome", "smoker", "--covariates", "region", "--format", "json"),
    ("regress", "--outcome", "smoker", "--covariates", "region", "--weighted")])
def test_a_language_the_survey_lacks_is_a_one_line_error(database: Path,
                                                        command: tuple[str, ...]) -> None:
    out = database.parent / "report.out"
    result = CliRunner().invoke(cli, [command[0], "--db", str(database), "--survey", "wave-es",
                                      *command[1:], "--lang", "de", "--out", str(out)])
    assert result.exit_code == 1, result.output
    assert result.stdout == "" and not out.exists()
    error = "Error: --lang: survey 'wave-es' has no text in 'de'; its languages: en, es"
    if command[0] == "report":  # the one line, before any weighting (progress on stderr)
        assert result.stderr.splitlines() == [error]
    else:  # regress says what it fits, then refuses before fitting or weighting
        assert result.stderr.splitlines() == ["fitting smoker on region...", error]


@pytest.mark.parametrize("command", [
    ["report", "--crosstab", "a", "b"], ["report", "--by", "x"], ["report", "--weighted"],
    ["report", "--batch", "all"], ["regress", "--outcome", "y"]])
def test_a_bad_tag_is_refused_before_anything_is_fetched(command: list[str]) -> None:
    from support.clients import FakeServer

    server = FakeServer(lambda method, path, body: (500, {}))
    try:
        result = CliRunner().invoke(cli, [command[0], "--server", server.url, "--token", "t",
                                          "--survey", "s", *command[1:], "--lang", "spanish"])
    finally:
        server.close()
    assert result.exit_code == 2, result.output
    assert "Invalid value for '--lang'" in result.output and "BCP 47" in result.output
    assert server.requests == []


# --- two-server batches: one batch, and every batch combined by its design ------------------


@pytest.fixture(scope="module")
def batches() -> dict[str, TwoServerReport]:
    d = two_server_survey("http://h", b"\x01" * 32, b"\x02" * 32)
    d["questions"][1]["groups"] = {"good": ["high", "great"]}
    d["language"] = "en"
    d["translations"] = {"es": {"title": "Pulso", "questions": {
        "smoker": {"text": "¿Fuma?"},
        "mood": {"text": "¿Ánimo?", "options": {"low": "bajo"}, "groups": {"good": "bueno"}}}}}
    survey = Survey.from_dict(d)
    rng = np.random.default_rng(5)  # a simulation: the servers' noise drawn by numpy
    moods = ["low", "mid", "high", "great"]
    answers = [{"smoker": bool(rng.random() < 0.3), "mood": moods[int(rng.integers(4))],
                "hours": int(rng.integers(0, 13))} for _ in range(400)]
    parts = [("north" if i % 3 else "south", 1 + i % 4) for i in range(400)]
    one = two_server_report(survey, collected(survey, answers, "batch-1",
                                              np.random.default_rng(1)))
    document = estimate_batches(survey, simulate(survey, answers, parts,
                                                 np.random.default_rng(2)),
                                BatchDesign(variance="groups"), 0.95)
    return {"batch": one, "all": TwoServerReport(survey=survey.to_dict(), estimates=document)}


@pytest.mark.parametrize("which", ["batch", "all"])
def test_two_server_reports_read_in_spanish(batches: dict[str, TwoServerReport],
                                            which: str) -> None:
    report = batches[which]
    es = in_language(report, "es")
    with pytest.raises(ReportRenderError, match="has no text in 'de'; its languages: en, es"):
        in_language(report, "de")
    for fmt in ("table", "md", "html"):
        text = render_two_server(es, fmt)
        for shown in ("Pulso", "¿Fuma?", "¿Ánimo?", "bajo", "bueno", "high + great",
                      "yes / bajo"):
            assert shown in text, (fmt, shown)
        assert "Do you smoke?" not in text and "Mood?" not in text
        assert render_two_server(in_language(report, "en"), fmt) == render_two_server(
            report, fmt)
    doc = json.loads(render_two_server(es, "json"))
    assert doc.pop("labels")["questions"]["mood"]["groups"] == {"good": "bueno"}
    assert doc == json.loads(render_two_server(report, "json"))
    same_lines_plus_text(render_two_server(es, "csv"), render_two_server(report, "csv"),
                         ("question_text", "option_text"))
    rows = list(csv.DictReader(io.StringIO(render_two_server(es, "csv"))))
    cell = next(r for r in rows if r["option"] == "no / low")
    assert (cell["question_text"], cell["option_text"]) == (
        "Joint shares: smoker (rows) and mood (columns)", "no / bajo")
