"""XLSForm `decimal` and `range` rows as decimal questions (issue 41): a decimal row with a
two-sided range constraint, a range row with a decimal start, end or step, the resolution the
import chooses where the form says none (said in a comment), and the refusals of a decimal
without a range. The unit decides (shared/question_types/decimal.py, its XLSForm section)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from ldpsurvey.analyst.xlsform_import import ImportOptions, ImportRefused, import_xlsform
from ldpsurvey.shared.question_types.base import XLSFormRange
from ldpsurvey.shared.question_types.decimal import DecimalType
from ldpsurvey.shared.survey import load_survey
from support.xlsform import YES_NO, xlsform

SETTINGS = {"form_id": "t", "version": 1}


def imported(tmp_path: Path, *rows: dict[str, Any]) -> Any:
    path = xlsform(tmp_path / "form.xlsx", list(rows), YES_NO, SETTINGS)
    return import_xlsform(path, ImportOptions())


def refused(tmp_path: Path, *rows: dict[str, Any]) -> list[Any]:
    with pytest.raises(ImportRefused) as info:
        imported(tmp_path, *rows)
    return info.value.problems


def decimal_row(constraint: str | None, **cells: Any) -> dict[str, Any]:
    row = {"type": "decimal", "name": "spent", "label": "Spent last month?", "ldp_epsilon": 1,
           "required": "yes", **cells}
    if constraint is not None:
        row["constraint"] = constraint
    return row


def only(result: Any) -> dict[str, Any]:
    [question] = result.data["questions"]
    return question


def test_a_decimal_with_a_range_imports_as_a_decimal(tmp_path: Path) -> None:
    result = imported(tmp_path, decimal_row(". >= 0 and . <= 5000"))
    q = only(result)
    assert (q["type"], q["min"], q["max"], q["resolution"]) == ("decimal", 0, 5000, 1)
    assert result.survey.questions[0].k == 5001
    assert "resolution 1: chosen by the import" in result.toml


@pytest.mark.parametrize("constraint, low, high, resolution", [
    (". >= 0.5 and . <= 99.5", 0.5, 99.5, 0.1),   # one decimal written: 0.1
    ("0 <= . <= 2.25", 0, 2.25, 0.01),            # chained, two decimals
    ("(. >= 0) and (. <= 1000000)", 0, 1000000, 20),  # 1 or 2 or 5 or 10 leave > 65,536
    (". >= 1.00 and . <= 20", 1, 20, 0.01),       # the decimals written, not the value's
    ("200 >= . >= 30", 30, 200, 1),
])
def test_the_resolution_is_the_finest_round_step_the_constraint_allows(
        tmp_path: Path, constraint: str, low: float, high: float, resolution: float) -> None:
    result = imported(tmp_path, decimal_row(constraint))
    q = only(result)
    assert (q["min"], q["max"], q["resolution"]) == (low, high, resolution)
    assert f"# resolution {Decimal(repr(resolution)).normalize():f}: chosen by the import" in \
        result.toml


def test_the_resolution_rule() -> None:
    """The finest c·10^j (c = 1, 2, 5) no finer than the decimals written that divides the
    width into at most 65,536 values; none for an odd wide width."""
    choose = DecimalType.xlsform_resolution
    assert choose(XLSFormRange(Decimal(0), Decimal(36500), None, 0)) == 1
    assert choose(XLSFormRange(Decimal(0), Decimal(70000), None, 0)) == 2
    assert choose(XLSFormRange(Decimal(0), Decimal(250000), None, 0)) == 5
    assert choose(XLSFormRange(Decimal("0.5"), Decimal(10), None, 1)) == Decimal("0.1")
    assert choose(XLSFormRange(Decimal(0), Decimal(1234567), None, 0)) is None


def test_a_strict_bound_and_a_chained_constraint_are_said_in_the_notes(tmp_path: Path) -> None:
    result = imported(tmp_path, decimal_row(". > 0 and . < 100"))
    q = only(result)
    assert (q["min"], q["max"]) == (0, 100)
    said = "its constraint '. > 0 and . < 100' excludes its min (0) and its max (100)"
    assert said in result.toml and any(said in note for note in result.notes)
    result = imported(tmp_path, decimal_row("0 <= . <= 2.5"))
    assert "imported as the range 0 to 2.5 it writes" in result.toml


def test_a_range_row_with_a_decimal_step_imports_as_a_decimal(tmp_path: Path) -> None:
    result = imported(tmp_path, {"type": "range", "name": "hours", "label": "Hours of sleep?",
                                 "ldp_epsilon": 1, "required": "yes",
                                 "parameters": "start=0 end=12 step=0.5"})
    q = only(result)
    assert (q["type"], q["min"], q["max"], q["resolution"]) == ("decimal", 0, 12, 0.5)
    assert "chosen by the import" not in result.toml  # the form says it
    assert result.survey.questions[0].k == 25


def test_a_whole_range_row_stays_an_integer(tmp_path: Path) -> None:
    result = imported(tmp_path, {"type": "range", "name": "pain", "label": "Pain?",
                                 "ldp_epsilon": 1, "parameters": "start=0 end=10 step=1"})
    q = only(result)
    assert (q["type"], q["min"], q["max"]) == ("integer", 0, 10)
    assert "resolution" not in q


def test_ldp_type_chooses_between_integer_and_decimal_on_a_range_row(tmp_path: Path) -> None:
    result = imported(tmp_path, {"type": "range", "name": "pain", "label": "Pain?",
                                 "ldp_epsilon": 1, "parameters": "start=0 end=10 step=1",
                                 "ldp_type": "decimal"})
    assert (only(result)["type"], only(result)["resolution"]) == ("decimal", 1)


@pytest.mark.parametrize("row, reason, alternative", [
    (decimal_row(None), "a number without a range cannot be randomized",
     ". >= 0 and . <= 5000"),
    (decimal_row(". >= 0"), "bounds only one side", "give both"),
    (decimal_row(". >= 0 or . <= 10"), "is not a range", ". >= a and . <= b"),
    (decimal_row(". >= 0 and . <= 1234567"), "has no resolution of 1, 2 or 5",
     "a range whose width is a round number"),
    ({"type": "range", "name": "r", "label": "R?", "ldp_epsilon": 1,
      "parameters": "start=0 end=10 step=0.0001"}, "at most 65536 values", "a step that"),
    ({"type": "range", "name": "r", "label": "R?", "ldp_epsilon": 1,
      "parameters": "start=0 end=1 step=0.3"}, "must be a whole number", "a step that"),
])
def test_a_decimal_without_a_usable_range_is_refused_with_its_reason(
        tmp_path: Path, row: dict[str, Any], reason: str, alternative: str) -> None:
    [problem] = refused(tmp_path, row)
    assert reason in problem.reason and alternative in problem.alternative
    assert problem.topic == "numbers without a range"


def test_a_condition_cannot_read_a_decimals_answer(tmp_path: Path) -> None:
    problems = refused(tmp_path, decimal_row(". >= 0 and . <= 100"),
                       {"type": "select_one yn", "name": "more", "label": "More?",
                        "ldp_epsilon": 1, "required": "yes", "relevant": "${spent} > 50"})
    assert [p.name for p in problems] == ["more"]
    assert "cannot read the decimal spent's answer" in problems[0].reason


def test_the_imported_survey_parses_and_its_canonical_bytes_are_stable(tmp_path: Path) -> None:
    result = imported(tmp_path, decimal_row(". >= 0.5 and . <= 99.5"),
                      {"type": "range", "name": "hours", "label": "Hours?", "ldp_epsilon": 1,
                       "required": "yes", "parameters": "start=0 end=12 step=0.25"})
    path = tmp_path / "survey.toml"
    path.write_text(result.toml, encoding="utf-8")
    survey = load_survey(path)
    assert survey.canonical_bytes() == result.survey.canonical_bytes()
    assert load_survey(path).canonical_bytes() == survey.canonical_bytes()
    spent, hours = survey.questions
    assert (spent.type, spent.spec.resolution, spent.k) == ("decimal", Decimal("0.1"), 991)
    assert (hours.type, hours.spec.resolution, hours.k) == ("decimal", Decimal("0.25"), 49)
    assert spent.mechanism in ("duchi", "piecewise", "hybrid", "geometric")
