"""The XLSForm import asks the question types' units (issue 40): which XLSForm types each
imports, which of several takes a select_one or a range, and a unit's XLSForm mapping lives in
its own module (the decimal unit declares `decimal`: its rows are imported, not refused)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ldpsurvey.analyst.xlsform_import import ImportOptions, import_xlsform
from ldpsurvey.analyst.xlsform_import.refusals import UNITS_BY_XLSFORM_TYPE
from ldpsurvey.shared.question_types import units
from ldpsurvey.shared.question_types.integer import IntegerType
from support.structure import _PY_NAME_SWITCH, _PY_TYPE_COMPARISON, ROOT
from support.xlsform import YES_NO, xlsform

WEIGHT = {"type": "decimal", "name": "weight", "label": "Weight (kg)?", "ldp_epsilon": 1,
          "constraint": ". >= 30 and . <= 200", "required": "yes"}


def run(tmp_path: Path, survey: list[dict[str, Any]]) -> Any:
    path = xlsform(tmp_path / "form.xlsx", survey, YES_NO, {"form_id": "t", "version": 1})
    return import_xlsform(path, ImportOptions())


def test_each_xlsform_type_is_imported_by_the_units_that_declare_it() -> None:
    names = {xls: [unit.name for unit in found] for xls, found in UNITS_BY_XLSFORM_TYPE.items()}
    assert names == {"select_one": ["binary", "categorical", "ordinal"],
                     "integer": ["integer"], "range": ["integer", "decimal"],
                     "select_multiple": ["multiselect"], "decimal": ["decimal"]}
    declared = {xls for unit in units() for xls in unit.xlsform_types}
    assert declared == set(UNITS_BY_XLSFORM_TYPE)


class _DecimalAsInteger(IntegerType):
    """A stand-in unit that imports XLSForm's decimal rows as integers: the mapping asks
    the units, so whichever declares `decimal` takes its rows."""

    xlsform_types = ("decimal",)


def test_a_unit_that_declares_an_xlsform_type_takes_its_rows(tmp_path: Path,
                                                            monkeypatch: Any) -> None:
    [weight] = run(tmp_path, [WEIGHT]).data["questions"]  # the decimal unit's
    assert (weight["type"], weight["min"], weight["max"], weight["resolution"]) == \
        ("decimal", 30, 200, 1)
    monkeypatch.setitem(UNITS_BY_XLSFORM_TYPE, "decimal", (_DecimalAsInteger(),))
    result = run(tmp_path, [WEIGHT])
    [weight] = result.data["questions"]
    assert (weight["type"], weight["min"], weight["max"]) == ("integer", 30, 200)


@pytest.mark.parametrize("folder", ["analyst/xlsform_import", "client"])
def test_no_switch_on_a_question_type_in_the_device_and_import_paths(folder: str) -> None:
    """client/ (the page aside: client/web/) and the XLSForm import ask the question's unit;
    none of their lines compares a type's name or a `type`."""
    switches = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
                for path in sorted((ROOT / folder).glob("*.py"))
                for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                if _PY_NAME_SWITCH.search(line) or _PY_TYPE_COMPARISON.search(line)]
    assert not switches, "\n".join(switches)
