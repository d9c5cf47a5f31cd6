"""XLSForm `choice_filter` (analyst/xlsform_import/choice_filter.py; docs/xlsform.md,
"Cascading selects"): `col=${q}`, `col = ${q}` and `selected(${q}, col)` become the question's
`filter` from the choices sheet's extra column, the question randomized over its whole list;
every other expression, a column value that is no choice of `${q}`, an empty one, a `${q}`
left out or one that is not options is refused by row with its reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ldpsurvey.analyst.xlsform_import import ImportOptions, ImportRefused, import_xlsform
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Survey
from support.xlsform import YES_NO, xlsform

REGION = {"type": "select_one region", "name": "region", "label": "Region?", "ldp_epsilon": 1}
CHOICES = [
    {"list_name": "region", "name": "n", "label": "North"},
    {"list_name": "region", "name": "s", "label": "South"},
    {"list_name": "town", "name": "a", "label": "Aville", "region": "n"},
    {"list_name": "town", "name": "b", "label": "Btown", "region": "n"},
    {"list_name": "town", "name": "c", "label": "Cburg", "region": "s"},
    *YES_NO,
]


def town(choice_filter: str, **cells: Any) -> dict[str, Any]:
    return {"type": "select_one town", "name": "town", "label": "Town?", "ldp_epsilon": 1,
            "choice_filter": choice_filter, **cells}


def imported(tmp_path: Path, survey: list[dict[str, Any]],
             choices: list[dict[str, Any]] = CHOICES) -> Any:
    path = xlsform(tmp_path / "form.xlsx", survey, choices, {"form_id": "t", "version": 1})
    return import_xlsform(path, ImportOptions())


def problems(tmp_path: Path, survey: list[dict[str, Any]],
             choices: list[dict[str, Any]] = CHOICES) -> list[Any]:
    path = xlsform(tmp_path / "form.xlsx", survey, choices, {"form_id": "t", "version": 1})
    with pytest.raises(ImportRefused) as info:
        import_xlsform(path, ImportOptions())
    return list(info.value.problems)


@pytest.mark.parametrize("expression", ["region=${region}", "region = ${region}",
                                        "  region  =${region} ", "selected(${region}, region)",
                                        "selected( ${region} ,region )"])
def test_a_cascading_select_becomes_a_filter_over_the_full_list(tmp_path: Path,
                                                                 expression: str) -> None:
    result = imported(tmp_path, [REGION, town(expression)])
    (q,) = [q for q in result.data["questions"] if q["id"] == "town"]
    assert q["options"] == ["Aville", "Btown", "Cburg"]
    assert q["filter"] == {"by": "region", "values": {"Aville": ["North"],
                                                      "Btown": ["North"], "Cburg": ["South"]}}
    survey = Survey.from_dict(result.data)
    assert mechanism_for(survey.question("town")).k == 3  # randomized over every option
    assert "choice_filter" in result.toml and "follow the answer to 'region'" in result.toml


def test_selected_name_shows_the_options_ticked_before(tmp_path: Path) -> None:
    """MSNA row 425's form (there on a rank row, refused as a ranking): the choices ticked in
    an earlier select_multiple, the column `name` being the choice's own name."""
    sources = [{"list_name": "src", "name": n, "label": n.title()} for n in ("own", "aid")]
    result = imported(tmp_path, [
        {"type": "select_multiple src", "name": "sources", "label": "Sources?",
         "ldp_epsilon": 1},
        {"type": "select_one src", "name": "main", "label": "Main?", "ldp_epsilon": 1,
         "choice_filter": "selected(${sources}, name)"}], sources)
    (q,) = [q for q in result.data["questions"] if q["id"] == "main"]
    assert q["filter"] == {"by": "sources", "values": {"Own": ["Own"], "Aid": ["Aid"]}}


@pytest.mark.parametrize(("row", "says"), [
    (town("region=${region} and 1=1"), "is not a filter ldpsurvey reads"),
    (town("region != ${region}"), "is not a filter ldpsurvey reads"),
    (town("region='n'"), "is not a filter ldpsurvey reads"),
    (town("starts-with(region, ${region})"), "is not a filter ldpsurvey reads"),
    (town("other=${region}"), "column 'other', which is empty for the choice 'a'"),
    (town("region=${used}"), "'used', a yes/no question"),
    (town("region=${later}"), "later"),
    (town("region=${region}", ldp_type="ordinal"), "needs an unordered select_one"),
])
def test_what_cannot_be_a_filter_is_refused_by_row_with_its_reason(
        tmp_path: Path, row: dict[str, Any], says: str) -> None:
    used = {"type": "select_one yn", "name": "used", "label": "Used?", "ldp_epsilon": 1}
    later = {**REGION, "name": "later"}
    choices = [*CHOICES, {"list_name": "other", "name": "x", "label": "X"}]
    found = problems(tmp_path, [REGION, used, row, later], choices)
    assert [p.name for p in found] == ["town"]
    assert says in found[0].reason, found[0].reason
    assert found[0].alternative


def test_a_column_value_that_is_no_choice_of_the_earlier_question_is_refused(
        tmp_path: Path) -> None:
    """MSNA rows 15-17: a template's parent codes that the parent list does not have."""
    choices = [*CHOICES[:4], {**CHOICES[4], "region": "e"}, *YES_NO]
    (found,) = problems(tmp_path, [REGION, town("region=${region}")], choices)
    assert "value 'e' for the choice 'c' is not a choice of 'region'" in found.reason


def test_a_list_of_which_odk_shows_no_choice_says_the_question_is_never_answered(
        tmp_path: Path) -> None:
    """MSNA row 15 (admin3): every choice's parent code ('PCODE11', ...) is no choice of the
    parent list (a template's "To be updated by country"), so ODK never shows any choice and
    the question is never answered there; left out, saying so in one line."""
    choices = [*CHOICES[:2], *({**c, "region": "PCODE1"} for c in CHOICES[2:5]), *YES_NO]
    (found,) = problems(tmp_path, [REGION, town("region=${region}")], choices)
    assert found.reason.startswith("ODK never shows any of its 3 choices: its choice_filter "
                                   "reads the column 'region', whose values ('PCODE1') are "
                                   "none of them a choice of 'region', so the question is "
                                   "never answered in ODK"), found.reason
    assert "\n" not in found.reason and "fill the list" in found.alternative


def test_a_filter_on_a_row_left_out_is_refused_with_it(tmp_path: Path) -> None:
    text = {"type": "text", "name": "region", "label": "Region?"}
    found = problems(tmp_path, [text, town("region=${region}")])
    assert [p.name for p in found] == ["region", "town"]
    assert "region" in found[1].reason


def test_a_group_choice_filter_is_imported_as_odk_runs_it_and_listed_to_check(
        tmp_path: Path) -> None:
    """pyxform drops a begin_group's choice_filter (ODK shows every choice inside): the
    questions are imported without a filter, the group listed to check, never quietly."""
    result = imported(tmp_path, [
        REGION, {"type": "begin_group", "name": "where", "label": "Where",
                 "choice_filter": "region=${region}"},
        town(""), {"type": "end_group"}])
    (q,) = [q for q in result.data["questions"] if q["id"] == "town"]
    assert "filter" not in q
    (check,) = result.to_check
    assert (check.row, check.name, check.kind) == (3, "where", "check")
    assert "choice_filter 'region=${region}' is not applied" in check.reason
    assert "every choice" in check.reason and check.alternative
    assert "not applied" in result.toml  # and listed in the TOML's header


def test_a_choice_filter_on_a_row_without_choices_is_imported_as_odk_runs_it(
        tmp_path: Path) -> None:
    """An integer row's choice_filter filters nothing (pyxform drops it): the question is
    imported as ODK runs it, listed to check and marked CHECK above it in the TOML."""
    result = imported(tmp_path, [REGION, {
        "type": "integer", "name": "people", "label": "People?", "ldp_epsilon": 1,
        "ldp_min": 0, "ldp_max": 9, "choice_filter": "region=${region}"}])
    assert [q["id"] for q in result.data["questions"]] == ["region", "people"]
    (check,) = result.to_check
    assert (check.name, check.kind) == ("people", "check")
    assert "is not applied" in check.reason and "integer row" in check.reason
    assert "# CHECK: its choice_filter" in result.toml
