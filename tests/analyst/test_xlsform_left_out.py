"""Rows the MSNA left out that a faithful mapping keeps, and the exact reason of those it
still leaves out (docs/xlsform.md, "Rows left out, by reason"): an integer whose range follows
an earlier answer (`if(cond, range, range)`, the MSNA's `hh_size`), and conditions on a
count over a repeat (the MSNA's roster counts, `sum(${ind_f})`), kept as values the
invitation carries from the main survey's export; other calculations over a repeat cannot be
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


def test_a_count_over_a_repeat_that_a_condition_reads_is_carried_by_the_invitation(
        tmp_path: Path) -> None:
    """`sum(${ind_f})` of an `if(..., 1, 0)` of the roster, read by a condition: a disclosed
    integer whose value the invitation carries from the main survey's export (carried =
    true), the condition kept on it; 0 to 30 by default (the roster's count has no range
    here), said with the export column to carry. A calculation over it that is no count
    (`half`) is still left out, with the rows it gates."""
    result = run(tmp_path, ROSTER, skip_unsupported=True)
    assert [q["id"] for q in result.data["questions"]] == ["hoh", "ind_f_n", "walk_safe"]
    carried = result.data["questions"][1]
    assert carried == {"id": "ind_f_n", "text": "ind_f_n (from your interview in the main "
                       "survey)", "type": "integer", "min": 0, "max": 30, "disclosed": True,
                       "carried": True}
    assert result.survey.question("ind_f_n").carried
    assert result.survey.question("walk_safe").relevant == "ind_f_n > 0"
    [note] = [n for n in result.notes if n.startswith("row 7 (ind_f_n, calculate)")]
    assert "--carry ind_f_n=ind_f_n" in note and "0 to 30 (a default" in note
    assert "carried = true" in result.toml
    assert result.counts.carried == 1
    over = ("a calculation over the repeat 'roster' ('${ind_f_n} div 2'), whose answers are "
            "not collected: it cannot be computed on the device")
    assert reason(result, "half").startswith(over)
    assert "asking them of everyone would change who is asked" in reason(result, "half")
    assert over in reason(result, "girls")  # the group it gates says why, in one line
    assert "inside the refused begin_group 'girls'" in reason(result, "school")
    assert reason(result, "plain").startswith("a calculation on the true answers")
    assert all("\n" not in p.reason for p in result.left_out)


def test_a_carried_count_takes_the_roster_size_s_range_and_its_group_path(
        tmp_path: Path) -> None:
    size = {"type": "integer", "name": "hh_size", "label": "How many people?",
            "required": "yes", "constraint": ". >= 1 and . <= 12"}
    grouped = [HOH, {"type": "begin_group", "name": "demo", "label": "Demographics"}, size,
               {**ROSTER[1], "repeat_count": "${hh_size}"}, *ROSTER[2:6],
               {"type": "end_group", "name": ""}, ROSTER[7]]
    result = run(tmp_path, grouped, skip_unsupported=True)
    carried = next(q for q in result.data["questions"] if q["id"] == "ind_f_n")
    assert (carried["min"], carried["max"]) == (0, 12)
    [note] = [n for n in result.notes if "(ind_f_n, calculate)" in n]
    assert "'roster' repeats hh_size times, an integer of at most 12" in note
    assert "--carry ind_f_n=demo-ind_f_n" in note and "demo/ind_f_n" in note


def test_a_count_no_condition_reads_is_left_out(
        tmp_path: Path) -> None:
    unread = ROSTER[:6]  # the count, and nothing that reads it
    result = run(tmp_path, unread, skip_unsupported=True)
    assert "ind_f_n" not in [q["id"] for q in result.data["questions"]]
    assert reason(result, "ind_f_n").startswith("a calculation over the repeat 'roster'")


# --- a calculation inlined into the conditions that read it --------------------------------

DAYS = {"type": "integer", "name": "days", "label": "Days?", "required": "yes",
        "constraint": ". >= 0 and . <= 30"}
USED = {"type": "select_one yn", "name": "used", "label": "Used?", "required": "yes"}


def yes_no(name: str, relevant: str) -> dict[str, Any]:
    return {"type": "select_one yn", "name": name, "label": f"{name}?", "required": "yes",
            "relevant": relevant}


CALCULATED = [
    USED, DAYS,
    {"type": "calculate", "name": "heavy",
     "calculation": "if(${used} = 'yes' and ${days} >= 10, 1, 0)"},
    {"type": "calculate", "name": "band", "calculation": "if(${heavy} = 1, 'high', 'low')"},
    yes_no("q_heavy", "${heavy} = 1"),
    yes_no("q_light", "${heavy} != '1'"),
    yes_no("q_order", "0 < ${heavy} and ${days} < 20"),
    yes_no("q_band", "${band} = 'low'"),
]


def _xpath(name: str, used: bool, days: int) -> bool:
    """The row's relevant as ODK evaluates it (a calculate's value is a string)."""
    heavy = "1" if used and days >= 10 else "0"
    band = "high" if float(heavy) == 1 else "low"
    return {"q_heavy": float(heavy) == 1, "q_light": heavy != "1",
            "q_order": float(heavy) > 0 and days < 20, "q_band": band == "low"}[name]


def test_a_calculation_over_questions_imported_is_read_by_the_conditions_on_the_device(
        tmp_path: Path) -> None:
    from ldpsurvey.shared.skip_logic import resolve_answers

    result = run(tmp_path, CALCULATED, skip_unsupported=True)  # the calculations are not sent
    relevant = {q["id"]: q.get("relevant") for q in result.data["questions"]}
    assert relevant["q_heavy"] == "used == true and days >= 10"
    assert relevant["q_light"] == "not (used == true and days >= 10)"
    assert [p.name for p in result.left_out] == ["heavy", "band"]  # their values never sent
    assert "it is not sent" in reason(result, "heavy")
    for used in (True, False):
        for days in (0, 9, 10, 19, 20, 30):
            answers = {"used": used, "days": days,
                       **{q: True for q in ("q_heavy", "q_light", "q_order", "q_band")
                          if _xpath(q, used, days)}}
            sent = resolve_answers(result.survey.questions, answers)
            for q in ("q_heavy", "q_light", "q_order", "q_band"):
                assert (sent[q] is True) == _xpath(q, used, days), (q, used, days)


@pytest.mark.parametrize(("rows", "says"), [
    # in a group with a condition: empty where the group is not asked, not inlined
    ([{"type": "begin_group", "name": "g", "label": "G", "relevant": "${used} = 'yes'"},
      {"type": "calculate", "name": "heavy", "calculation": "if(${days} >= 10, 1, 0)"},
      {"type": "end_group", "name": ""}], "a calculation on the true answers"),
    ([{"type": "calculate", "name": "heavy", "calculation": "if(${days} >= 10, 1, 0)",
       "relevant": "${used} = 'yes'"}], "a calculation on the true answers"),
    ([{"type": "calculate", "name": "heavy", "calculation": "${days} * 2"}],
     "a calculation on the true answers"),
    ([{"type": "calculate", "name": "heavy",
       "calculation": "if(string-length(${days}) > 1, 1, 0)"}],
     "a calculation on the true answers"),
])
def test_a_calculation_that_cannot_be_read_on_the_device_leaves_its_rows_out(
        tmp_path: Path, rows: list[dict[str, Any]], says: str) -> None:
    result = run(tmp_path, [USED, DAYS, *rows, yes_no("q", "${heavy} = 1")],
                 skip_unsupported=True)
    assert "q" not in {q["id"] for q in result.data["questions"]}
    assert "it reads ${heavy}" in reason(result, "q") and says in reason(result, "q")
