"""`report --lang` (analyst/reports/language.py): questions and options labelled in the chosen
language in every format, each string falling back to the survey's own language where the
translation lacks it (and JSON saying where), the values unchanged; `respond`'s [en] marks."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.analyst.reports import render
from ldpsurvey.analyst.reports.language import in_language
from ldpsurvey.analyst.reports.simulated import simulated_report
from ldpsurvey.client.survey_language import fallback_line, said, shown_survey
from ldpsurvey.shared.errors import AnswerError, ReportRenderError
from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.translations import SurveyText


def survey() -> Survey:
    return Survey.from_dict({
        "id": "habits", "title": "Habits", "version": 1, "language": "en",
        "questions": [
            {"id": "freq", "type": "categorical", "text": "How often?", "epsilon": 2.0,
             "options": ["never", "monthly", "weekly"]},
            {"id": "used", "type": "binary", "text": "Used?", "epsilon": 1.0}],
        "translations": {"es": {"title": "Hábitos", "questions": {
            "freq": {"text": "¿Con qué frecuencia?", "options": {"never": "nunca",
                                                                "weekly": "cada semana"}}}}}})


@pytest.fixture(scope="module")
def report() -> Any:
    return simulated_report(survey(), 500, seed=3)


def test_every_format_in_spanish_with_per_string_fallback(report: Any) -> None:
    es = in_language(report, "es-ES")
    table = render(es, "table")
    assert table.startswith("Hábitos (habits v1)")
    assert "freq: ¿Con qué frecuencia?" in table and "used: Used?" in table  # fell back
    assert "nunca" in table and "cada semana" in table and "monthly" in table
    assert "## ¿Con qué frecuencia?" in render(es, "md")
    html = render(es, "html")
    assert "<h1>Hábitos</h1>" in html and "cada semana" in html
    doc = json.loads(render(es, "json"))
    assert doc["labels"]["language"] == "es" and doc["labels"]["title"] == "Hábitos"
    assert doc["labels"]["questions"]["freq"]["options"] == {
        "never": "nunca", "monthly": "monthly", "weekly": "cada semana"}
    assert doc["labels"]["fallbacks"] == ["questions.freq.options.monthly",
                                          "questions.used.text"]
    assert {k: v for k, v in doc.items() if k != "labels"} == json.loads(render(report,
                                                                               "json"))
    rows = list(csv.DictReader(io.StringIO(render(es, "csv"))))
    weekly = next(r for r in rows if r["option"] == "weekly")
    assert (weekly["question_text"], weekly["option_text"]) == ("¿Con qué frecuencia?",
                                                                "cada semana")


def test_without_lang_nothing_changes_and_a_language_the_survey_lacks_is_refused(
        report: Any) -> None:
    english = in_language(report, "en")  # the base language: the same text
    for fmt in ("table", "md"):
        assert render(english, fmt) == render(report, fmt)
    assert "question_text" not in render(report, "csv")
    assert "labels" not in json.loads(render(report, "json"))
    with pytest.raises(ReportRenderError,
                       match=r"survey 'habits' has no text in 'de'; its languages: en, es$"):
        in_language(report, "de")
    with pytest.raises(ReportRenderError, match="not a BCP 47"):
        in_language(report, "spanish")


def located() -> Survey:
    """Groups of an ordinal question and regions of a location question, some translated."""
    return Survey.from_dict({
        "id": "where", "title": "Where", "version": 1, "language": "en", "questions": [
            {"id": "home", "type": "location", "text": "Where do you live?", "epsilon_geo": 1.0,
             "grid": {"rows": 4, "cols": 4, "cell_km": 1.0},
             "regions": {"town": ["1-2,1-2"], "river": ["4,1-4"]}},
            {"id": "freq", "type": "ordinal", "text": "How often?", "epsilon": 2.0,
             "options": ["never", "monthly", "weekly"],
             "groups": {"at least monthly": ["monthly", "weekly"]}}],
        "translations": {"es": {"questions": {
            "home": {"text": "¿Dónde vive?", "regions": {"town": "pueblo"}},
            "freq": {"options": {"weekly": "semanal"},
                     "groups": {"at least monthly": "al menos una vez al mes"}}}}}})


def test_group_and_region_names_in_every_format() -> None:
    report = simulated_report(located(), 800, seed=2)
    es = in_language(report, "es")
    table = render(es, "table")
    assert "  pueblo " in table and "pueblo = 1,1 + 1,2 + 2,1 + 2,2" in table
    assert "  river " in table  # not translated: its name
    assert "al menos una vez al mes = monthly + semanal" in table
    assert "al menos una vez al mes (monthly + semanal)" in render(es, "md")
    html = render(es, "html")
    assert "al menos una vez al mes (monthly + semanal)" in html
    assert ">pueblo (1,1 + 1,2 + 2,1 + 2,2)<" in html
    labels = json.loads(render(es, "json"))["labels"]
    assert labels["questions"]["home"] == {"text": "¿Dónde vive?",
                                           "regions": {"town": "pueblo", "river": "river"}}
    assert labels["questions"]["freq"]["groups"] == {"at least monthly":
                                                     "al menos una vez al mes"}
    assert "questions.home.regions.river" in labels["fallbacks"]
    rows = list(csv.DictReader(io.StringIO(render(es, "csv"))))
    town = next(r for r in rows if r["kind"] == "group" and r["option"] == "town")
    assert (town["question_text"], town["option_text"]) == ("¿Dónde vive?", "pueblo")
    group = next(r for r in rows if r["kind"] == "group" and r["question"] == "freq")
    assert (group["option"], group["members"], group["option_text"]) == (
        "at least monthly", "monthly|weekly", "al menos una vez al mes")
    for fmt in ("table", "md", "html"):  # the survey's own language: no byte changes
        assert render(in_language(report, "en"), fmt) == render(report, fmt)


def test_respond_names_regions_in_the_language_shown() -> None:
    from ldpsurvey.client.cli import _hint as hint
    from ldpsurvey.client.cli import parse_answer as parse

    s = located()
    home = s.questions[0]
    es = SurveyText(s, "es")
    assert hint(home, es).endswith("or a region (pueblo, river [en])")
    assert hint(home).endswith("or a region (town, river)")
    central = parse(home, "town")
    assert parse(home, "pueblo", es) == central  # its shown name
    assert parse(home, "town", es) == central    # and its label, always
    assert parse(home, "river", es) == parse(home, "river")
    with pytest.raises(AnswerError, match="'pueblo' is not a cell"):
        parse(home, "pueblo")  # without the language: not a name


def test_respond_prompts_regions_in_spanish() -> None:
    """The whole prompt: the hint lists the regions in Spanish, the Spanish name answers."""
    import click
    from ldpsurvey.client.cli import prompt_answers

    s = located()

    @click.command()
    def ask() -> None:
        click.echo(json.dumps(prompt_answers(s, SurveyText(s, "es"))))

    result = CliRunner().invoke(ask, input="pueblo\n2\n")
    assert result.exit_code == 0, result.output
    assert "or a region (pueblo, river [en])" in result.output
    answers = json.loads(result.output.strip().splitlines()[-1])
    from ldpsurvey.client.cli import parse_answer

    assert answers == {"home": parse_answer(s.questions[0], "town"),
                       "freq": "monthly"}


def test_respond_marks_what_fell_back() -> None:
    s = survey()
    text = SurveyText(s, "es")
    assert said(text.question("used"), text) == "Used? [en]"
    assert said(text.question("freq"), text) == "¿Con qué frecuencia?"
    assert fallback_line(text) == ("Survey text in es; 2 string(s) not translated are shown "
                                   "in en, marked [en].")
    shown = shown_survey(s, text)
    assert [q.text for q in shown.questions] == ["¿Con qué frecuencia?", "Used? [en]"]
    assert shown.questions[0].options == s.questions[0].options  # values unchanged
    assert shown_survey(s, SurveyText(s)) is s and fallback_line(SurveyText(s)) is None


@pytest.mark.parametrize("tag", ["", "e s", "english"])
def test_respond_refuses_a_bad_lang_before_fetching_anything(tmp_path, tag: str) -> None:
    """--lang is checked first: it used to be refused after the survey was fetched and its
    signing key pinned on first use in the state directory."""
    from support.clients import FakeServer

    server = FakeServer(lambda method, path, body: (500, {}))
    try:
        state = tmp_path / "device"
        result = CliRunner().invoke(cli, ["respond", "--server", server.url, "--survey", "s",
                                          "--state", str(state), "--dry-run", "--lang", tag])
    finally:
        server.close()
    assert result.exit_code == 2, result.output
    assert "Invalid value for '--lang'" in result.output and "BCP 47" in result.output
    assert server.requests == [] and not state.exists()


def _lang_commands() -> list[tuple[list[str], Any]]:
    """Every (sub)command of `ldpsurvey` with a --lang option, by its path of names."""
    import click

    found: list[tuple[list[str], Any]] = []

    def walk(command: Any, path: list[str]) -> None:
        if isinstance(command, click.Group):
            ctx = click.Context(command)
            for name in command.list_commands(ctx):
                walk(command.get_command(ctx, name), [*path, name])
        elif any("--lang" in p.opts for p in command.params if isinstance(p, click.Option)):
            found.append((path, command))

    walk(cli, [])
    return found


def test_every_lang_option_is_checked_by_the_one_callback() -> None:
    from ldpsurvey.shared.cli_help import language_tag

    commands = _lang_commands()
    assert {" ".join(path) for path, _ in commands} >= {"respond", "report", "regress"}
    for path, command in commands:
        option = next(p for p in command.params if "--lang" in getattr(p, "opts", ()))
        assert option.callback is language_tag, path


@pytest.mark.parametrize("path", [" ".join(p) for p, _ in _lang_commands()])
def test_a_posix_locale_is_a_usage_error_for_every_lang_option(path: str) -> None:
    """es_ES is how a POSIX locale is spelled, not a BCP 47 tag: `report --lang es_ES` was
    accepted (canonical_tag reads '_' as '-'), though docs/languages.md calls a tag that is not
    BCP 47 a usage error. Refused before any other option is looked at, naming the tag to
    write instead."""
    result = CliRunner().invoke(cli, [*path.split(), "--lang", "es_ES"])
    assert result.exit_code == 2, result.output
    assert "Invalid value for '--lang'" in result.output
    assert "'es_ES' is not a BCP 47 language tag" in result.output and "'es-ES'" in result.output
    ok = CliRunner().invoke(cli, [*path.split(), "--lang", "es-ES"])
    assert "Invalid value for '--lang'" not in ok.output


def test_a_posix_locale_is_refused_by_the_report_api_too(report: Any) -> None:
    with pytest.raises(ReportRenderError, match="write 'es-ES'"):
        in_language(report, "es_ES")
    assert in_language(report, "ES").language == "es"  # BCP 47 is case-insensitive


def aged() -> Survey:
    """Options written in digits (the same in every language) beside one in words."""
    return Survey.from_dict({
        "id": "ages", "title": "Ages", "version": 1, "language": "en", "questions": [
            {"id": "age", "type": "categorical", "text": "Your age?", "epsilon": 2.0,
             "options": ["18-24", "25-64", "65 or older", "50 %"]}],
        "translations": {"es": {"title": "Edades", "questions": {
            "age": {"text": "¿Su edad?", "options": {"65 or older": "65 o más"}}}}}})


def test_number_only_options_are_not_marked_as_fallbacks() -> None:
    """"18-24" untranslated was marked "[en]" (and the page said "(en inglés)") unless the
    designer "translated" the digits; text without letters is the same in every language."""
    import click
    from ldpsurvey.client.cli import prompt_answers

    s = aged()
    es = SurveyText(s, "es")
    assert [es.option("age", o).fell_back for o in s.questions[0].options] == [
        False, False, False, False]
    assert es.fallbacks() == [] and fallback_line(es) == "Survey text in es."
    fr_less = SurveyText(Survey.from_dict({**s.to_dict(), "translations": {
        "es": {"title": "Edades"}}}), "es")
    assert fr_less.fallbacks() == ["questions.age.text", "questions.age.options.65 or older"]

    @click.command()
    def ask() -> None:
        click.echo(json.dumps(prompt_answers(s, es)))

    result = CliRunner().invoke(ask, input="1\n")
    assert result.exit_code == 0, result.output
    assert "[1] 18-24\n" in result.output and "[4] 50 %\n" in result.output
    assert "[3] 65 o más\n" in result.output and "[en]" not in result.output
    report = simulated_report(s, 300, seed=1)
    assert json.loads(render(in_language(report, "es"), "json"))["labels"]["fallbacks"] == []
