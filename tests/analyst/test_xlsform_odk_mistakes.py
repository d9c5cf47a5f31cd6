"""`ldpsurvey import xlsform` on what real forms get wrong and ODK runs anyway (the IMPACT MSNA's
rows, issue 42), each case a small markdown XLSForm:

- a condition naming a choice its question does not have (`'piped_neighbor'` for
  `piped_neighbour`): ODK reads that term as false (`!=` true); imported so, listed to check;
- an exclusivity naming a choice its list does not have: the others stay exclusive;
- an exclusivity written without parentheses (`not(selected(., 'a') or selected(., 'b') and
  count-selected(.) > 1)`): ODK never lets 'a' be ticked, so 'a' is not offered, 'b' is
  exclusive;
- two choices of one list with one label, and labels over 200 characters, which are option
  texts;
- a begin_group with repeat_count, which ODK shows as a plain group;
- an integer bounded on one side (`. >= 0`), bounded by the researcher (ldp_min, ldp_max,
  --integer-max), never by a made-up default.

Every row imported as ODK runs it is listed under "imported as ODK runs them; check", marked
`check` in --problems, warned about on stderr, and the exit status is 0."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.analyst.xlsform_import import (
    CHECK,
    FIX,
    ImportOptions,
    ImportRefused,
    XlsFormError,
    import_xlsform,
)
from ldpsurvey.shared.survey import Survey


def md(tmp_path: Path, survey: list[list[str]], choices: list[list[str]],
       name: str = "form.md") -> Path:
    """A markdown XLSForm (pyxform's layout) of these survey and choices rows, the header
    first."""
    lines = ["| survey |" + " |" * len(survey[0])]
    lines += ["| | " + " | ".join(row) + " |" for row in survey]
    lines += ["| choices |" + " |" * len(choices[0])]
    lines += ["| | " + " | ".join(row) + " |" for row in choices]
    lines += ["| settings | |", "| | form_id | version |", "| | t | 1 |"]
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def cli_import(path: Path, out: Path, *args: str) -> Any:
    return CliRunner().invoke(cli, ["import", "xlsform", str(path), "--out", str(out),
                                    "--epsilon", "1", *args])


def rows_of(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


HEAD = ["type", "name", "label", "required", "relevant", "constraint"]
SOURCES = [["list_name", "name", "label"],
           ["src", "piped_dwelling", "Piped into the dwelling"],
           ["src", "piped_neighbour", "Piped to a neighbour"],
           ["src", "well", "A well"],
           ["yn", "yes", "Yes"], ["yn", "no", "No"]]


def test_a_condition_naming_a_choice_the_question_lacks_is_imported_as_odk_runs_it(
        tmp_path: Path) -> None:
    """MSNA rows 264, 266, 287, 291: `selected(${src}, 'piped_neighbor')` where the choice is
    `piped_neighbour`. ODK reads the term as false; the row is imported so (with or without
    --skip-unsupported), and so is the row that reads it (rows 265, 285)."""
    path = md(tmp_path, [
        HEAD,
        ["select_one src", "source", "Water source?", "yes", "", ""],
        ["select_one yn", "time_yn", "Do you know the time?", "yes",
         "selected(${source}, 'piped_dwelling') or selected(${source}, 'piped_neighbor')", ""],
        ["select_one yn", "far", "Is it far?", "yes",
         "${time_yn} = 'yes' and ${source} != 'piped_neighbor'", ""],
    ], SOURCES)
    result = import_xlsform(path, ImportOptions(epsilon=1))  # no --skip-unsupported needed
    survey = result.survey
    assert [q.id for q in survey.questions] == ["source", "time_yn", "far"]
    assert survey.question("time_yn").relevant == "source == 'Piped into the dwelling'"
    assert survey.question("far").relevant == "time_yn == true"  # `!=` a missing choice: true
    assert result.left_out == ()
    assert [(p.row, p.name, p.kind) for p in result.to_check] == [
        (3, "time_yn", CHECK), (4, "far", CHECK)]
    said = result.to_check[0].reason
    assert "'piped_neighbor' is not a choice of source" in said
    assert "ODK reads that term as false: did you mean 'piped_neighbour'?" in said
    assert "ODK reads that term as true" in result.to_check[1].reason
    assert result.counts.summary() == ("kept 3 of 3 rows: 3 select_one (2 row(s) imported as "
                                       "ODK runs them, to check)")

    out, listing = tmp_path / "s.toml", tmp_path / "problems.csv"
    res = cli_import(path, out, "--skip-unsupported", "--problems", str(listing))
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    heading = lines.index("imported as ODK runs them; check (2 row(s)):")
    assert lines[heading + 1].startswith("  row 3 (time_yn, select_one yn): its relevant ")
    assert res.stderr.splitlines()[-1] == (
        f"warning: 2 row(s) of form.md are wrong in the form and imported as ODK runs them "
        f"(listed above and in the header of {out} and in {listing}): check them")
    assert [(r["name"], r["kind"]) for r in rows_of(listing)] == [("time_yn", CHECK),
                                                                  ("far", CHECK)]
    header = out.read_text(encoding="utf-8").split("[", 1)[0]
    assert "# 2 row(s) imported as ODK runs them; check them" in header


def test_a_group_condition_naming_a_choice_the_question_lacks_is_listed_once(
        tmp_path: Path) -> None:
    """A group's condition is said of the group row; its questions take it as translated."""
    path = md(tmp_path, [
        HEAD,
        ["select_one src", "source", "Water source?", "yes", "", ""],
        ["begin_group", "piped", "Piped", "", "selected(${source}, 'piped_neighbor') or "
         "selected(${source}, 'piped_dwelling')", ""],
        ["select_one yn", "daily", "Every day?", "yes", "", ""],
        ["select_one yn", "paid", "Paid?", "yes", "${daily} = 'yes'", ""],
        ["end_group", "", "", "", "", ""],
    ], SOURCES)
    result = import_xlsform(path, ImportOptions(epsilon=1))
    assert result.survey.question("daily").relevant == "source == 'Piped into the dwelling'"
    assert [(p.row, p.name, p.type) for p in result.to_check] == [(3, "piped", "begin_group")]


def test_a_yes_no_condition_on_a_word_that_is_no_choice_says_how_to_write_it(
        tmp_path: Path) -> None:
    path = md(tmp_path, [
        HEAD,
        ["select_one yn", "used", "Used?", "yes", "", ""],
        ["select_one yn", "paid", "Paid?", "yes", "${used} = 'true' or ${used} = 'yes'", ""],
    ], SOURCES)
    result = import_xlsform(path, ImportOptions(epsilon=1))
    assert result.survey.question("paid").relevant == "used == true"
    [check] = result.to_check
    assert "write ${used} = 'yes' for yes, 'no' for no" in check.reason


MULTI = [["list_name", "name", "label", "label::French (fr)"],
         ["need", "food", "Food", "Nourriture"],
         ["need", "water", "Water", "Eau"],
         ["need", "none", "None of these", "Aucun"],
         ["need", "dnk", "Don't know", "Ne sait pas"],
         ["need", "pnta", "Prefer not to say", "Préfère ne pas dire"],
         ["yn", "yes", "Yes", "Oui"], ["yn", "no", "No", "Non"]]
MULTI_HEAD = ["type", "name", "label", "label::French (fr)", "required", "relevant",
              "constraint"]


def test_an_exclusivity_naming_a_choice_the_list_lacks_keeps_the_others_exclusive(
        tmp_path: Path) -> None:
    """MSNA rows 145, 423, 675, 691, 692: a template's constraint kept on a list without one
    of its choices. ODK reads `selected(., 'not_affected')` as false: the others stay
    exclusive; a constraint all of whose choices are missing leaves none exclusive."""
    path = md(tmp_path, [
        MULTI_HEAD,
        ["select_multiple need", "needs", "Needs?", "Besoins ?", "yes", "",
         "not((selected(., 'none') or selected(., 'not_affected')) and count-selected(.) > 1)"],
        ["select_multiple need", "wants", "Wants?", "Envies ?", "yes", "",
         "not(selected(., 'nothing') and count-selected(.) > 1)"],
    ], MULTI)
    result = import_xlsform(path, ImportOptions(epsilon=1))
    questions = {q["id"]: q for q in result.data["questions"]}
    assert questions["needs"]["exclusive"] == ["None of these"]
    assert "exclusive" not in questions["wants"]
    assert [(p.name, p.kind) for p in result.to_check] == [("needs", CHECK), ("wants", CHECK)]
    assert "names 'not_affected', not a choice of this question" in result.to_check[0].reason
    assert "'none' ticked alone" in result.to_check[0].reason
    assert "no option is exclusive" in result.to_check[1].reason
    assert "CHECK: its exclusivity constraint names 'not_affected'" in result.toml


def test_an_exclusivity_written_without_parentheses_is_imported_as_odk_runs_it(
        tmp_path: Path) -> None:
    """MSNA rows 133, 137, 652, 653, 657, 671, 677: `not(selected(., 'dnk') or selected(.,
    'pnta') and count-selected(.) > 1)`. `and` binds before `or`: ODK never lets 'dnk' be
    ticked and lets 'pnta' be ticked alone. The import keeps that meaning: 'dnk' is not
    offered (in any language), 'pnta' is exclusive, and a condition reading 'dnk' is false,
    as in ODK; the row is listed to check with the parentheses that were likely meant."""
    path = md(tmp_path, [
        MULTI_HEAD,
        ["select_multiple need", "needs", "Needs?", "Besoins ?", "yes", "",
         "not(selected(., 'dnk') or selected(., 'pnta') and count-selected(.) > 1)"],
        ["select_one yn", "why", "Why?", "Pourquoi ?", "yes",
         "selected(${needs}, 'dnk') or selected(${needs}, 'food')", ""],
    ], MULTI)
    result = import_xlsform(path, ImportOptions(epsilon=1))
    needs = result.survey.question("needs")
    assert needs.options == ("Food", "Water", "None of these", "Prefer not to say")
    assert result.data["questions"][0]["exclusive"] == ["Prefer not to say"]
    assert "Ne sait pas" not in str(result.data["translations"])
    assert result.survey.question("why").relevant == "selected(needs, 'Food')"
    assert [(p.name, p.kind, p.topic) for p in result.to_check] == [
        ("needs", CHECK, "exclusivity constraints written wrongly"),
        ("why", CHECK, "conditions that name what the form does not have")]
    said = result.to_check[0]
    assert "forbids ticking 'dnk' at all" in said.reason
    assert "imported as ODK runs it: 'dnk' not offered; 'pnta' ticked alone" in said.reason
    assert "not((selected(., 'a') or selected(., 'b')) and count-selected(.) > 1)" in (
        said.alternative)
    res = cli_import(path, tmp_path / "s.toml")  # imports as it is: exit 0, said
    assert res.exit_code == 0, res.output
    assert "imported as ODK runs them; check (2 row(s)):" in res.stdout


ADMIN = [["list_name", "name", "label", "label::French (fr)"],
         ["admin1", "ht03", "North", "Nord"],
         ["admin1", "ht07", "South", "Sud"],
         ["admin1", "lb5", "North", "Nord"],
         ["admin1", "lb6", "Beirut", "Beyrouth"]]


def test_two_choices_with_one_label_are_told_apart_by_the_later_ones_name(
        tmp_path: Path) -> None:
    """MSNA row 13 (admin1): Haiti's and Lebanon's 'North'. An ldpsurvey option is its text
    (the answer value), so the later one reads 'North (lb5)' in every language."""
    path = md(tmp_path, [["type", "name", "label", "label::French (fr)", "required"],
                         ["select_one admin1", "region", "Region?", "Région ?", "yes"]], ADMIN)
    result = import_xlsform(path, ImportOptions(epsilon=1))
    question = result.survey.question("region")
    assert question.options == ("North", "South", "North (lb5)", "Beirut")
    shown = result.data["translations"]["fr"]["questions"]["region"]["options"]
    assert shown["North (lb5)"] == "Nord (lb5)" and shown["North"] == "Nord"
    assert "list 'admin1' (region): 1 choice(s) have the label of an earlier one and are " \
           "shown with their name (an ldpsurvey option is its text): 'lb5' as 'North (lb5)' " \
           "('ht03' has its label)" in result.notes
    assert result.left_out == () and result.to_check == ()


def test_a_choice_label_longer_than_200_characters_is_an_option_text(tmp_path: Path) -> None:
    """MSNA rows 107 and 109: labels of 201 and 221 characters (248 and 269 in French). The
    200-character bound of an option text was arbitrary; it is 500."""
    long_en, long_fr = "Economic reasons " + "e" * 230, "Raisons économiques " + "f" * 260
    path = md(tmp_path, [["type", "name", "label", "label::French (fr)", "required"],
                         ["select_one why", "why", "Why did you leave?", "Pourquoi ?", "yes"]],
              [["list_name", "name", "label", "label::French (fr)"],
               ["why", "econ", long_en, long_fr], ["why", "conflict", "Conflict", "Conflit"]])
    result = import_xlsform(path, ImportOptions(epsilon=1))
    assert result.survey.question("why").options == (long_en, "Conflict")
    assert Survey.from_dict(result.data).canonical_bytes() == result.survey.canonical_bytes()
    too_long = md(tmp_path, [["type", "name", "label", "required"],
                             ["select_one why", "why", "Why?", "yes"]],
                  [["list_name", "name", "label"], ["why", "econ", "x" * 501],
                   ["why", "conflict", "Conflict"]], name="long.md")
    with pytest.raises(ImportRefused, match="longer than 500 characters"):
        import_xlsform(too_long, ImportOptions(epsilon=1))


def test_a_group_with_repeat_count_is_a_plain_group_as_in_odk(tmp_path: Path) -> None:
    """MSNA row 161 (hesper): pyxform keeps a begin_group with repeat_count a group, and ODK
    shows it once; the import did the same only for a begin_repeat."""
    path = md(tmp_path, [
        ["type", "name", "label", "required", "relevant", "repeat_count"],
        ["select_one yn", "used", "Used?", "yes", "", ""],
        ["begin_group", "more", "More", "", "${used} = 'yes'", "3"],
        ["select_one yn", "paid", "Paid?", "yes", "", ""],
        ["end_group", "", "", "", "", ""],
    ], SOURCES)
    result = import_xlsform(path, ImportOptions(epsilon=1))
    assert [q.id for q in result.survey.questions] == ["used", "paid"]
    assert result.survey.question("paid").relevant == "used == true"
    assert any("row 3 (more, begin_group): its repeat_count is ignored, as ODK ignores it"
               in note for note in result.notes)


INTEGERS = [["type", "name", "label", "required", "constraint", "ldp_min", "ldp_max"],
            ["integer", "oxen", "How many oxen?", "yes", ". >= 0", "", ""],
            ["integer", "cows", "How many cows?", "yes", ". > 0", "", "40"],
            ["integer", "trips", "How many trips?", "yes", "", "1", "30"],
            ["integer", "days", "How many days?", "yes", "", "", ""],
            ["integer", "hours", "How many hours?", "yes", ". = -999 or . >= 0", "", ""]]


def test_an_integer_bounded_below_only_is_left_out_unless_the_researcher_bounds_it(
        tmp_path: Path) -> None:
    """MSNA: 39 integers bounded below only (`. >= 0`, `. > 0`). Without a bound chosen by
    the researcher they stay out (no default is made up); ldp_min / ldp_max bound a row,
    --integer-max every integer bounded below only (a row's ldp_max first); an integer
    bounded on neither side needs both cells."""
    path = md(tmp_path, INTEGERS, SOURCES)
    plain = import_xlsform(path, ImportOptions(epsilon=1, skip_unsupported=True))
    assert [q.id for q in plain.survey.questions] == ["cows", "trips"]
    assert (plain.survey.question("cows").min, plain.survey.question("cows").max) == (1, 40)
    assert (plain.survey.question("trips").min, plain.survey.question("trips").max) == (1, 30)
    assert "bounds only one side" in {p.name: p for p in plain.left_out}["oxen"].reason
    assert "--integer-max N" in {p.name: p for p in plain.left_out}["oxen"].alternative

    bounded = import_xlsform(path, ImportOptions(epsilon=1, skip_unsupported=True,
                                                 integer_max=20))
    assert [q.id for q in bounded.survey.questions] == ["oxen", "cows", "trips", "hours"]
    ranges = {q.id: (q.min, q.max) for q in bounded.survey.questions}
    assert ranges == {"oxen": (0, 20), "cows": (1, 40), "trips": (1, 30), "hours": (0, 20)}
    assert bounded.survey.question("hours").special  # -999: don't know, beside the range
    assert [p.name for p in bounded.left_out] == ["days"]  # bounded on neither side
    assert any("row 2 (oxen, integer): imported as an integer from 0 to 20: its max 20 is "
               "--integer-max" in note for note in bounded.notes)
    assert "its max 20 is --integer-max" in bounded.toml

    res = cli_import(path, tmp_path / "s.toml", "--skip-unsupported", "--integer-max", "20")
    assert res.exit_code == 0, res.output
    assert "kept 4 of 5 rows: 4 integer" in res.stderr


@pytest.mark.parametrize("row, words", [
    (["integer", "n", "N?", "yes", ". >= 0 and . <= 10", "", "20"],
     "ldp_max 20 differs from its constraint's max 10"),
    (["integer", "n", "N?", "yes", ". >= 0", "", "ten"], "ldp_max 'ten' is not a whole number"),
    (["integer", "n", "N?", "yes", ". >= 5", "", "5"], "leaves fewer than two values"),
    (["select_one yn", "n", "N?", "yes", "", "", "3"],
     "ldp_min and ldp_max bound an integer row's range"),
])
def test_a_bound_that_cannot_hold_needs_fixing(tmp_path: Path, row: list[str],
                                               words: str) -> None:
    path = md(tmp_path, [INTEGERS[0], row], SOURCES)
    with pytest.raises(ImportRefused) as info:
        import_xlsform(path, ImportOptions(epsilon=1))
    [problem] = info.value.problems
    assert problem.kind == FIX and words in problem.reason



CHECKED_ROW = ["select_one yn", "time_yn", "Do you know the time?", "yes",
               "selected(${source}, 'piped_dwelling') or selected(${source}, 'piped_neighbor')",
               ""]  # to check: ODK reads the second term as false


@pytest.mark.parametrize("listing", [False, True])
def test_a_refused_import_says_the_rows_to_check_before_its_error(
        tmp_path: Path, listing: bool) -> None:
    """Refused for a free-text row (no --skip-unsupported): the row to check found on the way
    is said too, before the one-line error, and written to --problems (after the rows to fix,
    before the rest), so the designer sees everything at once."""
    path = md(tmp_path, [
        HEAD, ["select_one src", "source", "Water source?", "yes", "", ""], CHECKED_ROW,
        ["text", "why", "Why?", "yes", "", ""]], SOURCES)
    with pytest.raises(ImportRefused) as caught:
        import_xlsform(path, ImportOptions(epsilon=1))
    assert [(p.row, p.name, p.kind) for p in caught.value.checks] == [(3, "time_yn", CHECK)]
    problems = tmp_path / "problems.csv"
    res = cli_import(path, tmp_path / "s.toml",
                     *(("--problems", str(problems)) if listing else ()))
    assert res.exit_code != 0
    lines = res.stderr.splitlines()
    heading = lines.index("wrong in the form, would be imported as ODK runs them; check "
                          "(1 row(s)):")
    assert lines[heading + 1].startswith("  row 3 (time_yn, select_one yn): its relevant ")
    assert lines[-1].startswith("Error: 1 row(s) of form.md cannot be collected privately")
    if listing:
        assert [(r["name"], r["kind"]) for r in rows_of(problems)] == [
            ("time_yn", CHECK), ("why", "unsupported")]


GROUP_FILTERED = [*HEAD, "choice_filter"]  # a group's choice_filter: pyxform drops it


def test_an_import_with_no_question_left_says_the_rows_to_check(tmp_path: Path) -> None:
    """Every question left out (--skip-unsupported): the rows to check are said all the same,
    before the one-line error."""
    path = md(tmp_path, [
        GROUP_FILTERED, ["text", "source", "Water source?", "yes", "", "", ""],
        ["begin_group", "g", "G", "", "", "", "src=${source}"],
        ["text", "why", "Why?", "yes", "", "", ""], ["end_group", "", "", "", "", "", ""]],
        SOURCES)
    res = cli_import(path, tmp_path / "s.toml", "--skip-unsupported")
    assert res.exit_code != 0
    lines = res.stderr.splitlines()
    heading = lines.index("wrong in the form, would be imported as ODK runs them; check "
                          "(1 row(s)):")
    assert lines[heading + 1].startswith(
        "  row 3 (g, begin_group): its choice_filter 'src=${source}' is not applied")
    assert lines[-1].startswith("Error: no question of form.md can be imported")


def test_a_form_refused_as_a_whole_after_its_rows_says_the_rows_to_check(
        tmp_path: Path) -> None:
    """No question at all, only notes (a form-level refusal, XlsFormError): the row to check
    comes before its one line, and --problems lists it."""
    path = md(tmp_path, [
        GROUP_FILTERED, ["note", "intro", "Hello", "", "", "", ""],
        ["begin_group", "g", "G", "", "", "", "src=${intro}"],
        ["note", "n", "Note", "", "", "", ""], ["end_group", "", "", "", "", "", ""]], SOURCES)
    with pytest.raises(XlsFormError) as caught:
        import_xlsform(path, ImportOptions(epsilon=1))
    assert [(p.row, p.name) for p in caught.value.checks] == [(3, "g")]
    problems = tmp_path / "problems.csv"
    res = cli_import(path, tmp_path / "s.toml", "--problems", str(problems))
    assert res.exit_code != 0
    lines = res.stderr.splitlines()
    assert lines[-3:] == [
        "wrong in the form, would be imported as ODK runs them; check (1 row(s)):",
        f"  {caught.value.checks[0]}",
        "Error: form.md: no question of the form can be imported"]
    assert [(r["name"], r["kind"]) for r in rows_of(problems)] == [("g", CHECK)]


def test_the_walk_reads_an_exclusivity_only_on_a_select_multiple_with_a_constraint(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """walk._mapped parses a constraint as an exclusivity (exclusivity.split) only where there
    can be one: a select_multiple with a constraint, not every row (a speed fix: the MSNA
    parsed the constraint cells of its 280 questions, 95 of them select_multiple constraints)."""
    from ldpsurvey.analyst.xlsform_import import walk

    parsed: list[str] = []
    real = walk.split

    def split(constraint: str, name: str) -> Any:
        parsed.append(name)
        return real(constraint, name)

    monkeypatch.setattr(walk, "split", split)
    path = md(tmp_path, [
        MULTI_HEAD,
        ["select_multiple need", "needs", "Needs?", "Besoins ?", "yes", "",
         "not(selected(., 'none') and count-selected(.) > 1)"],
        ["select_multiple need", "wants", "Wants?", "Envies ?", "yes", "", ""],
        ["select_one need", "main", "Main need?", "Besoin principal ?", "yes", "",
         "not(selected(., 'none') and count-selected(.) > 1)"],
        ["integer", "people", "People?", "Personnes ?", "yes", "", ". >= 1 and . <= 9"],
        ["select_one yn", "ok", "OK?", "OK ?", "yes", "", ""],
    ], MULTI)
    result = import_xlsform(path, ImportOptions(epsilon=1))
    assert parsed == ["needs"]
    questions = {q["id"]: q for q in result.data["questions"]}
    assert list(questions) == ["needs", "wants", "main", "people", "ok"]
    assert questions["needs"]["exclusive"] == ["None of these"]
    assert "exclusive" not in questions["wants"] and "exclusive" not in questions["main"]
