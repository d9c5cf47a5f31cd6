"""Issue 42's XLSForm parts that need no new question feature: group relevants on every
question inside (nested groups too), importing just the sensitive module of a form
(`--group`, `--marked`), the counts of rows kept by type and left out by kind, and the
exclusivity constraint of a check-all-that-apply question recognised (ldpsurvey cannot
declare it yet: imported without it, and counted)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.analyst.xlsform_import import (
    CHECK,
    ImportOptions,
    ImportRefused,
    ImportResult,
    Selection,
    XlsFormError,
    import_xlsform,
)
from support.xlsform import YES_NO, xlsform

SETTINGS = {"form_id": "t", "version": 1}
SUBS = [{"list_name": "subs", "name": n, "label": label} for n, label in
        (("cannabis", "Cannabis"), ("cocaine", "Cocaine"), ("none", "None of these"),
         ("dnk", "Don't know"))]
CHOICES = [*YES_NO, *SUBS]


def q(name: str, **cells: Any) -> dict[str, Any]:
    """A required yes/no row with ε 1."""
    return {"type": "select_one yn", "name": name, "label": name.title() + "?",
            "required": "yes", "ldp_epsilon": 1, **cells}


def run(tmp_path: Path, survey: list[dict[str, Any]], **options: Any) -> ImportResult:
    path = xlsform(tmp_path / "form.xlsx", survey, CHOICES, SETTINGS)
    return import_xlsform(path, ImportOptions(**options))


def relevant(result: ImportResult, qid: str) -> str | None:
    return result.survey.question(qid).relevant


def cli_import(path: Path, out: Path, *args: str) -> Any:
    return CliRunner().invoke(cli, ["import", "xlsform", str(path), "--out", str(out), *args])


# --- 1. group relevants --------------------------------------------------------------------

def test_nested_group_relevants_are_joined_onto_each_question_inside(tmp_path: Path) -> None:
    result = run(tmp_path, [
        q("used"), q("often"),
        {"type": "begin_group", "name": "outer", "label": "O", "relevant": "${used} = 'yes'"},
        q("a"),
        {"type": "begin group", "name": "inner", "relevant": "${often} != 'no'"},
        q("b", relevant="${a} = 'yes'"),
        {"type": "end group"},
        q("c"),
        {"type": "end_group"},
        q("d"),
    ])
    assert relevant(result, "a") == "used == true"
    assert relevant(result, "b") == "((used == true) and (often != false)) and (a == true)"
    assert relevant(result, "c") == "used == true"
    assert relevant(result, "d") is None


def test_a_group_relevant_on_a_calculation_is_refused_with_its_rows_saying_why(
        tmp_path: Path) -> None:
    """The MSNA's groups `edu` and `nutrition` (`${ind_age_schooling_n} >= 1`): the condition
    reads a calculate row (a count over the roster repeat), which is no question."""
    result = run(tmp_path, [
        q("used"),
        {"type": "calculate", "name": "n_kids", "calculation": "1"},
        {"type": "begin_group", "name": "edu", "relevant": "${n_kids} >= 1"},
        q("school"),
        {"type": "end_group"},
    ], skip_unsupported=True)
    assert [question.id for question in result.survey.questions] == ["used"]
    edu = next(p for p in result.left_out if p.name == "edu")
    assert "it reads ${n_kids} (row 3, calculate), which is not imported (a calculation on the " \
        "true answers would be sent as it is, not randomized)" in edu.reason  # and why not
    school = next(p for p in result.left_out if p.name == "school")
    assert "inside the refused begin_group 'edu'" in school.reason


# --- 2. the sensitive module -----------------------------------------------------------------

MODULE = [
    q("consent"),
    {"type": "begin_group", "name": "household", "label": "Household"},
    q("roof"), {"type": "text", "name": "remarks", "label": "Remarks"},
    {"type": "end_group"},
    {"type": "begin_group", "name": "sensitive", "relevant": "${consent} = 'yes'"},
    q("violence"),
    {"type": "begin_group", "name": "drugs"},
    q("used", relevant="${violence} = 'yes'"),
    {"type": "end_group"},
    {"type": "end_group"},
    q("tenure", sensitive="yes"),
    q("water", sensitive="no"),
    q("after", relevant="${roof} = 'yes'", sensitive="x"),
]


def test_group_imports_only_the_questions_inside_it(tmp_path: Path) -> None:
    result = run(tmp_path, MODULE, selection=Selection(groups=("household",)),
                 skip_unsupported=True)
    assert [x.id for x in result.survey.questions] == ["roof"]
    assert [p.name for p in result.left_out] == ["remarks"]  # the rest is not listed ...
    kinds = {kind: n for kind, n, _ in result.counts.left_out}  # ... but counted
    assert kinds["rows outside the selection (--group, --marked)"] == 8
    assert kinds["group and repeat ends and display groups"] == 4


def test_a_condition_reading_a_row_outside_the_selection_is_refused_with_the_reason(
        tmp_path: Path) -> None:
    """--group sensitive: the group's condition reads consent, outside the selection, so the
    group goes with it (nested drugs too): nothing is left, every row said."""
    with pytest.raises(ImportRefused) as info:
        run(tmp_path, MODULE, selection=Selection(groups=("sensitive",)), skip_unsupported=True)
    assert info.value.nothing_left
    first = info.value.problems[0]
    assert first.name == "sensitive" and "it reads ${consent} (row 2, select_one yn), which " \
        "is outside the selection (--group, --marked)" in first.reason
    assert [p.name for p in info.value.problems] == ["sensitive", "violence", "drugs", "used"]


def test_a_condition_is_kept_where_the_question_it_reads_is_selected_too(
        tmp_path: Path) -> None:
    survey = [dict(row) for row in MODULE]
    survey[0] = {**survey[0], "sensitive": "yes"}  # consent marked too
    result = run(tmp_path, survey, selection=Selection(groups=("sensitive",), marked="sensitive"),
                 skip_unsupported=True)
    assert [x.id for x in result.survey.questions] == ["consent", "violence", "used", "tenure"]
    assert relevant(result, "violence") == "consent == true"
    assert relevant(result, "used") == "(consent == true) and (violence == true)"
    assert result.left_out and result.left_out[0].name == "after"  # reads roof, left outside
    assert "it reads ${roof} (row 4, select_one yn), which is outside the selection" in \
        result.left_out[0].reason


def test_marked_imports_the_rows_whose_column_is_filled(tmp_path: Path) -> None:
    survey = [row for row in MODULE if row.get("name") != "after"]
    result = run(tmp_path, survey, selection=Selection(marked="sensitive"))
    assert [x.id for x in result.survey.questions] == ["tenure"]  # 'no' is not marked
    summary = result.counts.summary()
    assert summary == ("kept 1 of 13 rows: 1 select_one; left out: 9 rows outside the "
                       "selection (--group, --marked), 3 group and repeat ends and display "
                       "groups (they only structure the form)")


@pytest.mark.parametrize(("args", "message"), [
    (["--group", "nope"], "no group or repeat is named 'nope' (--group; its groups: drugs, "
                          "household, sensitive)"),
    (["--marked", "private"], "the survey sheet has no column 'private' (--marked), or it is "
                              "empty in every row"),
    (["--group", "household", "--marked", "sensitive"], None),
])
def test_a_selection_that_names_nothing_or_keeps_nothing_is_one_line_error(
        tmp_path: Path, args: list[str], message: str | None) -> None:
    path = xlsform(tmp_path / "form.xlsx", MODULE, CHOICES, SETTINGS)
    out = tmp_path / "s.toml"
    res = cli_import(path, out, "--epsilon", "1", *args)
    if message is None:  # a valid selection: the text row inside household is refused
        assert res.exit_code == 1 and "row 5 (remarks, text)" in res.output
        res = cli_import(path, out, *args, "--skip-unsupported")
        assert res.exit_code == 0, res.output
        assert res.stderr.splitlines()[-1].startswith("kept 3 of 14 rows: 3 select_one; ")
        return
    assert res.exit_code == 1 and not out.exists()
    assert res.output.strip().splitlines() == [f"Error: form.xlsx: {message}"]


def test_a_selection_that_keeps_no_row_is_refused(tmp_path: Path) -> None:
    survey = [*MODULE[:5], {"type": "begin_group", "name": "empty"}, {"type": "end_group"}]
    path = xlsform(tmp_path / "form.xlsx", survey, CHOICES, SETTINGS)
    with pytest.raises(XlsFormError, match=r"the selection \(--group, --marked\) keeps no row"):
        import_xlsform(path, ImportOptions(selection=Selection(groups=("empty",))))


# --- 3. counts -------------------------------------------------------------------------------

def test_the_counts_say_what_was_kept_and_why_the_rest_was_left_out(tmp_path: Path) -> None:
    result = run(tmp_path, [
        {"type": "note", "name": "hello", "label": "Welcome"},
        {"type": "start", "name": "start"},
        q("used"),
        {"type": "select_one yn or_other", "name": "other", "label": "O", "ldp_epsilon": 1},
        {"type": "text", "name": "why", "label": "Why?"},
        {"type": "text", "name": "why2", "label": "Why?"},
        {"type": "integer", "name": "n", "label": "N", "ldp_epsilon": 1},
        {"type": "integer", "name": "days", "label": "Days", "ldp_epsilon": 1,
         "required": "yes", "constraint": ". >= 0 and . <= 20"},
        {"type": "calculate", "name": "c", "calculation": "1"},
        {"type": "note", "name": "mid", "label": "Between"},
        {"type": "begin_repeat", "name": "kids"}, q("kid"), {"type": "end_repeat"},
    ], skip_unsupported=True)
    days = result.survey.question("days")
    assert (days.min, days.max) == (0, 20)  # a constraint restating a range: min and max
    kinds = {kind: (n, why) for kind, n, why in result.counts.left_out}
    assert result.counts.total == 13 and result.counts.kept == (("select_one", 1),
                                                                ("integer", 1))
    assert kinds["free text"] == (3, "free text cannot be randomized; 'or_other' adds a "
                                     "free-text 'specify' answer")  # or_other stays out too
    assert kinds["integers without a range"][0] == 1
    assert kinds["calculations"][0] == 1 and kinds["device metadata"][0] == 1
    assert kinds["repeats"][0] == 1 and kinds["rows inside a group or repeat left out"][0] == 1
    assert kinds["notes"] == (1, "display-only text between questions is not shown")
    assert kinds["notes before the first question"][0] == 1
    assert kinds["group and repeat ends and display groups"][0] == 1  # end_repeat
    assert sum(n for n, _ in kinds.values()) + result.counts.kept_rows == 13
    assert result.counts.summary().startswith(
        "kept 2 of 13 rows: 1 select_one, 1 integer; left out: 3 free text (free text cannot "
        "be randomized; 'or_other' adds a free-text 'specify' answer), ")


# --- 4. exclusivity --------------------------------------------------------------------------

@pytest.mark.parametrize("constraint", [
    "not(selected(., 'none') and count-selected(.) > 1)",
    "not((selected(., 'none') or selected(., 'dnk')) and count-selected(.) > 1)",
    "not(count-selected(.)>1 and selected(.,'none'))",
    "not(selected(${subs}, 'none') and count-selected(${subs}) > 1) and "
    "not(selected(${subs}, 'dnk') and count-selected(${subs}) > 1)",
    "count-selected(.) <= 3 and not((selected(., 'none') or selected(., 'dnk')) and "
    "count-selected(.) > 1)",
])
def test_an_exclusivity_constraint_is_recognised_and_counted(tmp_path: Path,
                                                             constraint: str) -> None:
    result = run(tmp_path, [{"type": "select_multiple subs", "name": "subs", "label": "Which?",
                             "ldp_epsilon": 1, "constraint": constraint}])
    [subs] = result.data["questions"]
    assert subs.get("max_selected") == (3 if "<= 3" in constraint else None)
    exclusive = ["None of these", "Don't know"] if "dnk" in constraint else ["None of these"]
    assert subs["exclusive"] == exclusive  # the labels, the options' values
    written = tomllib.loads(result.toml)["questions"][0]  # checked by Survey.from_dict
    assert written["exclusive"] == exclusive
    assert result.counts.exclusive == 1
    assert "(1 select_multiple of them with exclusive options)" in result.counts.summary()


def test_an_exclusivity_naming_a_choice_the_question_lacks_is_imported_as_odk_runs_it(
        tmp_path: Path) -> None:
    """MSNA row 145: 'none' where the list has no such choice. ODK's selected() is then never
    true, so the constraint holds for every answer: the question is imported without an
    exclusive option, listed to check (test_xlsform_odk_mistakes.py has the other cases)."""
    result = run(tmp_path, [q("used"), {
        "type": "select_multiple subs", "name": "subs", "label": "Which?", "ldp_epsilon": 1,
        "constraint": "not(selected(., 'nothing') and count-selected(.) > 1)"}],
        skip_unsupported=True)
    assert result.left_out == ()
    assert "exclusive" not in result.data["questions"][1]
    [check] = result.to_check
    assert check.kind == CHECK and check.name == "subs"
    assert "names 'nothing', not a choice of this question (its choices: " \
           "'cannabis', 'cocaine', 'none', 'dnk')" in check.reason


def test_a_two_server_form_imports_an_exclusivity_without_it_and_says_so(
        tmp_path: Path) -> None:
    from ldpsurvey.shared.two_server.config import b64url

    settings = {"form_id": "t", "version": 1, "collection": "two-server",
                "helper_url": "https://helper.example", "helper_hpke_key": b64url(b"h" * 32),
                "leader_hpke_key": b64url(b"l" * 32), "min_batch_size": 100}
    path = xlsform(tmp_path / "form.xlsx", [{
        "type": "select_multiple subs", "name": "subs", "label": "Which?",
        "constraint": "not(selected(., 'none') and count-selected(.) > 1)"}], CHOICES, settings)
    result = import_xlsform(path, ImportOptions(epsilon=1))
    assert "exclusive" not in result.data["questions"][0]
    assert result.counts.exclusive_pending == 1 and result.counts.exclusive == 0
    assert "(1 select_multiple of them without their exclusivity constraint: exclusivity " \
           "(not imported yet))" in result.counts.summary()
    assert any("a two-server survey has no exclusive options yet" in n for n in result.notes)


def test_an_exclusivity_written_without_parentheses_forbids_an_option_as_in_odk(
        tmp_path: Path) -> None:
    """MSNA row 133: `not(selected(., 'dnk') or selected(., 'pnta') and count-selected(.) > 1)`
    ('and' first) means 'dnk' can never be ticked: ODK enforces that, and so does the import
    ('dnk' is not offered, 'none' is exclusive), listed to check."""
    result = run(tmp_path, [q("used"), {
        "type": "select_multiple subs", "name": "subs", "label": "Which?", "ldp_epsilon": 1,
        "constraint": "not(selected(., 'dnk') or selected(., 'none') and count-selected(.) > 1)"}],
        skip_unsupported=True)
    assert result.left_out == ()
    subs = result.data["questions"][1]
    assert "Don't know" not in subs["options"] and subs["exclusive"] == ["None of these"]
    [check] = result.to_check
    assert check.kind == CHECK and "forbids ticking 'dnk' at all" in check.reason
    assert "add parentheses" in check.alternative
