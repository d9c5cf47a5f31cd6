"""Rows the MSNA left out that a faithful mapping keeps, and the exact reason of those it
still leaves out (docs/xlsform.md, "Rows left out, by reason"): an integer whose range follows
an earlier answer (`if(cond, range, range)`, the MSNA's `hh_size`), and conditions on a
calculation over a repeat (the MSNA's roster counts, `sum(${ind_f})`), which cannot be
evaluated on the device."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ldpsurvey.analyst.xlsform_import import ImportOptions, import_xlsform
from support.xlsform import YES_NO, xlsform

HOH = {"type": "select_one yn", "name": "hoh", "label": "Head of household?",
       "required": "yes"}


def run(tmp_path: Path, survey: list[dict[str, Any]], **options: Any):
    path = xlsform(tmp_path / "form.xlsx", survey, YES_NO, {"form_id": "t", "version": 1})
    return import_xlsform(path, ImportOptions(epsilon=1, **options))


def reason(result: Any, name: str) -> str:
    return next(p.reason for p in result.left_out if p.name == name)


def test_an_integer_whose_range_follows_an_earlier_answer_keeps_both_ranges(
        tmp_path: Path) -> None:
    result = run(tmp_path, [HOH, {
        "type": "integer", "name": "hh_size", "label": "How many people?", "required": "yes",
        "constraint": "if(${hoh}='no', . >= 2 and . <= 30, . >= 1 and . <= 30)"}])
    q = next(q for q in result.data["questions"] if q["id"] == "hh_size")
    assert (q["type"], q["min"], q["max"]) == ("integer", 1, 30)
    assert any("hh_size" in n and "allows 2 to 30 or 1 to 30" in n
               and "imported as the range 1 to 30" in n for n in result.notes)
    assert "imported as the range 1 to 30" in result.toml


@pytest.mark.parametrize(("constraint", "bounds"), [
    ("if(${hoh} = 'yes', 0 <= . <= 5, . >= 6 and . <= 9)", (0, 9)),  # touching, chained
    ("if(selected(${hoh}, 'no'), (. > 0 and . < 10), . >= 3 and . <= 20)", (1, 20)),
])
def test_a_conditional_range_is_read_in_either_spelling(tmp_path: Path, constraint: str,
                                                        bounds: tuple[int, int]) -> None:
    result = run(tmp_path, [HOH, {"type": "integer", "name": "n", "label": "N?",
                                  "constraint": constraint}])
    q = next(q for q in result.data["questions"] if q["id"] == "n")
    assert (q["min"], q["max"]) == bounds


@pytest.mark.parametrize(("constraint", "why"), [
    ("if(${hoh} = 'yes', . >= 0 and . <= 5, . >= 10 and . <= 20)", "neither overlap nor touch"),
    ("if(${hoh} = 'yes', . >= 0, . >= 1 and . <= 20)", "bounds only one side"),
    ("if(${hoh} = 'yes', . >= 0 and . <= 5)", "takes 3 arguments"),
])
def test_a_conditional_range_that_no_one_range_holds_is_left_out_saying_why(
        tmp_path: Path, constraint: str, why: str) -> None:
    result = run(tmp_path, [HOH, {"type": "integer", "name": "n", "label": "N?",
                                  "constraint": constraint}], skip_unsupported=True)
    assert why in reason(result, "n")


ROSTER = [
    HOH,
    {"type": "begin_repeat", "name": "roster", "label": "Members"},
    {"type": "select_one yn", "name": "ind_female", "label": "Female?"},
    {"type": "calculate", "name": "ind_f",
     "calculation": "if(selected(${ind_female}, 'yes'), 1, 0)"},
    {"type": "end_repeat", "name": ""},
    {"type": "calculate", "name": "ind_f_n", "calculation": "sum(${ind_f})"},
    {"type": "calculate", "name": "half", "calculation": "${ind_f_n} div 2"},
    {"type": "select_one yn", "name": "walk_safe", "label": "Safe to walk?",
     "relevant": "${ind_f_n} > 0"},
    {"type": "begin_group", "name": "girls", "label": "Girls", "relevant": "${half} >= 1"},
    {"type": "select_one yn", "name": "school", "label": "At school?"},
    {"type": "end_group", "name": ""},
    {"type": "calculate", "name": "plain", "calculation": "${hoh}"},
]


def test_a_condition_on_a_count_over_a_repeat_is_left_out_with_the_exact_reason(
        tmp_path: Path) -> None:
    result = run(tmp_path, ROSTER, skip_unsupported=True)
    assert [q["id"] for q in result.data["questions"]] == ["hoh"]
    over = ("a calculation over the repeat 'roster' ('sum(${ind_f})'), whose answers are not "
            "collected: it cannot be computed on the device")
    assert reason(result, "ind_f_n").startswith(over)
    assert "asking them of everyone would change who is asked" in reason(result, "ind_f_n")
    assert over in reason(result, "walk_safe")  # the row it gates says why, in one line
    # a calculation over one that reads the repeat is over the repeat too
    assert reason(result, "half").startswith("a calculation over the repeat 'roster'")
    assert "over the repeat 'roster'" in reason(result, "girls")
    assert "inside the refused begin_group 'girls'" in reason(result, "school")
    assert reason(result, "plain").startswith("a calculation on the true answers")
    assert all("\n" not in p.reason for p in result.left_out)
